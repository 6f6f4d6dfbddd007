/* SPDX-License-Identifier: BSD-3-Clause */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return -1;
}

static int parse_long(const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min) return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min)) return -1;
    *out = v;
    return 0;
}

/* Splits a comma list in place; returns the number of items. */
static int split(char *s, char ***items)
{
    int n = 1;
    for (char *p = s; *p; p++) n += *p == ',';
    *items = calloc((size_t)n, sizeof **items);
    n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) (*items)[n++] = tok;
    return n;
}

static int parse_sizes(char *s, options *o)
{
    char **items;
    o->nsizes = split(s, &items);
    o->sizes = calloc((size_t)o->nsizes + 1, sizeof *o->sizes);
    for (int i = 0; i < o->nsizes; i++)
        if (parse_long(items[i], 0, &o->sizes[i])) return free(items), -1;
    free(items);
    return o->nsizes ? 0 : -1;
}

/* "a:b,c:d" -> flattened pairs */
static int parse_pairs(char *s, options *o)
{
    char **items;
    int n = split(s, &items);
    o->pairs = calloc(2 * (size_t)n + 2, sizeof *o->pairs);
    for (int i = 0; i < n; i++) {
        long a, b;
        char *colon = strchr(items[i], ':');
        if (!colon) return free(items), -1;
        *colon = 0;
        if (parse_long(items[i], 0, &a) || parse_long(colon + 1, 0, &b)) return free(items), -1;
        o->pairs[2 * i] = (int)a;
        o->pairs[2 * i + 1] = (int)b;
    }
    o->npairs = n;
    free(items);
    return n ? 0 : -1;
}

/* "1,2,4" -> queue depths and their variant names "q1", "q2", "q4". */
static int parse_queue_depths(char *s, options *o)
{
    char **items;
    int n = split(s, &items);
    o->queue_depths = calloc((size_t)n + 1, sizeof *o->queue_depths);
    o->queue_names = calloc((size_t)n + 1, sizeof *o->queue_names);
    for (int i = 0; i < n; i++) {
        long q;
        if (parse_long(items[i], 1, &q) || q > 65536) return free(items), -1;
        o->queue_depths[i] = (int)q;
        o->queue_names[i] = malloc(24);
        snprintf(o->queue_names[i], 24, "q%d", (int)q);
    }
    o->nqueue_depths = n;
    free(items);
    return n ? 0 : -1;
}

/* "0,0.5,1" -> steps and the variant names "os+0g", …, "or+1g". */
static int parse_overhead_steps(char *s, options *o)
{
    char **items;
    int n = split(s, &items);
    o->overhead_steps = calloc((size_t)n + 1, sizeof *o->overhead_steps);
    o->overhead_names = calloc(2 * (size_t)n + 1, sizeof *o->overhead_names);
    for (int i = 0; i < n; i++) {
        if (parse_double(items[i], 0, &o->overhead_steps[i]) || o->overhead_steps[i] > 1000)
            return free(items), -1;
        for (int side = 0; side < 2; side++) {
            o->overhead_names[side * n + i] = malloc(32);
            snprintf(o->overhead_names[side * n + i], 32, "%s+%gg", side ? "or" : "os", o->overhead_steps[i]);
        }
    }
    o->noverhead_steps = n;
    free(items);
    return n ? 0 : -1;
}

enum {
    OPT_BENCH = 256, OPT_SIZES, OPT_SYNC, OPT_TIMER, OPT_CACHE, OPT_COLD_REGION, OPT_REPS_MIN,
    OPT_REPS_MAX, OPT_WARMUP, OPT_CI, OPT_BUDGET, OPT_LAUNCH, OPT_CHECK, OPT_ROOT, OPT_SEED, OPT_OUT,
    OPT_NP, OPT_PAIRS, OPT_WMSGS, OPT_INJECT, OPT_SYNC_POINTS,
    OPT_QUEUE_DEPTHS, OPT_OVERHEAD_STEPS, OPT_FLOOD_BYTES,
    OPT_ALGO, OPT_SEGMENT, OPT_TRACE, OPT_CLOCK_SYNC, OPT_HUGE_PAGES, OPT_START_BARRIER, OPT_METHODS
};

static const struct option longopts[] = {
    {"bench", required_argument, 0, OPT_BENCH},       {"sizes", required_argument, 0, OPT_SIZES},
    {"sync", required_argument, 0, OPT_SYNC},         {"timer", required_argument, 0, OPT_TIMER},
    {"cache", required_argument, 0, OPT_CACHE},       {"cold-region", required_argument, 0, OPT_COLD_REGION},
    {"reps-min", required_argument, 0, OPT_REPS_MIN}, {"reps-max", required_argument, 0, OPT_REPS_MAX},
    {"warmup", required_argument, 0, OPT_WARMUP},     {"ci-width", required_argument, 0, OPT_CI},
    {"time-budget", required_argument, 0, OPT_BUDGET}, {"launch", required_argument, 0, OPT_LAUNCH},
    {"check", no_argument, 0, OPT_CHECK},             {"root-rotate", no_argument, 0, OPT_ROOT},
    {"seed", required_argument, 0, OPT_SEED},         {"out", required_argument, 0, OPT_OUT},
    {"expect-np", required_argument, 0, OPT_NP},      {"pairs", required_argument, 0, OPT_PAIRS},
    {"window-msgs", required_argument, 0, OPT_WMSGS}, {"clock-inject", required_argument, 0, OPT_INJECT},
    {"sync-points", required_argument, 0, OPT_SYNC_POINTS}, {"huge-pages", no_argument, 0, OPT_HUGE_PAGES},
    {"queue-depths", required_argument, 0, OPT_QUEUE_DEPTHS},
    {"overhead-steps", required_argument, 0, OPT_OVERHEAD_STEPS},
    {"flood-bytes", required_argument, 0, OPT_FLOOD_BYTES},
    {"algo", required_argument, 0, OPT_ALGO}, {"segment", required_argument, 0, OPT_SEGMENT},
    {"trace", no_argument, 0, OPT_TRACE}, {"clock-sync", required_argument, 0, OPT_CLOCK_SYNC},
    {"start-barrier", required_argument, 0, OPT_START_BARRIER},
    {"methods", required_argument, 0, OPT_METHODS},
    {0, 0, 0, 0},
};

void options_defaults(options *o)
{
    memset(o, 0, sizeof *o);
    o->sync_window = 1;
    o->sync_auto = 1;
    o->timer = TIMER_TSC;
    o->reps_min = 10;
    o->reps_max = 10000;
    o->warmup = 5;
    o->ci_width = 0.02;
    o->time_budget_s = 2.0;
    o->window_msgs = 64;
    o->sync_points = 10;
    o->expect_np = -1;
}

/* The lists an option may replace: filled after parsing, when not given. */
void options_default_lists(options *o)
{
    if (!o->nqueue_depths) {
        char dflt[] = "1,2,4,8,16,32,64";
        parse_queue_depths(dflt, o);
    }
    if (!o->noverhead_steps) {
        char dflt[] = "0,0.5,1,1.5,2,3";
        parse_overhead_steps(dflt, o);
    }
    if (!o->flood_bytes) o->flood_bytes = 8L << 20;
}

int options_parse(options *o, int argc, char **argv, char *err, size_t errlen)
{
    options_defaults(o);
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BENCH: o->nbenches = split(optarg, &o->benches); break;
        case OPT_SIZES:
            if (parse_sizes(optarg, o)) return fail(err, errlen, "--sizes: expected a comma list of byte counts, got '%s'", optarg);
            break;
        case OPT_SYNC:
            if (!strcmp(optarg, "auto")) o->sync_window = 1, o->sync_auto = 1;
            else if (!strcmp(optarg, "window")) o->sync_window = 1, o->sync_auto = 0;
            else if (!strcmp(optarg, "barrier")) o->sync_window = 0, o->sync_auto = 0;
            else return fail(err, errlen, "--sync: expected auto, window or barrier, got '%s'", optarg);
            break;
        case OPT_START_BARRIER:
            if (!strcmp(optarg, "mpi")) o->own_barrier = 0;
            else if (!strcmp(optarg, "own")) o->own_barrier = 1;
            else return fail(err, errlen, "--start-barrier: expected mpi or own, got '%s'", optarg);
            break;
        case OPT_TIMER:
            if (timer_parse(optarg, &o->timer)) return fail(err, errlen, "--timer: expected tsc, clock or wtime, got '%s'", optarg);
            break;
        case OPT_CLOCK_SYNC:
            if (!strcmp(optarg, "auto")) o->clock_sync = CLOCK_SYNC_AUTO;
            else if (!strcmp(optarg, "tree")) o->clock_sync = CLOCK_SYNC_TREE;
            else if (!strcmp(optarg, "star")) o->clock_sync = CLOCK_SYNC_STAR;
            else return fail(err, errlen, "--clock-sync: expected auto, tree or star, got '%s'", optarg);
            break;
        case OPT_CACHE:
            if (!strcmp(optarg, "warm")) o->cache_cold = 0;
            else if (!strcmp(optarg, "cold")) o->cache_cold = 1;
            else return fail(err, errlen, "--cache: expected warm or cold, got '%s'", optarg);
            break;
        case OPT_HUGE_PAGES:
            o->huge_pages = 1;
            break;
        case OPT_COLD_REGION:
            if (parse_long(optarg, 0, &v)) return fail(err, errlen, "--cold-region: expected bytes, got '%s'", optarg);
            o->cold_region = (size_t)v;
            break;
        case OPT_REPS_MIN:
            if (parse_long(optarg, 1, &o->reps_min)) return fail(err, errlen, "--reps-min: expected a positive integer, got '%s'", optarg);
            break;
        case OPT_REPS_MAX:
            if (parse_long(optarg, 1, &o->reps_max)) return fail(err, errlen, "--reps-max: expected a positive integer, got '%s'", optarg);
            break;
        case OPT_WARMUP:
            if (parse_long(optarg, 0, &o->warmup)) return fail(err, errlen, "--warmup: expected an integer >= 0, got '%s'", optarg);
            break;
        case OPT_CI:
            if (parse_double(optarg, 0, &o->ci_width)) return fail(err, errlen, "--ci-width: expected a number >= 0, got '%s'", optarg);
            break;
        case OPT_BUDGET:
            if (parse_double(optarg, 0, &o->time_budget_s)) return fail(err, errlen, "--time-budget: expected seconds >= 0, got '%s'", optarg);
            break;
        case OPT_LAUNCH:
            if (parse_long(optarg, 0, &v)) return fail(err, errlen, "--launch: expected an integer >= 0, got '%s'", optarg);
            o->launch = (int)v;
            break;
        case OPT_CHECK: o->check = 1; break;
        case OPT_ROOT: o->root_rotate = 1; break;
        case OPT_SEED:
            if (parse_long(optarg, 0, &v)) return fail(err, errlen, "--seed: expected an integer >= 0, got '%s'", optarg);
            o->seed = (uint64_t)v;
            break;
        case OPT_OUT: o->out = optarg; break;
        case OPT_NP:
            if (parse_long(optarg, 1, &v)) return fail(err, errlen, "--expect-np: expected a positive integer, got '%s'", optarg);
            o->expect_np = (int)v;
            break;
        case OPT_PAIRS:
            if (parse_pairs(optarg, o)) return fail(err, errlen, "--pairs: expected a:b,c:d with rank numbers, got '%s'", optarg);
            break;
        case OPT_WMSGS:
            if (parse_long(optarg, 1, &v)) return fail(err, errlen, "--window-msgs: expected a positive integer, got '%s'", optarg);
            o->window_msgs = (int)v;
            break;
        case OPT_INJECT: {
            double us, ppm;
            char extra;
            if (sscanf(optarg, "%lf:%lf%c", &us, &ppm, &extra) != 2 || us < 0 || ppm < 0)
                return fail(err, errlen, "--clock-inject: expected MAX_OFFSET_US:MAX_DRIFT_PPM, got '%s'", optarg);
            o->inject = 1;
            o->inj_max_offset_s = us * 1e-6;
            o->inj_max_drift = ppm * 1e-6;
            break;
        }
        case OPT_SYNC_POINTS:
            if (parse_long(optarg, 1, &v)) return fail(err, errlen, "--sync-points: expected a positive integer, got '%s'", optarg);
            o->sync_points = (int)v;
            break;
        case OPT_QUEUE_DEPTHS:
            if (parse_queue_depths(optarg, o))
                return fail(err, errlen, "--queue-depths: expected a comma list of positive integers, got '%s'", optarg);
            break;
        case OPT_OVERHEAD_STEPS:
            if (parse_overhead_steps(optarg, o))
                return fail(err, errlen, "--overhead-steps: expected a comma list of numbers >= 0, got '%s'", optarg);
            break;
        case OPT_FLOOD_BYTES:
            if (parse_long(optarg, 1, &o->flood_bytes)) return fail(err, errlen, "--flood-bytes: expected a positive integer, got '%s'", optarg);
            break;
        case OPT_ALGO:
            o->nalgos = split(optarg, &o->algos);
            if (!o->nalgos) return fail(err, errlen, "%s", "--algo: expected a comma list of algorithm names, mpi or all");
            break;
        case OPT_SEGMENT:
            if (parse_long(optarg, 1, &o->segment)) return fail(err, errlen, "--segment: expected a positive number of bytes, got '%s'", optarg);
            break;
        case OPT_TRACE: o->trace = 1; break;
        case OPT_METHODS:
            o->nmethods = split(optarg, &o->methods);
            if (!o->nmethods) return fail(err, errlen, "%s", "--methods: expected a comma list of method names");
            break;
        default:
            return fail(err, errlen, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return fail(err, errlen, "unexpected argument '%s'", argv[optind]);
    options_default_lists(o);
    if (!o->out) return fail(err, errlen, "%s", "--out DIR is required");
    if (!o->nbenches) return fail(err, errlen, "%s", "--bench is required");
    if (!o->nsizes) return fail(err, errlen, "%s", "--sizes is required");
    if (o->expect_np < 0) return fail(err, errlen, "%s", "--expect-np is required");
    if (o->reps_min > o->reps_max) return fail(err, errlen, "%s", "--reps-min is larger than --reps-max");
    return 0;
}
