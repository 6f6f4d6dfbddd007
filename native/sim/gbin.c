/* SPDX-License-Identifier: BSD-3-Clause */
/* The compact binary schedule: "MPSIMSC1", the rank count (u64), then per
 * rank its number (u32), operation count (u32) and dependency count (u32),
 * its operations (24 bytes each) and its dependencies (u32 local indices);
 * little-endian, as this machine writes it. Reductions keep their bytes. */
#include <stdlib.h>
#include <string.h>
#include "schedule.h"

static const char MAGIC[8] = {'M', 'P', 'S', 'I', 'M', 'S', 'C', '1'};

typedef struct {
    uint8_t type, pad[3];
    int32_t peer, tag;
    uint32_t ndeps;
    double value;
} disk_op;

static int w_begin(sched_sink *s, long nranks)
{
    uint64_t r = (uint64_t)nranks;
    return fwrite(MAGIC, 8, 1, s->state) != 1 || fwrite(&r, 8, 1, s->state) != 1;
}

static int w_rank(sched_sink *s, const rank_sched *r)
{
    FILE *f = s->state;
    uint32_t head[3] = {(uint32_t)r->rank, r->nops, r->ndeps};
    if (fwrite(head, sizeof head, 1, f) != 1) return -1;
    for (uint32_t i = 0; i < r->nops; i++) {
        const sched_op *o = &r->ops[i];
        disk_op d = {.type = o->type, .peer = o->peer, .tag = o->tag, .ndeps = o->ndeps, .value = o->value};
        if (fwrite(&d, sizeof d, 1, f) != 1) return -1;
    }
    /* Dependencies in operation order, as the ops hold them. */
    for (uint32_t i = 0; i < r->nops; i++)
        if (r->ops[i].ndeps && fwrite(r->deps + r->ops[i].dep0, 4, r->ops[i].ndeps, f) != r->ops[i].ndeps) return -1;
    return 0;
}

static int w_end(sched_sink *s) { return fflush(s->state) != 0; }

void gbin_writer(sched_sink *s, FILE *f)
{
    s->begin = w_begin, s->rank = w_rank, s->end = w_end, s->state = f;
}

int gbin_is_binary(FILE *f)
{
    int c = getc(f);
    if (c != EOF) ungetc(c, f);
    return c == MAGIC[0];
}

int gbin_read(FILE *f, sched_sink *s, char *err, size_t n)
{
    char magic[8];
    uint64_t nranks;
    if (fread(magic, 8, 1, f) != 1 || memcmp(magic, MAGIC, 8) || fread(&nranks, 8, 1, f) != 1) {
        snprintf(err, n, "not a binary schedule (no MPSIMSC1 header)");
        return -1;
    }
    if (nranks < 1 || nranks > (uint64_t)SCHED_MAX_RANKS) {
        snprintf(err, n, "binary schedule: %llu ranks (1 to %ld)", (unsigned long long)nranks, SCHED_MAX_RANKS);
        return -1;
    }
    if (s->begin(s, (long)nranks)) return snprintf(err, n, "the schedule's sink failed"), -1;
    sched_op *ops = NULL;
    disk_op *disk = NULL;
    uint32_t *deps = NULL;
    size_t cap = 0, dcap = 0;
    int rc = -1;
    for (uint64_t r = 0; r < nranks; r++) {
        uint32_t head[3];
        if (fread(head, sizeof head, 1, f) != 1) {
            snprintf(err, n, "binary schedule ends at rank %llu of %llu", (unsigned long long)r,
                     (unsigned long long)nranks);
            goto out;
        }
        if (head[0] != r) {
            snprintf(err, n, "binary schedule: rank %u where rank %llu belongs", head[0], (unsigned long long)r);
            goto out;
        }
        if (head[1] > cap) {
            cap = head[1];
            ops = realloc(ops, cap * sizeof *ops), disk = realloc(disk, cap * sizeof *disk);
        }
        if (head[2] > dcap) dcap = head[2], deps = realloc(deps, dcap * sizeof *deps);
        if ((cap && (!ops || !disk)) || (dcap && !deps)) {
            snprintf(err, n, "out of memory reading rank %llu", (unsigned long long)r);
            goto out;
        }
        if (fread(disk, sizeof *disk, head[1], f) != head[1] || fread(deps, 4, head[2], f) != head[2]) {
            snprintf(err, n, "binary schedule truncated in rank %llu", (unsigned long long)r);
            goto out;
        }
        uint32_t at = 0;
        for (uint32_t i = 0; i < head[1]; i++) {
            disk_op *d = &disk[i];
            int comm = d->type == OP_SEND || d->type == OP_RECV;
            if (d->type > OP_REDUCE || (comm && (d->peer < 0 || (uint64_t)d->peer >= nranks)) ||
                (comm && (d->tag < 0 || d->tag > SCHED_MAX_TAG)) || at + d->ndeps > head[2] || !(d->value >= 0 && d->value <= SCHED_MAX_VALUE)) {
                snprintf(err, n, "binary schedule: operation %u of rank %llu is invalid", i, (unsigned long long)r);
                goto out;
            }
            ops[i] = (sched_op){.type = d->type, .peer = d->peer, .tag = d->tag, .value = d->value, .dep0 = at,
                                .ndeps = d->ndeps};
            at += d->ndeps;
        }
        for (uint32_t k = 0; k < head[2]; k++)
            if (deps[k] >= head[1]) {
                snprintf(err, n, "binary schedule: rank %llu requires operation %u of %u", (unsigned long long)r,
                         deps[k], head[1]);
                goto out;
            }
        rank_sched rs = {.rank = (long)r, .nops = head[1], .ndeps = head[2], .ops = ops, .deps = deps};
        if (s->rank(s, &rs)) {
            snprintf(err, n, "the schedule's sink failed at rank %llu", (unsigned long long)r);
            goto out;
        }
    }
    if (s->end(s)) snprintf(err, n, "the schedule's sink failed");
    else rc = 0;
out:
    free(ops), free(disk), free(deps);
    return rc;
}
