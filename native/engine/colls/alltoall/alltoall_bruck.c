/* SPDX-License-Identifier: BSD-3-Clause */
/* Alltoall, Bruck: after a local rotation block i is bound for rank + i; in
 * step k every block whose index has bit k set moves 2^k ranks on, packed
 * into one message. ⌈lg p⌉ steps: ⌈lg p⌉α + (n/2)⌈lg p⌉β for p = 2^k,
 * n = p·b, plus the local copies. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rank = c->rank;
    size_t b = a->count * a->elem, half = ((size_t)p / 2 + 1) * b;
    char *rot = c->scratch, *pack = rot + (size_t)p * b, *got = pack + half;
    for (int i = 0; i < p; i++) memcpy(rot + (size_t)i * b, cx_at(a->sbuf, (size_t)cx_mod(rank + i, p) * b), b);
    for (int dist = 1; dist < p; dist <<= 1) {
        size_t n = 0;
        for (int i = dist; i < p; i++)
            if (i & dist) memcpy(pack + n++ * b, rot + (size_t)i * b, b);
        cx_exchange(c, pack, n * b, cx_mod(rank + dist, p), got, n * b, cx_mod(rank - dist, p), TAG_A2A_BRUCK);
        n = 0;
        for (int i = dist; i < p; i++)
            if (i & dist) memcpy(rot + (size_t)i * b, got + n++ * b, b);
    }
    for (int i = 0; i < p; i++) memcpy(cx_at(a->rbuf, (size_t)cx_mod(rank - i, p) * b), rot + (size_t)i * b, b);
}

static size_t scratch(size_t count, size_t elem, int p) { return ((size_t)p + 2 * ((size_t)p / 2 + 1)) * count * elem; }

const coll_algo coll_alltoall_bruck = {.name = "bruck", .kind = COLL_ALLTOALL, .run = run, .scratch = scratch};
