/* SPDX-License-Identifier: BSD-3-Clause */
/* What the harness itself costs (bench/harness_overhead.py):
 * - empty: nothing between the two timer reads of a repetition, so its
 *   sample is the engine's own per-sample overhead;
 * - pingpong_loop: the reference for pingpong, window_msgs (64) back-to-back
 *   round trips timed as a whole (as osu_latency and a hand-written loop
 *   do); its sample is the mean half round trip of the loop. */
#include "../bench.h"

enum { TAG = 13 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe_empty(series *s)
{
    s->count = 0;
    s->datatype = "none";
}

static void run_empty(series *s, long rep, double *t_start, double *t_end)
{
    (void)rep;
    *t_start = timer_now(s->t);
    *t_end = timer_now(s->t);
}

static void describe_loop(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

static void run_loop(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes;
    *t_start = timer_now(s->t);
    for (int i = 0; i < s->window_msgs; i++) {
        if (s->role == ROLE_INITIATOR) {
            MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
            MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
            MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
        }
    }
    *t_end = timer_now(s->t);
}

const bench_def bench_empty = {.name = "empty", .pat = PAT_PINGPONG, .min_np = 2, .sizeless = 1,
                               .rule = RULE_DURATION, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                               .footprint = footprint, .describe = describe_empty, .run_rep = run_empty};
const bench_def bench_pingpong_loop = {.name = "pingpong_loop", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                       .rule = RULE_LOOP_HALF_ROUND_TRIP, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                       .footprint = footprint, .describe = describe_loop, .run_rep = run_loop};
