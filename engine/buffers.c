#include "buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int buffers_init(buffers *b, size_t max_bytes, int cold, size_t cold_region)
{
    b->cold = cold;
    if (max_bytes < 64) max_bytes = 64;
    b->region = max_bytes;
    if (cold) {
        size_t want = cold_region ? cold_region : 4 * last_level_cache_bytes();
        b->region = want > 4 * max_bytes ? want : 4 * max_bytes;
    }
    b->send = alloc_touched(b->region);
    b->recv = alloc_touched(b->region);
    return b->send && b->recv ? 0 : -1;
}

void buffers_free(buffers *b)
{
    free(b->send);
    free(b->recv);
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
