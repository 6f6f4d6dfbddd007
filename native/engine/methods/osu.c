/* SPDX-License-Identifier: BSD-3-Clause */
/* OSU Micro-Benchmarks 7.4 (osu_latency, osu_bw and the blocking
 * collectives), as their sources time them:
 * - osu_latency: on rank 0 alone, each round trip of a back-to-back loop,
 *   after `skip` untimed ones (rank 1 reads no timer);
 * - osu_bw: on rank 0, each window of 64 non-blocking sends of one buffer
 *   and its 1-byte acknowledgement, windows back to back;
 * - collectives: on every rank, each call, then an untimed barrier (before
 *   the call for osu_reduce); osu_bcast has no barrier before its loop;
 * - osu_barrier: on every rank, each barrier, back to back;
 * - osu_reduce_scatter: as the collectives, MPI_Reduce_scatter of `size`
 *   chars split into p counts (the first size % p ranks one more). Its
 *   size is the whole vector, so at the engine's reduce_scatter_block size
 *   b (each rank's block) it runs OSU's size p x b, recorded as the
 *   block's "tool_size".
 * OSU has no Sendrecv or Exchange.
 * Counts: skip / iterations 100 / 10000 (latency), 10 / 100 (bandwidth),
 * 100 / 1000 (collectives), and 10 / 1000, 2 / 20, 10 / 100 above 8 KiB.
 * Data is MPI_CHAR, `size` elements (reductions sum chars, as OSU does). */
#include <stdlib.h>

#include "method.h"

enum { LARGE = 8192, WINDOW = 64, TAG = 1, TAG_BW = 100, TAG_ACK = 101 };

static const mop_traits latency = {"call", "back_to_back", "none", "warm", "first_two"};
static const mop_traits barrier = {"call", "back_to_back", "none", "warm", "all"};
static const mop_traits coll = {"call", "barrier_after", "none", "warm", "all"};
static const mop_traits rooted = {"call", "barrier_after", "fixed", "warm", "all"};
static const mop_traits reduce = {"call", "barrier_before", "fixed", "warm", "all"};

static const mop_traits *traits(mop op)
{
    switch (op) {
    case MOP_PINGPONG: case MOP_BW: return &latency;
    case MOP_BARRIER: return &barrier;
    case MOP_REDUCE: return &reduce;
    case MOP_BCAST: case MOP_GATHER: case MOP_SCATTER: return &rooted;
    case MOP_RING: case MOP_EXCHANGE: return NULL;
    default: return &coll;
    }
}

static void counts(const mctx *m, long *skip, long *iters)
{
    int large = m->bytes * (m->op == MOP_REDUCE_SCATTER ? (size_t)m->csize : 1) > LARGE;
    if (m->op == MOP_PINGPONG) *skip = large ? 10 : 100, *iters = large ? 1000 : 10000;
    else if (m->op == MOP_BW) *skip = large ? 2 : 10, *iters = large ? 20 : 100;
    else *skip = large ? 10 : 100, *iters = large ? 100 : 1000;
    method_param((mctx *)m, "skip", (double)*skip);
    method_param((mctx *)m, "iterations", (double)*iters);
}

/* The skip round trips happen in the same loop but read no timer: one row
 * brackets them, its timer reads outside any timed round trip. */
static void latency_loop(mctx *m, long skip, long iters)
{
    char *sb = method_send(m), *rb = method_recv(m);
    int n = (int)m->bytes;
    MPI_Comm c = m->comm;
    MPI_Barrier(c);
    if (!method_is_initiator(m)) {
        for (long i = 0; i < skip + iters; i++) {
            MPI_Recv(rb, n, MPI_CHAR, 0, TAG, c, MPI_STATUS_IGNORE);
            MPI_Send(sb, n, MPI_CHAR, 0, TAG, c);
        }
        return;
    }
    long w = mrows_take(&m->rows, 1, ROW_WARMUP, (int)skip), k = mrows_take(&m->rows, iters, ROW_MEASURED, 1);
    double *ts = m->rows.t_start + k, *te = m->rows.t_end + k;
    m->rows.t_start[w] = mnow(m);
    for (long i = 0; i < skip; i++) {
        MPI_Send(sb, n, MPI_CHAR, 1, TAG, c);
        MPI_Recv(rb, n, MPI_CHAR, 1, TAG, c, MPI_STATUS_IGNORE);
    }
    m->rows.t_end[w] = mnow(m);
    for (long i = 0; i < iters; i++) {
        ts[i] = mnow(m);
        MPI_Send(sb, n, MPI_CHAR, 1, TAG, c);
        MPI_Recv(rb, n, MPI_CHAR, 1, TAG, c, MPI_STATUS_IGNORE);
        te[i] = mnow(m);
    }
}

static void bw_loop(mctx *m, long skip, long iters)
{
    char *sb = method_send(m), *rb = method_recv(m), ack = 0;
    int n = (int)m->bytes;
    MPI_Comm c = m->comm;
    MPI_Request req[WINDOW];
    method_param(m, "window", WINDOW);
    MPI_Barrier(c);
    if (!method_is_initiator(m)) {
        for (long i = 0; i < skip + iters; i++) {
            for (int j = 0; j < WINDOW; j++) MPI_Irecv(rb, n, MPI_CHAR, 0, TAG_BW, c, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_CHAR, 0, TAG_ACK, c);
        }
        return;
    }
    long w = mrows_take(&m->rows, 1, ROW_WARMUP, (int)skip), k = mrows_take(&m->rows, iters, ROW_MEASURED, 1);
    double *ts = m->rows.t_start + k, *te = m->rows.t_end + k;
    for (long i = 0; i < skip + iters; i++) {
        if (i == 0) m->rows.t_start[w] = mnow(m);
        if (i >= skip) ts[i - skip] = mnow(m);
        for (int j = 0; j < WINDOW; j++) MPI_Isend(sb, n, MPI_CHAR, 1, TAG_BW, c, &req[j]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_CHAR, 1, TAG_ACK, c, MPI_STATUS_IGNORE);
        if (i >= skip) te[i - skip] = mnow(m);
        else if (i == skip - 1) m->rows.t_end[w] = mnow(m);
    }
}

/* Every iteration reads the timer around its call, skipped ones too. */
static void coll_loop(mctx *m, long skip, long iters)
{
    char *sb = method_send(m), *rb = method_recv(m);
    int n = (int)m->bytes;
    MPI_Comm c = m->comm;
    int before = m->op == MOP_REDUCE, after = m->op != MOP_REDUCE && m->op != MOP_BARRIER;
    long k = mrows_take(&m->rows, skip, ROW_WARMUP, 1);
    mrows_take(&m->rows, iters, ROW_MEASURED, 1);
    double *ts = m->rows.t_start + k, *te = m->rows.t_end + k;
    if (m->op != MOP_BCAST && m->op != MOP_BARRIER) MPI_Barrier(c);
    for (long i = 0; i < skip + iters; i++) {
        if (before) MPI_Barrier(c);
        ts[i] = mnow(m);
        method_call(m, MPI_CHAR, n, 0, sb, rb);
        te[i] = mnow(m);
        if (after) MPI_Barrier(c);
    }
    if (method_op_rooted(m->op))
        for (long i = 0; i < skip + iters; i++) m->rows.root[k + i] = 0;
    MPI_Barrier(c);
}

/* osu_reduce_scatter's recvcounts for `elements` chars over p ranks. */
static int *split(long elements, int p)
{
    int *c = malloc(sizeof(int) * (size_t)p);
    long portion = elements / p, remainder = elements % p;
    for (int i = 0; i < p; i++)
        c[i] = elements < p ? i < elements : (int)(portion + (i < remainder));
    return c;
}

static void run(mctx *m)
{
    long skip, iters;
    int *recvcounts = NULL;
    counts(m, &skip, &iters);
    if (m->op == MOP_REDUCE_SCATTER) {
        long whole = (long)m->bytes * m->csize;
        method_param(m, "tool_size", (double)whole);
        m->recvcounts = recvcounts = split(whole, m->csize);
    }
    m->datatype = m->op == MOP_BARRIER ? "none" : "MPI_CHAR";
    m->count = m->op == MOP_BARRIER ? 0 : (long)m->bytes;
    if (m->op == MOP_PINGPONG) latency_loop(m, skip, iters);
    else if (m->op == MOP_BW) bw_loop(m, skip, iters);
    else coll_loop(m, skip, iters);
    m->recvcounts = NULL;
    free(recvcounts);
}

const method_def method_osu = {.name = "osu", .tool = "OSU Micro-Benchmarks 7.4", .traits = traits, .run = run};
