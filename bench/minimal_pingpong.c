/* SPDX-License-Identifier: BSD-3-Clause */
/* The reference the engine's harness is compared with: the plainest possible
 * 8-byte ping-pong loop, timed as a whole (as osu_latency does). Prints the
 * mean half round trip in microseconds. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, iters = argc > 1 ? atoi(argv[1]) : 100000, size = argc > 2 ? atoi(argv[2]) : 8;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(1, (size_t)size + 1);
    for (int phase = 0; phase < 2; phase++) { /* phase 0 warms up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t1 = MPI_Wtime();
        if (phase == 1 && rank == 0) printf("%.4f\n", (t1 - t0) / iters / 2 * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
