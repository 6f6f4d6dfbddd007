/* SPDX-License-Identifier: BSD-3-Clause */
/* The TCP channel of the layer benchmarks: rank 1 listens on all its
 * interfaces (an ephemeral port) and sends its IPv4 addresses through MPI;
 * rank 0 connects to 127.0.0.1 when both share a host, otherwise to the
 * first of rank 1's other addresses that answers. TCP_NODELAY; receives poll
 * (as MPI libraries do) instead of sleeping in the kernel. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "layers.h"
#include "loggp.h"

enum { TAG_OFFER = 43, TAG_ANSWER = 44, CONNECT_TIMEOUT_MS = 2000, ACCEPT_TIMEOUT_MS = 10000 };

typedef struct offer {
    int ok, port;
    char addrs[512]; /* comma list, loopback last */
    char why[160];
} offer;

typedef struct answer {
    int ok;
    char address[64];
    char why[160];
} answer;

static void address_list(char *out, size_t n)
{
    struct ifaddrs *all, *a;
    size_t used = 0;
    out[0] = 0;
    if (getifaddrs(&all)) return;
    for (int loopback = 0; loopback < 2; loopback++)
        for (a = all; a; a = a->ifa_next) {
            if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
            struct in_addr in = ((struct sockaddr_in *)a->ifa_addr)->sin_addr;
            int is_lo = (ntohl(in.s_addr) >> 24) == 127;
            if (is_lo != loopback) continue;
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &in, ip, sizeof ip);
            if (used + strlen(ip) + 2 < n) used += (size_t)snprintf(out + used, n - used, "%s%s", used ? "," : "", ip);
        }
    freeifaddrs(all);
}

/* A connected blocking socket, or -1 with errno set. */
static int connect_to(const char *ip, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) return errno = EINVAL, -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    if (rc && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        rc = poll(&p, 1, CONNECT_TIMEOUT_MS);
        int err = 0;
        socklen_t len = sizeof err;
        if (rc == 1 && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) && !err) rc = 0;
        else errno = rc == 0 ? ETIMEDOUT : (err ? err : errno), rc = -1;
    }
    if (rc) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    fcntl(fd, F_SETFL, flags);
    return fd;
}

static void listen_offer(offer *of, int *lfd)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY), .sin_port = 0};
    socklen_t len = sizeof sa;
    int one = 1;
    *lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (*lfd < 0 || setsockopt(*lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(*lfd, (struct sockaddr *)&sa, sizeof sa) || listen(*lfd, 4) ||
        getsockname(*lfd, (struct sockaddr *)&sa, &len)) {
        snprintf(of->why, sizeof of->why, "cannot listen on a TCP port: %s", strerror(errno));
        return;
    }
    of->ok = 1;
    of->port = ntohs(sa.sin_port);
    address_list(of->addrs, sizeof of->addrs);
}

static void try_connect(tcp_chan *c, const offer *of, int same_host, answer *an)
{
    char list[600], *save = NULL;
    snprintf(list, sizeof list, "%s%s%s", same_host ? "127.0.0.1," : "", of->addrs, "");
    int last_err = 0;
    for (char *ip = strtok_r(list, ",", &save); ip; ip = strtok_r(NULL, ",", &save)) {
        if (!same_host && !strncmp(ip, "127.", 4)) continue;
        c->fd = connect_to(ip, of->port);
        if (c->fd >= 0) {
            an->ok = 1;
            snprintf(an->address, sizeof an->address, "%s", ip);
            return;
        }
        last_err = errno;
    }
    snprintf(an->why, sizeof an->why, "cannot connect to the partner's port %d at %.60s: %.40s", of->port,
             of->addrs[0] ? of->addrs : "(no IPv4 address)", last_err ? strerror(last_err) : "no usable address");
}

const char *tcp_chan_open(tcp_chan *c, const series *s)
{
    c->fd = -1;
    c->why[0] = 0;
    int same = loggp_same_host(s, NULL, 0), peer = loggp_pc_peer(s);
    offer of = {0};
    answer an = {0};
    if (s->role == ROLE_RESPONDER) {
        int lfd = -1;
        listen_offer(&of, &lfd);
        MPI_Send(&of, sizeof of, MPI_BYTE, peer, TAG_OFFER, s->pc);
        MPI_Recv(&an, sizeof an, MPI_BYTE, peer, TAG_ANSWER, s->pc, MPI_STATUS_IGNORE);
        if (an.ok) {
            struct pollfd p = {.fd = lfd, .events = POLLIN};
            struct sockaddr_in from;
            socklen_t len = sizeof from;
            if (poll(&p, 1, ACCEPT_TIMEOUT_MS) == 1) c->fd = accept(lfd, (struct sockaddr *)&from, &len);
            if (c->fd >= 0) inet_ntop(AF_INET, &from.sin_addr, c->address, sizeof c->address);
            else snprintf(c->why, sizeof c->why, "the partner connected but accept failed: %s", strerror(errno));
        } else {
            snprintf(c->why, sizeof c->why, "%s", an.why);
        }
        if (lfd >= 0) close(lfd);
        c->port = of.port;
    } else {
        MPI_Recv(&of, sizeof of, MPI_BYTE, peer, TAG_OFFER, s->pc, MPI_STATUS_IGNORE);
        if (of.ok) try_connect(c, &of, same, &an);
        else snprintf(an.why, sizeof an.why, "partner: %.140s", of.why);
        MPI_Send(&an, sizeof an, MPI_BYTE, peer, TAG_ANSWER, s->pc);
        if (an.ok) snprintf(c->address, sizeof c->address, "%s", an.address);
        else snprintf(c->why, sizeof c->why, "%s", an.why);
        c->port = of.port;
    }
    int ok = c->fd >= 0, both;
    MPI_Allreduce(&ok, &both, 1, MPI_INT, MPI_MIN, s->pc);
    if (!both) {
        tcp_chan_close(c);
        if (!c->why[0]) snprintf(c->why, sizeof c->why, "the partner could not set up the TCP connection");
        return c->why;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return NULL;
}

void tcp_chan_close(tcp_chan *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

static void broken(const series *s, const char *what)
{
    fprintf(stderr, "mpiscope-engine: rank %d: TCP channel: %s: %s\n", s->rank, what, strerror(errno));
    fflush(stderr);
    MPI_Abort(s->world, 4);
}

void tcp_chan_send(const series *s, tcp_chan *c, const void *p, size_t n)
{
    const char *q = p;
    while (n) {
        ssize_t k = send(c->fd, q, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            broken(s, "send");
        }
        q += k;
        n -= (size_t)k;
    }
}

void tcp_chan_recv(const series *s, tcp_chan *c, void *p, size_t n)
{
    char *q = p;
    unsigned spins = 0;
    while (n) {
        ssize_t k = recv(c->fd, q, n, MSG_DONTWAIT);
        if (k > 0) {
            q += k;
            n -= (size_t)k;
            spins = 0;
        } else if (k == 0) {
            errno = ECONNRESET;
            broken(s, "the partner closed the connection");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            loggp_relax(s, &spins);
        } else {
            broken(s, "recv");
        }
    }
}
