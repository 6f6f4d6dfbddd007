/* SPDX-License-Identifier: BSD-3-Clause */
/* One ping-pong repetition over a benchmark's own channel (layers.c,
 * transport.c): the initiator sends then receives, the responder receives
 * then sends, n bytes each way by the channel's `put` and `get`. Inline, so
 * that the calls through put and get become direct calls. */
#ifndef MPISCOPE_ROUNDTRIP_H
#define MPISCOPE_ROUNDTRIP_H

#include "../bench.h"

typedef void (*chan_put)(series *s, void *chan, const void *p, size_t n);
typedef void (*chan_get)(series *s, void *chan, void *p, size_t n);

/* `what` names the benchmark in a --check failure. */
static inline void roundtrip_rep(series *s, void *chan, chan_put put, chan_get get, size_t n, long rep,
                                 const char *what, double *t_start, double *t_end)
{
    char *sb, *rb;
    rep_buffers(s, n, rep, &sb, &rb);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        put(s, chan, sb, n);
        get(s, chan, rb, n);
    } else {
        get(s, chan, rb, n);
        put(s, chan, sb, n);
    }
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, what);
}

#endif
