/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, full fan-in: p stages; in stage j every other rank sends its
 * block to rank j, which receives them one by one from j+1, j+2, ... and
 * every send is completed before the next stage. pS + 2(p - 1)R with
 * separate sender and receiver costs (Tan and Strazdins (2002)). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = cx_place_own_block(c, a);
    char *rb = a->rbuf;
    for (int j = 0; j < p; j++) {
        int tag = TAG_AG_FIN + j % TAG_SPAN;
        if (j == rank)
            for (int k = 1; k < p; k++) {
                int src = cx_mod(j + k, p);
                cx_recv_wait(c, rb + (size_t)src * b, b, src, tag);
            }
        else
            cx_send_wait(c, a->sbuf, b, j, tag);
    }
}

const coll_algo coll_allgather_full_fan_in = {.name = "full_fan_in", .kind = COLL_ALLGATHER, .run = run};
