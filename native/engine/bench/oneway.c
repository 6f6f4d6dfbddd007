/* SPDX-License-Identifier: BSD-3-Clause */
/* True one-way time 0 -> 1: the sender's start and the receiver's end,
 * compared on the global clock. */
#include "p2p.h"

enum { TAG = 12 };

/* The message finds its receive waiting, so the time is the message's, not
 * the receiver's setting up. */
static void pre_rep(series *s, long rep) { p2p_post_recv(s, rep, TAG); }

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb, *rb;
    rep_buffers(s, s->bytes, rep, &sb, &rb);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR)
        MPI_Send(sb, (int)s->bytes, MPI_BYTE, s->peer, TAG, s->world);
    else
        MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE);
    *t_end = timer_now(s->t);
    if (s->check && s->role == ROLE_RESPONDER)
        check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "oneway");
}

const bench_def bench_oneway = P2P_BENCH("oneway", PAT_ONEWAY, RULE_ONE_WAY, PAIRING_FIRST_TWO, run_rep, pre_rep);
