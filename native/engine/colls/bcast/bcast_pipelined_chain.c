/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcast, pipelined chain: the buffer is cut into segments (--segment,
 * 8 KiB by default) that flow root -> root+1 -> ... -> root-1; a rank
 * forwards segment i while segment i+1 is arriving.
 * (p - 2 + ⌈n/s⌉)(α + sβ) for segments of s bytes. */
#include "../colls_impl.h"

static void run(coll_ctx *c, const coll_args *a)
{
    int p = c->size, rr = cx_mod(c->rank - a->root, p);
    size_t n = a->count * a->elem, seg = c->segment, nseg = (n + seg - 1) / seg;
    char *buf = a->rbuf;
    int prev = cx_mod(c->rank - 1, p), next = cx_mod(c->rank + 1, p), last = rr == p - 1;
    if (p == 1) return;
    if (rr == 0) {
        for (size_t i = 0; i < nseg; i++) {
            if (c->nreq == c->cap) cx_waitall(c);
            cx_isend(c, buf + i * seg, cx_min(seg, n - i * seg), next, TAG_BC_CHAIN);
        }
        cx_waitall(c);
        return;
    }
    /* One receive ahead of the segment being forwarded. */
    int cur = cx_irecv(c, buf, cx_min(seg, n), prev, TAG_BC_CHAIN);
    for (size_t i = 0; i < nseg; i++) {
        if (c->nreq >= c->cap - 1) {
            cx_waitall(c); /* also completes `cur` */
            cur = -1;
        }
        int nxt = i + 1 < nseg ? cx_irecv(c, buf + (i + 1) * seg, cx_min(seg, n - (i + 1) * seg), prev, TAG_BC_CHAIN) : -1;
        if (cur >= 0) cx_wait(c, cur);
        if (!last) cx_isend(c, buf + i * seg, cx_min(seg, n - i * seg), next, TAG_BC_CHAIN);
        cur = nxt;
    }
    cx_waitall(c);
}

const coll_algo coll_bcast_pipelined_chain = {.name = "pipelined_chain", .kind = COLL_BCAST, .run = run};
