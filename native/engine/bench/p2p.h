/* SPDX-License-Identifier: BSD-3-Clause */
/* What the MPI benchmarks of one message of s->bytes bytes between the two
 * ranks of a pair share (pingpong.c, oneway.c, pairs.c). */
#ifndef MPISCOPE_P2P_H
#define MPISCOPE_P2P_H

#include "../bench.h"

size_t p2p_footprint(size_t bytes, int np);
/* s->bytes elements of MPI_BYTE. */
void p2p_describe(series *s);
/* On the responder: repetition `rep`'s receive into s->reqs[0], posted before
 * the start so that the message finds it waiting, as in a loop. */
void p2p_post_recv(series *s, long rep, int tag);

/* One exchange of the pair: the initiator sends and receives the reply; the
 * responder, its receive posted by p2p_post_recv, waits for the message and
 * replies. The initiator's times bracket its round trip. The responder's
 * bracket its part, or with `each_way` its end is when the message arrived
 * and its start when the reply left: each direction a one-way time on the
 * global clock. `what` names the benchmark in a --check failure. */
static inline void p2p_exchange(series *s, long rep, int tag, int each_way, const char *what, double *t_start,
                                double *t_end)
{
    char *sb, *rb;
    rep_buffers(s, s->bytes, rep, &sb, &rb);
    int n = (int)s->bytes;
    if (s->role == ROLE_INITIATOR) {
        *t_start = timer_now(s->t);
        MPI_Send(sb, n, MPI_BYTE, s->peer, tag, s->world);
        MPI_Recv(rb, n, MPI_BYTE, s->peer, tag, s->world, MPI_STATUS_IGNORE);
        *t_end = timer_now(s->t);
    } else if (each_way) {
        MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE);
        *t_end = timer_now(s->t);
        *t_start = timer_now(s->t);
        MPI_Send(sb, n, MPI_BYTE, s->peer, tag, s->world);
    } else {
        *t_start = timer_now(s->t);
        MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE);
        MPI_Send(sb, n, MPI_BYTE, s->peer, tag, s->world);
        *t_end = timer_now(s->t);
    }
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, what);
}

/* The bench_def of such a benchmark: its name, how its rows become samples,
 * which ranks take part, and its own repetition and pre_rep. */
#define P2P_BENCH(nm, pattern, rl, pairs, run, pre)                                                              \
    {.name = nm, .pat = pattern, .min_np = 2, .sizeless = 0, .rule = rl, .unit = UNIT_SECONDS, .pairing = pairs, \
     .footprint = p2p_footprint, .describe = p2p_describe, .run_rep = run, .pre_rep = pre}

#endif
