/* SPDX-License-Identifier: BSD-3-Clause */
/* The reference series of the attribution (src/mpiscope/methods/attribution.py):
 * the engine's own operations (its datatypes, counts and buffers), every
 * call timed, each series differing from ref_barrier in one thing only:
 * - ref_barrier: a barrier before every call (untimed);
 * - ref_b2b: calls back to back, one barrier before the loop;
 * - ref_rotate: as ref_b2b, the root rotating (root = call mod p), as
 *   Mpptest rotates it between calls back to back;
 * - ref_cycle: as ref_barrier, fresh memory every call (SKaMPI's cycling).
 * A point-to-point call is a round trip (pingpong) or a window of 64
 * messages and an acknowledgement (bw), timed on rank 0 alone; with a
 * barrier before it, rank 0 first tells rank 1 it is done with the last one
 * and rank 1 posts its receive before the barrier, as the engine's own
 * barrier-started pingpong does (bench/pingpong.c).
 * Counts: as OSU's collectives, 100 + 1000 calls (10 + 100 above 8 KiB);
 * windows 10 + 100 (2 + 20). */
#include <stdlib.h>

#include "cycle.h"
#include "method.h"

enum { LARGE = 8192, WINDOW = 64, TAG = 21, TAG_DONE = 22, TAG_ACK = 23 };

static const mop_traits b_p2p = {"call", "barrier_before", "none", "warm", "first_two"};
static const mop_traits b_coll = {"call", "barrier_before", "none", "warm", "all"};
static const mop_traits b_rooted = {"call", "barrier_before", "fixed", "warm", "all"};
static const mop_traits bb_p2p = {"call", "back_to_back", "none", "warm", "first_two"};
static const mop_traits bb_coll = {"call", "back_to_back", "none", "warm", "all"};
static const mop_traits bb_rooted = {"call", "back_to_back", "fixed", "warm", "all"};
static const mop_traits rot = {"call", "back_to_back", "rotating", "warm", "all"};
static const mop_traits c_p2p = {"call", "barrier_before", "none", "cycling", "first_two"};
static const mop_traits c_coll = {"call", "barrier_before", "none", "cycling", "all"};
static const mop_traits c_rooted = {"call", "barrier_before", "fixed", "cycling", "all"};

static int p2p(mop op) { return op == MOP_PINGPONG || op == MOP_BW; }

static const mop_traits *pick(mop op, const mop_traits *pt, const mop_traits *coll, const mop_traits *rooted)
{
    return p2p(op) ? pt : method_op_rooted(op) ? rooted : coll;
}

static const mop_traits *traits_barrier(mop op) { return pick(op, &b_p2p, &b_coll, &b_rooted); }
static const mop_traits *traits_b2b(mop op) { return pick(op, &bb_p2p, &bb_coll, &bb_rooted); }
static const mop_traits *traits_rotate(mop op) { return method_op_rooted(op) ? &rot : NULL; }
static const mop_traits *traits_cycle(mop op) { return op == MOP_BW ? NULL : pick(op, &c_p2p, &c_coll, &c_rooted); }

/* One round trip or window; the responder reads no timer. */
static void p2p_call(mctx *m, int barrier, char *sb, char *rb, double *ts, double *te)
{
    MPI_Comm c = m->comm;
    int n = (int)m->bytes, w = m->op == MOP_BW ? WINDOW : 1;
    MPI_Request req[WINDOW];
    char ack = 0;
    if (!method_is_initiator(m))
        for (int j = 0; j < w; j++) MPI_Irecv(rb, n, MPI_BYTE, 0, TAG, c, &req[j]);
    if (barrier) {
        if (method_is_initiator(m)) MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DONE, c);
        else MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DONE, c, MPI_STATUS_IGNORE);
        MPI_Barrier(c);
    }
    if (method_is_initiator(m)) {
        *ts = mnow(m);
        if (w == 1) {
            MPI_Send(sb, n, MPI_BYTE, 1, TAG, c);
            MPI_Recv(rb, n, MPI_BYTE, 1, TAG, c, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++) MPI_Isend(sb, n, MPI_BYTE, 1, TAG, c, &req[j]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, TAG_ACK, c, MPI_STATUS_IGNORE);
        }
        *te = mnow(m);
    } else {
        MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
        if (w == 1) MPI_Send(sb, n, MPI_BYTE, 0, TAG, c);
        else MPI_Send(&ack, 1, MPI_BYTE, 0, TAG_ACK, c);
    }
}

static void run_with(mctx *m, int barrier, int rotate, int cycling)
{
    int large = m->bytes > LARGE, red = method_op_reduction(m->op);
    long iters = m->op == MOP_BW ? (large ? 20 : 100) : large ? 100 : 1000, skip = iters / 10;
    MPI_Datatype dt = red ? MPI_INT : MPI_BYTE;
    m->datatype = m->op == MOP_BARRIER ? "none" : red ? "MPI_INT" : "MPI_BYTE";
    m->count = m->op == MOP_BARRIER ? 0 : red ? (m->bytes / 4 ? (long)m->bytes / 4 : 1) : (long)m->bytes;
    method_param(m, "skip", (double)skip);
    method_param(m, "iterations", (double)iters);
    cycle cy = {0};
    size_t block = red && m->bytes < 4 ? 4 : m->bytes, all = block * (size_t)m->csize;
    if (cycling && cycle_init(&cy, p2p(m->op) ? 64 << 10 : 4 << 20, all, all)) abort();
    int timed = !p2p(m->op) || method_is_initiator(m);
    long k = timed ? mrows_take(&m->rows, skip, ROW_WARMUP, 1) : 0;
    if (timed) mrows_take(&m->rows, iters, ROW_MEASURED, 1);
    double *ts = m->rows.t_start + k, *te = m->rows.t_end + k, dummy;
    char *sb = method_send(m), *rb = method_recv(m);
    MPI_Barrier(m->comm);
    for (long i = 0; i < skip + iters; i++) {
        int root = rotate ? (int)(i % m->csize) : 0;
        if (cycling) cycle_next(&cy, &sb, &rb);
        if (p2p(m->op)) {
            p2p_call(m, barrier, sb, rb, timed ? &ts[i] : &dummy, timed ? &te[i] : &dummy);
            continue;
        }
        if (barrier) MPI_Barrier(m->comm);
        ts[i] = mnow(m);
        method_call(m, dt, (int)m->count, root, sb, rb);
        te[i] = mnow(m);
    }
    for (long i = 0; timed && method_op_rooted(m->op) && i < skip + iters; i++)
        m->rows.root[k + i] = rotate ? (int)(i % m->csize) : 0;
    if (cycling) cycle_free(&cy);
}

static void run_barrier(mctx *m) { run_with(m, 1, 0, 0); }
static void run_b2b(mctx *m) { run_with(m, 0, 0, 0); }
static void run_rotate(mctx *m) { run_with(m, 0, 1, 0); }
static void run_cycle(mctx *m) { run_with(m, 1, 0, 1); }

const method_def method_ref_barrier = {.name = "ref_barrier", .tool = "mpiscope: a barrier before every call",
                                       .reference = 1, .traits = traits_barrier, .run = run_barrier};
const method_def method_ref_b2b = {.name = "ref_b2b", .tool = "mpiscope: calls back to back", .reference = 1,
                                   .traits = traits_b2b, .run = run_b2b};
const method_def method_ref_rotate = {.name = "ref_rotate", .tool = "mpiscope: calls back to back, the root rotating",
                                      .reference = 1, .traits = traits_rotate, .run = run_rotate};
const method_def method_ref_cycle = {.name = "ref_cycle", .tool = "mpiscope: a barrier before every call, fresh memory every call",
                                     .reference = 1, .traits = traits_cycle, .run = run_cycle};
