/* SPDX-License-Identifier: BSD-3-Clause */
/* Channels: which ranks share a node, from MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED) at MPI_Init, and for every communicator at its first
 * use the world rank and the channel of each of its ranks. Lookups read a
 * fixed open-addressing table without locks; only inserting (once per
 * communicator) takes a mutex. */
#include "prof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NCOMMS 4096 /* live communicators tracked; calls on more are counted as unattributed */
#define FREED 1

static comm_info table[NCOMMS];
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;
comm_info *prof_world;
comm_info *prof_last_comm;

static int size_slot(int size)
{
    for (int i = 0; i < prof.nsizes; i++)
        if (prof.comm_sizes[i] == size) return i;
    if (prof.nsizes < NSIZES - 1) {
        prof.comm_sizes[prof.nsizes] = size;
        return prof.nsizes++;
    }
    return NSIZES - 1; /* "other sizes" */
}

/* Member lists for the trace: pointers to communicators' `world` arrays,
 * which are never freed; the same list is kept once. */
#define NMEMBERS 1024
static const int *member_lists[NMEMBERS];
static int member_sizes[NMEMBERS], nmember_lists;
static pthread_mutex_t members_lock = PTHREAD_MUTEX_INITIALIZER;

static int members_of(const int *world, int size)
{
    int found = -1;
    pthread_mutex_lock(&members_lock);
    for (int i = 0; i < nmember_lists && found < 0; i++)
        if (member_sizes[i] == size && memcmp(member_lists[i], world, sizeof(int) * (size_t)size) == 0) found = i;
    if (found < 0 && nmember_lists < NMEMBERS) {
        member_lists[nmember_lists] = world;
        member_sizes[nmember_lists] = size;
        found = nmember_lists++;
    }
    pthread_mutex_unlock(&members_lock);
    return found;
}

int comm_members_count(void) { return nmember_lists; }

const int *comm_members(int i, int *size)
{
    *size = member_sizes[i];
    return member_lists[i];
}

static int channel_to(int world_rank)
{
    if (world_rank == prof.rank) return CH_SELF;
    return prof.node_of[world_rank] == prof.node ? CH_NODE : CH_NET;
}

/* Fills `c` (but not its key) from the group whose ranks it names. */
static void describe(comm_info *c, MPI_Group group)
{
    MPI_Group world_group;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_size(group, &c->size);
    int *ranks = malloc(sizeof(int) * (size_t)c->size);
    c->world = malloc(sizeof(int) * (size_t)c->size);
    c->chan = malloc((size_t)c->size);
    for (int i = 0; i < c->size; i++) ranks[i] = i;
    PMPI_Group_translate_ranks(group, c->size, ranks, world_group, c->world);
    c->span = CH_SELF;
    for (int i = 0; i < c->size; i++) {
        /* A rank of another job (spawned, connected) is on another node as far as we know. */
        c->chan[i] = c->world[i] == MPI_UNDEFINED ? CH_NET : (unsigned char)channel_to(c->world[i]);
        if (c->world[i] == MPI_UNDEFINED) c->world[i] = -1;
        if (c->chan[i] > c->span) c->span = c->chan[i];
    }
    c->size_slot = size_slot(c->size);
    c->members = members_of(c->world, c->size);
    free(ranks);
    PMPI_Group_free(&world_group);
}

void channels_init(void)
{
    MPI_Comm node_comm;
    int node_rank, leader;
    PMPI_Comm_rank(MPI_COMM_WORLD, &prof.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &prof.world_size);
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, prof.rank, MPI_INFO_NULL, &node_comm);
    PMPI_Comm_rank(node_comm, &node_rank);
    /* A node is named by its lowest world rank, then numbered in world order. */
    leader = prof.rank;
    PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node_comm);
    PMPI_Comm_free(&node_comm);
    int *leaders = malloc(sizeof(int) * (size_t)prof.world_size);
    prof.node_of = malloc(sizeof(int) * (size_t)prof.world_size);
    PMPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    prof.nodes = 0;
    for (int r = 0; r < prof.world_size; r++) {
        if (leaders[r] == r) prof.node_of[r] = prof.nodes++;
        else prof.node_of[r] = prof.node_of[leaders[r]];
    }
    prof.node = prof.node_of[prof.rank];
    free(leaders);
    prof_world = comm_lookup_slow(MPI_COMM_WORLD);
}

static unsigned slot_of(uint64_t key) { return (unsigned)((key * 0x9e3779b97f4a7c15ULL) >> 52) % NCOMMS; }

comm_info *comm_lookup_slow(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) return NULL;
    uint64_t key = handle_key(&comm, sizeof comm);
    unsigned s = slot_of(key);
    for (unsigned i = 0; i < NCOMMS; i++) {
        comm_info *c = &table[(s + i) % NCOMMS];
        uint64_t k = __atomic_load_n(&c->key, __ATOMIC_ACQUIRE);
        if (k == key) {
            __atomic_store_n(&prof_last_comm, c, __ATOMIC_RELAXED);
            return c;
        }
        if (k == 0) break;
    }
    /* First use: describe it under the lock, then publish the key. */
    pthread_mutex_lock(&insert_lock);
    comm_info *found = NULL;
    for (unsigned i = 0; i < NCOMMS && !found; i++) {
        comm_info *c = &table[(s + i) % NCOMMS];
        if (c->key == key) found = c;
        else if (c->key == 0 || c->key == FREED) {
            int inter = 0;
            MPI_Group group;
            PMPI_Comm_test_inter(comm, &inter);
            if (inter) PMPI_Comm_remote_group(comm, &group);
            else PMPI_Comm_group(comm, &group);
            describe(c, group);
            PMPI_Group_free(&group);
            __atomic_store_n(&c->key, key, __ATOMIC_RELEASE);
            found = c;
        }
    }
    if (!found) prof_add(&prof.unattributed, 1);
    else __atomic_store_n(&prof_last_comm, found, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&insert_lock);
    return found;
}

/* A window's ranks are its group's; windows keep their own description. */
comm_info *comm_of_group(MPI_Group group, MPI_Comm inherit_from)
{
    (void)inherit_from;
    comm_info *c = calloc(1, sizeof *c);
    describe(c, group);
    c->key = FREED;
    return c;
}

/* MPI_Comm_free: the handle may come back for another communicator. */
void comm_forget(MPI_Comm comm)
{
    uint64_t key = handle_key(&comm, sizeof comm);
    pthread_mutex_lock(&insert_lock);
    unsigned s = slot_of(key);
    for (unsigned i = 0; i < NCOMMS; i++) {
        comm_info *c = &table[(s + i) % NCOMMS];
        if (c->key == key) {
            if (prof_last_comm == c) __atomic_store_n(&prof_last_comm, NULL, __ATOMIC_RELAXED);
            __atomic_store_n(&c->key, FREED, __ATOMIC_RELEASE);
            /* Its arrays stay: another thread may still read them (a few bytes per freed communicator). */
            break;
        }
        if (c->key == 0) break;
    }
    pthread_mutex_unlock(&insert_lock);
}
