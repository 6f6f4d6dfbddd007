/* SPDX-License-Identifier: BSD-3-Clause */
#include "trace.h"

#include <stdlib.h>

#include "../clock/clock.h"
#include "../clock/sync.h"
#include "prof.h"

static trace_event *events;
static uint64_t capacity, used; /* used beyond capacity: events dropped */
static timer clock_timer;
static sync_ctx clock_sync;
#define SYNC_POINTS 10

void trace_start(uint64_t cap)
{
    MPI_Comm node;
    events = malloc(sizeof(trace_event) * cap);
    if (!events) return;
    capacity = cap;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    timer_init_exact(&clock_timer, TIMER_TSC, node); /* the events' timeline: counter ticks */
    PMPI_Comm_free(&node);
    sync_init(&clock_sync, &clock_timer, MPI_COMM_WORLD, 20, 1);
    sync_measure(&clock_sync, SYNC_POINTS);
    prof.tracing = 1;
}

void trace_add(int call, int peer_world, int comm_size, int members, uint64_t bytes, uint64_t t0, uint64_t t1)
{
    uint64_t i = prof.threaded ? __atomic_fetch_add(&used, 1, __ATOMIC_RELAXED) : used++;
    if (i >= capacity) return;
    events[i] = (trace_event){t0, t1, bytes, call, peer_world, comm_size, members};
}

void trace_finish(void)
{
    if (!prof.tracing) return;
    prof.tracing = 0;
    sync_measure(&clock_sync, SYNC_POINTS);
}

int trace_write(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    uint64_t n = used < capacity ? used : capacity;
    size_t written = fwrite(events, sizeof(trace_event), n, f);
    return (fclose(f) == 0 && written == n) ? 0 : -1;
}

void trace_describe(FILE *f)
{
    uint64_t n = used < capacity ? used : capacity;
    const clock_model *m = &clock_sync.model;
    fprintf(f, "{\"events\": %llu, \"dropped\": %llu, \"capacity\": %llu, "
               "\"record\": [\"t0 u8\", \"t1 u8\", \"bytes u8\", \"call i4\", \"peer i4\", \"comm_size i4\", \"comm i4\"], "
               "\"tsc_period_s\": %.17g, \"clock\": {\"offset_s\": %.17g, \"drift\": %.17g, \"ref_s\": %.17g, "
               "\"residual_s\": %.17g, \"sync_cost_s\": %.9g}",
            (unsigned long long)n, (unsigned long long)(used > capacity ? used - capacity : 0),
            (unsigned long long)capacity, clock_timer.tsc_period_s, m->offset_s, m->drift, m->ref_s,
            m->residual_s, clock_sync.cost_s);
    /* The communicators the events name (their "comm"), as world ranks. */
    fputs(", \"comms\": [", f);
    for (int i = 0; i < comm_members_count(); i++) {
        int size;
        const int *w = comm_members(i, &size);
        fputs(i ? ",[" : "[", f);
        for (int j = 0; j < size; j++) fprintf(f, "%s%d", j ? "," : "", w[j]);
        fputs("]", f);
    }
    fputs("]}", f);
}
