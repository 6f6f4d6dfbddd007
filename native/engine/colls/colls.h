/* SPDX-License-Identifier: BSD-3-Clause */
/* mpiscope's own collective algorithms, built on non-blocking point-to-point
 * messages only (MPI_Isend / MPI_Irecv / MPI_Wait*), one algorithm per file
 * (colls/<coll>/<coll>_<alg>.c) and a registry (colls/registry.c).
 *
 * Every algorithm is correct for any number of ranks and any count,
 * including 0. Reductions must be commutative and associative (the engine
 * sums MPI_INT). An optional trace records, per rank, when each send and
 * receive was posted and completed (local timer), into arrays allocated
 * before the timed loop; nothing else happens in the loop. */
#ifndef MPISCOPE_COLLS_H
#define MPISCOPE_COLLS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "../../clock/clock.h"

typedef enum { COLL_ALLGATHER, COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_BCAST, COLL_ALLTOALL, COLL_KINDS } coll_kind;

/* A reduction: elements of `elem` bytes, combined in place (inout op= in). */
typedef struct coll_op {
    const char *name;
    size_t elem;
    MPI_Datatype type;
    void (*combine)(void *inout, const void *in, size_t count);
} coll_op;
extern const coll_op coll_sum_int;

/* What one call works on. `count` is in elements of `elem` bytes: the block
 * per rank for allgather, alltoall and reduce_scatter (block variant), the
 * whole vector for allreduce and bcast. */
typedef struct coll_args {
    const void *sbuf; /* allgather: count; allreduce: count; reduce_scatter: p * count; alltoall: p * count */
    void *rbuf;       /* allgather, alltoall: p * count; allreduce, reduce_scatter: count; bcast: the buffer */
    size_t count, elem;
    const coll_op *op; /* reductions */
    int root;          /* bcast */
} coll_args;

/* Per-rank record of every message of the traced repetitions (struct of
 * arrays, written as the columns of a raw "trace" block). */
typedef struct coll_trace {
    const timer *t;
    long cap, n;
    long rep;              /* repetition being recorded */
    int32_t seq;           /* events so far in it */
    long dropped;          /* events that did not fit */
    long first_dropped_rep; /* -1 when nothing was dropped */
    int32_t *rep_col, *seq_col, *peer, *tag;
    int64_t *bytes;
    uint8_t *op;           /* 0 send, 1 receive */
    double *t_post, *t_done;
} coll_trace;

typedef struct coll_algo coll_algo;

/* Everything an algorithm needs besides its arguments, allocated once. */
typedef struct coll_ctx {
    MPI_Comm comm;
    int rank, size;
    const coll_algo *algo;
    size_t segment;        /* bytes per segment of pipelined algorithms */
    char *scratch;
    size_t scratch_bytes;
    size_t *offs;          /* p + 1 block offsets (bytes) */
    int *ints;             /* p + 1 integers (request slots, ...) */
    MPI_Request *reqs;
    int *evs;              /* trace event of each request, -1 if none */
    int *idx;              /* completed slots (MPI_Waitsome) */
    int nreq, cap;
    int active;            /* posted and not yet completed */
    coll_trace *trace;     /* NULL: not traced */
} coll_ctx;

struct coll_algo {
    const char *name;
    coll_kind kind;
    void (*run)(coll_ctx *c, const coll_args *a);
    /* Scratch bytes for `count` elements of `elem` bytes on p ranks (NULL: none). */
    size_t (*scratch)(size_t count, size_t elem, int p);
};

#define COLL_DEFAULT_SEGMENT 8192

/* Registry. */
int coll_count(void);
const coll_algo *coll_at(int i);
const coll_algo *coll_find(coll_kind kind, const char *name);
const char *coll_kind_name(coll_kind kind);
/* The benchmark that measures the collective. */
const char *coll_bench_name(coll_kind kind);
/* The collective whose algorithms a benchmark can use, or -1. */
int coll_kind_of_bench(const char *bench);
/* Names of `kind`'s algorithms, comma separated, into out. */
void coll_names(coll_kind kind, char *out, size_t n);

/* Allocates what `a` needs for up to `count` elements; trace_events > 0
 * also allocates a trace of that many events. Pages are touched here so no
 * page fault lands in a timed call. Returns 0 or -1 (out of memory). */
int coll_ctx_init(coll_ctx *c, MPI_Comm comm, const coll_algo *a, size_t count, size_t elem, size_t segment,
                  const timer *t, long trace_events);
void coll_ctx_free(coll_ctx *c);
/* An upper bound on the messages one rank posts in one call. */
long coll_events_per_call(const coll_algo *a, size_t count, size_t elem, int p, size_t segment);

/* Runs the algorithm once; `rep` labels the trace events. */
void coll_run(coll_ctx *c, long rep, const coll_args *a);

#endif
