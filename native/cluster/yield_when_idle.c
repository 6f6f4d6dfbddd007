/* SPDX-License-Identifier: BSD-3-Clause */
/* Preloaded into MPICH ranks when an emulated cluster runs more ranks than
 * there are cores: Open MPI's mpi_yield_when_idle for MPICH's ch4:ucx, which
 * has no such setting. Every rank busy-polls UCX; when a rank and the peer it
 * waits for share a core, each message otherwise waits out the spinning
 * rank's time slice (milliseconds per message, seconds per run, and a run
 * that never ends on a slower machine). A progress call that found nothing
 * gives the core away, so the peer runs at once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    if (!real)
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!real)
        return 0; /* only reached if a caller resolved to us without libucp loaded */
    unsigned events = real(worker);
    if (events == 0)
        sched_yield();
    return events;
}
