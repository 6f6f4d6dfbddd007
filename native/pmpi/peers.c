/* SPDX-License-Identifier: BSD-3-Clause */
/* The peer matrix: this rank's row (sent) and column (received) of user
 * point-to-point traffic, bytes and messages by world rank. Sized once at
 * MPI_Init; collectives and one-sided operations are not in it (Open MPI's
 * monitoring keeps those apart too). */
#include "prof.h"

#include <stdlib.h>

void peers_init(void)
{
    size_t n = (size_t)prof.world_size;
    prof.sent_bytes = calloc(n, sizeof(uint64_t));
    prof.sent_msgs = calloc(n, sizeof(uint64_t));
    prof.recv_bytes = calloc(n, sizeof(uint64_t));
    prof.recv_msgs = calloc(n, sizeof(uint64_t));
}
