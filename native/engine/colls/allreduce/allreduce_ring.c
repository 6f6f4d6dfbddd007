/* SPDX-License-Identifier: BSD-3-Clause */
/* Allreduce, ring: a ring reduce-scatter of p blocks (p - 1 steps, each
 * passing one partial block to the right and combining the one from the
 * left), then a ring allgather of the reduced blocks.
 * 2(p - 1)α + 2fnβ + fnγ, f = (p - 1)/p. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, right = cx_mod(rank + 1, p), left = cx_mod(rank - 1, p);
    size_t *offs = c->offs;
    char *acc = a->rbuf, *tmp = c->scratch;
    memcpy(acc, a->sbuf, a->count * a->elem);
    cx_offsets(offs, a->count, p, a->elem);
    for (int k = 0; k < p - 1; k++) {
        int out = cx_mod(rank - k, p), in = cx_mod(rank - k - 1, p);
        size_t inb = offs[in + 1] - offs[in];
        cx_exchange(c, acc + offs[out], offs[out + 1] - offs[out], right, tmp, inb, left, TAG_AR_RING);
        a->op->combine(acc + offs[in], tmp, inb / a->elem);
    }
    /* Block rank + 1 is complete here; pass the complete blocks around. */
    for (int k = 0; k < p - 1; k++) {
        int out = cx_mod(rank + 1 - k, p), in = cx_mod(rank - k, p);
        cx_exchange(c, acc + offs[out], offs[out + 1] - offs[out], right, acc + offs[in], offs[in + 1] - offs[in],
                    left, TAG_AR_RING);
    }
}

static size_t scratch(size_t count, size_t elem, int p) { return (count / (size_t)p + 1) * elem; }

const coll_algo coll_allreduce_ring = {.name = "ring", .kind = COLL_ALLREDUCE, .run = run, .scratch = scratch};
