/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed bandwidth as osu_bw / osu_bibw measure it: `window_msgs`
 * non-blocking messages in flight, then a short acknowledgement (bw) or the
 * same window in the other direction at once (bibw). Like OSU, the messages of
 * one window share one buffer. */
#include "../bench.h"

enum { TAG = 15, TAG_ACK = 16 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

static void run_bw(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes, w = s->window_msgs;
    char ack = 0;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        for (int i = 0; i < w; i++) MPI_Isend(sb, n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
        MPI_Waitall(w, s->reqs, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < w; i++) MPI_Irecv(rb, n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
        MPI_Waitall(w, s->reqs, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world);
    }
    *t_end = timer_now(s->t);
    if (s->check && s->role == ROLE_RESPONDER) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "bw");
}

static void run_bibw(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes, w = s->window_msgs;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    *t_start = timer_now(s->t);
    for (int i = 0; i < w; i++) MPI_Irecv(rb, n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
    for (int i = 0; i < w; i++) MPI_Isend(sb, n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[w + i]);
    MPI_Waitall(2 * w, s->reqs, MPI_STATUSES_IGNORE);
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "bibw");
}

const bench_def bench_bw = {.name = "bw", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                .rule = RULE_BANDWIDTH, .unit = UNIT_BYTES_PER_SECOND, .pairing = PAIRING_FIRST_TWO,
                                .footprint = footprint, .describe = describe, .run_rep = run_bw};
const bench_def bench_bibw = {.name = "bibw", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                .rule = RULE_BIDIRECTIONAL_BANDWIDTH, .unit = UNIT_BYTES_PER_SECOND, .pairing = PAIRING_FIRST_TWO,
                                .footprint = footprint, .describe = describe, .run_rep = run_bibw};
