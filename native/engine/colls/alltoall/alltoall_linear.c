/* SPDX-License-Identifier: BSD-3-Clause */
/* Alltoall, linear: every rank posts a receive from every other rank and
 * sends every rank its block at once, then waits for all.
 * (p - 1)(α + bβ) when receives are the bottleneck. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    memcpy(cx_at(a->rbuf, (size_t)rank * b), cx_at(a->sbuf, (size_t)rank * b), b);
    for (int k = 1; k < p; k++) {
        int src = cx_mod(rank - k, p);
        cx_irecv(c, cx_at(a->rbuf, (size_t)src * b), b, src, TAG_A2A_LIN);
    }
    for (int k = 1; k < p; k++) {
        int dst = cx_mod(rank + k, p);
        cx_isend(c, cx_at(a->sbuf, (size_t)dst * b), b, dst, TAG_A2A_LIN);
    }
    cx_waitall(c);
}

const coll_algo coll_alltoall_linear = {.name = "linear", .kind = COLL_ALLTOALL, .run = run};
