/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter (block), recursive halving: in each step a rank sends the
 * half of its current range that belongs to the partner's side and combines
 * the half it keeps; the range halves until it is the rank's own block.
 * Ranks beyond the largest power of two are folded onto neighbours.
 * p = 2^k: lg p·α + fnβ + fnγ, n = p·b the whole vector. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, pp = cx_pow2_floor(p), r = p - pp;
    size_t b = a->count * a->elem, n = (size_t)p * b;
    char *acc = c->scratch, *tmp = c->scratch + n;
    memcpy(acc, a->sbuf, n);
    if (rank < 2 * r) {
        if (rank & 1) {
            cx_send_wait(c, acc, n, rank - 1, TAG_RS_RH);
            cx_recv_wait(c, a->rbuf, b, rank - 1, TAG_RS_RH);
            return;
        }
        cx_recv_wait(c, tmp, n, rank + 1, TAG_RS_RH);
        a->op->combine(acc, tmp, (size_t)p * a->count);
    }
    int v = cx_fold_virtual(rank, r), v0 = 0;
    for (int mask = pp / 2; mask > 0; mask >>= 1) {
        int partner = cx_fold_first(v ^ mask, r);
        int keep = (v & mask) ? v0 + mask : v0, give = (v & mask) ? v0 : v0 + mask;
        size_t klo = (size_t)cx_fold_first(keep, r), khi = (size_t)cx_fold_first(keep + mask, r);
        size_t glo = (size_t)cx_fold_first(give, r), ghi = (size_t)cx_fold_first(give + mask, r);
        cx_exchange(c, acc + glo * b, (ghi - glo) * b, partner, tmp, (khi - klo) * b, partner, TAG_RS_RH);
        a->op->combine(acc + klo * b, tmp, (khi - klo) * a->count);
        v0 = keep;
    }
    memcpy(a->rbuf, acc + (size_t)rank * b, b);
    if (rank < 2 * r) cx_send_wait(c, acc + (size_t)(rank + 1) * b, b, rank + 1, TAG_RS_RH);
}

static size_t scratch(size_t count, size_t elem, int p) { return 2 * (size_t)p * count * elem; }

const coll_algo coll_reduce_scatter_recursive_halving = {.name = "recursive_halving", .kind = COLL_REDUCE_SCATTER,
                                                         .run = run, .scratch = scratch};
