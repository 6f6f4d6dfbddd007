/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), pipeline: p reductions along the ring; the one
 * for block j starts at rank j+1 and ends at rank j, every rank on the way
 * adding its contribution and passing it on. Rank s starts its reduction
 * as soon as it has passed on those started before it.
 * 3(p - 1)(α + bβ) + 2(p - 1)bγ. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, right = cx_mod(rank + 1, p), left = cx_mod(rank - 1, p);
    size_t b = a->count * a->elem;
    if (p == 1) memcpy(a->rbuf, a->sbuf, b);
    for (int s = 0; s < p && p > 1; s++) {
        int j = cx_mod(s - 1, p), tag = TAG_RS_PIPE + s % TAG_SPAN;
        const char *mine = cx_at(a->sbuf, (size_t)j * b);
        if (rank == s) {
            cx_isend(c, mine, b, right, tag);
            continue;
        }
        char *acc = rank == j ? (char *)a->rbuf : c->scratch + (size_t)j * b;
        cx_recv_wait(c, acc, b, left, tag);
        a->op->combine(acc, mine, a->count);
        if (rank != j) cx_isend(c, acc, b, right, tag);
    }
    cx_waitall(c);
}

static size_t scratch(size_t count, size_t elem, int p) { return (size_t)p * count * elem; }

const coll_algo coll_reduce_scatter_pipeline = {.name = "pipeline", .kind = COLL_REDUCE_SCATTER, .run = run,
                                                .scratch = scratch};
