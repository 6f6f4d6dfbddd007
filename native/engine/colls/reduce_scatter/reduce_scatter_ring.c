/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), ring: p - 1 steps; every rank passes a partial
 * block to its right neighbour and adds its own contribution to the one
 * from the left, so block j collects every contribution on its way to
 * rank j. (p - 1)(α + bβ + bγ). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, right = cx_mod(rank + 1, p), left = cx_mod(rank - 1, p);
    size_t b = a->count * a->elem;
    char *bufs[2] = {c->scratch, c->scratch + b};
    const char *out = cx_at(a->sbuf, (size_t)left * b);
    if (p == 1) memcpy(a->rbuf, a->sbuf, b);
    for (int k = 0; k < p - 1; k++) {
        int blk = cx_mod(rank - k - 2, p);
        char *in = k == p - 2 ? (char *)a->rbuf : bufs[k % 2];
        cx_exchange(c, out, b, right, in, b, left, TAG_RS_RING);
        a->op->combine(in, cx_at(a->sbuf, (size_t)blk * b), a->count);
        out = in;
    }
}

static size_t scratch(size_t count, size_t elem, int p) { return 2 * count * elem; }

const coll_algo coll_reduce_scatter_ring = {.name = "ring", .kind = COLL_REDUCE_SCATTER, .run = run,
                                            .scratch = scratch};
