/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared-memory channel of the layer benchmarks: two single-producer
 * single-consumer rings of records (one per direction, layers.h) in a POSIX
 * shared segment that rank 0 creates (shm_open + mmap) and unlinks as soon
 * as rank 1 has mapped it. Only for a pair on one host. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "layers.h"
#include "loggp.h"

enum { TAG_NAME = 45, TAG_MAPPED = 46 };
enum { RING_BYTES = 512 * 1024, LINE = 64, REC_PAYLOAD_MAX = 16384 - 16 };
/* A header's sequence number: a tag in the high half, so payload bytes left
 * from an earlier lap cannot pass for a header, and the record's number. */
#define SEQ_TAG 0x6d70736300000000ULL

typedef struct shm_rec {
    _Atomic uint64_t seq; /* SEQ_TAG | (k + 1) once the k-th record is written */
    uint32_t len;
    uint32_t wrap;        /* 1: no record here; the next one is at the ring's start */
    unsigned char data[];
} shm_rec;

struct shm_ring {
    _Alignas(64) _Atomic uint64_t freed; /* bytes the consumer has finished with */
    _Alignas(64) unsigned char data[RING_BYTES];
};

static uint64_t seq_of(uint64_t k) { return SEQ_TAG | ((k + 1) & 0xffffffffULL); }
static size_t rec_bytes(size_t payload) { return (16 + payload + LINE - 1) / LINE * LINE; }
static shm_rec *rec_at(shm_ring *r, uint64_t pos) { return (shm_rec *)(r->data + pos % RING_BYTES); }

typedef struct shm_offer {
    int ok;
    char name[64];
    char why[160];
} shm_offer;

size_t shm_chan_capacity(void) { return (size_t)RING_BYTES; }

/* Mapped with every page present (MAP_POPULATE): a first touch inside a timed
 * repetition would add a page fault to it. */
static void *map(int fd, size_t len) { return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0); }

const char *shm_chan_open(shm_chan *c, const series *s)
{
    char peer_host[MPI_MAX_PROCESSOR_NAME];
    c->base = NULL;
    c->why[0] = 0;
    c->len = 2 * sizeof(shm_ring);
    if (!loggp_same_host(s, peer_host, sizeof peer_host)) {
        char mine[MPI_MAX_PROCESSOR_NAME];
        int len;
        MPI_Get_processor_name(mine, &len);
        snprintf(c->why, sizeof c->why, "ranks on different hosts (%.50s, %.50s) share no memory", mine, peer_host);
        return c->why;
    }
    int peer = loggp_pc_peer(s), ok = 0, both;
    shm_offer of = {0};
    if (s->role == ROLE_INITIATOR) {
        snprintf(of.name, sizeof of.name, "/mpiscope-%d-%llx", (int)getpid(),
                 (unsigned long long)(timer_raw(s->t) * 1e9));
        int fd = shm_open(of.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && !ftruncate(fd, (off_t)c->len) && (c->base = map(fd, c->len)) != MAP_FAILED) of.ok = 1;
        else snprintf(of.why, sizeof of.why, "cannot create the shared segment %s: %s", of.name, strerror(errno));
        if (fd >= 0) close(fd);
        if (!of.ok) c->base = NULL;
        MPI_Send(&of, sizeof of, MPI_BYTE, peer, TAG_NAME, s->pc);
        int mapped = 0;
        MPI_Recv(&mapped, 1, MPI_INT, peer, TAG_MAPPED, s->pc, MPI_STATUS_IGNORE);
        if (of.ok) shm_unlink(of.name); /* both mapped (or never will be): the name is not needed */
        ok = of.ok && mapped;
        if (of.ok && !mapped) snprintf(c->why, sizeof c->why, "the partner could not map the shared segment");
        else snprintf(c->why, sizeof c->why, "%s", of.why);
        shm_ring *r = c->base;
        if (ok) c->out = &r[0], c->in = &r[1];
    } else {
        MPI_Recv(&of, sizeof of, MPI_BYTE, peer, TAG_NAME, s->pc, MPI_STATUS_IGNORE);
        if (of.ok) {
            int fd = shm_open(of.name, O_RDWR, 0600);
            if (fd >= 0 && (c->base = map(fd, c->len)) != MAP_FAILED) ok = 1;
            else snprintf(c->why, sizeof c->why, "cannot map the shared segment %s: %s", of.name, strerror(errno));
            if (fd >= 0) close(fd);
            if (!ok) c->base = NULL;
        } else {
            snprintf(c->why, sizeof c->why, "partner: %.140s", of.why);
        }
        MPI_Send(&ok, 1, MPI_INT, peer, TAG_MAPPED, s->pc);
        shm_ring *r = c->base;
        if (ok) c->out = &r[1], c->in = &r[0];
    }
    snprintf(c->name, sizeof c->name, "%s", of.name);
    MPI_Allreduce(&ok, &both, 1, MPI_INT, MPI_MIN, s->pc);
    if (!both) {
        shm_chan_close(c);
        if (!c->why[0]) snprintf(c->why, sizeof c->why, "the partner could not set up the shared segment");
        return c->why;
    }
    c->sent = c->freed_seen = c->out_recs = c->taken = c->in_recs = 0;
    c->in_off = 0;
    return NULL;
}

void shm_chan_close(shm_chan *c)
{
    if (c->base) munmap(c->base, c->len);
    c->base = NULL;
}

void shm_chan_send(const series *s, shm_chan *c, const void *p, size_t n)
{
    const unsigned char *src = p;
    shm_ring *r = c->out;
    unsigned spins = 0;
    while (n) {
        size_t k = n < REC_PAYLOAD_MAX ? n : REC_PAYLOAD_MAX, need = rec_bytes(k);
        size_t to_end = RING_BYTES - (size_t)(c->sent % RING_BYTES);
        size_t want = need <= to_end ? need : to_end + need;
        if (RING_BYTES - (c->sent - c->freed_seen) < want) {
            c->freed_seen = atomic_load_explicit(&r->freed, memory_order_acquire);
            if (RING_BYTES - (c->sent - c->freed_seen) < want) {
                loggp_relax(s, &spins);
                continue;
            }
        }
        if (need > to_end) { /* the record does not fit before the end: mark the rest skipped */
            shm_rec *w = rec_at(r, c->sent);
            w->len = 0;
            w->wrap = 1;
            atomic_store_explicit(&w->seq, seq_of(c->out_recs++), memory_order_release);
            c->sent += to_end;
        }
        shm_rec *w = rec_at(r, c->sent);
        memcpy(w->data, src, k);
        w->len = (uint32_t)k;
        w->wrap = 0;
        atomic_store_explicit(&w->seq, seq_of(c->out_recs++), memory_order_release);
        c->sent += need;
        src += k;
        n -= k;
        spins = 0;
    }
}

void shm_chan_recv(const series *s, shm_chan *c, void *p, size_t n)
{
    unsigned char *dst = p;
    shm_ring *r = c->in;
    unsigned spins = 0;
    while (n) {
        shm_rec *w = rec_at(r, c->taken);
        if (atomic_load_explicit(&w->seq, memory_order_acquire) != seq_of(c->in_recs)) {
            loggp_relax(s, &spins);
            continue;
        }
        if (w->wrap) {
            c->taken += RING_BYTES - (size_t)(c->taken % RING_BYTES);
        } else {
            size_t k = w->len - c->in_off;
            if (k > n) k = n;
            memcpy(dst, w->data + c->in_off, k);
            c->in_off += k;
            dst += k;
            n -= k;
            if (c->in_off < w->len) continue;
            c->in_off = 0;
            c->taken += rec_bytes(w->len);
        }
        c->in_recs++;
        atomic_store_explicit(&r->freed, c->taken, memory_order_release);
        spins = 0;
    }
}
