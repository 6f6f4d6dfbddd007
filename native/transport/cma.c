/* SPDX-License-Identifier: BSD-3-Clause */
/* cma (LiMIC2's single copy without a kernel module): the sender announces
 * its buffer's address in the receiver's queue and waits; the receiver pulls
 * the bytes with process_vm_readv (Cross Memory Attach) straight into its
 * own buffer and counts the pull done. One copy, by the receiver, and the
 * sender cannot leave before the receiver has come. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tp_impl.h"

void tp_cma_send(tp_pair *p, const void *buf, size_t n)
{
    uint64_t addr = (uint64_t)(uintptr_t)buf;
    tp_record *r = tp_reserve(p, sizeof addr);
    memcpy(r->data, &addr, sizeof addr);
    tp_publish(p, r, REC_CMA, (uint32_t)n, sizeof addr);
    uint64_t want = ++p->cma_sent;
    unsigned spins = 0;
    while (atomic_load_explicit(&p->peer->cma_done, memory_order_acquire) < want) tp_relax(p, &spins);
}

/* Reads n bytes at the peer's `addr`; returns 0 or an errno. */
static int pull(pid_t pid, unsigned char *dst, uint64_t addr, size_t n)
{
    static int fake = -1;
    if (fake < 0) fake = tp_cma_test_errno();
    if (fake) return fake;
    while (n) {
        struct iovec local = {dst, n}, remote = {(void *)(uintptr_t)addr, n};
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got <= 0) return got < 0 ? errno : EIO;
        dst += got;
        addr += (uint64_t)got;
        n -= (size_t)got;
    }
    return 0;
}

void tp_cma_recv(tp_pair *p, tp_record *r, unsigned char *dst)
{
    uint64_t addr;
    memcpy(&addr, r->data, sizeof addr);
    int err = pull(p->peer_pid, dst, addr, r->len);
    if (err) {
        fprintf(stderr, "mpiscope-engine: process_vm_readv from pid %d failed: %s\n", (int)p->peer_pid,
                strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 5);
    }
    atomic_store_explicit(&p->mine->cma_done, atomic_load_explicit(&p->mine->cma_done, memory_order_relaxed) + 1,
                          memory_order_release);
}

int tp_cma_check(tp_pair *p, MPI_Comm comm, char *why, size_t n)
{
    /* Yama's ptrace_scope 1 lets only ancestors attach unless we name a
     * tracer: allow any, as Open MPI and MPICH do for CMA. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    unsigned char token[64], got[64];
    for (int i = 0; i < 64; i++) token[i] = (unsigned char)(getpid() * 7 + i);
    uint64_t mine = (uint64_t)(uintptr_t)token, theirs;
    int me;
    MPI_Comm_rank(comm, &me);
    MPI_Sendrecv(&mine, 1, MPI_UINT64_T, 1 - me, 51, &theirs, 1, MPI_UINT64_T, 1 - me, 51, comm, MPI_STATUS_IGNORE);
    int err = pull(p->peer_pid, got, theirs, sizeof got), ok = !err;
    for (int i = 0; ok && i < 64; i++) ok = got[i] == (unsigned char)(p->peer_pid * 7 + i);
    MPI_Barrier(comm); /* the token stays alive until both have read it */
    if (ok) return 1;
    char because[600];
    tp_cma_explain(err, because, sizeof because);
    snprintf(why, n, "cma unavailable: process_vm_readv of pid %d: %s: %s", (int)p->peer_pid,
             err ? strerrorname_np(err) : "EIO", because);
    return 0;
}
