/* SPDX-License-Identifier: BSD-3-Clause */
/* The intra-node transport lab (transport/, after Chai 2009): each design
 * of transport/tp.h, and MPI's own path beside it, in the engine's harness.
 * Variants: basic, advanced, cma, offload, hybrid, mpi. Skipped, with the
 * reason recorded, where a design cannot run (cma without
 * process_vm_readv, ranks on different hosts).
 *
 *   tp_latency   half the round trip
 *   tp_bw        msgs messages one way, then a 1-byte acknowledgement; B/s
 *   tp_bw_cold   the same, every message in fresh memory (a region four
 *                times the last-level cache on each side): cold buffers
 *   tp_multibw   tp_bw in every pair p ↔ p + n/2 at once; B/s per pair
 *   tp_skew      the receiver arrives TP_SKEW_S late; the sender's time to
 *                complete its send (a copy lets it leave, a pull does not)
 *   tp_overlap   send posted, computation as long as the send alone, then
 *                the wait; the sender's total (offload overlaps the two)
 *
 * msgs = min(--window-msgs, max(4, 32 MiB / size)), recorded as the
 * series' window_msgs, so a repetition of large messages stays short. */
#include <stdlib.h>
#include <string.h>

#include "../../transport/tp.h"
#include "../options.h"
#include "../rawfmt.h"
#include "../../clock/sorted.h"
#include "loggp.h"
#include "roundtrip.h"

enum { TAG = 61, TAG_ACK = 62, VARIANT_MPI = TP_DESIGNS, BULK_BYTES = 32 << 20 };
static const double TP_SKEW_S = 50e-6;

typedef struct tp_state {
    MPI_Comm comm; /* the pair's two ranks (tp_multibw has several pairs in s->pc) */
    tp_pair *pair; /* NULL for mpi */
    double compute_s;
    char why[512]; /* why the series is skipped: s->skip points here */
} tp_state;

static size_t footprint(size_t bytes, int np) { (void)np; return bytes ? bytes : 1; }
static size_t no_footprint(size_t bytes, int np) { (void)bytes, (void)np; return 1; }
static int nvariants(const options *o) { (void)o; return TP_DESIGNS + 1; }
static const char *variant_name(const options *o, int i) { (void)o; return i == VARIANT_MPI ? "mpi" : tp_design_name((tp_design)i); }

static void put(series *s, void *chan, const void *p, size_t n)
{
    tp_state *st = chan;
    if (st->pair) tp_send(st->pair, p, n);
    else MPI_Send(p, (int)n, MPI_BYTE, s->peer, TAG, s->world);
}

static void get(series *s, void *chan, void *p, size_t n)
{
    tp_state *st = chan;
    if (st->pair) tp_recv(st->pair, p, n);
    else MPI_Recv(p, (int)n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
}

/* Fresh memory for every message of tp_bw_cold: one region per side, kept
 * for the whole run (allocating 4 x LLC per series would dominate it). */
static buffers cold;
static size_t cold_max;

static char *cold_at(const series *s, int send, size_t n, long k)
{
    if (n > cold_max || !cold_max) {
        if (cold_max) buffers_free(&cold);
        cold_max = n < (1u << 20) ? 1u << 20 : n;
        if (buffers_init(&cold, cold_max, 1, s->o->cold_region, s->o->huge_pages)) {
            fprintf(stderr, "mpiscope-engine: no memory for tp_bw_cold's buffers\n");
            MPI_Abort(s->world, 4);
        }
    }
    return send ? buffers_send(&cold, n, k) : buffers_recv(&cold, n, k);
}

static long msgs_for(const series *s)
{
    long m = s->bytes ? BULK_BYTES / (long)s->bytes : s->window_msgs;
    if (m < 4) m = 4;
    return m < s->window_msgs ? m : s->window_msgs;
}

/* Whether the pair's two ranks run on one host (the same processor name). */
static int same_host(MPI_Comm comm)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = {0}, theirs[MPI_MAX_PROCESSOR_NAME] = {0};
    int len, me;
    MPI_Get_processor_name(mine, &len);
    MPI_Comm_rank(comm, &me);
    MPI_Sendrecv(mine, sizeof mine, MPI_CHAR, 1 - me, 63, theirs, sizeof theirs, MPI_CHAR, 1 - me, 63, comm,
                 MPI_STATUS_IGNORE);
    return !strcmp(mine, theirs);
}

/* The pair of the variant's design (none for mpi); false when skipped. */
static int open_pair(series *s, int windowed, tp_info *info)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
    tp_state *st = calloc(1, sizeof *st);
    s->state = st;
    if (windowed) s->window_msgs = (int)msgs_for(s);
    *info = (tp_info){.design = "mpi", .cpu = -1, .peer_cpu = -1, .helper_cpu = -1, .queue_bytes = -1,
                      .record_max = -1, .chunk = -1, .chunks = -1, .eager = -1};
    st->comm = MPI_COMM_NULL;
    if (s->role == ROLE_IDLE || s->variant == VARIANT_MPI) return 1;
    MPI_Comm_split(s->pc, s->rank < s->peer ? s->rank : s->peer, s->rank, &st->comm);
    char why[512];
    if (!same_host(st->comm)) {
        s->skip = "the ranks are on different hosts: no shared memory";
        return 0;
    }
    st->pair = tp_open((tp_design)s->variant, st->comm, s->oversubscribed, why, sizeof why);
    if (!st->pair) {
        snprintf(st->why, sizeof st->why, "%s", why);
        s->skip = st->why;
        return 0;
    }
    *info = tp_describe(st->pair);
    return 1;
}

static void describe_latency(series *s)
{
    tp_info info;
    if (open_pair(s, 0, &info)) rawfmt_params_transport(s, &info, -1, -1, -1, -1);
}

static void describe_bw(series *s)
{
    tp_info info;
    if (open_pair(s, 1, &info)) rawfmt_params_transport(s, &info, s->window_msgs, -1, -1, -1);
}

/* The cold region is (re)made here, never inside a timed repetition. */
static void describe_bw_cold(series *s)
{
    describe_bw(s);
    if (s->role != ROLE_IDLE && !s->skip) cold_at(s, 1, s->bytes, 0);
}

static void describe_skew(series *s)
{
    tp_info info;
    if (open_pair(s, 0, &info)) rawfmt_params_transport(s, &info, -1, TP_SKEW_S, -1, -1);
}

static void finish(series *s)
{
    tp_state *st = s->state;
    if (!st) return;
    if (st->pair) tp_close(st->pair);
    if (st->comm != MPI_COMM_NULL) MPI_Comm_free(&st->comm);
}

static void run_latency(series *s, long rep, double *t_start, double *t_end)
{
    roundtrip_rep(s, s->state, put, get, s->bytes, rep, "tp_latency", t_start, t_end);
}

/* After a one-way repetition, a 1-byte acknowledgement back, so that the next
 * repetition does not find this one's message still queued; then the check. */
static void acknowledge(series *s, tp_state *st, const char *rb, long rep, const char *what)
{
    char ack = 0;
    if (s->role == ROLE_INITIATOR) get(s, st, &ack, 1);
    else put(s, st, &ack, 1);
    if (s->check && s->role == ROLE_RESPONDER) check_verify(s, (const unsigned char *)rb, s->bytes, s->peer, rep, what);
}

/* One window: msgs messages one way, then the acknowledgement. */
static void window(series *s, long rep, int cold_bufs, double *t_start, double *t_end)
{
    tp_state *st = s->state;
    size_t n = s->bytes;
    int w = s->window_msgs, sender = s->role == ROLE_INITIATOR;
    char ack = 0;
    char *b = cold_bufs ? NULL : sender ? buffers_send(s->buf, n, rep) : buffers_recv(s->buf, n, rep);
    if (s->check && sender)
        for (int i = 0; i < w; i++)
            check_fill((unsigned char *)(cold_bufs ? cold_at(s, 1, n, rep * w + i) : b), n, s->rank, rep + i);
    *t_start = timer_now(s->t);
    if (!st->pair) {
        for (int i = 0; i < w; i++) {
            char *p = cold_bufs ? cold_at(s, sender, n, rep * w + i) : b;
            if (sender) MPI_Isend(p, (int)n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
            else MPI_Irecv(p, (int)n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
        }
        MPI_Waitall(w, s->reqs, MPI_STATUSES_IGNORE);
        if (sender) MPI_Recv(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world, MPI_STATUS_IGNORE);
        else MPI_Send(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world);
    } else {
        for (int i = 0; i < w; i++) {
            char *p = cold_bufs ? cold_at(s, sender, n, rep * w + i) : b;
            if (sender) tp_send(st->pair, p, n);
            else tp_recv(st->pair, p, n);
            /* warm buffers: only the last message of the window is checked */
            if (s->check && !sender && cold_bufs) check_verify(s, (unsigned char *)p, n, s->peer, rep + i, "tp_bw_cold");
        }
        if (sender) tp_recv(st->pair, &ack, 1);
        else tp_send(st->pair, &ack, 1);
    }
    *t_end = timer_now(s->t);
    if (s->check && !sender && !cold_bufs) check_verify(s, (unsigned char *)b, n, s->peer, rep + w - 1, "tp_bw");
}

static void run_bw(series *s, long rep, double *t_start, double *t_end) { window(s, rep, 0, t_start, t_end); }
static void run_bw_cold(series *s, long rep, double *t_start, double *t_end) { window(s, rep, 1, t_start, t_end); }

static void run_skew(series *s, long rep, double *t_start, double *t_end)
{
    tp_state *st = s->state;
    size_t n = s->bytes;
    char *sb, *rb;
    rep_buffers(s, n, rep, &sb, &rb);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        put(s, st, sb, n);
    } else {
        loggp_spin_for(s->t, TP_SKEW_S);
        get(s, st, rb, n);
    }
    *t_end = timer_now(s->t);
    acknowledge(s, st, rb, rep, "tp_skew");
}

/* The sender posts, computes, waits (tp_isend: only offload returns before
 * the copy is done; MPI_Isend as the library does). */
static void post_compute_wait(series *s, tp_state *st, const char *p, size_t n, double compute_s)
{
    MPI_Request req;
    if (st->pair) tp_isend(st->pair, p, n);
    else MPI_Isend(p, (int)n, MPI_BYTE, s->peer, TAG, s->world, &req);
    loggp_compute(s->t, compute_s, (uint64_t)n);
    if (st->pair) tp_wait(st->pair);
    else MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void overlap_rep(series *s, tp_state *st, long rep, double compute_s, double *t_start, double *t_end)
{
    size_t n = s->bytes;
    char *sb, *rb;
    rep_buffers(s, n, rep, &sb, &rb);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) post_compute_wait(s, st, sb, n, compute_s);
    else get(s, st, rb, n);
    *t_end = timer_now(s->t);
    acknowledge(s, st, rb, rep, "tp_overlap");
}

/* The computation equals the send alone (median of a few, measured here on
 * the sender and shared), so full overlap would hide it entirely: overlap =
 * (alone + compute - total) / compute. */
static void describe_overlap(series *s)
{
    tp_info info;
    if (!open_pair(s, 0, &info)) return;
    tp_state *st = s->state;
    enum { TRIES = 7 };
    double took[TRIES] = {0}, a, b, alone = 0;
    for (int i = 0; i < TRIES && s->role != ROLE_IDLE; i++) {
        overlap_rep(s, st, i, 0, &a, &b);
        took[i] = b - a;
    }
    sort_doubles(took, TRIES);
    if (s->role == ROLE_INITIATOR) alone = took[TRIES / 2];
    if (s->role != ROLE_IDLE) MPI_Allreduce(MPI_IN_PLACE, &alone, 1, MPI_DOUBLE, MPI_MAX, st->comm != MPI_COMM_NULL ? st->comm : s->pc);
    st->compute_s = alone;
    rawfmt_params_transport(s, &info, -1, -1, alone, loggp_compute_calibrate(s->t, alone, 5));
}

static void run_overlap(series *s, long rep, double *t_start, double *t_end)
{
    tp_state *st = s->state;
    overlap_rep(s, st, rep, st->compute_s, t_start, t_end);
}

#define TP_BENCH(var, nm, pattern, rl, un, pairs, fp, desc, run)                                                   \
    const bench_def var = {.name = nm, .pat = pattern, .min_np = 2, .rule = rl, .unit = un, .pairing = pairs,      \
                           .variants_by_size = 1,                                                              \
                           .footprint = fp, .describe = desc, .run_rep = run, .nvariants = nvariants,              \
                           .variant_name = variant_name, .finish = finish}

TP_BENCH(bench_tp_latency, "tp_latency", PAT_PINGPONG, RULE_HALF_ROUND_TRIP, UNIT_SECONDS, PAIRING_FIRST_TWO, footprint,
         describe_latency, run_latency);
TP_BENCH(bench_tp_bw, "tp_bw", PAT_BW, RULE_BANDWIDTH, UNIT_BYTES_PER_SECOND, PAIRING_FIRST_TWO, footprint, describe_bw,
         run_bw);
TP_BENCH(bench_tp_bw_cold, "tp_bw_cold", PAT_BW, RULE_BANDWIDTH, UNIT_BYTES_PER_SECOND, PAIRING_FIRST_TWO, no_footprint,
         describe_bw_cold, run_bw_cold);
TP_BENCH(bench_tp_multibw, "tp_multibw", PAT_BW, RULE_BANDWIDTH, UNIT_BYTES_PER_SECOND, PAIRING_HALVES, footprint,
         describe_bw, run_bw);
TP_BENCH(bench_tp_skew, "tp_skew", PAT_BW, RULE_DURATION, UNIT_SECONDS, PAIRING_FIRST_TWO, footprint, describe_skew,
         run_skew);
TP_BENCH(bench_tp_overlap, "tp_overlap", PAT_BW, RULE_DURATION, UNIT_SECONDS, PAIRING_FIRST_TWO, footprint,
         describe_overlap, run_overlap);
