/* SPDX-License-Identifier: BSD-3-Clause */
/* What the algorithm files share: message primitives that also feed the
 * trace, block arithmetic, and building blocks used by several algorithms. */
#ifndef MPISCOPE_COLLS_IMPL_H
#define MPISCOPE_COLLS_IMPL_H

#include <string.h>
#include "colls.h"

/* Tags: each algorithm uses its own range so a message can never match a
 * receive of another algorithm in the same communicator. */
enum {
    TAG_AG_RING = 100, TAG_AG_RD = 200, TAG_AG_BRUCK = 300, TAG_AG_FAN = 400, TAG_AG_TREE = 1000,
    TAG_AG_PIPE = 2000, TAG_AG_FIN = 3000, TAG_AG_FOUT = 500,
    TAG_AR_RD = 600, TAG_AR_RAB = 700, TAG_AR_RING = 800, TAG_AR_FAN = 900,
    TAG_RS_RH = 4000, TAG_RS_PAIR = 4100, TAG_RS_RING = 4200, TAG_RS_TREE = 5000, TAG_RS_PIPE = 6000,
    TAG_RS_FIN = 7000, TAG_RS_FOUT = 4300,
    TAG_BC_BINOM = 8000, TAG_BC_SAG_RD = 8100, TAG_BC_SAG_RING = 8200, TAG_BC_CHAIN = 8300,
    TAG_A2A_LIN = 8400, TAG_A2A_PAIR = 8500, TAG_A2A_BRUCK = 8600, TAG_BC_LINEAR = 8700,
};
/* Tags of algorithms that number their sub-operations (tag base + index)
 * wrap within this span; the MPI standard guarantees tags up to 32767. */
#define TAG_SPAN 900

/* Posts a message and returns its request slot (valid until cx_waitall). */
int cx_isend(coll_ctx *c, const void *buf, size_t bytes, int peer, int tag);
int cx_irecv(coll_ctx *c, void *buf, size_t bytes, int peer, int tag);
/* Completes one slot. */
void cx_wait(coll_ctx *c, int slot);
/* Completes every posted request and frees all slots. */
void cx_waitall(coll_ctx *c);

static inline void cx_send_wait(coll_ctx *c, const void *buf, size_t bytes, int peer, int tag)
{
    cx_wait(c, cx_isend(c, buf, bytes, peer, tag));
}
static inline void cx_recv_wait(coll_ctx *c, void *buf, size_t bytes, int peer, int tag)
{
    cx_wait(c, cx_irecv(c, buf, bytes, peer, tag));
}
/* Receive posted first, then the send; both completed. */
static inline void cx_exchange(coll_ctx *c, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                               int src, int tag)
{
    cx_irecv(c, rbuf, rbytes, src, tag);
    cx_isend(c, sbuf, sbytes, dst, tag);
    cx_waitall(c);
}

static inline char *cx_at(const void *base, size_t off) { return (char *)base + off; }
static inline int cx_pow2_floor(int p)
{
    int q = 1;
    while (2 * q <= p) q *= 2;
    return q;
}
static inline int cx_pow2_ceil(int p)
{
    int q = 1;
    while (q < p) q *= 2;
    return q;
}
static inline int cx_mod(int a, int p) { return ((a % p) + p) % p; }
static inline size_t cx_min(size_t a, size_t b) { return a < b ? a : b; }

/* offs[0..n]: byte offsets of n nearly equal blocks of `count` elements of
 * `elem` bytes (the first count % n blocks have one element more). */
void cx_offsets(size_t *offs, size_t count, int n, size_t elem);

/* Building blocks over "relative" ranks rr = (rank - root) mod p, with the
 * buffer laid out as p blocks in relative order, block i at [offs[i], offs[i+1]). */
/* Binomial tree broadcast of `bytes` (bcast_binomial.c). */
void cx_bcast_binomial(coll_ctx *c, void *buf, size_t bytes, int root, int tag);
/* Binomial scatter: relative rank i ends with block i (common.c). */
void cx_scatter_binomial(coll_ctx *c, char *buf, const size_t *offs, int root, int tag);
/* Every rank ends with every block, given its own: recursive doubling with
 * the ranks beyond the largest power of two folded onto neighbours
 * (allgather_recursive_doubling.c), or a ring (allgather_ring.c). */
void cx_allgatherv_rd(coll_ctx *c, char *buf, const size_t *offs, int root, int tag);
void cx_allgatherv_ring(coll_ctx *c, char *buf, const size_t *offs, int root, int tag);

/* Ranks beyond the largest power of two pp <= p are folded: for i < r =
 * p - pp, ranks 2i and 2i+1 act as one "virtual" rank i (held by 2i);
 * virtual rank v >= r is rank v + r. Consecutive virtual ranks hold
 * consecutive ranks' blocks. */
static inline int cx_fold_first(int v, int r) { return v < r ? 2 * v : v + r; }
static inline int cx_fold_virtual(int rank, int r) { return rank < 2 * r ? rank / 2 : rank - r; }

/* Allgather: every rank's own block goes to its place in the result first.
 * Returns the block size in bytes. */
static inline size_t cx_place_own_block(coll_ctx *c, const coll_args *a)
{
    size_t b = a->count * a->elem;
    memcpy((char *)a->rbuf + (size_t)c->rank * b, a->sbuf, b);
    return b;
}

/* Allreduce fold-in for the r = p - pp extra ranks: rank 2i+1 hands its data
 * to rank 2i and then waits for the final result there, returning 1 (it is
 * done); rank 2i combines its partner's data into `acc`. Others: nothing. */
static inline int cx_allreduce_fold_in(coll_ctx *c, const coll_args *a, char *acc, char *tmp, size_t n, int r,
                                       int tag)
{
    if (c->rank >= 2 * r) return 0;
    if (c->rank & 1) {
        cx_send_wait(c, acc, n, c->rank - 1, tag);
        cx_recv_wait(c, acc, n, c->rank - 1, tag);
        return 1;
    }
    cx_recv_wait(c, tmp, n, c->rank + 1, tag);
    a->op->combine(acc, tmp, a->count);
    return 0;
}

#endif
