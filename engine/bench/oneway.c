/* True one-way time 0 -> 1: the sender's start and the receiver's end,
 * compared on the global clock. */
#include "../bench.h"

enum { TAG = 12 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

/* The receive is posted before the start: the message finds it waiting, so
 * the time is the message's, not the receiver's setting up. */
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
    *t_start = timer_now(s->t);
    if (s->role == ROLE_INITIATOR)
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
    else
        MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE);
    *t_end = timer_now(s->t);
    if (s->check && s->role == ROLE_RESPONDER)
        check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "oneway");
}

const bench_def bench_oneway = {.name = "oneway", .pat = PAT_ONEWAY, .min_np = 2, .sizeless = 0,
                                .rule = RULE_ONE_WAY, .unit = UNIT_SECONDS, .pairing = PAIRING_FIRST_TWO,
                                .footprint = footprint, .describe = describe, .run_rep = run_rep,
                                .pre_rep = pre_rep};
