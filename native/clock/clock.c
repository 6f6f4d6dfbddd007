/* SPDX-License-Identifier: BSD-3-Clause */
#include "clock.h"
#include "sorted.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *timer_name(timer_kind k)
{
    return k == TIMER_TSC ? "tsc" : k == TIMER_CLOCK ? "clock" : "wtime";
}

int timer_parse(const char *s, timer_kind *k)
{
    if (!strcmp(s, "tsc")) *k = TIMER_TSC;
    else if (!strcmp(s, "clock")) *k = TIMER_CLOCK;
    else if (!strcmp(s, "wtime")) *k = TIMER_WTIME;
    else return -1;
    return 0;
}

/* The timer's unit: seconds per count of what it reads (counter ticks, or the
 * nanoseconds of clock_gettime); 0 when unknown (MPI_Wtime). */
static double timer_unit_s(const timer *t)
{
    return t->kind == TIMER_TSC ? t->tsc_period_s : t->kind == TIMER_CLOCK ? 1e-9 : 0.0;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b, b = r;
    }
    return a;
}

/* Mean cost of a read, the smallest step it shows, the step its values move
 * by (tick_s: the TSC of some CPUs, AMD Zen's among them, counts in steps of
 * tens of ticks), and the interval of two back-to-back reads: what an empty
 * timed region measures on average. With reads of 2-3 ticks the median
 * interval is a multiple of the tick, off by up to half of one; a read that
 * takes x shows as the ticks either side of x, so the mean of the intervals
 * within a tick and a half of the median is x, and leaves out those a
 * preemption or an interrupt lengthened. Taken in blocks of 100, the
 * quietest block's: at start-up the other ranks (and other work on the node)
 * can slow whole stretches of reads. */
static double interval_of(double *steps, int n, double tick_s)
{
    sort_doubles(steps, (size_t)n);
    double median = steps[n / 2], sum = 0;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (fabs(steps[i] - median) <= 1.5 * tick_s) sum += steps[i], kept++;
    return sum / kept; /* no tick known: the median */
}

static void measure_cost_and_resolution(timer *t)
{
    enum { N = 2000, BLOCK = 100 };
    double steps[N];
    double res = INFINITY, unit = timer_unit_s(t);
    uint64_t tick = 0;
    double first = timer_raw(t);
    for (int i = 0; i < N; i++) { /* pairs of reads, as a timed region makes them */
        double a = timer_raw(t), b = timer_raw(t);
        steps[i] = b - a;
        if (b > a && b - a < res) res = b - a;
    }
    double last = timer_raw(t);
    for (int i = 0; unit > 0 && i < N; i++) /* after the reads: a division would lengthen them */
        if (steps[i] > 0) tick = gcd_u64(tick, (uint64_t)llround(steps[i] / unit));
    t->cost_s = (last - first) / (2 * N + 1);
    t->resolution_s = isinf(res) ? 0.0 : res;
    if (t->kind == TIMER_WTIME && MPI_Wtick() > t->resolution_s)
        t->resolution_s = MPI_Wtick();
    t->tick_s = (double)tick * unit;
    t->interval_s = INFINITY;
    for (int b = 0; b < N; b += BLOCK) {
        double x = interval_of(steps + b, BLOCK, t->tick_s);
        if (x < t->interval_s) t->interval_s = x;
    }
}

void timer_measure(timer *t, timer_kind kind, double tsc_period_s)
{
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->tsc_period_s = tsc_period_s;
    measure_cost_and_resolution(t);
}

static void timer_setup(timer *t, timer_kind kind, MPI_Comm node_comm, int may_fall_back)
{
    memset(t, 0, sizeof *t);
    cpu_counter_probe(&t->counter);
    if (may_fall_back && kind == TIMER_TSC && !t->counter.usable) {
        kind = TIMER_CLOCK;
        snprintf(t->fallback, sizeof t->fallback, "%s", t->counter.why);
    }
    t->kind = kind;
    /* One calibration per host (also when another timer is used, to report
     * the counter's cost): ranks sharing a counter must share its period, or
     * they would seem to drift apart. */
    int node_rank;
    MPI_Comm_rank(node_comm, &node_rank);
    if (node_rank == 0) t->tsc_period_s = cpu_counter_period(&t->counter, NULL);
    MPI_Bcast(&t->tsc_period_s, 1, MPI_DOUBLE, 0, node_comm);
    measure_cost_and_resolution(t);
}

void timer_init(timer *t, timer_kind kind, MPI_Comm node_comm) { timer_setup(t, kind, node_comm, 1); }
void timer_init_exact(timer *t, timer_kind kind, MPI_Comm node_comm) { timer_setup(t, kind, node_comm, 0); }

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform_pm1(uint64_t *s)
{
    return 2.0 * ((double)(splitmix64(s) >> 11) / 9007199254740992.0) - 1.0;
}

void timer_inject_params(uint64_t seed, int rank, double max_offset_s, double max_drift,
                         double *offset_s, double *drift)
{
    uint64_t s = seed * 0x100000001b3ULL + (uint64_t)rank + 1;
    *offset_s = max_offset_s * uniform_pm1(&s);
    *drift = max_drift * uniform_pm1(&s);
}
