/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided communication beside two-sided: rank 0 puts into or gets from a
 * window on rank 1 (MPI_Win_allocate), completed either passively
 * (MPI_Win_lock_all once, MPI_Win_flush: rank 1 takes no part in the
 * transfer) or actively (MPI_Win_fence on both ranks). Variants
 * "put_flush", "get_flush", "put_fence", "get_fence".
 *
 *   rma_lat    one operation and its completion: for put and flush, the time
 *              until rank 0 knows the data is in rank 1's memory; for get,
 *              until the data is in rank 0's.
 *   rma_flood  many operations in a row (the block's window_msgs), completed
 *              by a flush after every q (the largest --queue-depths) and at
 *              the end, or by one fence: time per operation is the one-sided
 *              gap.
 *
 * With passive completion rank 1 waits in MPI_Recv for a "done" message sent
 * after rank 0's clock stops, so a library that needs the target's progress
 * gets it. */
#include <stdlib.h>

#include "../options.h"
#include "../rawfmt.h"
#include "loggp.h"

enum { TAG_DONE = 35 };

typedef struct rma_state {
    int get, fence, flood;
    int target; /* partner's rank in s->pc */
    long msgs;
    int q;
    MPI_Win win;
    void *base;
} rma_state;

static const char *const names[] = {"put_flush", "get_flush", "put_fence", "get_fence"};

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }
static int nvariants(const options *o) { (void)o; return 4; }
static const char *variant_name(const options *o, int i) { (void)o; return names[i]; }

static void setup(series *s, int flood)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
    rma_state *st = calloc(1, sizeof *st);
    s->state = st;
    st->get = s->variant % 2;
    st->fence = s->variant / 2;
    st->flood = flood;
    st->q = loggp_max_queue_depth(s->o);
    st->msgs = flood ? loggp_msgs(s->o, s->bytes, st->q) : 1;
    s->window_msgs = (int)st->msgs;
    st->win = MPI_WIN_NULL;
    rawfmt_params_rma(s, st->get, st->fence, st->msgs, flood && !st->fence ? st->q : 0);
    if (s->role == ROLE_IDLE) return;
    st->target = loggp_pc_peer(s);
    MPI_Win_allocate((MPI_Aint)(s->bytes ? s->bytes : 1), 1, MPI_INFO_NULL, s->pc, &st->base, &st->win);
    if (st->fence) MPI_Win_fence(MPI_MODE_NOPRECEDE, st->win);
    else if (s->role == ROLE_INITIATOR) MPI_Win_lock_all(MPI_MODE_NOCHECK, st->win);
}

static void describe_lat(series *s) { setup(s, 0); }
static void describe_flood(series *s) { setup(s, 1); }

static void finish(series *s)
{
    rma_state *st = s->state;
    if (!st || st->win == MPI_WIN_NULL) return;
    if (st->fence) MPI_Win_fence(MPI_MODE_NOSUCCEED, st->win);
    else if (s->role == ROLE_INITIATOR) MPI_Win_unlock_all(st->win);
    MPI_Win_free(&st->win);
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    rma_state *st = s->state;
    int n = (int)s->bytes;
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    if (s->role != ROLE_INITIATOR) {
        *t_start = timer_now(s->t);
        if (st->fence) MPI_Win_fence(0, st->win);
        else MPI_Recv(NULL, 0, MPI_BYTE, s->peer, TAG_DONE, s->world, MPI_STATUS_IGNORE);
        *t_end = timer_now(s->t);
        return;
    }
    *t_start = timer_now(s->t);
    for (long i = 0; i < st->msgs; i++) {
        if (st->get) MPI_Get(rb, n, MPI_BYTE, st->target, 0, n, MPI_BYTE, st->win);
        else MPI_Put(sb, n, MPI_BYTE, st->target, 0, n, MPI_BYTE, st->win);
        if (!st->fence && (i + 1) % st->q == 0 && i + 1 < st->msgs) MPI_Win_flush(st->target, st->win);
    }
    if (st->fence) MPI_Win_fence(0, st->win);
    else MPI_Win_flush(st->target, st->win);
    *t_end = timer_now(s->t);
    if (!st->fence) MPI_Send(NULL, 0, MPI_BYTE, s->peer, TAG_DONE, s->world);
}

const bench_def bench_rma_lat = {.name = "rma_lat", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                 .rule = RULE_PER_MESSAGE, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                 .footprint = footprint, .describe = describe_lat, .run_rep = run_rep,
                                 .nvariants = nvariants, .variant_name = variant_name, .finish = finish};
const bench_def bench_rma_flood = {.name = "rma_flood", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                   .rule = RULE_PER_MESSAGE, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                   .footprint = footprint, .describe = describe_flood, .run_rep = run_rep,
                                   .nvariants = nvariants, .variant_name = variant_name, .finish = finish};
