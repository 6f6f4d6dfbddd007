/* SPDX-License-Identifier: BSD-3-Clause */
/* Intel MPI Benchmarks (IMB-MPI1 2021.11, its defaults: -sync on,
 * -root_shift off, -off_cache off, dynamic iterations), as src_c/ and
 * src_cpp/ time them. Every kernel call starts with two untimed barriers.
 * - PingPong (also IMB's bandwidth, size / its time): ranks 0 and 1 each
 *   time one loop of n round trips as a whole;
 * - Barrier, Sendrecv (the engine's ring: MPI_Sendrecv to the right, from
 *   the left) and Exchange (MPI_Isend to both neighbours, MPI_Recv from the
 *   left, then the right; MPI_Waitall): every rank times one loop of n
 *   calls as a whole;
 * - collectives: every rank times each of n calls, each followed by an
 *   untimed barrier (-sync). Reduce_scatter gives every rank size / 4
 *   floats (MPI_Reduce_scatter with equal counts; the send buffer holds
 *   one such block per rank), so IMB's size is the engine's
 *   reduce_scatter_block size.
 * n per size (helper_IMB_functions.h): a call of 1 repetition, a call of
 * up to 1000 (both "calibration"), then n = min(1000 or 40 MiB / size, the
 * previous size's n, 1 + 10 s / the time per call); a warm-up call of
 * max(n / 10, min(10, n)) repetitions; the measured call; a barrier.
 * Reductions sum MPI_FLOAT (size / 4 of them), the rest move MPI_BYTE;
 * receives take any tag and, in PingPong, any source.
 * Buffers are IMB's own (IMB_mem_manager.c, helpers/original_benchmark.h):
 * allocated anew at every size, the send buffer first, its length rounded
 * up to whole floats, filled with IMB's values, freed after the size; they
 * start within their pages where glibc puts IMB's (imb_alloc). The block's
 * params record their length and both page offsets. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "method.h"

enum { ASIZE = sizeof(float), N_BARR = 2, MSGS_PER_SAMPLE = 1000, OVERALL_VOL = 40 << 20, WARMUP_PERCENT = 10, MIN_WARMUP = 10 };
static const double SECS_PER_SAMPLE = 10;

static const mop_traits loop = {"loop", "back_to_back", "none", "warm", "first_two"};
static const mop_traits barrier = {"loop", "back_to_back", "none", "warm", "all"};
static const mop_traits coll = {"call", "barrier_after", "none", "warm", "all"};
static const mop_traits rooted = {"call", "barrier_after", "fixed", "warm", "all"};

static const mop_traits *traits(mop op)
{
    switch (op) {
    case MOP_PINGPONG: case MOP_BW: return &loop;
    case MOP_BARRIER: case MOP_RING: case MOP_EXCHANGE: return &barrier;
    case MOP_BCAST: case MOP_REDUCE: case MOP_GATHER: case MOP_SCATTER: return &rooted;
    default: return &coll;
    }
}

/* Across the sizes of one operation: the last n; IMB's buffers of one size. */
typedef struct {
    long prev;
    int *recvcounts; /* Reduce_scatter's, one per rank */
    char *send, *recv;
    size_t send_len, recv_len;
    int send_mapped, recv_mapped;
} imb_state;

/* IMB_set_buf: `len` bytes (at least one float) rounded up to whole floats. */
static size_t imb_buffer_bytes(size_t len) { return len < ASIZE ? ASIZE : (len + ASIZE - 1) / ASIZE * ASIZE; }

/* Where IMB's buffers start: MPI_Alloc_mem is the C library's malloc, which
 * in IMB's process serves a buffer of its default mmap threshold (128 KiB)
 * or more from a mapping of its own, the buffer a chunk header past the
 * page's start; IMB's growing sizes never raise that threshold past the
 * next size. The engine's own allocations have raised it, and the same
 * calls would put both buffers in the heap, the receive buffer a header
 * past the send buffer within a page: a distance at which a copy between
 * them runs many times slower on some processors. So these are mapped here
 * as glibc maps them for IMB; smaller ones come from MPI_Alloc_mem. */
enum { MMAP_THRESHOLD = 128 << 10, CHUNK_HEADER = 2 * sizeof(size_t) };

static char *imb_alloc(size_t len, int rank, int send, int *mapped)
{
    char *buf = NULL;
    *mapped = 0;
    if (len >= MMAP_THRESHOLD) {
        char *map = mmap(NULL, len + CHUNK_HEADER, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map != MAP_FAILED) buf = map + CHUNK_HEADER, *mapped = 1;
    }
    if (!buf) MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &buf);
    /* IMB's values: BUF_VALUE(rank, i) = 0.1 (rank + 1) + i to send, zeros to receive */
    float *f = (float *)buf;
    for (size_t i = 0; i < len / ASIZE; i++) f[i] = send ? (float)(0.1 * (rank + 1) + (float)i) : 0.0f;
    return buf;
}

static void imb_release(char *buf, size_t len, int mapped)
{
    if (mapped) munmap(buf - CHUNK_HEADER, len + CHUNK_HEADER);
    else if (buf) MPI_Free_mem(buf);
}

static void imb_buffers(mctx *m, imb_state *s)
{
    if (m->op == MOP_BARRIER) return; /* IMB's Barrier has no buffers */
    size_t b = m->bytes, p = (size_t)m->csize, i = b < ASIZE ? ASIZE : b;
    /* IMB's SENDBUF_SIZE_NP_I and SENDBUF_SIZE_2I, of at least one float */
    s->send_len = m->op == MOP_REDUCE_SCATTER ? imb_buffer_bytes(i * p)
                : m->op == MOP_EXCHANGE ? imb_buffer_bytes(2 * i)
                : imb_buffer_bytes(m->op == MOP_ALLTOALL || m->op == MOP_SCATTER ? b * p : b);
    s->recv_len = imb_buffer_bytes(m->op == MOP_ALLGATHER || m->op == MOP_ALLTOALL || m->op == MOP_GATHER ? b * p : b);
    s->send = imb_alloc(s->send_len, m->crank, 1, &s->send_mapped);
    s->recv = imb_alloc(s->recv_len, m->crank, 0, &s->recv_mapped);
    method_param(m, "buffer_bytes", (double)s->send_len);
    method_param(m, "send_page_offset", (double)((uintptr_t)s->send % 4096));
    method_param(m, "recv_page_offset", (double)((uintptr_t)s->recv % 4096));
}

/* IMB_del_s_buf, IMB_del_r_buf: after every size. */
static void imb_free(imb_state *s)
{
    imb_release(s->send, s->send_len, s->send_mapped);
    imb_release(s->recv, s->recv_len, s->recv_mapped);
    free(s->recvcounts);
    s->send = s->recv = NULL, s->send_mapped = s->recv_mapped = 0, s->recvcounts = NULL;
}

static void release(void *state)
{
    if (state) imb_free(state);
    free(state);
}

/* One loop of n round trips, timed as a whole on both ranks. IMB receives
 * from MPI_ANY_SOURCE with MPI_ANY_TAG (its defaults: no -select_source,
 * no -select_tag), which takes the library's wildcard matching path. */
static double pingpong(mctx *m, long n, int phase)
{
    imb_state *s = m->state;
    char *sb = s->send, *rb = s->recv;
    int bytes = (int)m->bytes, peer = m->peer;
    MPI_Comm c = m->comm;
    long k = mrows_take(&m->rows, 1, phase, (int)n);
    for (int i = 0; i < N_BARR; i++) MPI_Barrier(c);
    double t0 = mnow(m);
    for (long i = 0; i < n; i++) {
        if (method_is_initiator(m)) {
            MPI_Send(sb, bytes, MPI_BYTE, peer, 1, c);
            MPI_Recv(rb, bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rb, bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, MPI_STATUS_IGNORE);
            MPI_Send(sb, bytes, MPI_BYTE, peer, 1, c);
        }
    }
    double t1 = mnow(m);
    m->rows.t_start[k] = t0, m->rows.t_end[k] = t1;
    return (t1 - t0) / (double)n;
}

/* Barrier, Sendrecv, Exchange: one loop of n calls timed as a whole. */
static double looped(mctx *m, long n, int phase)
{
    imb_state *s = m->state;
    int count = (int)m->count;
    long k = mrows_take(&m->rows, 1, phase, (int)n);
    for (int i = 0; i < N_BARR; i++) MPI_Barrier(m->comm);
    double t0 = mnow(m);
    for (long i = 0; i < n; i++) method_call(m, MPI_BYTE, count, 0, s->send, s->recv);
    double t1 = mnow(m);
    m->rows.t_start[k] = t0, m->rows.t_end[k] = t1;
    return (t1 - t0) / (double)n;
}

/* n calls, each timed, each followed by the -sync barrier; root 0 (no -root_shift). */
static double calls(mctx *m, long n, int phase)
{
    imb_state *s = m->state;
    char *sb = s->send, *rb = s->recv;
    MPI_Datatype dt = method_op_reduction(m->op) ? MPI_FLOAT : MPI_BYTE;
    int count = (int)m->count;
    long k = mrows_take(&m->rows, n, phase, 1);
    double *ts = m->rows.t_start + k, *te = m->rows.t_end + k, sum = 0;
    for (int i = 0; i < N_BARR; i++) MPI_Barrier(m->comm);
    for (long i = 0; i < n; i++) {
        ts[i] = mnow(m);
        method_call(m, dt, count, 0, sb, rb);
        te[i] = mnow(m);
        MPI_Barrier(m->comm);
    }
    for (long i = 0; i < n; i++) {
        sum += te[i] - ts[i];
        if (method_op_rooted(m->op)) m->rows.root[k + i] = 0;
    }
    return sum / (double)n;
}

/* One kernel call of n repetitions: the time per repetition, the largest over ranks. */
static double kernel(mctx *m, long n, int phase)
{
    double t = m->op == MOP_BARRIER || m->op == MOP_RING || m->op == MOP_EXCHANGE ? looped(m, n, phase)
             : m->op == MOP_PINGPONG || m->op == MOP_BW ? pingpong(m, n, phase) : calls(m, n, phase);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, m->comm);
    return t;
}

/* The repetitions of one size: IMB's dynamic policy. `prev` is the previous
 * size's n (IMB's n_sample_prev), MSGS_PER_SAMPLE at the first size. */
static long repetitions(mctx *m, long prev)
{
    long selected = m->bytes > 0 ? OVERALL_VOL / (long)m->bytes : MSGS_PER_SAMPLE;
    if (selected > MSGS_PER_SAMPLE) selected = MSGS_PER_SAMPLE;
    if (selected < 1) selected = 1;
    if (m->op == MOP_BARRIER) selected = MSGS_PER_SAMPLE, prev = MSGS_PER_SAMPLE;
    double t = kernel(m, 1, ROW_CALIBRATION);
    int rep_test = t < 1.0 / MSGS_PER_SAMPLE ? MSGS_PER_SAMPLE : t < 1.0 ? (int)(1.0 / t + 0.5) : 1;
    MPI_Allreduce(MPI_IN_PLACE, &rep_test, 1, MPI_INT, MPI_MAX, m->comm);
    long n = selected < rep_test ? selected : rep_test;
    if (n > 1) t = kernel(m, n, ROW_CALIBRATION);
    double val = 1.0 + SECS_PER_SAMPLE / t;
    long t_sample = t > 1e-8 && val <= 2147483647.0 ? (long)val : selected;
    n = selected;
    if (prev < n) n = prev;
    if (t_sample < n) n = t_sample;
    MPI_Bcast(&n, 1, MPI_LONG, 0, m->comm);
    return n;
}

static void run(mctx *m)
{
    imb_state *s = m->state;
    if (!s) {
        s = m->state = calloc(1, sizeof *s);
        s->prev = MSGS_PER_SAMPLE;
    }
    imb_buffers(m, s);
    int red = method_op_reduction(m->op);
    m->datatype = m->op == MOP_BARRIER ? "none" : red ? "MPI_FLOAT" : "MPI_BYTE";
    m->count = m->op == MOP_BARRIER ? 0 : red ? (long)m->bytes / 4 : (long)m->bytes;
    if (m->op == MOP_REDUCE_SCATTER) { /* IMB's reccnt[i] = size / 4 */
        s->recvcounts = malloc(sizeof(int) * (size_t)m->csize);
        for (int i = 0; i < m->csize; i++) s->recvcounts[i] = (int)m->count;
        m->recvcounts = s->recvcounts;
    }
    long n = repetitions(m, s->prev);
    long warm = n / WARMUP_PERCENT;
    if (warm < MIN_WARMUP) warm = n < MIN_WARMUP ? n : MIN_WARMUP;
    kernel(m, warm, ROW_WARMUP);
    kernel(m, n, ROW_MEASURED);
    MPI_Barrier(m->comm);
    s->prev = n;
    imb_free(s);
    m->recvcounts = NULL;
    method_param(m, "repetitions", (double)n);
    method_param(m, "warmup", (double)warm);
}

const method_def method_imb = {.name = "imb", .tool = "Intel MPI Benchmarks 2021.11 (IMB-MPI1)", .traits = traits,
                               .run = run, .release = release};
