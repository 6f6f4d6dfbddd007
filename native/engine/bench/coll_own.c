/* SPDX-License-Identifier: BSD-3-Clause */
/* Glue between the collective benchmarks (coll_mpi.c) and engine/colls. */
#include "coll_own.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json.h"
#include "../options.h"
#include "../rawfmt.h"

/* At most this many trace events per rank and series (37 bytes each). */
#define TRACE_MAX_EVENTS (1L << 19)

typedef struct own_state {
    coll_ctx ctx;
    coll_kind kind;
    size_t count, elem;
} own_state;

/* The i-th distinct variant name (i < 0: how many there are). */
static int resolve(const options *o, coll_kind kind, int want, const char **out)
{
    const char *names[128];
    int n = 0;
#define ADD(x)                                                        \
    do {                                                              \
        const char *name_ = (x);                                      \
        int seen_ = 0;                                                \
        for (int j_ = 0; j_ < n; j_++) seen_ |= !strcmp(names[j_], name_); \
        if (!seen_ && n < 128) names[n++] = name_;                    \
    } while (0)
    if (!o->nalgos) ADD("mpi");
    for (int i = 0; i < o->nalgos; i++) {
        const char *item = o->algos[i];
        if (!strcmp(item, "all")) {
            ADD("mpi");
            for (int k = 0; k < coll_count(); k++)
                if (coll_at(k)->kind == kind) ADD(coll_at(k)->name);
        } else if (!strcmp(item, "mpi")) {
            ADD("mpi");
        } else if (coll_find(kind, item)) {
            ADD(coll_find(kind, item)->name);
        }
    }
#undef ADD
    if (!n) names[n++] = "mpi";
    if (want >= 0 && want < n) *out = names[want];
    return n;
}

int coll_own_nvariants(const options *o, coll_kind kind) { return resolve(o, kind, -1, NULL); }

const char *coll_own_variant_name(const options *o, coll_kind kind, int i)
{
    const char *name = "mpi";
    resolve(o, kind, i, &name);
    return name;
}

int coll_own_validate(const options *o, char *err, size_t n)
{
    int any = 0;
    for (int b = 0; b < o->nbenches; b++) any |= coll_kind_of_bench(o->benches[b]) >= 0;
    for (int i = 0; i < o->nalgos; i++) {
        const char *item = o->algos[i];
        if (!strcmp(item, "all") || !strcmp(item, "mpi")) continue;
        if (!any) {
            snprintf(err, n, "--algo %s: none of the benchmarks asked for has algorithms of its own "
                             "(allgather, allreduce, reduce_scatter_block, bcast and alltoall have)", item);
            return -1;
        }
        /* A name applies to the collectives that have it; it must fit one. */
        int found = 0;
        for (int b = 0; b < o->nbenches; b++) {
            int kind = coll_kind_of_bench(o->benches[b]);
            found |= kind >= 0 && coll_find((coll_kind)kind, item) != NULL;
        }
        if (found) continue;
        size_t used = (size_t)snprintf(err, n, "--algo %s: no benchmark asked for has an algorithm '%s'; valid: mpi, all",
                                       item, item);
        for (int b = 0; b < o->nbenches && used < n; b++) {
            int kind = coll_kind_of_bench(o->benches[b]);
            if (kind < 0) continue;
            char names[512];
            coll_names((coll_kind)kind, names, sizeof names);
            used += (size_t)snprintf(err + used, n - used, "; %s: %s", o->benches[b], names);
        }
        return -1;
    }
    return 0;
}

void coll_own_describe(series *s, coll_kind kind)
{
    if (!strcmp(s->algo, "mpi")) return;
    const coll_algo *a = coll_find(kind, s->algo);
    own_state *st = calloc(1, sizeof *st);
    if (!a || !st) {
        free(st);
        s->skip = a ? "out of memory" : "unknown algorithm";
        return;
    }
    s->state = st;
    st->kind = kind;
    st->elem = !strcmp(s->datatype, "MPI_INT") ? sizeof(int) : 1;
    st->count = (size_t)s->count;
    const options *o = s->o;
    long events = 0;
    if (o->trace) {
        long per = coll_events_per_call(a, st->count, st->elem, s->size, (size_t)o->segment);
        events = o->reps_max < TRACE_MAX_EVENTS / per ? per * o->reps_max : TRACE_MAX_EVENTS;
    }
    if (coll_ctx_init(&st->ctx, s->pc, a, st->count, st->elem, (size_t)o->segment, s->t, events)) {
        s->skip = "out of memory for the algorithm's buffers";
        return;
    }
    if (kind == COLL_BCAST && !strcmp(a->name, "pipelined_chain"))
        rawfmt_params_segment(s, st->ctx.segment);
}

int coll_own_run(series *s, long rep, const void *sbuf, void *rbuf, int root)
{
    own_state *st = s->state;
    coll_args a = {.sbuf = sbuf, .rbuf = rbuf, .count = st->count, .elem = st->elem, .op = &coll_sum_int,
                   .root = root};
    coll_run(&st->ctx, s->measuring ? rep : -1, &a);
    return MPI_SUCCESS;
}

static const char *const bench_of_kind[COLL_KINDS] = {"allgather", "allreduce", "reduce_scatter_block", "bcast",
                                                      "alltoall"};

int coll_own_extra_blocks(series *s, struct rawfile *raw, long reps)
{
    own_state *st = s->state;
    if (!st || !st->ctx.trace) return 0;
    return rawfmt_trace(raw, s, bench_of_kind[st->kind], st->ctx.trace, reps);
}

void coll_own_finish(series *s)
{
    own_state *st = s->state;
    if (st) coll_ctx_free(&st->ctx); /* the engine frees s->state itself */
}
