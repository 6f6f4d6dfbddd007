/* SPDX-License-Identifier: BSD-3-Clause */
/* Every algorithm of every collective, in the order `--algo all` runs them. */
#include <stdio.h>
#include <string.h>
#include "colls.h"

extern const coll_algo coll_allgather_ring, coll_allgather_recursive_doubling, coll_allgather_bruck,
    coll_allgather_fan_in_fan_out, coll_allgather_repeated_binary_tree, coll_allgather_pipeline,
    coll_allgather_full_fan_in, coll_allgather_full_fan_out;
extern const coll_algo coll_allreduce_recursive_doubling, coll_allreduce_rabenseifner, coll_allreduce_ring,
    coll_allreduce_fan_in_fan_out;
extern const coll_algo coll_reduce_scatter_recursive_halving, coll_reduce_scatter_pairwise, coll_reduce_scatter_ring,
    coll_reduce_scatter_repeated_binary_tree, coll_reduce_scatter_pipeline, coll_reduce_scatter_full_fan_in,
    coll_reduce_scatter_full_fan_out;
extern const coll_algo coll_bcast_binomial, coll_bcast_scatter_allgather_recursive_doubling,
    coll_bcast_scatter_allgather_ring, coll_bcast_pipelined_chain, coll_bcast_linear;
extern const coll_algo coll_alltoall_linear, coll_alltoall_pairwise, coll_alltoall_bruck;

static const coll_algo *const all[] = {
    &coll_allgather_ring, &coll_allgather_recursive_doubling, &coll_allgather_bruck, &coll_allgather_fan_in_fan_out,
    &coll_allgather_repeated_binary_tree, &coll_allgather_pipeline, &coll_allgather_full_fan_in,
    &coll_allgather_full_fan_out,
    &coll_allreduce_recursive_doubling, &coll_allreduce_rabenseifner, &coll_allreduce_ring,
    &coll_allreduce_fan_in_fan_out,
    &coll_reduce_scatter_recursive_halving, &coll_reduce_scatter_pairwise, &coll_reduce_scatter_ring,
    &coll_reduce_scatter_repeated_binary_tree, &coll_reduce_scatter_pipeline, &coll_reduce_scatter_full_fan_in,
    &coll_reduce_scatter_full_fan_out,
    &coll_bcast_binomial, &coll_bcast_scatter_allgather_recursive_doubling, &coll_bcast_scatter_allgather_ring,
    &coll_bcast_pipelined_chain, &coll_bcast_linear,
    &coll_alltoall_linear, &coll_alltoall_pairwise, &coll_alltoall_bruck,
};

/* The benchmark that measures each collective (reduce_scatter: the block variant). */
static const char *const bench_names[COLL_KINDS] = {"allgather", "allreduce", "reduce_scatter_block", "bcast",
                                                     "alltoall"};
static const char *const kind_names[COLL_KINDS] = {"allgather", "allreduce", "reduce_scatter", "bcast", "alltoall"};

int coll_count(void) { return (int)(sizeof all / sizeof *all); }
const coll_algo *coll_at(int i) { return i >= 0 && i < coll_count() ? all[i] : NULL; }
const char *coll_kind_name(coll_kind kind) { return kind_names[kind]; }
const char *coll_bench_name(coll_kind kind) { return bench_names[kind]; }

const coll_algo *coll_find(coll_kind kind, const char *name)
{
    for (int i = 0; i < coll_count(); i++)
        if (all[i]->kind == kind && !strcmp(all[i]->name, name)) return all[i];
    return NULL;
}

int coll_kind_of_bench(const char *bench)
{
    for (int k = 0; k < COLL_KINDS; k++)
        if (!strcmp(bench_names[k], bench)) return k;
    return -1;
}

void coll_names(coll_kind kind, char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < coll_count() && used < n; i++)
        if (all[i]->kind == kind) used += (size_t)snprintf(out + used, n - used, "%s%s", used ? ", " : "", all[i]->name);
}
