/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "machine.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawfmt.h"

enum { ID_LEN = 64 };

/* The boot id is one per running kernel, the same in every namespace. */
static int read_boot_id(char id[ID_LEN])
{
    memset(id, 0, ID_LEN);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return -1;
    int ok = fgets(id, ID_LEN, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

int ranks_sharing_cpus(MPI_Comm world, int node_size)
{
    int size, mine_ok, all_ok;
    MPI_Comm_size(world, &size);
    char id[ID_LEN];
    mine_ok = read_boot_id(id) == 0;
    MPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
    if (!all_ok) return node_size;
    char *ids = malloc((size_t)size * ID_LEN);
    MPI_Allgather(id, ID_LEN, MPI_CHAR, ids, ID_LEN, MPI_CHAR, world);
    int same = 0;
    for (int r = 0; r < size; r++) same += !strncmp(ids + (size_t)r * ID_LEN, id, ID_LEN);
    free(ids);
    return same > node_size ? same : node_size;
}

static void cpu_list(char *out, size_t n)
{
    cpu_set_t set;
    size_t used = 0;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set)) return;
    for (int c = 0; c < CPU_SETSIZE && used < n; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set)) end++;
        used += (size_t)snprintf(out + used, n - used, used ? ",%d" : "%d", c);
        if (end > c && used < n) used += (size_t)snprintf(out + used, n - used, "-%d", end);
        c = end;
    }
}

void header_facts_gather(header_facts *f, const timer *in_use)
{
    int len, major, minor;
    MPI_Get_processor_name(f->host, &len);
    MPI_Get_library_version(f->lib, &len);
    while (len > 0 && (f->lib[len - 1] == '\n' || f->lib[len - 1] == ' ')) f->lib[--len] = 0;
    MPI_Get_version(&major, &minor);
    snprintf(f->version, sizeof f->version, "%d.%d", major, minor);
    cpu_list(f->cpus, sizeof f->cpus);
    /* Every timer's cost and resolution, for choosing between them. */
    for (int k = TIMER_TSC; k <= TIMER_WTIME; k++) timer_measure(&f->probes[k], (timer_kind)k, in_use->tsc_period_s);
}
