/* SPDX-License-Identifier: BSD-3-Clause */
/* What every benchmark implements, and the state of one benchmark x size. */
#ifndef MPISCOPE_BENCH_H
#define MPISCOPE_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "buffers.h"
#include "../clock/clock.h"

struct options;
struct rawfile;
struct testhooks;

/* How per-rank timestamps become samples (docs/reference/formats/raw-files.md). */
typedef enum { PAT_PINGPONG, PAT_ONEWAY, PAT_PAIRS, PAT_BW, PAT_COLL } pattern;
typedef enum { ROLE_IDLE, ROLE_INITIATOR, ROLE_RESPONDER, ROLE_MEMBER } role;
/* How Python turns a series' rows into samples (docs/reference/formats/raw-files.md, "Sample
 * rules"); recorded in every series block, listed by --describe. */
typedef enum {
    RULE_SLOWEST_RANK, RULE_HALF_ROUND_TRIP, RULE_DURATION, RULE_LOOP_HALF_ROUND_TRIP, RULE_PER_MESSAGE,
    RULE_BANDWIDTH, RULE_BIDIRECTIONAL_BANDWIDTH, RULE_ONE_WAY, RULE_PAIR_EXCHANGE, RULE_COUNT
} sample_rule;
typedef enum { UNIT_SECONDS, UNIT_BYTES_PER_SECOND } sample_unit;
/* Which ranks take part: ranks 0 and 1; p with p + n/2; the --pairs list; all. */
typedef enum { PAIRING_FIRST_TWO, PAIRING_HALVES, PAIRING_LISTED, PAIRING_ALL } pairing;

typedef struct series {
    MPI_Comm world, pc; /* pc: the ranks taking part (MPI_COMM_NULL when idle) */
    int rank, size;     /* in world */
    role role;
    int peer;           /* partner's world rank, or -1 */
    size_t bytes;
    const buffers *buf;
    const timer *t;
    int check, root_rotate, window_msgs;
    int corrupt; /* test-only: --check must see this added to every received element */
    const struct testhooks *hooks;
    MPI_Request *reqs;  /* 2 * window_msgs, for the windowed bandwidth tests */
    /* Which variant of the benchmark (an algorithm, a queue depth, a layer…):
     * index into the benchmark's variants and its name, "mpi" by default. */
    int variant;
    const char *algo;
    const struct options *o;
    /* Filled by the benchmark's describe(): what is handed to MPI. */
    long count;
    const char *datatype;
    /* Optional, set by describe(): the benchmark's own per-series state (released
     * by its finish(), then free()d by the engine); parameters recorded as the
     * block's "params" (a JSON object, "" for none); and, on a rank that cannot
     * run the series (no shared memory between the pair, no TCP connection…),
     * why: the series is then recorded empty on every rank, with the reason. */
    void *state;
    char params[1024];
    const char *skip;
    int oversubscribed; /* more ranks on this host than CPUs: a rank that waits should yield */
    int measuring; /* 0 during the warm-up repetitions, 1 once repetitions are recorded */
    int barrier_start; /* repetitions start with a barrier (warm-up, --sync barrier, auto's choice, fallback) */
} series;

typedef struct bench_def {
    const char *name;
    pattern pat;
    int min_np;
    int sizeless; /* runs once, at size 0, whatever sizes were asked for */
    sample_rule rule;
    sample_unit unit;
    pairing pairing;
    int collective; /* summarized as one operation over all ranks */
    /* The variants of one size run one after another, size by size (the
     * default: all sizes of one variant, then the next variant), so the
     * variants compared at a size are measured minutes closer together. */
    int variants_by_size;
    /* The engine option that chooses the variants, or NULL. */
    const char *variant_option;
    /* Bytes one repetition touches on one side, for buffer sizing. */
    size_t (*footprint)(size_t bytes, int np);
    void (*describe)(series *s);
    /* Runs repetition `rep` once start synchronization is done; records when
     * the operation started and ended on this rank (local timer). */
    void (*run_rep)(series *s, long rep, double *t_start, double *t_end);
    /* Optional: runs before repetition `rep`'s start synchronization, e.g. to
     * post a receive so that the message finds it waiting, as in a loop. */
    void (*pre_rep)(series *s, long rep);
    /* Optional: how many variants the options ask for, and the name of
     * variant i (recorded as the series' "algo"). NULL: one variant, "mpi". */
    int (*nvariants)(const struct options *o);
    const char *(*variant_name)(const struct options *o, int i);
    /* Optional: the role whose rows give variant i's samples. NULL: the
     * initiator (ROLE_MEMBER for collectives). */
    role (*timed_role)(const struct options *o, int i);
    /* Optional: releases what describe() set up (sockets, windows, segments);
     * called on every rank at the end of the series, also a skipped one. */
    void (*finish)(series *s);
    /* Optional: appends blocks of its own after the series' block (e.g. a
     * trace of its messages) for the `reps` recorded repetitions; returns 0,
     * or -1 on an I/O error. */
    int (*extra_blocks)(series *s, struct rawfile *raw, long reps);
} bench_def;

const bench_def *bench_find(const char *name);
/* The i-th benchmark in registry order, NULL past the last. */
const bench_def *bench_at(int i);
/* Whose rows give the samples of the def's variant i. */
role bench_timed_role(const bench_def *def, const struct options *o, int i);
void bench_list(char *out, size_t n);

/* --check helpers: a byte pattern keyed by (who, index, rep) */
static inline unsigned char check_byte(long who, size_t i, long rep)
{
    return (unsigned char)(who * 37 + (long)(i % 251) * 11 + rep * 5 + 3);
}
void check_fill(unsigned char *p, size_t n, long who, long rep);
/* Aborts the job with exit code 3 and a message naming what differed. */
void check_verify(const series *s, const unsigned char *p, size_t n, long who, long rep, const char *what);
void check_fail(const series *s, long rep, const char *what, size_t index, long got, long want);

/* Repetition `rep`'s send and receive buffers of n bytes (n >= s->bytes);
 * with --check, the send buffer's first s->bytes hold the pattern. */
static inline void rep_buffers(const series *s, size_t n, long rep, char **sb, char **rb)
{
    *sb = buffers_send(s->buf, n, rep);
    *rb = buffers_recv(s->buf, n, rep);
    if (s->check) check_fill((unsigned char *)*sb, s->bytes, s->rank, rep);
}

#endif
