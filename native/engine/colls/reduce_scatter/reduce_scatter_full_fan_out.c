/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), full fan-out: every rank posts a receive from
 * every other rank and sends every rank its contribution at once, then
 * adds up what arrived. (p - 1)(α + bβ + bγ) when receives are the bottleneck. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    for (int k = 1; k < p; k++) cx_irecv(c, c->scratch + (size_t)(k - 1) * b, b, cx_mod(rank - k, p), TAG_RS_FOUT);
    for (int k = 1; k < p; k++) {
        int dst = cx_mod(rank + k, p);
        cx_isend(c, cx_at(a->sbuf, (size_t)dst * b), b, dst, TAG_RS_FOUT);
    }
    cx_waitall(c);
    memcpy(a->rbuf, cx_at(a->sbuf, (size_t)rank * b), b);
    for (int k = 1; k < p; k++) a->op->combine(a->rbuf, c->scratch + (size_t)(k - 1) * b, a->count);
}

static size_t scratch(size_t count, size_t elem, int p) { return ((size_t)p - 1) * count * elem; }

const coll_algo coll_reduce_scatter_full_fan_out = {.name = "full_fan_out", .kind = COLL_REDUCE_SCATTER, .run = run,
                                                    .scratch = scratch};
