/* SPDX-License-Identifier: BSD-3-Clause */
/* A schedule in flat arrays, filled rank by rank, then turned around: the
 * simulator needs, per operation, the operations that wait for it. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "sim.h"

/* Large arrays that events visit in no order: on huge pages where the
 * kernel gives them (fewer TLB misses over gigabytes). */
void *sim_huge_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= (2u << 20)) madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void sim_huge_free(void *p, size_t bytes)
{
    if (p) munmap(p, bytes ? bytes : 1);
}

#define GROW(arr, cap_new) ((arr) = realloc((arr), (size_t)(cap_new) * sizeof *(arr)))

static int grow_ops(sim_sched *sc, uint64_t need)
{
    if (need <= sc->ops_cap) return 0;
    uint64_t c = sc->ops_cap ? sc->ops_cap : 4096;
    while (c < need) c *= 2;
    sim_op *op = sim_huge_alloc((size_t)(c + 1) * sizeof *op);
    if (!op) return -1;
    if (sc->op) memcpy(op, sc->op, (size_t)(sc->ops_cap + 1) * sizeof *op);
    sim_huge_free(sc->op, sc->ops_cap ? (size_t)(sc->ops_cap + 1) * sizeof *op : 0);
    sc->op = op;
    sc->ops_cap = c;
    return 0;
}

static int grow_edges(sim_sched *sc, uint64_t need)
{
    if (need <= sc->edges_cap) return 0;
    uint64_t c = sc->edges_cap ? sc->edges_cap : 4096;
    while (c < need) c *= 2;
    if (!GROW(sc->ea, c) || !GROW(sc->eb, c)) return -1;
    sc->edges_cap = c;
    return 0;
}

static int m_begin(sched_sink *s, long nranks)
{
    sim_sched *sc = s->state;
    uint64_t max_ops = sc->max_ops;
    memset(sc, 0, sizeof *sc);
    sc->max_ops = max_ops;
    sc->nranks = nranks;
    sc->first = calloc((size_t)nranks + 1, sizeof *sc->first);
    return sc->first ? 0 : -1;
}

/* Operations posted together lie close in a rank's order: how far apart a
 * send and its reverse receive are looked for. */
#define EXCHANGE_WINDOW 32

/* Whether send i of r was posted with a receive from its peer: both
 * require the same operations (nothing completed between their posts). */
static int is_exchange(const rank_sched *r, uint32_t i)
{
    const sched_op *o = &r->ops[i];
    uint32_t lo = i > EXCHANGE_WINDOW ? i - EXCHANGE_WINDOW : 0, hi = i + EXCHANGE_WINDOW;
    for (uint32_t j = lo; j <= hi && j < r->nops; j++) {
        const sched_op *q = &r->ops[j];
        if (q->type == OP_RECV && q->peer == o->peer && q->ndeps == o->ndeps &&
            (!o->ndeps || !memcmp(r->deps + q->dep0, r->deps + o->dep0, o->ndeps * sizeof *r->deps)))
            return 1;
    }
    return 0;
}

static int m_rank(sched_sink *s, const rank_sched *r)
{
    sim_sched *sc = s->state;
    uint64_t base = sc->nops;
    if (sc->max_ops && base + r->nops > sc->max_ops) return sc->failed = 3, -1;
    if (base + r->nops >= UINT32_MAX || sc->nedges + r->ndeps >= UINT32_MAX) return sc->failed = 2, -1;
    if (grow_ops(sc, base + r->nops) || grow_edges(sc, sc->nedges + r->ndeps)) return sc->failed = 1, -1;
    sc->first[r->rank] = base;
    for (uint32_t i = 0; i < r->nops; i++) {
        const sched_op *o = &r->ops[i];
        uint64_t g = base + i;
        sc->op[g] = (sim_op){.value = o->value, .peer = o->peer, .tag = (uint16_t)o->tag, .type = o->type,
                             .rank = (uint32_t)r->rank};
        if (o->type == OP_SEND && is_exchange(r, i)) sc->op[g].flags = SIM_EXCHANGE;
        for (uint32_t k = 0; k < o->ndeps; k++) {
            sc->ea[sc->nedges] = (uint32_t)g;
            sc->eb[sc->nedges++] = (uint32_t)(base + r->deps[o->dep0 + k]);
        }
    }
    sc->nops += r->nops;
    sc->first[r->rank + 1] = sc->nops;
    return 0;
}

static int m_end(sched_sink *s) { return 0; }

void sim_sched_sink(sched_sink *s, sim_sched *sc, uint64_t max_ops)
{
    memset(sc, 0, sizeof *sc);
    sc->max_ops = max_ops;
    s->begin = m_begin, s->rank = m_rank, s->end = m_end, s->state = sc;
}

/* Where each operation is held: the k-th operations of all ranks side by
 * side, ranks in order (k-major). Events of one time mostly visit the same
 * step of many ranks, so they walk memory forwards instead of one rank's
 * stretch after another's. */
static uint32_t *layout(const sim_sched *sc)
{
    uint64_t most = 0;
    for (long r = 0; r < sc->nranks; r++)
        if (sc->first[r + 1] - sc->first[r] > most) most = sc->first[r + 1] - sc->first[r];
    uint64_t *next = calloc(most + 1, sizeof *next); /* per step k: the next place */
    uint32_t *pos = malloc((sc->nops ? sc->nops : 1) * sizeof *pos);
    if (!next || !pos) return free(next), free(pos), NULL;
    for (long r = 0; r < sc->nranks; r++)
        for (uint64_t k = 0; k < sc->first[r + 1] - sc->first[r]; k++) next[k + 1]++;
    for (uint64_t k = 1; k <= most; k++) next[k] += next[k - 1];
    for (long r = 0; r < sc->nranks; r++)
        for (uint64_t i = sc->first[r], k = 0; i < sc->first[r + 1]; i++, k++) pos[i] = (uint32_t)next[k]++;
    free(next);
    return pos;
}

int sim_sched_finish(sim_sched *sc, char *err, size_t n)
{
    if (sc->failed == 3) {
        snprintf(err, n, "the schedule has more than %llu operations (--max-ops)", (unsigned long long)sc->max_ops);
        return -3;
    }
    if (sc->failed) {
        snprintf(err, n, sc->failed == 2 ? "the schedule has more than 2^32 operations or dependencies"
                                         : "out of memory holding the schedule");
        return -1;
    }
    if (!sc->op && !sc->nops && grow_ops(sc, 1)) sc->op = NULL;
    uint32_t *at = calloc(sc->nops + 2, sizeof *at);
    sc->dlist = malloc((sc->nedges ? sc->nedges : 1) * sizeof *sc->dlist);
    sc->ndeps = calloc(sc->nops + 1, sizeof *sc->ndeps);
    sc->pos = sc->op ? layout(sc) : NULL;
    if (!at || !sc->dlist || !sc->ndeps || !sc->pos) {
        free(at);
        snprintf(err, n, "out of memory holding the schedule");
        return -1;
    }
    const uint32_t *pos = sc->pos;
    /* Count into at[b + 2], prefix-sum, fill through at[b + 1]: it ends as b's end. */
    for (uint64_t e = 0; e < sc->nedges; e++) at[pos[sc->eb[e]] + 2]++, sc->ndeps[pos[sc->ea[e]]]++;
    for (uint64_t i = 2; i < sc->nops + 2; i++) at[i] += at[i - 1];
    for (uint64_t e = 0; e < sc->nedges; e++) sc->dlist[at[pos[sc->eb[e]] + 1]++] = pos[sc->ea[e]];
    free(sc->ea), free(sc->eb);
    sc->ea = sc->eb = NULL;
    sim_op *op = sim_huge_alloc((size_t)(sc->nops + 1) * sizeof *op);
    if (!op) {
        free(at);
        snprintf(err, n, "out of memory holding the schedule");
        return -1;
    }
    /* The old array is read front to back: what is read is given back as
     * the copy grows, so both are never whole at once. */
    const uint64_t stride = (2u << 20) / sizeof *op; /* a huge page */
    for (uint64_t i = 0; i < sc->nops; i++) {
        op[pos[i]] = sc->op[i];
        if ((i + 1) % stride == 0) madvise(sc->op + i + 1 - stride, stride * sizeof *op, MADV_DONTNEED);
    }
    sim_huge_free(sc->op, (size_t)(sc->ops_cap + 1) * sizeof *op);
    sc->op = op, sc->ops_cap = sc->nops;
    for (uint64_t i = 0; i <= sc->nops; i++) sc->op[i].dstart = at[i];
    free(at);
    for (uint64_t l = 0; l < sc->nops; l++) sc->nroots += !sc->ndeps[pos[l]];
    if (!(sc->roots = malloc((sc->nroots ? sc->nroots : 1) * sizeof *sc->roots))) {
        snprintf(err, n, "out of memory holding the schedule");
        return -1;
    }
    for (uint64_t l = 0, k = 0; l < sc->nops; l++)
        if (!sc->ndeps[pos[l]]) sc->roots[k++] = pos[l];
    return 0;
}

uint32_t *sim_sched_logical(const sim_sched *sc)
{
    uint32_t *l = malloc((sc->nops ? sc->nops : 1) * sizeof *l);
    if (l)
        for (uint64_t i = 0; i < sc->nops; i++) l[sc->pos[i]] = (uint32_t)i;
    return l;
}

void sim_sched_free(sim_sched *sc)
{
    if (sc->op) sim_huge_free(sc->op, (size_t)(sc->ops_cap + 1) * sizeof *sc->op);
    free(sc->first), free(sc->ea), free(sc->eb), free(sc->dlist), free(sc->ndeps), free(sc->pos), free(sc->roots);
    memset(sc, 0, sizeof *sc);
}
