/* SPDX-License-Identifier: BSD-3-Clause */
/* Alltoall, pairwise exchange: in step k = 1..p-1 every rank sends its
 * block for rank+k and receives the block from rank-k. (p - 1)(α + bβ). */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    memcpy(cx_at(a->rbuf, (size_t)rank * b), cx_at(a->sbuf, (size_t)rank * b), b);
    for (int k = 1; k < p; k++) {
        int dst = cx_mod(rank + k, p), src = cx_mod(rank - k, p);
        cx_exchange(c, cx_at(a->sbuf, (size_t)dst * b), b, dst, cx_at(a->rbuf, (size_t)src * b), b, src,
                    TAG_A2A_PAIR);
    }
}

const coll_algo coll_alltoall_pairwise = {.name = "pairwise", .kind = COLL_ALLTOALL, .run = run};
