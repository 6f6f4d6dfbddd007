/* SPDX-License-Identifier: BSD-3-Clause */
/* Allreduce, recursive doubling: in step k every rank exchanges its whole
 * partial result with the rank 2^k away and combines. Ranks beyond the
 * largest power of two are folded onto neighbours (two extra messages).
 * p = 2^k: lg p·(α + nβ + nγ). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, pp = cx_pow2_floor(p), r = p - pp;
    size_t n = a->count * a->elem;
    char *acc = a->rbuf, *tmp = c->scratch;
    memcpy(acc, a->sbuf, n);
    if (cx_allreduce_fold_in(c, a, acc, tmp, n, r, TAG_AR_RD)) return;
    int v = cx_fold_virtual(rank, r);
    for (int mask = 1; mask < pp; mask <<= 1) {
        int partner = cx_fold_first(v ^ mask, r);
        cx_exchange(c, acc, n, partner, tmp, n, partner, TAG_AR_RD);
        a->op->combine(acc, tmp, a->count);
    }
    if (rank < 2 * r) cx_send_wait(c, acc, n, rank + 1, TAG_AR_RD);
}

static size_t scratch(size_t count, size_t elem, int p) { return count * elem; }

const coll_algo coll_allreduce_recursive_doubling = {.name = "recursive_doubling", .kind = COLL_ALLREDUCE, .run = run,
                                                      .scratch = scratch};
