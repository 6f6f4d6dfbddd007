/* SPDX-License-Identifier: BSD-3-Clause */
/* The part of MPI that engine/colls uses, for the schedule generator: the
 * algorithms compile unchanged against it, and its "messages" only record
 * operations and their dependencies (record.c). No data moves. */
#ifndef MPISCOPE_SIM_SHIM_MPI_H
#define MPISCOPE_SIM_SHIM_MPI_H

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Request;
typedef struct { int unused; } MPI_Status;

#define MPI_SUCCESS 0
#define MPI_COMM_WORLD 0
#define MPI_BYTE 1
#define MPI_INT 2
#define MPI_REQUEST_NULL (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)

int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req);
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Request *req);
int MPI_Wait(MPI_Request *req, MPI_Status *status);
int MPI_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses);
int MPI_Waitsome(int n, MPI_Request *reqs, int *outcount, int *indices, MPI_Status *statuses);
int MPI_Abort(MPI_Comm comm, int code);
double MPI_Wtime(void);

#endif
