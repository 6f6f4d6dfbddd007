/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether the CPU's counter can time, and its period. */
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* /proc/cpuinfo (MPISCOPE_TEST_CPUINFO: another file, for tests), or "". */
static char *read_cpuinfo(void)
{
    const char *path = getenv("MPISCOPE_TEST_CPUINFO");
    FILE *f = fopen(path && *path ? path : "/proc/cpuinfo", "r");
    size_t used = 0, cap = 1 << 16;
    char *text = malloc(cap);
    if (!text) return NULL;
    while (f) {
        size_t got = fread(text + used, 1, cap - 1 - used, f);
        used += got;
        if (got == 0) break;
        if (used == cap - 1) {
            char *bigger = realloc(text, cap *= 2);
            if (!bigger) break;
            text = bigger;
        }
    }
    if (f) fclose(f);
    text[used] = 0;
    return text;
}

void cpu_counter_probe(cpu_counter_info *info)
{
    memset(info, 0, sizeof *info);
    info->name = CPU_COUNTER_NAME;
    char *text = read_cpuinfo();
    if (!text) {
        snprintf(info->why, sizeof info->why, "out of memory reading /proc/cpuinfo");
        return;
    }
#if defined(__x86_64__)
    info->usable = cpuinfo_tsc_invariant(text, info->why, sizeof info->why);
#elif defined(__aarch64__)
    /* The generic timer counts at one fixed rate on every core (the
     * architecture requires it); firmware sets the rate in CNTFRQ_EL0. */
    uint64_t frq;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
    info->nominal_hz = (double)frq;
    info->usable = frq > 0;
    if (!info->usable) snprintf(info->why, sizeof info->why, "CNTFRQ_EL0 reads 0: the firmware set no counter rate");
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    /* The time base runs at one fixed rate on POWER8 and later: 512 MHz
     * where /proc/cpuinfo does not say. */
    info->nominal_hz = cpuinfo_timebase_hz(text);
    if (info->nominal_hz <= 0) info->nominal_hz = 512e6;
    info->usable = 1;
#else
    snprintf(info->why, sizeof info->why, "this CPU has no counter mpiscope reads");
#endif
    free(text);
}

/* A counter read bracketed by two clock reads: of 10 tries, the tightest
 * bracket, so a preemption between the reads cannot skew it. */
static void bracket(double *clock_s, uint64_t *count)
{
    double best = INFINITY;
    for (int i = 0; i < 10; i++) {
        uint64_t a = cpu_monotonic_ns(), c = cpu_counter_ordered(), b = cpu_monotonic_ns();
        if ((double)(b - a) < best) best = (double)(b - a), *clock_s = 0.5e-9 * (double)(a + b), *count = c;
    }
}

double cpu_counter_period(const cpu_counter_info *info, double *calibrated_hz)
{
    double m0, m1;
    uint64_t c0, c1;
    bracket(&m0, &c0);
    do bracket(&m1, &c1); while (m1 - m0 < 0.05);
    double hz = (double)(c1 - c0) / (m1 - m0);
    if (calibrated_hz) *calibrated_hz = hz;
    if (info->nominal_hz > 0 && fabs(hz / info->nominal_hz - 1) <= 0.1) return 1.0 / info->nominal_hz;
    return 1.0 / hz;
}
