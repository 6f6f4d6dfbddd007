/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective wrappers, blocking and non-blocking (counted when posted). The
 * size of a collective is what a tuner keys on
 * (docs/reference/formats/weights.md):
 * the buffer of rooted and reducing collectives (count × type), one rank's
 * block of gathers, scatters, allgather and alltoall, the whole vector of
 * the v-variants and reduce_scatter. The channel is the widest the
 * communicator spans. */
#include "libview.h"
#include "wrap.h"

/* TIMED, inside the library view's attribution of messages to this call. */
#define COLL_TIMED(id, comm, call) libview_enter(id, comm); TIMED(call); libview_leave()

/* `root`: of a rooted collective (the trace keeps it), else -1. */
static inline void coll(int call, MPI_Comm comm, int root, uint64_t bytes, uint64_t t0, uint64_t t1, void *site)
{
    comm_info *c = comm_lookup(comm);
    prof_record(call, c, root, c ? c->span : CH_NONE, bytes, t0, t1, site);
}

static uint64_t sum_bytes(const int counts[], int n, MPI_Datatype type)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += type_bytes(counts[i], type);
    return total;
}

static int comm_size(MPI_Comm comm)
{
    int n = 0, inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) PMPI_Comm_remote_size(comm, &n);
    else PMPI_Comm_size(comm, &n);
    return n;
}

/* One rank's block: the send side, or the receive side when the send buffer is MPI_IN_PLACE. */
#define BLOCK(sbuf, scount, stype, rcount, rtype) \
    ((sbuf) == MPI_IN_PLACE ? type_bytes(rcount, rtype) : type_bytes(scount, stype))

int MPI_Barrier(MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Barrier(comm));
    COLL_TIMED(CALL_Barrier, comm, PMPI_Barrier(comm));
    coll(CALL_Barrier, comm, -1, 0, t0, t1, SITE);
    return rc;
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Ibarrier(comm, req));
    COLL_TIMED(CALL_Ibarrier, comm, PMPI_Ibarrier(comm, req));
    coll(CALL_Ibarrier, comm, -1, 0, t0, t1, SITE);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Bcast(buf, count, type, root, comm));
    COLL_TIMED(CALL_Bcast, comm, PMPI_Bcast(buf, count, type, root, comm));
    coll(CALL_Bcast, comm, root, type_bytes(count, type), t0, t1, SITE);
    return rc;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Ibcast(buf, count, type, root, comm, req));
    COLL_TIMED(CALL_Ibcast, comm, PMPI_Ibcast(buf, count, type, root, comm, req));
    coll(CALL_Ibcast, comm, root, type_bytes(count, type), t0, t1, SITE);
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm));
    COLL_TIMED(CALL_Reduce, comm, PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm));
    coll(CALL_Reduce, comm, root, type_bytes(count, type), t0, t1, SITE);
    return rc;
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req));
    COLL_TIMED(CALL_Ireduce, comm, PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req));
    coll(CALL_Ireduce, comm, root, type_bytes(count, type), t0, t1, SITE);
    return rc;
}

#define REDUCING(NAME)                                                                          \
    int MPI_##NAME(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) \
    {                                                                                           \
        PASS_IF_OFF(PMPI_##NAME(sbuf, rbuf, count, type, op, comm));                            \
        COLL_TIMED(CALL_##NAME, comm, PMPI_##NAME(sbuf, rbuf, count, type, op, comm));                                  \
        coll(CALL_##NAME, comm, -1, type_bytes(count, type), t0, t1, SITE);                         \
        return rc;                                                                              \
    }
REDUCING(Allreduce)
REDUCING(Scan)
REDUCING(Exscan)

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req));
    COLL_TIMED(CALL_Iallreduce, comm, PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req));
    coll(CALL_Iallreduce, comm, -1, type_bytes(count, type), t0, t1, SITE);
    return rc;
}

/* gather, allgather, alltoall and their non-blocking forms: one rank's block. */
#define BLOCKWISE(NAME, ROOT, ...)                                                                    \
    {                                                                                           \
        PASS_IF_OFF(PMPI_##NAME(__VA_ARGS__));                                                  \
        COLL_TIMED(CALL_##NAME, comm, PMPI_##NAME(__VA_ARGS__));                                                        \
        coll(CALL_##NAME, comm, ROOT, BLOCK(sbuf, scount, stype, rcount, rtype), t0, t1, SITE);       \
        return rc;                                                                              \
    }

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
    BLOCKWISE(Gather, root, sbuf, scount, stype, rbuf, rcount, rtype, root, comm)

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
    BLOCKWISE(Igather, root, sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req)

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
    BLOCKWISE(Allgather, -1, sbuf, scount, stype, rbuf, rcount, rtype, comm)

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
    BLOCKWISE(Iallgather, -1, sbuf, scount, stype, rbuf, rcount, rtype, comm, req)

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
    BLOCKWISE(Alltoall, -1, sbuf, scount, stype, rbuf, rcount, rtype, comm)

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
    BLOCKWISE(Ialltoall, -1, sbuf, scount, stype, rbuf, rcount, rtype, comm, req)

/* scatter: the block each rank receives (the root's send block when it receives in place). */
#define SCATTER_BLOCK(rbuf, rcount, rtype, scount, stype) \
    ((rbuf) == MPI_IN_PLACE ? type_bytes(scount, stype) : type_bytes(rcount, rtype))

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
    COLL_TIMED(CALL_Scatter, comm, PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
    coll(CALL_Scatter, comm, root, SCATTER_BLOCK(rbuf, rcount, rtype, scount, stype), t0, t1, SITE);
    return rc;
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req));
    COLL_TIMED(CALL_Iscatter, comm, PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req));
    coll(CALL_Iscatter, comm, root, SCATTER_BLOCK(rbuf, rcount, rtype, scount, stype), t0, t1, SITE);
    return rc;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
    COLL_TIMED(CALL_Gatherv, comm, PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
    int me;
    PMPI_Comm_rank(comm, &me);
    coll(CALL_Gatherv, comm, root, sbuf == MPI_IN_PLACE ? type_bytes(rcounts[me], rtype) : type_bytes(scount, stype),
         t0, t1, SITE);
    return rc;
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
    COLL_TIMED(CALL_Scatterv, comm, PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
    int me;
    PMPI_Comm_rank(comm, &me);
    coll(CALL_Scatterv, comm, root, rbuf == MPI_IN_PLACE ? type_bytes(scounts[me], stype) : type_bytes(rcount, rtype),
         t0, t1, SITE);
    return rc;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
    COLL_TIMED(CALL_Allgatherv, comm, PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
    coll(CALL_Allgatherv, comm, -1, sum_bytes(rcounts, comm_size(comm), rtype), t0, t1, SITE);
    return rc;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
    COLL_TIMED(CALL_Alltoallv, comm, PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
    coll(CALL_Alltoallv, comm, -1, sbuf == MPI_IN_PLACE ? sum_bytes(rcounts, comm_size(comm), rtype)
                                                    : sum_bytes(scounts, comm_size(comm), stype),
         t0, t1, SITE);
    return rc;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm));
    COLL_TIMED(CALL_Reduce_scatter, comm, PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm));
    coll(CALL_Reduce_scatter, comm, -1, sum_bytes(rcounts, comm_size(comm), type), t0, t1, SITE);
    return rc;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    PASS_IF_OFF(PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm));
    COLL_TIMED(CALL_Reduce_scatter_block, comm, PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm));
    coll(CALL_Reduce_scatter_block, comm, -1, type_bytes(rcount, type), t0, t1, SITE);
    return rc;
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request *req)
{
    PASS_IF_OFF(PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, req));
    COLL_TIMED(CALL_Ireduce_scatter_block, comm, PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, req));
    coll(CALL_Ireduce_scatter_block, comm, -1, type_bytes(rcount, type), t0, t1, SITE);
    return rc;
}
