/* A small MPI application for the what-if at scale (tests/mpi/test_sim_whatif.py):
 * steps of computation (odd ranks five times as long as even ones, asleep so the
 * ranks do not compete for a core), a halo exchange with both neighbours and a
 * small allreduce. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

static void compute(double seconds)
{
    struct timespec t = {0, (long)(seconds * 1e9)};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 8192, STEPS = 100 };
    double *out = calloc(N, sizeof *out), *in = calloc(N, sizeof *in), x[4] = {1, 2, 3, 4}, sum[4];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int step = 0; step < STEPS; step++) {
        compute(rank % 2 ? 1e-3 : 2e-4);
        MPI_Sendrecv(out, N, MPI_DOUBLE, right, 0, in, N, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(x, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    free(out), free(in);
    MPI_Finalize();
    return 0;
}
