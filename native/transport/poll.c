/* SPDX-License-Identifier: BSD-3-Clause */
/* Polling two channels (Chai (2009), chapter 7): the pair's shared-memory
 * queue and a loopback UDP socket standing in for a network channel, whose
 * poll is a system call as a network poll is costly. A receiver that does not
 * know where the next message comes from polls both: statically (both every
 * round), or adaptively (the socket every `skip` rounds; skip doubles up to
 * TP_POLL_SKIP_MAX while the socket stays empty, and drops to 1 when a
 * message arrives on it). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_impl.h"

struct tp_poller {
    tp_pair *pair;
    int fd;
    unsigned skip, round;
};

tp_poller *tp_poll_open(tp_pair *p, MPI_Comm comm, char *why, size_t n)
{
    tp_poller *q = calloc(1, sizeof *q);
    q->pair = p;
    q->skip = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}, theirs;
    socklen_t len = sizeof a;
    int big = 4 << 20;
    q->fd = socket(AF_INET, SOCK_DGRAM, 0);
    int ok = q->fd >= 0 && !bind(q->fd, (struct sockaddr *)&a, sizeof a) && !getsockname(q->fd, (struct sockaddr *)&a, &len);
    if (ok) setsockopt(q->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (!ok) snprintf(why, n, "cannot open a loopback UDP socket: %s", strerror(errno));
    int me, both;
    MPI_Comm_rank(comm, &me);
    MPI_Sendrecv(&a, sizeof a, MPI_BYTE, 1 - me, 52, &theirs, sizeof theirs, MPI_BYTE, 1 - me, 52, comm, MPI_STATUS_IGNORE);
    if (ok && connect(q->fd, (struct sockaddr *)&theirs, sizeof theirs))
        ok = 0, snprintf(why, n, "cannot connect the UDP socket: %s", strerror(errno));
    MPI_Allreduce(&ok, &both, 1, MPI_INT, MPI_MIN, comm);
    if (!both) {
        if (ok) snprintf(why, n, "the partner could not open its UDP socket");
        tp_poll_close(q);
        return NULL;
    }
    return q;
}

void tp_poll_close(tp_poller *q)
{
    if (!q) return;
    if (q->fd >= 0) close(q->fd);
    free(q);
}

void tp_poll_send(tp_poller *q, int channel, const void *buf, size_t n)
{
    if (channel == 0) {
        tp_basic_send(q->pair, buf, n);
        return;
    }
    char one = 0;
    if (send(q->fd, n ? buf : &one, n ? n : 1, 0) < 0) {
        fprintf(stderr, "mpiscope-engine: send on the polling benchmark's socket: %s\n", strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 5);
    }
}

int tp_poll_recv(tp_poller *q, int adaptive, void *buf, size_t n)
{
    unsigned spins = 0;
    char one;
    for (;;) {
        if (tp_ready(q->pair)) {
            tp_recv(q->pair, buf, n);
            return 0;
        }
        if (!adaptive || ++q->round % q->skip == 0) {
            if (recv(q->fd, n ? buf : &one, n ? n : 1, MSG_DONTWAIT) >= 0) {
                q->skip = 1;
                return 1;
            }
            if (adaptive && q->skip < TP_POLL_SKIP_MAX) q->skip *= 2;
        }
        tp_relax(q->pair, &spins);
    }
}
