/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests whose completion the profiler must see: receives (the source and
 * the size are known only then) and persistent requests (started again and
 * again). Sends and non-blocking collectives are counted when posted and
 * are not tracked. */
#ifndef PMPI_REQUESTS_H
#define PMPI_REQUESTS_H

#include "prof.h"

typedef struct req_entry {
    uint64_t key;         /* the request handle's bits; 0: free, 1: removed */
    int call;             /* the call that posted it (MPI_Irecv, MPI_Recv_init, MPI_Send_init …) */
    int recv;             /* a receive: counted at completion */
    int persistent;
    int peer;             /* persistent sends: the destination */
    uint64_t bytes;       /* persistent sends: the message */
    uint64_t t0, t1;      /* the posting call's ticks (receives count its time at completion) */
    const comm_info *comm;
    void *site;
} req_entry;

extern int prof_tracked; /* entries in the table: waits skip all of this when 0 */

void req_track(MPI_Request req, req_entry e);
req_entry *req_find(MPI_Request req);
void req_remove(req_entry *e);
/* A tracked request completed with `status`: receives are counted now. */
void req_completed(req_entry *e, const MPI_Status *status);

#endif
