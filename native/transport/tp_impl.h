/* SPDX-License-Identifier: BSD-3-Clause */
/* Inside the transport designs: the shared segments, the record queue and
 * what each design adds. A process owns one segment per pair: its inbound
 * queue (written by the peer, first touched here: the receiver's memory),
 * its send pool (written here, read by the peer), and the counters it
 * writes as a receiver. Each side only writes its own counters. */
#ifndef MPISCOPE_TP_IMPL_H
#define MPISCOPE_TP_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "tp.h"

enum {
    TP_QUEUE_BYTES = 1 << 20,     /* inbound queue of records */
    TP_RECORD_MAX = 64 * 1024,    /* payload of one inline record: large messages pipeline */
    TP_LINE = 64,
    TP_CHUNK = 32 * 1024,         /* advanced: one pool buffer */
    TP_CHUNKS = 32,               /* advanced: buffers in the sender's pool (1 MiB) */
    TP_ADV_EAGER = 8 * 1024,      /* advanced: inline in the queue up to here */
};

/* What a record carries: payload inline, nothing (skip to the queue's
 * start), a chunk of the sender's pool, or a cma descriptor. */
enum { REC_DATA = 1, REC_WRAP, REC_CHUNK, REC_CMA };

typedef struct tp_record {
    _Atomic uint64_t seq; /* SEQ_TAG | (k + 1) once the k-th record is written */
    uint32_t len;         /* payload bytes (DATA), bytes in the chunk (CHUNK), message bytes (CMA) */
    uint32_t kind;
    unsigned char data[]; /* DATA: payload; CHUNK: uint32 slot; CMA: uint64 address */
} tp_record;

typedef struct tp_segment {
    _Alignas(64) _Atomic uint64_t freed;        /* queue bytes this receiver has finished */
    _Alignas(64) _Atomic uint64_t waiting;      /* 1 + the record this receiver waits for; 0: none */
    _Alignas(64) _Atomic uint64_t chunks_freed; /* the peer's pool chunks this receiver finished */
    _Alignas(64) _Atomic uint64_t cma_done;     /* cma pulls this receiver finished */
    _Alignas(4096) unsigned char queue[TP_QUEUE_BYTES];
    _Alignas(4096) unsigned char pool[TP_CHUNKS][TP_CHUNK];
} tp_segment;

/* The offload helper: one request at a time (tp_isend, tp_wait). */
typedef struct tp_offload {
    pthread_t thread;
    int started, cpu;
    unsigned char caller_mask[128]; /* the rank's cpu_set_t, put back at stop should anything have changed it */
    _Atomic int stop;
    _Atomic uint64_t posted, done; /* requests */
    const void *buf;
    size_t n;
} tp_offload;

struct tp_pair {
    tp_design design;
    tp_segment *mine, *peer;
    pid_t peer_pid;
    int yield; /* more processes than CPUs: a waiting process yields */
    tp_class cls;
    int cpu, peer_cpu;
    tp_thresholds th;
    char no_cma[300]; /* hybrid: why it runs without cma */
    /* producer of the peer's queue */
    uint64_t sent, freed_seen, out_recs, chunks_used, chunks_freed_seen, cma_sent;
    /* consumer of my queue */
    uint64_t taken, in_recs, peer_chunks_taken;
    tp_offload off;
};

/* ring.c: the record queue */
tp_record *tp_reserve(tp_pair *p, size_t payload);   /* waits for room; handles the wrap */
void tp_publish(tp_pair *p, tp_record *r, uint32_t kind, uint32_t len, size_t payload);
tp_record *tp_next_record(tp_pair *p);              /* waits for the next inbound record */
int tp_ready(tp_pair *p);                           /* whether one is there (no wait) */
void tp_release_record(tp_pair *p, tp_record *r);
void tp_relax(const tp_pair *p, unsigned *spins);

/* One send per design (basic.c, advanced.c, cma.c); the receive handles every kind. */
void tp_basic_send(tp_pair *p, const void *buf, size_t n);
void tp_advanced_send(tp_pair *p, const void *buf, size_t n);
void tp_cma_send(tp_pair *p, const void *buf, size_t n);
void tp_hybrid_send(tp_pair *p, const void *buf, size_t n);
int tp_hybrid_asks(const tp_pair *p, size_t n); /* whether the receiver's arrival decides (hybrid.c) */
void tp_chunk_recv(tp_pair *p, tp_record *r, unsigned char *dst);
void tp_cma_recv(tp_pair *p, tp_record *r, unsigned char *dst);

/* cma.c: whether process_vm_readv reads the peer (collective on comm). */
int tp_cma_check(tp_pair *p, MPI_Comm comm, char *why, size_t n);
/* cma_probe.c: why process_vm_readv failed with `err` (0: wrong bytes), and
 * the facts that decide it, as a sentence. */
void tp_cma_explain(int err, char *out, size_t n);
/* Test hook (docs/reference/test-hooks.md): MPISCOPE_TEST_CMA_ERRNO=EPERM|EACCES|ENOSYS
 * makes every process_vm_readv fail so, as a locked-down system would; 0: off. */
int tp_cma_test_errno(void);

/* offload.c */
int tp_offload_start(tp_pair *p, char *why, size_t n);
void tp_offload_stop(tp_pair *p);
void tp_offload_isend(tp_pair *p, const void *buf, size_t n);
void tp_offload_wait(tp_pair *p);

/* placement.c: the calling thread's CPU mask as a list ("0-1,4"); the process's threads. */
void tp_own_cpus(char *out, size_t n);
int tp_thread_count(void);

#endif
