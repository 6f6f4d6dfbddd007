/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, ring: p - 1 steps; in each, every rank passes the block it
 * received last to its right neighbour. (p - 1)(α + bβ). */
#include "../colls_impl.h"

void cx_allgatherv_ring(coll_ctx *c, char *buf, const size_t *offs, int root, int tag)
{
    int p = c->size, rr = cx_mod(c->rank - root, p);
    int right = cx_mod(c->rank + 1, p), left = cx_mod(c->rank - 1, p);
    for (int k = 0; k < p - 1; k++) {
        int out = cx_mod(rr - k, p), in = cx_mod(rr - k - 1, p);
        cx_exchange(c, buf + offs[out], offs[out + 1] - offs[out], right, buf + offs[in], offs[in + 1] - offs[in],
                    left, tag);
    }
}

static void run(coll_ctx *c, const coll_args *a)
{
    cx_place_own_block(c, a);
    cx_offsets(c->offs, (size_t)c->size * a->count, c->size, a->elem);
    cx_allgatherv_ring(c, a->rbuf, c->offs, 0, TAG_AG_RING);
}

const coll_algo coll_allgather_ring = {.name = "ring", .kind = COLL_ALLGATHER, .run = run};
