/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-rank raw files (docs/reference/formats/raw-files.md): written after each timing loop,
 * never inside it; renamed from .part to the final name on a clean finish. */
#ifndef MPISCOPE_RECORD_H
#define MPISCOPE_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RAW_SCHEMA_VERSION 3

typedef struct rawfile {
    FILE *f;
    char path[4096], part[4096];
} rawfile;

/* Returns 0, or -1 with errno set. */
int raw_open(rawfile *r, const char *dir, int rank, const char *header_json);
int raw_block(rawfile *r, const char *json, uint64_t n, const double *t_start, const double *t_end,
              const double *t_sched, const uint8_t *valid);
/* A block whose JSON names its own columns ("columns": [[name, type], ...],
 * docs/reference/formats/raw-files.md): column k is n values of widths[k] bytes each. */
int raw_block_columns(rawfile *r, const char *json, uint64_t n, int ncols, const void *const *cols,
                      const size_t *widths);
int raw_close(rawfile *r);

#endif
