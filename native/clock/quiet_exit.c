/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why: MPICH 4.0.x (ch4:ucx) finalizes by closing its UCX endpoints with a
 * flush (ucp_disconnect_nb), progressing only until its own closes complete,
 * and then waits in a PMI barrier without progressing UCX. Over UCX's TCP
 * transport a flush waits for the peer's acknowledgement. If a rank's last
 * MPI call before MPI_Finalize still progressed (and so acknowledged the
 * peer's flush) while the peer was already finalizing, the peer leaves for
 * the PMI barrier before this rank's own flush request arrives: nobody reads
 * it, and this rank spins in MPI_Finalize for ever (most likely when other
 * work shares the CPUs, as on a busy emulated cluster; fixed upstream by
 * pmodels/mpich#6596, "ch4/ucx: remove MPIR_pmi_barrier in finalize"). The
 * race needs some rank to progress MPI after another has started to
 * disconnect. A barrier that does not use MPI, entered after the last MPI
 * call, rules that out: every rank sends its flush requests before any rank
 * progresses again, and in its own flush loop each rank reads the other's
 * request before the acknowledgement it waits for (one TCP stream, in
 * order). Rank 0 listens; the others connect, write one byte and wait for
 * one byte back.
 */
#include "quiet_exit.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#if defined(MPICH_VERSION) && !defined(OPEN_MPI)
#define QUIET_EXIT 1
#else
#define QUIET_EXIT 0
#endif

static struct {
    int on, rank, size, listen_fd;
    char host[256];
    int port;
} Q = {.listen_fd = -1};

void quiet_exit_init(MPI_Comm comm)
{
    if (!QUIET_EXIT) return;
    MPI_Comm_rank(comm, &Q.rank);
    MPI_Comm_size(comm, &Q.size);
    if (Q.size < 2) return;
    int ok = 1;
    if (Q.rank == 0) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        socklen_t len = sizeof a;
        Q.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (Q.listen_fd < 0 || bind(Q.listen_fd, (struct sockaddr *)&a, sizeof a) ||
            listen(Q.listen_fd, Q.size) || getsockname(Q.listen_fd, (struct sockaddr *)&a, &len) ||
            gethostname(Q.host, sizeof Q.host - 1))
            ok = 0;
        Q.port = ntohs(a.sin_port);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    MPI_Bcast(Q.host, sizeof Q.host, MPI_CHAR, 0, comm);
    MPI_Bcast(&Q.port, 1, MPI_INT, 0, comm);
    Q.on = ok;  /* without it, MPI_Finalize runs as before */
}

static int connect_to_root(void)
{
    char port[16];
    snprintf(port, sizeof port, "%d", Q.port);
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(Q.host, port, &hints, &res) || !res) return -1;
    int fd = -1;
    for (int attempt = 0; attempt < 50 && fd < 0; attempt++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen)) {
            close(fd);
            fd = -1;
            usleep(100000);
        }
    }
    freeaddrinfo(res);
    return fd;
}

void quiet_exit_barrier(void)
{
    if (!Q.on) return;
    char b = 1;
    if (Q.rank == 0) {
        int fds[Q.size];
        int n = 0;
        while (n < Q.size - 1) {
            int fd = accept(Q.listen_fd, NULL, NULL);
            if (fd < 0) break;
            if (read(fd, &b, 1) == 1) fds[n++] = fd;
            else close(fd);
        }
        for (int i = 0; i < n; i++) {
            if (write(fds[i], &b, 1) != 1) { /* the peer is gone: nothing to wait for */ }
            close(fds[i]);
        }
        close(Q.listen_fd);
    } else {
        int fd = connect_to_root();
        if (fd < 0) return;
        if (write(fd, &b, 1) == 1 && read(fd, &b, 1) == 1) { /* released */ }
        close(fd);
    }
}
