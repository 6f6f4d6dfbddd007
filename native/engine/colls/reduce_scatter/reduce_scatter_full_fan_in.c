/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), full fan-in: p stages; in stage j every other rank
 * sends its contribution to block j to rank j, which receives them one by
 * one from j+1, j+2, ... and adds them up; every send is completed before
 * the next stage. pS + 2(p - 1)(R + bγ) with separate send/receive costs. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    char *tmp = c->scratch;
    for (int j = 0; j < p; j++) {
        int tag = TAG_RS_FIN + j % TAG_SPAN;
        if (j != rank) {
            cx_send_wait(c, cx_at(a->sbuf, (size_t)j * b), b, j, tag);
            continue;
        }
        memcpy(a->rbuf, cx_at(a->sbuf, (size_t)j * b), b);
        for (int k = 1; k < p; k++) {
            cx_recv_wait(c, tmp, b, cx_mod(j + k, p), tag);
            a->op->combine(a->rbuf, tmp, a->count);
        }
    }
}

static size_t scratch(size_t count, size_t elem, int p) { return count * elem; }

const coll_algo coll_reduce_scatter_full_fan_in = {.name = "full_fan_in", .kind = COLL_REDUCE_SCATTER, .run = run,
                                                   .scratch = scratch};
