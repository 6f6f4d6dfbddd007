/* SPDX-License-Identifier: BSD-3-Clause */
/* One method on one operation: who takes part, a fresh clock offset, the
 * method's loop, then every rank's block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rawfmt.h"
#include "method.h"

/* Which ranks take part in the method's loop, and as what. */
static int assign(mctx *m, const char *ranks, int rank, int size)
{
    int active = 1;
    m->role = "member";
    if (!strcmp(ranks, "first_two") || !strcmp(ranks, "root_and_last")) {
        int other = !strcmp(ranks, "first_two") ? 1 : size - 1;
        active = rank == 0 || rank == other;
        m->role = rank == 0 ? "initiator" : "responder";
    } else if (!strcmp(ranks, "halves")) {
        active = rank < size / 2 * 2; /* with an odd count the last rank has no partner */
        m->role = rank < size / 2 ? "initiator" : "responder";
    }
    if (!active) m->role = "idle";
    return active;
}

int method_record(mctx *m)
{
    int rc = rawfmt_method(m->e, m, m->def->traits(m->op));
    if (rc) perror("mpiscope-engine: writing the raw file");
    if (m->e->rank == 0) rawfmt_method_progress(m);
    m->rows.n = 0;
    m->nparams = 0;
    return rc;
}

int method_run(engine *e, const method_def *def, const char *bench, const long *sizes, int nsizes, void **state)
{
    int op = method_op_of(bench);
    const mop_traits *tr = op < 0 ? NULL : def->traits((mop)op);
    if (!tr) return 0; /* the tool does not measure this operation */
    mctx m = {.e = e, .def = def, .op = (mop)op, .bench = bench, .t = &e->t, .state = *state, .peer = -1,
              .datatype = "none"};
    int active = assign(&m, tr->ranks, e->rank, e->size);
    MPI_Comm_split(e->world, active ? 0 : MPI_UNDEFINED, e->rank, &m.comm);
    if (active) {
        MPI_Comm_rank(m.comm, &m.crank);
        MPI_Comm_size(m.comm, &m.csize);
        if (strcmp(m.role, "member")) m.peer = m.csize == 2 ? 1 - m.crank : (m.crank + m.csize / 2) % m.csize;
    }
    double t = MPI_Wtime();
    sync_measure(&e->sync, 1); /* a fresh offset point keeps the drift fit current, as before a series */
    t = phase_done(&e->ph, PHASE_CLOCK, t);
    int rc = 0;
    if (def->run_sizes) {
        rc = def->run_sizes(&m, sizes, nsizes);
    } else {
        m.bytes = (size_t)sizes[0];
        if (active) def->run(&m);
        rc = method_record(&m);
    }
    phase_done(&e->ph, PHASE_MEASURE, t);
    *state = m.state;
    mrows_free(&m.rows);
    if (m.comm != MPI_COMM_NULL) MPI_Comm_free(&m.comm);
    return rc;
}

/* The methods asked for (--methods), after the engine's own series of
 * `bench` at `bytes`: each measures the same operation at the same size
 * right away. Those that interleave sizes wait for methods_after_bench. */
int methods_at_size(engine *e, const char *bench, size_t bytes, void **states)
{
    const options *o = e->o;
    long size = (long)bytes;
    for (int i = 0; i < o->nmethods; i++) {
        const method_def *def = method_find(o->methods[i]);
        if (!def->run_sizes && method_run(e, def, bench, &size, 1, &states[i])) return -1;
    }
    return 0;
}

/* After the benchmark's last size: the methods that measure every size at
 * once, with the benchmark's sizes (`sizes`, `n`); then every method's
 * state is released. */
int methods_after_bench(engine *e, const char *bench, const long *sizes, int n, void **states)
{
    const options *o = e->o;
    int rc = 0;
    for (int i = 0; i < o->nmethods; i++) {
        const method_def *def = method_find(o->methods[i]);
        if (!rc && def->run_sizes) rc = method_run(e, def, bench, sizes, n, &states[i]);
        if (def->release) def->release(states[i]);
        else free(states[i]);
        states[i] = NULL;
    }
    return rc;
}
