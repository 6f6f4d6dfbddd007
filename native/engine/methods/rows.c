/* SPDX-License-Identifier: BSD-3-Clause */
/* A method's rows: grown before a timed loop, written into during it. */
#include <stdlib.h>
#include <string.h>

#include "method.h"

static void *grow(void *p, long cap, size_t width)
{
    void *q = realloc(p, (size_t)cap * width);
    if (!q) abort(); /* out of memory before a loop: nothing sensible to record */
    return q;
}

static void reserve(mrows *r, long need)
{
    if (need <= r->cap) return;
    long cap = r->cap ? r->cap : 64;
    while (cap < need) cap *= 2;
    r->rep = grow(r->rep, cap, sizeof *r->rep);
    r->calls = grow(r->calls, cap, sizeof *r->calls);
    r->root = grow(r->root, cap, sizeof *r->root);
    r->batch = grow(r->batch, cap, sizeof *r->batch);
    r->phase = grow(r->phase, cap, sizeof *r->phase);
    r->flags = grow(r->flags, cap, sizeof *r->flags);
    r->t_start = grow(r->t_start, cap, sizeof *r->t_start);
    r->t_end = grow(r->t_end, cap, sizeof *r->t_end);
    r->t_sched = grow(r->t_sched, cap, sizeof *r->t_sched);
    r->cap = cap;
}

long mrows_take(mrows *r, long n, int phase, int calls)
{
    long first = r->n;
    reserve(r, first + n);
    for (long i = first; i < first + n; i++) {
        r->rep[i] = (int32_t)i;
        r->calls[i] = calls;
        r->root[i] = -1;
        r->batch[i] = 0;
        r->phase[i] = (uint8_t)phase;
        r->flags[i] = 0;
        /* touched now, so that no page fault lands in the loop that fills them */
        r->t_start[i] = r->t_end[i] = r->t_sched[i] = NAN;
    }
    r->n = first + n;
    return first;
}

void mrows_free(mrows *r)
{
    free(r->rep);
    free(r->calls);
    free(r->root);
    free(r->batch);
    free(r->phase);
    free(r->flags);
    free(r->t_start);
    free(r->t_end);
    free(r->t_sched);
    memset(r, 0, sizeof *r);
}
