/* SPDX-License-Identifier: BSD-3-Clause */
/* State of one engine process, passed to every phase (no file-level state). */
#ifndef MPISCOPE_ENGINE_H
#define MPISCOPE_ENGINE_H

#include <mpi.h>
#include <stdint.h>
#include "bench.h"
#include "buffers.h"
#include "../clock/clock.h"
#include "options.h"
#include "phases.h"
#include "record.h"
#include "../clock/sync.h"
#include "testhooks.h"

typedef struct engine {
    options *o;
    testhooks hooks; /* parsed once at start (docs/reference/test-hooks.md) */
    MPI_Comm world;
    int rank, size;
    int oversubscribed; /* more ranks on this host than CPUs: yield while waiting */
    timer t;
    sync_ctx sync;
    rawfile raw;
    buffers buf;
    /* Per-repetition records of the current series, preallocated for reps_max. */
    double *t_start, *t_end, *t_sched;
    uint8_t *valid;
    double t_first, t_last; /* local time of the first series' start, the last one's end */
    phases ph;              /* where the job's time went */
} engine;

/* Measures one benchmark x size on every rank and appends its block.
 * Returns 0, or -1 after printing why (I/O error). */
int series_run(engine *e, const bench_def *def, int variant, size_t bytes);

#endif
