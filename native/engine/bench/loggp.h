/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the LogGP benchmarks (flood.c, overhead.c, rma.c) and
 * the layer benchmarks (layers.c): message counts, pipelined completion,
 * a calibrated busy loop, polling, and the series' "params" object. */
#ifndef MPISCOPE_LOGGP_H
#define MPISCOPE_LOGGP_H

#include <stdint.h>
#include "../bench.h"
#include "../json.h"
#include "../../clock/cpu.h"

/* Messages one flood repetition sends: enough bytes to amortize its final
 * acknowledgement (options' flood_bytes), at most 256 small ones, and at
 * least two full queues (and 4). */
long loggp_msgs(const struct options *o, size_t bytes, int q);

/* Completes `k` requests of the ring `req[0..q)`, starting at slot `from % q`. */
void loggp_wait_slots(MPI_Request *req, int q, long from, long k);

/* A busy loop of pure computation: `iters` dependent multiply-adds. */
static inline uint64_t loggp_busy(uint64_t iters, uint64_t x)
{
    for (uint64_t i = 0; i < iters; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x = cpu_opaque(x); /* keeps the compiler from folding the loop */
    }
    return x;
}

/* Computation for `seconds`: short runs of loggp_busy until the timer says
 * the time is up (its length does not depend on the CPU's clock speed, which
 * varies under a hypervisor); 0 computes nothing. Returns the chain value. */
static inline uint64_t loggp_compute(const timer *t, double seconds, uint64_t x)
{
    if (seconds <= 0) return x;
    double end = timer_now(t) + seconds;
    do x = loggp_busy(16, x);
    while (timer_now(t) < end);
    return x;
}

/* The actual length of loggp_compute(seconds): the median of `calls` timed
 * calls, less one timer read. */
double loggp_compute_calibrate(const timer *t, double seconds, int calls);

/* Spins (no system call) until `seconds` have passed on `t`. */
void loggp_spin_for(const timer *t, double seconds);

/* One step of a polling loop: a bare spin, after a while a pause; with more
 * ranks than CPUs (s->oversubscribed), soon a yield so the partner can run.
 * Otherwise never a yield: like an MPI library's progress loop, a waiting rank
 * keeps its CPU (a yield would hand it to any other process for a time slice). */
void loggp_relax(const series *s, unsigned *spins);

/* Largest of the options' queue depths. */
int loggp_max_queue_depth(const struct options *o);

/* The partner's rank in s->pc (two ranks) and whether both run on one host
 * (same processor name); `peer_host` gets the partner's name. Collective on pc. */
int loggp_pc_peer(const series *s);
int loggp_same_host(const series *s, char *peer_host, size_t n);

#endif
