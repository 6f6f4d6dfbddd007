/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening a pair (segments, process ids, placement), and the calls every
 * design shares: the receive, which handles every record kind, and the
 * dispatch of sends to the design's own. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tp_impl.h"

static const char *const design_names[TP_DESIGNS] = {"basic", "advanced", "cma", "offload", "hybrid"};
const char *tp_design_name(tp_design d) { return d >= 0 && d < TP_DESIGNS ? design_names[d] : "?"; }

typedef struct offer {
    int ok, pid, cpu;
    char name[64], why[160];
} offer;

/* This process's segment, first touched here: the queue lives in the
 * receiver's memory, the pool in the sender's (NUMA first touch). */
static tp_segment *create(offer *of)
{
    static int serial;
    snprintf(of->name, sizeof of->name, "/mpiscope-tp-%d-%d", (int)getpid(), serial++);
    int fd = shm_open(of->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    void *m = MAP_FAILED;
    if (fd >= 0 && !ftruncate(fd, sizeof(tp_segment)))
        m = mmap(NULL, sizeof(tp_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) snprintf(of->why, sizeof of->why, "cannot create the shared segment %s: %s", of->name, strerror(errno));
    else memset(m, 0, sizeof(tp_segment));
    if (fd >= 0) close(fd);
    of->ok = m != MAP_FAILED;
    return of->ok ? m : NULL;
}

static tp_segment *attach(const offer *theirs, char *why, size_t n)
{
    int fd = shm_open(theirs->name, O_RDWR, 0600);
    void *m = MAP_FAILED;
    if (fd >= 0) m = mmap(NULL, sizeof(tp_segment), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) snprintf(why, n, "cannot map the partner's segment %s: %s", theirs->name, strerror(errno));
    if (fd >= 0) close(fd);
    return m == MAP_FAILED ? NULL : m;
}

/* Whether both could; if not, both get the reason of the lowest rank that could not. */
static int agree(MPI_Comm comm, int ok, char *why, size_t n)
{
    int me, who, first;
    MPI_Comm_rank(comm, &me);
    who = ok ? 2 : me;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == 2) return 1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", why);
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, first, comm);
    snprintf(why, n, "%s", buf);
    return 0;
}

tp_pair *tp_open(tp_design d, MPI_Comm comm, int yield_when_waiting, char *why, size_t n)
{
    int me;
    MPI_Comm_rank(comm, &me);
    tp_pair *p = calloc(1, sizeof *p);
    p->design = d;
    p->yield = yield_when_waiting;
    offer mine = {.pid = (int)getpid(), .cpu = tp_current_cpu()}, theirs;
    p->mine = create(&mine);
    MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, 1 - me, 50, &theirs, sizeof theirs, MPI_BYTE, 1 - me, 50, comm,
                 MPI_STATUS_IGNORE);
    why[0] = 0;
    if (!mine.ok) snprintf(why, n, "%s", mine.why);
    else if (!theirs.ok) snprintf(why, n, "the partner: %s", theirs.why);
    else p->peer = attach(&theirs, why, n);
    int ok = p->mine && p->peer;
    MPI_Barrier(comm); /* both mapped (or never will): the names can go */
    if (mine.ok) shm_unlink(mine.name);
    if (!agree(comm, ok, why, n)) {
        tp_close(p);
        return NULL;
    }
    p->peer_pid = theirs.pid;
    p->cpu = mine.cpu;
    p->peer_cpu = theirs.cpu;
    p->cls = mine.cpu < theirs.cpu ? tp_classify(mine.cpu, theirs.cpu) : tp_classify(theirs.cpu, mine.cpu);
    p->th = tp_hybrid_thresholds(p->cls);
    ok = 1;
    if ((d == TP_CMA || d == TP_HYBRID) && !agree(comm, tp_cma_check(p, comm, why, n), why, n)) {
        if (d == TP_CMA) ok = 0;
        else snprintf(p->no_cma, sizeof p->no_cma, "%s", why), p->th.cma_min = p->th.cma_min_late = (size_t)-1;
    }
    if (d == TP_OFFLOAD) ok = tp_offload_start(p, why, n);
    if (!agree(comm, ok, why, n)) {
        tp_close(p);
        return NULL;
    }
    return p;
}

void tp_close(tp_pair *p)
{
    if (!p) return;
    tp_offload_stop(p);
    if (p->mine) munmap(p->mine, sizeof(tp_segment));
    if (p->peer) munmap(p->peer, sizeof(tp_segment));
    free(p);
}

void tp_send(tp_pair *p, const void *buf, size_t n)
{
    switch (p->design) {
    case TP_BASIC: tp_basic_send(p, buf, n); break;
    case TP_ADVANCED: tp_advanced_send(p, buf, n); break;
    case TP_CMA: tp_cma_send(p, buf, n); break;
    case TP_OFFLOAD: tp_offload_isend(p, buf, n), tp_offload_wait(p); break;
    default: tp_hybrid_send(p, buf, n); break;
    }
}

void tp_isend(tp_pair *p, const void *buf, size_t n)
{
    if (p->design == TP_OFFLOAD) tp_offload_isend(p, buf, n);
    else tp_send(p, buf, n);
}

void tp_wait(tp_pair *p)
{
    if (p->design == TP_OFFLOAD) tp_offload_wait(p);
}

void tp_recv(tp_pair *p, void *buf, size_t n)
{
    unsigned char *dst = buf;
    size_t got = 0;
    /* The hybrid's sender asks whether the receiver is already here, but
     * only where the answer decides (the sizes agree on both sides). */
    int tell = tp_hybrid_asks(p, n);
    if (tell) atomic_store_explicit(&p->mine->waiting, p->in_recs + 1, memory_order_relaxed);
    do {
        tp_record *r = tp_next_record(p);
        if (r->kind == REC_DATA) memcpy(dst + got, r->data, r->len);
        else if (r->kind == REC_CHUNK) tp_chunk_recv(p, r, dst + got);
        else tp_cma_recv(p, r, dst + got);
        got += r->len;
        tp_release_record(p, r);
    } while (got < n);
    if (tell) atomic_store_explicit(&p->mine->waiting, 0, memory_order_relaxed);
}

tp_info tp_describe(const tp_pair *p)
{
    int adv = p->design == TP_ADVANCED || p->design == TP_HYBRID, hy = p->design == TP_HYBRID;
    tp_info info = {.design = tp_design_name(p->design), .placement = tp_class_name(p->cls), .cpu = p->cpu,
                     .peer_cpu = p->peer_cpu, .queue_bytes = TP_QUEUE_BYTES, .record_max = TP_RECORD_MAX,
                     .chunk = adv ? TP_CHUNK : -1, .chunks = adv ? TP_CHUNKS : -1, .eager = adv ? TP_ADV_EAGER : -1,
                     .basic_max = hy ? p->th.basic_max : 0, .cma_min = hy ? p->th.cma_min : 0,
                     .cma_min_late = hy ? p->th.cma_min_late : 0, .no_cma = hy && p->no_cma[0] ? p->no_cma : NULL,
                     .helper_cpu = p->design == TP_OFFLOAD ? p->off.cpu : -1,
                     .threads = tp_thread_count()};
    tp_own_cpus(info.rank_cpus, sizeof info.rank_cpus);
    return info;
}
