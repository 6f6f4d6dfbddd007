/* SPDX-License-Identifier: BSD-3-Clause */
/* Message primitives (with the optional trace), the context, shared blocks. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "colls_impl.h"

static void combine_sum_int(void *inout, const void *in, size_t count)
{
    /* Unsigned arithmetic: wraps like MPI's two's-complement sum, no undefined overflow. */
    unsigned *a = inout;
    const unsigned *b = in;
    for (size_t i = 0; i < count; i++) a[i] += b[i];
}

const coll_op coll_sum_int = {.name = "sum_int", .elem = sizeof(int), .type = MPI_INT, .combine = combine_sum_int};

static void fatal(const coll_ctx *c, const char *what)
{
    fprintf(stderr, "mpiscope-engine: collective %s: %s\n", c->algo ? c->algo->name : "?", what);
    fflush(stderr);
    MPI_Abort(c->comm, 5);
}

/* The engine's timer, read as cheaply as it allows: the CPU's counter without
 * the fences that keep a timed region exact (the trace resolves posts and
 * completions that are tens of nanoseconds apart at best anyway). */
static inline double trace_now(const coll_trace *tr)
{
    const timer *t = tr->t;
    if (t->kind == TIMER_TSC && !t->injected) return (double)cpu_counter() * t->tsc_period_s;
    return timer_now(t);
}

/* Records that a message was posted; returns its event or -1. */
static int trace_post(coll_ctx *c, int op, int peer, int tag, size_t bytes)
{
    coll_trace *tr = c->trace;
    if (!tr) return -1;
    double now = trace_now(tr);
    if (tr->n >= tr->cap) {
        if (tr->first_dropped_rep < 0) tr->first_dropped_rep = tr->rep;
        tr->dropped++;
        return -1;
    }
    long i = tr->n++;
    tr->rep_col[i] = (int32_t)tr->rep;
    tr->seq_col[i] = tr->seq++;
    tr->op[i] = (uint8_t)op;
    tr->peer[i] = peer;
    tr->tag[i] = tag;
    tr->bytes[i] = (int64_t)bytes;
    tr->t_post[i] = now;
    tr->t_done[i] = now;
    return (int)i;
}

static int post(coll_ctx *c, int op, void *buf, size_t bytes, int peer, int tag)
{
    if (c->nreq >= c->cap) fatal(c, "more requests in flight than the context holds");
    if (bytes > INT_MAX) fatal(c, "a message is larger than INT_MAX bytes");
    int slot = c->nreq++;
    c->active++;
    c->evs[slot] = trace_post(c, op, peer, tag, bytes);
    if (op == 0) MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, c->comm, &c->reqs[slot]);
    else MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, c->comm, &c->reqs[slot]);
    return slot;
}

int cx_isend(coll_ctx *c, const void *buf, size_t bytes, int peer, int tag)
{
    return post(c, 0, (void *)buf, bytes, peer, tag);
}

int cx_irecv(coll_ctx *c, void *buf, size_t bytes, int peer, int tag) { return post(c, 1, buf, bytes, peer, tag); }

static void done(coll_ctx *c, int slot, double now)
{
    int ev = c->evs[slot];
    if (ev >= 0) c->trace->t_done[ev] = now;
    c->evs[slot] = -1;
}

void cx_wait(coll_ctx *c, int slot)
{
    if (c->reqs[slot] == MPI_REQUEST_NULL) return;
    MPI_Wait(&c->reqs[slot], MPI_STATUS_IGNORE);
    if (c->evs[slot] >= 0) done(c, slot, trace_now(c->trace));
    c->active--;
}

void cx_waitall(coll_ctx *c)
{
    if (!c->trace) {
        MPI_Waitall(c->nreq, c->reqs, MPI_STATUSES_IGNORE);
    } else {
        /* One completion time per request. */
        int n, *idx = c->idx;
        while (c->active > 0) {
            MPI_Waitsome(c->nreq, c->reqs, &n, idx, MPI_STATUSES_IGNORE);
            if (n == MPI_UNDEFINED) break;
            double now = trace_now(c->trace);
            for (int k = 0; k < n; k++) done(c, idx[k], now);
            c->active -= n;
        }
    }
    c->nreq = 0;
    c->active = 0;
}

void cx_offsets(size_t *offs, size_t count, int n, size_t elem)
{
    size_t base = count / (size_t)n, extra = count % (size_t)n, at = 0;
    for (int i = 0; i < n; i++) {
        offs[i] = at * elem;
        at += base + ((size_t)i < extra);
    }
    offs[n] = at * elem;
}

void cx_scatter_binomial(coll_ctx *c, char *buf, const size_t *offs, int root, int tag)
{
    int p = c->size, rr = cx_mod(c->rank - root, p), mask = 1;
    while (mask < p) {
        if (rr & mask) {
            int hi = rr + mask < p ? rr + mask : p;
            cx_recv_wait(c, buf + offs[rr], offs[hi] - offs[rr], cx_mod(rr - mask + root, p), tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int lo = rr + mask, hi = rr + 2 * mask < p ? rr + 2 * mask : p;
        if (lo < p) cx_isend(c, buf + offs[lo], offs[hi] - offs[lo], cx_mod(lo + root, p), tag);
    }
    cx_waitall(c);
}

/* ---------------------------------------------------------------- context */

static int touch_alloc(void **p, size_t bytes)
{
    *p = malloc(bytes ? bytes : 1);
    if (!*p) return -1;
    memset(*p, 0, bytes);
    return 0;
}

static int ceil_lg(int p)
{
    int l = 0;
    while ((1 << l) < p) l++;
    return l;
}

long coll_events_per_call(const coll_algo *a, size_t count, size_t elem, int p, size_t segment)
{
    long bound = 4L * p + 4L * ceil_lg(p) + 16;
    if (a->kind == COLL_BCAST) {
        size_t seg = segment ? segment : COLL_DEFAULT_SEGMENT;
        bound += 2L * (long)((count * elem + seg - 1) / seg);
    }
    return bound;
}

int coll_ctx_init(coll_ctx *c, MPI_Comm comm, const coll_algo *a, size_t count, size_t elem, size_t segment,
                  const timer *t, long trace_events)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    c->algo = a;
    c->segment = segment ? segment : COLL_DEFAULT_SEGMENT;
    c->cap = 2 * c->size + 16;
    c->scratch_bytes = a->scratch ? a->scratch(count, elem, c->size) : 0;
    if (touch_alloc((void **)&c->scratch, c->scratch_bytes) ||
        touch_alloc((void **)&c->offs, sizeof(size_t) * ((size_t)c->size + 1)) ||
        touch_alloc((void **)&c->ints, sizeof(int) * ((size_t)c->size + 1)) ||
        touch_alloc((void **)&c->idx, sizeof(int) * (size_t)c->cap) ||
        touch_alloc((void **)&c->reqs, sizeof(MPI_Request) * (size_t)c->cap) ||
        touch_alloc((void **)&c->evs, sizeof(int) * (size_t)c->cap))
        return -1;
    for (int i = 0; i < c->cap; i++) c->reqs[i] = MPI_REQUEST_NULL, c->evs[i] = -1;
    if (trace_events > 0) {
        if (trace_events > INT_MAX) trace_events = INT_MAX;
        coll_trace *tr = calloc(1, sizeof *tr);
        if (!tr) return -1;
        c->trace = tr;
        size_t n = (size_t)trace_events;
        tr->t = t;
        tr->cap = trace_events;
        tr->first_dropped_rep = -1;
        if (touch_alloc((void **)&tr->rep_col, 4 * n) || touch_alloc((void **)&tr->seq_col, 4 * n) ||
            touch_alloc((void **)&tr->peer, 4 * n) || touch_alloc((void **)&tr->tag, 4 * n) ||
            touch_alloc((void **)&tr->bytes, 8 * n) || touch_alloc((void **)&tr->op, n) ||
            touch_alloc((void **)&tr->t_post, 8 * n) || touch_alloc((void **)&tr->t_done, 8 * n))
            return -1;
    }
    return 0;
}

void coll_ctx_free(coll_ctx *c)
{
    coll_trace *tr = c->trace;
    if (tr) {
        free(tr->rep_col), free(tr->seq_col), free(tr->peer), free(tr->tag);
        free(tr->bytes), free(tr->op), free(tr->t_post), free(tr->t_done);
        free(tr);
    }
    free(c->scratch), free(c->offs), free(c->ints), free(c->idx), free(c->reqs), free(c->evs);
    memset(c, 0, sizeof *c);
}

void coll_run(coll_ctx *c, long rep, const coll_args *a)
{
    coll_trace *tr = c->trace;
    if (rep < 0) c->trace = NULL; /* warm-up: not recorded */
    else if (tr) tr->rep = rep, tr->seq = 0;
    if (a->count > 0) c->algo->run(c, a);
    /* Every algorithm completes what it posts; free the slots for the next call. */
    if (c->active) cx_waitall(c);
    c->nreq = 0;
    c->trace = tr;
}
