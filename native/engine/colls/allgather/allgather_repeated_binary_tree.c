/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, repeated binary tree: p binomial-tree broadcasts, rank j's
 * block from root j, handled in root order. Every receive is posted first
 * and sends are not waited for until the end, so consecutive broadcasts
 * overlap where their dependencies allow (the sub-operation overlap of Tan
 * and Strazdins (2002)). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, *slot = c->ints;
    size_t b = cx_place_own_block(c, a);
    char *rb = a->rbuf;
    for (int j = 0; j < p; j++) {
        int rr = cx_mod(rank - j, p);
        if (rr == 0) continue;
        int parent = rr - (rr & -rr); /* clear the lowest set bit */
        slot[j] = cx_irecv(c, rb + (size_t)j * b, b, cx_mod(parent + j, p), TAG_AG_TREE + j % TAG_SPAN);
    }
    for (int j = 0; j < p; j++) {
        int rr = cx_mod(rank - j, p);
        if (rr) cx_wait(c, slot[j]);
        int low = rr ? (rr & -rr) : cx_pow2_ceil(p);
        for (int mask = low >> 1; mask > 0; mask >>= 1)
            if (rr + mask < p) cx_isend(c, rb + (size_t)j * b, b, cx_mod(rr + mask + j, p), TAG_AG_TREE + j % TAG_SPAN);
    }
    cx_waitall(c);
}

const coll_algo coll_allgather_repeated_binary_tree = {.name = "repeated_binary_tree", .kind = COLL_ALLGATHER, .run = run};
