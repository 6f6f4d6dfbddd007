/* SPDX-License-Identifier: BSD-3-Clause */
/* Ping-pong between ranks 0 and 1: half the round trip, as osu_latency reports. */
#include "p2p.h"

enum { TAG = 11, DONE_TAG = 17 };

/* The responder's receive is posted before the start, so the ping finds it
 * waiting whenever the responder leaves the start (barrier or window), as every
 * ping but the first does in osu_latency's loop; a head start spun by the
 * initiator would cost tens of ns a round trip.
 *
 * Of two ranks in a barrier, the last to enter leaves first; the other learns
 * of it one message later. The initiator, which receives the last pong, would
 * enter last and send its ping while the responder is still in the barrier,
 * adding a message time to the round trip. So before a barrier start the
 * initiator says it is done with the last repetition, and the responder enters
 * the barrier only on that word: one message per round trip, sent outside the
 * timed span (a "ready" from the responder after the barrier would be a second
 * message the pong's way inside it). bench/harness_overhead.py measures it. */
static void pre_rep(series *s, long rep)
{
    if (s->barrier_start && s->role == ROLE_INITIATOR)
        MPI_Send(NULL, 0, MPI_BYTE, s->peer, DONE_TAG, s->world);
    p2p_post_recv(s, rep, TAG);
    if (s->barrier_start && s->role == ROLE_RESPONDER)
        MPI_Recv(NULL, 0, MPI_BYTE, s->peer, DONE_TAG, s->world, MPI_STATUS_IGNORE);
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    p2p_exchange(s, rep, TAG, 0, "pingpong", t_start, t_end);
}

const bench_def bench_pingpong =
    P2P_BENCH("pingpong", PAT_PINGPONG, RULE_HALF_ROUND_TRIP, PAIRING_FIRST_TWO, run_rep, pre_rep);
