/* SPDX-License-Identifier: BSD-3-Clause */
/* Where an engine job's wall time goes, for `mpiscope run`'s timing report
 * (bench/time_to_table.py): seconds per phase on each rank, printed by rank 0. */
#ifndef MPISCOPE_PHASES_H
#define MPISCOPE_PHASES_H

#include <mpi.h>

typedef enum {
    PHASE_STARTUP,   /* MPI_Init .. clocks started (options, buffers excluded) */
    PHASE_CLOCK,     /* clock synchronization: before the first series and per series */
    PHASE_SETUP,     /* per series: communicator, benchmark state */
    PHASE_WARMUP,    /* unrecorded repetitions */
    PHASE_MEASURE,   /* recorded repetitions, with their starts */
    PHASE_DECIDE,    /* gathering batches and applying the stopping rule */
    PHASE_RECORD,    /* raw blocks written, per series */
    PHASE_FINISH,    /* after the last series: the closing clock sync, the raw files closed */
    PHASE_COUNT
} phase;

typedef struct phases {
    double s[PHASE_COUNT];
} phases;

/* Adds the time since `since` to `p`; returns now, the next phase's start.
 * MPI_Wtime: independent of the timer being measured with. */
static inline double phase_done(phases *ph, phase p, double since)
{
    double now = MPI_Wtime();
    ph->s[p] += now - since;
    return now;
}

#endif
