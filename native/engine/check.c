/* SPDX-License-Identifier: BSD-3-Clause */
/* --check: fill send buffers with a known pattern and verify what arrived. */
#include <stdio.h>
#include "bench.h"

void check_fill(unsigned char *p, size_t n, long who, long rep)
{
    for (size_t i = 0; i < n; i++) p[i] = check_byte(who, i, rep);
}

void check_fail(const series *s, long rep, const char *what, size_t index, long got, long want)
{
    fprintf(stderr,
            "mpiscope-engine: --check failed: %s, %zu bytes, rank %d, repetition %ld: element %zu is %ld, expected %ld\n",
            what, s->bytes, s->rank, rep, index, got, want);
    fflush(stderr);
    MPI_Abort(s->world, 3);
}

void check_verify(const series *s, const unsigned char *p, size_t n, long who, long rep, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = check_byte(who, i, rep), got = (unsigned char)(p[i] + s->corrupt);
        if (got != want) check_fail(s, rep, what, i, got, want);
    }
}
