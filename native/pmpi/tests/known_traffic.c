/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic whose every count, size and peer is known in advance, for
 * tests/mpi/test_profile_known.py (which holds the same expectations): every
 * family of wrapped call, sizes across many log2 bins, three communicators
 * (world, halves, the node). Needs an even number of ranks, at least 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *buf(size_t n)
{
    char *b = calloc(n ? n : 1, 1);
    if (!b) abort();
    return b;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p < 2 || p % 2) {
        if (!r) fprintf(stderr, "known-traffic: needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int partner = r ^ 1, right = (r + 1) % p, left = (r + p - 1) % p;
    char *s = buf(1 << 20), *d = buf((size_t)p << 20);

    /* A: MPI_Send / MPI_Recv, 3 x 1000 bytes each way between partners. */
    for (int turn = 0; turn < 2; turn++)
        for (int i = 0; i < 3; i++) {
            if ((r % 2) == turn) MPI_Send(s, 125, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD);
            else MPI_Recv(d, 125, MPI_DOUBLE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    /* B: MPI_Ssend of 8 bytes to the partner, received from any source. */
    if (r % 2 == 0) {
        MPI_Ssend(s, 8, MPI_BYTE, partner, 2, MPI_COMM_WORLD);
        MPI_Recv(d, 8, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(d, 8, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ssend(s, 8, MPI_BYTE, partner, 2, MPI_COMM_WORLD);
    }
    /* C: MPI_Isend of 4096 bytes to every other rank, MPI_Irecv from any source, one MPI_Waitall. */
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)p);
    int n = 0;
    for (int q = 0; q < p; q++)
        if (q != r) MPI_Irecv(d + ((size_t)q << 12), 4096, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &reqs[n++]);
    for (int q = 0; q < p; q++)
        if (q != r) MPI_Isend(s, 4096, MPI_BYTE, q, 3, MPI_COMM_WORLD, &reqs[n++]);
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    /* D: persistent, 5 rounds of 16 bytes to the right, from the left. */
    MPI_Request pr[2];
    MPI_Recv_init(d, 4, MPI_INT, left, 4, MPI_COMM_WORLD, &pr[0]);
    MPI_Send_init(s, 4, MPI_INT, right, 4, MPI_COMM_WORLD, &pr[1]);
    for (int i = 0; i < 5; i++) {
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
    /* E: MPI_Sendrecv of 64 KiB to the right, from the left, twice. */
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(s, 65536, MPI_BYTE, right, 5, d, 65536, MPI_BYTE, left, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    /* F: one byte to itself. */
    MPI_Request self;
    MPI_Isend(s, 1, MPI_BYTE, r, 6, MPI_COMM_WORLD, &self);
    MPI_Recv(d, 1, MPI_BYTE, r, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&self, MPI_STATUS_IGNORE);
    /* G: 7 bytes to the partner, probed first. */
    MPI_Status st;
    MPI_Request g;
    MPI_Isend(s, 7, MPI_BYTE, partner, 7, MPI_COMM_WORLD, &g);
    MPI_Probe(partner, 7, MPI_COMM_WORLD, &st);
    MPI_Recv(d, 7, MPI_BYTE, st.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&g, MPI_STATUS_IGNORE);
    /* H: 24 bytes to the partner, received with MPI_Irecv and MPI_Test until done. */
    MPI_Request h[2];
    int done = 0;
    MPI_Irecv(d, 3, MPI_DOUBLE, partner, 8, MPI_COMM_WORLD, &h[0]);
    MPI_Isend(s, 3, MPI_DOUBLE, partner, 8, MPI_COMM_WORLD, &h[1]);
    while (!done) MPI_Test(&h[0], &done, MPI_STATUS_IGNORE);
    MPI_Wait(&h[1], MPI_STATUS_IGNORE);

    /* Collectives on the world. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(d, 1 << 20, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) MPI_Allreduce(s, d, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Alltoall(s, 32, MPI_BYTE, d, 32, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Allgather(s, 256, MPI_BYTE, d, 256, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Reduce(s, d, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Gather(s, 16, MPI_BYTE, d, 16, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Scatter(s, 16, MPI_BYTE, d, 16, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Request nb;
    MPI_Iallreduce(s, d, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nb);
    MPI_Wait(&nb, MPI_STATUS_IGNORE);
    MPI_Ibarrier(MPI_COMM_WORLD, &nb);
    MPI_Wait(&nb, MPI_STATUS_IGNORE);

    /* Halves: ranks below p/2 and the rest. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, r < p / 2, r, &half);
    for (int i = 0; i < 2; i++) MPI_Allreduce(s, d, 1024, MPI_DOUBLE, MPI_SUM, half);
    int hr, hp;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hp);
    if (hp > 1 && hr == 0) MPI_Send(s, 200, MPI_BYTE, 1, 9, half);
    if (hp > 1 && hr == 1) MPI_Recv(d, 200, MPI_BYTE, 0, 9, half, MPI_STATUS_IGNORE);
    MPI_Comm_free(&half);

    /* The node's ranks. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
    MPI_Bcast(d, 100, MPI_BYTE, 0, node);
    MPI_Comm_free(&node);

    /* One-sided: 64 bytes put to the right, 32 bytes got from the right. */
    MPI_Win win;
    char *base;
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_fence(0, win);
    MPI_Put(s, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    MPI_Get(d, 32, MPI_BYTE, right, 0, 32, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);

    free(reqs);
    free(s);
    free(d);
    /* KNOWN_TRAFFIC_DIE=R: rank R dies instead of finalizing, after the others had time to. */
    const char *die = getenv("KNOWN_TRAFFIC_DIE");
    if (die && atoi(die) == r) {
        sleep(2);
        _exit(3);
    }
    MPI_Finalize();
    return 0;
}
