/* SPDX-License-Identifier: BSD-3-Clause */
/* A schedule: per rank, operations (send, receive, computation) and the
 * operations each one requires to have completed before it starts (GOAL's
 * "requires"). Producers hand one rank at a time to a sink, so a schedule
 * of millions of ranks is streamed, never held as text. */
#ifndef MPISCOPE_SIM_SCHEDULE_H
#define MPISCOPE_SIM_SCHEDULE_H

#include <stdint.h>
#include <stdio.h>

enum {
    OP_SEND = 0,   /* value: bytes, peer: destination */
    OP_RECV = 1,   /* value: bytes, peer: source */
    OP_CALC = 2,   /* value: seconds (0: a join, free) */
    OP_REDUCE = 3, /* value: bytes combined; costs gamma per byte */
};

typedef struct sched_op {
    uint8_t type;
    int32_t peer, tag;
    double value;
    uint32_t dep0, ndeps; /* its required operations: deps[dep0 .. dep0 + ndeps) */
} sched_op;

/* One rank's operations; deps hold local operation indices. */
typedef struct rank_sched {
    long rank;
    uint32_t nops, ndeps;
    const sched_op *ops;
    const uint32_t *deps;
} rank_sched;

typedef struct sched_sink {
    int (*begin)(struct sched_sink *s, long nranks);
    int (*rank)(struct sched_sink *s, const rank_sched *r); /* ranks in order 0, 1, ... */
    int (*end)(struct sched_sink *s);
    void *state;
} sched_sink;

/* Largest ranks and tags the simulator's matching keys hold. */
#define SCHED_MAX_RANKS (1L << 24)
#define SCHED_MAX_TAG 65535
/* Largest size (bytes) or computation (GOAL: nanoseconds) a schedule may
 * hold: 2^53, the largest whole number a double holds exactly. */
#define SCHED_MAX_VALUE 9007199254740992.0

/* Writers (goal.c, gbin.c): gamma converts reductions into GOAL's calc. */
void goal_writer(sched_sink *s, FILE *f, double gamma);
void gbin_writer(sched_sink *s, FILE *f);
/* Readers: stream a file into a sink; 0, or -1 with the reason in err. */
int goal_read(FILE *f, sched_sink *s, char *err, size_t n);
int gbin_read(FILE *f, sched_sink *s, char *err, size_t n);
/* Which reader a file needs: 1 binary (magic), 0 text. */
int gbin_is_binary(FILE *f);

/* The generator (gen.c): our own algorithm `algo` of benchmark `bench` on p
 * ranks for the benchmark's `size`, recorded rank by rank into `s`. */
int gen_schedule(const char *bench, const char *algo, long p, long size, long segment, sched_sink *s, char *err,
                 size_t n);
/* Only ranks[0..nr), in that order (each rank_sched names its rank). */
int gen_ranks(const char *bench, const char *algo, long p, long size, long segment, const long *ranks, long nr,
              sched_sink *s, char *err, size_t n);

#endif
