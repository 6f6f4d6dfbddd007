/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided wrappers: put, get, accumulate (bytes of the origin buffer,
 * channel of the target) and the synchronization calls (time only). A
 * window's ranks are described once, when it is created. */
#include <stdlib.h>

#include "wrap.h"

#define NWINS 256 /* live windows; operations on more are counted with no channel */

static struct { uint64_t key; comm_info *info; } wins[NWINS];

static void remember(MPI_Win win)
{
    MPI_Group group;
    PMPI_Win_get_group(win, &group);
    comm_info *info = comm_of_group(group, MPI_COMM_NULL);
    PMPI_Group_free(&group);
    uint64_t key = handle_key(&win, sizeof win);
    for (int i = 0; i < NWINS; i++)
        if (wins[i].key == 0) {
            wins[i].info = info;
            wins[i].key = key;
            return;
        }
}

static comm_info *win_info(MPI_Win win)
{
    uint64_t key = handle_key(&win, sizeof win);
    for (int i = 0; i < NWINS; i++)
        if (wins[i].key == key) return wins[i].info;
    return NULL;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    int rc = PMPI_Win_create(base, size, disp, info, comm, win);
    if (prof.on && rc == MPI_SUCCESS) remember(*win);
    return rc;
}

int MPI_Win_allocate(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win)
{
    int rc = PMPI_Win_allocate(size, disp, info, comm, base, win);
    if (prof.on && rc == MPI_SUCCESS) remember(*win);
    return rc;
}

int MPI_Win_free(MPI_Win *win)
{
    uint64_t key = handle_key(win, sizeof *win);
    for (int i = 0; i < NWINS; i++)
        if (wins[i].key == key) {
            free(wins[i].info->world);
            free(wins[i].info->chan);
            free(wins[i].info);
            wins[i].key = 0;
        }
    return PMPI_Win_free(win);
}

static inline void moved(int call, MPI_Win win, int target, uint64_t bytes, uint64_t t0, uint64_t t1,
                         void *site)
{
    comm_info *c = win_info(win);
    prof_record(call, c, target, comm_channel(c, target), bytes, t0, t1, site);
}

int MPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
            MPI_Datatype ttype, MPI_Win win)
{
    PASS_IF_OFF(PMPI_Put(obuf, ocount, otype, target, tdisp, tcount, ttype, win));
    TIMED(PMPI_Put(obuf, ocount, otype, target, tdisp, tcount, ttype, win));
    moved(CALL_Put, win, target, type_bytes(ocount, otype), t0, t1, SITE);
    return rc;
}

int MPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, int tcount,
            MPI_Datatype ttype, MPI_Win win)
{
    PASS_IF_OFF(PMPI_Get(obuf, ocount, otype, target, tdisp, tcount, ttype, win));
    TIMED(PMPI_Get(obuf, ocount, otype, target, tdisp, tcount, ttype, win));
    moved(CALL_Get, win, target, type_bytes(ocount, otype), t0, t1, SITE);
    return rc;
}

int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    PASS_IF_OFF(PMPI_Accumulate(obuf, ocount, otype, target, tdisp, tcount, ttype, op, win));
    TIMED(PMPI_Accumulate(obuf, ocount, otype, target, tdisp, tcount, ttype, op, win));
    moved(CALL_Accumulate, win, target, type_bytes(ocount, otype), t0, t1, SITE);
    return rc;
}

#define SYNC(NAME, ARGS, CALL_ARGS)                                      \
    int MPI_##NAME ARGS                                                  \
    {                                                                    \
        PASS_IF_OFF(PMPI_##NAME CALL_ARGS);                              \
        TIMED(PMPI_##NAME CALL_ARGS);                                    \
        prof_record(CALL_##NAME, win_info(win), -1, CH_NONE, 0, t0, t1, SITE); \
        return rc;                                                       \
    }
SYNC(Win_fence, (int assert, MPI_Win win), (assert, win))
SYNC(Win_lock, (int type, int rank, int assert, MPI_Win win), (type, rank, assert, win))
SYNC(Win_unlock, (int rank, MPI_Win win), (rank, win))
SYNC(Win_flush, (int rank, MPI_Win win), (rank, win))
