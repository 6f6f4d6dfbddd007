/* SPDX-License-Identifier: BSD-3-Clause */
/* SKaMPI 5 (its measurement.c, synchronize.c, mem.c and the shipped .ski
 * files), as it times a measurement:
 * - collectives start in time slots: repetition c of a batch starts when
 *   the global clock reaches start_batch + (c + 1) * interval (a busy wait);
 *   it is invalid when a rank arrived after its slot, or took longer than
 *   the interval. The first batch (4 repetitions, interval 0) only sizes
 *   the interval; later batches have min_repetitions (8); the interval grows
 *   when more than a quarter of a batch is invalid;
 * - the ping-pong (Pingpong_Send_Recv, one iteration) runs back to back in
 *   batches of 8, between rank 0 and the last rank;
 * - every rank times every repetition; after each batch rank 0 gathers the
 *   times and stops when 32 valid repetitions (16 for the ping-pong) are
 *   done, or 8 and the standard error of their slowest-rank times is within
 *   3% of their mean;
 * - every repetition takes fresh send and receive memory from one buffer
 *   (4 MiB, 64 KiB for the ping-pong; larger when a size needs it).
 * The clock is mpiscope's global clock instead of SKaMPI's per-size offsets.
 * Data: MPI_INT, size / 4 of them (at least one), reductions summed. */
#include <stdlib.h>

#include "cycle.h"
#include "method.h"

enum { FIRST_MAX_COUNTER = 4, MIN_REPS = 8, MAX_REPS_COLL = 32, MAX_REPS_P2P = 16, TAG = 1 };
/* SKaMPI repeats a batch whose repetitions were all invalid for as long as
 * it takes (the interval doubles each time); mpiscope gives up after this
 * many batches, and the block says how many ran. */
enum { MAX_BATCHES = 100 };
static const double MAX_REL_ERROR = 0.03;
/* SKaMPI's codes of an invalid repetition (a too long one was late too, or not). */
enum { VALID = 0, STARTED_LATE = 1, TOOK_TOO_LONG = 2 };

static const mop_traits slot = {"call", "slot", "none", "cycling", "all"};
static const mop_traits slot_rooted = {"call", "slot", "fixed", "cycling", "all"};
static const mop_traits pingpong = {"call", "back_to_back", "none", "cycling", "root_and_last"};

static const mop_traits *traits(mop op)
{
    switch (op) {
    case MOP_BW: return NULL; /* SKaMPI reports no bandwidth */
    case MOP_RING: case MOP_EXCHANGE: case MOP_REDUCE_SCATTER: return NULL; /* not reproduced */
    case MOP_PINGPONG: return &pingpong;
    case MOP_BCAST: case MOP_REDUCE: case MOP_GATHER: case MOP_SCATTER: return &slot_rooted;
    default: return &slot;
    }
}

/* Rank 0's running state: valid slowest-rank times and their sums. */
typedef struct tally {
    long n;
    double sum, sumsq;
} tally;

static int stop_now(const tally *t, int max_reps)
{
    if (t->n >= max_reps) return 1;
    if (t->n < MIN_REPS) return 0;
    double mean = t->sum / (double)t->n;
    double se = sqrt(fabs(t->sumsq - t->sum * t->sum / (double)t->n) / ((double)t->n * (double)(t->n - 1)));
    return se <= MAX_REL_ERROR * mean;
}

/* Bytes each rank sends and receives per repetition. */
static void footprint(const mctx *m, size_t *send, size_t *recv)
{
    size_t b = (size_t)m->count * 4, p = (size_t)m->csize;
    *send = *recv = b;
    if (m->op == MOP_ALLGATHER || m->op == MOP_GATHER) *recv = b * p;
    if (m->op == MOP_ALLTOALL) *send = *recv = b * p;
    if (m->op == MOP_SCATTER) *send = b * p;
}

/* Gathers a batch's (duration, code) pairs on rank 0 and adds the valid
 * repetitions' slowest-rank times to `t`; returns how many were flawed and
 * the longest run of late starts on one rank. */
static int gather_batch(mctx *m, const double *d, const int *code, int nb, tally *t, int *longest)
{
    int p = m->csize;
    double *mine = malloc(2 * sizeof(double) * (size_t)nb), *all = NULL;
    for (int c = 0; c < nb; c++) mine[2 * c] = d[c], mine[2 * c + 1] = code[c];
    if (m->crank == 0) all = malloc(2 * sizeof(double) * (size_t)nb * (size_t)p);
    MPI_Gather(mine, 2 * nb, MPI_DOUBLE, all, 2 * nb, MPI_DOUBLE, 0, m->comm);
    int flawed = 0;
    *longest = 0;
    for (int r = 0; m->crank == 0 && r < p; r++) {
        int run = 0;
        for (int c = 0; c < nb; c++) {
            int k = (int)all[2 * ((size_t)r * nb + c) + 1];
            if (k == VALID) *longest = run > *longest ? run : *longest, run = 0;
            else if (k == STARTED_LATE) run++;
        }
        if (run > *longest) *longest = run;
    }
    for (int c = 0; m->crank == 0 && c < nb; c++) {
        double slowest = 0;
        int bad = 0;
        for (int r = 0; r < p; r++) {
            const double *x = all + 2 * ((size_t)r * nb + c);
            bad |= x[1] != VALID;
            slowest = fmax(slowest, x[0]);
        }
        if (bad) {
            flawed++;
            continue;
        }
        t->n++;
        t->sum += slowest;
        t->sumsq += slowest * slowest;
    }
    free(mine);
    free(all);
    return flawed;
}

/* One batch of time-slot starts; rows get the local slot, start and end. */
static void slot_batch(mctx *m, cycle *cy, int nb, int batch, int phase, double start_batch, double interval,
                       double *d, int *code)
{
    const clock_model *cm = &m->e->sync.model;
    long k = mrows_take(&m->rows, nb, phase, 1);
    mrows *r = &m->rows;
    MPI_Datatype dt = MPI_INT;
    for (int c = 0; c < nb; c++) {
        char *sb, *rb;
        cycle_next(cy, &sb, &rb);
        double slot = sync_to_local(cm, start_batch + (c + 1) * interval), a = mnow(m);
        int late = a > slot;
        while (!late && (a = mnow(m)) < slot) {}
        method_call(m, dt, (int)m->count, 0, sb, rb);
        double z = mnow(m);
        code[c] = z - a > interval ? TOOK_TOO_LONG : late ? STARTED_LATE : VALID;
        d[c] = z - a;
        r->t_sched[k + c] = slot, r->t_start[k + c] = a, r->t_end[k + c] = z;
        r->flags[k + c] = (uint8_t)((late ? FLAG_LATE : 0) | (z - a > interval ? FLAG_TOO_LONG : 0));
        r->batch[k + c] = batch;
        if (method_op_rooted(m->op)) r->root[k + c] = 0;
    }
}

static void run_slots(mctx *m, cycle *cy)
{
    const clock_model *cm = &m->e->sync.model;
    int hard_limit = (int)fmax(FIRST_MAX_COUNTER, MAX_REPS_COLL * 1.5 + 0.5);
    double interval = 0, d[MIN_REPS], ctl[3];
    int code[MIN_REPS], max_counter = FIRST_MAX_COUNTER, first = 1, batch = 0, stop = 0, longest;
    tally t = {0};
    while (!stop && batch < MAX_BATCHES) {
        double start_batch = sync_to_global(cm, mnow(m));
        MPI_Bcast(&start_batch, 1, MPI_DOUBLE, 0, m->comm);
        if (max_counter > hard_limit - (int)t.n) max_counter = hard_limit - (int)t.n;
        int nb = max_counter;
        slot_batch(m, cy, nb, batch++, first ? ROW_CALIBRATION : ROW_MEASURED, start_batch, interval, d, code);
        double stop_batch = sync_to_global(cm, m->rows.t_end[m->rows.n - 1]);
        MPI_Allreduce(MPI_IN_PLACE, &stop_batch, 1, MPI_DOUBLE, MPI_MAX, m->comm);
        int flawed = gather_batch(m, d, code, nb, &t, &longest);
        if (m->crank == 0) {
            if (flawed > nb / 4) interval = fmax(2 * interval, (stop_batch - start_batch) / (nb + 1) * 1.5);
            if (first) max_counter = MIN_REPS;
            else if (longest > max_counter / 2) max_counter = max_counter / 2 > FIRST_MAX_COUNTER ? max_counter / 2 : FIRST_MAX_COUNTER;
            stop = stop_now(&t, MAX_REPS_COLL);
            ctl[0] = stop, ctl[1] = max_counter, ctl[2] = interval;
        }
        MPI_Bcast(ctl, 3, MPI_DOUBLE, 0, m->comm);
        stop = (int)ctl[0], max_counter = (int)ctl[1], interval = ctl[2];
        first = 0;
    }
    method_param(m, "interval_s", interval);
    method_param(m, "batches", batch);
}

/* Rank 0 and its partner (the last rank), one round trip a repetition, not
 * halved; rank 0 sends one more, untimed, message after each. */
static void run_pingpong(mctx *m, cycle *cy)
{
    MPI_Comm c = m->comm;
    int n = (int)m->count, peer = m->peer, batch = 0, stop = 0, longest, code[MIN_REPS] = {0};
    double d[MIN_REPS];
    tally t = {0};
    while (!stop) {
        int nb = MIN_REPS;
        long k = mrows_take(&m->rows, nb, ROW_MEASURED, 1);
        for (int i = 0; i < nb; i++) {
            char *sb, *rb;
            double a, z;
            cycle_next(cy, &sb, &rb);
            if (method_is_initiator(m)) {
                a = mnow(m);
                MPI_Send(sb, n, MPI_INT, peer, TAG, c);
                MPI_Recv(rb, n, MPI_INT, peer, TAG, c, MPI_STATUS_IGNORE);
                z = mnow(m);
                MPI_Send(sb, n, MPI_INT, peer, TAG, c);
            } else {
                MPI_Recv(rb, n, MPI_INT, peer, TAG, c, MPI_STATUS_IGNORE);
                a = mnow(m);
                MPI_Send(sb, n, MPI_INT, peer, TAG, c);
                MPI_Recv(rb, n, MPI_INT, peer, TAG, c, MPI_STATUS_IGNORE);
                z = mnow(m);
            }
            m->rows.t_start[k + i] = a, m->rows.t_end[k + i] = z, m->rows.batch[k + i] = batch;
            d[i] = z - a;
        }
        batch++;
        gather_batch(m, d, code, nb, &t, &longest);
        if (m->crank == 0) stop = stop_now(&t, MAX_REPS_P2P);
        MPI_Bcast(&stop, 1, MPI_INT, 0, c);
    }
}

static void run(mctx *m)
{
    m->datatype = m->op == MOP_BARRIER ? "none" : "MPI_INT";
    m->count = m->op == MOP_BARRIER ? 0 : m->bytes / 4 ? (long)m->bytes / 4 : 1;
    int p2p = m->op == MOP_PINGPONG;
    size_t send, recv;
    footprint(m, &send, &recv);
    cycle cy;
    if (cycle_init(&cy, p2p ? 64 << 10 : 4 << 20, send, recv)) abort();
    method_param(m, "buffer_bytes", (double)cy.size);
    method_param(m, "min_repetitions", MIN_REPS);
    method_param(m, "max_repetitions", p2p ? MAX_REPS_P2P : MAX_REPS_COLL);
    method_param(m, "max_relative_error", MAX_REL_ERROR);
    if (p2p) run_pingpong(m, &cy);
    else run_slots(m, &cy);
    cycle_free(&cy);
}

const method_def method_skampi = {.name = "skampi", .tool = "SKaMPI 5", .traits = traits, .run = run};
