/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MPISCOPE_QUIET_EXIT_H
#define MPISCOPE_QUIET_EXIT_H
#include <mpi.h>

/* An out-of-band barrier (plain TCP, no MPI progress) just before MPI_Finalize,
 * for MPICH only: see quiet_exit.c. quiet_exit_init is collective over comm
 * (call it early, while MPI progress is harmless); quiet_exit_barrier is called
 * by every rank right before MPI_Finalize. Both do nothing under other MPIs. */
void quiet_exit_init(MPI_Comm comm);
void quiet_exit_barrier(void);

#endif
