/* Concurrent pairs (MPIBench): the initiator sends, the responder replies as
 * soon as it has received; both directions are one-way times on the global
 * clock. `multipair` pairs p with p + n/2; `pairs` takes the pairs given. */
#include "../bench.h"

enum { TAG = 13 };

static size_t footprint(size_t bytes, int np) { (void)np; return bytes; }

static void describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

/* The responder's receive is posted before the start, so the message finds
 * it waiting (as pingpong's does). */
static void pre_rep(series *s, long rep)
{
    if (s->role == ROLE_RESPONDER)
        MPI_Irecv(buffers_recv(s->buf, s->bytes, rep), (int)s->bytes, MPI_BYTE, s->peer, TAG, s->world, &s->reqs[0]);
}

/* t_start: this rank started its send; t_end: its receive completed. */
static void run_rep(series *s, long rep, double *t_start, double *t_end)
{
    char *sb = buffers_send(s->buf, s->bytes, rep), *rb = buffers_recv(s->buf, s->bytes, rep);
    int n = (int)s->bytes;
    if (s->check) check_fill((unsigned char *)sb, s->bytes, s->rank, rep);
    if (s->role == ROLE_INITIATOR) {
        *t_start = timer_now(s->t);
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
        MPI_Recv(rb, n, MPI_BYTE, s->peer, TAG, s->world, MPI_STATUS_IGNORE);
        *t_end = timer_now(s->t);
    } else {
        MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE);
        *t_end = timer_now(s->t);
        *t_start = timer_now(s->t);
        MPI_Send(sb, n, MPI_BYTE, s->peer, TAG, s->world);
    }
    if (s->check) check_verify(s, (unsigned char *)rb, s->bytes, s->peer, rep, "pairs");
}

const bench_def bench_multipair = {.name = "multipair", .pat = PAT_PAIRS, .min_np = 2, .sizeless = 0,
                                .rule = RULE_PAIR_EXCHANGE, .unit = UNIT_SECONDS, .pairing = PAIRING_HALVES,
                                .footprint = footprint, .describe = describe, .run_rep = run_rep,
                                .pre_rep = pre_rep};
const bench_def bench_pairs = {.name = "pairs", .pat = PAT_PAIRS, .min_np = 2, .sizeless = 0,
                                .rule = RULE_PAIR_EXCHANGE, .unit = UNIT_SECONDS, .pairing = PAIRING_LISTED,
                                .footprint = footprint, .describe = describe, .run_rep = run_rep,
                                .pre_rep = pre_rep};
