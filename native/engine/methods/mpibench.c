/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIBench (Grove and Coddington), as Hamid (2008) describes it; its source
 * is not published:
 * - a barrier before every repetition; every rank reads its timer just
 *   before and just after the call, and the global clock (synchronized
 *   before and after the measurements, drift interpolated) puts the
 *   timestamps of all ranks on one time line;
 * - point-to-point: all ranks at once in pairs p <-> p + n/2: half send
 *   while the other half receive, then the other way; each message's time
 *   is its receiver's end minus its sender's start on the global clock;
 * - 1000 repetitions (100 for alltoall) after 10 unrecorded ones, data in
 *   cache; every repetition of every rank kept, for its histograms.
 * MPIBench measures no reduction. Data: MPI_BYTE. */
#include "method.h"

enum { REPS = 1000, REPS_ALLTOALL = 100, WARMUP = 10, TAG = 5 };

static const mop_traits pairs = {"call", "barrier_before", "none", "warm", "halves"};
static const mop_traits coll = {"call", "barrier_before", "none", "warm", "all"};
static const mop_traits rooted = {"call", "barrier_before", "fixed", "warm", "all"};

static const mop_traits *traits(mop op)
{
    switch (op) {
    case MOP_PINGPONG: return &pairs;
    case MOP_BW: case MOP_REDUCE: case MOP_ALLREDUCE: case MOP_REDUCE_SCATTER: return NULL;
    case MOP_RING: case MOP_EXCHANGE: return NULL; /* not reproduced */
    case MOP_BCAST: case MOP_GATHER: case MOP_SCATTER: return &rooted;
    default: return &coll;
    }
}

/* One exchange: each row's start is when this rank began to send, its end
 * when its receive completed. */
static void exchange(mctx *m, char *sb, char *rb, double *t_start, double *t_end)
{
    int n = (int)m->bytes;
    MPI_Comm c = m->comm;
    if (m->crank < m->csize / 2) {
        *t_start = mnow(m);
        MPI_Send(sb, n, MPI_BYTE, m->peer, TAG, c);
        MPI_Recv(rb, n, MPI_BYTE, m->peer, TAG, c, MPI_STATUS_IGNORE);
        *t_end = mnow(m);
    } else {
        MPI_Recv(rb, n, MPI_BYTE, m->peer, TAG, c, MPI_STATUS_IGNORE);
        *t_end = mnow(m);
        *t_start = mnow(m);
        MPI_Send(sb, n, MPI_BYTE, m->peer, TAG, c);
    }
}

static void run(mctx *m)
{
    char *sb = method_send(m), *rb = method_recv(m);
    long reps = m->op == MOP_ALLTOALL ? REPS_ALLTOALL : REPS;
    m->datatype = m->op == MOP_BARRIER ? "none" : "MPI_BYTE";
    m->count = m->op == MOP_BARRIER ? 0 : (long)m->bytes;
    method_param(m, "repetitions", (double)reps);
    long k = mrows_take(&m->rows, WARMUP, ROW_WARMUP, 1);
    mrows_take(&m->rows, reps, ROW_MEASURED, 1);
    double *ts = m->rows.t_start + k, *te = m->rows.t_end + k;
    for (long i = 0; i < WARMUP + reps; i++) {
        MPI_Barrier(m->comm);
        if (m->op == MOP_PINGPONG) {
            exchange(m, sb, rb, &ts[i], &te[i]);
            continue;
        }
        ts[i] = mnow(m);
        method_call(m, MPI_BYTE, (int)m->count, 0, sb, rb);
        te[i] = mnow(m);
    }
    if (method_op_rooted(m->op))
        for (long i = 0; i < WARMUP + reps; i++) m->rows.root[k + i] = 0;
}

const method_def method_mpibench = {.name = "mpibench", .tool = "MPIBench (as Hamid 2008 describes it)",
                                    .traits = traits, .run = run};
