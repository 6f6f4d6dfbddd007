/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), pairwise exchange: in step k = 1..p-1 every rank
 * sends its contribution to block rank+k to that rank and combines the
 * contribution of rank-k to its own block. (p - 1)(α + bβ + bγ). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    char *tmp = c->scratch;
    memcpy(a->rbuf, cx_at(a->sbuf, (size_t)rank * b), b);
    for (int k = 1; k < p; k++) {
        int dst = cx_mod(rank + k, p), src = cx_mod(rank - k, p);
        cx_exchange(c, cx_at(a->sbuf, (size_t)dst * b), b, dst, tmp, b, src, TAG_RS_PAIR);
        a->op->combine(a->rbuf, tmp, a->count);
    }
}

static size_t scratch(size_t count, size_t elem, int p) { return count * elem; }

const coll_algo coll_reduce_scatter_pairwise = {.name = "pairwise", .kind = COLL_REDUCE_SCATTER, .run = run,
                                                .scratch = scratch};
