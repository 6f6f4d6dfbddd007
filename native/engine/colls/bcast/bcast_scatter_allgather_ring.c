/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcast as a binomial scatter of p blocks followed by a ring allgather.
 * (⌈lg p⌉ + p - 1)α + 2fnβ. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    cx_offsets(c->offs, a->count, c->size, a->elem);
    cx_scatter_binomial(c, a->rbuf, c->offs, a->root, TAG_BC_SAG_RING);
    cx_allgatherv_ring(c, a->rbuf, c->offs, a->root, TAG_BC_SAG_RING + 1);
}

const coll_algo coll_bcast_scatter_allgather_ring = {.name = "scatter_allgather_ring", .kind = COLL_BCAST, .run = run};
