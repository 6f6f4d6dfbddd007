/* SPDX-License-Identifier: BSD-3-Clause */
/* Test hooks (docs/reference/test-hooks.md): environment variables read once, before
 * anything is measured, into a struct the engine carries. A hook that is off
 * costs one predictable branch on a field, never inside a timed region. */
#ifndef MPISCOPE_TESTHOOKS_H
#define MPISCOPE_TESTHOOKS_H

typedef struct testhooks {
    int corrupt;                /* MPISCOPE_TEST_CORRUPT: received data seen off by one */
    int stall_rank;             /* MPISCOPE_TEST_STALL=RANK:REP:MS[:EVERY]; -1: off */
    long stall_rep, stall_ms, stall_every; /* every: also each EVERY-th repetition after REP; 0: once */
    int abort_after;            /* MPISCOPE_TEST_ABORT_AFTER=K; 0: off */
    int abort_rank;             /* MPISCOPE_TEST_ABORT_RANK; -1: the last rank */
    double fake_overhead_s;     /* MPISCOPE_TEST_FAKE_OVERHEAD_US, in seconds; 0: off */
    int finalize_hang_rank;     /* MPISCOPE_TEST_FINALIZE_HANG=RANK; -1: off */
    long sync_alternate;        /* MPISCOPE_TEST_SYNC_ALTERNATE=N: window and barrier starts take turns, N repetitions each; 0: off */
} testhooks;

void testhooks_parse(testhooks *h);

/* MPISCOPE_TEST_STALL: holds `rank` up while it waits for repetition `rep`. */
void testhooks_stall_now(const testhooks *h);
static inline void testhooks_stall(const testhooks *h, int rank, long rep)
{
    if (h->stall_rank != rank || rep < h->stall_rep) return;
    if (rep == h->stall_rep || (h->stall_every > 0 && (rep - h->stall_rep) % h->stall_every == 0))
        testhooks_stall_now(h);
}

/* MPISCOPE_TEST_FINALIZE_HANG: the rank never returns where it would call
 * MPI_Finalize, as MPICH 4.0's ch4:ucx can spin there. */
void testhooks_finalize_hang(const testhooks *h, int rank);

/* MPISCOPE_TEST_ABORT_AFTER: aborts the victim rank after its K-th series. */
void testhooks_abort_after(const testhooks *h, int rank, int size, int series_done);

#endif
