/* SPDX-License-Identifier: BSD-3-Clause */
/* The discrete-event simulation of a schedule (sim.h).
 *
 * A send of m bytes takes its rank's CPU for o_s + O·m, then its send
 * channel for αs + βs·m + G·m (the next message leaves no sooner than g
 * after it). A time drawn from measurements is a message's whole one-way
 * time: it keeps the send channel busy for itself, or with G > 0 for its
 * bytes' G·m only (the rest is latency). The receiver's link
 * carries its G·m too, so messages into one rank queue there; the uplinks
 * of a topology are shared the same way. The message reaches the receiver L
 * after its last byte left. There it is matched against the receives posted
 * for its (source, tag) in posting order, or waits in the unexpected queue;
 * once both are there the receive channel takes αr + βr·m, then the CPU
 * o_r + O·m. Larger than S bytes, a message goes by rendezvous: a request
 * (L) to the receiver, a clear-to-send (L) back once the receive is posted
 * and the receiver's channel has sent what it holds, then the data; with
 * S_first the request carries the first S_first bytes and the rest follows
 * the clear-to-send through the send channel in turn. Computation takes the CPU. With αs, βs alone this is
 * Hockney without overlap: a rank's sends follow one another. With a burst
 * (a link shaped by a token bucket) the send channel and the receiver's
 * link each pass what their bucket holds at once and the rest at 1/G. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "evq.h"
#include "sim.h"

/* ARRIVE: a message (or a rendezvous request) reaches its receiver as if
 * alone on the links; LANDED: an eager message through the links it
 * shares; DATA, DATA_LANDED: the same for rendezvous data. */
enum { EV_READY, EV_DONE, EV_ARRIVE, EV_RXCPU, EV_CTS, EV_DATA, EV_LANDED, EV_DATA_LANDED, EV_FAIR };
#define NONE UINT32_MAX

/* Posted receives or unexpected sends of one (receiver, source, tag). */
typedef struct { uint64_t key; uint32_t head, tail; uint32_t unexpected; } match_q;
#define EMPTY_KEY UINT64_MAX

/* A rank's resources: when its CPU, send and receive channels and its
 * incoming link are free next, and when its last operation ended. */
typedef struct {
    double cpu, tx, rx, finish, link_in;
    uint32_t mhead, mtail, mlen; /* waiting receives and unexpected sends, in order (short lists) */
    uint32_t hashed;             /* 1: this rank's list grew long and moved to the hash */
    uint64_t pad;                /* one cache line each */
} rank_state;
_Static_assert(sizeof(rank_state) == 64, "rank_state must fill one cache line");

/* Fair sharing of send channels (o->fair): per rank the messages on its
 * channel (a list through `next`), when their shares were last counted
 * down, and when the first of them will be through; per message the
 * channel time it still needs and the latency after it. */
typedef struct {
    double *last, *due, *left, *lat;
    uint32_t *head, *count, *next;
} fair_state;

/* A token bucket (o->c.burst bytes, refilled at 1/G bytes per second): how
 * many bytes it held at time t. A link passes what its bucket holds at once
 * and the rest at its rate: an idle link lets a burst through, a busy one
 * only its rate (a traffic shaper, or the emulated cluster's tbf). */
typedef struct { double tokens, t; } tbucket;
typedef struct { tbucket tx, in; } bucket;

/* A rank keeps what waits to be matched in a list while it is short (most
 * algorithms have a few messages in flight per rank); past this many it
 * moves to the hash of (receiver, source, tag) queues. */
#define LIST_MAX 16

typedef struct {
    sim_sched *sc;
    sim_op *op;
    const sim_opts *o;
    sim_result *res;
    evq q;
    match_q *mq;
    size_t mq_cap, mq_n;
    rank_state *rk;
    double *up;
    fair_state *fs;  /* with o->fair */
    double *wire;    /* with drawn times and G: each message's time on the wire, min(drawn, G·m) */
    bucket *bk;      /* with a burst: per rank, its send channel's and incoming link's token buckets */
    double *first;   /* with a burst: when each message's first byte left its sender (an exchange: its shift less) */
    uint64_t rng[4];
    int failed;
} state;

/* ------------------------------------------------------------ randomness */

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static double uniform(state *st) /* xoshiro256**, in [0, 1) */
{
    uint64_t *s = st->rng, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return (double)(r >> 11) * 0x1.0p-53;
}

/* A message's time drawn from the measured quantiles. */
static double draw(state *st, double m)
{
    const sim_dist *d = st->o->dist;
    double u = uniform(st) * (d->nq - 1);
    int j = (int)u;
    if (j >= d->nq - 1) j = d->nq - 2;
    double w = u - j;
    int i = 0;
    while (i < d->nsizes - 2 && d->sizes[i + 1] < m) i++;
    double a = d->q[i * d->nq + j] * (1 - w) + d->q[i * d->nq + j + 1] * w;
    if (d->nsizes == 1) return a;
    double b = d->q[(i + 1) * d->nq + j] * (1 - w) + d->q[(i + 1) * d->nq + j + 1] * w;
    double x0 = d->sizes[i], x1 = d->sizes[i + 1];
    if (m <= x0 && i == 0) return a; /* below the smallest size: its time */
    double v = a + (b - a) * (m - x0) / (x1 - x0); /* beyond the largest: the last slope */
    return v > 0 ? v : 0;
}

static void push(state *st, double t, uint32_t op, uint32_t kind)
{
    if (evq_push(&st->q, t, op, kind)) st->failed = 1;
}

/* -------------------------------------------------------------- matching */

static inline uint64_t mkey(uint32_t dst, uint32_t src, int32_t tag)
{
    return ((uint64_t)dst << 40) | ((uint64_t)src << 16) | (uint64_t)(uint16_t)tag;
}

static inline size_t mslot(const state *st, uint64_t k)
{
    uint64_t x = k;
    return (size_t)(splitmix(&x) & (st->mq_cap - 1));
}

static match_q *mq_find(state *st, uint64_t k)
{
    for (size_t i = mslot(st, k);; i = (i + 1) & (st->mq_cap - 1)) {
        if (st->mq[i].key == k) return &st->mq[i];
        if (st->mq[i].key == EMPTY_KEY) return NULL;
    }
}

static match_q *mq_insert(state *st, uint64_t k);

static void mq_grow(state *st)
{
    match_q *old = st->mq;
    size_t oc = st->mq_cap;
    st->mq_cap = oc ? 2 * oc : 1 << 12;
    st->mq = malloc(st->mq_cap * sizeof *st->mq);
    if (!st->mq) {
        st->failed = 1, st->mq = old, st->mq_cap = oc;
        return;
    }
    for (size_t i = 0; i < st->mq_cap; i++) st->mq[i].key = EMPTY_KEY;
    st->mq_n = 0;
    for (size_t i = 0; i < oc; i++)
        if (old[i].key != EMPTY_KEY) *mq_insert(st, old[i].key) = old[i];
    free(old);
}

static match_q *mq_insert(state *st, uint64_t k)
{
    if (2 * (st->mq_n + 1) > st->mq_cap) mq_grow(st);
    size_t i = mslot(st, k);
    while (st->mq[i].key != EMPTY_KEY) i = (i + 1) & (st->mq_cap - 1);
    st->mq_n++;
    st->mq[i].key = k;
    return &st->mq[i];
}

/* Removes an entry, shifting later ones of its probe run back (no tombstones). */
static void mq_remove(state *st, match_q *q)
{
    size_t mask = st->mq_cap - 1, i = (size_t)(q - st->mq), j = i;
    st->mq_n--;
    for (;;) {
        st->mq[i].key = EMPTY_KEY;
        for (;;) {
            j = (j + 1) & mask;
            if (st->mq[j].key == EMPTY_KEY) return;
            size_t h = mslot(st, st->mq[j].key);
            /* Can entry j move into the hole at i? Only if its home is not in (i, j]. */
            if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) break;
        }
        st->mq[i] = st->mq[j];
        i = j;
    }
}

/* Appends op to the queue of key k (kind: 1 unexpected sends, 0 posted receives). */
static void enqueue(state *st, uint64_t k, uint32_t op, uint32_t unexpected)
{
    match_q *q = mq_find(st, k);
    st->op[op].link = NONE;
    if (!q) {
        q = mq_insert(st, k);
        q->head = q->tail = op, q->unexpected = unexpected;
        return;
    }
    st->op[q->tail].link = op;
    q->tail = op;
}

/* The first waiting op of the other kind for key k, removed; NONE if none. */
static uint32_t dequeue(state *st, uint64_t k, uint32_t unexpected)
{
    match_q *q = mq_find(st, k);
    if (!q || q->unexpected != unexpected) return NONE;
    uint32_t op = q->head;
    if (op == q->tail) mq_remove(st, q);
    else q->head = st->op[op].link;
    return op;
}

/* The first waiting op that matches: a receive posted for (src, tag) when
 * `want` is OP_RECV, an unexpected send from src with tag when OP_SEND;
 * removed, or NONE. */
static uint32_t take(state *st, uint32_t rank, int want, uint32_t src, uint16_t tag)
{
    rank_state *rk = &st->rk[rank];
    if (rk->hashed) return dequeue(st, mkey(rank, src, tag), want == OP_SEND);
    for (uint32_t prev = NONE, j = rk->mhead; j != NONE; prev = j, j = st->op[j].link) {
        const sim_op *o = &st->op[j];
        if (o->type != want || o->tag != tag || (want == OP_RECV ? (uint32_t)o->peer : o->rank) != src) continue;
        if (prev == NONE) rk->mhead = o->link;
        else st->op[prev].link = o->link;
        if (rk->mtail == j) rk->mtail = prev;
        rk->mlen--;
        return j;
    }
    return NONE;
}

/* Op i waits at `rank` to be matched (a posted receive or an unexpected send). */
static void wait_match(state *st, uint32_t rank, uint32_t i)
{
    rank_state *rk = &st->rk[rank];
    const sim_op *o = &st->op[i];
    uint32_t src = o->type == OP_RECV ? (uint32_t)o->peer : o->rank;
    if (!rk->hashed && rk->mlen == LIST_MAX) { /* too long for a list: to the hash, in order */
        for (uint32_t j = rk->mhead, next; j != NONE; j = next) {
            const sim_op *w = &st->op[j];
            next = w->link;
            enqueue(st, mkey(rank, w->type == OP_RECV ? (uint32_t)w->peer : w->rank, w->tag), j,
                    w->type == OP_SEND);
        }
        rk->hashed = 1, rk->mhead = rk->mtail = NONE, rk->mlen = 0;
    }
    if (rk->hashed) {
        enqueue(st, mkey(rank, src, o->tag), i, o->type == OP_SEND);
        return;
    }
    st->op[i].link = NONE;
    if (rk->mtail == NONE) rk->mhead = i;
    else st->op[rk->mtail].link = i;
    rk->mtail = i;
    rk->mlen++;
}

/* ------------------------------------------------------------ the model */

static inline double maxd(double a, double b) { return a > b ? a : b; }

static inline long switch_of(const state *st, uint32_t rank)
{
    const sim_topo *t = &st->o->topo;
    return (long)rank / t->ranks_per_host / t->hosts_per_switch;
}

/* Counts down the channel time of rank r's messages from its last count to
 * now: each of n got 1/n of the channel. */
static void fair_advance(state *st, uint32_t r, double now)
{
    fair_state *f = st->fs;
    if (f->count[r]) {
        double share = (now - f->last[r]) / f->count[r];
        for (uint32_t i = f->head[r]; i != NONE; i = f->next[i]) f->left[i] -= share;
    }
    f->last[r] = now;
}

/* When the first of rank r's messages will be through (an EV_FAIR event
 * for it; an earlier one is stale once `due` moved). */
static void fair_schedule(state *st, uint32_t r, double now)
{
    fair_state *f = st->fs;
    uint32_t first = f->head[r];
    for (uint32_t i = f->head[r]; i != NONE; i = f->next[i])
        if (f->left[i] < f->left[first]) first = i;
    f->due[r] = now + maxd(0, f->left[first]) * f->count[r];
    push(st, f->due[r], first, EV_FAIR);
}

static void fair_add(state *st, uint32_t r, uint32_t s, double now, double busy, double latency)
{
    fair_state *f = st->fs;
    fair_advance(st, r, now);
    f->left[s] = busy, f->lat[s] = latency;
    f->next[s] = f->head[r], f->head[r] = s, f->count[r]++;
    fair_schedule(st, r, now);
}

/* Rank r's first message is through at `now`: it (and any through with it)
 * leaves the channel; each reaches its receiver its latency later. */
static void fair_done(state *st, uint32_t r, double now)
{
    fair_state *f = st->fs;
    if (now != f->due[r]) return; /* stale: the channel's sharing changed since */
    fair_advance(st, r, now);
    double eps = 1e-12 * maxd(now, 1e-9);
    for (uint32_t *pi = &f->head[r]; *pi != NONE;) {
        uint32_t i = *pi;
        if (f->left[i] > eps) {
            pi = &f->next[i];
            continue;
        }
        *pi = f->next[i], f->count[r]--;
        push(st, now + f->lat[i], i, st->op[i].value <= st->o->c.S ? EV_ARRIVE : EV_DATA);
        push(st, now, i, EV_DONE);
    }
    if (f->count[r]) fair_schedule(st, r, now);
}

/* When the data rank r's send channel holds now will be through. */
static double channel_free(state *st, uint32_t r, double now)
{
    if (!st->fs) return maxd(now, st->rk[r].tx);
    fair_advance(st, r, now);
    double t = now;
    for (uint32_t i = st->fs->head[r]; i != NONE; i = st->fs->next[i]) t += maxd(0, st->fs->left[i]);
    return t;
}

static inline double tokens(const state *st, const tbucket *b, double t)
{
    double k = b->tokens + (t - b->t) / st->o->c.G;
    return k < st->o->c.burst ? k : st->o->c.burst;
}

/* m bytes went through a bucket holding k at `from`, the last at `to`. */
static inline void take_tokens(const state *st, tbucket *b, double k, double m, double from, double to)
{
    double left = k - m + (to - from) / st->o->c.G;
    b->tokens = left < 0 ? 0 : left < st->o->c.burst ? left : st->o->c.burst;
    b->t = to;
}

/* An exchange message (SIM_EXCHANGE): its one-way time less a lone
 * message's at its size, as measured (--exchange; between sizes linear,
 * below the smallest its value, beyond the largest the last slope); 0 for
 * any other message. Both directions at once overlap the sender's and
 * receiver's work with the other direction's wire time, or contend. */
static double exchange_shift(const state *st, const sim_op *op, double m)
{
    const sim_dist *x = st->o->exchange;
    if (!x || !(op->flags & SIM_EXCHANGE)) return 0;
    if (x->nsizes == 1 || m <= x->sizes[0]) return x->q[0];
    int i = 0;
    while (i < x->nsizes - 2 && x->sizes[i + 1] < m) i++;
    return x->q[i] + (x->q[i + 1] - x->q[i]) * (m - x->sizes[i]) / (x->sizes[i + 1] - x->sizes[i]);
}

/* A message that holds the send channel `busy` from `start` and reaches its
 * receiver `lat` after, its whole time moved by dx (an exchange's): when it
 * arrives; the channel holds it no longer than its whole time. */
static double shifted(state *st, rank_state *rk, double start, double busy, double lat, double dx, double *left)
{
    double whole = maxd(0, busy + lat + dx);
    if (busy > whole) busy = whole;
    rk->tx = start + maxd(st->o->c.g, busy);
    *left = start + busy;
    return start + whole;
}

/* The data of send s (m bytes of it) leaves its rank's send channel no
 * sooner than t: returns when its last byte reaches the receiver, sets
 * *left; `last`: these are its last bytes (an exchange's time moves then). */
static double transmit(state *st, uint32_t s, double t, double *left, double m, int last)
{
    const sim_costs *c = &st->o->c;
    const sim_op *op = &st->op[s];
    rank_state *rk = &st->rk[sim_rank(st->sc, op)];
    double start = maxd(t, rk->tx);
    double dx = last ? exchange_shift(st, op, op->value) : 0;
    if (st->fs) {
        double whole = st->o->dist ? draw(st, m) : c->alpha_s + c->beta_s * m + c->G * m, wire = whole;
        if (st->o->dist && c->G > 0) wire = whole < c->G * m ? whole : c->G * m;
        if (dx != 0) whole = maxd(0, whole + c->L + dx) - c->L, wire = wire < whole ? wire : maxd(0, whole);
        if (st->wire) st->wire[s] = wire;
        fair_add(st, sim_rank(st->sc, op), s, t, wire, whole - wire + c->L);
        return -1; /* its events come when its share of the channel has carried it */
    }
    if (st->bk) {
        /* Its bytes beyond what the bucket holds go at the link's rate. */
        tbucket *b = &st->bk[sim_rank(st->sc, op)].tx;
        double k = tokens(st, b, start), busy = c->alpha_s + c->beta_s * m + c->G * maxd(0, m - k);
        take_tokens(st, b, k, m, start, start + busy);
        /* An exchange that costs less reaches the receiver's link sooner by as much. */
        st->first[s] = start + (dx < 0 ? maxd(-c->L, dx) : 0);
        return shifted(st, rk, start, busy, c->L, dx, left);
    }
    if (st->o->dist && c->G > 0) {
        /* A drawn time is the whole one-way time of a message alone; only
         * its bytes' time on the wire (G·m) keeps the send channel busy,
         * the rest is latency, so a rank's next message follows the bytes
         * of this one instead of waiting out its whole time. */
        double whole = maxd(0, draw(st, m) + dx), wire = c->G * m;
        double busy = whole < wire ? whole : wire;
        if (st->wire) st->wire[s] = busy; /* its receiver's link carries it as long */
        rk->tx = start + maxd(c->g, busy);
        *left = start + busy;
        return start + whole + c->L;
    }
    double busy = st->o->dist ? draw(st, m) : c->alpha_s + c->beta_s * m + c->G * m;
    return shifted(st, rk, start, busy, c->L, dx, left);
}

/* Message s reached its receiver at t as if alone: when it is through the
 * links it shares, first come first served in the order messages arrive:
 * the uplink of the sender's switch (to another switch), then the
 * receiver's own link, each carrying its bytes at its rate. */
static double through_links(state *st, uint32_t s, double t, double m)
{
    const sim_costs *c = &st->o->c;
    const sim_op *op = &st->op[s];
    if (st->up) {
        long a = switch_of(st, sim_rank(st->sc, op)), b = switch_of(st, (uint32_t)op->peer);
        if (a != b) t = st->up[a] = maxd(t, st->up[a] + m * st->o->topo.uplink_G);
    }
    if (st->bk) {
        /* The receiver's link takes the bytes as they come, from the first,
         * first come first served, at most its bucket at once. */
        rank_state *to = &st->rk[op->peer];
        tbucket *b = &st->bk[op->peer].in;
        double begin = maxd(st->first[s] + c->L, to->link_in), k = tokens(st, b, begin);
        t = maxd(t, begin + c->G * maxd(0, m - k));
        take_tokens(st, b, k, m, begin, t);
        return to->link_in = t;
    }
    if (c->G > 0) {
        rank_state *to = &st->rk[op->peer];
        t = to->link_in = maxd(t, to->link_in + (st->wire ? st->wire[s] : c->G * m));
    }
    return t;
}

/* What a rendezvous message m carries with its request (S_first); the rest
 * follows the receiver's answer. */
static inline double first_part(const sim_costs *c, double m) { return c->S_first < m ? c->S_first : m; }

static void receive(state *st, uint32_t rv, uint32_t s, double now)
{
    const sim_costs *c = &st->o->c;
    rank_state *rk = &st->rk[sim_rank(st->sc, &st->op[rv])];
    double m = st->op[s].value;
    double busy = c->alpha_r + c->beta_r * m;
    double start = maxd(now, rk->rx);
    rk->rx = start + maxd(c->g, busy);
    push(st, start + busy, rv, c->o_r + c->O * m > 0 ? EV_RXCPU : EV_DONE);
}

static void matched(state *st, uint32_t s, uint32_t rv, double now)
{
    if (st->op[s].value <= st->o->c.S) {
        receive(st, rv, s, now);
    } else { /* the answer leaves the receiver's channel after what it holds (a FIFO queue) */
        st->op[s].link = rv;
        double out = channel_free(st, sim_rank(st->sc, &st->op[rv]), now);
        push(st, out + st->o->c.L, s, EV_CTS);
    }
}

static void start(state *st, uint32_t i, double now)
{
    const sim_costs *c = &st->o->c;
    sim_op *op = &st->op[i];
    rank_state *rk = &st->rk[sim_rank(st->sc, op)];
    double m = op->value;
    if (st->res->t_start) st->res->t_start[i] = now;
    switch (op->type) {
    case OP_CALC:
    case OP_REDUCE: {
        double dur = op->type == OP_CALC ? m : m * c->gamma;
        if (dur <= 0) {
            push(st, now, i, EV_DONE);
            return;
        }
        rk->cpu = maxd(now, rk->cpu) + dur;
        push(st, rk->cpu, i, EV_DONE);
        return;
    }
    case OP_SEND: {
        double cpu = c->o_s + c->O * m, t = now;
        if (cpu > 0) t = rk->cpu = maxd(now, rk->cpu) + cpu;
        st->res->messages++;
        if (m <= c->S) {
            double left, arrive = transmit(st, i, t, &left, m, 1);
            if (arrive < 0) return; /* fair sharing: its events come later */
            push(st, arrive, i, EV_ARRIVE);
            push(st, left, i, EV_DONE);
        } else if (c->S_first > 0) { /* the request with the first part, on the send channel in turn */
            st->res->rendezvous++;
            double left;
            push(st, transmit(st, i, t, &left, first_part(c, m), 0), i, EV_ARRIVE);
        } else {
            st->res->rendezvous++;
            push(st, t + c->L, i, EV_ARRIVE); /* the request to send */
        }
        return;
    }
    case OP_RECV: {
        uint32_t s = take(st, sim_rank(st->sc, op), OP_SEND, (uint32_t)op->peer, op->tag);
        if (s == NONE) wait_match(st, sim_rank(st->sc, op), i);
        else matched(st, s, i, now);
        return;
    }
    }
}

static void handle(state *st, evq_item e)
{
    const sim_costs *c = &st->o->c;
    sim_result *res = st->res;
    uint32_t i = e.op;
    sim_op *op = &st->op[i];
    switch (e.kind) {
    case EV_READY:
        start(st, i, e.t);
        break;
    case EV_DONE: {
        if (res->t_end) res->t_end[i] = e.t;
        rank_state *rk = &st->rk[sim_rank(st->sc, op)];
        if (e.t > rk->finish) rk->finish = e.t;
        const uint32_t *d = st->sc->dlist;
        for (uint32_t k = op->dstart, end = op[1].dstart; k < end; k++) {
            uint32_t a = d[k];
            if (--st->op[a].pending == 0) {
                if (res->cause) res->cause[a] = i;
                start(st, a, e.t);
            }
        }
        break;
    }
    case EV_ARRIVE:
    case EV_LANDED: {
        if (e.kind == EV_ARRIVE && (op->value <= c->S || c->S_first > 0)) {
            double t = through_links(st, i, e.t, op->value <= c->S ? op->value : first_part(c, op->value));
            if (t > e.t) {
                push(st, t, i, EV_LANDED);
                break;
            }
        }
        uint32_t rv = take(st, (uint32_t)op->peer, OP_RECV, op->rank, op->tag);
        if (rv == NONE) {
            res->unexpected++;
            wait_match(st, (uint32_t)op->peer, i);
        } else {
            if (res->cause) res->cause[rv] = i;
            matched(st, i, rv, e.t);
        }
        break;
    }
    case EV_RXCPU: {
        rank_state *rk = &st->rk[sim_rank(st->sc, op)];
        rk->cpu = maxd(e.t, rk->cpu) + c->o_r + c->O * op->value;
        push(st, rk->cpu, i, EV_DONE);
        break;
    }
    case EV_CTS: {
        double left, arrive = transmit(st, i, e.t, &left, op->value - (c->S_first > 0 ? first_part(c, op->value) : 0), 1);
        if (arrive < 0) break;
        push(st, arrive, i, EV_DATA);
        push(st, left, i, EV_DONE);
        break;
    }
    case EV_FAIR:
        fair_done(st, sim_rank(st->sc, op), e.t);
        break;
    case EV_DATA:
    case EV_DATA_LANDED:
        if (e.kind == EV_DATA) {
            double t = through_links(st, i, e.t, op->value - (c->S_first > 0 ? first_part(c, op->value) : 0));
            if (t > e.t) {
                push(st, t, i, EV_DATA_LANDED);
                break;
            }
        }
        receive(st, op->link, i, e.t);
        break;
    }
}

/* --------------------------------------------------------- looking ahead */

#define AHEAD 16

/* An event AHEAD away: its operation. */
static inline void warm_op(const state *st, uint32_t i)
{
    __builtin_prefetch(&st->op[i]);
}

/* An event AHEAD / 2 away (its operation is in cache by now): what handling
 * it reads next, the ranks it involves and its dependents' list. */
static inline void warm_state(const state *st, evq_item e)
{
    const sim_op *op = &st->op[e.op];
    __builtin_prefetch(&st->rk[sim_rank(st->sc, op)]);
    if (e.kind == EV_DONE) {
        __builtin_prefetch(&st->sc->dlist[op->dstart]);
    } else if (e.kind == EV_ARRIVE || e.kind == EV_LANDED) {
        __builtin_prefetch(&st->rk[op->peer]);
    }
}

/* An event AHEAD / 4 away: the operations it will look at, its dependents
 * (to count down their requirements) or the first waiting at its receiver. */
static inline void warm_next(const state *st, evq_item e)
{
    const sim_op *op = &st->op[e.op];
    if (e.kind == EV_DONE) {
        for (uint32_t k = op->dstart, end = op[1].dstart; k < end; k++) warm_op(st, st->sc->dlist[k]);
    } else if (e.kind == EV_ARRIVE || e.kind == EV_LANDED) {
        uint32_t j = st->rk[op->peer].mhead;
        if (j != NONE) warm_op(st, j);
    }
}

static void *alloc_array(void **p, size_t n, size_t elem)
{
    if (!*p) *p = malloc((n ? n : 1) * elem);
    return *p;
}

int sim_run(sim_sched *sc, const sim_opts *o, sim_result *res, char *err, size_t n)
{
    state st;
    memset(&st, 0, sizeof st);
    st.sc = sc, st.op = sc->op, st.o = o, st.res = res;
    long p = sc->nranks;
    uint64_t seed = o->seed;
    for (int i = 0; i < 4; i++) st.rng[i] = splitmix(&seed);
    st.rk = sim_huge_alloc((size_t)p * sizeof *st.rk); /* zeroed: fresh anonymous pages */
    if (o->topo.ranks_per_host > 0 && o->topo.hosts_per_switch > 0 && o->topo.uplink_G > 0)
        st.up = calloc((size_t)(p / o->topo.ranks_per_host / o->topo.hosts_per_switch + 1), sizeof(double));
    int ok = st.rk && alloc_array((void **)&res->finish, p, sizeof(double));
    fair_state fs = {0};
    if (ok && o->c.burst > 0 && o->c.G > 0) { /* full buckets: every link idle before */
        st.bk = malloc((size_t)p * sizeof *st.bk), st.first = malloc((sc->nops ? sc->nops : 1) * sizeof(double));
        ok = st.bk && st.first;
    }
    if (ok && o->dist && o->c.G > 0) { /* set by each transmit, read when that part lands */
        st.wire = malloc((sc->nops ? sc->nops : 1) * sizeof(double));
        ok = st.wire != NULL;
    }
    if (ok && o->fair) {
        size_t no = sc->nops ? sc->nops : 1;
        fs.last = calloc((size_t)p, sizeof(double)), fs.due = calloc((size_t)p, sizeof(double));
        fs.head = malloc((size_t)p * sizeof(uint32_t)), fs.count = calloc((size_t)p, sizeof(uint32_t));
        fs.left = malloc(no * sizeof(double)), fs.lat = malloc(no * sizeof(double));
        fs.next = malloc(no * sizeof(uint32_t));
        ok = fs.last && fs.due && fs.head && fs.count && fs.left && fs.lat && fs.next;
        if (ok) memset(fs.head, 0xff, (size_t)p * sizeof(uint32_t)), st.fs = &fs;
    }
    if (ok && o->keep_times)
        ok = alloc_array((void **)&res->t_start, sc->nops, sizeof(double)) &&
             alloc_array((void **)&res->t_end, sc->nops, sizeof(double)) &&
             alloc_array((void **)&res->cause, sc->nops, sizeof(uint32_t));
    /* Drawn costs make every time different: the heap; otherwise buckets. */
    if (ok) ok = !evq_init(&st.q, !o->dist && !o->skew_pool && !o->fair);
    if (ok) mq_grow(&st), ok = !st.failed;
    if (!ok) {
        snprintf(err, n, "out of memory for the simulation of %llu operations", (unsigned long long)sc->nops);
        goto out;
    }
    for (uint64_t i = 0; i < sc->nops; i++) sc->op[i].pending = sc->ndeps[i], sc->op[i].link = NONE;
    if (res->cause) {
        for (uint64_t i = 0; i < sc->nops; i++) res->cause[i] = NONE, res->t_start[i] = res->t_end[i] = NAN;
    }
    res->events = res->messages = res->unexpected = res->rendezvous = 0;
    for (long r = 0; r < p; r++) {
        double t0 = o->skew ? o->skew[r] : 0.0;
        if (o->skew_pool && o->nskew_pool > 0) t0 = o->skew_pool[(long)(uniform(&st) * (double)o->nskew_pool)];
        st.rk[r] = (rank_state){t0, t0, t0, t0, t0, NONE, NONE, 0, 0, 0};
        if (st.bk) st.bk[r] = (bucket){{o->c.burst, t0}, {o->c.burst, t0}};
    }
    /* Operations that require nothing start at their rank's start: at once
     * when every rank starts at 0 (no event needed), else as events. */
    int skewed = o->skew || (o->skew_pool && o->nskew_pool > 0);
    for (uint64_t k = 0; k < sc->nroots; k++) {
        uint32_t i = sc->roots[k];
        if (skewed) push(&st, st.rk[sim_rank(sc, &sc->op[i])].finish, i, EV_READY);
        else start(&st, i, 0.0);
    }
    uint64_t events = 0;
    /* Events of one time are taken from the queue AHEAD at a time, so the
     * memory each will touch is fetched while earlier ones are handled
     * (events visit operations in no order: one cache miss after another
     * otherwise). Handling one pushes nothing before the rest: same order. */
    evq_item ring[AHEAD];
    unsigned head = 0, held = 0;
    while (!st.failed) {
        if (!held) {
            if (!evq_pop(&st.q, &ring[head])) break;
            warm_op(&st, ring[head].op), held = 1;
        }
        while (held < AHEAD && evq_pop_at(&st.q, ring[head].t, &ring[(head + held) % AHEAD])) {
            warm_op(&st, ring[(head + held) % AHEAD].op);
            held++;
        }
        if (held > AHEAD / 2) warm_state(&st, ring[(head + AHEAD / 2) % AHEAD]);
        if (held > AHEAD / 4) warm_next(&st, ring[(head + AHEAD / 4) % AHEAD]);
        evq_item e = ring[head];
        head = (head + 1) % AHEAD, held--;
        handle(&st, e);
        events++;
    }
    res->events = events;
    if (st.failed) {
        snprintf(err, n, "out of memory during the simulation");
        ok = 0;
        goto out;
    }
    /* Operations never started: a receive without its send, or a cycle. */
    uint64_t stuck = 0, first_stuck = 0; /* the first in index order */
    for (uint64_t i = 0; i < sc->nops; i++) stuck += sc->op[i].pending != 0;
    for (uint64_t l = 0; stuck && l < sc->nops; l++)
        if (sc->op[sc->pos[l]].pending) {
            first_stuck = sc->pos[l];
            break;
        }
    long waiting = -1; /* a rank whose list still holds something */
    for (long r = 0; r < p && waiting < 0; r++)
        if (st.rk[r].mlen) waiting = r;
    if (st.mq_n || stuck || waiting >= 0) {
        uint64_t i = first_stuck;
        if (!stuck && waiting >= 0) i = st.rk[waiting].mhead;
        else if (!stuck) /* a queue still holds something: name its head */
            for (size_t k = 0; k < st.mq_cap; k++)
                if (st.mq[k].key != EMPTY_KEY) {
                    i = st.mq[k].head;
                    break;
                }
        const sim_op *op = &sc->op[i];
        uint32_t *logical = sim_sched_logical(sc);
        uint64_t k = logical ? logical[i] - sc->first[sim_rank(sc, op)] : 0;
        free(logical);
        snprintf(err, n, "the schedule deadlocks: operation %llu of rank %u (%s %d, tag %d) never %s",
                 (unsigned long long)k, sim_rank(sc, op),
                 op->type == OP_SEND ? "send to" : op->type == OP_RECV ? "receive from" : "calc", op->peer, op->tag,
                 stuck ? "starts (what it requires never completes)" : "finds its partner");
        ok = 0;
        goto out;
    }
    double sum = 0, mx = -INFINITY, mn = INFINITY;
    for (long r = 0; r < p; r++) {
        double f = res->finish[r] = st.rk[r].finish;
        sum += f;
        mx = maxd(mx, f);
        mn = f < mn ? f : mn;
    }
    res->makespan = mx, res->finish_mean = sum / (double)p, res->finish_min = mn;
out:
    evq_free(&st.q), free(st.mq), sim_huge_free(st.rk, (size_t)p * sizeof *st.rk), free(st.up);
    free(st.wire), free(st.bk), free(st.first), free(fs.last), free(fs.due), free(fs.head), free(fs.count), free(fs.left), free(fs.lat), free(fs.next);
    return ok ? 0 : -1;
}

void sim_result_free(sim_result *r)
{
    free(r->finish), free(r->t_start), free(r->t_end), free(r->cause);
    memset(r, 0, sizeof *r);
}
