/* SPDX-License-Identifier: BSD-3-Clause */
#include "sync.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_PING = 901, TAG_PONG, TAG_RPING, TAG_RPONG, TAG_RESULT, TAG_GO, TAG_MODEL, TAG_TURN }; /* TAG_PING + 1 is its pong */

/* A drift is kept only where the points show it: spread over at least this
 * long, and at least this many of its standard errors from zero. Otherwise a
 * drift fitted to noise would be extrapolated over the whole run (Hunold and
 * Carpen-Amarie, 2016, fit offset and drift by regression over time, too). */
static const double MIN_DRIFT_SPAN_S = 1e-3;
static const double DRIFT_SIGNIFICANCE = 3.0;

void sync_init(sync_ctx *s, const timer *t, MPI_Comm world, int rounds, int tree)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    MPI_Comm_dup(world, &s->comm);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    s->rounds = rounds;
    s->tree = tree;
    /* the tree's parent is the rank with the highest bit cleared (see child_in_round) */
    int high = 1;
    while (high * 2 <= s->rank) high *= 2;
    s->parent = s->rank == 0 ? -1 : tree ? s->rank - high : 0;
}

void sync_free(sync_ctx *s)
{
    free(s->points);
    MPI_Comm_free(&s->comm);
}

static void add_point(sync_ctx *s, sync_point p)
{
    if (s->npoints == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->points = realloc(s->points, (size_t)s->cap * sizeof *s->points);
    }
    s->points[s->npoints++] = p;
}

/* The initiator of a round trip keeps its round with the shortest round trip
 * (its error is bounded by half of it) as (t_send, remote, t_recv). */
static void initiate(sync_ctx *s, int peer, int tag, double best[3])
{
    best[0] = 0, best[1] = 0, best[2] = INFINITY;
    for (int i = 0; i < s->rounds; i++) {
        double remote, t1 = timer_now(s->t);
        MPI_Send(&t1, 1, MPI_DOUBLE, peer, tag, s->comm);
        MPI_Recv(&remote, 1, MPI_DOUBLE, peer, tag + 1, s->comm, MPI_STATUS_IGNORE);
        double t2 = timer_now(s->t);
        if (t2 - t1 < best[2] - best[0]) best[0] = t1, best[1] = remote, best[2] = t2;
    }
}

static void respond(sync_ctx *s, int peer, int tag)
{
    for (int i = 0; i < s->rounds; i++) {
        double ping;
        MPI_Recv(&ping, 1, MPI_DOUBLE, peer, tag, s->comm, MPI_STATUS_IGNORE);
        double now = timer_now(s->t);
        MPI_Send(&now, 1, MPI_DOUBLE, peer, tag + 1, s->comm);
    }
}

/* One offset point between this rank (the parent) and its child in the
 * tree, from round trips in both directions: a responder that notices a
 * message late (it was descheduled, as when ranks share CPUs) biases the
 * offset towards its side, and averaging the two directions cancels that
 * bias. The child keeps the point. */
static void measure_as_parent(sync_ctx *s, int child)
{
    double mine[3], theirs[3];
    initiate(s, child, TAG_PING, mine);
    respond(s, child, TAG_PING + 2);
    MPI_Recv(theirs, 3, MPI_DOUBLE, child, TAG_RESULT, s->comm, MPI_STATUS_IGNORE);
    /* child - parent, seen from each side */
    double off_parent = mine[1] - 0.5 * (mine[0] + mine[2]);
    double off_child = 0.5 * (theirs[0] + theirs[2]) - theirs[1];
    double rtt_parent = mine[2] - mine[0], rtt_child = theirs[2] - theirs[0];
    sync_point p = {mine[1], 0.5 * (off_parent + off_child), rtt_parent > rtt_child ? rtt_parent : rtt_child};
    MPI_Send(&p, 3, MPI_DOUBLE, child, TAG_RESULT, s->comm);
}

static void measure_as_child(sync_ctx *s)
{
    double mine[3];
    respond(s, s->parent, TAG_PING);
    initiate(s, s->parent, TAG_PING + 2, mine);
    MPI_Send(mine, 3, MPI_DOUBLE, s->parent, TAG_RESULT, s->comm);
    sync_point p;
    MPI_Recv(&p, 3, MPI_DOUBLE, s->parent, TAG_RESULT, s->comm, MPI_STATUS_IGNORE);
    add_point(s, p);
}

/* The standard error of a weighted least-squares slope: the residuals'
 * weighted variance (n - 2 degrees of freedom) over the weighted spread of
 * the points in time. */
static double drift_stderr(const sync_ctx *s, const clock_model *m, double sxx, double sw)
{
    double ss = 0;
    for (int i = 0; i < s->npoints; i++) {
        const sync_point *q = &s->points[i];
        double r = q->offset_s - (m->offset_s + m->drift * (q->local_s - m->ref_s));
        ss += r * r / (q->rtt_s * q->rtt_s + 1e-18);
    }
    double var = ss / sw * s->npoints / (s->npoints - 2);
    return sqrt(var / (sxx / sw) / s->npoints);
}

/* Weighted least squares of offset against local time over all points so
 * far. A point's error is bounded by half its round trip, so fast round trips
 * count more (weight 1/rtt^2). */
static void fit(sync_ctx *s)
{
    clock_model *m = &s->model;
    int n = s->npoints;
    if (s->rank == 0 || n == 0) {
        memset(m, 0, sizeof *m);
        return;
    }
    const sync_point *p = s->points;
    double ref = p[0].local_s, sw = 0, sx = 0, sy = 0;
    for (int i = 0; i < n; i++) {
        double w = 1.0 / (p[i].rtt_s * p[i].rtt_s + 1e-18);
        sw += w;
        sx += w * (p[i].local_s - ref);
        sy += w * p[i].offset_s;
    }
    double mx = sx / sw, my = sy / sw, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double w = 1.0 / (p[i].rtt_s * p[i].rtt_s + 1e-18), dx = p[i].local_s - ref - mx;
        sxx += w * dx * dx;
        sxy += w * dx * (p[i].offset_s - my);
    }
    double span = p[n - 1].local_s - ref;
    m->ref_s = ref + mx;
    m->offset_s = my;
    m->drift = sxx > 0 ? sxy / sxx : 0.0;
    if (span < MIN_DRIFT_SPAN_S || n < 3 || fabs(m->drift) < DRIFT_SIGNIFICANCE * drift_stderr(s, m, sxx, sw))
        m->drift = 0.0;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double r = p[i].offset_s - (m->offset_s + m->drift * (p[i].local_s - m->ref_s));
        ss += r * r;
    }
    m->residual_s = sqrt(ss / n);
}

/* Which pairs measure in round r: in the binomial tree, rounds r = 1, 2, 4, ...
 * where rank i < r measures with child i + r, so every rank is at most log2(p)
 * exchanges from rank 0 and a round's pairs run at once; in the star, rounds
 * r = 1, 2, ..., p-1 where rank 0 measures with rank r. */
static int next_round(const sync_ctx *s, int r) { return s->tree ? 2 * r : r + 1; }

static int child_in_round(const sync_ctx *s, int r)
{
    if (!s->tree) return s->rank == 0 ? r : -1;
    return s->rank < r && s->rank + r < s->size ? s->rank + r : -1;
}

static int joins_in_round(const sync_ctx *s, int r)
{
    return s->tree ? s->rank >= r && s->rank < 2 * r : s->rank == r;
}

static void warm_up(sync_ctx *s)
{
    enum { ROUNDS = 200 };
    double x = 0;
    for (int r = 1; r < s->size; r = next_round(s, r)) {
        int child = child_in_round(s, r);
        for (int i = 0; i < ROUNDS; i++) {
            if (child >= 0) {
                MPI_Send(&x, 1, MPI_DOUBLE, child, TAG_PING, s->comm);
                MPI_Recv(&x, 1, MPI_DOUBLE, child, TAG_PONG, s->comm, MPI_STATUS_IGNORE);
            } else if (joins_in_round(s, r)) {
                MPI_Recv(&x, 1, MPI_DOUBLE, s->parent, TAG_PING, s->comm, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_DOUBLE, s->parent, TAG_PONG, s->comm);
            }
        }
    }
    s->warm = 1;
}

/* Waits for `req` while sleeping between tests: ranks not taking part in the
 * current exchange must leave the CPUs to the two that do (MPI's own waits
 * poll, which skews round trips when ranks share CPUs). */
static void sleepy_wait(MPI_Request *req)
{
    const struct timespec nap = {0, 20000};
    int done = 0;
    for (MPI_Test(req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(req, &done, MPI_STATUS_IGNORE))
        nanosleep(&nap, NULL);
}

/* parent(child(x)) for linear models: a rank's fit maps its time onto its
 * parent's, the parent's composed model maps that onto rank 0's. */
static clock_model compose(const clock_model *mine, const clock_model *parent)
{
    clock_model c;
    double d = mine->drift, D = parent->drift;
    c.drift = d + D - d * D;
    c.ref_s = mine->ref_s;
    c.offset_s = c.drift * mine->ref_s + (1 - D) * (mine->offset_s - d * mine->ref_s) + parent->offset_s -
                 D * parent->ref_s;
    /* errors along the path add up, independent ones in quadrature */
    c.residual_s = sqrt(mine->residual_s * mine->residual_s + parent->residual_s * parent->residual_s);
    return c;
}

/* Hands every rank's model down the tree, composed onto rank 0's time. */
static void compose_down(sync_ctx *s)
{
    for (int r = 1; r < s->size; r = next_round(s, r)) {
        int child = child_in_round(s, r);
        if (child >= 0 && s->rank != 0) {
            MPI_Send(&s->model, 4, MPI_DOUBLE, child, TAG_MODEL, s->comm);
        } else if (joins_in_round(s, r) && s->parent != 0) {
            clock_model parent;
            MPI_Recv(&parent, 4, MPI_DOUBLE, s->parent, TAG_MODEL, s->comm, MPI_STATUS_IGNORE);
            s->model = compose(&s->model, &parent);
        }
    }
}

/* With more ranks than CPUs, concurrent pairs preempt each other and their
 * round trips take a scheduler slice: the tree's pairs of a round then take
 * turns, parent i after parent i - 1, so only two ranks run at a time. */
static void wait_turn(sync_ctx *s, MPI_Request *req)
{
    char token;
    if (!s->serial || s->rank == 0) return;
    MPI_Irecv(&token, 1, MPI_CHAR, s->rank - 1, TAG_TURN, s->comm, req);
    sleepy_wait(req);
}

static void pass_turn(sync_ctx *s, int r)
{
    char token = 0;
    if (s->serial && s->rank + 1 < r && child_in_round(s, r) >= 0 && s->rank + 1 + r < s->size)
        MPI_Send(&token, 1, MPI_CHAR, s->rank + 1, TAG_TURN, s->comm);
}

void sync_measure(sync_ctx *s, int npoints)
{
    if (!s->warm) warm_up(s);
    double started = timer_now(s->t);
    MPI_Request req;
    char go = 0;
    for (int k = 0; k < npoints; k++) {
        for (int r = 1; r < s->size; r = next_round(s, r)) {
            int child = child_in_round(s, r);
            if (child >= 0) {
                if (s->tree) wait_turn(s, &req);
                MPI_Send(&go, 1, MPI_CHAR, child, TAG_GO, s->comm);
                measure_as_parent(s, child);
                if (s->tree) pass_turn(s, r);
            } else if (joins_in_round(s, r)) {
                MPI_Irecv(&go, 1, MPI_CHAR, s->parent, TAG_GO, s->comm, &req);
                sleepy_wait(&req);
                measure_as_child(s);
            }
            if (s->tree && s->serial) { /* nor does the next round start before this one ends */
                MPI_Ibarrier(s->comm, &req);
                sleepy_wait(&req);
            }
        }
    }
    fit(s);
    compose_down(s);
    MPI_Ibarrier(s->comm, &req);
    sleepy_wait(&req);
    s->cost_s = timer_now(s->t) - started;
}

double sync_to_global(const clock_model *m, double local)
{
    return local - (m->offset_s + m->drift * (local - m->ref_s));
}

double sync_to_local(const clock_model *m, double global)
{
    return (global + m->offset_s - m->drift * m->ref_s) / (1.0 - m->drift);
}
