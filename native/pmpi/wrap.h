/* SPDX-License-Identifier: BSD-3-Clause */
/* What every wrapper does: pass straight through while the profiler is off
 * (before MPI_Init, inside our own MPI calls), else time the PMPI call. */
#ifndef PMPI_WRAP_H
#define PMPI_WRAP_H

#include "prof.h"

#define SITE __builtin_return_address(0)
#define PASS_IF_OFF(call) if (__builtin_expect(!prof.on, 0)) return call
/* Runs `call` between two tick reads into t0 / t1; its result in rc. */
#define TIMED(call) uint64_t t0 = prof_ticks(); int rc = call; uint64_t t1 = prof_ticks()

#endif
