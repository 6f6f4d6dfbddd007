/* SPDX-License-Identifier: BSD-3-Clause */
/* Flood (LogGP g and G): rank 0 sends messages to rank 1 as fast as it can
 * with q sends outstanding — q non-blocking sends started, then each time
 * the oldest half has completed, as many new ones — and ends with an
 * acknowledgement from rank 1, so every message has arrived. Rank 1 keeps q
 * receives posted the same way. One variant per queue depth ("q1", "q2", …);
 * a repetition's time over its number of messages (the block's window_msgs)
 * is the gap g(m, q). */
#include <stdlib.h>

#include "../options.h"
#include "../rawfmt.h"
#include "loggp.h"

enum { TAG = 31, TAG_ACK = 32 };

typedef struct flood_state {
    int q;
    long msgs;
    MPI_Request *req;
} flood_state;

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static int nvariants(const options *o) { return o->nqueue_depths; }
static const char *variant_name(const options *o, int i) { return o->queue_names[i]; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
    flood_state *st = calloc(1, sizeof *st);
    st->q = s->o->queue_depths[s->variant];
    st->msgs = loggp_msgs(s->o, s->bytes, st->q);
    st->req = malloc(sizeof(MPI_Request) * (size_t)st->q);
    s->state = st;
    s->window_msgs = (int)st->msgs;
    rawfmt_params_flood(s, st->q, st->msgs);
}

static void finish(series *s)
{
    flood_state *st = s->state;
    if (st) free(st->req);
}

static void post(const series *s, char *buf, MPI_Request *r)
{
    int n = (int)s->bytes;
    if (s->role == ROLE_INITIATOR) MPI_Isend(buf, n, MPI_BYTE, s->peer, TAG, s->world, r);
    else MPI_Irecv(buf, n, MPI_BYTE, s->peer, TAG, s->world, r);
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    flood_state *st = s->state;
    int q = st->q;
    long half = q / 2 > 0 ? q / 2 : 1, total = st->msgs, posted = 0, done = 0;
    int sender = s->role == ROLE_INITIATOR;
    char *buf = sender ? buffers_send(s->buf, s->bytes, rep) : buffers_recv(s->buf, s->bytes, rep);
    char ack = 0;
    if (s->check && sender) check_fill((unsigned char *)buf, s->bytes, s->rank, rep);
    *t_start = timer_now(s->t);
    for (; posted < q && posted < total; posted++) post(s, buf, &st->req[posted % q]);
    while (done < total) {
        long k = half < posted - done ? half : posted - done;
        loggp_wait_slots(st->req, q, done, k);
        done += k;
        for (long j = 0; j < k && posted < total; j++, posted++) post(s, buf, &st->req[posted % q]);
    }
    if (sender) MPI_Recv(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world, MPI_STATUS_IGNORE);
    else MPI_Send(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world);
    *t_end = timer_now(s->t);
    if (s->check && !sender) check_verify(s, (unsigned char *)buf, s->bytes, s->peer, rep, "flood");
}

const bench_def bench_flood = {.name = "flood", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                               .rule = RULE_PER_MESSAGE, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                               .variant_option = "--queue-depths",
                               .footprint = footprint, .describe = describe, .run_rep = run_rep,
                               .nvariants = nvariants, .variant_name = variant_name, .finish = finish};
