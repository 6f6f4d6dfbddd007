/* SPDX-License-Identifier: BSD-3-Clause */
/* What every method shares: the operations by name, one collective call,
 * the buffers, and the block's parameters. */
#include <string.h>

#include "method.h"

static const char *const op_names[MOP_COUNT] = {
    "pingpong", "bw", "barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter",
    "ring", "exchange", "reduce_scatter_block",
};

enum { TAG_RING = 31, TAG_EXCHANGE = 32 };

int method_op_of(const char *bench)
{
    for (int k = 0; k < MOP_COUNT; k++)
        if (!strcmp(op_names[k], bench)) return k;
    return -1;
}

const char *method_op_name(mop op) { return op_names[op]; }

int method_op_rooted(mop op) { return op == MOP_BCAST || op == MOP_REDUCE || op == MOP_GATHER || op == MOP_SCATTER; }

int method_op_reduction(mop op) { return op == MOP_REDUCE || op == MOP_ALLREDUCE || op == MOP_REDUCE_SCATTER; }

/* IMB's Exchange: both sends posted, the left neighbour's message received
 * first, then the right one's (both into `rb`, as IMB does). Receives take
 * any tag here and in the ring, as IMB's do (no -select_tag). */
static void exchange(const mctx *m, MPI_Datatype dt, int count, char *sb, char *rb)
{
    int p = m->csize, right = (m->crank + 1) % p, left = (m->crank + p - 1) % p, size;
    MPI_Request req[2];
    MPI_Type_size(dt, &size);
    MPI_Isend(sb, count, dt, right, TAG_EXCHANGE, m->comm, &req[0]);
    MPI_Isend(sb + (size_t)count * (size_t)size, count, dt, left, TAG_EXCHANGE, m->comm, &req[1]);
    MPI_Recv(rb, count, dt, left, MPI_ANY_TAG, m->comm, MPI_STATUS_IGNORE);
    MPI_Recv(rb, count, dt, right, MPI_ANY_TAG, m->comm, MPI_STATUS_IGNORE);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

/* The engine's buffers hold the largest footprint of the run's benchmarks
 * and sizes; a method passes at most as many bytes (per rank and block). */
char *method_send(const mctx *m) { return m->e->buf.send; }
char *method_recv(const mctx *m) { return m->e->buf.recv; }

void method_call(const mctx *m, MPI_Datatype dt, int count, int root, char *sb, char *rb)
{
    MPI_Comm c = m->comm;
    int p = m->csize, right = (m->crank + 1) % p, left = (m->crank + p - 1) % p;
    switch (m->op) {
    case MOP_BARRIER: MPI_Barrier(c); break;
    case MOP_BCAST: MPI_Bcast(m->crank == root ? sb : rb, count, dt, root, c); break;
    case MOP_REDUCE: MPI_Reduce(sb, rb, count, dt, MPI_SUM, root, c); break;
    case MOP_ALLREDUCE: MPI_Allreduce(sb, rb, count, dt, MPI_SUM, c); break;
    case MOP_ALLGATHER: MPI_Allgather(sb, count, dt, rb, count, dt, c); break;
    case MOP_ALLTOALL: MPI_Alltoall(sb, count, dt, rb, count, dt, c); break;
    case MOP_GATHER: MPI_Gather(sb, count, dt, rb, count, dt, root, c); break;
    case MOP_SCATTER: MPI_Scatter(sb, count, dt, rb, count, dt, root, c); break;
    case MOP_RING: MPI_Sendrecv(sb, count, dt, right, TAG_RING, rb, count, dt, left, MPI_ANY_TAG, c, MPI_STATUS_IGNORE); break;
    case MOP_EXCHANGE: exchange(m, dt, count, sb, rb); break;
    case MOP_REDUCE_SCATTER:
        if (m->recvcounts) MPI_Reduce_scatter(sb, rb, m->recvcounts, dt, MPI_SUM, c);
        else MPI_Reduce_scatter_block(sb, rb, count, dt, MPI_SUM, c);
        break;
    default: break; /* point-to-point operations have loops of their own */
    }
}

void method_param(mctx *m, const char *key, double value)
{
    int i = 0;
    while (i < m->nparams && strcmp(m->pkey[i], key)) i++;
    if (i == MAX_PARAMS) return;
    m->pkey[i] = key;
    m->pval[i] = value;
    if (i == m->nparams) m->nparams++;
}
