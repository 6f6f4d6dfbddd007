/* SPDX-License-Identifier: BSD-3-Clause */
/* --trace: every call as an event in a buffer sized at MPI_Init, with its
 * ticks, and the engine's clock synchronization (../clock/sync.c) at
 * MPI_Init and MPI_Finalize so the events can be put on rank 0's clock. */
#ifndef PMPI_TRACE_H
#define PMPI_TRACE_H

#include <stdint.h>
#include <stdio.h>

typedef struct trace_event {
    uint64_t t0, t1, bytes;   /* ticks at the call's start and end; the message's bytes */
    int32_t call, peer;       /* peer: world rank (a rooted collective's root), -1 for none */
    int32_t comm_size, comm;  /* comm: index of the communicator's member list, -1 unknown */
} trace_event;

void trace_start(uint64_t capacity);    /* collective: within MPI_Init */
void trace_finish(void);                /* collective: within MPI_Finalize */
int trace_write(const char *path);      /* the events, raw */
void trace_describe(FILE *f);           /* the "trace" member of the profile's JSON */

#endif
