/* SPDX-License-Identifier: BSD-3-Clause */
/* The timer's own test, without MPI, on any CPU (natively and under
 * qemu-user for the other architectures): /proc/cpuinfo's parsing for every
 * architecture, and this CPU's counter: its state, its period, reads that
 * never go back, a sleep it sees whole, the spin-wait hint. Prints what it
 * found as one JSON line; exits 1 naming each check that failed. */
#include "../cpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "timer-check: FAILED: %s\n", what);
        failures++;
    }
}

static void check_cpuinfo_parsing(void)
{
    char why[CPU_WHY_LEN] = "";
    const char *x86 = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp nonstop_tsc_s3 nonstop_tsc\n";
    const char *no_nonstop = "processor\t: 0\nflags\t\t: fpu constant_tsc nonstop_tsc_s3\n";
    const char *power = "processor\t: 0\ncpu\t\t: POWER9\ntimebase\t: 512000000\nplatform\t: PowerNV\n";
    check(cpuinfo_tsc_invariant(x86, why, sizeof why), "constant_tsc and nonstop_tsc: invariant");
    check(!cpuinfo_tsc_invariant(no_nonstop, why, sizeof why) && strstr(why, "nonstop_tsc"),
          "no nonstop_tsc (nonstop_tsc_s3 is another flag): not invariant, and said why");
    check(!cpuinfo_has_flag(x86, "tsc_s3") && cpuinfo_has_flag(x86, "tsc"), "flags match whole words");
    check(!cpuinfo_has_flag(power, "tsc"), "no flags line: no flag");
    check(cpuinfo_timebase_hz(power) == 512e6, "POWER's timebase line");
    check(cpuinfo_timebase_hz(x86) == 0, "no timebase line: 0");
}

/* The smallest positive step of 10000 back-to-back reads, in counts; 0 if a
 * read went back. */
static uint64_t smallest_step(uint64_t (*read)(void))
{
    uint64_t best = UINT64_MAX, prev = read();
    for (int i = 0; i < 10000; i++) {
        uint64_t now = read();
        if (now < prev) return 0;
        if (now > prev && now - prev < best) best = now - prev;
        prev = now;
    }
    return best == UINT64_MAX ? 0 : best;
}

int main(void)
{
    check_cpuinfo_parsing();

    cpu_counter_info info;
    cpu_counter_probe(&info);
    double calibrated_hz = 0, period = cpu_counter_period(&info, &calibrated_hz);
    check(period > 0 && isfinite(period), "a positive period");
    check(info.usable || info.why[0], "an unusable counter says why");

    uint64_t step = smallest_step(cpu_counter), ordered_step = smallest_step(cpu_counter_ordered);
    check(step > 0 && ordered_step > 0, "reads never go back and do advance");

    /* A 20 ms sleep: the counter sees at least 18 ms of it (a busy machine
     * only lengthens the sleep). */
    uint64_t c0 = cpu_counter_ordered();
    struct timespec nap = {0, 20000000};
    while (nanosleep(&nap, &nap)) continue;
    double slept = (double)(cpu_counter_ordered() - c0) * period;
    check(slept >= 0.018, "a 20 ms sleep counts at least 18 ms");

    unsigned spins = 0;
    for (int i = 0; i < 1000; i++) cpu_relax(), spins = (unsigned)cpu_opaque(spins + 1);
    check(spins == 1000, "the spin-wait hint and the opaque value leave the program's values alone");

    printf("{\"counter\": %s%s%s, \"usable\": %d, \"why\": \"%s\", \"nominal_hz\": %.6g, "
           "\"calibrated_hz\": %.6g, \"period_s\": %.6g, \"resolution_s\": %.6g, \"slept_s\": %.6g, "
           "\"failures\": %d}\n",
           info.name ? "\"" : "", info.name ? info.name : "null", info.name ? "\"" : "", info.usable, info.why,
           info.nominal_hz, calibrated_hz, period, (double)ordered_step * period, slept, failures);
    return failures ? 1 : 0;
}
