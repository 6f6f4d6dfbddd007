/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank symmetry: when every rank's operations are rank 0's shifted by the
 * rank (the same types, sizes, tags and requirements; each peer moved by
 * the same offset mod p), as in ring and pairwise patterns, every rank runs
 * the same timeline under equal costs and equal starts. Then rank 0 alone is
 * simulated: its send to rank d stands for the message rank -d sends to
 * it, so each send is delivered to rank 0 itself as if from -d mod p. */
#include <stdlib.h>
#include <string.h>
#include "sim.h"

/* Compares every rank it is given with the first one. */
typedef struct {
    long p;
    int have, same;
    uint32_t nops, ndeps;
    sched_op *ops;
    uint32_t *deps;
    uint32_t max_ops;
} cmp_state;

static int c_begin(sched_sink *s, long nranks) { ((cmp_state *)s->state)->p = nranks; return 0; }
static int c_end(sched_sink *s) { return 0; }

static int c_rank(sched_sink *s, const rank_sched *r)
{
    cmp_state *c = s->state;
    if (r->nops > c->max_ops) c->max_ops = r->nops;
    if (!c->have) { /* the reference, with peers as offsets from its rank */
        c->have = 1, c->nops = r->nops, c->ndeps = r->ndeps;
        c->ops = malloc((r->nops ? r->nops : 1) * sizeof *c->ops);
        c->deps = malloc((r->ndeps ? r->ndeps : 1) * sizeof *c->deps);
        if (!c->ops || !c->deps) return -1;
        memcpy(c->ops, r->ops, r->nops * sizeof *c->ops);
        memcpy(c->deps, r->deps, r->ndeps * sizeof *c->deps);
        for (uint32_t i = 0; i < r->nops; i++)
            if (c->ops[i].type <= OP_RECV) c->ops[i].peer = (int32_t)(((long)c->ops[i].peer - r->rank + c->p) % c->p);
        return 0;
    }
    if (r->nops != c->nops || r->ndeps != c->ndeps || memcmp(r->deps, c->deps, r->ndeps * sizeof *c->deps)) {
        c->same = 0;
        return 0;
    }
    for (uint32_t i = 0; i < r->nops && c->same; i++) {
        const sched_op *a = &r->ops[i], *b = &c->ops[i];
        long off = a->type <= OP_RECV ? ((long)a->peer - r->rank + c->p) % c->p : a->peer;
        c->same = a->type == b->type && a->tag == b->tag && a->value == b->value && a->ndeps == b->ndeps &&
                  a->dep0 == b->dep0 && off == b->peer;
    }
    return 0;
}

int sym_probe(const char *bench, const char *algo, long p, long size, long segment, sym_info *out, char *err,
              size_t n)
{
    /* Ranks 0, 1, p/2, p - 1 and a few spread by a fixed stride. */
    long ranks[12], nr = 0;
    long pick[] = {0, 1, p / 2, p - 1, p / 3, (2 * p) / 3, p / 7, (5 * p) / 7, 2, p - 2};
    for (size_t i = 0; i < sizeof pick / sizeof *pick; i++) {
        long r = pick[i];
        int dup = r < 0 || r >= p;
        for (long k = 0; k < nr; k++) dup |= ranks[k] == r;
        if (!dup) ranks[nr++] = r;
    }
    cmp_state c = {.same = 1};
    sched_sink s = {.begin = c_begin, .rank = c_rank, .end = c_end, .state = &c};
    int rc = gen_ranks(bench, algo, p, size, segment, ranks, nr, &s, err, n);
    out->ops_rank0 = c.nops, out->max_ops = c.max_ops, out->symmetric = c.same && p > 1, out->checked = nr;
    free(c.ops), free(c.deps);
    return rc;
}

/* Loads rank 0 into the memory sink as a world of one rank. */
typedef struct { sched_sink *inner; } one_state;

static int o_begin(sched_sink *s, long nranks) { return ((one_state *)s->state)->inner->begin(((one_state *)s->state)->inner, 1); }
static int o_rank(sched_sink *s, const rank_sched *r) { sched_sink *in = ((one_state *)s->state)->inner; return in->rank(in, r); }
static int o_end(sched_sink *s) { return 0; }

int sym_load(const char *bench, const char *algo, long p, long size, long segment, sim_sched *sc, char *err, size_t n)
{
    sched_sink mem, one;
    one_state os = {&mem};
    sim_sched_sink(&mem, sc, 0);
    one = (sched_sink){.begin = o_begin, .rank = o_rank, .end = o_end, .state = &os};
    long zero = 0;
    if (gen_ranks(bench, algo, p, size, segment, &zero, 1, &one, err, n)) return -1;
    if (sim_sched_finish(sc, err, n)) return -1;
    for (uint64_t i = 0; i < sc->nops; i++) {
        sim_op *o = &sc->op[i];
        if (o->type == OP_SEND) o->rank = (uint32_t)((p - o->peer) % p), o->peer = 0;
    }
    return 0;
}
