/* SPDX-License-Identifier: BSD-3-Clause */
/* Every rank sends to its right neighbour and receives from its left one
 * with MPI_Sendrecv. */
#include "../bench.h"

enum { TAG = 14 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes, right = (s->rank + 1) % s->size, left = (s->rank + s->size - 1) % s->size;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    *t_start = timer_now(s->t);
    MPI_Sendrecv(sb, n, MPI_BYTE, right, TAG, rb, n, MPI_BYTE, left, TAG, s->world, MPI_STATUS_IGNORE);
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, left, rep, "ring");
}

const bench_def bench_ring = {.name = "ring", .pat = PAT_COLL, .min_np = 2, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .footprint = footprint, .describe = describe, .run_rep = run_rep};
