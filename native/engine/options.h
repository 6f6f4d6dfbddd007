/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's command line (built by the Python CLI; see `--help`). */
#ifndef MPISCOPE_OPTIONS_H
#define MPISCOPE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "../clock/clock.h"

/* auto: a tree, but every rank with rank 0 when ranks share CPUs (concurrent
 * pairs would then preempt each other's round trips). */
enum { CLOCK_SYNC_AUTO, CLOCK_SYNC_TREE, CLOCK_SYNC_STAR };

typedef struct options {
    char **benches;
    int nbenches;
    long *sizes;
    int nsizes;
    int sync_window;      /* 1: window (or auto), 0: barrier */
    int sync_auto;        /* auto: window starts unless the barrier's exit skew is negligible (series.c) */
    int own_barrier;      /* barrier starts by procsync_barrier's own messages, not MPI_Barrier */
    timer_kind timer;
    int cache_cold;
    size_t cold_region;   /* bytes; 0: four times the last-level cache */
    int huge_pages;       /* message buffers in transparent huge pages (madvise) */
    long reps_min, reps_max, warmup;
    double ci_width;      /* relative half-width of the median's 95% CI */
    double time_budget_s; /* per benchmark x size */
    int launch;
    int check;
    int root_rotate;
    uint64_t seed;
    const char *out;
    int expect_np;
    int *pairs; /* flattened (initiator, responder) */
    int npairs;
    int window_msgs;
    int inject;
    double inj_max_offset_s, inj_max_drift;
    int sync_points; /* offset samples per rank before and after */
    int clock_sync;  /* CLOCK_SYNC_*: which ranks measure offsets with which */
    /* LogGP benchmarks (flood, overhead, rma_flood): queue depths, one flood
     * variant each ("q<depth>"); computation added per message by the overhead
     * test, as multiples of the time per message without it (variants
     * "os+<f>g" then "or+<f>g"); bytes one flood repetition moves at most. */
    int *queue_depths;
    int nqueue_depths;
    char **queue_names;
    double *overhead_steps;
    int noverhead_steps;
    char **overhead_names;
    long flood_bytes;
    /* Own collective algorithms (bench/coll_own.c): --algo names ("all",
     * "mpi" or an algorithm), bytes per segment of pipelined ones (0: the
     * algorithm's default), and --trace: record every message of them. */
    char **algos;
    int nalgos;
    long segment;
    int trace;
    /* The peers' methods to run besides the engine's own series (methods/):
     * their names, as --methods lists them. */
    char **methods;
    int nmethods;
} options;

/* Every option at its default (what --describe reports variants under). */
void options_defaults(options *o);
void options_default_lists(options *o);
/* Returns 0, or -1 with a message for the user in `err`. */
int options_parse(options *o, int argc, char **argv, char *err, size_t errlen);

#endif
