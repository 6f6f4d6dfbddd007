/* SPDX-License-Identifier: BSD-3-Clause */
/* The discrete-event simulator (sim.c): a schedule in flat arrays, LogGOPS
 * costs with the sender/receiver costs of Tan and Strazdins (2002), a CPU, a
 * send channel and a receive channel per rank, MPI matching (source, tag,
 * posting order, an unexpected queue), eager and rendezvous messages,
 * optional uplinks. */
#ifndef MPISCOPE_SIM_SIM_H
#define MPISCOPE_SIM_SIM_H

#include <stdint.h>
#include "schedule.h"

typedef struct sim_costs {
    double L;            /* wire latency (s) */
    double o_s, o_r;     /* CPU overhead of a send and of a receive (s) */
    double O;            /* CPU overhead per byte (s/B) */
    double g, G;         /* gap between messages (s), per byte on the wire (s/B) */
    double S;            /* largest eager message (bytes); larger ones go by rendezvous */
    double S_first;      /* bytes a rendezvous message carries with its request; 0: none */
    double burst;        /* bytes a link's token bucket holds (with G): an idle link lets them through at once */
    double alpha_s, beta_s, alpha_r, beta_r; /* sender's / receiver's channel per message and byte */
    double gamma;        /* reduction, per byte (s/B) */
} sim_costs;

/* Measured per-message times: at each size, nq quantiles (ascending) of
 * the time a message takes; a message draws one quantile level u for all
 * sizes and interpolates linearly between the sizes around its own. */
typedef struct sim_dist {
    int nsizes, nq;
    double *sizes, *q; /* q[i * nq + j] */
} sim_dist;

typedef struct sim_topo {
    long ranks_per_host, hosts_per_switch; /* 0: no topology */
    double uplink_G;                       /* s/B of a switch's uplink */
} sim_topo;

/* One operation as the simulator holds it: everything an event touches in
 * one place, 32 bytes so it never straddles a cache line (events visit
 * operations in no order: each line is a miss). */
typedef struct sim_op {
    double value;              /* bytes (send, recv, reduce) or seconds (calc) */
    int32_t peer;
    uint16_t tag, flags;       /* flags: SIM_EXCHANGE */
    /* Its rank (ranks < SCHED_MAX_RANKS = 2^24), which is also a send's
     * source as receives match it. In a world of one rank (symmetry: rank 0
     * stands for all) every operation runs on rank 0 and a send's `rank` is
     * the rank it stands for: see sim_rank. */
    uint32_t rank : 24, type : 8;
    uint32_t dstart;           /* dependents: dlist[dstart .. op[i + 1].dstart) */
    uint32_t pending, link;    /* simulation state: requirements left; next in a match queue or the matched receive */
} sim_op;
/* A send whose rank posted, with it, a receive from the same peer (the
 * same requirements: a sendrecv, or an isend and irecv both ways). */
#define SIM_EXCHANGE 1u
_Static_assert(sizeof(sim_op) == 32, "sim_op must stay 32 bytes: one per half cache line");

/* A schedule held for simulation. */
typedef struct sim_sched {
    long nranks;
    uint64_t nops, nedges, ops_cap, edges_cap;
    /* An operation's index is first[rank] + k (its k-th); it is held at
     * op[pos[index]] (sched_mem.c: the k-th of all ranks side by side).
     * Dependents, events and per-operation results use where it is held. */
    sim_op *op;                /* nops + 1: the last one only ends the dependents */
    uint64_t *first;           /* nranks + 1 */
    uint32_t *pos;             /* nops: index -> where held */
    uint32_t *roots;           /* where held, in index order: the operations that require nothing */
    uint64_t nroots;
    uint32_t *ea, *eb;         /* while loading: op ea requires op eb */
    uint32_t *dlist;
    uint32_t *ndeps;           /* per operation: how many it requires (read once per replicate) */
    uint64_t max_ops;          /* 0: no limit */
    int failed;
} sim_sched;

/* The rank whose CPU and channels an operation uses. */
static inline uint32_t sim_rank(const sim_sched *sc, const sim_op *o) { return sc->nranks == 1 ? 0 : o->rank; }

/* A sink that fills `sc` (call sim_sched_finish after the producer). */
void sim_sched_sink(sched_sink *s, sim_sched *sc, uint64_t max_ops);
int sim_sched_finish(sim_sched *sc, char *err, size_t n);
/* Where held -> index (the inverse of pos; malloc'd, NULL: out of memory). */
uint32_t *sim_sched_logical(const sim_sched *sc);
void sim_sched_free(sim_sched *sc);
/* Memory for large arrays (huge pages where available), and its release. */
void *sim_huge_alloc(size_t bytes);
void sim_huge_free(void *p, size_t bytes);

typedef struct sim_opts {
    sim_costs c;
    const sim_dist *dist;  /* NULL: costs only */
    const sim_dist *exchange; /* NULL, or per size (nq 1) an exchange message's one-way time less a lone one's */
    const double *skew;    /* per-rank start (nranks values), or NULL */
    const double *skew_pool; long nskew_pool; /* or drawn per rank from these */
    sim_topo topo;
    uint64_t seed;
    int fair;              /* a rank's messages in flight share its send channel equally (TCP streams) */
    int keep_times;        /* per-operation start and end, and what made each late */
} sim_opts;

typedef struct sim_result {
    double makespan, finish_mean, finish_min;
    uint64_t events, messages, unexpected, rendezvous;
    double *finish;              /* per rank (nranks) */
    double *t_start, *t_end;     /* per operation where held (op[i]), with keep_times */
    uint32_t *cause;             /* where the operation is held whose end let it start or finish, UINT32_MAX: none */
} sim_result;

/* One replicate; res arrays are allocated on first use and reused. */
int sim_run(sim_sched *sc, const sim_opts *o, sim_result *res, char *err, size_t n);
void sim_result_free(sim_result *r);

/* Rank symmetry (sym.c): rank 0's operation count, the most of the ranks
 * probed, and whether every probed rank is rank 0 shifted by its rank. */
typedef struct { uint32_t ops_rank0, max_ops; int symmetric; long checked; } sym_info;
int sym_probe(const char *bench, const char *algo, long p, long size, long segment, sym_info *out, char *err,
              size_t n);
/* Rank 0 of a symmetric schedule as a world of one rank. */
int sym_load(const char *bench, const char *algo, long p, long size, long segment, sim_sched *sc, char *err,
             size_t n);

#endif
