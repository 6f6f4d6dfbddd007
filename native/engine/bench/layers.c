/* SPDX-License-Identifier: BSD-3-Clause */
/* The same message at several layers of the stack, between ranks 0 and 1,
 * in the same harness (start synchronization, records): variant "mpi"
 * (MPI_Send / MPI_Recv), "tcp" (plain sockets opened by the engine) and
 * "shm" (a shared-memory ring pair; skipped, with the reason recorded, when
 * the ranks are on different hosts).
 *
 *   layer_pingpong  half the round trip, as pingpong
 *   layer_bw        window_msgs messages one way, then a 1-byte acknowledgement;
 *                   MPI keeps them all in flight (MPI_Isend), the byte streams
 *                   write them back to back: time per message
 *
 * A 0-byte message is sent as 1 byte on tcp and shm (a stream needs
 * something to wait for); params.wire_bytes says so. */
#include <stdlib.h>

#include "../options.h"
#include "layers.h"
#include "../rawfmt.h"
#include "loggp.h"
#include "roundtrip.h"

enum { TAG = 47, TAG_ACK = 48 };
enum { LAYER_MPI, LAYER_TCP, LAYER_SHM };

typedef struct layer_state {
    int layer;
    tcp_chan tcp;
    shm_chan shm;
} layer_state;

static const char *const names[] = {"mpi", "tcp", "shm"};

static size_t footprint(size_t bytes, int np) { (void)np; return bytes ? bytes : 1; }
static int nvariants(const options *o) { (void)o; return 3; }
static const char *variant_name(const options *o, int i) { (void)o; return names[i]; }

static void setup(series *s, int bw)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
    layer_state *st = calloc(1, sizeof *st);
    s->state = st;
    st->layer = s->variant;
    st->tcp.fd = -1;
    const char *why = NULL;
    if (s->role != ROLE_IDLE) {
        if (st->layer == LAYER_TCP) why = tcp_chan_open(&st->tcp, s);
        if (st->layer == LAYER_SHM) why = shm_chan_open(&st->shm, s);
    }
    if (why) s->skip = why;
    int tcp_open = st->layer == LAYER_TCP && !why && s->role != ROLE_IDLE;
    rawfmt_params_layer(s, &(layer_params){
        .layer = names[st->layer], .msgs = bw ? s->window_msgs : -1,
        .wire_bytes = st->layer != LAYER_MPI ? (s->bytes ? (long)s->bytes : 1) : -1,
        .address = tcp_open ? st->tcp.address : NULL, .port = tcp_open ? st->tcp.port : 0,
        .ring_bytes = st->layer == LAYER_SHM ? (long)shm_chan_capacity() : -1});
}

static void describe_pingpong(series *s) { setup(s, 0); }
static void describe_bw(series *s) { setup(s, 1); }

static void finish(series *s)
{
    layer_state *st = s->state;
    if (!st) return;
    if (st->layer == LAYER_TCP) tcp_chan_close(&st->tcp);
    if (st->layer == LAYER_SHM) shm_chan_close(&st->shm);
}

static void put(series *s, void *chan, const void *p, size_t n)
{
    layer_state *st = chan;
    if (st->layer == LAYER_TCP) tcp_chan_send(s, &st->tcp, p, n);
    else if (st->layer == LAYER_SHM) shm_chan_send(s, &st->shm, p, n);
    else MPI_Send(p, (int)n, MPI_BYTE, s->peer, TAG, s->world);
}

static void get(series *s, void *chan, void *p, size_t n)
{
    layer_state *st = chan;
    if (st->layer == LAYER_TCP) tcp_chan_recv(s, &st->tcp, p, n);
    else if (st->layer == LAYER_SHM) shm_chan_recv(s, &st->shm, p, n);
    else MPI_Recv(p, (int)n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
}

static size_t wire(const series *s, const layer_state *st)
{
    return st->layer == LAYER_MPI || s->bytes ? s->bytes : 1;
}

static void run_pingpong(series *s, long rep, double *t_start, double *t_end)
{
    roundtrip_rep(s, s->state, put, get, wire(s, s->state), rep, "layer_pingpong", t_start, t_end);
}

static void run_bw(series *s, long rep, double *t_start, double *t_end)
{
    layer_state *st = s->state;
    size_t n = wire(s, st);
    int w = s->window_msgs;
    char *sb, *rb, ack = 0;
    rep_buffers(s, n, rep, &sb, &rb);
    *t_start = timer_now(s->t);
    if (st->layer == LAYER_MPI) {
        int sender = s->role == ROLE_INITIATOR;
        for (int i = 0; i < w; i++) {
            if (sender) MPI_Isend(sb, (int)n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
            else MPI_Irecv(rb, (int)n, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[i]);
        }
        MPI_Waitall(w, s->reqs, MPI_STATUSES_IGNORE);
        if (sender) MPI_Recv(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world, MPI_STATUS_IGNORE);
        else MPI_Send(&ack, 1, MPI_BYTE, s->peer, TAG_ACK, s->world);
    } else if (s->role == ROLE_INITIATOR) {
        for (int i = 0; i < w; i++) put(s, st, sb, n);
        if (st->layer == LAYER_TCP) tcp_chan_recv(s, &st->tcp, &ack, 1);
        else shm_chan_recv(s, &st->shm, &ack, 1);
    } else {
        for (int i = 0; i < w; i++) get(s, st, rb, n);
        if (st->layer == LAYER_TCP) tcp_chan_send(s, &st->tcp, &ack, 1);
        else shm_chan_send(s, &st->shm, &ack, 1);
    }
    *t_end = timer_now(s->t);
    if (s->check && s->role == ROLE_RESPONDER)
        check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "layer_bw");
}

const bench_def bench_layer_pingpong = {.name = "layer_pingpong", .pat = PAT_PINGPONG, .min_np = 2, .sizeless = 0,
                                        .rule = RULE_HALF_ROUND_TRIP, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                        .footprint = footprint, .describe = describe_pingpong,
                                        .run_rep = run_pingpong, .nvariants = nvariants,
                                        .variant_name = variant_name, .finish = finish};
const bench_def bench_layer_bw = {.name = "layer_bw", .pat = PAT_BW, .min_np = 2, .sizeless = 0,
                                  .rule = RULE_PER_MESSAGE, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                  .footprint = footprint, .describe = describe_bw, .run_rep = run_bw,
                                  .nvariants = nvariants, .variant_name = variant_name, .finish = finish};
