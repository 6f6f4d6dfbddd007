/* SPDX-License-Identifier: BSD-3-Clause */
/* mpiscope-sim: schedules of our own collective algorithms, and their
 * simulation (the Python side, mpiscope sim, drives it).
 *
 *   mpiscope-sim schedule --bench B --algo A -p P --size S [--segment N]
 *                         [--format goal|bin] [--gamma s/B] [-o FILE]
 *   mpiscope-sim run (--schedule FILE|- | --bench B --algo A -p P --size S [--symmetric])
 *                    [cost options] [--dist FILE] [--exchange FILE] [--skew FILE] [--replicates K]
 *                    [--seed N] [--trace FILE] [--critical-path N] [--per-rank]
 *   mpiscope-sim probe --bench B --algo A -p P --size S   (operations per rank, symmetry)
 *
 * Costs in base units (s, s/B, bytes). run prints one JSON object. Exit
 * codes: 0 done, 2 bad input, 3 out of memory or a failed write. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "sim.h"

static void die(int code, const char *fmt, const char *what)
{
    fprintf(stderr, "mpiscope-sim: ");
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    exit(code);
}

static double number(const char *opt, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !(v >= 0) || isinf(v)) {
        fprintf(stderr, "mpiscope-sim: %s '%s' must be a finite number >= 0\n", opt, text);
        exit(2);
    }
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Numbers of a text file, whitespace separated ('#' starts a comment). */
static double *read_numbers(const char *path, long *count)
{
    FILE *f = fopen(path, "r");
    if (!f) die(2, "cannot open %s", path);
    size_t cap = 1024, n = 0;
    double *v = malloc(cap * sizeof *v);
    char tok[128];
    int c;
    while (fscanf(f, " %127s", tok) == 1) {
        if (tok[0] == '#') {
            while ((c = getc(f)) != EOF && c != '\n') {}
            continue;
        }
        char *end;
        double x = strtod(tok, &end);
        if (*end || !isfinite(x)) die(2, "%s holds something that is not a number", path);
        if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        v[n++] = x;
    }
    fclose(f);
    *count = (long)n;
    return v;
}

/* "nq K" then lines "size q_1 .. q_K" (ascending sizes, ascending quantiles). */
static sim_dist *read_dist(const char *path)
{
    long n;
    double *v = read_numbers(path, &n);
    if (n < 1 || v[0] < 2 || v[0] != floor(v[0]) || (n - 1) % (long)(v[0] + 1) || n == 1)
        die(2, "%s: expected the number of quantiles K >= 2, then lines of a size and K quantiles", path);
    sim_dist *d = calloc(1, sizeof *d);
    d->nq = (int)v[0], d->nsizes = (int)((n - 1) / (d->nq + 1));
    d->sizes = malloc(d->nsizes * sizeof(double)), d->q = malloc((size_t)d->nsizes * d->nq * sizeof(double));
    for (int i = 0; i < d->nsizes; i++) {
        const double *row = v + 1 + (size_t)i * (d->nq + 1);
        d->sizes[i] = row[0];
        if (i && row[0] <= d->sizes[i - 1]) die(2, "%s: sizes must increase", path);
        for (int j = 0; j < d->nq; j++) {
            d->q[i * d->nq + j] = row[1 + j];
            if (row[1 + j] < 0 || (j && row[1 + j] < row[j])) die(2, "%s: quantiles must be >= 0 and ascending", path);
        }
    }
    free(v);
    return d;
}

/* Lines "size seconds" (ascending sizes): an exchange message's one-way
 * time less a lone message's at each size (may be below 0). */
static sim_dist *read_exchange(const char *path)
{
    long n;
    double *v = read_numbers(path, &n);
    if (n < 2 || n % 2) die(2, "%s: expected lines of a size and a time in seconds", path);
    sim_dist *d = calloc(1, sizeof *d);
    d->nq = 1, d->nsizes = (int)(n / 2);
    d->sizes = malloc(d->nsizes * sizeof(double)), d->q = malloc(d->nsizes * sizeof(double));
    for (int i = 0; i < d->nsizes; i++) {
        d->sizes[i] = v[2 * i], d->q[i] = v[2 * i + 1];
        if (i && d->sizes[i] <= d->sizes[i - 1]) die(2, "%s: sizes must increase", path);
    }
    free(v);
    return d;
}

static FILE *open_out(const char *path)
{
    if (!path || !strcmp(path, "-")) return stdout;
    FILE *f = fopen(path, "wb");
    if (!f) die(2, "cannot write %s", path);
    return f;
}

enum { O_BENCH = 256, O_ALGO, O_SIZE, O_SEGMENT, O_FORMAT, O_GAMMA, O_SCHEDULE, O_L, O_OS, O_OR, O_BIG_O, O_G,
       O_BIG_G, O_S, O_AS, O_BS, O_AR, O_BR, O_DIST, O_SKEW, O_RPH, O_HPS, O_UPLINK, O_REPS, O_SEED, O_TRACE,
       O_CRIT, O_PER_RANK, O_MAX_OPS, O_SYM, O_FAIR, O_SFIRST, O_BURST, O_EXCHANGE };

static const struct option LONG[] = {
    {"bench", 1, 0, O_BENCH}, {"algo", 1, 0, O_ALGO}, {"np", 1, 0, 'p'}, {"size", 1, 0, O_SIZE},
    {"segment", 1, 0, O_SEGMENT}, {"format", 1, 0, O_FORMAT}, {"gamma", 1, 0, O_GAMMA}, {"output", 1, 0, 'o'},
    {"schedule", 1, 0, O_SCHEDULE}, {"L", 1, 0, O_L}, {"o-s", 1, 0, O_OS}, {"o-r", 1, 0, O_OR},
    {"O", 1, 0, O_BIG_O}, {"g", 1, 0, O_G}, {"G", 1, 0, O_BIG_G}, {"S", 1, 0, O_S}, {"alpha-s", 1, 0, O_AS},
    {"beta-s", 1, 0, O_BS}, {"alpha-r", 1, 0, O_AR}, {"beta-r", 1, 0, O_BR}, {"dist", 1, 0, O_DIST},
    {"skew", 1, 0, O_SKEW}, {"ranks-per-host", 1, 0, O_RPH}, {"hosts-per-switch", 1, 0, O_HPS},
    {"uplink-G", 1, 0, O_UPLINK}, {"replicates", 1, 0, O_REPS}, {"seed", 1, 0, O_SEED}, {"trace", 1, 0, O_TRACE},
    {"critical-path", 1, 0, O_CRIT}, {"per-rank", 0, 0, O_PER_RANK}, {"max-ops", 1, 0, O_MAX_OPS}, {"symmetric", 0, 0, O_SYM},
    {"fair", 0, 0, O_FAIR}, {"S-first", 1, 0, O_SFIRST}, {"burst", 1, 0, O_BURST},
    {"exchange", 1, 0, O_EXCHANGE}, {0, 0, 0, 0}};

typedef struct {
    const char *bench, *algo, *format, *out, *schedule, *dist, *exchange, *skew, *trace;
    long p, size, segment, reps, crit, max_ops;
    uint64_t seed;
    int per_rank, symmetric, fair;
    sim_costs c;
    sim_topo topo;
} args;

static void parse(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->p = -1, a->size = -1, a->reps = 1, a->seed = 1, a->format = "goal";
    a->c.S = INFINITY;
    int ch;
    while ((ch = getopt_long(argc, argv, "p:o:", LONG, NULL)) != -1) {
        const char *v = optarg;
        switch (ch) {
        case O_BENCH: a->bench = v; break;
        case O_ALGO: a->algo = v; break;
        case 'p': a->p = (long)number("-p", v); break;
        case O_SIZE: a->size = (long)number("--size", v); break;
        case O_SEGMENT: a->segment = (long)number("--segment", v); break;
        case O_FORMAT: a->format = v; break;
        case 'o': a->out = v; break;
        case O_GAMMA: a->c.gamma = number("--gamma", v); break;
        case O_SCHEDULE: a->schedule = v; break;
        case O_L: a->c.L = number("--L", v); break;
        case O_OS: a->c.o_s = number("--o-s", v); break;
        case O_OR: a->c.o_r = number("--o-r", v); break;
        case O_BIG_O: a->c.O = number("--O", v); break;
        case O_G: a->c.g = number("--g", v); break;
        case O_BIG_G: a->c.G = number("--G", v); break;
        case O_S: a->c.S = number("--S", v); break;
        case O_AS: a->c.alpha_s = number("--alpha-s", v); break;
        case O_BS: a->c.beta_s = number("--beta-s", v); break;
        case O_AR: a->c.alpha_r = number("--alpha-r", v); break;
        case O_BR: a->c.beta_r = number("--beta-r", v); break;
        case O_DIST: a->dist = v; break;
        case O_EXCHANGE: a->exchange = v; break;
        case O_SKEW: a->skew = v; break;
        case O_RPH: a->topo.ranks_per_host = (long)number("--ranks-per-host", v); break;
        case O_HPS: a->topo.hosts_per_switch = (long)number("--hosts-per-switch", v); break;
        case O_UPLINK: a->topo.uplink_G = number("--uplink-G", v); break;
        case O_REPS: a->reps = (long)number("--replicates", v); break;
        case O_SEED: a->seed = (uint64_t)number("--seed", v); break;
        case O_TRACE: a->trace = v; break;
        case O_CRIT: a->crit = (long)number("--critical-path", v); break;
        case O_PER_RANK: a->per_rank = 1; break;
        case O_MAX_OPS: a->max_ops = (long)number("--max-ops", v); break;
        case O_SYM: a->symmetric = 1; break;
        case O_FAIR: a->fair = 1; break;
        case O_SFIRST: a->c.S_first = number("--S-first", v); break;
        case O_BURST: a->c.burst = number("--burst", v); break;
        default: exit(2);
        }
    }
    if (optind < argc) die(2, "unexpected argument '%s'", argv[optind]);
    if (a->reps < 1) die(2, "%s", "--replicates must be at least 1");
}

/* Schedule from the generator, or from a file (text or binary), into sink
 * s; 0, or -1 with the reason in err. */
static int produce(const args *a, sched_sink *s, char *err, size_t n)
{
    if (a->schedule) {
        FILE *f = strcmp(a->schedule, "-") ? fopen(a->schedule, "rb") : stdin;
        if (!f) return snprintf(err, n, "cannot open schedule %s", a->schedule), -1;
        char why[400] = "";
        int rc = gbin_is_binary(f) ? gbin_read(f, s, why, sizeof why) : goal_read(f, s, why, sizeof why);
        if (f != stdin) fclose(f);
        if (rc) snprintf(err, n, "%s: %s", a->schedule, why);
        return rc;
    }
    if (!a->bench || !a->algo || a->p < 0 || a->size < 0)
        return snprintf(err, n, "give --bench, --algo, -p and --size (or --schedule FILE)"), -1;
    return gen_schedule(a->bench, a->algo, a->p, a->size, a->segment, s, err, n);
}

static int cmd_schedule(const args *a)
{
    if (a->schedule) die(2, "%s", "schedule generates: give --bench, --algo, -p and --size");
    FILE *f = open_out(a->out);
    sched_sink s;
    if (!strcmp(a->format, "goal")) goal_writer(&s, f, a->c.gamma);
    else if (!strcmp(a->format, "bin")) gbin_writer(&s, f);
    else die(2, "--format %s: choose goal or bin", a->format);
    char err[512] = "";
    if (produce(a, &s, err, sizeof err)) die(2, "%s", err);
    if (f != stdout && fclose(f)) die(3, "writing %s failed", a->out);
    return 0;
}

static const char *type_name(int t)
{
    return t == OP_SEND ? "send" : t == OP_RECV ? "recv" : t == OP_CALC ? "calc" : "reduce";
}

static void write_trace(const char *path, const sim_sched *sc, const sim_result *r)
{
    FILE *f = open_out(path);
    fprintf(f, "rank,seq,op,peer,tag,bytes,t_post,t_done\n");
    for (long k = 0; k < sc->nranks; k++) {
        long seq = 0;
        for (uint64_t l = sc->first[k]; l < sc->first[k + 1]; l++) {
            uint32_t i = sc->pos[l];
            if (sc->op[i].type == OP_SEND || sc->op[i].type == OP_RECV)
                fprintf(f, "%ld,%ld,%d,%d,%d,%.0f,%.12g,%.12g\n", k, seq++, sc->op[i].type, sc->op[i].peer,
                        sc->op[i].tag, sc->op[i].value, r->t_start[i], r->t_end[i]);
        }
    }
    if (f != stdout && fclose(f)) die(3, "writing %s failed", path);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int cmd_run(const args *a)
{
    sim_sched sc;
    sched_sink s;
    char err[512] = "";
    sim_sched_sink(&s, &sc, (uint64_t)a->max_ops);
    double t0 = now_s();
    long world = a->p;
    if (a->symmetric) { /* rank 0 stands for every rank (sym.c): the caller checked with probe */
        if (!a->bench || !a->algo || a->p < 2 || a->size < 0 || a->schedule)
            die(2, "%s", "--symmetric takes --bench, --algo, -p (2 or more) and --size");
        if (a->skew || a->dist || a->topo.hosts_per_switch || a->fair)
            die(2, "%s", "--symmetric needs equal costs and starts: no --dist, --skew, --fair or topology");
        if (sym_load(a->bench, a->algo, a->p, a->size, a->segment, &sc, err, sizeof err)) die(2, "%s", err);
    } else {
        if (produce(a, &s, err, sizeof err) && !sc.failed) die(2, "%s", err);
        int rc = sim_sched_finish(&sc, err, sizeof err);
        if (rc) die(rc == -3 ? 4 : 3, "%s", err);
        world = sc.nranks;
    }
    double t_load = now_s() - t0;
    sim_opts o = {.c = a->c, .topo = a->topo, .fair = a->fair, .keep_times = a->trace || a->crit > 0};
    if (a->dist) o.dist = read_dist(a->dist);
    if (a->exchange) o.exchange = read_exchange(a->exchange);
    if (a->fair && a->c.S_first > 0) die(2, "%s", "--S-first takes channels that send one message after the other: not with --fair");
    if (a->c.burst > 0 && (a->fair || a->dist || !(a->c.G > 0)))
        die(2, "%s", "--burst needs --G, and decides each message's time on the wire: not with --dist or --fair");
    if ((a->topo.ranks_per_host > 0) != (a->topo.hosts_per_switch > 0))
        die(2, "%s", "a topology needs both --ranks-per-host and --hosts-per-switch");
    if (a->skew) {
        long n;
        double *v = read_numbers(a->skew, &n);
        if (n < 1) die(2, "%s holds no start times", a->skew);
        if (n == sc.nranks) o.skew = v;
        else o.skew_pool = v, o.nskew_pool = n;
    }
    double *makespans = malloc((size_t)a->reps * sizeof(double));
    sim_result r = {0}, first = {0};
    double t_sim = 0;
    uint64_t events = 0;
    printf("{\"nranks\": %ld, \"simulated_ranks\": %ld, \"nops\": %llu, \"ndeps\": %llu, \"replicates\": [",
           world, sc.nranks, (unsigned long long)sc.nops, (unsigned long long)sc.nedges);
    for (long k = 0; k < a->reps; k++) {
        o.seed = a->seed + (uint64_t)k;
        sim_result *res = k == 0 ? &first : &r;
        double t1 = now_s();
        if (sim_run(&sc, &o, res, err, sizeof err)) {
            fflush(stdout);
            fprintf(stderr, "\nmpiscope-sim: %s\n", err);
            exit(2);
        }
        t_sim += now_s() - t1;
        events += res->events;
        makespans[k] = res->makespan;
        printf("%s{\"seed\": %llu, \"makespan_s\": %.12g, \"finish_mean_s\": %.12g, \"finish_min_s\": %.12g, "
               "\"events\": %llu, \"messages\": %llu, \"unexpected\": %llu, \"rendezvous\": %llu}",
               k ? ", " : "", (unsigned long long)o.seed, res->makespan, res->finish_mean, res->finish_min,
               (unsigned long long)res->events, (unsigned long long)res->messages,
               (unsigned long long)res->unexpected, (unsigned long long)res->rendezvous);
    }
    qsort(makespans, (size_t)a->reps, sizeof *makespans, cmp_double);
    printf("], \"makespan_median_s\": %.12g", a->reps % 2 ? makespans[a->reps / 2]
                                                         : 0.5 * (makespans[a->reps / 2 - 1] + makespans[a->reps / 2]));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf(", \"load_s\": %.6g, \"simulate_s\": %.6g, \"events\": %llu, \"events_per_s\": %.6g, "
           "\"peak_rss_bytes\": %lld",
           t_load, t_sim, (unsigned long long)events, t_sim > 0 ? (double)events / t_sim : 0.0,
           (long long)ru.ru_maxrss * 1024);
    if (a->per_rank) {
        printf(", \"finish_s\": [");
        for (long k = 0; k < sc.nranks; k++) printf("%s%.12g", k ? ", " : "", first.finish[k]);
        printf("]");
    }
    if (a->crit > 0) {
        /* Back from the operation that ends last (of equal ends, the first in
         * index order), along what let each one start or finish. */
        uint64_t last = sc.nops ? sc.pos[0] : 0;
        for (uint64_t l = 1; l < sc.nops; l++)
            if (first.t_end[sc.pos[l]] > first.t_end[last]) last = sc.pos[l];
        uint32_t *logical = sim_sched_logical(&sc);
        if (!logical) die(3, "%s", "out of memory for the critical path");
        printf(", \"critical_path\": [");
        long k = 0;
        for (uint32_t i = sc.nops ? (uint32_t)last : UINT32_MAX; i != UINT32_MAX && k < a->crit;
             i = first.cause[i], k++)
            printf("%s{\"rank\": %u, \"index\": %llu, \"op\": \"%s\", \"peer\": %d, \"value\": %.12g, "
                   "\"start_s\": %.12g, \"end_s\": %.12g}",
                   k ? ", " : "", sim_rank(&sc, &sc.op[i]), (unsigned long long)(logical[i] - sc.first[sim_rank(&sc, &sc.op[i])]),
                   type_name(sc.op[i].type), sc.op[i].peer, sc.op[i].value, first.t_start[i], first.t_end[i]);
        printf("]");
        free(logical);
    }
    printf("}\n");
    if (a->trace) write_trace(a->trace, &sc, &first);
    sim_result_free(&r), sim_result_free(&first), sim_sched_free(&sc);
    free(makespans);
    return fflush(stdout) ? 3 : 0;
}

/* Operation counts and rank symmetry of a generated schedule (sym.c), from a few ranks. */
static int cmd_probe(const args *a)
{
    if (!a->bench || !a->algo || a->p < 1 || a->size < 0) die(2, "%s", "probe takes --bench, --algo, -p and --size");
    sym_info info;
    char err[512] = "";
    if (sym_probe(a->bench, a->algo, a->p, a->size, a->segment, &info, err, sizeof err)) die(2, "%s", err);
    printf("{\"ops_rank0\": %u, \"max_ops_probed\": %u, \"ranks_probed\": %ld, \"symmetric\": %s}\n",
           info.ops_rank0, info.max_ops, info.checked, info.symmetric ? "true" : "false");
    return fflush(stdout) ? 3 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "schedule") && strcmp(argv[1], "run") && strcmp(argv[1], "probe"))) {
        fprintf(stderr, "usage: mpiscope-sim schedule|run|probe [options] (see sim/main.c)\n");
        return 2;
    }
    args a;
    parse(argc - 1, argv + 1, &a);
    if (!strcmp(argv[1], "probe")) return cmd_probe(&a);
    return !strcmp(argv[1], "schedule") ? cmd_schedule(&a) : cmd_run(&a);
}
