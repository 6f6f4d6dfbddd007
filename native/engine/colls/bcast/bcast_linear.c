/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcast, linear: the root posts a send to every other rank, in rank
 * order, then waits for all of them; every other rank receives once from the
 * root. Open MPI's basic_linear broadcast (coll_base_bcast.c). The root's
 * link carries p − 1 copies: (p − 1)(α + nβ). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    size_t bytes = a->count * a->elem;
    if (c->rank != a->root) {
        cx_recv_wait(c, a->rbuf, bytes, a->root, TAG_BC_LINEAR);
        return;
    }
    for (int peer = 0; peer < c->size; peer++)
        if (peer != a->root) cx_isend(c, a->rbuf, bytes, peer, TAG_BC_LINEAR);
    cx_waitall(c);
}

const coll_algo coll_bcast_linear = {.name = "linear", .kind = COLL_BCAST, .run = run};
