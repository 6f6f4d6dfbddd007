/* SPDX-License-Identifier: BSD-3-Clause */
/* Start and end of the profile: MPI_Init(_thread) sets the tables up (the
 * node map, the peer matrix, the trace buffer) and turns the wrappers on;
 * MPI_Finalize measures the wrappers' own cost, writes the rank's file and
 * only then finalizes MPI. Configured by the environment mpiscope sets:
 * MPISCOPE_PROFILE_DIR (where; default ./mpiscope-profile),
 * MPISCOPE_PROFILE_TRACE (events kept per rank with --trace; 0: no trace),
 * MPISCOPE_PROFILE_LIBVIEW (1 with --library-view: libview.c). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../clock/quiet_exit.h"
#include "libview.h"
#include "prof.h"
#include "requests.h"
#include "trace.h"
#include "writer.h"

static double t0_mono;

static double monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void start(int provided)
{
    prof.threaded = provided == MPI_THREAD_MULTIPLE;
    channels_init();
    peers_init();
    libview_init();
    const char *trace = getenv("MPISCOPE_PROFILE_TRACE");
    if (trace && atoll(trace) > 0) trace_start((uint64_t)atoll(trace));
    quiet_exit_init(MPI_COMM_WORLD);  /* before prof.on: its broadcasts are not the application's */
    PMPI_Barrier(MPI_COMM_WORLD);
    t0_mono = monotonic();
    prof.t0_ticks = prof_ticks();
    prof.on = 1;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) start(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) start(*provided);
    return rc;
}

static double ns_per_call(int n)
{
    uint64_t a = prof_ticks();
    for (int i = 0; i < n; i++) MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    return (double)(prof_ticks() - a) / n;
}

/* The wrapper's cost on a null operation, in ticks, best of a few tries each
 * way (the counts it adds are taken back out). */
static overhead measure_overhead(double tick_s)
{
    enum { N = 20000, TRIES = 5 };
    cell *c = &prof_cells[CALL_Send][prof_world->size_slot][CH_NONE][0];
    cell saved = *c;
    double wrapped = 1e300, direct = 1e300;
    for (int t = 0; t < TRIES; t++) {
        prof.on = 1;
        double w = ns_per_call(N);
        prof.on = 0;
        double d = ns_per_call(N);
        if (w < wrapped) wrapped = w;
        if (d < direct) direct = d;
    }
    *c = saved;
    return (overhead){wrapped * tick_s * 1e9, direct * tick_s * 1e9};
}

int MPI_Finalize(void)
{
    if (!prof.on) return PMPI_Finalize();
    uint64_t t1 = prof_ticks();
    double wall = monotonic() - t0_mono;
    prof.on = 0;
    double tick_s = wall / (double)(t1 - prof.t0_ticks);
    int tracing = prof.tracing;
    prof.tracing = 0;
    overhead o = measure_overhead(tick_s);
    if (tracing) {
        prof.tracing = 1;
        trace_finish();
    }
    const char *dir = getenv("MPISCOPE_PROFILE_DIR");
    write_profile(dir && *dir ? dir : "mpiscope-profile", wall, tick_s, &o);
    quiet_exit_barrier();  /* nothing that progresses MPI between this and PMPI_Finalize */
    return PMPI_Finalize();
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if (prof.on) comm_forget(*comm);
    return PMPI_Comm_free(comm);
}
