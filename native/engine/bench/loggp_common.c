/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "loggp.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../options.h"

enum { FLOOD_MSGS_MAX = 256, FLOOD_MSGS_MIN = 4 };

long loggp_msgs(const options *o, size_t bytes, int q)
{
    long by_bytes = bytes ? (long)((o->flood_bytes + (long)bytes - 1) / (long)bytes) : FLOOD_MSGS_MAX;
    long m = by_bytes < FLOOD_MSGS_MAX ? by_bytes : FLOOD_MSGS_MAX;
    if (m < 2L * q) m = 2L * q;
    if (m < FLOOD_MSGS_MIN) m = FLOOD_MSGS_MIN;
    return m;
}

void loggp_wait_slots(MPI_Request *req, int q, long from, long k)
{
    int first = (int)(from % q);
    int run = (int)(k < q - first ? k : q - first);
    MPI_Waitall(run, req + first, MPI_STATUSES_IGNORE);
    if (k > run) MPI_Waitall((int)(k - run), req, MPI_STATUSES_IGNORE);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double loggp_compute_calibrate(const timer *t, double seconds, int calls)
{
    if (seconds <= 0) return 0;
    double *d = malloc(sizeof(double) * (size_t)calls);
    uint64_t sink = 1;
    for (int i = 0; i < calls; i++) {
        double a = timer_now(t);
        sink = loggp_compute(t, seconds, sink);
        d[i] = timer_now(t) - a - t->cost_s;
    }
    qsort(d, (size_t)calls, sizeof *d, cmp_double);
    double median = d[calls / 2];
    free(d);
    (void)cpu_opaque(sink);
    return median;
}

void loggp_spin_for(const timer *t, double seconds)
{
    double end = timer_now(t) + seconds;
    while (timer_now(t) < end) continue; /* no pause: it would overshoot the end by its latency */
}

void loggp_relax(const series *s, unsigned *spins)
{
    ++*spins;
    if (s->oversubscribed && *spins > 100) sched_yield();
    else if (*spins > 2000) cpu_relax();
}

int loggp_max_queue_depth(const options *o)
{
    int q = 1;
    for (int i = 0; i < o->nqueue_depths; i++)
        if (o->queue_depths[i] > q) q = o->queue_depths[i];
    return q;
}

int loggp_pc_peer(const series *s)
{
    int me;
    MPI_Comm_rank(s->pc, &me);
    return 1 - me;
}

int loggp_same_host(const series *s, char *peer_host, size_t n)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = {0}, theirs[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(mine, &len);
    int peer = loggp_pc_peer(s);
    MPI_Sendrecv(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, peer, 41, theirs, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                 peer, 41, s->pc, MPI_STATUS_IGNORE);
    if (peer_host) snprintf(peer_host, n, "%s", theirs);
    return strcmp(mine, theirs) == 0;
}
