#include "clock.h"
#include "sorted.h"

#include <math.h>
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

static double monotonic_raw(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* TSC period from a 50 ms interval bracketed by CLOCK_MONOTONIC_RAW reads;
 * the bracket's read cost (< 100 ns) gives an error of a few ppm at most,
 * which the clock synchronization absorbs as drift between hosts. */
static double tsc_calibrate(void)
{
    unsigned aux;
    double m0 = monotonic_raw();
    uint64_t c0 = __rdtscp(&aux);
    double m1;
    do m1 = monotonic_raw(); while (m1 - m0 < 0.05);
    uint64_t c1 = __rdtscp(&aux);
    return (m1 - m0) / (double)(c1 - c0);
}

/* Mean cost of a read, the smallest step it shows, and the median interval of
 * two back-to-back reads (robust to a preemption among them). */
static void measure_cost_and_resolution(timer *t)
{
    enum { N = 2000 };
    double steps[N];
    double first = timer_raw(t), prev = first, res = INFINITY;
    for (int i = 0; i < N; i++) {
        double now = timer_raw(t);
        steps[i] = now - prev;
        if (now > prev && now - prev < res) res = now - prev;
        prev = now;
    }
    t->cost_s = (prev - first) / N;
    t->resolution_s = isinf(res) ? 0.0 : res;
    if (t->kind == TIMER_WTIME && MPI_Wtick() > t->resolution_s)
        t->resolution_s = MPI_Wtick();
    sort_doubles(steps, N);
    t->interval_s = steps[N / 2];
}

void timer_measure(timer *t, timer_kind kind, double tsc_period_s)
{
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->tsc_period_s = tsc_period_s;
    measure_cost_and_resolution(t);
}

void timer_init(timer *t, timer_kind kind, MPI_Comm node_comm)
{
    memset(t, 0, sizeof *t);
    t->kind = kind;
    /* One calibration per host (also when another timer is used, to report
     * the TSC's cost): ranks sharing a TSC must share its period, or they
     * would seem to drift apart. */
    int node_rank;
    MPI_Comm_rank(node_comm, &node_rank);
    if (node_rank == 0) t->tsc_period_s = tsc_calibrate();
    MPI_Bcast(&t->tsc_period_s, 1, MPI_DOUBLE, 0, node_comm);
    measure_cost_and_resolution(t);
}

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
