/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point wrappers: blocking, non-blocking and persistent sends and
 * receives, sendrecv, probes. Sends are counted when posted; receives when
 * complete (then the source and size are known). */
#include "requests.h"
#include "wrap.h"

static inline void sent(int call, MPI_Comm comm, int dest, uint64_t bytes, uint64_t t0, uint64_t t1,
                        void *site)
{
    comm_info *c = comm_lookup(comm);
    prof_record(call, c, dest, comm_channel(c, dest), bytes, t0, t1, site);
    peers_sent(c, dest, bytes);
}

static inline void received(int call, MPI_Comm comm, const MPI_Status *st, uint64_t t0, uint64_t t1,
                            void *site)
{
    comm_info *c = comm_lookup(comm);
    int bytes = 0, src = st->MPI_SOURCE;
    if (src == MPI_PROC_NULL) {
        prof_record(call, c, -1, CH_NONE, 0, t0, t1, site);
        return;
    }
    PMPI_Get_count(st, MPI_BYTE, &bytes);
    if (bytes == MPI_UNDEFINED) bytes = 0;
    prof_record(call, c, src, comm_channel(c, src), (uint64_t)bytes, t0, t1, site);
    peers_received(c, src, (uint64_t)bytes);
}

#define BLOCKING_SEND(NAME)                                                                     \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
    {                                                                                           \
        PASS_IF_OFF(PMPI_##NAME(buf, count, type, dest, tag, comm));                            \
        TIMED(PMPI_##NAME(buf, count, type, dest, tag, comm));                                  \
        sent(CALL_##NAME, comm, dest, type_bytes(count, type), t0, t1, SITE);                   \
        return rc;                                                                              \
    }
BLOCKING_SEND(Send)
BLOCKING_SEND(Bsend)
BLOCKING_SEND(Ssend)
BLOCKING_SEND(Rsend)

#define NONBLOCKING_SEND(NAME)                                                                  \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
                   MPI_Request *req)                                                            \
    {                                                                                           \
        PASS_IF_OFF(PMPI_##NAME(buf, count, type, dest, tag, comm, req));                       \
        TIMED(PMPI_##NAME(buf, count, type, dest, tag, comm, req));                             \
        sent(CALL_##NAME, comm, dest, type_bytes(count, type), t0, t1, SITE);                   \
        return rc;                                                                              \
    }
NONBLOCKING_SEND(Isend)
NONBLOCKING_SEND(Ibsend)
NONBLOCKING_SEND(Issend)
NONBLOCKING_SEND(Irsend)

/* Persistent sends: set up here (counted with no bytes), each message counted by MPI_Start. */
#define PERSISTENT_SEND(NAME)                                                                   \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
                   MPI_Request *req)                                                            \
    {                                                                                           \
        PASS_IF_OFF(PMPI_##NAME(buf, count, type, dest, tag, comm, req));                       \
        TIMED(PMPI_##NAME(buf, count, type, dest, tag, comm, req));                             \
        comm_info *c = comm_lookup(comm);                                                       \
        prof_record(CALL_##NAME, c, -1, CH_NONE, 0, t0, t1, SITE);                              \
        if (rc == MPI_SUCCESS)                                                                  \
            req_track(*req, (req_entry){.call = CALL_##NAME, .persistent = 1, .peer = dest,     \
                                        .bytes = type_bytes(count, type), .comm = c, .site = SITE}); \
        return rc;                                                                              \
    }
PERSISTENT_SEND(Send_init)
PERSISTENT_SEND(Bsend_init)
PERSISTENT_SEND(Ssend_init)
PERSISTENT_SEND(Rsend_init)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Recv_init(buf, count, type, source, tag, comm, req));
    TIMED(PMPI_Recv_init(buf, count, type, source, tag, comm, req));
    if (rc == MPI_SUCCESS)
        req_track(*req, (req_entry){.call = CALL_Recv_init, .recv = 1, .persistent = 1,
                                    .comm = comm_lookup(comm), .site = SITE, .t0 = t0, .t1 = t1});
    return rc;
}

/* One started request: a persistent send is one message of MPI_Start(all). */
static void started(int call, MPI_Request req, uint64_t t0, uint64_t t1, void *site)
{
    req_entry *e = prof_tracked ? req_find(req) : NULL;
    if (e && !e->recv) {
        prof_record(call, e->comm, e->peer, comm_channel(e->comm, e->peer), e->bytes, t0, t1, site);
        peers_sent(e->comm, e->peer, e->bytes);
    } else {
        prof_record(call, NULL, -1, CH_NONE, 0, t0, t1, site);
    }
}

int MPI_Start(MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Start(req));
    TIMED(PMPI_Start(req));
    started(CALL_Start, *req, t0, t1, SITE);
    return rc;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    PASS_IF_OFF(PMPI_Startall(n, reqs));
    TIMED(PMPI_Startall(n, reqs));
    for (int i = 0; i < n; i++) /* the call's time goes with its first request */
        started(CALL_Startall, reqs[i], i ? t1 : t0, t1, SITE);
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Recv(buf, count, type, source, tag, comm, status));
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    TIMED(PMPI_Recv(buf, count, type, source, tag, comm, st));
    if (rc == MPI_SUCCESS) received(CALL_Recv, comm, st, t0, t1, SITE);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Irecv(buf, count, type, source, tag, comm, req));
    TIMED(PMPI_Irecv(buf, count, type, source, tag, comm, req));
    if (rc != MPI_SUCCESS) return rc;
    comm_info *c = comm_lookup(comm);
    if (source == MPI_PROC_NULL) prof_record(CALL_Irecv, c, -1, CH_NONE, 0, t0, t1, SITE);
    else req_track(*req, (req_entry){.call = CALL_Irecv, .recv = 1, .comm = c, .site = SITE,
                                     .t0 = t0, .t1 = t1});
    return rc;
}

/* A sendrecv: one row, the message sent; the message received goes to the
 * peer matrix (and to the trace as its own event). */
static void exchanged(int call, MPI_Comm comm, int dest, uint64_t bytes, const MPI_Status *st, uint64_t t0,
                      uint64_t t1, void *site)
{
    comm_info *c = comm_lookup(comm);
    prof_record(call, c, dest, comm_channel(c, dest), bytes, t0, t1, site);
    peers_sent(c, dest, bytes);
    if (st->MPI_SOURCE == MPI_PROC_NULL) return;
    int got = 0;
    PMPI_Get_count(st, MPI_BYTE, &got);
    uint64_t received = got == MPI_UNDEFINED ? 0 : (uint64_t)got;
    peers_received(c, st->MPI_SOURCE, received);
    if (prof.tracing)
        trace_add(CALL_Sendrecv_received, comm_world_rank(c, st->MPI_SOURCE), c ? c->size : 0,
                  c ? c->members : -1, received, t0, t1);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                              status));
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    TIMED(PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st));
    if (rc == MPI_SUCCESS) exchanged(CALL_Sendrecv, comm, dest, type_bytes(scount, stype), st, t0, t1, SITE);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status));
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    TIMED(PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st));
    if (rc == MPI_SUCCESS) exchanged(CALL_Sendrecv_replace, comm, dest, type_bytes(count, type), st, t0, t1, SITE);
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Probe(source, tag, comm, status));
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    TIMED(PMPI_Probe(source, tag, comm, st));
    comm_info *c = comm_lookup(comm);
    prof_record(CALL_Probe, c, st->MPI_SOURCE, comm_channel(c, st->MPI_SOURCE), 0, t0, t1, SITE);
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Iprobe(source, tag, comm, flag, status));
    MPI_Status mine;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
    TIMED(PMPI_Iprobe(source, tag, comm, flag, st));
    comm_info *c = comm_lookup(comm);
    int src = *flag ? st->MPI_SOURCE : -1;
    prof_record(CALL_Iprobe, c, src, comm_channel(c, src), 0, t0, t1, SITE);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    if (prof.on && prof_tracked) {
        req_entry *e = req_find(*req);
        if (e) req_remove(e);
    }
    return PMPI_Request_free(req);
}
