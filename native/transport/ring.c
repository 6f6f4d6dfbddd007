/* SPDX-License-Identifier: BSD-3-Clause */
/* The record queue of one direction: single producer (the peer), single
 * consumer (the owner of the segment). A record is a 16-byte header and its
 * payload, aligned to cache lines, so a small message crosses in one line.
 * The producer publishes with a release store of the record's sequence
 * number (tagged, so bytes left from an earlier lap never pass for a
 * header); the consumer returns space with a release store of the bytes it
 * finished, which the producer reads only when the queue looks full. */
#define _GNU_SOURCE
#include <sched.h>

#include "tp_impl.h"
#include "../clock/cpu.h"

#define SEQ_TAG 0x7470717500000000ULL
static uint64_t seq_of(uint64_t k) { return SEQ_TAG | ((k + 1) & 0xffffffffULL); }
static size_t rec_bytes(size_t payload) { return (sizeof(tp_record) + payload + TP_LINE - 1) / TP_LINE * TP_LINE; }
static tp_record *rec_at(tp_segment *s, uint64_t pos) { return (tp_record *)(s->queue + pos % TP_QUEUE_BYTES); }

/* A bare spin, then pauses; with more processes than CPUs soon a yield so
 * the partner can run (as MPI libraries' progress loops do). */
void tp_relax(const tp_pair *p, unsigned *spins)
{
    ++*spins;
    if (p->yield && *spins > 100) sched_yield();
    else if (*spins > 2000) cpu_relax();
}

tp_record *tp_reserve(tp_pair *p, size_t payload)
{
    size_t need = rec_bytes(payload);
    unsigned spins = 0;
    for (;;) {
        size_t to_end = TP_QUEUE_BYTES - (size_t)(p->sent % TP_QUEUE_BYTES);
        size_t want = need <= to_end ? need : to_end + need;
        if (TP_QUEUE_BYTES - (p->sent - p->freed_seen) >= want) {
            if (need > to_end) { /* no room before the end: a wrap record, then the start */
                tp_record *w = rec_at(p->peer, p->sent);
                w->len = 0;
                w->kind = REC_WRAP;
                atomic_store_explicit(&w->seq, seq_of(p->out_recs++), memory_order_release);
                p->sent += to_end;
            }
            return rec_at(p->peer, p->sent);
        }
        p->freed_seen = atomic_load_explicit(&p->peer->freed, memory_order_acquire);
        if (TP_QUEUE_BYTES - (p->sent - p->freed_seen) < want) tp_relax(p, &spins);
    }
}

void tp_publish(tp_pair *p, tp_record *r, uint32_t kind, uint32_t len, size_t payload)
{
    r->len = len;
    r->kind = kind;
    atomic_store_explicit(&r->seq, seq_of(p->out_recs++), memory_order_release);
    p->sent += rec_bytes(payload);
}

tp_record *tp_next_record(tp_pair *p)
{
    unsigned spins = 0;
    for (;;) {
        tp_record *r = rec_at(p->mine, p->taken);
        if (atomic_load_explicit(&r->seq, memory_order_acquire) != seq_of(p->in_recs)) {
            tp_relax(p, &spins);
            continue;
        }
        if (r->kind != REC_WRAP) return r;
        p->taken += TP_QUEUE_BYTES - (size_t)(p->taken % TP_QUEUE_BYTES);
        p->in_recs++;
        atomic_store_explicit(&p->mine->freed, p->taken, memory_order_release);
    }
}

int tp_ready(tp_pair *p)
{
    return atomic_load_explicit(&rec_at(p->mine, p->taken)->seq, memory_order_acquire) == seq_of(p->in_recs);
}

void tp_release_record(tp_pair *p, tp_record *r)
{
    size_t payload = r->kind == REC_DATA ? r->len : r->kind == REC_CHUNK ? sizeof(uint32_t) : sizeof(uint64_t);
    p->taken += rec_bytes(payload);
    p->in_recs++;
    atomic_store_explicit(&p->mine->freed, p->taken, memory_order_release);
}
