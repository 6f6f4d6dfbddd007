/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, fan-in fan-out: a binomial-tree gather to rank 0, then a
 * binomial-tree broadcast of all p blocks.
 * p = 2^k: 2 lg p·α + (p - 1)bβ + lg p·p·bβ. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = cx_place_own_block(c, a);
    char *rb = a->rbuf;
    /* Gather: a rank holds the blocks of its subtree [rank, rank + lowest set bit). */
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rank & mask) {
            cx_send_wait(c, rb + (size_t)rank * b, cx_min((size_t)mask, (size_t)(p - rank)) * b, rank - mask,
                         TAG_AG_FAN);
            break;
        }
        if (rank + mask < p)
            cx_recv_wait(c, rb + (size_t)(rank + mask) * b, cx_min((size_t)mask, (size_t)(p - rank - mask)) * b,
                         rank + mask, TAG_AG_FAN);
    }
    cx_bcast_binomial(c, rb, (size_t)p * b, 0, TAG_AG_FAN + 1);
}

const coll_algo coll_allgather_fan_in_fan_out = {.name = "fan_in_fan_out", .kind = COLL_ALLGATHER, .run = run};
