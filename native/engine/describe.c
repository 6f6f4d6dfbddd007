/* SPDX-License-Identifier: BSD-3-Clause */
#include "describe.h"

#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "colls/colls.h"
#include "json.h"
#include "options.h"
#include "rawfmt.h"
#include "record.h"

static const char *const pattern_names[] = {"pingpong", "oneway", "pairs", "bw", "coll"};
static const char *const pairing_names[] = {"first_two", "halves", "listed", "all"};

static void put_variants(strbuf *b, const bench_def *def, const options *o)
{
    int n = def->nvariants ? def->nvariants(o) : 1;
    sb_printf(b, ", \"variants\": [");
    for (int i = 0; i < n; i++) {
        if (i) sb_printf(b, ", ");
        sb_str(b, def->variant_name ? def->variant_name(o, i) : "mpi");
    }
    sb_printf(b, "]");
    if (def->variant_option) sb_key_str(b, "variant_option", def->variant_option);
    else sb_printf(b, ", \"variant_option\": null");
}

static void put_bench(strbuf *b, const bench_def *def, const options *o)
{
    sb_printf(b, "{");
    sb_key_str(b, "name", def->name);
    sb_key_str(b, "pattern", pattern_names[def->pat]);
    sb_key_str(b, "rule", rawfmt_rule_name(def->rule));
    sb_key_str(b, "unit", rawfmt_unit_name(def->unit));
    sb_key_int(b, "min_ranks", def->min_np);
    sb_printf(b, ", \"sizeless\": %s", def->sizeless ? "true" : "false");
    sb_key_str(b, "pairing", pairing_names[def->pairing]);
    sb_printf(b, ", \"collective\": %s", def->collective ? "true" : "false");
    put_variants(b, def, o);
    sb_printf(b, "}");
}

/* Only bcast's pipelined chain takes a parameter (--segment). */
static void put_algo(strbuf *b, const coll_algo *a)
{
    sb_printf(b, "{");
    sb_key_str(b, "name", a->name);
    int segmented = a->kind == COLL_BCAST && !strcmp(a->name, "pipelined_chain");
    sb_printf(b, ", \"params\": [%s]", segmented ? "\"segment\"" : "");
    sb_printf(b, "}");
}

static void put_collectives(strbuf *b)
{
    sb_printf(b, ", \"collectives\": [");
    for (int k = 0; k < COLL_KINDS; k++) {
        sb_printf(b, "%s{", k ? ", " : "");
        sb_key_str(b, "name", coll_kind_name((coll_kind)k));
        sb_key_str(b, "bench", coll_bench_name((coll_kind)k));
        sb_printf(b, ", \"algorithms\": [");
        int first = 1;
        for (int i = 0; i < coll_count(); i++) {
            if (coll_at(i)->kind != (coll_kind)k) continue;
            if (!first) sb_printf(b, ", ");
            put_algo(b, coll_at(i));
            first = 0;
        }
        sb_printf(b, "]}");
    }
    sb_printf(b, "]");
}

static void put_rules(strbuf *b)
{
    sb_printf(b, ", \"rules\": {");
    for (int r = 0; r < RULE_COUNT; r++)
        sb_key_str(b, rawfmt_rule_name((sample_rule)r), rawfmt_rule_text((sample_rule)r));
    sb_printf(b, "}");
}

int describe_engine(void)
{
    options o;
    options_defaults(&o);
    options_default_lists(&o);
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_int(&b, "describe_version", DESCRIBE_VERSION);
    sb_key_int(&b, "raw_schema_version", RAW_SCHEMA_VERSION);
    sb_printf(&b, ", \"benchmarks\": [");
    for (int i = 0; bench_at(i); i++) {
        if (i) sb_printf(&b, ", ");
        put_bench(&b, bench_at(i), &o);
    }
    sb_printf(&b, "]");
    put_collectives(&b);
    put_rules(&b);
    rawfmt_methods_describe(&b);
    sb_printf(&b, "}\n");
    fputs(b.s, stdout);
    sb_free(&b);
    return fflush(stdout) ? 4 : 0;
}
