/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), repeated binary tree: p binomial-tree reductions,
 * block j to rank j, in root order. Each reduction has its own accumulator,
 * so a rank's sends are left in flight while it goes on with the next tree.
 * p⌈lg p⌉(α + bβ + bγ) when the reductions do not overlap. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    char *tmp = c->scratch;
    for (int j = 0; j < p; j++) {
        int rr = cx_mod(rank - j, p), tag = TAG_RS_TREE + j % TAG_SPAN;
        char *acc = rr == 0 ? (char *)a->rbuf : c->scratch + (size_t)(j + 1) * b;
        memcpy(acc, cx_at(a->sbuf, (size_t)j * b), b);
        for (int mask = 1; mask < p; mask <<= 1) {
            if (rr & mask) {
                cx_isend(c, acc, b, cx_mod(rr - mask + j, p), tag);
                break;
            }
            if (rr + mask < p) {
                cx_recv_wait(c, tmp, b, cx_mod(rr + mask + j, p), tag);
                a->op->combine(acc, tmp, a->count);
            }
        }
    }
    cx_waitall(c);
}

static size_t scratch(size_t count, size_t elem, int p) { return ((size_t)p + 1) * count * elem; }

const coll_algo coll_reduce_scatter_repeated_binary_tree = {.name = "repeated_binary_tree",
                                                            .kind = COLL_REDUCE_SCATTER, .run = run,
                                                            .scratch = scratch};
