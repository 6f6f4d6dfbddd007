/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffer cycling as SKaMPI does it (its mem.c, check_buffer): every
 * repetition takes its send and receive slices from fresh memory of one
 * region, 32-byte aligned, and starts again at the region's beginning when
 * the next pair would not fit. */
#ifndef MPISCOPE_CYCLE_H
#define MPISCOPE_CYCLE_H

#include <stddef.h>

typedef struct cycle {
    char *base, *fresh;
    size_t size, send_bytes, recv_bytes;
} cycle;

/* A region of at least `min_region` bytes, and at least what SKaMPI needs for
 * slices of these sizes (twice send and receive with their alignments),
 * touched; returns 0 or -1. */
int cycle_init(cycle *c, size_t min_region, size_t send_bytes, size_t recv_bytes);
/* The next repetition's send and receive slices. */
void cycle_next(cycle *c, char **sb, char **rb);
void cycle_free(cycle *c);

#endif
