/* SPDX-License-Identifier: BSD-3-Clause */
/* offload (the I/OAT idea without the DMA engine): a helper thread, pinned
 * to another CPU, does the sender's copy into the receiver's queue while the
 * sender's own thread computes. Idle, the helper sleeps on a futex, so it
 * costs no CPU between messages; tp_offload_wait spins for the result. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tp_impl.h"

/* On the low half of the 64-bit counter (little-endian): what changes. A
 * millisecond's timeout bounds what a wake missed at stop can cost. */
static void futex(_Atomic uint64_t *word, int op, uint32_t val)
{
    struct timespec ms = {0, 1000000};
    syscall(SYS_futex, (uint32_t *)word, op, val, op == FUTEX_WAIT_PRIVATE ? &ms : NULL, NULL, 0);
}

static void *helper(void *arg)
{
    tp_pair *p = arg;
    tp_offload *o = &p->off;
    uint64_t seen = 0;
    for (;;) {
        unsigned spins = 0;
        uint64_t posted;
        while ((posted = atomic_load_explicit(&o->posted, memory_order_acquire)) == seen) {
            if (atomic_load_explicit(&o->stop, memory_order_acquire)) return NULL;
            if (++spins > 2000) futex(&o->posted, FUTEX_WAIT_PRIVATE, (uint32_t)seen), spins = 0;
        }
        tp_basic_send(p, o->buf, o->n);
        seen = posted;
        atomic_store_explicit(&o->done, seen, memory_order_release);
    }
}

/* Another CPU than this process's own, the peer's if there is no third. */
static int other_cpu(const tp_pair *p)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < cpus; c++)
        if (c != p->cpu && c != p->peer_cpu) return c;
    for (int c = 0; c < cpus; c++)
        if (c != p->cpu) return c;
    return p->cpu;
}

_Static_assert(sizeof(cpu_set_t) <= sizeof(((tp_offload *)0)->caller_mask), "cpu_set_t fits");

/* The helper is born pinned (thread attribute): it never runs on the rank's
 * CPU, and nothing but the helper's own mask is ever set. */
int tp_offload_start(tp_pair *p, char *why, size_t n)
{
    tp_offload *o = &p->off;
    o->cpu = other_cpu(p);
    cpu_set_t set, *mine = (cpu_set_t *)o->caller_mask;
    CPU_ZERO(mine);
    sched_getaffinity(0, sizeof *mine, mine);
    CPU_ZERO(&set);
    CPU_SET(o->cpu, &set);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    int err = pthread_create(&o->thread, &attr, helper, p);
    if (err == EINVAL) err = pthread_create(&o->thread, NULL, helper, p); /* a cpuset forbids that CPU: unpinned */
    pthread_attr_destroy(&attr);
    if (err) return snprintf(why, n, "cannot start the offload thread: %s", strerror(err)), 0;
    o->started = 1;
    return 1;
}

/* The helper is joined (gone, not parked), and the rank leaves with the CPU
 * mask it came with, whatever ran meanwhile: the next series finds the
 * process as the previous design found it (tests/mpi/test_transport.py). */
void tp_offload_stop(tp_pair *p)
{
    tp_offload *o = &p->off;
    if (!o->started) return;
    atomic_store_explicit(&o->stop, 1, memory_order_release);
    atomic_fetch_add_explicit(&o->posted, 0, memory_order_release);
    futex(&o->posted, FUTEX_WAKE_PRIVATE, 1);
    pthread_join(o->thread, NULL);
    o->started = 0;
    cpu_set_t now, *mine = (cpu_set_t *)o->caller_mask;
    if (!sched_getaffinity(0, sizeof now, &now) && !CPU_EQUAL(&now, mine)) sched_setaffinity(0, sizeof *mine, mine);
}

void tp_offload_isend(tp_pair *p, const void *buf, size_t n)
{
    tp_offload *o = &p->off;
    o->buf = buf;
    o->n = n;
    atomic_fetch_add_explicit(&o->posted, 1, memory_order_release);
    futex(&o->posted, FUTEX_WAKE_PRIVATE, 1);
}

void tp_offload_wait(tp_pair *p)
{
    tp_offload *o = &p->off;
    uint64_t want = atomic_load_explicit(&o->posted, memory_order_relaxed);
    unsigned spins = 0;
    while (atomic_load_explicit(&o->done, memory_order_acquire) < want) tp_relax(p, &spins);
}
