/* SPDX-License-Identifier: BSD-3-Clause */
/* The intra-node transport lab (after Chai 2009): one interface, several
 * designs of a channel between two processes of one node. MPI only exchanges
 * process ids and segment names (tp_open); the data path is plain shared
 * memory, process_vm_readv or a helper thread.
 *
 *   basic     per-pair ring in the receiver's memory: copy in, copy out
 *   advanced  per-receiver queue of small messages, large ones in chunks
 *             through the sender's own pool of buffers (pipelined)
 *   cma       the receiver pulls the sender's buffer with process_vm_readv
 *             after a descriptor crossed the queue: one copy
 *   offload   basic, but a helper thread on another core copies in, so the
 *             sender's thread computes meanwhile (tp_isend + tp_wait)
 *   hybrid    per message one of basic, advanced, cma, by thresholds that
 *             depend on the pair's placement class and on whether the
 *             receiver is already waiting
 *
 * Every receive understands every record kind, so a hybrid sender may mix
 * them; sends and receives are blocking, message sizes agree on both sides. */
#ifndef MPISCOPE_TP_H
#define MPISCOPE_TP_H

#include <mpi.h>
#include <stddef.h>

typedef enum { TP_BASIC, TP_ADVANCED, TP_CMA, TP_OFFLOAD, TP_HYBRID, TP_DESIGNS } tp_design;

/* Placement of a pair's two CPUs, nearest first (sysfs topology). */
typedef enum {
    TP_SAME_CPU, TP_SMT, TP_L2, TP_L3, TP_SOCKET, TP_REMOTE, TP_UNKNOWN, TP_CLASSES
} tp_class;

/* The hybrid's thresholds for one placement class: messages up to basic_max
 * go through the basic ring, from cma_min (cma_min_late when the receiver is
 * not yet waiting) by cma, the rest through the advanced pool. */
typedef struct tp_thresholds {
    size_t basic_max, cma_min, cma_min_late;
} tp_thresholds;

typedef struct tp_pair tp_pair;

const char *tp_design_name(tp_design d);
const char *tp_class_name(tp_class c);

/* Collective over `comm` (the two processes): maps both segments and, for
 * cma and hybrid, checks that process_vm_readv works between the two.
 * Returns the pair, or NULL with the reason in `why` (the same on both). */
tp_pair *tp_open(tp_design d, MPI_Comm comm, int yield_when_waiting, char *why, size_t n);
void tp_close(tp_pair *p);

void tp_send(tp_pair *p, const void *buf, size_t n);
void tp_recv(tp_pair *p, void *buf, size_t n);
/* A send that may proceed while the caller computes (offload); the others
 * complete it at once. Then tp_wait before the buffer is reused. */
void tp_isend(tp_pair *p, const void *buf, size_t n);
void tp_wait(tp_pair *p);

/* What a pair is: its design's parameters (-1: not this design's), the
 * placement, the hybrid's thresholds (SIZE_MAX: never; 0: not hybrid). */
typedef struct tp_info {
    const char *design, *placement, *no_cma; /* no_cma: why a hybrid runs without cma, or NULL */
    int cpu, peer_cpu, helper_cpu;
    long queue_bytes, record_max, chunk, chunks, eager;
    size_t basic_max, cma_min, cma_min_late;
    /* The process as the pair found it: the calling thread's CPU mask (a
     * list such as "0-1") and the process's threads, so a series can show
     * that an earlier one's helper thread left nothing behind. */
    char rank_cpus[128];
    int threads;
} tp_info;
tp_info tp_describe(const tp_pair *p);
/* The hybrid's thresholds for a class (defaults, or MPISCOPE_TP_THRESHOLDS). */
tp_thresholds tp_hybrid_thresholds(tp_class c);

/* Polling two channels (poll.c): the pair's queue (0) and a loopback UDP
 * socket (1); messages on the socket are at most TP_POLL_MAX_BYTES. The
 * receive polls both, statically or adaptively; returns the channel. */
enum { TP_POLL_MAX_BYTES = 32 * 1024, TP_POLL_SKIP_MAX = 64 /* adaptive: rounds between polls of an idle channel, at most */ };
typedef struct tp_poller tp_poller;
tp_poller *tp_poll_open(tp_pair *p, MPI_Comm comm, char *why, size_t n);
void tp_poll_close(tp_poller *q);
void tp_poll_send(tp_poller *q, int channel, const void *buf, size_t n);
int tp_poll_recv(tp_poller *q, int adaptive, void *buf, size_t n);

/* Placement (placement.c): the class of two CPUs; this process's CPU. */
tp_class tp_classify(int cpu_a, int cpu_b);
int tp_current_cpu(void);
/* The classes this machine offers, one pair of CPUs each, as JSON. */
void tp_classes_json(char *out, size_t n);

/* Whether process_vm_readv can work here, and if not exactly why: forks a
 * child that reads its parent (as an MPI peer would: not a descendant).
 * Writes a JSON object to `out`. Returns 1 when it works. */
int tp_cma_probe_json(char *out, size_t n);

#endif
