/* SPDX-License-Identifier: BSD-3-Clause */
/* The counters: per call × communicator size × channel × log2 size bin, the
 * messages, bytes and ticks inside the call. Static: no allocation at all. */
#include "prof.h"

prof_state prof;
cell prof_cells[NCALLS][NSIZES][NCHANNELS][NBINS];

const char *const prof_call_names[NCALLS] = {
#define PROF_NAME(name, family) "MPI_" #name,
    PROF_CALLS(PROF_NAME)
#undef PROF_NAME
};

const char *const prof_call_families[NCALLS] = {
#define PROF_FAMILY(name, family) #family,
    PROF_CALLS(PROF_FAMILY)
#undef PROF_FAMILY
};
