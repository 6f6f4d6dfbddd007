/* SPDX-License-Identifier: BSD-3-Clause */
/* Fortran bindings (mpif.h and `use mpi`) of Open MPI, whose Fortran layer
 * calls the PMPI_ functions directly, past the C wrappers. Each wrapper here
 * counts the call from its C handles and forwards to Open MPI's own
 * pmpi_*_ (found when first called: C programs never load the Fortran
 * library). MPICH's Fortran layer calls MPI_*, which the C wrappers already
 * count, so nothing here is built for it. */
#include <mpi.h>

#ifdef OPEN_MPI
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "libview.h"
#include "requests.h"
#include "wrap.h"

#define FORWARD(name, type) \
    static type real; \
    if (!real) real = (type)dlsym(RTLD_DEFAULT, #name); \
    if (!real) abort()

typedef MPI_Fint F;
/* Open MPI's C header has no MPI_F_STATUS_SIZE; its Fortran status is the C one, as integers. */
#define F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))

static uint64_t f_bytes(const F *count, const F *type) { return type_bytes(*count, MPI_Type_f2c(*type)); }

#define F_SEND(lname, NAME)                                                                     \
    typedef void (*lname##_fn)(void *, F *, F *, F *, F *, F *, F *);                           \
    void lname##_(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)             \
    {                                                                                           \
        FORWARD(p##lname##_, lname##_fn);                                                       \
        if (!prof.on) return real(buf, count, type, dest, tag, comm, ierr);                     \
        uint64_t t0 = prof_ticks();                                                             \
        real(buf, count, type, dest, tag, comm, ierr);                                          \
        uint64_t t1 = prof_ticks();                                                             \
        comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));                                        \
        uint64_t bytes = f_bytes(count, type);                                                  \
        prof_record(CALL_##NAME, c, *dest, comm_channel(c, *dest), bytes, t0, t1, SITE);        \
        peers_sent(c, *dest, bytes);                                                            \
    }
F_SEND(mpi_send, Send)
F_SEND(mpi_ssend, Ssend)

#define F_ISEND(lname, NAME)                                                                    \
    typedef void (*lname##_fn)(void *, F *, F *, F *, F *, F *, F *, F *);                      \
    void lname##_(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)     \
    {                                                                                           \
        FORWARD(p##lname##_, lname##_fn);                                                       \
        if (!prof.on) return real(buf, count, type, dest, tag, comm, req, ierr);                \
        uint64_t t0 = prof_ticks();                                                             \
        real(buf, count, type, dest, tag, comm, req, ierr);                                     \
        uint64_t t1 = prof_ticks();                                                             \
        comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));                                        \
        uint64_t bytes = f_bytes(count, type);                                                  \
        prof_record(CALL_##NAME, c, *dest, comm_channel(c, *dest), bytes, t0, t1, SITE);        \
        peers_sent(c, *dest, bytes);                                                            \
    }
F_ISEND(mpi_isend, Isend)

/* A completed receive's Fortran status, as C. */
static void f_received(int call, MPI_Comm comm, const F *fstatus, uint64_t t0, uint64_t t1, void *site)
{
    MPI_Status st;
    int bytes = 0;
    MPI_Status_f2c(fstatus, &st);
    comm_info *c = comm_lookup(comm);
    if (st.MPI_SOURCE == MPI_PROC_NULL) {
        prof_record(call, c, -1, CH_NONE, 0, t0, t1, site);
        return;
    }
    PMPI_Get_count(&st, MPI_BYTE, &bytes);
    prof_record(call, c, st.MPI_SOURCE, comm_channel(c, st.MPI_SOURCE), (uint64_t)bytes, t0, t1, site);
    peers_received(c, st.MPI_SOURCE, (uint64_t)bytes);
}

typedef void (*recv_fn)(void *, F *, F *, F *, F *, F *, F *, F *);
void mpi_recv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr)
{
    FORWARD(pmpi_recv_, recv_fn);
    if (!prof.on) return real(buf, count, type, src, tag, comm, status, ierr);
    F mine[F_STATUS_SIZE];
    F *st = status == MPI_F_STATUS_IGNORE ? mine : status;
    uint64_t t0 = prof_ticks();
    real(buf, count, type, src, tag, comm, st, ierr);
    uint64_t t1 = prof_ticks();
    if (*ierr == MPI_SUCCESS) f_received(CALL_Recv, MPI_Comm_f2c(*comm), st, t0, t1, SITE);
}

typedef void (*irecv_fn)(void *, F *, F *, F *, F *, F *, F *, F *);
void mpi_irecv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *req, F *ierr)
{
    FORWARD(pmpi_irecv_, irecv_fn);
    if (!prof.on) return real(buf, count, type, src, tag, comm, req, ierr);
    uint64_t t0 = prof_ticks();
    real(buf, count, type, src, tag, comm, req, ierr);
    uint64_t t1 = prof_ticks();
    if (*ierr != MPI_SUCCESS) return;
    comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));
    if (*src == MPI_PROC_NULL) prof_record(CALL_Irecv, c, -1, CH_NONE, 0, t0, t1, SITE);
    else req_track(MPI_Request_f2c(*req), (req_entry){.call = CALL_Irecv, .recv = 1, .comm = c, .site = SITE,
                                                      .t0 = t0, .t1 = t1});
}

static void f_completed(req_entry *e, const F *fstatus)
{
    MPI_Status st;
    MPI_Status_f2c(fstatus, &st);
    req_completed(e, &st);
}

typedef void (*wait_fn)(F *, F *, F *);
void mpi_wait_(F *req, F *status, F *ierr)
{
    FORWARD(pmpi_wait_, wait_fn);
    if (!prof.on) return real(req, status, ierr);
    req_entry *e = prof_tracked ? req_find(MPI_Request_f2c(*req)) : NULL;
    F mine[F_STATUS_SIZE];
    F *st = (e && status == MPI_F_STATUS_IGNORE) ? mine : status;
    uint64_t t0 = prof_ticks();
    real(req, st, ierr);
    uint64_t t1 = prof_ticks();
    prof_record(CALL_Wait, NULL, -1, CH_NONE, 0, t0, t1, SITE);
    if (e && *ierr == MPI_SUCCESS) f_completed(e, st);
}

typedef void (*waitall_fn)(F *, F *, F *, F *);
void mpi_waitall_(F *n, F *reqs, F *statuses, F *ierr)
{
    FORWARD(pmpi_waitall_, waitall_fn);
    if (!prof.on) return real(n, reqs, statuses, ierr);
    req_entry **entries = NULL;
    F *st = statuses;
    int any = 0;
    if (prof_tracked && *n > 0) {
        entries = malloc(sizeof(req_entry *) * (size_t)*n);
        for (int i = 0; i < *n; i++) any |= (entries[i] = req_find(MPI_Request_f2c(reqs[i]))) != NULL;
        if (any && statuses == MPI_F_STATUSES_IGNORE) st = malloc(sizeof(F) * F_STATUS_SIZE * (size_t)*n);
    }
    uint64_t t0 = prof_ticks();
    real(n, reqs, st, ierr);
    uint64_t t1 = prof_ticks();
    prof_record(CALL_Waitall, NULL, -1, CH_NONE, 0, t0, t1, SITE);
    if (any && *ierr == MPI_SUCCESS)
        for (int i = 0; i < *n; i++)
            if (entries[i]) f_completed(entries[i], st + (size_t)i * F_STATUS_SIZE);
    if (st != statuses) free(st);
    free(entries);
}

typedef void (*barrier_fn)(F *, F *);
void mpi_barrier_(F *comm, F *ierr)
{
    FORWARD(pmpi_barrier_, barrier_fn);
    if (!prof.on) return real(comm, ierr);
    libview_enter(CALL_Barrier, MPI_Comm_f2c(*comm));
    uint64_t t0 = prof_ticks();
    real(comm, ierr);
    uint64_t t1 = prof_ticks();
    libview_leave();
    comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));
    prof_record(CALL_Barrier, c, -1, c ? c->span : CH_NONE, 0, t0, t1, SITE);
}

typedef void (*bcast_fn)(void *, F *, F *, F *, F *, F *);
void mpi_bcast_(void *buf, F *count, F *type, F *root, F *comm, F *ierr)
{
    FORWARD(pmpi_bcast_, bcast_fn);
    if (!prof.on) return real(buf, count, type, root, comm, ierr);
    libview_enter(CALL_Bcast, MPI_Comm_f2c(*comm));
    uint64_t t0 = prof_ticks();
    real(buf, count, type, root, comm, ierr);
    uint64_t t1 = prof_ticks();
    libview_leave();
    comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));
    prof_record(CALL_Bcast, c, (int)*root, c ? c->span : CH_NONE, f_bytes(count, type), t0, t1, SITE);
}

typedef void (*allreduce_fn)(void *, void *, F *, F *, F *, F *, F *);
void mpi_allreduce_(void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm, F *ierr)
{
    FORWARD(pmpi_allreduce_, allreduce_fn);
    if (!prof.on) return real(sbuf, rbuf, count, type, op, comm, ierr);
    libview_enter(CALL_Allreduce, MPI_Comm_f2c(*comm));
    uint64_t t0 = prof_ticks();
    real(sbuf, rbuf, count, type, op, comm, ierr);
    uint64_t t1 = prof_ticks();
    libview_leave();
    comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));
    prof_record(CALL_Allreduce, c, -1, c ? c->span : CH_NONE, f_bytes(count, type), t0, t1, SITE);
}

typedef void (*reduce_fn)(void *, void *, F *, F *, F *, F *, F *, F *);
void mpi_reduce_(void *sbuf, void *rbuf, F *count, F *type, F *op, F *root, F *comm, F *ierr)
{
    FORWARD(pmpi_reduce_, reduce_fn);
    if (!prof.on) return real(sbuf, rbuf, count, type, op, root, comm, ierr);
    libview_enter(CALL_Reduce, MPI_Comm_f2c(*comm));
    uint64_t t0 = prof_ticks();
    real(sbuf, rbuf, count, type, op, root, comm, ierr);
    uint64_t t1 = prof_ticks();
    libview_leave();
    comm_info *c = comm_lookup(MPI_Comm_f2c(*comm));
    prof_record(CALL_Reduce, c, (int)*root, c ? c->span : CH_NONE, f_bytes(count, type), t0, t1, SITE);
}

/* MPI_Init and MPI_Finalize from Fortran: Open MPI's go straight to PMPI_Init / PMPI_Finalize. */
typedef void (*init_fn)(F *);
void mpi_init_(F *ierr)
{
    FORWARD(pmpi_init_, init_fn);
    int argc = 0;
    char **argv = NULL;
    *ierr = MPI_Init(&argc, &argv) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
    (void)real;
}

typedef void (*finalize_fn)(F *);
void mpi_finalize_(F *ierr)
{
    FORWARD(pmpi_finalize_, finalize_fn);
    *ierr = MPI_Finalize();
    (void)real;
}
#endif
