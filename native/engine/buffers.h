/* SPDX-License-Identifier: BSD-3-Clause */
/* Message buffers: warm (the same memory every repetition) or cold (rotating
 * through a region several times the last-level cache). Send and receive
 * memory never overlap. With `huge`, each region is 2 MiB-aligned and
 * advised for transparent huge pages before its first touch, so a message
 * spans few pages (what process_vm_readv pins page by page); whether the
 * kernel granted them is a request's outcome, read back into huge_kib. */
#ifndef MPISCOPE_BUFFERS_H
#define MPISCOPE_BUFFERS_H

#include <stddef.h>

typedef struct buffers {
    char *send, *recv;
    size_t region; /* bytes in each of send and recv */
    int cold, huge;
    long huge_kib; /* KiB of send and recv backed by huge pages (smaps); -1: unknown */
    size_t map_bytes; /* huge: the mappings' length, for munmap */
    char *send_map, *recv_map;
} buffers;

/* `max_bytes`: the most one repetition touches on one side. Returns 0 or -1. */
int buffers_init(buffers *b, size_t max_bytes, int cold, size_t cold_region, int huge);
void buffers_free(buffers *b);
char *buffers_send(const buffers *b, size_t bytes, long rep);
char *buffers_recv(const buffers *b, size_t bytes, long rep);
size_t last_level_cache_bytes(void);
/* KiB of this process's mapping holding `addr` that are huge pages; -1: unknown. */
long huge_kib_at(const void *addr);
/* The kernel's THP mode (the bracketed word of
 * /sys/kernel/mm/transparent_hugepage/enabled: always, madvise, never), or
 * "absent" without THP. */
const char *thp_mode(char *out, size_t n);

#endif
