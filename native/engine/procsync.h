/* SPDX-License-Identifier: BSD-3-Clause */
/* The start of each repetition: a barrier, or a window on the global clock
 * (every participant starts at an agreed time, one window after another). */
#ifndef MPISCOPE_PROCSYNC_H
#define MPISCOPE_PROCSYNC_H

#include <mpi.h>
#include <stdint.h>
#include "../clock/clock.h"
#include "../clock/sync.h"
#include "bench.h"
#include "testhooks.h"

typedef struct procsync {
    const timer *t;
    const clock_model *m;
    const testhooks *hooks;
    MPI_Comm pc;        /* the participants */
    int rank;           /* in world (test hooks name world ranks) */
    int window;         /* 1: window, 0: barrier (from the start, or after falling back) */
    int oversubscribed; /* more ranks than CPUs: yield while waiting */
    int own_barrier;    /* barrier starts: procsync_barrier, not MPI_Barrier */
    double window_s;
    double lead_s;      /* window starts: how far before the agreed time this rank starts (procsync_lead) */
    long per_schedule;  /* repetitions per agreed schedule */
    double base;        /* global start of the current schedule's repetition 0 */
    int stale;          /* a barrier start came between: the next window start needs a fresh schedule */
    long late_arrived;  /* window starts this rank reached after the agreed time */
    long late_left;     /* window starts reached in time but left late (preempted while waiting) */
} procsync;

/* The barrier that starts repetitions: MPI_Barrier, or with `own` a
 * dissemination barrier of empty messages (ceil(log2 p) rounds), which no
 * forced or tuned barrier algorithm of the library changes. */
void procsync_barrier(MPI_Comm c, int own);
/* How far ahead of the agreed start a rank of a series of pattern `pat` in
 * role `r` starts its window-started repetitions: a responder that first waits
 * for its initiator's message leaves `message_s` plus the clock's error bound
 * `clock_err_s` earlier, so its receive is already waiting when the message
 * lands, as in a barrier-started or back-to-back loop; every other rank, 0. */
double procsync_lead(pattern pat, role r, double message_s, double clock_err_s);
/* Starts a batch whose repetitions are `window_s` apart (window sync). */
void procsync_batch(procsync *p, double window_s);
/* Whether repetition k (overall) starts with a barrier: barrier starts, or
 * MPISCOPE_TEST_SYNC_ALTERNATE's turn of barriers between window starts. */
int procsync_barrier_turn(const procsync *p, long k);
/* Waits for the start of the batch's repetition i (k overall): records the
 * local time it was scheduled at (NaN with a barrier) and returns 1 if this
 * rank started on time. */
uint8_t procsync_start(procsync *p, long i, long k, double *t_sched);

#endif
