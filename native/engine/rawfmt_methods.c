/* SPDX-License-Identifier: BSD-3-Clause */
/* The method blocks (docs/reference/formats/raw-files.md, method blocks),
 * their progress line, and the methods --describe lists: part of rawfmt. */
#include <stdio.h>

#include "json.h"
#include "methods/method.h"
#include "rawfmt.h"

static void put_traits(strbuf *b, const mop_traits *tr)
{
    sb_key_str(b, "timing", tr->timing);
    sb_key_str(b, "start", tr->start);
    sb_key_str(b, "root", tr->root);
    sb_key_str(b, "cache", tr->cache);
    sb_key_str(b, "ranks", tr->ranks);
}

int rawfmt_method(engine *e, const mctx *m, const mop_traits *tr)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "kind", "method");
    sb_key_str(&b, "method", m->def->name);
    sb_key_str(&b, "tool", m->def->tool);
    sb_printf(&b, ", \"reference\": %s", m->def->reference ? "true" : "false");
    sb_key_str(&b, "bench", m->bench);
    sb_key_int(&b, "size", (long long)m->bytes);
    sb_key_int(&b, "launch", e->o->launch);
    sb_key_int(&b, "rank", e->rank);
    sb_key_str(&b, "role", m->role);
    put_traits(&b, tr);
    sb_key_int(&b, "count", m->count);
    sb_key_str(&b, "datatype", m->datatype);
    sb_printf(&b, ", \"params\": {");
    for (int i = 0; i < m->nparams; i++) sb_key_num(&b, m->pkey[i], m->pval[i]);
    sb_printf(&b, "}");
    sb_printf(&b, ", \"columns\": [[\"rep\", \"i32\"], [\"phase\", \"u8\"], [\"calls\", \"i32\"], "
                  "[\"root\", \"i32\"], [\"batch\", \"i32\"], [\"flags\", \"u8\"], [\"t_start\", \"f64\"], "
                  "[\"t_end\", \"f64\"], [\"t_sched\", \"f64\"]]}");
    const mrows *r = &m->rows;
    long n = m->comm == MPI_COMM_NULL ? 0 : r->n; /* an idle rank has no rows */
    const void *cols[] = {r->rep, r->phase, r->calls, r->root, r->batch, r->flags, r->t_start, r->t_end, r->t_sched};
    const size_t widths[] = {4, 1, 4, 4, 4, 1, 8, 8, 8};
    int rc = raw_block_columns(&e->raw, b.s, (uint64_t)n, 9, cols, widths);
    sb_free(&b);
    return rc;
}

void rawfmt_method_progress(const mctx *m)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "bench", m->bench);
    sb_key_str(&b, "method", m->def->name);
    sb_key_int(&b, "size", (long long)m->bytes);
    sb_key_int(&b, "rows", m->rows.n);
    sb_printf(&b, "}");
    printf("@progress %s\n", b.s);
    fflush(stdout);
    sb_free(&b);
}

void rawfmt_methods_describe(strbuf *b)
{
    sb_printf(b, ", \"methods\": [");
    for (int i = 0; method_at(i); i++) {
        const method_def *d = method_at(i);
        sb_printf(b, "%s{", i ? ", " : "");
        sb_key_str(b, "name", d->name);
        sb_key_str(b, "tool", d->tool);
        sb_printf(b, ", \"reference\": %s, \"benchmarks\": {", d->reference ? "true" : "false");
        int first = 1;
        for (int k = 0; k < MOP_COUNT; k++) {
            const mop_traits *tr = d->traits((mop)k);
            if (!tr) continue;
            sb_printf(b, "%s\"%s\": {", first ? "" : ", ", method_op_name((mop)k));
            sb_printf(b, "\"timing\": \"%s\"", tr->timing);
            sb_key_str(b, "start", tr->start);
            sb_key_str(b, "root", tr->root);
            sb_key_str(b, "cache", tr->cache);
            sb_key_str(b, "ranks", tr->ranks);
            sb_printf(b, "}");
            first = 0;
        }
        sb_printf(b, "}}");
    }
    sb_printf(b, "]");
}
