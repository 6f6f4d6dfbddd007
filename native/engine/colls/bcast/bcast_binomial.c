/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcast, binomial tree: a rank receives from the rank that differs in
 * its lowest set bit (relative to the root) and forwards to the ranks
 * below that bit, largest subtree first. ⌈lg p⌉(α + nβ). */
#include "../colls_impl.h"

void cx_bcast_binomial(coll_ctx *c, void *buf, size_t bytes, int root, int tag)
{
    int p = c->size, rr = cx_mod(c->rank - root, p), mask = 1;
    while (mask < p) {
        if (rr & mask) {
            cx_recv_wait(c, buf, bytes, cx_mod(rr - mask + root, p), tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rr + mask < p) cx_isend(c, buf, bytes, cx_mod(rr + mask + root, p), tag);
    cx_waitall(c);
}

static void run(coll_ctx *c, const coll_args *a)
{
    cx_bcast_binomial(c, a->rbuf, a->count * a->elem, a->root, TAG_BC_BINOM);
}

const coll_algo coll_bcast_binomial = {.name = "binomial", .kind = COLL_BCAST, .run = run};
