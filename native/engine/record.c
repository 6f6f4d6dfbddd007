/* SPDX-License-Identifier: BSD-3-Clause */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int put_json(FILE *f, const char *json)
{
    uint32_t len = (uint32_t)strlen(json);
    return fwrite(&len, 4, 1, f) == 1 && fwrite(json, 1, len, f) == len ? 0 : -1;
}

int raw_open(rawfile *r, const char *dir, int rank, const char *header_json)
{
    snprintf(r->path, sizeof r->path, "%s/rank-%d.raw", dir, rank);
    snprintf(r->part, sizeof r->part, "%s/rank-%d.raw.part", dir, rank);
    r->f = fopen(r->part, "wb");
    if (!r->f) return -1;
    uint32_t version = RAW_SCHEMA_VERSION;
    if (fwrite("MPSCRAW1", 1, 8, r->f) != 8 || fwrite(&version, 4, 1, r->f) != 1 ||
        put_json(r->f, header_json) || fflush(r->f))
        return -1;
    return 0;
}

int raw_block(rawfile *r, const char *json, uint64_t n, const double *t_start, const double *t_end,
              const double *t_sched, const uint8_t *valid)
{
    FILE *f = r->f;
    int bad = fwrite("BLOCK___", 1, 8, f) != 8 || put_json(f, json) || fwrite(&n, 8, 1, f) != 1;
    if (!bad && n) {
        bad = fwrite(t_start, 8, n, f) != n || fwrite(t_end, 8, n, f) != n ||
              fwrite(t_sched, 8, n, f) != n || fwrite(valid, 1, n, f) != n;
    }
    /* Flush each block so a crash later in the run keeps it readable. */
    bad = bad || fwrite("ENDBLOCK", 1, 8, f) != 8 || fflush(f);
    return bad ? -1 : 0;
}

int raw_block_columns(rawfile *r, const char *json, uint64_t n, int ncols, const void *const *cols,
                      const size_t *widths)
{
    FILE *f = r->f;
    int bad = fwrite("BLOCK___", 1, 8, f) != 8 || put_json(f, json) || fwrite(&n, 8, 1, f) != 1;
    for (int k = 0; k < ncols && !bad && n; k++) bad = fwrite(cols[k], widths[k], n, f) != n;
    bad = bad || fwrite("ENDBLOCK", 1, 8, f) != 8 || fflush(f);
    return bad ? -1 : 0;
}

int raw_close(rawfile *r)
{
    int bad = fclose(r->f) != 0;
    r->f = NULL;
    if (bad || rename(r->part, r->path)) return -1;
    return 0;
}
