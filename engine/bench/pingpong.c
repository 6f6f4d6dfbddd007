/* Ping-pong between ranks 0 and 1: half the round trip, as osu_latency reports. */
#include "../bench.h"

enum { TAG = 11, READY_TAG = 17 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

/* The responder's receive is posted before the start, so the ping finds it
 * waiting whenever the responder leaves the start (barrier or window), as every
 * ping but the first does in osu_latency's loop. A head start spun by the
 * initiator instead cost ~40 ns a round trip (bench/harness_overhead.py). */
static void pre_rep(series *s, long rep)
{
    if (s->role == ROLE_RESPONDER)
        MPI_Irecv(buffers_recv(s->buf, s->bytes, rep), (int)s->bytes, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[0]);
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    /* A barrier lets the ranks leave one message apart, and an initiator that
     * leaves first would time that skew too (1.35x the loop's half round trip,
     * bench/harness_overhead.py). So the responder, once out, says it is
     * ready, and the initiator starts on that word: as in osu_latency's loop,
     * where the previous pong is that word. Window starts need none. */
    if (s->barrier_start && s->role == ROLE_INITIATOR)
        MPI_Recv(NULL, 0, MPI_BYTE, s->peer, READY_TAG, s->world, MPI_STATUS_IGNORE);
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
        MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
    } else {
        if (s->barrier_start) MPI_Send(NULL, 0, MPI_BYTE, s->peer, READY_TAG, s->world);
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
