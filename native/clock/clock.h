/* SPDX-License-Identifier: BSD-3-Clause */
/* Timers behind one interface; optional injected offset and drift for tests. */
#ifndef MPISCOPE_CLOCK_H
#define MPISCOPE_CLOCK_H

#include <mpi.h>
#include <stdint.h>
#include <time.h>

#include "cpu.h"

/* TIMER_TSC: the CPU's counter (cpu.h: the TSC on x86-64, CNTVCT_EL0 on
 * aarch64, the time base on ppc64le), named "tsc" on every CPU. */
typedef enum { TIMER_TSC, TIMER_CLOCK, TIMER_WTIME } timer_kind;

typedef struct timer {
    timer_kind kind;
    double tsc_period_s;  /* seconds per count of the CPU's counter */
    /* Injected distortion: local = raw + offset + drift * (raw - epoch). */
    int injected;
    double inj_offset_s, inj_drift, inj_epoch_s;
    /* Measured properties, recorded in the run context. */
    double cost_s, resolution_s;
    double interval_s;    /* mean time between two back-to-back reads: what an empty timed region measures */
    double tick_s;        /* the step the timer's values move by (0: unknown) */
    /* The counter's name and nominal rate, and why the timer is clock_gettime
     * where "tsc" was asked for ("": it was not). Last: the fields a read
     * uses stay in one cache line. */
    cpu_counter_info counter;
    char fallback[CPU_WHY_LEN];
} timer;

static inline double timer_raw(const timer *t)
{
    switch (t->kind) {
    case TIMER_TSC:
        return (double)cpu_counter_ordered() * t->tsc_period_s;
    case TIMER_CLOCK: {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
    default:
        return MPI_Wtime();
    }
}

/* The local time every measurement uses. */
static inline double timer_now(const timer *t)
{
    double raw = timer_raw(t);
    if (t->injected)
        raw += t->inj_offset_s + t->inj_drift * (raw - t->inj_epoch_s);
    return raw;
}

const char *timer_name(timer_kind k);
int timer_parse(const char *s, timer_kind *k);
/* Calibrates (the CPU's counter: once per host, shared with the host's other
 * ranks through `node_comm`) and measures read cost and resolution. "tsc"
 * where the counter is absent or not invariant gives the clock_gettime
 * timer, the reason in `fallback`. */
void timer_init(timer *t, timer_kind kind, MPI_Comm node_comm);
/* As timer_init, but "tsc" stays the counter where it is not invariant (the
 * profiler: its events are counter ticks, its clock must be on their timeline). */
void timer_init_exact(timer *t, timer_kind kind, MPI_Comm node_comm);
/* A timer of `kind` using an already calibrated counter period, with its cost and
 * resolution measured (to report on timers not in use). */
void timer_measure(timer *t, timer_kind kind, double tsc_period_s);
/* Injects a seeded random offset in [-max_offset_s, max_offset_s] and drift in
 * [-max_drift, max_drift] for `rank`; the same seed gives every rank the same
 * table, so any rank can compute another rank's true clock. */
void timer_inject_params(uint64_t seed, int rank, double max_offset_s, double max_drift,
                         double *offset_s, double *drift);

#endif
