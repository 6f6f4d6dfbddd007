/* SPDX-License-Identifier: BSD-3-Clause */
/* mpiscope's own collective algorithms (engine/colls) as variants of the
 * collective benchmarks: `--algo LIST|all` (mpi = the library's own). */
#ifndef MPISCOPE_COLL_OWN_H
#define MPISCOPE_COLL_OWN_H

#include <stddef.h>
#include "../bench.h"
#include "../colls/colls.h"

struct options;
struct rawfile;

/* Variants of the benchmark measuring `kind`: the distinct names of
 * --algo that are its algorithms (or mpi), in order, `all` expanding to mpi
 * and every algorithm of the registry; just "mpi" without --algo or when
 * none of the names is one of its algorithms. */
int coll_own_nvariants(const struct options *o, coll_kind kind);
const char *coll_own_variant_name(const struct options *o, coll_kind kind, int i);

/* Checks that every --algo name is an algorithm of at least one collective
 * benchmark asked for (it applies to those); returns 0, or -1 with a
 * message in err. */
int coll_own_validate(const struct options *o, char *err, size_t n);

/* From the benchmark's describe() (after count and datatype are set): for a
 * variant other than "mpi", allocates the algorithm's context (and trace)
 * in s->state. */
void coll_own_describe(series *s, coll_kind kind);
/* Runs the variant's algorithm for repetition `rep`; returns MPI_SUCCESS. */
int coll_own_run(series *s, long rep, const void *sbuf, void *rbuf, int root);
/* bench_def hooks: the trace block, and releasing the context. */
int coll_own_extra_blocks(series *s, struct rawfile *raw, long reps);
void coll_own_finish(series *s);

#endif
