/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's view per collective call (--library-view, Open MPI).
 *
 * Open MPI's pml monitoring component calls mca_common_monitoring_record_pml
 * (libmca_common_monitoring) for every message the pml sends, the
 * collective algorithms' included. Its MPI_T variables
 * (pml_monitoring_messages_count/size) would give the same counts per peer,
 * but Open MPI 4.1 marks them invalid after MPI_Init (MPI_T_pvar_get_info
 * answers MPI_T_ERR_INVALID; open-mpi/ompi#9260). So this library defines
 * the record function itself (LD_PRELOAD puts it first), attributes each
 * message sent while this thread is inside a blocking collective wrapper to
 * that collective, and passes the call on to Open MPI's own, whose counters
 * and finalize output stay as they were. */
#define _GNU_SOURCE
#include "libview.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

static libview_cell table[NCALLS][NSIZES];
__thread libview_cell *libview_current;

typedef void (*record_fn)(int, size_t, int);
static record_fn real_record;
#define RECORD "mca_common_monitoring_record_pml"

/* Open MPI's own record function: next after ours in the global scope, or
 * in libmca_common_monitoring loaded privately with the component. */
static int find_library(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    if (!strstr(info->dlpi_name, "libmca_common_monitoring")) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (h) *(record_fn *)found = (record_fn)dlsym(h, RECORD);
    return *(record_fn *)found != NULL;
}

static record_fn real(void)
{
    record_fn f = __atomic_load_n(&real_record, __ATOMIC_RELAXED);
    if (f) return f;
    f = (record_fn)dlsym(RTLD_NEXT, RECORD);
    if (!f) dl_iterate_phdr(find_library, &f);
    __atomic_store_n(&real_record, f, __ATOMIC_RELAXED);
    return f;
}

void libview_init(void)
{
    const char *on = getenv("MPISCOPE_PROFILE_LIBVIEW");
    prof.libview = on && atoi(on) > 0 && real() != NULL;
}

/* Non-blocking collectives send from progress, after their call returned:
 * they are not attributed (their messages count in no row here). */
void libview_enter_slow(int call, MPI_Comm comm)
{
    if (call >= CALL_Ibarrier && call <= CALL_Ireduce_scatter_block) return;
    comm_info *c = comm_lookup(comm);
    libview_cell *x = &table[call][c ? c->size_slot : NSIZES - 1];
    prof_add(&x->calls, 1);
    libview_current = x;
}

void mca_common_monitoring_record_pml(int world_rank, size_t data_size, int tag)
{
    libview_cell *x = libview_current;
    if (x && world_rank >= 0 && world_rank < prof.world_size) {
        int ch = world_rank == prof.rank ? CH_SELF : prof.node_of[world_rank] == prof.node ? CH_NODE : CH_NET;
        prof_add(&x->msgs[ch], 1);
        prof_add(&x->bytes[ch], data_size);
    }
    record_fn f = real();
    if (f) f(world_rank, data_size, tag);
}

void libview_describe(FILE *f)
{
    int first = 1;
    fputs("[", f);
    for (int call = 0; call < NCALLS; call++)
        for (int s = 0; s < NSIZES; s++) {
            const libview_cell *x = &table[call][s];
            if (!x->calls) continue;
            fprintf(f, "%s[%d,%d,%llu", first ? "" : ",", call, s, (unsigned long long)x->calls);
            for (int ch = 0; ch < NCHANNELS; ch++) fprintf(f, ",%llu", (unsigned long long)x->msgs[ch]);
            for (int ch = 0; ch < NCHANNELS; ch++) fprintf(f, ",%llu", (unsigned long long)x->bytes[ch]);
            fputs("]", f);
            first = 0;
        }
    fputs("]", f);
}
