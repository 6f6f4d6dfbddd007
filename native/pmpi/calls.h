/* SPDX-License-Identifier: BSD-3-Clause */
/* Every wrapped MPI call, once: X(name, family). The family tells the
 * profile's reader what a row means (docs/reference/formats/run-directory.md):
 * send/recv — point-to-point, bytes of the message, channel of the peer;
 * coll — collective, bytes one rank contributes, channel the communicator spans;
 * rma — one-sided, bytes moved, channel of the target; sync — no message
 * (waits, tests, probes, fences): time only. Sendrecv_received is never
 * counted: the trace's event for the message an MPI_Sendrecv received. */
#ifndef PMPI_CALLS_H
#define PMPI_CALLS_H

#define PROF_CALLS(X) \
    X(Send, send) X(Bsend, send) X(Ssend, send) X(Rsend, send) \
    X(Isend, send) X(Ibsend, send) X(Issend, send) X(Irsend, send) \
    X(Send_init, send) X(Bsend_init, send) X(Ssend_init, send) X(Rsend_init, send) \
    X(Start, send) X(Startall, send) X(Sendrecv, send) X(Sendrecv_replace, send) \
    X(Recv, recv) X(Irecv, recv) X(Recv_init, recv) \
    X(Probe, sync) X(Iprobe, sync) \
    X(Wait, sync) X(Waitall, sync) X(Waitany, sync) X(Waitsome, sync) \
    X(Test, sync) X(Testall, sync) X(Testany, sync) X(Testsome, sync) \
    X(Barrier, coll) X(Bcast, coll) X(Reduce, coll) X(Allreduce, coll) \
    X(Gather, coll) X(Gatherv, coll) X(Scatter, coll) X(Scatterv, coll) \
    X(Allgather, coll) X(Allgatherv, coll) X(Alltoall, coll) X(Alltoallv, coll) \
    X(Reduce_scatter, coll) X(Reduce_scatter_block, coll) X(Scan, coll) X(Exscan, coll) \
    X(Ibarrier, coll) X(Ibcast, coll) X(Ireduce, coll) X(Iallreduce, coll) \
    X(Igather, coll) X(Iscatter, coll) X(Iallgather, coll) X(Ialltoall, coll) \
    X(Ireduce_scatter_block, coll) \
    X(Put, rma) X(Get, rma) X(Accumulate, rma) \
    X(Win_fence, sync) X(Win_lock, sync) X(Win_unlock, sync) X(Win_flush, sync) \
    X(Sendrecv_received, recv)

enum {
#define PROF_ENUM(name, family) CALL_##name,
    PROF_CALLS(PROF_ENUM)
#undef PROF_ENUM
    NCALLS
};

extern const char *const prof_call_names[NCALLS];
extern const char *const prof_call_families[NCALLS];

#endif
