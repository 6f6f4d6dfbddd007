/* SPDX-License-Identifier: BSD-3-Clause */
/* Concurrent pairs (MPIBench): the initiator sends, the responder replies as
 * soon as it has received; both directions are one-way times on the global
 * clock. `multipair` pairs p with p + n/2; `pairs` takes the pairs given. */
#include "p2p.h"

enum { TAG = 13 };

/* The message finds the responder's receive waiting (as pingpong's does). */
static void pre_rep(series *s, long rep) { p2p_post_recv(s, rep, TAG); }

/* Each direction timed on its own. */
static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    p2p_exchange(s, rep, TAG, 1, "pairs", t_start, t_end);
}

const bench_def bench_multipair =
    P2P_BENCH("multipair", PAT_PAIRS, RULE_PAIR_EXCHANGE, PAIRING_HALVES, run_rep, pre_rep);
const bench_def bench_pairs = P2P_BENCH("pairs", PAT_PAIRS, RULE_PAIR_EXCHANGE, PAIRING_LISTED, run_rep, pre_rep);
