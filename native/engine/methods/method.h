/* SPDX-License-Identifier: BSD-3-Clause */
/* The peers' measurement methods (`--methods`): each tool's own timing loop
 * around the same operations, buffers and library as the engine's series,
 * one file per method (osu.c, imb.c, skampi.c, mpptest.c, mpibench.c) and
 * the reference series the attribution compares them with (reference.c).
 *
 * A method records what its tool times, as the tool times it: one row per
 * timed span (one call, or a whole loop of calls) on every rank, flagged
 * warm-up and calibration rows included. It never computes the number the
 * tool prints; Python derives it from the rows (src/mpiscope/methods/). */
#ifndef MPISCOPE_METHOD_H
#define MPISCOPE_METHOD_H

#include <math.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine.h"

/* The operations methods reproduce, by the engine's benchmark names:
 * MOP_RING is MPI_Sendrecv to the right, from the left (IMB's Sendrecv);
 * MOP_EXCHANGE sends to both neighbours and receives from both (IMB's
 * Exchange); MOP_REDUCE_SCATTER reduces and scatters equal blocks of the
 * size each (the engine's reduce_scatter_block, OSU's and IMB's
 * Reduce_scatter). */
typedef enum {
    MOP_PINGPONG, MOP_BW, MOP_BARRIER, MOP_BCAST, MOP_REDUCE, MOP_ALLREDUCE, MOP_ALLGATHER,
    MOP_ALLTOALL, MOP_GATHER, MOP_SCATTER, MOP_RING, MOP_EXCHANGE, MOP_REDUCE_SCATTER, MOP_COUNT
} mop;

/* How a method times an operation (recorded in each block, listed by
 * --describe): what the attribution of its difference needs to know. */
typedef struct mop_traits {
    const char *timing; /* "call": every call timed; "loop": a loop of calls timed as a whole */
    const char *start;  /* what separates calls: "back_to_back", "barrier_after" (an untimed barrier
                         * after each call), "barrier_before", "slot" (a start time agreed on the
                         * global clock) */
    const char *root;   /* "fixed", "rotating", or "none" (no root) */
    const char *cache;  /* "warm": the same buffers every call; "cycling": fresh memory every repetition */
    const char *ranks;  /* who takes part: "first_two" (ranks 0 and 1), "root_and_last"
                         * (rank 0 and the last rank), "halves" (p with p + n/2), "all" */
} mop_traits;

/* Phases of a row (column "phase"). */
enum { ROW_MEASURED = 0, ROW_WARMUP = 1, ROW_CALIBRATION = 2 };
/* Flags of a row (column "flags"). */
enum { FLAG_LATE = 1, FLAG_TOO_LONG = 2, FLAG_REJECTED = 4 };

/* A rank's rows of one method series, grown between timed loops only. */
typedef struct mrows {
    long n, cap;
    int32_t *rep, *calls, *root, *batch;
    uint8_t *phase, *flags;
    double *t_start, *t_end, *t_sched;
} mrows;

struct method_def;

enum { MAX_PARAMS = 12 };

/* One method measuring one operation (at one size, or every size). */
typedef struct mctx {
    engine *e;
    const struct method_def *def;
    mop op;
    const char *bench;
    size_t bytes;       /* the size being measured */
    MPI_Comm comm;      /* the ranks taking part (MPI_COMM_NULL on an idle rank) */
    int crank, csize;   /* in comm */
    int peer;           /* point-to-point: the partner's rank in comm, else -1 */
    const char *role;   /* "member", "initiator", "responder" or "idle" */
    const timer *t;
    void *state;        /* the method's own, across the sizes of one operation (IMB: the last n) */
    mrows rows;
    const char *datatype; /* what the method hands to MPI: its datatype and count per rank or block */
    long count;
    /* Reduce_scatter: each rank's count (MPI_Reduce_scatter), or NULL for
     * equal blocks of `count` (MPI_Reduce_scatter_block, the engine's call). */
    const int *recvcounts;
    /* The block's "params": numbers the tool's loop chose (iterations, skip…). */
    const char *pkey[MAX_PARAMS];
    double pval[MAX_PARAMS];
    int nparams;
} mctx;

typedef struct method_def {
    const char *name;   /* as --methods names it */
    const char *tool;   /* the tool and version reproduced, or what a reference measures */
    int reference;      /* 1: a reference series of the attribution, not a peer tool */
    /* The method's traits for an operation, NULL when it does not measure it. */
    const mop_traits *(*traits)(mop op);
    /* Measures m->op at m->bytes; rows into m->rows, parameters by method_param. */
    void (*run)(mctx *m);
    /* Optional: measures every size of the operation at once, sizes
     * interleaved (mpptest); writes one block per size with method_record. */
    int (*run_sizes)(mctx *m, const long *sizes, int nsizes);
    /* Optional: releases the method's state (free() when absent). */
    void (*release)(void *state);
} method_def;

const method_def *method_find(const char *name);
const method_def *method_at(int i);
/* The operation an engine benchmark is, or -1. */
int method_op_of(const char *bench);
const char *method_op_name(mop op);
int method_op_rooted(mop op);
/* Whether the operation reduces (each method picks its datatype for it). */
int method_op_reduction(mop op);

/* Runs `def` on benchmark `bench` (its sizes: one, or all for run_sizes
 * methods) on every rank and writes its blocks; 0, or -1 on an I/O error.
 * `*state` is the method's own across the sizes of the benchmark (NULL at
 * its first size; the caller frees it after the last). */
int method_run(engine *e, const method_def *def, const char *bench, const long *sizes, int nsizes,
               void **state);
/* The engine's run: the methods of --methods after its own series of `bench`
 * at `bytes`, and after the benchmark's last size (those measuring all its
 * sizes at once; `states`: one per --methods entry, released there). */
int methods_at_size(engine *e, const char *bench, size_t bytes, void **states);
int methods_after_bench(engine *e, const char *bench, const long *sizes, int n, void **states);
/* Writes this rank's block for m->bytes and empties the rows. */
int method_record(mctx *m);

/* Rows: `n` more reserved, phase and calls set, the rest empty; returns the
 * index of the first. Never call inside a timed loop. */
long mrows_take(mrows *r, long n, int phase, int calls);
void mrows_free(mrows *r);

/* Buffers: this rank's send and receive memory for `bytes` per rank and
 * block (the engine's warm buffers). */
char *method_send(const mctx *m);
char *method_recv(const mctx *m);

/* One call of a collective on m->comm with the method's datatype `dt`
 * (`count` elements per rank or block), from `sb` into `rb` (bcast: `sb`
 * on the root, `rb` elsewhere; exchange: two blocks each). */
void method_call(const mctx *m, MPI_Datatype dt, int count, int root, char *sb, char *rb);

/* Point-to-point ping-pong partners (ranks 0 and 1 of m->comm). */
static inline int method_is_initiator(const mctx *m) { return m->crank == 0; }

/* Reads the timer: all methods time with the engine's timer (--timer),
 * which the global clock maps between ranks. */
static inline double mnow(const mctx *m) { return timer_now(m->t); }

/* Sets one of the block's "params" (a number), replacing one of that name. */
void method_param(mctx *m, const char *key, double value);

#endif
