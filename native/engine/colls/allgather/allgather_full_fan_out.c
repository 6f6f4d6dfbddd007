/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, full fan-out: every rank posts all its receives and sends its
 * block to every other rank at once (rank+1 first), then waits for all.
 * No ordering between the messages: (p - 1)(α + bβ) when receives are the
 * bottleneck. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = cx_place_own_block(c, a);
    char *rb = a->rbuf;
    for (int k = 1; k < p; k++) {
        int src = cx_mod(rank - k, p);
        cx_irecv(c, rb + (size_t)src * b, b, src, TAG_AG_FOUT);
    }
    for (int k = 1; k < p; k++) cx_isend(c, a->sbuf, b, cx_mod(rank + k, p), TAG_AG_FOUT);
    cx_waitall(c);
}

const coll_algo coll_allgather_full_fan_out = {.name = "full_fan_out", .kind = COLL_ALLGATHER, .run = run};
