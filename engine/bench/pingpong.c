/* Ping-pong between ranks 0 and 1: half the round trip, as osu_latency reports. */
#include "../bench.h"

enum { TAG = 11 };
static const double RESPONDER_HEAD_START_S = 1e-6;

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    /* The responder leaves the start (barrier or window) a little after the
     * initiator at times: a head start lets it be waiting in MPI_Recv when
     * the ping comes, as it is in osu_latency's loop. Outside the timed span. */
    if (s->role == ROLE_INITIATOR)
        for (double go = timer_now(s->t) + RESPONDER_HEAD_START_S; timer_now(s->t) < go;)
            ;
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR) {
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
        MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
    }
    *t_end = timer_now(s->t);
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "pingpong");
}

const bench_def bench_pingpong = {.name = "pingpong", .pat = PAT_PINGPONG, .min_np = 2, .sizeless = 0,
                                .rule = RULE_HALF_ROUND_TRIP, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                .footprint = footprint, .describe = describe, .run_rep = run_rep};
