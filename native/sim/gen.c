/* SPDX-License-Identifier: BSD-3-Clause */
/* The schedule generator: runs one of engine/colls' algorithms, unchanged,
 * once per rank against the recording backend (record.c), and hands each
 * rank's operations to a sink. Buffers are reserved, not backed: only the
 * pages an algorithm copies into are ever touched. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "../engine/colls/colls.h"
#include "record.h"

static void reduce_recorded(void *inout, const void *in, size_t count) { rec_reduce((double)count * sizeof(int)); }

/* The benchmarks' reduction (sum of ints), recorded instead of computed. */
static const coll_op recorded_sum = {.name = "sum_int", .elem = sizeof(int), .type = MPI_INT,
                                     .combine = reduce_recorded};

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* The ranks `ranks[0..nr)` (all of them, in order, when ranks is NULL). */
int gen_ranks(const char *bench, const char *algo, long p, long size, long segment, const long *ranks, long nr,
              sched_sink *s, char *err, size_t n)
{
    int kind = coll_kind_of_bench(bench);
    if (kind < 0) {
        snprintf(err, n, "--bench %s has no algorithms of our own; choose allgather, allreduce, "
                         "reduce_scatter_block, bcast or alltoall", bench);
        return -1;
    }
    const coll_algo *a = coll_find((coll_kind)kind, algo);
    if (!a) {
        char names[512];
        coll_names((coll_kind)kind, names, sizeof names);
        snprintf(err, n, "--algo %s: %s has no such algorithm; choose from %s", algo, bench, names);
        return -1;
    }
    if (p < 1 || p > SCHED_MAX_RANKS) {
        snprintf(err, n, "-p %ld: the generator takes 1 to %ld ranks", p, SCHED_MAX_RANKS);
        return -1;
    }
    if (size < 0) {
        snprintf(err, n, "--size %ld must not be negative", size);
        return -1;
    }
    /* What the engine's benchmark passes (engine/bench/coll_mpi.c, coll_own.c). */
    int ints = kind == COLL_ALLREDUCE || kind == COLL_REDUCE_SCATTER;
    size_t elem = ints ? sizeof(int) : 1, count = ints ? (size / 4 ? (size_t)size / 4 : 1) : (size_t)size;
    size_t block = count * elem, whole = (size_t)p * block;
    coll_ctx c;
    memset(&c, 0, sizeof c);
    c.comm = MPI_COMM_WORLD, c.size = (int)p, c.algo = a;
    c.segment = segment > 0 ? (size_t)segment : COLL_DEFAULT_SEGMENT;
    c.cap = 2 * c.size + 16;
    c.scratch_bytes = a->scratch ? a->scratch(count, elem, c.size) : 0;
    void *sbuf = reserve(whole), *rbuf = reserve(whole);
    c.scratch = reserve(c.scratch_bytes);
    c.offs = reserve(sizeof(size_t) * ((size_t)p + 1));
    c.ints = reserve(sizeof(int) * ((size_t)p + 1));
    c.reqs = reserve(sizeof(MPI_Request) * (size_t)c.cap);
    c.evs = reserve(sizeof(int) * (size_t)c.cap);
    c.idx = reserve(sizeof(int) * (size_t)c.cap);
    if (!sbuf || !rbuf || !c.scratch || !c.offs || !c.ints || !c.reqs || !c.evs || !c.idx) {
        snprintf(err, n, "cannot reserve the algorithm's buffers (%zu bytes per buffer)", whole);
        return -1;
    }
    for (int i = 0; i < c.cap; i++) c.reqs[i] = MPI_REQUEST_NULL, c.evs[i] = -1;
    coll_args args = {.sbuf = sbuf, .rbuf = rbuf, .count = count, .elem = elem, .op = &recorded_sum, .root = 0};
    int rc = s->begin(s, p);
    if (!ranks) nr = p;
    for (long k = 0; k < nr && !rc; k++) {
        long r = ranks ? ranks[k] : k;
        c.rank = (int)r;
        rec_begin_rank(r, p);
        coll_run(&c, 0, &args);
        rank_sched rs;
        rec_end_rank(&rs);
        rc = s->rank(s, &rs);
    }
    if (!rc) rc = s->end(s);
    munmap(sbuf, whole ? whole : 1), munmap(rbuf, whole ? whole : 1);
    munmap(c.scratch, c.scratch_bytes ? c.scratch_bytes : 1);
    munmap(c.offs, sizeof(size_t) * ((size_t)p + 1)), munmap(c.ints, sizeof(int) * ((size_t)p + 1));
    munmap(c.reqs, sizeof(MPI_Request) * (size_t)c.cap), munmap(c.evs, sizeof(int) * (size_t)c.cap);
    munmap(c.idx, sizeof(int) * (size_t)c.cap);
    if (rc) snprintf(err, n, "writing the schedule failed");
    return rc;
}

int gen_schedule(const char *bench, const char *algo, long p, long size, long segment, sched_sink *s, char *err,
                 size_t n)
{
    return gen_ranks(bench, algo, p, size, segment, NULL, 0, s, err, n);
}
