/* SPDX-License-Identifier: BSD-3-Clause */
/* The "params" objects of the series blocks whose benchmarks record any
 * (docs/reference/formats/raw-files.md, series blocks): part of rawfmt, one function each. */
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

/* A threshold of the hybrid: bytes, or null for never. */
static void key_threshold(strbuf *b, const char *key, size_t v)
{
    if (v == (size_t)-1) sb_printf(b, ", \"%s\": null", key);
    else sb_key_int(b, key, (long long)v);
}

void rawfmt_params_transport(series *s, const tp_info *t, long msgs, double skew_s, double compute_s,
                             double compute_actual_s)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "design", t->design);
    if (t->placement) {
        sb_key_str(&b, "placement", t->placement);
        sb_key_int(&b, "cpu", t->cpu);
        sb_key_int(&b, "peer_cpu", t->peer_cpu);
        sb_key_int(&b, "queue_bytes", t->queue_bytes);
        sb_key_int(&b, "record_max", t->record_max);
    }
    if (t->chunk >= 0) {
        sb_key_int(&b, "chunk", t->chunk);
        sb_key_int(&b, "chunks", t->chunks);
        sb_key_int(&b, "eager", t->eager);
    }
    if (t->basic_max) {
        key_threshold(&b, "basic_max", t->basic_max);
        key_threshold(&b, "cma_min", t->cma_min);
        key_threshold(&b, "cma_min_late", t->cma_min_late);
    }
    if (t->no_cma) sb_key_str(&b, "no_cma", t->no_cma);
    if (t->helper_cpu >= 0) sb_key_int(&b, "helper_cpu", t->helper_cpu);
    if (t->rank_cpus[0]) sb_key_str(&b, "rank_cpus", t->rank_cpus);
    if (t->threads > 0) sb_key_int(&b, "threads", t->threads);
    if (msgs >= 0) sb_key_int(&b, "msgs", msgs);
    if (skew_s >= 0) sb_key_num(&b, "skew_s", skew_s);
    if (compute_s >= 0) sb_key_num(&b, "compute_s", compute_s);
    if (compute_actual_s >= 0) sb_key_num(&b, "compute_actual_s", compute_actual_s);
    set_params(s, &b);
}

void rawfmt_params_poll(series *s, const char *polling, int socket_every, int skip_max)
{
    strbuf b = {0};
    sb_printf(&b, "{");
    sb_key_str(&b, "polling", polling);
    sb_key_int(&b, "socket_every", socket_every);
    sb_key_int(&b, "skip_max", skip_max);
    set_params(s, &b);
}
