/* SPDX-License-Identifier: BSD-3-Clause */
/* Call sites: the return address of every wrapped call, kept in a fixed
 * open-addressing table (a slot is claimed with one compare-and-swap; no
 * lock). Addresses are symbolized after the run (mpiscope reads the
 * modules' load addresses the writer saves). */
#include "callsites.h"
#include "prof.h"

site_entry prof_sites[NSITES];
uint64_t prof_sites_dropped;

void callsite_add(int call, void *site, uint64_t bytes, uint64_t ticks)
{
    uint64_t key = ((uint64_t)(uintptr_t)site << 8) | (uint64_t)(call + 1);
    unsigned s = (unsigned)((key * 0x9e3779b97f4a7c15ULL) >> 52) % NSITES;
    for (unsigned i = 0; i < 16; i++) { /* a short probe: a full table drops, never stalls */
        site_entry *e = &prof_sites[(s + i) % NSITES];
        uint64_t k = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
        if (k == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&e->key, &expected, key, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                k = key;
            else
                k = expected;
        }
        if (k == key) {
            prof_add(&e->count, 1);
            prof_add(&e->bytes, bytes);
            prof_add(&e->ticks, ticks);
            return;
        }
    }
    prof_add(&prof_sites_dropped, 1);
}
