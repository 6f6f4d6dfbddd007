/* SPDX-License-Identifier: BSD-3-Clause */
#include "testhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void testhooks_parse(testhooks *h)
{
    *h = (testhooks){.stall_rank = -1, .abort_rank = -1, .finalize_hang_rank = -1};
    h->corrupt = getenv("MPISCOPE_TEST_CORRUPT") != NULL;
    const char *v = getenv("MPISCOPE_TEST_STALL");
    if (v && sscanf(v, "%d:%ld:%ld:%ld", &h->stall_rank, &h->stall_rep, &h->stall_ms, &h->stall_every) < 3)
        h->stall_rank = -1;
    if ((v = getenv("MPISCOPE_TEST_ABORT_AFTER"))) h->abort_after = atoi(v);
    if ((v = getenv("MPISCOPE_TEST_ABORT_RANK"))) h->abort_rank = atoi(v);
    v = getenv("MPISCOPE_TEST_FAKE_OVERHEAD_US");
    double us = v && *v ? atof(v) : 0;
    h->fake_overhead_s = us > 0 ? us * 1e-6 : 0;
    if ((v = getenv("MPISCOPE_TEST_FINALIZE_HANG")) && *v) h->finalize_hang_rank = atoi(v);
    if ((v = getenv("MPISCOPE_TEST_SYNC_ALTERNATE")) && atol(v) > 0) h->sync_alternate = atol(v);
}

/* mpiscope must stop such a launch and keep its samples (launch.py). */
void testhooks_finalize_hang(const testhooks *h, int rank)
{
    if (h->finalize_hang_rank != rank) return;
    for (;;) pause();
}

/* As lost scheduler ticks do: the late starts this causes must be marked. */
void testhooks_stall_now(const testhooks *h)
{
    long ms = h->stall_ms;
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* To exercise crash handling: the raw files must keep what came before. */
void testhooks_abort_after(const testhooks *h, int rank, int size, int series_done)
{
    int victim = h->abort_rank >= 0 ? h->abort_rank : size - 1;
    if (!h->abort_after || h->abort_after != series_done || rank != victim) return;
    fprintf(stderr, "mpiscope-engine: rank %d aborting on purpose (MPISCOPE_TEST_ABORT_AFTER)\n", rank);
    fflush(stderr);
    abort();
}
