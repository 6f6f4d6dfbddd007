/* SPDX-License-Identifier: BSD-3-Clause */
/* Allreduce, fan-in fan-out: a binomial-tree reduction to rank 0, then a
 * binomial-tree broadcast of the result. 2⌈lg p⌉(α + nβ) + ⌈lg p⌉nγ. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t n = a->count * a->elem;
    char *acc = a->rbuf, *tmp = c->scratch;
    memcpy(acc, a->sbuf, n);
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rank & mask) {
            cx_send_wait(c, acc, n, rank - mask, TAG_AR_FAN);
            break;
        }
        if (rank + mask < p) {
            cx_recv_wait(c, tmp, n, rank + mask, TAG_AR_FAN);
            a->op->combine(acc, tmp, a->count);
        }
    }
    cx_bcast_binomial(c, acc, n, 0, TAG_AR_FAN + 1);
}

static size_t scratch(size_t count, size_t elem, int p) { return count * elem; }

const coll_algo coll_allreduce_fan_in_fan_out = {.name = "fan_in_fan_out", .kind = COLL_ALLREDUCE, .run = run,
                                                 .scratch = scratch};
