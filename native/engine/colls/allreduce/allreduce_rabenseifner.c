/* SPDX-License-Identifier: BSD-3-Clause */
/* Allreduce, Rabenseifner: a reduce-scatter by recursive halving (each
 * step exchanges half of what is left), then an allgather by recursive
 * doubling of the reduced blocks. Ranks beyond the largest power of two
 * are folded onto neighbours. p = 2^k: 2 lg p·α + 2fnβ + fnγ, f = (p-1)/p. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank, pp = cx_pow2_floor(p), r = p - pp;
    size_t n = a->count * a->elem, *offs = c->offs;
    char *acc = a->rbuf, *tmp = c->scratch;
    memcpy(acc, a->sbuf, n);
    if (cx_allreduce_fold_in(c, a, acc, tmp, n, r, TAG_AR_RAB)) return;
    int v = cx_fold_virtual(rank, r), b0 = 0;
    cx_offsets(offs, a->count, pp, a->elem);
    /* Recursive halving: keep the half of the current range on my side. */
    for (int mask = pp / 2; mask > 0; mask >>= 1) {
        int partner = cx_fold_first(v ^ mask, r);
        int keep = (v & mask) ? b0 + mask : b0, give = (v & mask) ? b0 : b0 + mask;
        size_t kept = offs[keep + mask] - offs[keep];
        cx_exchange(c, acc + offs[give], offs[give + mask] - offs[give], partner, tmp, kept, partner, TAG_AR_RAB);
        a->op->combine(acc + offs[keep], tmp, kept / a->elem);
        b0 = keep;
    }
    /* Now block v is reduced here; recursive doubling gathers the others. */
    for (int mask = 1; mask < pp; mask <<= 1) {
        int pv = v ^ mask, g = v & ~(mask - 1), pg = pv & ~(mask - 1), partner = cx_fold_first(pv, r);
        cx_exchange(c, acc + offs[g], offs[g + mask] - offs[g], partner, acc + offs[pg], offs[pg + mask] - offs[pg],
                    partner, TAG_AR_RAB);
    }
    if (rank < 2 * r) cx_send_wait(c, acc, n, rank + 1, TAG_AR_RAB);
}

static size_t scratch(size_t count, size_t elem, int p) { return count * elem; }

const coll_algo coll_allreduce_rabenseifner = {.name = "rabenseifner", .kind = COLL_ALLREDUCE, .run = run,
                                               .scratch = scratch};
