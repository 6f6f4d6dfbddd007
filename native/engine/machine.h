/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPISCOPE_MACHINE_H
#define MPISCOPE_MACHINE_H
#include <mpi.h>

/* How many ranks of `world` run on this rank's kernel, and so share its CPUs.
 * Emulated hosts (network namespaces) of one machine count together: MPI's
 * shared-memory split sees them as separate nodes. Falls back to `node_size`
 * when the kernel's boot id cannot be read. */
int ranks_sharing_cpus(MPI_Comm world, int node_size);

/* This rank's host, CPU affinity, MPI library and every timer's cost, for
 * the raw file header. */
struct header_facts;
struct timer;
void header_facts_gather(struct header_facts *f, const struct timer *in_use);

#endif
