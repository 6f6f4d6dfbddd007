/* SPDX-License-Identifier: BSD-3-Clause */
#include "cycle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ALIGN = 32 };

static char *aligned(char *p) { return (char *)(((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1)); }

int cycle_init(cycle *c, size_t min_region, size_t send_bytes, size_t recv_bytes)
{
    size_t need = 2 * (send_bytes + 2 * ALIGN + recv_bytes + 2 * ALIGN);
    c->size = need > min_region ? need : min_region;
    c->send_bytes = send_bytes;
    c->recv_bytes = recv_bytes;
    c->base = c->fresh = malloc(c->size);
    if (!c->base) return -1;
    memset(c->base, 0x55, c->size); /* as SKaMPI fills its buffer once */
    return 0;
}

void cycle_next(cycle *c, char **sb, char **rb)
{
    char *end = c->base + c->size;
    char *s = aligned(c->fresh);
    char *r = aligned(s + c->send_bytes);
    if (r + c->recv_bytes > end) {
        s = aligned(c->base);
        r = aligned(s + c->send_bytes);
    }
    *sb = s;
    *rb = r;
    c->fresh = r + c->recv_bytes;
}

void cycle_free(cycle *c) { free(c->base); }
