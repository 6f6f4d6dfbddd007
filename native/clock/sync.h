/* SPDX-License-Identifier: BSD-3-Clause */
/* Global clock: every rank's offset and linear drift against rank 0, measured
 * along a binomial tree (O(log p) rounds of concurrent pairs) and composed, or
 * (star) by every rank with rank 0, one pair at a time. */
#ifndef MPISCOPE_SYNC_H
#define MPISCOPE_SYNC_H

#include <mpi.h>
#include "clock.h"

typedef struct sync_point {
    double local_s;  /* this rank's local time of the sample */
    double offset_s; /* local - the parent's time at that moment */
    double rtt_s;    /* round trip of the ping-pong that gave the sample */
} sync_point;

/* global = local - (offset_s + drift * (local - ref_s)) */
typedef struct clock_model {
    double offset_s, drift, ref_s;
    double residual_s; /* RMS of the fit residuals, in quadrature along the path to rank 0 */
} clock_model;

typedef struct sync_ctx {
    const timer *t;
    MPI_Comm comm; /* private duplicate of the world communicator */
    int rank, size;
    int tree;      /* 1: binomial tree, 0: star */
    int serial;    /* the tree's pairs of a round measure one after another (ranks share CPUs) */
    int parent;    /* the rank this one measures its offset against (-1 on rank 0) */
    int rounds;    /* ping-pongs per point; the minimum round trip is kept */
    int warm;      /* the channel to every peer has been warmed up */
    sync_point *points; /* against the parent */
    int npoints, cap;
    clock_model model; /* composed: onto rank 0's time */
    double cost_s;     /* how long the last sync_measure took on this rank */
} sync_ctx;

void sync_init(sync_ctx *s, const timer *t, MPI_Comm world, int rounds, int tree);
void sync_free(sync_ctx *s);
/* Collective: adds `npoints` offset samples per rank, then refits the model. */
void sync_measure(sync_ctx *s, int npoints);
double sync_to_global(const clock_model *m, double local);
double sync_to_local(const clock_model *m, double global);

#endif
