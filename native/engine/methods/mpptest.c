/* SPDX-License-Identifier: BSD-3-Clause */
/* Mpptest (MPICH 1.2.7p1 examples/perftest: mpptest.c, pair.c, gopf.c),
 * as it times its tests:
 * - one test is a loop of n_avg (50) calls timed as a whole: the ping-pong
 *   (-roundtrip, the default) on rank 0 after a "ready" message from rank 1;
 *   -dsum (allreduce of doubles), -bcast (the root rotates every call) and
 *   -sync (barrier) on every rank, between untimed barriers, after one
 *   untimed call. Rank 0's loop time is the one used;
 * - the sizes are interleaved: 29 passes, each running every size once;
 *   a test shorter than 100 ticks of MPI_Wtick is rejected and retried with
 *   n_avg doubled (at most 10 times);
 * - then up to 4 smoothing passes rerun the sizes whose best time is over
 *   1.1 times the line through their neighbours'.
 * What it prints is the minimum over the accepted tests of the loop time
 * per call; Python derives it from the rows. */
#include <stdlib.h>

#include "method.h"

enum { N_AVG = 50, MIN_REPS = 30, N_SMOOTH = 5, MAX_TRIALS = 10, TAG = 9 };

static const mop_traits pair = {"loop", "back_to_back", "none", "warm", "first_two"};
static const mop_traits gop = {"loop", "back_to_back", "none", "warm", "all"};
static const mop_traits bcast = {"loop", "back_to_back", "rotating", "warm", "all"};

static const mop_traits *traits(mop op)
{
    switch (op) {
    case MOP_PINGPONG: case MOP_BW: return &pair;
    case MOP_BARRIER: case MOP_ALLREDUCE: return &gop;
    case MOP_BCAST: return &bcast;
    default: return NULL; /* mpptest has no other collective (its -scatter runs MPI_Bcast) */
    }
}

typedef struct test {
    size_t bytes;
    long n_avg;
    double best; /* rank 0's best time per call so far */
    mrows rows;
} test;

/* Rank 0 reads its timer around the loop; rank 1 reads none. */
static void pair_loop(mctx *m, const test *x, double *t0, double *t1)
{
    char *sb = method_send(m), *rb = method_recv(m);
    int len = (int)x->bytes;
    if (method_is_initiator(m)) {
        MPI_Recv(rb, len, MPI_BYTE, 1, 0, m->comm, MPI_STATUS_IGNORE);
        *t0 = mnow(m);
        for (long i = 0; i < x->n_avg; i++) {
            MPI_Send(sb, len, MPI_BYTE, 1, TAG, m->comm);
            MPI_Recv(rb, len, MPI_BYTE, 1, TAG, m->comm, MPI_STATUS_IGNORE);
        }
        *t1 = mnow(m);
    } else {
        MPI_Send(sb, len, MPI_BYTE, 0, 0, m->comm);
        for (long i = 0; i < x->n_avg; i++) {
            MPI_Recv(rb, len, MPI_BYTE, 0, TAG, m->comm, MPI_STATUS_IGNORE);
            MPI_Send(sb, len, MPI_BYTE, 0, TAG, m->comm);
        }
    }
}

/* -dsum, -bcast, -sync: an untimed call (not for -sync), a barrier, the
 * loop, a barrier. -bcast passes one buffer on every rank. */
static void gop_loop(mctx *m, const test *x, double *t0, double *t1)
{
    char *sb = method_send(m), *rb = m->op == MOP_BCAST ? sb : method_recv(m);
    int dsum = m->op == MOP_ALLREDUCE, len = (int)m->count;
    MPI_Datatype dt = dsum ? MPI_DOUBLE : MPI_BYTE;
    if (m->op != MOP_BARRIER) method_call(m, dt, len, 0, sb, rb);
    MPI_Barrier(m->comm);
    *t0 = mnow(m);
    for (long i = 0; i < x->n_avg; i++) method_call(m, dt, len, (int)(i % m->csize), sb, rb);
    *t1 = mnow(m);
    MPI_Barrier(m->comm);
}

/* What one size hands to MPI: -dsum's sizes count doubles. */
static void set_size(mctx *m, size_t bytes)
{
    int dsum = m->op == MOP_ALLREDUCE;
    m->bytes = bytes;
    m->datatype = m->op == MOP_BARRIER ? "none" : dsum ? "MPI_DOUBLE" : "MPI_BYTE";
    m->count = m->op == MOP_BARRIER ? 0 : dsum ? (long)(bytes / 8 ? bytes / 8 : 1) : (long)bytes;
}

/* One test; 1 when accepted (mpptest's RunTest). Every rank decides by
 * rank 0's time. */
static int run_test(mctx *m, test *x, int pass, double wtick)
{
    set_size(m, x->bytes);
    long k = mrows_take(&x->rows, 1, ROW_MEASURED, (int)x->n_avg);
    double *t0 = x->rows.t_start + k, *t1 = x->rows.t_end + k;
    x->rows.batch[k] = pass;
    if (m->op == MOP_BCAST) x->rows.root[k] = 0;
    if (m->op == MOP_PINGPONG || m->op == MOP_BW) pair_loop(m, x, t0, t1);
    else gop_loop(m, x, t0, t1);
    double t = *t1 - *t0;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, m->comm);
    if (!(t > 100 * wtick)) {
        x->rows.flags[k] = FLAG_REJECTED;
        return 0;
    }
    if (t / (double)x->n_avg < x->best) x->best = t / (double)x->n_avg;
    return 1;
}

/* mpptest's LinearTimeEst: the line through the neighbours' best times. */
static double linear_estimate(const test *x, int j, int n)
{
    double tp = j > 0 ? x[j - 1].best : x[j].best, tn = j + 1 < n ? x[j + 1].best : x[j].best;
    double dp = j > 0 ? (double)x[j].bytes - (double)x[j - 1].bytes : 4.0;
    double dn = j + 1 < n ? (double)x[j + 1].bytes - (double)x[j].bytes : 4.0;
    return tp + dp / (dn + dp) * (tn - tp);
}

static int run_sizes(mctx *m, const long *sizes, int nsizes)
{
    int rc = 0, pass = 0;
    test *x = calloc((size_t)nsizes, sizeof *x);
    double wtick = MPI_Wtick();
    if (m->comm != MPI_COMM_NULL) MPI_Allreduce(MPI_IN_PLACE, &wtick, 1, MPI_DOUBLE, MPI_MAX, m->comm);
    for (int j = 0; j < nsizes; j++) x[j] = (test){.bytes = (size_t)sizes[j], .n_avg = N_AVG, .best = INFINITY};
    for (int k = 1; m->comm != MPI_COMM_NULL && k < MIN_REPS; k++, pass++)
        for (int j = 0; j < nsizes; j++)
            for (int trial = 0; trial < MAX_TRIALS && !run_test(m, &x[j], pass, wtick); trial++) x[j].n_avg *= 2;
    for (int k = 1; m->comm != MPI_COMM_NULL && k < N_SMOOTH; k++, pass++) {
        int smoothed = 0, redo = 0;
        for (int j = 0; j < nsizes; j++) {
            if (m->crank == 0) redo = x[j].best > 1.1 * linear_estimate(x, j, nsizes);
            MPI_Bcast(&redo, 1, MPI_INT, 0, m->comm);
            if (redo) smoothed += run_test(m, &x[j], pass, wtick);
        }
        MPI_Bcast(&smoothed, 1, MPI_INT, 0, m->comm);
        if (!smoothed) break;
    }
    for (int j = 0; j < nsizes; j++) {
        mrows mine = m->rows;
        m->rows = x[j].rows;
        set_size(m, x[j].bytes);
        method_param(m, "n_avg", (double)x[j].n_avg);
        method_param(m, "passes", pass);
        method_param(m, "wtick_s", wtick);
        rc |= method_record(m);
        x[j].rows = m->rows;
        m->rows = mine;
        mrows_free(&x[j].rows);
    }
    free(x);
    return rc;
}

const method_def method_mpptest = {.name = "mpptest", .tool = "Mpptest (MPICH 1.2.7p1)", .traits = traits,
                                   .run_sizes = run_sizes};
