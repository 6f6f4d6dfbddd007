/* SPDX-License-Identifier: BSD-3-Clause */
/* The profiler's state and its fast path: every table has a fixed size set
 * at MPI_Init, and a wrapped call only adds to counters (plain adds, or
 * relaxed atomic adds when the application asked for MPI_THREAD_MULTIPLE):
 * no lock, no allocation, no system call. */
#ifndef PMPI_PROF_H
#define PMPI_PROF_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "../clock/cpu.h"

/* Channels: where a message goes, seen from this rank. */
enum { CH_SELF, CH_NODE, CH_NET, CH_NONE, NCHANNELS };
#define NBINS 40      /* bin 0: 0 bytes; bin b: [2^(b-1), 2^b) bytes; the last takes the rest */
#define NSIZES 16     /* distinct communicator sizes kept apart; the last slot takes the rest */

typedef struct cell {
    uint64_t count, bytes, ticks;
} cell;

/* A communicator as the profiler sees it, built once at its first use. */
typedef struct comm_info {
    uint64_t key;          /* the handle's bits; 0: free slot, 1: freed */
    int size;              /* of the (remote group of an inter-) communicator */
    int size_slot;         /* index into the counters' communicator-size axis */
    int span;              /* the widest channel among its members: collectives' channel */
    int *world;            /* world rank of each rank */
    int members;           /* --trace: index of its member list (comm_members), -1: not kept */
    unsigned char *chan;   /* channel to each rank */
} comm_info;

typedef struct prof_state {
    int on;                /* 0 before MPI_Init, after MPI_Finalize, and inside our own MPI calls */
    int threaded;          /* MPI_THREAD_MULTIPLE: atomic adds */
    int tracing;           /* --trace: every call also goes to the event buffer */
    int libview;           /* --library-view: blocking collectives' library messages (libview.c) */
    int rank, world_size, node, nodes;
    int *node_of;          /* node index of every world rank */
    int comm_sizes[NSIZES];
    int nsizes;
    uint64_t *sent_bytes, *sent_msgs, *recv_bytes, *recv_msgs;  /* by world rank of the peer */
    uint64_t unattributed; /* calls on communicators the full table could not hold */
    uint64_t t0_ticks;     /* at MPI_Init */
} prof_state;

extern prof_state prof;
extern cell prof_cells[NCALLS][NSIZES][NCHANNELS][NBINS];

static inline uint64_t prof_ticks(void) { return cpu_counter(); }

static inline void prof_add(uint64_t *x, uint64_t v)
{
    if (prof.threaded) __atomic_fetch_add(x, v, __ATOMIC_RELAXED);
    else *x += v;
}

static inline int prof_bin(uint64_t bytes)
{
    int b = bytes ? 64 - __builtin_clzll(bytes) : 0;
    return b < NBINS ? b : NBINS - 1;
}

/* Call sites (callsites.c) and the optional event trace (trace.c). */
void callsite_add(int call, void *site, uint64_t bytes, uint64_t ticks);
void trace_add(int call, int peer_world, int comm_size, int members, uint64_t bytes, uint64_t t0, uint64_t t1);

static inline int comm_world_rank(const comm_info *c, int peer);

/* One call: `peer` is the rank in `c` it sent to or received from (-1: none;
 * for a rooted collective its root), `t0` and `t1` the ticks at its start and end. */
static inline void prof_record(int call, const comm_info *c, int peer, int channel, uint64_t bytes,
                               uint64_t t0, uint64_t t1, void *site)
{
    uint64_t ticks = t1 - t0;
    cell *x = &prof_cells[call][c ? c->size_slot : NSIZES - 1][channel][prof_bin(bytes)];
    prof_add(&x->count, 1);
    prof_add(&x->bytes, bytes);
    prof_add(&x->ticks, ticks);
    callsite_add(call, site, bytes, ticks);
    if (prof.tracing)
        trace_add(call, comm_world_rank(c, peer), c ? c->size : 0, c ? c->members : -1, bytes, t0, t1);
}

/* Communicators and channels (channels.c). */
void channels_init(void);
comm_info *comm_lookup_slow(MPI_Comm comm);
void comm_forget(MPI_Comm comm);
comm_info *comm_of_group(MPI_Group group, MPI_Comm inherit_from);
/* The distinct member lists (world ranks) of the communicators used, for
 * the trace: communicators with the same members in the same order share one. */
int comm_members_count(void);
const int *comm_members(int i, int *size);

static inline uint64_t handle_key(const void *h, int n)
{
    uint64_t k = 0;
    __builtin_memcpy(&k, h, n);
    return k;
}

extern comm_info *prof_world;      /* MPI_COMM_WORLD */
extern comm_info *prof_last_comm;  /* the last communicator looked up */

static inline comm_info *comm_lookup(MPI_Comm comm)
{
    uint64_t k = handle_key(&comm, sizeof comm);
    comm_info *c = __atomic_load_n(&prof_last_comm, __ATOMIC_RELAXED);
    if (c && c->key == k) return c;
    return comm_lookup_slow(comm);
}

/* The channel to rank `peer` of `c` (CH_NONE for MPI_PROC_NULL, wildcards, or an unknown communicator). */
static inline int comm_channel(const comm_info *c, int peer)
{
    return (c && peer >= 0 && peer < c->size) ? c->chan[peer] : CH_NONE;
}

static inline int comm_world_rank(const comm_info *c, int peer)
{
    return (c && peer >= 0 && peer < c->size) ? c->world[peer] : -1;
}

/* The peer matrix (peers.c): user point-to-point traffic by world rank. */
static inline void peers_sent(const comm_info *c, int peer, uint64_t bytes)
{
    int w = comm_world_rank(c, peer);
    if (w < 0) return;
    prof_add(&prof.sent_bytes[w], bytes);
    prof_add(&prof.sent_msgs[w], 1);
}

static inline void peers_received(const comm_info *c, int peer, uint64_t bytes)
{
    int w = comm_world_rank(c, peer);
    if (w < 0) return;
    prof_add(&prof.recv_bytes[w], bytes);
    prof_add(&prof.recv_msgs[w], 1);
}

void peers_init(void);

/* Bytes of `count` elements of `type` (0 for MPI_DATATYPE_NULL). */
static inline uint64_t type_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    PMPI_Type_size(type, &size);
    return (uint64_t)count * (uint64_t)size;
}

#endif
