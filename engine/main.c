/* mpiscope-engine: measures and records; never summarizes (that is Python's job).
 * Usage errors exit with 2, failed --check with 3, I/O errors with 4. */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "json.h"
#include "machine.h"
#include "quiet_exit.h"
#include "bench/coll_own.h"

static int usage_error(int rank, const char *msg)
{
    if (rank == 0) {
        char names[512];
        bench_list(names, sizeof names);
        fprintf(stderr, "mpiscope-engine: usage error: %s\n(benchmarks: %s)\n", msg, names);
    }
    MPI_Finalize();
    return 2;
}

static void cpu_list(char *out, size_t n)
{
    cpu_set_t set;
    size_t used = 0;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set)) return;
    for (int c = 0; c < CPU_SETSIZE && used < n; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set)) end++;
        used += (size_t)snprintf(out + used, n - used, used ? ",%d" : "%d", c);
        if (end > c && used < n) used += (size_t)snprintf(out + used, n - used, "-%d", end);
        c = end;
    }
}

static char *header_json(engine *e, int argc, char **argv)
{
    char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING], cpus[1024];
    int len, major, minor;
    MPI_Get_processor_name(host, &len);
    MPI_Get_library_version(lib, &len);
    while (len > 0 && (lib[len - 1] == '\n' || lib[len - 1] == ' ')) lib[--len] = 0;
    MPI_Get_version(&major, &minor);
    cpu_list(cpus, sizeof cpus);
    char version[16];
    snprintf(version, sizeof version, "%d.%d", major, minor);
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_int(&b, "schema_version", RAW_SCHEMA_VERSION);
    sb_key_int(&b, "rank", e->rank);
    sb_key_int(&b, "size", e->size);
    sb_key_int(&b, "launch", e->o->launch);
    sb_key_str(&b, "host", host);
    sb_key_str(&b, "cpus", cpus);
    sb_key_str(&b, "mpi_library", lib);
    sb_key_str(&b, "mpi_version", version);
    sb_printf(&b, ", \"timer\": {");
    sb_key_str(&b, "name", timer_name(e->t.kind));
    sb_key_num(&b, "cost_s", e->t.cost_s);
    sb_key_num(&b, "resolution_s", e->t.resolution_s);
    sb_key_num(&b, "freq_hz", e->t.kind == TIMER_TSC ? 1.0 / e->t.tsc_period_s : NAN);
    sb_printf(&b, "}");
    /* Every timer's cost and resolution, for choosing between them. */
    sb_printf(&b, ", \"timers\": {");
    for (int k = TIMER_TSC; k <= TIMER_WTIME; k++) {
        timer probe;
        timer_measure(&probe, (timer_kind)k, e->t.tsc_period_s);
        sb_printf(&b, "%s\"%s\": {", k == TIMER_TSC ? "" : ", ", timer_name((timer_kind)k));
        sb_key_num(&b, "cost_s", probe.cost_s);
        sb_key_num(&b, "resolution_s", probe.resolution_s);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "}");
    sb_key_str(&b, "sync_method", e->o->sync_window ? "window" : "barrier");
    sb_key_str(&b, "clock_sync", e->sync.tree ? "tree" : "star");
    sb_key_str(&b, "cache", e->o->cache_cold ? "cold" : "warm");
    sb_key_int(&b, "cold_region_bytes", e->o->cache_cold ? (long long)e->buf.region : 0);
    sb_key_int(&b, "seed", (long long)e->o->seed);
    sb_key_int(&b, "oversubscribed", e->oversubscribed);
    if (e->t.injected) {
        sb_printf(&b, ", \"inject\": {");
        sb_key_num(&b, "offset_s", e->t.inj_offset_s);
        sb_key_num(&b, "drift", e->t.inj_drift);
        sb_key_num(&b, "epoch_s", e->t.inj_epoch_s);
        sb_printf(&b, "}");
    } else {
        sb_printf(&b, ", \"inject\": null");
    }
    sb_printf(&b, ", \"argv\": [");
    for (int i = 0; i < argc; i++) {
        if (i) sb_printf(&b, ", ");
        sb_str(&b, argv[i]);
    }
    sb_printf(&b, "]");
    sb_key_num(&b, "start_unix", (double)time(NULL));
    sb_printf(&b, "}");
    return b.s;
}

/* Rank 0's injected clock at the moment this rank's clock reads `local`. */
static double true_global(const engine *e, double local)
{
    const options *o = e->o;
    double o0, d0;
    timer_inject_params(o->seed, 0, o->inj_max_offset_s, o->inj_max_drift, &o0, &d0);
    double E = e->t.inj_epoch_s;
    double raw = (local - e->t.inj_offset_s + e->t.inj_drift * E) / (1.0 + e->t.inj_drift);
    return raw + o0 + d0 * (raw - E);
}

static int write_sync_block(engine *e, const char *phase)
{
    const clock_model *m = &e->sync.model;
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "kind", "sync");
    sb_key_str(&b, "phase", phase);
    sb_key_int(&b, "parent", e->sync.parent);
    sb_printf(&b, ", \"model\": {");
    sb_key_num(&b, "offset_s", m->offset_s);
    sb_key_num(&b, "drift", m->drift);
    sb_key_num(&b, "ref_s", m->ref_s);
    sb_printf(&b, "}");
    sb_key_num(&b, "residual_s", m->residual_s);
    sb_key_num(&b, "cost_s", e->sync.cost_s);
    sb_printf(&b, ", \"points\": [");
    for (int i = 0; i < e->sync.npoints; i++) {
        const sync_point *p = &e->sync.points[i];
        sb_printf(&b, "%s[%.17g, %.17g, %.17g]", i ? ", " : "", p->local_s, p->offset_s, p->rtt_s);
    }
    sb_printf(&b, "]");
    if (e->t.injected && !strcmp(phase, "after")) {
        sb_printf(&b, ", \"recovery_error_s\": {");
        sb_key_num(&b, "start", fabs(sync_to_global(m, e->t_first) - true_global(e, e->t_first)));
        sb_key_num(&b, "end", fabs(sync_to_global(m, e->t_last) - true_global(e, e->t_last)));
        sb_printf(&b, "}");
    }
    sb_printf(&b, "}");
    int rc = raw_block(&e->raw, b.s, 0, NULL, NULL, NULL, NULL);
    sb_free(&b);
    return rc;
}

/* Test-only: MPISCOPE_TEST_ABORT_AFTER=K kills rank MPISCOPE_TEST_ABORT_RANK
 * (default: the last) after its K-th series, to exercise crash handling. */
static void maybe_test_abort(const engine *e, int series_done)
{
    const char *after = getenv("MPISCOPE_TEST_ABORT_AFTER"), *rank = getenv("MPISCOPE_TEST_ABORT_RANK");
    int victim = rank ? atoi(rank) : e->size - 1;
    if (after && atoi(after) == series_done && e->rank == victim) {
        fprintf(stderr, "mpiscope-engine: rank %d aborting on purpose (MPISCOPE_TEST_ABORT_AFTER)\n", e->rank);
        fflush(stderr);
        abort();
    }
}

static int io_error(engine *e, const char *what)
{
    fprintf(stderr, "mpiscope-engine: rank %d: %s: ", e->rank, what);
    perror(NULL);
    MPI_Abort(e->world, 4);
    return 4;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    engine e = {.world = MPI_COMM_WORLD, .t_first = NAN, .t_last = NAN};
    MPI_Comm_rank(e.world, &e.rank);
    MPI_Comm_size(e.world, &e.size);
    options o;
    char err[512];
    if (options_parse(&o, argc, argv, err, sizeof err)) return usage_error(e.rank, err);
    e.o = &o;
    if (o.expect_np != e.size) {
        snprintf(err, sizeof err,
                 "the job has %d rank(s) but %d were asked for: was the engine started by another MPI "
                 "library's launcher? Build and launch with the same library (--mpi)",
                 e.size, o.expect_np);
        return usage_error(e.rank, err);
    }
    for (int i = 0; i < o.nbenches; i++) {
        const bench_def *def = bench_find(o.benches[i]);
        if (!def) {
            snprintf(err, sizeof err, "unknown benchmark '%s'", o.benches[i]);
            return usage_error(e.rank, err);
        }
        if (e.size < def->min_np) {
            snprintf(err, sizeof err, "benchmark '%s' needs at least %d ranks", def->name, def->min_np);
            return usage_error(e.rank, err);
        }
    }
    if (coll_own_validate(&o, err, sizeof err)) return usage_error(e.rank, err);
    if (!strcmp(o.benches[0], "pairs") || o.npairs) {
        for (int i = 0; i < 2 * o.npairs; i++)
            if (o.pairs[i] >= e.size) return usage_error(e.rank, "--pairs names a rank outside the job");
    }

    quiet_exit_init(e.world);
    MPI_Comm node;
    MPI_Comm_split_type(e.world, MPI_COMM_TYPE_SHARED, e.rank, MPI_INFO_NULL, &node);
    int node_size;
    MPI_Comm_size(node, &node_size);
    e.oversubscribed = ranks_sharing_cpus(e.world, node_size) > sysconf(_SC_NPROCESSORS_ONLN);
    timer_init(&e.t, o.timer, node);
    if (o.inject) {
        double epoch = timer_raw(&e.t);
        MPI_Bcast(&epoch, 1, MPI_DOUBLE, 0, e.world);
        e.t.inj_epoch_s = epoch;
        timer_inject_params(o.seed, e.rank, o.inj_max_offset_s, o.inj_max_drift, &e.t.inj_offset_s, &e.t.inj_drift);
        e.t.injected = 1;
    }
    /* Sharing CPUs makes most round trips slow: take more to find a fast one. */
    int tree = o.clock_sync == CLOCK_SYNC_TREE || (o.clock_sync == CLOCK_SYNC_AUTO && !e.oversubscribed);
    sync_init(&e.sync, &e.t, e.world, e.oversubscribed ? 100 : 20, tree);
    sync_measure(&e.sync, o.sync_points);

    size_t max_bytes = 64;
    for (int i = 0; i < o.nbenches; i++)
        for (int j = 0; j < o.nsizes; j++) {
            size_t f = bench_find(o.benches[i])->footprint((size_t)o.sizes[j], e.size);
            if (f > max_bytes) max_bytes = f;
        }
    if (buffers_init(&e.buf, max_bytes, o.cache_cold, o.cold_region)) return io_error(&e, "allocating buffers");
    e.t_start = malloc(sizeof(double) * (size_t)o.reps_max);
    e.t_end = malloc(sizeof(double) * (size_t)o.reps_max);
    e.t_sched = malloc(sizeof(double) * (size_t)o.reps_max);
    e.valid = malloc((size_t)o.reps_max);
    if (!e.t_start || !e.t_end || !e.t_sched || !e.valid) return io_error(&e, "allocating record arrays");

    char *header = header_json(&e, argc, argv);
    if (raw_open(&e.raw, o.out, e.rank, header)) return io_error(&e, "creating the raw file");
    free(header);
    if (write_sync_block(&e, "before")) return io_error(&e, "writing the raw file");

    int done = 0;
    for (int i = 0; i < o.nbenches; i++) {
        const bench_def *def = bench_find(o.benches[i]);
        int variants = def->nvariants ? def->nvariants(&o) : 1;
        for (int v = 0; v < variants; v++)
            for (int j = 0; j < (def->sizeless ? 1 : o.nsizes); j++) {
                if (series_run(&e, def, v, def->sizeless ? 0 : (size_t)o.sizes[j]))
                    return io_error(&e, "writing the raw file");
                maybe_test_abort(&e, ++done);
            }
    }

    sync_measure(&e.sync, o.sync_points);
    if (write_sync_block(&e, "after") || raw_close(&e.raw)) return io_error(&e, "finishing the raw file");
    sync_free(&e.sync);
    buffers_free(&e.buf);
    MPI_Comm_free(&node);
    quiet_exit_barrier();  /* nothing that progresses MPI between this and MPI_Finalize */
    MPI_Finalize();
    return 0;
}
