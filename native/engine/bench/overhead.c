/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU overlap test (LogGP o_s and o_r). The flood at queue depth 1 — rank 0
 * sends messages one after the other to rank 1, then waits for an
 * acknowledgement — with computation (a busy loop of arithmetic that runs
 * until the timer says its time is up, its actual length per call
 * calibrated: params compute_s) inserted on
 * one side between starting and completing each non-blocking operation:
 * between MPI_Isend and MPI_Wait for the send overhead ("os+<f>g"
 * variants, rank 0 measured), between MPI_Irecv and MPI_Wait for the
 * receive overhead ("or+<f>g", rank 1 measured).
 *
 * The computation per message is f times the time per message without it,
 * measured once per series before the warm-up (params g0_s), so the steps
 * reach past the knee at every size. (A loop of a fixed number of
 * iterations would be off by the CPU clock's changes, several percent
 * under a hypervisor; a timed loop is not.) While the computation is short the
 * time per message stays at the gap; beyond the knee it is o + computation,
 * so o = time per message − computation (mpiscope loggp does this).
 *
 * Test-only: MPISCOPE_TEST_FAKE_OVERHEAD_US=x replaces the measured side's
 * operation by a spin of x µs (no message is sent): o must come out as x. */
#include <math.h>
#include <stdlib.h>

#include "../options.h"
#include "../testhooks.h"
#include "../rawfmt.h"
#include "loggp.h"

enum { TAG = 33, TAG_ACK = 34, PROBE_TRIALS = 5, CALIBRATION_CALLS = 101 };

typedef struct overhead_state {
    int side;          /* 0: send overhead (rank 0 computes), 1: receive overhead (rank 1) */
    double step;       /* computation in multiples of g0 */
    long msgs;
    double compute_s;  /* nominal computation per message (loggp_compute's argument) */
    double fake_s;     /* test-only operation length, 0 normally */
    volatile uint64_t sink;
} overhead_state;

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static int nvariants(const options *o) { return 2 * o->noverhead_steps; }
static const char *variant_name(const options *o, int i) { return o->overhead_names[i]; }
/* The receive-overhead variants ("or+…") are measured on rank 1. */
static role timed_role(const options *o, int i) { return i < o->noverhead_steps ? ROLE_INITIATOR : ROLE_RESPONDER; }

/* The acknowledgement that ends a flood: the sender's clock stops when it
 * arrives, the receiver's before it is sent. */
static void acknowledge(series *s, int sender, double *t_end)
{
    char ack = 0;
    if (sender) {
        MPI_Recv(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world, MPI_STATUS_IGNORE);
        *t_end = timer_now(s->t);
    } else {
        *t_end = timer_now(s->t);
        MPI_Send(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world);
    }
}

/* Test hook MPISCOPE_TEST_FAKE_OVERHEAD_US: the operation under test is a
 * fixed spin; the other side idles. */
static void fake_once(series *s, overhead_state *st, double compute_s, double *t_start, double *t_end)
{
    int sender = s->role == ROLE_INITIATOR, measured = sender == (st->side == 0);
    uint64_t x = st->sink;
    *t_start = timer_now(s->t);
    for (long i = 0; measured && i < st->msgs; i++) {
        loggp_spin_for(s->t, st->fake_s);
        x = loggp_compute(s->t, compute_s, x);
    }
    acknowledge(s, sender, t_end);
    st->sink = x;
}

/* Rank 0 sends `msgs` messages and waits for the acknowledgement; rank 1
 * receives them and acknowledges. The measured side inserts `compute_s` of
 * computation between starting and completing each operation. Returns the
 * measured side's time (or 0 on the other side) through t_start/t_end. */
static void flood_once(series *s, overhead_state *st, double compute_s, long rep, double *t_start, double *t_end)
{
    if (st->fake_s > 0) { /* decided before the clock starts */
        fake_once(s, st, compute_s, t_start, t_end);
        return;
    }
    int sender = s->role == ROLE_INITIATOR, measured = sender == (st->side == 0);
    int n = (int)s->bytes;
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    uint64_t x = st->sink;
    MPI_Request r;
    *t_start = timer_now(s->t);
    if (sender) {
        for (long i = 0; i < st->msgs; i++) {
            MPI_Isend(sb, n, MPI_BYTE, s->peer, TAG, s->world, &r);
            if (measured) x = loggp_compute(s->t, compute_s, x);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else {
        for (long i = 0; i < st->msgs; i++) {
            MPI_Irecv(rb, n, MPI_BYTE, s->peer, TAG, s->world, &r);
            if (measured) x = loggp_compute(s->t, compute_s, x);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    acknowledge(s, sender, t_end);
    st->sink = x;
}

static void describe(series *s)
{
    const options *o = s->o;
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
    overhead_state *st = calloc(1, sizeof *st);
    s->state = st;
    st->side = s->variant / o->noverhead_steps;
    st->step = o->overhead_steps[s->variant % o->noverhead_steps];
    st->msgs = loggp_msgs(o, s->bytes, 1);
    st->fake_s = s->hooks->fake_overhead_s;
    s->window_msgs = (int)st->msgs;
    if (s->role == ROLE_IDLE) return;

    /* The measured side's time per message without computation (the best of
     * a few floods) decides the computation; its actual length is measured. */
    int measured = (s->role == ROLE_INITIATOR) == (st->side == 0);
    double mine[2] = {0, 0}, got[2];
    double best = INFINITY, a, b;
    for (int i = 0; i < PROBE_TRIALS; i++) {
        MPI_Barrier(s->pc);
        flood_once(s, st, 0.0, i, &a, &b);
        if (b - a < best) best = b - a;
    }
    if (measured) {
        mine[0] = best / (double)st->msgs;
        mine[1] = loggp_compute_calibrate(s->t, st->step * mine[0], CALIBRATION_CALLS);
    }
    MPI_Allreduce(mine, got, 2, MPI_DOUBLE, MPI_MAX, s->pc);
    double g0 = got[0], actual = got[1];
    st->compute_s = st->step * g0;

    rawfmt_params_overhead(s, &(overhead_params){.receive = st->side, .step = st->step, .compute_s = actual,
                                                 .compute_nominal_s = st->compute_s, .g0_s = g0,
                                                 .msgs = st->msgs, .fake_overhead_s = st->fake_s});
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    overhead_state *st = s->state;
    flood_once(s, st, st->compute_s, rep, t_start, t_end);
}

const bench_def bench_overhead = {.name = "overhead", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                  .rule = RULE_PER_MESSAGE, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                  .variant_option = "--overhead-steps",
                                  .footprint = footprint, .describe = describe, .run_rep = run_rep,
                                  .nvariants = nvariants, .variant_name = variant_name,
                                  .timed_role = timed_role};
