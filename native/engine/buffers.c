/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "buffers.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { HUGE_BYTES = 2 << 20 };

size_t last_level_cache_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l3 > 0) return (size_t)l3;
    if (l2 > 0) return (size_t)l2;
    return 32u << 20;
}

static char *alloc_touched(size_t n)
{
    char *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    /* Touch every page now so no page fault lands inside a timed operation. */
    if (p) memset(p, 0x5a, n);
    return p;
}

/* n bytes at a 2 MiB boundary, advised for huge pages, then touched. The
 * mapping is 2 MiB longer than the advised part, and the slack is never
 * advised: two advised regions are never adjacent, so the kernel cannot
 * merge them into one mapping and smaps reads each alone. */
static char *alloc_huge(size_t n, size_t *map_bytes, char **map)
{
    size_t advised = (n + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
    *map_bytes = advised + HUGE_BYTES;
    *map = mmap(NULL, *map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (*map == MAP_FAILED) return *map = NULL, NULL;
    char *p = (char *)(((uintptr_t)*map + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
    madvise(p, advised, MADV_HUGEPAGE); /* a request: EINVAL without THP, and the pages stay small */
    memset(p, 0x5a, n);
    return p;
}

long huge_kib_at(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[256];
    long kib = -1;
    int inside = 0;
    uintptr_t a = (uintptr_t)addr;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char dash;
        if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-') inside = a >= lo && a < hi;
        else if (inside && sscanf(line, "AnonHugePages: %ld", &kib) == 1) break;
    }
    if (f) fclose(f);
    return kib;
}

const char *thp_mode(char *out, size_t n)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    snprintf(out, n, "absent");
    if (f && fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) snprintf(out, n, "%.*s", (int)(b - a - 1), a + 1);
    }
    if (f) fclose(f);
    return out;
}

int buffers_init(buffers *b, size_t max_bytes, int cold, size_t cold_region, int huge)
{
    memset(b, 0, sizeof *b);
    b->cold = cold;
    b->huge = huge;
    b->huge_kib = -1;
    if (max_bytes < 64) max_bytes = 64;
    b->region = max_bytes;
    if (cold) {
        size_t want = cold_region ? cold_region : 4 * last_level_cache_bytes();
        b->region = want > 4 * max_bytes ? want : 4 * max_bytes;
    }
    if (huge) {
        b->send = alloc_huge(b->region, &b->map_bytes, &b->send_map);
        b->recv = alloc_huge(b->region, &b->map_bytes, &b->recv_map);
        long s = b->send ? huge_kib_at(b->send) : -1, r = b->recv ? huge_kib_at(b->recv) : -1;
        b->huge_kib = s < 0 || r < 0 ? -1 : s + r;
    } else {
        b->send = alloc_touched(b->region);
        b->recv = alloc_touched(b->region);
    }
    return b->send && b->recv ? 0 : -1;
}

void buffers_free(buffers *b)
{
    if (b->huge) {
        if (b->send_map) munmap(b->send_map, b->map_bytes);
        if (b->recv_map) munmap(b->recv_map, b->map_bytes);
    } else {
        free(b->send);
        free(b->recv);
    }
}

static size_t rotate(const buffers *b, size_t bytes, long rep)
{
    if (!b->cold) return 0;
    size_t stride = (bytes + 127) / 64 * 64; /* a gap so neighbours share no line */
    size_t slots = (b->region - bytes) / stride + 1;
    return ((size_t)rep % slots) * stride;
}

char *buffers_send(const buffers *b, size_t bytes, long rep) { return b->send + rotate(b, bytes, rep); }
char *buffers_recv(const buffers *b, size_t bytes, long rep) { return b->recv + rotate(b, bytes, rep); }
