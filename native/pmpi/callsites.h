/* SPDX-License-Identifier: BSD-3-Clause */
/* Call sites: per (call, return address), the calls, bytes and ticks. */
#ifndef PMPI_CALLSITES_H
#define PMPI_CALLSITES_H

#include <stdint.h>

#define NSITES 4096 /* distinct (call, site) pairs kept; the rest are counted as dropped */

typedef struct site_entry {
    uint64_t key;  /* address << 8 | call + 1; 0: free */
    uint64_t count, bytes, ticks;
} site_entry;

extern site_entry prof_sites[NSITES];
extern uint64_t prof_sites_dropped;

#endif
