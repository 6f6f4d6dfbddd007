/* SPDX-License-Identifier: BSD-3-Clause */
/* Every rank sends to both neighbours of a ring (MPI_Isend) and receives
 * from both (the left one's message, then the right one's), as IMB's
 * Exchange does; the size is one message. */
#include "../bench.h"

enum { TAG = 15 };

static size_t footprint(size_t bytes, int np) { (void)np; return 2 * bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, 2 * s->bytes, rep), *rb = buffers_recv(s->buf, 2 * s->bytes, rep);
    int n = (int)s->bytes, right = (s->rank + 1) % s->size, left = (s->rank + s->size - 1) % s->size;
    MPI_Request req[2];
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    if (s->check) check_fill((unsigned char *)sb + s->bytes, s->bytes, s->rank, rep);
    *t_start = timer_now(s->t);
    MPI_Isend(sb, n, MPI_BYTE, right, TAG, s->world, &req[0]);
    MPI_Isend(sb + s->bytes, n, MPI_BYTE, left, TAG, s->world, &req[1]);
    MPI_Recv(rb, n, MPI_BYTE, left, TAG, s->world, MPI_STATUS_IGNORE);
    MPI_Recv(rb + s->bytes, n, MPI_BYTE, right, TAG, s->world, MPI_STATUS_IGNORE);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, left, rep, "exchange");
    if (s->check) check_verify(s, (unsigned char *)rb + s->bytes, s->bytes, right, rep, "exchange");
}

const bench_def bench_exchange = {.name = "exchange", .pat = PAT_COLL, .min_np = 2, .sizeless = 0,
                                  .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL,
                                  .collective = 1, .footprint = footprint, .describe = describe, .run_rep = run_rep};
