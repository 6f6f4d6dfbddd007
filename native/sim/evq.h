/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulator's event queue: events leave in time order, events of equal
 * time in the order they came. Two forms behind one interface: a binary heap
 * (times all different, as when costs are drawn at random), and buckets of
 * equal times, each a FIFO, with a heap of the distinct times (deterministic
 * costs make a few distinct times carry most events, so the heap stays small
 * and in cache). */
#ifndef MPISCOPE_SIM_EVQ_H
#define MPISCOPE_SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct { double t; uint32_t op, kind; } evq_item;

typedef struct evq {
    int bucketed;
    size_t n;                 /* events held */
    /* heap form */
    struct heap_ev *heap;
    size_t heap_cap;
    uint64_t seq;
    /* bucket form */
    struct chunk *ch;         /* events, in chunks chained per bucket; free ones linked from ch_free */
    uint32_t ch_cap, ch_used, ch_free;
    struct bucket *bk;        /* buckets; free ones linked from bk_free */
    uint32_t bk_cap, bk_used, bk_free;
    uint32_t *th;             /* heap of buckets by time */
    uint32_t nth, th_cap;
    struct tslot *tmap;       /* time -> bucket */
    size_t tmap_cap, tmap_n;
    uint64_t last_key;        /* the time last pushed to (0: none) and its bucket: */
    uint32_t last_bk;         /* pushes come in runs of one time, each skips the map */
} evq;

int evq_init(evq *q, int bucketed);
int evq_push(evq *q, double t, uint32_t op, uint32_t kind); /* 0, or -1: out of memory */
int evq_pop(evq *q, evq_item *out);                         /* 1 popped, 0 empty */
/* The next event if it happens at t, else nothing (0): lets the simulator
 * look ahead among events of one time, whose order nothing can change. */
int evq_pop_at(evq *q, double t, evq_item *out);
void evq_free(evq *q);

#endif
