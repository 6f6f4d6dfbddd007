/* SPDX-License-Identifier: BSD-3-Clause */
#include "p2p.h"

size_t p2p_footprint(size_t bytes, int np) { (void)np; return bytes; }

void p2p_describe(series *s)
{
    s->count = (long)s->bytes;
    s->datatype = "MPI_BYTE";
}

void p2p_post_recv(series *s, long rep, int tag)
{
    if (s->role == ROLE_RESPONDER)
        MPI_Irecv(buffers_recv(s->buf, s->bytes, rep), (int)s->bytes, MPI_BYTE, s->peer, tag, s->world, &s->reqs[0]);
}
