/* One benchmark x size: warm-up, then batches of synchronized repetitions
 * until the stopping rule holds; the records are written afterwards. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "json.h"
#include "stoprule.h"

enum { STOP_NONE, STOP_CI, STOP_REPS_MAX, STOP_BUDGET, STOP_SKIPPED };
static const char *const stop_names[] = {"none", "ci", "reps_max", "time_budget", "skipped"};

/* (initiator, responder) pairs of a point-to-point benchmark; 0 for collectives. */
static int pairs_of(const engine *e, const bench_def *def, int **pairs)
{
    if (def->pat == PAT_COLL) return *pairs = NULL, 0;
    if (!strcmp(def->name, "pairs")) {
        *pairs = malloc(2 * sizeof(int) * (size_t)e->o->npairs);
        memcpy(*pairs, e->o->pairs, 2 * sizeof(int) * (size_t)e->o->npairs);
        return e->o->npairs;
    }
    int n = !strcmp(def->name, "multipair") ? e->size / 2 : 1;
    *pairs = malloc(2 * sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++) {
        (*pairs)[2 * k] = k;
        (*pairs)[2 * k + 1] = k + (n > 1 ? e->size / 2 : 1);
    }
    return n;
}

static void assign_role(series *s, const bench_def *def, const int *pairs, int npairs)
{
    s->role = def->pat == PAT_COLL ? ROLE_MEMBER : ROLE_IDLE;
    s->peer = -1;
    for (int k = 0; k < npairs; k++) {
        if (pairs[2 * k] == s->rank) s->role = ROLE_INITIATOR, s->peer = pairs[2 * k + 1];
        if (pairs[2 * k + 1] == s->rank) s->role = ROLE_RESPONDER, s->peer = pairs[2 * k];
    }
}

static const char *role_name(role r)
{
    return r == ROLE_INITIATOR ? "initiator" : r == ROLE_RESPONDER ? "responder" : r == ROLE_MEMBER ? "member" : "idle";
}

/* How long after its agreed start a rank may leave the wait and still be on
 * time: a few timer reads. More means it was preempted while waiting, and its
 * peers may already have sent to it. */
static const double LATE_SLACK_S = 1e-6;

/* Test-only: MPISCOPE_TEST_STALL=RANK:REP:MS holds that rank up for MS
 * milliseconds while it waits for the start of repetition REP of every
 * series (as lost scheduler ticks do), to show that the late starts this
 * causes are marked, and end. */
static void test_stall(const engine *e, long rep)
{
    static int parsed, rank = -1;
    static long at = -1, ms;
    if (!parsed) {
        const char *v = getenv("MPISCOPE_TEST_STALL");
        if (v && sscanf(v, "%d:%ld:%ld", &rank, &at, &ms) != 3) rank = -1;
        parsed = 1;
    }
    if (rank == e->rank && rep == at) nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Waits until local time `until` to start repetition `rep`; returns 1 if the
 * rank started on time. */
static int wait_until(const engine *e, double until, long rep)
{
    double now = timer_now(&e->t);
    int arrived_in_time = now <= until;
    test_stall(e, rep);
    while (now < until) {
        /* With more ranks than CPUs a spinning rank would starve the others. */
        if (e->oversubscribed && until - now > 50e-6) sched_yield();
        now = timer_now(&e->t);
    }
    /* A rank that must yield its CPU cannot promise to leave on time; it is
     * late only when it arrives after the start. */
    return e->oversubscribed ? arrived_in_time : arrived_in_time && now - until <= LATE_SLACK_S;
}

/* How long one agreed schedule of window starts lasts (see series_run): a
 * scheduler tick lost (4 ms) costs at most the rest of it. Long windows catch
 * up quickly, and need not pay the lead of a new schedule often. */
static const double SCHEDULE_S = 0.01;
static const double MIN_PER_SCHEDULE = 64;

/* A global start time all participants agree on, far enough ahead for the
 * message carrying it to reach every one of them: a broadcast takes no longer
 * than a few of the operations that sized the window. */
static double agree_on_start(const engine *e, const series *s, const clock_model *m, double window_s)
{
    double start = sync_to_global(m, timer_now(&e->t)) + 200e-6 + 2 * window_s;
    MPI_Bcast(&start, 1, MPI_DOUBLE, 0, s->pc);
    return start;
}

/* Decision broadcast by rank 0 after each batch. */
typedef struct decision {
    double next_batch, window_s, stop, invalid;
} decision;

static decision decide(const engine *e, stop_state *st, long done, long batch, long bad, double elapsed,
                       double window_s, int samples_per_rep)
{
    const options *o = e->o;
    decision d = {0, window_s, STOP_NONE, (double)st->invalid};
    double hw = stop_ci_halfwidth(st);
    if (done >= o->reps_min && hw <= o->ci_width) d.stop = STOP_CI;
    else if (done >= o->reps_max) d.stop = STOP_REPS_MAX;
    else if (elapsed >= o->time_budget_s) d.stop = STOP_BUDGET;
    if (d.stop != STOP_NONE) return d;
    /* Grow batches geometrically, within reps_max and the remaining budget. */
    double next = done / 2 > 1 ? done / 2 : 1;
    double per_rep = elapsed / done;
    if (per_rep > 0 && next > (o->time_budget_s - elapsed) / per_rep + 1)
        next = floor((o->time_budget_s - elapsed) / per_rep) + 1;
    if (next > o->reps_max - done) next = (double)(o->reps_max - done);
    d.next_batch = next;
    /* Too many late starts: the window is too short for this operation. */
    if (o->sync_window && bad * 10 > batch * samples_per_rep) d.window_s = 2 * window_s;
    return d;
}

static int write_block(engine *e, const bench_def *def, const series *s, long n, decision d)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "kind", "series");
    sb_key_str(&b, "bench", def->name);
    sb_key_str(&b, "algo", s->algo);
    sb_key_int(&b, "size", (long long)s->bytes);
    sb_key_int(&b, "launch", e->o->launch);
    sb_key_int(&b, "reps", n);
    sb_key_str(&b, "stop", stop_names[(int)d.stop]);
    sb_key_num(&b, "window_s", e->o->sync_window ? d.window_s : NAN);
    sb_key_str(&b, "role", role_name(s->role));
    sb_key_int(&b, "peer", s->peer);
    sb_key_int(&b, "window_msgs", s->window_msgs);
    sb_key_int(&b, "count", s->count);
    sb_key_str(&b, "datatype", s->datatype);
    sb_key_int(&b, "invalid", (long long)d.invalid);
    if (s->params[0]) sb_printf(&b, ", \"params\": %s", s->params);
    sb_printf(&b, ", \"root_rotate\": %s}", e->o->root_rotate ? "true" : "false");
    long rows = s->role == ROLE_IDLE ? 0 : n;
    int rc = raw_block(&e->raw, b.s, (uint64_t)rows, e->t_start, e->t_end, e->t_sched, e->valid);
    sb_free(&b);
    if (rc) perror("mpiscope-engine: writing the raw file");
    return rc;
}

/* A series some rank cannot run (series.skip): every rank records it empty,
 * with the reason of the lowest such rank, so the run says why it is missing. */
static int any_skip(engine *e, series *s)
{
    int me = s->skip ? e->rank : e->size, first;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, e->world);
    if (first == e->size) return 0;
    char why[256] = {0};
    if (e->rank == first) snprintf(why, sizeof why, "rank %d: %s", e->rank, s->skip);
    MPI_Bcast(why, sizeof why, MPI_CHAR, first, e->world);
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "skipped", why);
    sb_printf(&b, "}");
    snprintf(s->params, sizeof s->params, "%s", b.s);
    sb_free(&b);
    s->role = ROLE_IDLE; /* no rows */
    return 1;
}

int series_run(engine *e, const bench_def *def, int variant, size_t bytes)
{
    const options *o = e->o;
    int *pairs, npairs = pairs_of(e, def, &pairs);
    series s = {.world = e->world, .rank = e->rank, .size = e->size, .bytes = bytes, .buf = &e->buf,
                .t = &e->t, .check = o->check, .variant = variant, .o = o,
                .algo = def->variant_name ? def->variant_name(o, variant) : "mpi", .root_rotate = o->root_rotate, .window_msgs = o->window_msgs,
                /* test-only: proves that --check can fail */
                .corrupt = getenv("MPISCOPE_TEST_CORRUPT") != NULL};
    assign_role(&s, def, pairs, npairs);
    s.oversubscribed = e->oversubscribed;
    int active = s.role != ROLE_IDLE;
    MPI_Comm_split(e->world, active ? 0 : MPI_UNDEFINED, e->rank, &s.pc);
    def->describe(&s);
    if (any_skip(e, &s)) {
        decision none = {.stop = STOP_SKIPPED};
        int rc = write_block(e, def, &s, 0, none);
        if (e->rank == 0) {
            printf("@progress {\"bench\": \"%s\", \"algo\": \"%s\", \"size\": %zu, \"reps\": 0, "
                   "\"stop\": \"skipped\", \"invalid\": 0}\n", def->name, s.algo, bytes);
            fflush(stdout);
        }
        if (def->finish) def->finish(&s);
        free(s.state);
        free(pairs);
        if (s.pc != MPI_COMM_NULL) MPI_Comm_free(&s.pc);
        return rc;
    }
    s.reqs = malloc(2 * sizeof(MPI_Request) * (size_t)o->window_msgs);

    sync_measure(&e->sync, 1); /* one fresh offset sample per series keeps the drift fit current */
    const clock_model *m = &e->sync.model;

    /* Warm-up (not recorded) also sizes the start window. */
    double longest = 0, a, b;
    for (long i = 0; active && i < o->warmup; i++) {
        if (def->pre_rep) def->pre_rep(&s, i);
        MPI_Barrier(s.pc);
        def->run_rep(&s, i, &a, &b);
        if (b - a > longest) longest = b - a;
    }
    MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, e->world);
    s.measuring = 1;
    double window_s = 2 * longest + 5e-6;
    if (isnan(e->t_first)) e->t_first = timer_now(&e->t);

    stop_state st = {0};
    int samples_per_rep = def->pat == PAT_PAIRS ? 2 * npairs : 1;
    double *mine = NULL, *all = NULL, started = timer_now(&e->t);
    int *counts = calloc((size_t)e->size, sizeof(int)), *displs = calloc((size_t)e->size, sizeof(int));
    long done = 0, batch = o->reps_min < o->reps_max ? o->reps_min : o->reps_max;
    decision d = {0};
    /* Repetitions per agreed schedule: a rank held up for milliseconds makes
     * every later start of a schedule late until the windows' slack has caught
     * up, so the participants agree on a fresh schedule this often. */
    long per_schedule = 1;
    while (batch > 0) {
        double base = 0;
        if (o->sync_window) per_schedule = (long)fmax(MIN_PER_SCHEDULE, SCHEDULE_S / window_s);
        for (long i = 0; active && i < batch; i++) {
            long k = done + i;
            if (def->pre_rep) def->pre_rep(&s, k);
            if (o->sync_window) {
                if (i % per_schedule == 0) base = agree_on_start(e, &s, m, window_s) - (double)i * window_s;
                e->t_sched[k] = sync_to_local(m, base + (double)i * window_s);
                e->valid[k] = (uint8_t)wait_until(e, e->t_sched[k], k);
            } else {
                MPI_Barrier(s.pc);
                e->t_sched[k] = NAN;
                e->valid[k] = 1;
            }
            def->run_rep(&s, k, &e->t_start[k], &e->t_end[k]);
        }
        /* Rank 0 needs every rank's records, on the global clock, to apply the rule. */
        mine = realloc(mine, 4 * sizeof(double) * (size_t)batch);
        for (long i = 0; i < batch; i++) {
            long k = done + i;
            mine[4 * i] = active ? sync_to_global(m, e->t_start[k]) : NAN;
            mine[4 * i + 1] = active ? sync_to_global(m, e->t_end[k]) : NAN;
            mine[4 * i + 2] = active ? sync_to_global(m, e->t_sched[k]) : NAN;
            mine[4 * i + 3] = active ? e->valid[k] : 0;
        }
        if (e->rank == 0) {
            all = realloc(all, 4 * sizeof(double) * (size_t)batch * (size_t)e->size);
            for (int r = 0; r < e->size; r++) counts[r] = (int)(4 * batch), displs[r] = (int)(4 * batch * r);
        }
        MPI_Gatherv(mine, (int)(4 * batch), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, e->world);
        if (e->rank == 0) {
            long bad = stop_add_batch(&st, def->pat, o->sync_window, all, e->size, batch, pairs, npairs);
            d = decide(e, &st, done + batch, batch, bad, timer_now(&e->t) - started, window_s, samples_per_rep);
        }
        MPI_Bcast(&d, 4, MPI_DOUBLE, 0, e->world);
        done += batch;
        batch = (long)d.next_batch;
        window_s = d.window_s;
    }
    e->t_last = timer_now(&e->t);
    int rc = write_block(e, def, &s, done, d);
    if (!rc && def->extra_blocks && active) rc = def->extra_blocks(&s, &e->raw, done);
    if (e->rank == 0) {
        printf("@progress {\"bench\": \"%s\", \"algo\": \"%s\", \"size\": %zu, \"reps\": %ld, "
               "\"stop\": \"%s\", \"invalid\": %ld}\n",
               def->name, s.algo, bytes, done, stop_names[(int)d.stop], (long)d.invalid);
        fflush(stdout);
    }
    free(mine);
    free(all);
    free(counts);
    free(displs);
    free(pairs);
    free(s.reqs);
    if (def->finish) def->finish(&s);
    free(s.state);
    stop_free(&st);
    if (s.pc != MPI_COMM_NULL) MPI_Comm_free(&s.pc);
    return rc;
}
