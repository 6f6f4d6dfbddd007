/* Ping-pong between ranks 0 and 1: half the round trip, as osu_latency reports. */
#include "../bench.h"

enum { TAG = 11, DONE_TAG = 17 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

/* The responder's receive is posted before the start, so the ping finds it
 * waiting whenever the responder leaves the start (barrier or window), as every
 * ping but the first does in osu_latency's loop. A head start spun by the
 * initiator instead cost ~40 ns a round trip (bench/harness_overhead.py).
 *
 * Of two ranks in a barrier, the last to enter leaves first; the other learns
 * of it one message later. The initiator, which receives the last pong, would
 * enter last and send its ping while the responder is still in the barrier:
 * 1.35x the loop's half round trip. So before a barrier start the initiator
 * says it is done with the last repetition, and the responder enters the
 * barrier only on that word (1.0x). A "ready" sent by the responder after
 * the barrier instead cost 1.20x: a second message its way each round trip. */
static void pre_rep(series *s, long rep)
{
    if (s->barrier_start && s->role == ROLE_INITIATOR)
        MPI_Send(NULL, 0, MPI_BYTE, s->peer, DONE_TAG, s->world);
    if (s->role == ROLE_RESPONDER) {
        MPI_Irecv(buffers_recv(s->buf, s->bytes, rep), (int)s->bytes, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[0]);
        if (s->barrier_start) MPI_Recv(NULL, 0, MPI_BYTE, s->peer, DONE_TAG, s->world, MPI_STATUS_IGNORE);
    }
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
        MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE);
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
    }
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "pingpong");
}

const bench_def bench_pingpong = {.name = "pingpong", .pat = PAT_PINGPONG, .min_np = 2, .sizeless = 0,
                                .rule = RULE_HALF_ROUND_TRIP, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                .footprint = footprint, .describe = describe, .run_rep = run_rep,
                                .pre_rep = pre_rep};
