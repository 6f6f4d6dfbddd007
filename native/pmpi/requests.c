/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of tracked requests: fixed size, open addressing, a slot claimed
 * by compare-and-swap. A full table drops the receive's accounting and counts
 * the loss (written in the profile), it never blocks. */
#include "requests.h"

#define NREQS 65536
#define REMOVED 1 /* a key no handle has: a slot free again */
#define BUSY 2    /* being filled by another thread */

static req_entry table[NREQS];
int prof_tracked;
static uint64_t dropped;
uint64_t prof_requests_dropped(void) { return dropped; }

static unsigned slot_of(uint64_t key) { return (unsigned)((key * 0x9e3779b97f4a7c15ULL) >> 48) % NREQS; }

void req_track(MPI_Request req, req_entry e)
{
    e.key = handle_key(&req, sizeof req);
    unsigned s = slot_of(e.key);
    for (unsigned i = 0; i < 64; i++) {
        req_entry *x = &table[(s + i) % NREQS];
        uint64_t k = __atomic_load_n(&x->key, __ATOMIC_ACQUIRE);
        if (k > REMOVED) continue;
        if (__atomic_compare_exchange_n(&x->key, &k, BUSY, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            uint64_t key = e.key;
            e.key = BUSY;
            *x = e;  /* filled while marked removed, published with its key */
            __atomic_store_n(&x->key, key, __ATOMIC_RELEASE);
            __atomic_fetch_add(&prof_tracked, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    prof_add(&dropped, 1);
}

req_entry *req_find(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL) return NULL;
    uint64_t key = handle_key(&req, sizeof req);
    unsigned s = slot_of(key);
    for (unsigned i = 0; i < 64; i++) {
        req_entry *x = &table[(s + i) % NREQS];
        if (__atomic_load_n(&x->key, __ATOMIC_ACQUIRE) == key) return x;
    }
    return NULL;
}

void req_remove(req_entry *e)
{
    __atomic_store_n(&e->key, REMOVED, __ATOMIC_RELEASE);
    __atomic_fetch_sub(&prof_tracked, 1, __ATOMIC_RELAXED);
}

void req_completed(req_entry *e, const MPI_Status *status)
{
    if (e->recv) {
        int cancelled = 0, bytes = 0;
        PMPI_Test_cancelled(status, &cancelled);
        if (!cancelled && status->MPI_SOURCE != MPI_PROC_NULL) {
            PMPI_Get_count(status, MPI_BYTE, &bytes);
            if (bytes == MPI_UNDEFINED) bytes = 0;
            int src = status->MPI_SOURCE;
            prof_record(e->call, e->comm, src, comm_channel(e->comm, src), (uint64_t)bytes, e->t0,
                        e->persistent ? e->t0 : e->t1, e->site);
            peers_received(e->comm, src, (uint64_t)bytes);
        }
    }
    if (!e->persistent) req_remove(e);
}
