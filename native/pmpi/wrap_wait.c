/* SPDX-License-Identifier: BSD-3-Clause */
/* The wait and test families: timed, and the tracked requests among those
 * completed (receives, persistent requests) accounted. Handles are read
 * before the call (completion sets them to MPI_REQUEST_NULL); when the
 * caller ignores statuses, ours take their place. */
#include <stdlib.h>

#include "requests.h"
#include "wrap.h"

#define LOCAL 64 /* requests handled on the stack; more take one allocation */

typedef struct pending {
    req_entry *one[LOCAL];
    MPI_Status st[LOCAL];
    req_entry **entries;
    MPI_Status *statuses;
    int any;
} pending;

/* Looks the requests up; returns the statuses to pass to the call. */
static MPI_Status *before(pending *p, int n, MPI_Request reqs[], MPI_Status *statuses)
{
    p->any = 0;
    p->entries = n <= LOCAL ? p->one : malloc(sizeof(req_entry *) * (size_t)n);
    for (int i = 0; i < n; i++) {
        p->entries[i] = req_find(reqs[i]);
        p->any |= p->entries[i] != NULL;
    }
    if (!p->any || statuses != MPI_STATUSES_IGNORE) return p->statuses = statuses;
    return p->statuses = n <= LOCAL ? p->st : malloc(sizeof(MPI_Status) * (size_t)n);
}

static void done(pending *p, int i)
{
    if (p->any && p->entries[i]) req_completed(p->entries[i], &p->statuses[i]);
}

static void after(pending *p, MPI_Status *given)
{
    if (p->entries != p->one) free(p->entries);
    if (p->statuses != given && p->statuses != p->st) free(p->statuses);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Wait(req, status));
    req_entry *e = prof_tracked ? req_find(*req) : NULL;
    MPI_Status mine;
    MPI_Status *st = (e && status == MPI_STATUS_IGNORE) ? &mine : status;
    TIMED(PMPI_Wait(req, st));
    prof_record(CALL_Wait, NULL, -1, CH_NONE, 0, t0, t1, SITE);
    if (e && rc == MPI_SUCCESS) req_completed(e, st);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Test(req, flag, status));
    req_entry *e = prof_tracked ? req_find(*req) : NULL;
    MPI_Status mine;
    MPI_Status *st = (e && status == MPI_STATUS_IGNORE) ? &mine : status;
    TIMED(PMPI_Test(req, flag, st));
    prof_record(CALL_Test, NULL, -1, CH_NONE, 0, t0, t1, SITE);
    if (e && rc == MPI_SUCCESS && *flag) req_completed(e, st);
    return rc;
}

#define ALL(NAME, CALL_ARGS, COMPLETED)                                         \
    {                                                                           \
        if (!prof_tracked) {                                                    \
            TIMED(PMPI_##NAME CALL_ARGS);                                       \
            prof_record(CALL_##NAME, NULL, -1, CH_NONE, 0, t0, t1, SITE);       \
            return rc;                                                          \
        }                                                                       \
        pending p;                                                              \
        MPI_Status *given = statuses;                                           \
        statuses = before(&p, n, reqs, statuses);                               \
        TIMED(PMPI_##NAME CALL_ARGS);                                           \
        prof_record(CALL_##NAME, NULL, -1, CH_NONE, 0, t0, t1, SITE);           \
        if (rc == MPI_SUCCESS) COMPLETED;                                       \
        after(&p, given);                                                       \
        return rc;                                                              \
    }

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    PASS_IF_OFF(PMPI_Waitall(n, reqs, statuses));
    ALL(Waitall, (n, reqs, statuses), for (int i = 0; i < n; i++) done(&p, i))
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    PASS_IF_OFF(PMPI_Testall(n, reqs, flag, statuses));
    ALL(Testall, (n, reqs, flag, statuses), if (*flag) for (int i = 0; i < n; i++) done(&p, i))
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    PASS_IF_OFF(PMPI_Waitsome(n, reqs, outcount, indices, statuses));
    ALL(Waitsome, (n, reqs, outcount, indices, statuses),
        if (*outcount != MPI_UNDEFINED) for (int i = 0; i < *outcount; i++) {
            /* statuses[i] belongs to request indices[i] */
            if (p.any && p.entries[indices[i]]) req_completed(p.entries[indices[i]], &p.statuses[i]);
        })
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    PASS_IF_OFF(PMPI_Testsome(n, reqs, outcount, indices, statuses));
    ALL(Testsome, (n, reqs, outcount, indices, statuses),
        if (*outcount != MPI_UNDEFINED) for (int i = 0; i < *outcount; i++) {
            if (p.any && p.entries[indices[i]]) req_completed(p.entries[indices[i]], &p.statuses[i]);
        })
}

static void any_one(int rc, pending *p, const int *index, MPI_Status *st, int completed)
{
    if (rc == MPI_SUCCESS && completed && *index != MPI_UNDEFINED && p->any && p->entries[*index])
        req_completed(p->entries[*index], st);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Waitany(n, reqs, index, status));
    pending p = {.any = 0};
    MPI_Status mine;
    int looked = prof_tracked != 0;
    if (looked) before(&p, n, reqs, MPI_STATUSES_IGNORE);
    MPI_Status *st = (p.any && status == MPI_STATUS_IGNORE) ? &mine : status;
    TIMED(PMPI_Waitany(n, reqs, index, st));
    prof_record(CALL_Waitany, NULL, -1, CH_NONE, 0, t0, t1, SITE);
    any_one(rc, &p, index, st, 1);
    if (looked) after(&p, MPI_STATUSES_IGNORE);
    return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    PASS_IF_OFF(PMPI_Testany(n, reqs, index, flag, status));
    pending p = {.any = 0};
    MPI_Status mine;
    int looked = prof_tracked != 0;
    if (looked) before(&p, n, reqs, MPI_STATUSES_IGNORE);
    MPI_Status *st = (p.any && status == MPI_STATUS_IGNORE) ? &mine : status;
    TIMED(PMPI_Testany(n, reqs, index, flag, st));
    prof_record(CALL_Testany, NULL, -1, CH_NONE, 0, t0, t1, SITE);
    any_one(rc, &p, index, st, *flag);
    if (looked) after(&p, MPI_STATUSES_IGNORE);
    return rc;
}
