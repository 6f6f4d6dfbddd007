/* SPDX-License-Identifier: BSD-3-Clause */
/* One call of each collective named on the command line, made exactly as the
 * engine's MPI-library benchmarks make it (engine/bench/coll_mpi.c: MPI_BYTE,
 * reductions MPI_INT sums of max(1, size/4)), root 0. Before each call it
 * calls mpiscope_cell(i), a marker a debugger stops at: mpiscope tune runs
 * rank 0 under gdb and records which of the library's own algorithm functions
 * each call enters (the library's package: mpilibs/openmpi/calls.py, intelmpi/calls.py).
 *   mpi-coll-call allreduce:1024 bcast:65536 barrier:0 ... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int mpiscope_cell_seen;

__attribute__((noinline)) void mpiscope_cell(int cell)
{
    mpiscope_cell_seen = cell;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* a compiler barrier: the store stays in the call */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int i = 1; i < argc; i++) {
        char name[64];
        long size;
        if (sscanf(argv[i], "%63[a-z_]:%ld", name, &size) != 2) {
            fprintf(stderr, "mpi-coll-call: bad cell '%s' (want COLL:SIZE)\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int ints = size / 4 > 1 ? (int)(size / 4) : 1, n = (int)size;
        size_t bytes = (size_t)(size > 4 ? size : 4) * (size_t)p + 64;
        char *sb = calloc(bytes, 1), *rb = calloc(bytes, 1);
        mpiscope_cell(i);
        if (!strcmp(name, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
        else if (!strcmp(name, "bcast")) MPI_Bcast(sb, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "reduce")) MPI_Reduce(sb, rb, ints, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "allreduce")) MPI_Allreduce(sb, rb, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(name, "allgather")) MPI_Allgather(sb, n, MPI_BYTE, rb, n, MPI_BYTE, MPI_COMM_WORLD);
        else if (!strcmp(name, "alltoall")) MPI_Alltoall(sb, n, MPI_BYTE, rb, n, MPI_BYTE, MPI_COMM_WORLD);
        else if (!strcmp(name, "gather")) MPI_Gather(sb, n, MPI_BYTE, rb, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "scatter")) MPI_Scatter(sb, n, MPI_BYTE, rb, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "reduce_scatter_block"))
            MPI_Reduce_scatter_block(sb, rb, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else {
            fprintf(stderr, "mpi-coll-call: unknown collective '%s'\n", name);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        free(sb);
        free(rb);
    }
    mpiscope_cell(0);
    MPI_Finalize();
    return 0;
}
