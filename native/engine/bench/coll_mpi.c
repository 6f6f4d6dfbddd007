/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI library's own collectives. Sizes follow the OSU convention: bytes
 * per rank (per block for gather, scatter, allgather, alltoall and
 * reduce_scatter_block); reductions sum MPI_INT, max(1, bytes/4) of them. */
#include "../bench.h"
#include "coll_own.h"

static long ints(size_t bytes) { return bytes / 4 ? (long)(bytes / 4) : 1; }
static int root_of(const series *s, long rep) { return s->root_rotate ? (int)(rep % s->size) : 0; }

/* Reduction inputs: small values so sums over many ranks never overflow. */
static int ival(long rank, long i, long rep) { return (int)(rank * 1000 + i % 997 + rep % 1000); }
static long isum(const series *s, long i, long rep)
{
    long p = s->size;
    return 1000 * p * (p - 1) / 2 + p * (i % 997 + rep % 1000);
}

static void fill_ints(int *v, long n, long first, long rank, long rep)
{
    for (long i = 0; i < n; i++) v[i] = ival(rank, first + i, rep);
}

static void verify_sums(const series *s, const int *v, long n, long first, long rep, const char *what)
{
    for (long i = 0; i < n; i++)
        if (v[i] + s->corrupt != isum(s, first + i, rep))
            check_fail(s, rep, what, (size_t)i, v[i] + s->corrupt, isum(s, first + i, rep));
}

/* Receive buffers are poisoned before each checked repetition so stale data
 * from an earlier one cannot pass. */
static void poison(void *p, size_t n)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++) c[i] = 0xee;
}

static size_t fp_block(size_t bytes, int np) { (void)np; return bytes < 4 ? 4 : bytes; }
static size_t fp_all(size_t bytes, int np) { return (bytes < 4 ? 4 : bytes) * (size_t)np; }

static void desc_bytes(series *s) { s->count = (long)s->bytes; s->datatype = "MPI_BYTE"; }
static void desc_ints(series *s) { s->count = ints(s->bytes); s->datatype = "MPI_INT"; }
static void desc_none(series *s) { s->count = 0; s->datatype = "none"; }

/* The collectives with algorithms of our own (engine/colls) as variants. */
#define OWN_VARIANTS(bench, kind, desc)                                                                         \
    static void desc_##bench(series *s) { desc(s); coll_own_describe(s, kind); }                                \
    static int nvar_##bench(const struct options *o) { return coll_own_nvariants(o, kind); }                   \
    static const char *var_##bench(const struct options *o, int i) { return coll_own_variant_name(o, kind, i); }
OWN_VARIANTS(bcast, COLL_BCAST, desc_bytes)
OWN_VARIANTS(allreduce, COLL_ALLREDUCE, desc_ints)
OWN_VARIANTS(allgather, COLL_ALLGATHER, desc_bytes)
OWN_VARIANTS(alltoall, COLL_ALLTOALL, desc_bytes)
OWN_VARIANTS(reduce_scatter_block, COLL_REDUCE_SCATTER, desc_ints)

#define BUFS                                                     \
    char *sb = buffers_send(s->buf, fp_all(s->bytes, s->size), rep); \
    char *rb = buffers_recv(s->buf, fp_all(s->bytes, s->size), rep); \
    (void)sb; (void)rb;
#define TIMED(call)                  \
    *t_start = timer_now(s->t);      \
    call;                            \
    *t_end = timer_now(s->t);

static void run_barrier(series *s, long rep, double *t_start, double *t_end)
{
    (void)rep;
    TIMED(MPI_Barrier(s->pc));
}

static void run_bcast(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int root = root_of(s, rep), n = (int)s->bytes;
    char *buf = s->rank == root ? sb : rb;
    if (s->check) {
        if (s->rank == root) check_fill((unsigned char *)buf, s->bytes, root, rep);
        else poison(buf, s->bytes);
    }
    TIMED(s->state ? coll_own_run(s, rep, buf, buf, root) : MPI_Bcast(buf, n, MPI_BYTE, root, s->pc));
    if (s->check) check_verify(s, (unsigned char *)buf, s->bytes, root, rep, "bcast");
}

static void run_reduce(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int root = root_of(s, rep), n = (int)ints(s->bytes);
    if (s->check) {
        fill_ints((int *)sb, n, 0, s->rank, rep);
        poison(rb, (size_t)n * 4);
    }
    TIMED(MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, root, s->pc));
    if (s->check && s->rank == root) verify_sums(s, (int *)rb, n, 0, rep, "reduce");
}

static void run_allreduce(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int n = (int)ints(s->bytes);
    if (s->check) {
        fill_ints((int *)sb, n, 0, s->rank, rep);
        poison(rb, (size_t)n * 4);
    }
    TIMED(s->state ? coll_own_run(s, rep, sb, rb, 0) : MPI_Allreduce(sb, rb, n, MPI_INT, MPI_SUM, s->pc));
    if (s->check) verify_sums(s, (int *)rb, n, 0, rep, "allreduce");
}

static void verify_blocks(series *s, const char *rb, long rep, const char *what)
{
    for (int j = 0; j < s->size; j++)
        check_verify(s, (const unsigned char *)rb + (size_t)j * s->bytes, s->bytes, j, rep, what);
}

static void run_allgather(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int n = (int)s->bytes;
    if (s->check) {
        check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
        poison(rb, s->bytes * (size_t)s->size);
    }
    TIMED(s->state ? coll_own_run(s, rep, sb, rb, 0) : MPI_Allgather(sb, n, MPI_BYTE, rb, n, MPI_BYTE, s->pc));
    if (s->check) verify_blocks(s, rb, rep, "allgather");
}

static void run_gather(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int root = root_of(s, rep), n = (int)s->bytes;
    if (s->check) {
        check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
        poison(rb, s->bytes * (size_t)s->size);
    }
    TIMED(MPI_Gather(sb, n, MPI_BYTE, rb, n, MPI_BYTE, root, s->pc));
    if (s->check && s->rank == root) verify_blocks(s, rb, rep, "gather");
}

static void run_scatter(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int root = root_of(s, rep), n = (int)s->bytes;
    if (s->check) {
        if (s->rank == root)
            for (int j = 0; j < s->size; j++)
                check_fill((unsigned char *)sb + (size_t)j * s->bytes, s->bytes, j, rep);
        poison(rb, s->bytes);
    }
    TIMED(MPI_Scatter(sb, n, MPI_BYTE, rb, n, MPI_BYTE, root, s->pc));
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->rank, rep, "scatter");
}

/* Block from rank `src` to rank `dst` carries pattern (src * 4099 + dst). */
static void run_alltoall(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int n = (int)s->bytes;
    if (s->check) {
        for (int j = 0; j < s->size; j++)
            check_fill((unsigned char *)sb + (size_t)j * s->bytes, s->bytes, (long)s->rank * 4099 + j, rep);
        poison(rb, s->bytes * (size_t)s->size);
    }
    TIMED(s->state ? coll_own_run(s, rep, sb, rb, 0) : MPI_Alltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, s->pc));
    if (s->check)
        for (int j = 0; j < s->size; j++)
            check_verify(s, (unsigned char *)rb + (size_t)j * s->bytes, s->bytes, (long)j * 4099 + s->rank, rep,
                         "alltoall");
}

static void run_reduce_scatter_block(series *s, long rep, double *t_start, double *t_end)
{
    BUFS;
    int n = (int)ints(s->bytes);
    if (s->check) {
        fill_ints((int *)sb, (long)n * s->size, 0, s->rank, rep);
        poison(rb, (size_t)n * 4);
    }
    TIMED(s->state ? coll_own_run(s, rep, sb, rb, 0)
                    : MPI_Reduce_scatter_block(sb, rb, n, MPI_INT, MPI_SUM, s->pc));
    if (s->check) verify_sums(s, (int *)rb, n, (long)s->rank * n, rep, "reduce_scatter_block");
}

const bench_def bench_barrier = {.name = "barrier", .pat = PAT_COLL, .min_np = 1, .sizeless = 1,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .footprint = fp_block, .describe = desc_none, .run_rep = run_barrier};
const bench_def bench_bcast = {.name = "bcast", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .variant_option = "--algo",
                                .footprint = fp_block, .describe = desc_bcast, .run_rep = run_bcast,
                                .nvariants = nvar_bcast, .variant_name = var_bcast, .finish = coll_own_finish,
                                .extra_blocks = coll_own_extra_blocks};
const bench_def bench_reduce = {.name = "reduce", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .footprint = fp_block, .describe = desc_ints, .run_rep = run_reduce};
const bench_def bench_allreduce = {.name = "allreduce", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .variant_option = "--algo",
                                .footprint = fp_block, .describe = desc_allreduce, .run_rep = run_allreduce,
                                .nvariants = nvar_allreduce, .variant_name = var_allreduce, .finish = coll_own_finish,
                                .extra_blocks = coll_own_extra_blocks};
const bench_def bench_allgather = {.name = "allgather", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .variant_option = "--algo",
                                .footprint = fp_all, .describe = desc_allgather, .run_rep = run_allgather,
                                .nvariants = nvar_allgather, .variant_name = var_allgather, .finish = coll_own_finish,
                                .extra_blocks = coll_own_extra_blocks};
const bench_def bench_gather = {.name = "gather", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .footprint = fp_all, .describe = desc_bytes, .run_rep = run_gather};
const bench_def bench_scatter = {.name = "scatter", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .footprint = fp_all, .describe = desc_bytes, .run_rep = run_scatter};
const bench_def bench_alltoall = {.name = "alltoall", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .variant_option = "--algo",
                                .footprint = fp_all, .describe = desc_alltoall, .run_rep = run_alltoall,
                                .nvariants = nvar_alltoall, .variant_name = var_alltoall, .finish = coll_own_finish,
                                .extra_blocks = coll_own_extra_blocks};
const bench_def bench_reduce_scatter_block = {.name = "reduce_scatter_block", .pat = PAT_COLL, .min_np = 1, .sizeless = 0,
                                .rule = RULE_SLOWEST_RANK, .unit = UNIT_SECONDS, .pairing = PAIRING_ALL, .collective = 1,
                                .variant_option = "--algo",
                                .footprint = fp_all, .describe = desc_reduce_scatter_block, .run_rep = run_reduce_scatter_block,
                                .nvariants = nvar_reduce_scatter_block, .variant_name = var_reduce_scatter_block, .finish = coll_own_finish,
                                .extra_blocks = coll_own_extra_blocks};
