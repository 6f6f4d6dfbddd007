/* SPDX-License-Identifier: BSD-3-Clause */
#include "procsync.h"

#include <math.h>
#include <sched.h>

/* How long after its agreed start a rank may leave the wait and still be on
 * time: a few timer reads. More means it was preempted while waiting, and its
 * peers may already have sent to it. */
static const double LATE_SLACK_S = 1e-6;

/* How long one agreed schedule of window starts lasts: a rank that loses its
 * CPU for a scheduler slice comes back after the schedule's later starts, and
 * every one of them is late until the next schedule, so a short schedule
 * bounds what one preemption costs. Each new schedule costs its lead (below):
 * a few percent of the schedule. Long windows catch up quickly. */
static const double SCHEDULE_S = 0.001;
static const double MIN_PER_SCHEDULE = 16;
static const double SCHEDULE_LEAD_S = 20e-6;

/* Waits until local time `until` to start repetition `rep`; returns 1 if the
 * rank started on time, and counts why it did not. */
static int wait_until(procsync *p, double until, long rep)
{
    double now = timer_now(p->t);
    int arrived_in_time = now <= until;
    testhooks_stall(p->hooks, p->rank, rep);
    while (now < until) {
        /* With more ranks than CPUs a spinning rank would starve the others. */
        if (p->oversubscribed && until - now > 50e-6) sched_yield();
        now = timer_now(p->t);
    }
    /* A rank that must yield its CPU cannot promise to leave on time; it is
     * late only when it arrives after the start. */
    int left_in_time = p->oversubscribed || now - until <= LATE_SLACK_S;
    p->late_arrived += !arrived_in_time;
    p->late_left += arrived_in_time && !left_in_time;
    return arrived_in_time && left_in_time;
}

/* A global start time all participants agree on, far enough ahead for the
 * message carrying it to reach every one of them: a broadcast takes no longer
 * than a few of the operations that sized the window, plus some microseconds
 * (a rank that gets it later starts late, and is counted so). */
static double agree_on_start(const procsync *p)
{
    double start = sync_to_global(p->m, timer_now(p->t)) + SCHEDULE_LEAD_S + 2 * p->window_s;
    MPI_Bcast(&start, 1, MPI_DOUBLE, 0, p->pc);
    return start;
}

/* A rank held up for milliseconds makes every later start of a schedule late
 * until the windows' slack has caught up, so the participants agree on a
 * fresh schedule this often. */
void procsync_batch(procsync *p, double window_s)
{
    p->window_s = window_s;
    p->per_schedule = (long)fmax(MIN_PER_SCHEDULE, SCHEDULE_S / window_s);
    p->base = 0;
}

/* After a barrier start the responder of a ping-pong leaves the barrier first,
 * its initiator when the responder's last message reaches it (pingpong.c's
 * pre_rep); in a loop such as osu_latency's the responder posts and waits for
 * the next ping a one-way time before it arrives: either way the message finds
 * it polling. Window starts give every rank the same agreed time (Hunold and
 * Carpen-Amarie 2016), so both would leave together and the responder could
 * still be on its way into the wait when the message lands. Only a rank whose
 * first act is to wait for its peer starts early; its early start is idle
 * time outside every sample. */
double procsync_lead(pattern pat, role r, double message_s, double clock_err_s)
{
    int waits_first = pat == PAT_PINGPONG || pat == PAT_ONEWAY || pat == PAT_PAIRS;
    return r == ROLE_RESPONDER && waits_first ? message_s + clock_err_s : 0;
}

/* A tag of its own: benchmarks' point-to-point messages on the same
 * communicator never match it. */
#define OWN_BARRIER_TAG 0x5b5b

void procsync_barrier(MPI_Comm c, int own)
{
    if (!own) {
        MPI_Barrier(c);
        return;
    }
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (int d = 1; d < size; d <<= 1)
        MPI_Sendrecv(NULL, 0, MPI_BYTE, (rank + d) % size, OWN_BARRIER_TAG, NULL, 0, MPI_BYTE,
                     (rank - d + size) % size, OWN_BARRIER_TAG, c, MPI_STATUS_IGNORE);
}

/* Taking turns, both schemes meet the same load at the same time: a machine
 * whose speed changes from one second to the next (other work, a host moving
 * the CPUs) cannot make them differ, as it can between two runs. */
int procsync_barrier_turn(const procsync *p, long k)
{
    long n = p->hooks->sync_alternate;
    return !p->window || (n > 0 && (k / n) % 2 == 1);
}

uint8_t procsync_start(procsync *p, long i, long k, double *t_sched)
{
    if (procsync_barrier_turn(p, k)) {
        procsync_barrier(p->pc, p->own_barrier);
        *t_sched = NAN;
        p->stale = 1;
        return 1;
    }
    if (i % p->per_schedule == 0 || p->stale) p->base = agree_on_start(p) - (double)i * p->window_s;
    p->stale = 0;
    *t_sched = sync_to_local(p->m, p->base + (double)i * p->window_s - p->lead_s);
    return (uint8_t)wait_until(p, *t_sched, k);
}
