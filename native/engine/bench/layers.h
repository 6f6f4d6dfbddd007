/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain channels between the two ranks of a layer benchmark (layers.c),
 * set up by the engine itself: TCP sockets (addresses exchanged through MPI)
 * and a shared-memory ring pair. Each open is collective on s->pc and
 * returns NULL, or why the channel cannot be used (on both ranks). Sends
 * and receives move exactly n bytes, polling; a broken channel aborts the job. */
#ifndef MPISCOPE_LAYERS_H
#define MPISCOPE_LAYERS_H

#include <stddef.h>
#include <stdint.h>
#include "../bench.h"

typedef struct tcp_chan {
    int fd;
    char address[64]; /* the partner address connected to (rank 0) or accepted from (rank 1) */
    int port;
    char why[160];
} tcp_chan;

const char *tcp_chan_open(tcp_chan *c, const series *s);
void tcp_chan_close(tcp_chan *c);
void tcp_chan_send(const series *s, tcp_chan *c, const void *p, size_t n);
void tcp_chan_recv(const series *s, tcp_chan *c, void *p, size_t n);

/* One direction: a single-producer single-consumer byte ring of records,
 * each a 16-byte header (sequence number, length) and its payload, aligned to
 * cache lines: a small message crosses in one line, consecutive messages in
 * consecutive lines. The producer publishes a record with a release store of
 * its sequence number; the consumer hands bytes back with a release store of
 * its count of finished bytes, which the producer reads (acquire) only when
 * the ring looks full. */
typedef struct shm_ring shm_ring;

typedef struct shm_chan {
    void *base;
    size_t len;
    shm_ring *out, *in;
    uint64_t sent, freed_seen, out_recs; /* producer of `out`: bytes and records written */
    uint64_t taken, in_recs;             /* consumer of `in`: bytes and records finished */
    size_t in_off;                       /* consumer: bytes copied out of the current record */
    char name[64];
    char why[160];
} shm_chan;

const char *shm_chan_open(shm_chan *c, const series *s);
void shm_chan_close(shm_chan *c);
void shm_chan_send(const series *s, shm_chan *c, const void *p, size_t n);
void shm_chan_recv(const series *s, shm_chan *c, void *p, size_t n);
size_t shm_chan_capacity(void);

#endif
