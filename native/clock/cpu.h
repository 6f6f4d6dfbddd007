/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU's own counter, the spin-wait hint and the compiler barriers: the
 * only architecture-specific instructions of mpiscope, one implementation a
 * CPU family. x86-64: the TSC; aarch64: the generic timer (CNTVCT_EL0);
 * ppc64le: the time base; any other CPU: CLOCK_MONOTONIC_RAW in nanoseconds
 * stands in for a counter (and the timer falls back to clock_gettime). No
 * MPI here: the profiler, the simulator and the timer's own test use it too. */
#ifndef MPISCOPE_CPU_H
#define MPISCOPE_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#define CPU_COUNTER_NAME "TSC"
#elif defined(__aarch64__)
#define CPU_COUNTER_NAME "CNTVCT_EL0"
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define CPU_COUNTER_NAME "time base"
#else
#define CPU_COUNTER_NAME NULL /* none: cpu_counter() reads clock_gettime */
#endif

static inline uint64_t cpu_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The counter, read as cheaply as it allows: the CPU may move the read
 * past neighbouring instructions (for traces, not for timed regions).
 * The compiler's builtins on x86: <x86intrin.h> would add every vector
 * intrinsic to each file that includes this one (most of its compile time). */
static inline uint64_t cpu_counter(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    return __builtin_ppc_get_timebase();
#else
    return cpu_monotonic_ns();
#endif
}

/* The counter, read where the program says: earlier instructions finish
 * before it, later ones start after it (what a timed region needs). */
static inline uint64_t cpu_counter_ordered(void)
{
#if defined(__x86_64__)
    unsigned aux;
    __builtin_ia32_lfence();
    uint64_t c = __builtin_ia32_rdtscp(&aux);
    __builtin_ia32_lfence();
    return c;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
    return v;
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    __asm__ volatile("isync" : : : "memory");
    uint64_t v = __builtin_ppc_get_timebase();
    __asm__ volatile("isync" : : : "memory");
    return v;
#else
    return cpu_monotonic_ns();
#endif
}

/* One turn of a spin-wait: tells the CPU (and an SMT sibling) that this
 * thread only waits. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" : : : "memory");
#elif defined(__powerpc64__)
    __asm__ volatile("or 1,1,1\n\tor 2,2,2" : : : "memory"); /* low, then normal SMT priority */
#else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/* `x` as the compiler cannot know it: keeps a computation from being
 * folded or dropped (busy loops, sinks of results). No instruction. */
static inline uint64_t cpu_opaque(uint64_t x)
{
    __asm__ volatile("" : "+r"(x));
    return x;
}

/* The counter's state on this CPU: usable (1) or not (0, with the reason in
 * `why`); its nominal frequency (0: none, calibrate). */
#define CPU_WHY_LEN 160
typedef struct cpu_counter_info {
    const char *name;     /* CPU_COUNTER_NAME; NULL: none */
    int usable;
    char why[CPU_WHY_LEN];
    double nominal_hz;
} cpu_counter_info;

/* Reads /proc/cpuinfo (or the file MPISCOPE_TEST_CPUINFO names) and the
 * CPU's registers. */
void cpu_counter_probe(cpu_counter_info *info);
/* Seconds per count: the nominal frequency when a 50 ms calibration against
 * CLOCK_MONOTONIC_RAW agrees with it within 10% (an emulator's counter may
 * not run at the architecture's rate), else the calibration's. */
double cpu_counter_period(const cpu_counter_info *info, double *calibrated_hz);

/* /proc/cpuinfo's text, parsed (cpuinfo.c): whether the x86 flags line
 * lists `flag`, and the POWER "timebase" line's Hz (0: none). */
int cpuinfo_has_flag(const char *text, const char *flag);
double cpuinfo_timebase_hz(const char *text);
/* Why an x86 TSC is not invariant (needs constant_tsc and nonstop_tsc),
 * written to `why`; 1 when it is. */
int cpuinfo_tsc_invariant(const char *text, char *why, size_t n);

#endif
