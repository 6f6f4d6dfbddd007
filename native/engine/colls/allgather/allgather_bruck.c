/* SPDX-License-Identifier: BSD-3-Clause */
/* Allgather, Bruck: ⌈lg p⌉ steps for any p; in step k every rank sends the
 * first min(2^k, p - 2^k) blocks it holds to rank - 2^k and appends what
 * rank + 2^k sends; a final rotation puts the blocks in rank order.
 * ⌈lg p⌉α + (p - 1)bβ. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem;
    char *buf = c->scratch;
    memcpy(buf, a->sbuf, b);
    for (int dist = 1; dist < p; dist <<= 1) {
        size_t n = (size_t)(dist < p - dist ? dist : p - dist) * b;
        cx_exchange(c, buf, n, cx_mod(rank - dist, p), buf + (size_t)dist * b, n, cx_mod(rank + dist, p),
                    TAG_AG_BRUCK);
    }
    for (int i = 0; i < p; i++) memcpy(cx_at(a->rbuf, (size_t)cx_mod(rank + i, p) * b), buf + (size_t)i * b, b);
}

static size_t scratch(size_t count, size_t elem, int p) { return (size_t)p * count * elem; }

const coll_algo coll_allgather_bruck = {.name = "bruck", .kind = COLL_ALLGATHER, .run = run, .scratch = scratch};
