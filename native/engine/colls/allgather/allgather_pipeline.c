/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, pipeline: p broadcasts along the ring, rank s's block passed
 * s -> s+1 -> ... -> s-1, each rank starting its own broadcast as soon as
 * it has passed on those of the ranks before it. 3(p - 1)(α + bβ). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, right = cx_mod(rank + 1, p), left = cx_mod(rank - 1, p);
    size_t b = cx_place_own_block(c, a);
    char *rb = a->rbuf;
    for (int s = 0; s < p && p > 1; s++) {
        int tag = TAG_AG_PIPE + s % TAG_SPAN;
        if (s != rank) cx_recv_wait(c, rb + (size_t)s * b, b, left, tag);
        if (right != s) cx_isend(c, rb + (size_t)s * b, b, right, tag);
    }
    cx_waitall(c);
}

const coll_algo coll_allgather_pipeline = {.name = "pipeline", .kind = COLL_ALLGATHER, .run = run};
