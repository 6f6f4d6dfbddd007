/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcast as a binomial scatter of p blocks followed by a recursive
 * doubling allgather (van de Geijn). p = 2^k: 2 lg p·α + 2fnβ. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    cx_offsets(c->offs, a->count, c->size, a->elem);
    cx_scatter_binomial(c, a->rbuf, c->offs, a->root, TAG_BC_SAG_RD);
    cx_allgatherv_rd(c, a->rbuf, c->offs, a->root, TAG_BC_SAG_RD + 1);
}

const coll_algo coll_bcast_scatter_allgather_recursive_doubling = {
    .name = "scatter_allgather_recursive_doubling", .kind = COLL_BCAST, .run = run};
