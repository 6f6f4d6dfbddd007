/* SPDX-License-Identifier: BSD-3-Clause */
/* --library-view, per collective call: the messages Open MPI's algorithm
 * sent for each blocking collective, seen where its pml monitoring component
 * records them (libview.c), kept per call × communicator size × channel. */
#ifndef PMPI_LIBVIEW_H
#define PMPI_LIBVIEW_H

#include <stdio.h>

#include "prof.h"

typedef struct libview_cell {
    uint64_t calls;                 /* blocking calls on this rank */
    uint64_t msgs[NCHANNELS], bytes[NCHANNELS]; /* by the channel to the message's destination */
} libview_cell;

extern __thread libview_cell *libview_current; /* the collective this thread is inside, or NULL */

void libview_init(void);            /* within MPI_Init: on when MPISCOPE_PROFILE_LIBVIEW=1 */
void libview_enter_slow(int call, MPI_Comm comm);
void libview_describe(FILE *f);     /* the "library_colls" member of the profile's JSON */

/* Around a blocking collective's PMPI call; one predictable branch when off. */
static inline void libview_enter(int call, MPI_Comm comm)
{
    if (__builtin_expect(prof.libview, 0)) libview_enter_slow(call, comm);
}

static inline void libview_leave(void)
{
    if (__builtin_expect(prof.libview, 0)) libview_current = NULL;
}

#endif
