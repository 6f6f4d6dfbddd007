/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPISCOPE_ORPHAN_H
#define MPISCOPE_ORPHAN_H

/* A rank never outlives the process that started it (mpirun, orted,
 * hydra_pmi_proxy, slurmstepd): when that process ends, by whatever means, the
 * kernel kills the rank (Linux PR_SET_PDEATHSIG; nothing elsewhere). Open MPI's
 * mpirun, itself stopped by SIGTERM when mpiscope was killed, sometimes exits
 * without ending its ranks, and they would run on for the whole of their
 * series. Call it first in main, before MPI_Init. */
void die_with_launcher(void);

#endif
