/* SPDX-License-Identifier: BSD-3-Clause */
#include "rawfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "colls/colls.h"
#include "json.h"

static const char *const stop_names[] = {"none", "ci", "reps_max", "time_budget", "skipped", "ci_out_of_reach"};

static const char *const rule_names[RULE_COUNT] = {
    "slowest_rank", "half_round_trip", "duration", "loop_half_round_trip", "per_message",
    "bandwidth", "bidirectional_bandwidth", "one_way", "pair_exchange",
};
static const char *const rule_texts[RULE_COUNT] = {
    "one operation over all participating ranks: latest global end minus the agreed global start (window "
    "sync), or the longest local duration (barrier sync)",
    "the timed rank's local duration / 2",
    "the timed rank's local duration",
    "the timed rank's local duration / (2 * window_msgs)",
    "the timed rank's local duration / window_msgs",
    "size * window_msgs / the timed rank's local duration (B/s)",
    "2 * size * window_msgs / the timed rank's local duration (B/s)",
    "the responder's global end minus the initiator's global start",
    "both directions of each pair, each a one-way time: receiver's global end minus sender's global start",
};

const char *rawfmt_rule_name(sample_rule r) { return rule_names[r]; }
const char *rawfmt_rule_text(sample_rule r) { return rule_texts[r]; }
const char *rawfmt_unit_name(sample_unit u) { return u == UNIT_BYTES_PER_SECOND ? "B/s" : "s"; }

const char *rawfmt_role_name(role r)
{
    return r == ROLE_INITIATOR ? "initiator" : r == ROLE_RESPONDER ? "responder" : r == ROLE_MEMBER ? "member" : "idle";
}

static void put_timers(strbuf *b, const engine *e, const header_facts *f)
{
    sb_printf(b, ", \"timer\": {");
    sb_key_str(b, "name", timer_name(e->t.kind));
    sb_key_num(b, "cost_s", e->t.cost_s);
    sb_key_num(b, "resolution_s", e->t.resolution_s);
    sb_key_num(b, "interval_s", e->t.interval_s);
    sb_key_num(b, "tick_s", e->t.tick_s);
    sb_key_num(b, "freq_hz", e->t.kind == TIMER_TSC ? 1.0 / e->t.tsc_period_s : NAN);
    /* The CPU's counter ("tsc") and, where the timer is clock_gettime in its
     * place, why. */
    if (e->t.counter.name) sb_key_str(b, "counter", e->t.counter.name);
    else sb_printf(b, ", \"counter\": null");
    sb_key_num(b, "counter_hz", 1.0 / e->t.tsc_period_s);
    sb_key_num(b, "counter_nominal_hz", e->t.counter.nominal_hz > 0 ? e->t.counter.nominal_hz : NAN);
    if (e->t.fallback[0]) sb_key_str(b, "fallback", e->t.fallback);
    else sb_printf(b, ", \"fallback\": null");
    sb_printf(b, "}");
    sb_printf(b, ", \"timers\": {");
    for (int k = TIMER_TSC; k <= TIMER_WTIME; k++) {
        sb_printf(b, "%s\"%s\": {", k == TIMER_TSC ? "" : ", ", timer_name((timer_kind)k));
        sb_key_num(b, "cost_s", f->probes[k].cost_s);
        sb_key_num(b, "resolution_s", f->probes[k].resolution_s);
        sb_printf(b, "}");
    }
    sb_printf(b, "}");
}

static void put_inject(strbuf *b, const timer *t)
{
    if (!t->injected) {
        sb_printf(b, ", \"inject\": null");
        return;
    }
    sb_printf(b, ", \"inject\": {");
    sb_key_num(b, "offset_s", t->inj_offset_s);
    sb_key_num(b, "drift", t->inj_drift);
    sb_key_num(b, "epoch_s", t->inj_epoch_s);
    sb_printf(b, "}");
}

static void put_argv(strbuf *b, int argc, char **argv)
{
    sb_printf(b, ", \"argv\": [");
    for (int i = 0; i < argc; i++) {
        if (i) sb_printf(b, ", ");
        sb_str(b, argv[i]);
    }
    sb_printf(b, "]");
}

int rawfmt_open(engine *e, const header_facts *f, int argc, char **argv)
{
    const options *o = e->o;
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_int(&b, "schema_version", RAW_SCHEMA_VERSION);
    sb_key_int(&b, "rank", e->rank);
    sb_key_int(&b, "size", e->size);
    sb_key_int(&b, "launch", o->launch);
    sb_key_str(&b, "host", f->host);
    sb_key_str(&b, "cpus", f->cpus);
    sb_key_str(&b, "mpi_library", f->lib);
    sb_key_str(&b, "mpi_version", f->version);
    put_timers(&b, e, f);
    sb_key_str(&b, "sync_method", o->sync_auto ? "auto" : o->sync_window ? "window" : "barrier");
    sb_key_str(&b, "start_barrier", o->own_barrier ? "own" : "mpi");
    sb_key_str(&b, "clock_sync", e->sync.tree ? "tree" : "star");
    sb_key_str(&b, "cache", o->cache_cold ? "cold" : "warm");
    sb_key_int(&b, "cold_region_bytes", o->cache_cold ? (long long)e->buf.region : 0);
    sb_key_int(&b, "huge_pages", o->huge_pages);
    if (o->huge_pages) sb_key_int(&b, "huge_kib", e->buf.huge_kib);
    sb_key_int(&b, "seed", (long long)o->seed);
    sb_key_int(&b, "oversubscribed", e->oversubscribed);
    put_inject(&b, &e->t);
    put_argv(&b, argc, argv);
    sb_key_num(&b, "start_unix", (double)time(NULL));
    sb_printf(&b, "}");
    int rc = raw_open(&e->raw, o->out, e->rank, b.s);
    sb_free(&b);
    return rc;
}

static void put_model(strbuf *b, const sync_ctx *sc)
{
    const clock_model *m = &sc->model;
    sb_printf(b, ", \"model\": {");
    sb_key_num(b, "offset_s", m->offset_s);
    sb_key_num(b, "drift", m->drift);
    sb_key_num(b, "ref_s", m->ref_s);
    sb_printf(b, "}");
    sb_key_num(b, "residual_s", m->residual_s);
    sb_key_num(b, "cost_s", sc->cost_s);
    sb_printf(b, ", \"points\": [");
    for (int i = 0; i < sc->npoints; i++) {
        const sync_point *p = &sc->points[i];
        sb_printf(b, "%s[%.17g, %.17g, %.17g]", i ? ", " : "", p->local_s, p->offset_s, p->rtt_s);
    }
    sb_printf(b, "]");
}

int rawfmt_sync(engine *e, const char *phase)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "kind", "sync");
    sb_key_str(&b, "phase", phase);
    sb_key_int(&b, "parent", e->sync.parent);
    put_model(&b, &e->sync);
    /* Raw facts for Python's clock recovery check (store.py, recovery.py). */
    if (!strcmp(phase, "after")) {
        sb_key_num(&b, "t_first_local_s", e->t_first);
        sb_key_num(&b, "t_last_local_s", e->t_last);
    }
    sb_printf(&b, "}");
    int rc = raw_block(&e->raw, b.s, 0, NULL, NULL, NULL, NULL);
    sb_free(&b);
    return rc;
}

/* How the series' repetitions started: "window", "barrier", or window starts
 * that fell back to barriers ("window,barrier", from "fallback_rep" on), and
 * the barrier's exit skew that --sync auto chose by. */
static void put_start(strbuf *b, const options *o, const series_outcome *out)
{
    int barrier = !o->sync_window || out->barrier_chosen;
    sb_key_str(b, "start", barrier ? "barrier" : out->fallback_rep < 0 ? "window" : "window,barrier");
    sb_key_num(b, "barrier_skew_s", out->barrier_skew_s);
    sb_key_num(b, "warmup_median_s", out->warmup_median_s);
    if (barrier) return;
    sb_key_int(b, "fallback_rep", out->fallback_rep);
    sb_key_int(b, "late_arrived", out->late_arrived);
    sb_key_int(b, "late_left", out->late_left);
}

int rawfmt_series(engine *e, const bench_def *def, const series *s, const series_outcome *out)
{
    long reps = out->reps;
    const options *o = e->o;
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "kind", "series");
    sb_key_str(&b, "bench", def->name);
    sb_key_str(&b, "algo", s->algo);
    sb_key_int(&b, "size", (long long)s->bytes);
    sb_key_int(&b, "launch", o->launch);
    sb_key_int(&b, "reps", reps);
    sb_key_str(&b, "stop", stop_names[out->stop]);
    sb_key_num(&b, "window_s", o->sync_window && !out->barrier_chosen ? out->window_s : NAN);
    put_start(&b, o, out);
    sb_key_str(&b, "role", rawfmt_role_name(s->role));
    sb_key_int(&b, "peer", s->peer);
    sb_key_str(&b, "rule", rule_names[def->rule]);
    sb_key_str(&b, "unit", rawfmt_unit_name(def->unit));
    sb_key_str(&b, "timed_role", rawfmt_role_name(bench_timed_role(def, o, s->variant)));
    sb_key_int(&b, "window_msgs", s->window_msgs);
    sb_key_int(&b, "count", s->count);
    sb_key_str(&b, "datatype", s->datatype);
    sb_key_int(&b, "invalid", out->invalid);
    if (s->params[0]) sb_printf(&b, ", \"params\": %s", s->params);
    sb_printf(&b, ", \"root_rotate\": %s}", o->root_rotate ? "true" : "false");
    long rows = s->role == ROLE_IDLE ? 0 : reps; /* an idle rank has no rows */
    int rc = raw_block(&e->raw, b.s, (uint64_t)rows, e->t_start, e->t_end, e->t_sched, e->valid);
    sb_free(&b);
    return rc;
}

void rawfmt_skip_params(series *s, const char *why)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "skipped", why);
    sb_printf(&b, "}");
    snprintf(s->params, sizeof s->params, "%s", b.s);
    sb_free(&b);
}

int rawfmt_trace(struct rawfile *raw, const series *s, const char *bench, const coll_trace *tr, long reps)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "kind", "trace");
    sb_key_str(&b, "bench", bench);
    sb_key_str(&b, "algo", s->algo);
    sb_key_int(&b, "size", (long long)s->bytes);
    sb_key_int(&b, "launch", s->o->launch);
    sb_key_int(&b, "rank", s->rank);
    sb_key_int(&b, "reps", reps);
    sb_key_int(&b, "reps_traced", tr->first_dropped_rep >= 0 ? tr->first_dropped_rep : reps);
    sb_key_int(&b, "dropped", tr->dropped);
    sb_printf(&b, ", \"columns\": [[\"rep\", \"i32\"], [\"seq\", \"i32\"], [\"op\", \"u8\"], [\"peer\", \"i32\"], "
                  "[\"tag\", \"i32\"], [\"bytes\", \"i64\"], [\"t_post\", \"f64\"], [\"t_done\", \"f64\"]]}");
    const void *cols[] = {tr->rep_col, tr->seq_col, tr->op, tr->peer, tr->tag, tr->bytes, tr->t_post, tr->t_done};
    const size_t widths[] = {4, 4, 1, 4, 4, 8, 8, 8};
    int rc = raw_block_columns(raw, b.s, (uint64_t)tr->n, 8, cols, widths);
    sb_free(&b);
    return rc;
}

void rawfmt_progress(const bench_def *def, const series *s, const series_outcome *out)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "bench", def->name);
    sb_key_str(&b, "algo", s->algo);
    sb_key_int(&b, "size", (long long)s->bytes);
    sb_key_int(&b, "reps", out->reps);
    sb_key_str(&b, "stop", stop_names[out->stop]);
    sb_key_int(&b, "invalid", out->invalid);
    sb_printf(&b, "}");
    printf("@progress %s\n", b.s);
    fflush(stdout);
    sb_free(&b);
}

void rawfmt_timing(const phases *ph)
{
    static const char *const names[PHASE_COUNT] = {"startup", "clock_sync", "series_setup", "warmup",
                                                   "measure", "decide", "record", "finish"};
    strbuf b = {0};
    sb_printf(&b, "{");
    for (int p = 0; p < PHASE_COUNT; p++) sb_key_num(&b, names[p], ph->s[p]);
    sb_printf(&b, "}");
    printf("@timing %s\n", b.s);
    fflush(stdout);
    sb_free(&b);
}
