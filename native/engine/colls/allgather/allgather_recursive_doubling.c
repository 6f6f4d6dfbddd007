/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, recursive doubling: in step k every rank exchanges everything
 * it holds with the rank 2^k away, so the data held doubles each step.
 * With p not a power of two, the first 2r ranks (r = p - pp) pair up: the
 * odd one hands its block to the even one first and gets the full result
 * back at the end. ⌈lg p⌉ steps for p = 2^k: lg p·α + (p - 1)bβ. */
#include "../colls_impl.h"

void cx_allgatherv_rd(coll_ctx *c, char *buf, const size_t *offs, int root, int tag)
{
    int p = c->size, rr = cx_mod(c->rank - root, p), pp = cx_pow2_floor(p), r = p - pp;
#define REAL(x) cx_mod((x) + root, p)
    if (rr < 2 * r) {
        if (rr & 1) {
            cx_send_wait(c, buf + offs[rr], offs[rr + 1] - offs[rr], REAL(rr - 1), tag);
            cx_recv_wait(c, buf, offs[p], REAL(rr - 1), tag);
            return;
        }
        cx_recv_wait(c, buf + offs[rr + 1], offs[rr + 2] - offs[rr + 1], REAL(rr + 1), tag);
    }
    int v = cx_fold_virtual(rr, r);
    for (int mask = 1; mask < pp; mask <<= 1) {
        int pv = v ^ mask, g = v & ~(mask - 1), pg = pv & ~(mask - 1);
        int lo = cx_fold_first(g, r), hi = cx_fold_first(g + mask, r);
        int plo = cx_fold_first(pg, r), phi = cx_fold_first(pg + mask, r);
        cx_exchange(c, buf + offs[lo], offs[hi] - offs[lo], REAL(cx_fold_first(pv, r)), buf + offs[plo],
                    offs[phi] - offs[plo], REAL(cx_fold_first(pv, r)), tag);
    }
    if (rr < 2 * r) cx_send_wait(c, buf, offs[p], REAL(rr + 1), tag);
#undef REAL
}

static void run(coll_ctx *c, const coll_args *a)
{
    cx_place_own_block(c, a);
    cx_offsets(c->offs, (size_t)c->size * a->count, c->size, a->elem);
    cx_allgatherv_rd(c, a->rbuf, c->offs, 0, TAG_AG_RD);
}

const coll_algo coll_allgather_recursive_doubling = {.name = "recursive_doubling", .kind = COLL_ALLGATHER, .run = run};
