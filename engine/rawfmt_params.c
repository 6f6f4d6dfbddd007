/* The "params" objects of the series blocks whose benchmarks record any
 * (docs/raw-format.md, series blocks): part of rawfmt, one function each. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "rawfmt.h"

/* Copies the finished object into s->params; one that does not fit is dropped
 * (a cut object would not be JSON). */
static void set_params(series *s, strbuf *b)
{
    sb_printf(b, "}");
    if (b->s && b->len < sizeof s->params) memcpy(s->params, b->s, b->len + 1);
    else s->params[0] = 0;
    sb_free(b);
}

void rawfmt_params_flood(series *s, int queue_depth, long msgs)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_int(&b, "queue_depth", queue_depth);
    sb_key_int(&b, "msgs", msgs);
    set_params(s, &b);
}

void rawfmt_params_overhead(series *s, const overhead_params *p)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "side", p->receive ? "receive" : "send");
    sb_key_num(&b, "step", p->step);
    sb_key_num(&b, "compute_s", p->compute_s);
    sb_key_num(&b, "compute_nominal_s", p->compute_nominal_s);
    sb_key_num(&b, "g0_s", p->g0_s);
    sb_key_int(&b, "msgs", p->msgs);
    sb_key_num(&b, "fake_overhead_s", p->fake_overhead_s > 0 ? p->fake_overhead_s : NAN);
    set_params(s, &b);
}

void rawfmt_params_rma(series *s, int get, int fence, long msgs, int queue_depth)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "op", get ? "get" : "put");
    sb_key_str(&b, "sync", fence ? "fence" : "flush");
    sb_key_int(&b, "msgs", msgs);
    if (queue_depth > 0) sb_key_int(&b, "queue_depth", queue_depth);
    set_params(s, &b);
}

void rawfmt_params_layer(series *s, const layer_params *p)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "layer", p->layer);
    if (p->msgs >= 0) sb_key_int(&b, "msgs", p->msgs);
    if (p->wire_bytes >= 0) sb_key_int(&b, "wire_bytes", p->wire_bytes);
    if (p->address) {
        sb_key_str(&b, "address", p->address);
        sb_key_int(&b, "port", p->port);
    }
    if (p->ring_bytes >= 0) sb_key_int(&b, "ring_bytes", p->ring_bytes);
    set_params(s, &b);
}

void rawfmt_params_segment(series *s, size_t segment)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_int(&b, "segment", (long long)segment);
    set_params(s, &b);
}
