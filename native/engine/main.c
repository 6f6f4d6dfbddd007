/* SPDX-License-Identifier: BSD-3-Clause */
/* mpiscope-engine: measures and records; never summarizes (that is Python's job).
 * Usage errors exit with 2, failed --check with 3, I/O errors with 4. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "describe.h"
#include "engine.h"
#include "machine.h"
#include "orphan.h"
#include "procsync.h"
#include "../clock/quiet_exit.h"
#include "rawfmt.h"
#include "bench/coll_own.h"
#include "methods/method.h"
#include "../transport/tp.h"

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

static int io_error(engine *e, const char *what)
{
    fprintf(stderr, "mpiscope-engine: rank %d: %s: ", e->rank, what);
    perror(NULL);
    MPI_Abort(e->world, 4);
    return 4;
}

/* What the command line asks for must fit this job; 0, or a message in err. */
static int check_request(const engine *e, const options *o, char *err, size_t n)
{
    if (o->expect_np != e->size) {
        snprintf(err, n,
                 "the job has %d rank(s) but %d were asked for: was the engine started by another MPI "
                 "library's launcher? Build and launch with the same library (--mpi)",
                 e->size, o->expect_np);
        return -1;
    }
    int listed = o->npairs > 0;
    for (int i = 0; i < o->nbenches; i++) {
        const bench_def *def = bench_find(o->benches[i]);
        if (!def) return snprintf(err, n, "unknown benchmark '%s'", o->benches[i]), -1;
        if (e->size < def->min_np)
            return snprintf(err, n, "benchmark '%s' needs at least %d ranks", def->name, def->min_np), -1;
        listed |= def->pairing == PAIRING_LISTED;
    }
    if (coll_own_validate(o, err, n)) return -1;
    for (int i = 0; i < o->nmethods; i++)
        if (!method_find(o->methods[i])) return snprintf(err, n, "unknown method '%s'", o->methods[i]), -1;
    for (int i = 0; listed && i < 2 * o->npairs; i++)
        if (o->pairs[i] >= e->size) return snprintf(err, n, "--pairs names a rank outside the job"), -1;
    return 0;
}

/* Timer (with the injected offset and drift of clock tests) and the global clock. */
static void start_clocks(engine *e, MPI_Comm node)
{
    const options *o = e->o;
    timer_init(&e->t, o->timer, node);
    if (o->inject) {
        double epoch = timer_raw(&e->t);
        MPI_Bcast(&epoch, 1, MPI_DOUBLE, 0, e->world);
        e->t.inj_epoch_s = epoch;
        timer_inject_params(o->seed, e->rank, o->inj_max_offset_s, o->inj_max_drift, &e->t.inj_offset_s,
                            &e->t.inj_drift);
        e->t.injected = 1;
    }
    /* Sharing CPUs makes most round trips slow: take more to find a fast one. */
    int tree = o->clock_sync == CLOCK_SYNC_TREE || (o->clock_sync == CLOCK_SYNC_AUTO && !e->oversubscribed);
    sync_init(&e->sync, &e->t, e->world, e->oversubscribed ? 100 : 20, tree);
    e->sync.serial = e->oversubscribed;
    sync_measure(&e->sync, o->sync_points);
}

/* Message buffers for the largest footprint asked for, and the per-repetition records. */
static int allocate(engine *e)
{
    const options *o = e->o;
    size_t max_bytes = 64;
    for (int i = 0; i < o->nbenches; i++)
        for (int j = 0; j < o->nsizes; j++) {
            size_t f = bench_find(o->benches[i])->footprint((size_t)o->sizes[j], e->size);
            if (f > max_bytes) max_bytes = f;
        }
    if (buffers_init(&e->buf, max_bytes, o->cache_cold, o->cold_region, o->huge_pages)) return -1;
    e->t_start = malloc(sizeof(double) * (size_t)o->reps_max);
    e->t_end = malloc(sizeof(double) * (size_t)o->reps_max);
    e->t_sched = malloc(sizeof(double) * (size_t)o->reps_max);
    e->valid = malloc((size_t)o->reps_max);
    return e->t_start && e->t_end && e->t_sched && e->valid ? 0 : -1;
}

/* Every benchmark x variant x size, in the order asked for (variants
 * inside sizes where the benchmark says so: bench_def.variants_by_size);
 * the methods of --methods right after the first variant at each size. */
static int run_all(engine *e)
{
    const options *o = e->o;
    int done = 0;
    void **states = calloc((size_t)o->nmethods + 1, sizeof *states);
    for (int i = 0; i < o->nbenches; i++) {
        const bench_def *def = bench_find(o->benches[i]);
        int variants = def->nvariants ? def->nvariants(o) : 1, sizes = def->sizeless ? 1 : o->nsizes;
        for (int k = 0; k < variants * sizes; k++) {
            int v = def->variants_by_size ? k % variants : k / sizes;
            int j = def->variants_by_size ? k / variants : k % sizes;
            size_t bytes = def->sizeless ? 0 : (size_t)o->sizes[j];
            if (series_run(e, def, v, bytes)) return -1;
            testhooks_abort_after(&e->hooks, e->rank, e->size, ++done);
            if (v == 0 && methods_at_size(e, def->name, bytes, states)) return -1;
        }
        long zero = 0;
        if (methods_after_bench(e, def->name, def->sizeless ? &zero : o->sizes, sizes, states)) return -1;
    }
    free(states);
    return 0;
}

/* What the transport lab finds on this machine, as one JSON line: whether
 * Cross Memory Attach works (and exactly why not) and the placement classes
 * of its CPUs. Runs without MPI. */
static int probe_transport(void)
{
    char cma[2048], classes[2048], thp[32];
    tp_cma_probe_json(cma, sizeof cma);
    tp_classes_json(classes, sizeof classes);
    thp_mode(thp, sizeof thp);
    /* huge pages for --huge-pages: madvise(MADV_HUGEPAGE) gets them in modes always and madvise */
    printf("{\"cma\": %s, \"placement\": %s, \"thp\": {\"mode\": \"%s\", \"available\": %s}}\n", cma, classes,
           thp, !strcmp(thp, "always") || !strcmp(thp, "madvise") ? "true" : "false");
    return 0;
}

static int wants_describe(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--describe")) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (wants_describe(argc, argv)) return describe_engine(); /* no launcher needed */
    if (argc == 2 && !strcmp(argv[1], "--probe-transport")) return probe_transport(); /* nor here */
    die_with_launcher();
    MPI_Init(&argc, &argv);
    double t = MPI_Wtime();
    engine e = {.world = MPI_COMM_WORLD, .t_first = NAN, .t_last = NAN};
    testhooks_parse(&e.hooks);
    MPI_Comm_rank(e.world, &e.rank);
    MPI_Comm_size(e.world, &e.size);
    options o;
    char err[512];
    if (options_parse(&o, argc, argv, err, sizeof err)) return usage_error(e.rank, err);
    e.o = &o;
    if (check_request(&e, &o, err, sizeof err)) return usage_error(e.rank, err);

    quiet_exit_init(e.world);
    MPI_Comm node;
    MPI_Comm_split_type(e.world, MPI_COMM_TYPE_SHARED, e.rank, MPI_INFO_NULL, &node);
    int node_size;
    MPI_Comm_size(node, &node_size);
    e.oversubscribed = ranks_sharing_cpus(e.world, node_size) > sysconf(_SC_NPROCESSORS_ONLN);
    t = phase_done(&e.ph, PHASE_STARTUP, t);
    start_clocks(&e, node);
    t = phase_done(&e.ph, PHASE_CLOCK, t);
    if (allocate(&e)) return io_error(&e, "allocating buffers and records");

    header_facts facts;
    header_facts_gather(&facts, &e.t);
    if (rawfmt_open(&e, &facts, argc, argv)) return io_error(&e, "creating the raw file");
    if (rawfmt_sync(&e, "before")) return io_error(&e, "writing the raw file");
    t = phase_done(&e.ph, PHASE_STARTUP, t);
    if (run_all(&e)) return io_error(&e, "writing the raw file");
    t = MPI_Wtime();
    sync_measure(&e.sync, o.sync_points);
    if (rawfmt_sync(&e, "after") || raw_close(&e.raw)) return io_error(&e, "finishing the raw file");
    phase_done(&e.ph, PHASE_FINISH, t);
    if (e.rank == 0) rawfmt_timing(&e.ph);
    sync_free(&e.sync);
    buffers_free(&e.buf);
    MPI_Comm_free(&node);
    procsync_barrier(e.world, o.own_barrier);  /* every rank's raw file is closed */
    quiet_exit_barrier();  /* nothing that progresses MPI between this and MPI_Finalize */
    if (e.rank == 0) {     /* what is left may hang in the library: mpiscope stops it then */
        printf("@finalize\n");
        fflush(stdout);
    }
    testhooks_finalize_hang(&e.hooks, e.rank);
    MPI_Finalize();
    return 0;
}
