/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport lab's message-discovery benchmark (Chai (2009), chapter 7): a
 * ping-pong whose receiver does not know which of two channels the message
 * comes on — the pair's shared-memory queue, or a loopback UDP socket
 * (transport/poll.c) — and polls both, statically or adaptively (variants).
 * Every TP_POLL_EVERY-th repetition goes over the socket, the rest over
 * shared memory: the median shows what polling the idle socket costs a
 * shared-memory message, the tail what the adaptive poller pays to find the
 * rare one. Sizes above TP_POLL_MAX_BYTES (a datagram) are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../transport/tp.h"
#include "../rawfmt.h"
#include "loggp.h"

enum { TP_POLL_EVERY = 16 };

typedef struct poll_state {
    tp_pair *pair;
    tp_poller *poller;
    char why[512];
} poll_state;

static const char *const names[] = {"static", "adaptive"};
static size_t footprint(size_t bytes, int np) { (void)np; return bytes ? bytes : 1; }
static int nvariants(const struct options *o) { (void)o; return 2; }
static const char *variant_name(const struct options *o, int i) { (void)o; return names[i]; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
    poll_state *st = calloc(1, sizeof *st);
    s->state = st;
    if (s->role == ROLE_IDLE) return;
    char host[MPI_MAX_PROCESSOR_NAME];
    if (!loggp_same_host(s, host, sizeof host)) {
        s->skip = "the ranks are on different hosts: no shared memory";
        return;
    }
    if (s->bytes > TP_POLL_MAX_BYTES) {
        snprintf(st->why, sizeof st->why, "a datagram carries at most %d bytes", TP_POLL_MAX_BYTES);
        s->skip = st->why;
        return;
    }
    st->pair = tp_open(TP_BASIC, s->pc, s->oversubscribed, st->why, sizeof st->why);
    if (st->pair) st->poller = tp_poll_open(st->pair, s->pc, st->why, sizeof st->why);
    if (!st->poller) {
        s->skip = st->why;
        return;
    }
    rawfmt_params_poll(s, names[s->variant], TP_POLL_EVERY, TP_POLL_SKIP_MAX);
}

static void finish(series *s)
{
    poll_state *st = s->state;
    if (!st) return;
    tp_poll_close(st->poller);
    tp_close(st->pair);
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    poll_state *st = s->state;
    size_t n = s->bytes;
    int channel = rep % TP_POLL_EVERY == TP_POLL_EVERY - 1, adaptive = s->variant == 1;
    char *sb = buffers_send(s->buf, n, rep), *rb = buffers_recv(s->buf, n, rep);
    if (s->check) check_fill((unsigned char *)sb, n, s->rank, rep);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        tp_poll_send(st->poller, channel, sb, n);
        tp_poll_recv(st->poller, adaptive, rb, n);
    } else {
        tp_poll_recv(st->poller, adaptive, rb, n);
        tp_poll_send(st->poller, channel, sb, n);
    }
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, n, s->peer, rep, "tp_poll");
}

const bench_def bench_tp_poll = {.name = "tp_poll", .pat = PAT_PINGPONG, .min_np = 2, .rule = RULE_HALF_ROUND_TRIP,
                                 .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO, .footprint = footprint,
                                 .describe = describe, .run_rep = run_rep, .nvariants = nvariants,
                                 .variant_name = variant_name, .finish = finish};
