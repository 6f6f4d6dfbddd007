/* SPDX-License-Identifier: BSD-3-Clause */
/* One benchmark x size: describe, warm-up, then batches of synchronized
 * repetitions until the stopping rule holds (decided on rank 0), then the
 * records are written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "procsync.h"
#include "rawfmt.h"
#include "../clock/sorted.h"
#include "stoprule.h"

/* Decision broadcast by rank 0 after each batch (doubles: one MPI_Bcast). */
typedef struct decision {
    double next_batch, window_s, stop, invalid, barrier;
} decision;
#define DECISION_DOUBLES 5

/* More than a tenth of a batch's window starts late: the window may be too
 * short for the operation, and doubles, once. More than a quarter late, or
 * still a tenth after the doubling: a rank is losing its CPU (a busy node),
 * which no window fixes (and the clock it needs is then off by microseconds
 * too), so the rest of the series starts with barriers. */
static const int MAX_DOUBLINGS = 1;

/* --sync auto: a barrier start adds at most the barrier's exit skew to a
 * repetition (the ranks that leave it early wait for the late one inside
 * the operation), so repetitions this many times longer than that skew
 * start with barriers: at most 0.5% off, and none of a window's idle time
 * (twice the median) or its late starts. Shorter ones keep window starts.
 * A skew under a microsecond is taken as one: the clock model that measures
 * it is not trusted closer between hosts. */
static const double AUTO_SKEW_FACTOR = 200, AUTO_SKEW_FLOOR_S = 1e-6;

/* One series on this rank, from its description to its record. */
typedef struct run {
    engine *e;
    const bench_def *def;
    series s;
    int *pairs, npairs; /* (initiator, responder) world ranks; none for collectives */
    int active;         /* this rank takes part */
    procsync ps;
    stop_state st;      /* rank 0: the samples so far */
    double *mine, *all; /* this batch's records, on the global clock (all: rank 0) */
    int *counts, *displs;
    double started;     /* local time the recorded repetitions began */
    long done;
    long fallback_rep;  /* first repetition started by a barrier after window starts failed; -1: none */
    int doublings;      /* rank 0: of the window, in this series */
    long late_bad, late_reps; /* rank 0: invalid samples and repetitions not yet judged for late starts */
    int barrier_chosen; /* --sync auto chose barrier starts for the whole series */
    double skew_s;      /* the warm-up barriers' median exit skew */
    double warm_s;      /* the warm-up's median repetition (its slowest rank) */
    double clock_err_s; /* the clock model's largest fit residual over the ranks */
    decision d;
} run;

/* (initiator, responder) pairs of the definition's pairing; 0 when every rank takes part. */
static int pairs_of(const engine *e, const bench_def *def, int **pairs)
{
    if (def->pairing == PAIRING_ALL) return *pairs = NULL, 0;
    if (def->pairing == PAIRING_LISTED) {
        *pairs = malloc(2 * sizeof(int) * (size_t)e->o->npairs);
        memcpy(*pairs, e->o->pairs, 2 * sizeof(int) * (size_t)e->o->npairs);
        return e->o->npairs;
    }
    int n = def->pairing == PAIRING_HALVES ? e->size / 2 : 1;
    *pairs = malloc(2 * sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++) {
        (*pairs)[2 * k] = k;
        (*pairs)[2 * k + 1] = k + (n > 1 ? e->size / 2 : 1);
    }
    return n;
}

static void assign_role(series *s, const bench_def *def, const int *pairs, int npairs)
{
    s->role = def->pairing == PAIRING_ALL ? ROLE_MEMBER : ROLE_IDLE;
    s->peer = -1;
    for (int k = 0; k < npairs; k++) {
        if (pairs[2 * k] == s->rank) s->role = ROLE_INITIATOR, s->peer = pairs[2 * k + 1];
        if (pairs[2 * k + 1] == s->rank) s->role = ROLE_RESPONDER, s->peer = pairs[2 * k];
    }
}

/* Who takes part, in which role, and what the benchmark hands to MPI. */
static void describe(run *r, int variant, size_t bytes)
{
    engine *e = r->e;
    const options *o = e->o;
    const bench_def *def = r->def;
    r->npairs = pairs_of(e, def, &r->pairs);
    r->s = (series){.world = e->world, .rank = e->rank, .size = e->size, .bytes = bytes, .buf = &e->buf,
                    .t = &e->t, .check = o->check, .variant = variant, .o = o, .hooks = &e->hooks,
                    .algo = def->variant_name ? def->variant_name(o, variant) : "mpi",
                    .root_rotate = o->root_rotate, .window_msgs = o->window_msgs,
                    .corrupt = e->hooks.corrupt, .oversubscribed = e->oversubscribed};
    assign_role(&r->s, def, r->pairs, r->npairs);
    r->active = r->s.role != ROLE_IDLE;
    MPI_Comm_split(e->world, r->active ? 0 : MPI_UNDEFINED, e->rank, &r->s.pc);
    def->describe(&r->s);
}

/* A series some rank cannot run (series.skip): every rank records it empty,
 * with the reason of the lowest such rank, so the run says why it is missing. */
static int any_skip(engine *e, series *s)
{
    int me = s->skip ? e->rank : e->size, first;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, e->world);
    if (first == e->size) return 0;
    char why[512] = {0};
    if (e->rank == first) snprintf(why, sizeof why, "rank %d: %s", e->rank, s->skip);
    MPI_Bcast(why, sizeof why, MPI_CHAR, first, e->world);
    rawfmt_skip_params(s, why);
    s->role = ROLE_IDLE; /* no rows */
    return 1;
}

static double median_of(double *v, long n)
{
    sort_doubles(v, (size_t)n);
    return v[n / 2];
}

/* Warm-up repetitions (not recorded) also size the start window: twice the
 * median repetition (its slowest rank), so that repetitions preempted on a
 * busy node do not make every window milliseconds long. Too short a window
 * doubles. Each starts with a barrier whose exit skew (the spread of the
 * ranks' exits on the global clock) --sync auto chooses by. */
static double warm_up(run *r)
{
    engine *e = r->e;
    series *s = &r->s;
    long n = e->o->warmup;
    /* per repetition: its time, the latest exit, minus the earliest exit; then
     * the clock's residual (one MPI_MAX) */
    double *w = malloc((3 * (size_t)n + 1) * sizeof *w), a, b;
    for (long i = 0; i < n; i++) w[i] = 0, w[n + i] = w[2 * n + i] = -INFINITY;
    w[3 * n] = e->sync.model.residual_s;
    s->barrier_start = 1;
    for (long i = 0; r->active && i < n; i++) {
        if (r->def->pre_rep) r->def->pre_rep(s, i);
        procsync_barrier(s->pc, e->o->own_barrier);
        double left = sync_to_global(&e->sync.model, timer_now(&e->t));
        r->def->run_rep(s, i, &a, &b);
        w[i] = b - a, w[n + i] = left, w[2 * n + i] = -left;
    }
    MPI_Allreduce(MPI_IN_PLACE, w, (int)(3 * n + 1), MPI_DOUBLE, MPI_MAX, e->world);
    for (long i = 0; i < n; i++) w[n + i] += w[2 * n + i];
    r->clock_err_s = w[3 * n];
    r->warm_s = n ? median_of(w, n) : 0;
    r->skew_s = n ? median_of(w + n, n) : NAN;
    free(w);
    s->measuring = 1;
    if (e->o->sync_auto && n && r->warm_s >= AUTO_SKEW_FACTOR * fmax(r->skew_s, AUTO_SKEW_FLOOR_S))
        r->barrier_chosen = 1, r->ps.window = 0;
    s->barrier_start = !r->ps.window;
    /* Half the warm-up's round trip: one message (procsync_lead). */
    r->ps.lead_s = procsync_lead(r->def->pat, s->role, 0.5 * r->warm_s, r->clock_err_s);
    return 2 * r->warm_s + 5e-6;
}

/* Repetitions done .. done + batch - 1, each started by procsync. */
static void run_batch(run *r, long batch, double window_s)
{
    engine *e = r->e;
    if (r->ps.window) procsync_batch(&r->ps, window_s);
    for (long i = 0; r->active && i < batch; i++) {
        long k = r->done + i;
        r->s.barrier_start = procsync_barrier_turn(&r->ps, k);
        if (r->def->pre_rep) r->def->pre_rep(&r->s, k);
        e->valid[k] = procsync_start(&r->ps, i, k, &e->t_sched[k]);
        r->def->run_rep(&r->s, k, &e->t_start[k], &e->t_end[k]);
    }
}

/* Rank 0 needs every rank's records, on the global clock, to apply the rule. */
static void gather_batch(run *r, long batch)
{
    engine *e = r->e;
    const clock_model *m = &e->sync.model;
    r->mine = realloc(r->mine, 4 * sizeof(double) * (size_t)batch);
    for (long i = 0; i < batch; i++) {
        long k = r->done + i;
        r->mine[4 * i] = r->active ? sync_to_global(m, e->t_start[k]) : NAN;
        r->mine[4 * i + 1] = r->active ? sync_to_global(m, e->t_end[k]) : NAN;
        r->mine[4 * i + 2] = r->active ? sync_to_global(m, e->t_sched[k]) : NAN;
        r->mine[4 * i + 3] = r->active ? e->valid[k] : 0;
    }
    if (e->rank == 0) {
        r->all = realloc(r->all, 4 * sizeof(double) * (size_t)batch * (size_t)e->size);
        for (int k = 0; k < e->size; k++) r->counts[k] = (int)(4 * batch), r->displs[k] = (int)(4 * batch * k);
    }
    MPI_Gatherv(r->mine, (int)(4 * batch), MPI_DOUBLE, r->all, r->counts, r->displs, MPI_DOUBLE, 0, e->world);
}

static decision decide(run *r, long done, long batch, long bad, double elapsed, double window_s,
                       int samples_per_rep)
{
    const options *o = r->e->o;
    stop_state *st = &r->st;
    decision d = {0, window_s, STOP_NONE, (double)st->invalid, !r->ps.window};
    double hw = stop_ci_halfwidth(st);
    int cross = stop_cross_rank(r->def->pat, r->ps.window, r->fallback_rep);
    double target = stop_target(o->ci_width, cross, r->clock_err_s, st->median);
    double per_rep = elapsed / done;
    if (done >= o->reps_min && o->ci_width > 0 && hw <= target) d.stop = STOP_CI; /* 0: no target */
    else if (done >= o->reps_max) d.stop = STOP_REPS_MAX;
    else if (elapsed >= o->time_budget_s) d.stop = STOP_BUDGET;
    else if (stop_out_of_reach(target, o->time_budget_s, done >= o->reps_min, done, hw, elapsed))
        d.stop = STOP_OUT_OF_REACH;
    if (d.stop != STOP_NONE) return d;
    /* The next check after a 32nd of what was done (stop_next_batch),
     * within reps_max and the remaining budget. */
    double next = stop_next_batch(o->ci_width > 0 ? target : 0, done, hw, per_rep);
    if (per_rep > 0 && next > (o->time_budget_s - elapsed) / per_rep + 1)
        next = floor((o->time_budget_s - elapsed) / per_rep) + 1;
    if (next > o->reps_max - done) next = (double)(o->reps_max - done);
    d.next_batch = next;
    /* Late starts are judged over at least reps_min repetitions (the first
     * batch), however short the batches between checks. */
    r->late_bad += bad, r->late_reps += batch;
    if (!r->ps.window || r->late_reps < o->reps_min) return d;
    long judged = r->late_reps * samples_per_rep, late = r->late_bad;
    r->late_bad = r->late_reps = 0;
    if (late * 10 > judged) {
        if (late * 4 > judged || r->doublings++ == MAX_DOUBLINGS) d.barrier = 1;
        else d.window_s = 2 * window_s;
    }
    return d;
}

/* Rank 0 applies the stopping rule to the batch; every rank learns the outcome. */
static void decide_batch(run *r, long batch, double window_s)
{
    engine *e = r->e;
    gather_batch(r, batch);
    if (e->rank == 0) {
        long bad = stop_add_batch(&r->st, r->def->pat, r->all, e->size, batch, r->pairs, r->npairs);
        int samples_per_rep = r->def->pat == PAT_PAIRS ? 2 * r->npairs : 1;
        r->d = decide(r, r->done + batch, batch, bad, timer_now(&e->t) - r->started, window_s, samples_per_rep);
    }
    MPI_Bcast(&r->d, DECISION_DOUBLES, MPI_DOUBLE, 0, e->world);
}

/* The series' block (and the benchmark's own blocks), then rank 0's progress line. */
static int record(run *r)
{
    engine *e = r->e;
    series_outcome out = {.reps = r->done, .invalid = (long)r->d.invalid, .stop = (stop_reason)r->d.stop,
                          .window_s = r->d.window_s, .fallback_rep = r->fallback_rep,
                          .late_arrived = r->ps.late_arrived, .late_left = r->ps.late_left,
                          .barrier_chosen = r->barrier_chosen, .barrier_skew_s = r->skew_s,
                          .warmup_median_s = r->warm_s};
    int rc = rawfmt_series(e, r->def, &r->s, &out);
    if (rc) perror("mpiscope-engine: writing the raw file");
    if (!rc && out.stop != STOP_SKIPPED && r->def->extra_blocks && r->active)
        rc = r->def->extra_blocks(&r->s, &e->raw, r->done);
    if (e->rank == 0) rawfmt_progress(r->def, &r->s, &out);
    return rc;
}

static void release(run *r)
{
    free(r->mine);
    free(r->all);
    free(r->counts);
    free(r->displs);
    free(r->pairs);
    free(r->s.reqs);
    if (r->def->finish) r->def->finish(&r->s);
    free(r->s.state);
    stop_free(&r->st);
    if (r->s.pc != MPI_COMM_NULL) MPI_Comm_free(&r->s.pc);
}

/* Working memory and the start synchronization of the recorded repetitions. */
static void prepare(run *r)
{
    engine *e = r->e;
    r->s.reqs = malloc(2 * sizeof(MPI_Request) * (size_t)e->o->window_msgs);
    r->counts = calloc((size_t)e->size, sizeof(int));
    r->displs = calloc((size_t)e->size, sizeof(int));
    r->ps = (procsync){.t = &e->t, .m = &e->sync.model, .hooks = &e->hooks, .pc = r->s.pc, .rank = e->rank,
                       .window = e->o->sync_window, .oversubscribed = e->oversubscribed,
                       .own_barrier = e->o->own_barrier};
}

/* reps_min repetitions, unless the warm-up says they would not fit in the
 * time budget: the budget bounds a series' wall time, and reps_min yields
 * (the stop reason then says "time_budget"). Every rank computes the same
 * number from the same (reduced) window. */
static long first_batch(const options *o, double window_s)
{
    long batch = o->reps_min < o->reps_max ? o->reps_min : o->reps_max;
    double fit = floor(o->time_budget_s / window_s);
    if (fit < batch) batch = fit > 1 ? (long)fit : 1;
    return batch;
}

int series_run(engine *e, const bench_def *def, int variant, size_t bytes)
{
    run r = {.e = e, .def = def, .fallback_rep = -1, .skew_s = NAN, .warm_s = NAN};
    double t = MPI_Wtime();
    describe(&r, variant, bytes);
    if (any_skip(e, &r.s)) {
        r.d.stop = STOP_SKIPPED;
        int rc = record(&r);
        release(&r);
        phase_done(&e->ph, PHASE_RECORD, t);
        return rc;
    }
    prepare(&r);
    t = phase_done(&e->ph, PHASE_SETUP, t);
    sync_measure(&e->sync, 1); /* one fresh offset sample per series keeps the drift fit current */
    t = phase_done(&e->ph, PHASE_CLOCK, t);
    double window_s = warm_up(&r);
    t = phase_done(&e->ph, PHASE_WARMUP, t);
    if (isnan(e->t_first)) e->t_first = timer_now(&e->t);
    r.started = timer_now(&e->t);
    long batch = first_batch(e->o, window_s);
    while (batch > 0) {
        run_batch(&r, batch, window_s);
        t = phase_done(&e->ph, PHASE_MEASURE, t);
        decide_batch(&r, batch, window_s);
        t = phase_done(&e->ph, PHASE_DECIDE, t);
        r.done += batch;
        batch = (long)r.d.next_batch;
        window_s = r.d.window_s;
        if (r.d.barrier && r.ps.window) r.ps.window = 0, r.s.barrier_start = 1, r.fallback_rep = r.done;
    }
    e->t_last = timer_now(&e->t);
    int rc = record(&r);
    release(&r);
    phase_done(&e->ph, PHASE_RECORD, t);
    return rc;
}
