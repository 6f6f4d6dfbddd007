/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks every algorithm of the registry (engine/colls) against the MPI
 * library's own collective on the same input: byte patterns for allgather,
 * bcast and alltoall, integer sums for allreduce and reduce_scatter (block).
 * Each case runs untraced and traced (the traced path waits differently),
 * three times on one context (no state may leak from one call to the next).
 *
 *   mpirun -n P colls-check [COUNT ...]     (default counts: 0 1 7 1000 100003)
 *
 * Rank 0 prints "ok <collective> <algorithm> p=<P> counts=<n>" per algorithm,
 * or "FAIL ..." lines; the exit code is 1 if anything differed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../colls/colls.h"
#include "../testhooks.h"

static unsigned char byte_of(int rank, size_t i, int salt) { return (unsigned char)(rank * 131 + i * 7 + salt * 29 + i / 251); }
static int int_of(int rank, size_t i, int salt) { return (int)((rank + 1) * 1009 + (long)(i % 65521) * 3 - salt * 17); }

typedef struct bufs {
    char *s, *r, *want;
    int corrupt; /* test hook MPISCOPE_TEST_CORRUPT (docs/reference/test-hooks.md) */
} bufs;

/* Runs `a` (traced or not) three times on one context, each time against
 * MPI's collective on the same input; returns the number of runs that
 * differed on this rank. */
static size_t one_case(const coll_algo *a, size_t count, int root, int traced, const bufs *b, MPI_Comm comm,
                       const timer *t)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int reduction = a->kind == COLL_ALLREDUCE || a->kind == COLL_REDUCE_SCATTER;
    size_t elem = reduction ? sizeof(int) : 1, sn, rn, failed = 0;
    switch (a->kind) {
    case COLL_ALLGATHER: sn = count, rn = (size_t)p * count; break;
    case COLL_ALLREDUCE: sn = rn = count; break;
    case COLL_REDUCE_SCATTER: sn = (size_t)p * count, rn = count; break;
    case COLL_BCAST: sn = rn = count; break;
    default: sn = rn = (size_t)p * count; break;
    }
    coll_ctx c;
    long events = traced ? 3 * coll_events_per_call(a, count, elem, p, 0) : 0;
    if (coll_ctx_init(&c, comm, a, count, elem, 0, t, events)) {
        fprintf(stderr, "colls-check: out of memory\n");
        MPI_Abort(comm, 2);
    }
    for (int call = 0; call < 3; call++) {
        int salt = root + 7 * call;
        for (size_t i = 0; i < sn; i++) {
            if (reduction) ((int *)b->s)[i] = int_of(rank, i, salt);
            else b->s[i] = (char)byte_of(rank, i, salt);
        }
        memset(b->r, 0xee, rn * elem);
        memset(b->want, 0xdd, rn * elem);
        int n = (int)count;
        switch (a->kind) {
        case COLL_ALLGATHER: MPI_Allgather(b->s, n, MPI_BYTE, b->want, n, MPI_BYTE, comm); break;
        case COLL_ALLREDUCE: MPI_Allreduce(b->s, b->want, n, MPI_INT, MPI_SUM, comm); break;
        case COLL_REDUCE_SCATTER: MPI_Reduce_scatter_block(b->s, b->want, n, MPI_INT, MPI_SUM, comm); break;
        case COLL_BCAST:
            memcpy(b->want, b->s, count);
            MPI_Bcast(b->want, n, MPI_BYTE, root, comm);
            if (rank == root) memcpy(b->r, b->s, count); /* bcast works in place */
            break;
        default: MPI_Alltoall(b->s, n, MPI_BYTE, b->want, n, MPI_BYTE, comm); break;
        }
        coll_args args = {.sbuf = b->s, .rbuf = b->r, .count = count, .elem = elem, .op = &coll_sum_int,
                          .root = root};
        coll_run(&c, call, &args);
        /* Test-only: proves that a wrong result is noticed. */
        if (b->corrupt && rank == 0 && rn) b->r[0] ^= 1;
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < rn * elem; i++)
            if (b->r[i] != b->want[i] && !bad++) first = i;
        if (bad)
            fprintf(stderr,
                    "FAIL %s %s p=%d count=%zu root=%d traced=%d call=%d rank=%d: %zu bytes differ, first at byte %zu\n",
                    coll_kind_name(a->kind), a->name, p, count, root, traced, call, rank, bad, first);
        failed += bad > 0;
    }
    if (traced && c.trace->dropped) {
        fprintf(stderr, "colls-check: %s/%s dropped trace events\n", coll_kind_name(a->kind), a->name);
        MPI_Abort(comm, 2);
    }
    coll_ctx_free(&c);
    return failed;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    size_t counts[64] = {0, 1, 7, 1000, 100003};
    int ncounts = 5;
    if (argc > 1) {
        ncounts = 0;
        for (int i = 1; i < argc && ncounts < 64; i++) counts[ncounts++] = (size_t)strtoull(argv[i], NULL, 10);
    }
    size_t most = 1;
    for (int i = 0; i < ncounts; i++)
        if (counts[i] > most) most = counts[i];
    size_t bytes = (size_t)p * most * sizeof(int);
    testhooks hooks;
    testhooks_parse(&hooks);
    bufs b = {malloc(bytes), malloc(bytes), malloc(bytes), hooks.corrupt};
    timer t = {.kind = TIMER_CLOCK};
    long failures = 0;
    for (int i = 0; i < coll_count(); i++) {
        const coll_algo *a = coll_at(i);
        int roots[3] = {0, p / 2, p - 1}, nroots = a->kind == COLL_BCAST ? 3 : 1;
        long bad = 0;
        for (int k = 0; k < ncounts; k++)
            for (int r = 0; r < nroots; r++) {
                if (r && roots[r] == roots[r - 1]) continue;
                for (int traced = 0; traced < 2; traced++)
                    bad += (long)one_case(a, counts[k], roots[r], traced, &b, comm, &t) > 0;
            }
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, comm);
        failures += bad;
        if (rank == 0) {
            printf("%s %s %s p=%d counts=%d\n", bad ? "FAIL" : "ok", coll_kind_name(a->kind), a->name, p, ncounts);
            fflush(stdout);
        }
    }
    free(b.s), free(b.r), free(b.want);
    MPI_Finalize();
    return failures ? 1 : 0;
}
