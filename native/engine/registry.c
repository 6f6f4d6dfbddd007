/* SPDX-License-Identifier: BSD-3-Clause */
/* Every benchmark the engine knows, by name. */
#include <stdio.h>
#include <string.h>
#include "bench.h"

extern const bench_def bench_pingpong, bench_oneway, bench_multipair, bench_pairs, bench_ring, bench_bw,
    bench_bibw, bench_barrier, bench_bcast, bench_reduce, bench_allreduce, bench_allgather, bench_gather,
    bench_scatter, bench_alltoall, bench_reduce_scatter_block, bench_exchange;
/* LogGP parameters and per-layer costs (bench/flood.c, overhead.c, rma.c, layers.c). */
extern const bench_def bench_flood, bench_overhead, bench_rma_lat, bench_rma_flood, bench_layer_pingpong,
    bench_layer_bw;
/* The intra-node transport lab (bench/transport.c, transport/). */
extern const bench_def bench_tp_latency, bench_tp_bw, bench_tp_bw_cold, bench_tp_multibw, bench_tp_skew,
    bench_tp_overlap, bench_tp_poll;
/* The harness's own cost (bench/harness.c). */
extern const bench_def bench_empty, bench_pingpong_loop;

static const bench_def *const all[] = {
    &bench_pingpong, &bench_oneway,    &bench_multipair, &bench_pairs,     &bench_ring,
    &bench_bw,       &bench_bibw,      &bench_barrier,   &bench_bcast,     &bench_reduce,
    &bench_allreduce, &bench_allgather, &bench_gather,   &bench_scatter,   &bench_alltoall,
    &bench_reduce_scatter_block, &bench_exchange,
    &bench_flood, &bench_overhead, &bench_rma_lat, &bench_rma_flood, &bench_layer_pingpong, &bench_layer_bw,
    &bench_tp_latency, &bench_tp_bw, &bench_tp_bw_cold, &bench_tp_multibw, &bench_tp_skew, &bench_tp_overlap, &bench_tp_poll,
    &bench_empty, &bench_pingpong_loop,
};

const bench_def *bench_find(const char *name)
{
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!strcmp(all[i]->name, name)) return all[i];
    return NULL;
}

const bench_def *bench_at(int i)
{
    return i >= 0 && (size_t)i < sizeof all / sizeof *all ? all[i] : NULL;
}

role bench_timed_role(const bench_def *def, const struct options *o, int i)
{
    if (def->timed_role) return def->timed_role(o, i);
    return def->collective ? ROLE_MEMBER : ROLE_INITIATOR;
}

void bench_list(char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof all / sizeof *all && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", all[i]->name);
}
