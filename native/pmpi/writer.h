/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-rank profile file, written at MPI_Finalize. */
#ifndef PMPI_WRITER_H
#define PMPI_WRITER_H

typedef struct overhead {
    double wrapped_ns, direct_ns; /* one MPI_Send to MPI_PROC_NULL, through the wrapper and not */
} overhead;

/* Writes DIR/rank-<r>.json (and rank-<r>.trace) under temporary names and
 * renames them into place; returns 0, or -1 with a message on stderr. */
int write_profile(const char *dir, double wall_s, double tick_s, const overhead *o);

#endif
