/* SPDX-License-Identifier: BSD-3-Clause */
/* The recording backend: the shim's MPI calls (shim/mpi.h) record, for the
 * rank being generated, each posted message and what it waits for. A rank
 * runs its algorithm as a sequential program, so an operation posted after
 * some waits requires what those waits completed ("the barrier"); a
 * reduction becomes an operation of its bytes, charged gamma per byte by
 * the simulator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record.h"

/* More required operations than this become one free join (calc 0), so an
 * all-to-all round does not make every later operation require 2p others. */
#define JOIN_MAX 4

static struct {
    long rank, size;
    sched_op *ops;
    uint32_t nops, cap;
    uint32_t *deps;
    uint32_t ndeps, dcap;
    uint32_t *bar, nbar, bar_est; /* barrier, and the operation count when it was set */
    uint32_t *grp, ngrp;          /* completed by waits since the last post */
    uint32_t gcap, bcap;
    int failed;
} R;

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return p;
    uint32_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(p, (size_t)c * elem);
    if (!q) {
        fprintf(stderr, "mpiscope-sim: out of memory recording a schedule\n");
        exit(3);
    }
    *cap = c;
    return q;
}

static uint32_t add_op(int type, int peer, int tag, double value, const uint32_t *deps, uint32_t nd)
{
    R.ops = grow(R.ops, &R.cap, R.nops + 1, sizeof *R.ops);
    R.deps = grow(R.deps, &R.dcap, R.ndeps + nd, sizeof *R.deps);
    sched_op *o = &R.ops[R.nops];
    o->type = (uint8_t)type, o->peer = peer, o->tag = tag, o->value = value;
    o->dep0 = R.ndeps, o->ndeps = nd;
    memcpy(R.deps + R.ndeps, deps, nd * sizeof *deps);
    R.ndeps += nd;
    return R.nops++;
}

/* Waits since the last post become the barrier of what comes next. */
static void close_group(void)
{
    if (!R.ngrp) return;
    int need_old = 0;
    for (uint32_t i = 0; i < R.ngrp; i++) need_old |= R.grp[i] < R.bar_est;
    /* An operation posted before the barrier was set does not imply it. */
    uint32_t n = R.ngrp;
    if (need_old) {
        R.grp = grow(R.grp, &R.gcap, R.ngrp + R.nbar, sizeof *R.grp);
        for (uint32_t i = 0; i < R.nbar; i++) {
            int dup = 0;
            for (uint32_t j = 0; j < R.ngrp; j++) dup |= R.grp[j] == R.bar[i];
            if (!dup) R.grp[n++] = R.bar[i];
        }
    }
    if (n > JOIN_MAX) {
        uint32_t join = add_op(OP_CALC, -1, 0, 0.0, R.grp, n);
        R.bar = grow(R.bar, &R.bcap, 1, sizeof *R.bar);
        R.bar[0] = join, R.nbar = 1;
    } else {
        R.bar = grow(R.bar, &R.bcap, n, sizeof *R.bar);
        memcpy(R.bar, R.grp, n * sizeof *R.bar);
        R.nbar = n;
    }
    R.bar_est = R.nops;
    R.ngrp = 0;
}

static void waited(uint32_t op)
{
    R.grp = grow(R.grp, &R.gcap, R.ngrp + 1, sizeof *R.grp);
    R.grp[R.ngrp++] = op;
}

void rec_begin_rank(long rank, long size)
{
    R.rank = rank, R.size = size;
    R.nops = R.ndeps = R.nbar = R.bar_est = R.ngrp = 0;
}

void rec_end_rank(rank_sched *out)
{
    out->rank = R.rank, out->nops = R.nops, out->ndeps = R.ndeps, out->ops = R.ops, out->deps = R.deps;
}

void rec_reduce(double bytes)
{
    close_group();
    uint32_t op = add_op(OP_REDUCE, -1, 0, bytes, R.bar, R.nbar);
    waited(op);
}

static int post(int type, int count, int peer, int tag, MPI_Request *req)
{
    close_group();
    *req = (MPI_Request)add_op(type, peer, tag, (double)count, R.bar, R.nbar);
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return post(OP_SEND, count, dest, tag, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    return post(OP_RECV, count, src, tag, req);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    if (*req != MPI_REQUEST_NULL) waited((uint32_t)*req);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    for (int i = 0; i < n; i++) MPI_Wait(&reqs[i], NULL);
    return MPI_SUCCESS;
}

int MPI_Waitsome(int n, MPI_Request *reqs, int *outcount, int *indices, MPI_Status *statuses)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL) MPI_Wait(&reqs[i], NULL), indices[k++] = i;
    *outcount = k ? k : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank) { *rank = (int)R.rank; return MPI_SUCCESS; }
int MPI_Comm_size(MPI_Comm comm, int *size) { *size = (int)R.size; return MPI_SUCCESS; }
double MPI_Wtime(void) { return 0.0; }

int MPI_Abort(MPI_Comm comm, int code)
{
    fprintf(stderr, "mpiscope-sim: the algorithm gave up on rank %ld of %ld\n", R.rank, R.size);
    exit(3);
}
