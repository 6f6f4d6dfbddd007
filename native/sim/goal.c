/* SPDX-License-Identifier: BSD-3-Clause */
/* GOAL text (the schedule format of LogGOPSim and ATLAHS):
 *   num_ranks 2
 *   rank 0 {
 *   l0: send 1024b to 1 tag 8000
 *   l1: calc 1500
 *   l1 requires l0
 *   }
 * Sizes in bytes, calc in nanoseconds. A reduction is written as the calc
 * of its bytes times gamma (the binary form keeps the bytes instead). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "schedule.h"

typedef struct { FILE *f; double gamma; } goal_out;

static int w_begin(sched_sink *s, long nranks)
{
    goal_out *g = s->state;
    return fprintf(g->f, "num_ranks %ld\n", nranks) < 0;
}

static int w_rank(sched_sink *s, const rank_sched *r)
{
    goal_out *g = s->state;
    FILE *f = g->f;
    fprintf(f, "\nrank %ld {\n", r->rank);
    for (uint32_t i = 0; i < r->nops; i++) {
        const sched_op *o = &r->ops[i];
        if (o->type == OP_SEND) fprintf(f, "l%u: send %.0fb to %d tag %d\n", i, o->value, o->peer, o->tag);
        else if (o->type == OP_RECV) fprintf(f, "l%u: recv %.0fb from %d tag %d\n", i, o->value, o->peer, o->tag);
        else {
            double s_ = o->type == OP_CALC ? o->value : o->value * g->gamma;
            fprintf(f, "l%u: calc %.0f\n", i, s_ * 1e9);
        }
        for (uint32_t k = 0; k < o->ndeps; k++) fprintf(f, "l%u requires l%u\n", i, r->deps[o->dep0 + k]);
    }
    return fputs("}\n", f) < 0;
}

static int w_end(sched_sink *s) { return fflush(((goal_out *)s->state)->f) != 0; }

void goal_writer(sched_sink *s, FILE *f, double gamma)
{
    static goal_out g;
    g.f = f, g.gamma = gamma;
    s->begin = w_begin, s->rank = w_rank, s->end = w_end, s->state = &g;
}

/* ------------------------------------------------------------------ reading */

/* Labels of one rank: an open-addressing table of label -> op index. */
typedef struct { char **key; uint32_t *val; size_t cap, n; } labels;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static void labels_clear(labels *t)
{
    for (size_t i = 0; i < t->cap; i++) free(t->key[i]), t->key[i] = NULL;
    t->n = 0;
}

static long labels_find(const labels *t, const char *k)
{
    if (!t->cap) return -1;
    for (size_t i = hash_str(k) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (!t->key[i]) return -1;
        if (!strcmp(t->key[i], k)) return t->val[i];
    }
}

static int labels_put(labels *t, const char *k, uint32_t v)
{
    if (2 * (t->n + 1) > t->cap) {
        labels old = *t;
        t->cap = old.cap ? 2 * old.cap : 1024;
        t->key = calloc(t->cap, sizeof *t->key), t->val = malloc(t->cap * sizeof *t->val), t->n = 0;
        if (!t->key || !t->val) return -1;
        for (size_t i = 0; i < old.cap; i++)
            if (old.key[i]) {
                size_t j = hash_str(old.key[i]) & (t->cap - 1);
                while (t->key[j]) j = (j + 1) & (t->cap - 1);
                t->key[j] = old.key[i], t->val[j] = old.val[i], t->n++;
            }
        free(old.key), free(old.val);
    }
    size_t i = hash_str(k) & (t->cap - 1);
    while (t->key[i]) {
        if (!strcmp(t->key[i], k)) return -2;
        i = (i + 1) & (t->cap - 1);
    }
    t->key[i] = strdup(k), t->val[i] = v, t->n++;
    return t->key[i] ? 0 : -1;
}

/* One rank's operations being read; deps collected as (op, required) pairs
 * and grouped per op when the rank closes. */
typedef struct {
    sched_op *ops;
    size_t nops, cap;
    uint32_t (*pairs)[2];
    size_t npairs, pcap;
    uint32_t *deps;
    size_t dcap;
} rank_buf;

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static int flush_rank(rank_buf *b, long rank, sched_sink *s)
{
    qsort(b->pairs, b->npairs, sizeof *b->pairs, cmp_pair);
    if (b->npairs > b->dcap) {
        b->dcap = b->npairs;
        b->deps = realloc(b->deps, b->dcap * sizeof *b->deps);
        if (!b->deps) return -1;
    }
    for (size_t i = 0; i < b->nops; i++) b->ops[i].ndeps = 0, b->ops[i].dep0 = 0;
    for (size_t k = 0; k < b->npairs; k++) {
        sched_op *o = &b->ops[b->pairs[k][0]];
        if (!o->ndeps) o->dep0 = (uint32_t)k;
        o->ndeps++;
        b->deps[k] = b->pairs[k][1];
    }
    rank_sched r = {.rank = rank, .nops = (uint32_t)b->nops, .ndeps = (uint32_t)b->npairs, .ops = b->ops,
                    .deps = b->deps};
    int rc = s->rank(s, &r);
    b->nops = b->npairs = 0;
    return rc;
}

#define FAIL(...) do { snprintf(err, n, __VA_ARGS__); goto out; } while (0)

int goal_read(FILE *f, sched_sink *s, char *err, size_t n)
{
    char line[1024], w[5][128];
    long lineno = 0, nranks = -1, cur = -1, expect = 0;
    int rc = -1;
    labels lab = {0};
    rank_buf b = {0};
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *c = strstr(line, "//");
        if (c) *c = 0;
        char *t = line;
        while (isspace((unsigned char)*t)) t++;
        if (!*t) continue;
        if (nranks < 0) {
            if (sscanf(t, "num_ranks %ld", &nranks) != 1 || nranks < 1 || nranks > SCHED_MAX_RANKS)
                FAIL("line %ld: expected 'num_ranks N' with 1 <= N <= %ld first", lineno, SCHED_MAX_RANKS);
            if (s->begin(s, nranks)) FAIL("the schedule's sink failed");
            continue;
        }
        if (cur < 0) {
            long r;
            if (sscanf(t, "rank %ld {", &r) != 1) FAIL("line %ld: expected 'rank %ld {'", lineno, expect);
            if (r != expect) FAIL("line %ld: ranks must come in order 0, 1, ...: expected rank %ld, got %ld",
                                  lineno, expect, r);
            cur = r;
            labels_clear(&lab);
            continue;
        }
        if (*t == '}') {
            if (flush_rank(&b, cur, s)) FAIL("out of memory or the sink failed at rank %ld", cur);
            expect = cur + 1, cur = -1;
            continue;
        }
        int k = sscanf(t, "%127s %127s %127s %127s %127s", w[0], w[1], w[2], w[3], w[4]);
        if (k >= 3 && (!strcmp(w[1], "requires") || !strcmp(w[1], "irequires"))) {
            long a = labels_find(&lab, w[0]), d = labels_find(&lab, w[2]);
            if (a < 0 || d < 0)
                FAIL("line %ld: '%s %s %s' names a label not defined before it in rank %ld", lineno, w[0], w[1],
                     w[2], cur);
            if (b.npairs == b.pcap) {
                b.pcap = b.pcap ? 2 * b.pcap : 1024;
                if (!(b.pairs = realloc(b.pairs, b.pcap * sizeof *b.pairs))) FAIL("out of memory");
            }
            b.pairs[b.npairs][0] = (uint32_t)a, b.pairs[b.npairs][1] = (uint32_t)d, b.npairs++;
            continue;
        }
        size_t len = strlen(w[0]);
        if (k < 3 || len < 2 || w[0][len - 1] != ':') FAIL("line %ld: cannot read '%s'", lineno, t);
        w[0][len - 1] = 0;
        sched_op o = {.peer = -1};
        char *end;
        double v = strtod(w[2], &end);
        if (end == w[2] || !(v >= 0 && v <= SCHED_MAX_VALUE) || (*end && strcmp(end, "b") && strcmp(end, "B")))
            FAIL("line %ld: '%s' is not a size: a number from 0 to 2^53 (no NaN or infinity)", lineno, w[2]);
        if (!strcmp(w[1], "calc")) {
            o.type = OP_CALC, o.value = v * 1e-9;
        } else if (!strcmp(w[1], "send") || !strcmp(w[1], "recv")) {
            int send = !strcmp(w[1], "send");
            long peer, tag;
            char dir[16];
            if (sscanf(t, "%*s %*s %*s %15s %ld tag %ld", dir, &peer, &tag) != 3 ||
                strcmp(dir, send ? "to" : "from"))
                FAIL("line %ld: expected '%s Nb %s RANK tag T'", lineno, w[1], send ? "to" : "from");
            if (peer < 0 || peer >= nranks) FAIL("line %ld: rank %ld is not in 0..%ld", lineno, peer, nranks - 1);
            if (tag < 0 || tag > SCHED_MAX_TAG)
                FAIL("line %ld: tag %ld: the simulator takes tags 0..%d (no wildcards)", lineno, tag, SCHED_MAX_TAG);
            o.type = send ? OP_SEND : OP_RECV, o.peer = (int32_t)peer, o.tag = (int32_t)tag, o.value = v;
        } else {
            FAIL("line %ld: unknown operation '%s' (send, recv, calc)", lineno, w[1]);
        }
        int put = labels_put(&lab, w[0], (uint32_t)b.nops);
        if (put == -2) FAIL("line %ld: label %s defined twice in rank %ld", lineno, w[0], cur);
        if (put) FAIL("out of memory");
        if (b.nops == b.cap) {
            b.cap = b.cap ? 2 * b.cap : 1024;
            if (!(b.ops = realloc(b.ops, b.cap * sizeof *b.ops))) FAIL("out of memory");
        }
        b.ops[b.nops++] = o;
    }
    if (nranks < 0) FAIL("empty schedule: expected 'num_ranks N'");
    if (cur >= 0) FAIL("rank %ld is not closed with '}'", cur);
    if (expect != nranks) FAIL("num_ranks says %ld but the file has %ld ranks", nranks, expect);
    if (s->end(s)) FAIL("the schedule's sink failed");
    rc = 0;
out:
    labels_clear(&lab);
    free(lab.key), free(lab.val), free(b.ops), free(b.pairs), free(b.deps);
    return rc;
}
