/* SPDX-License-Identifier: BSD-3-Clause */
/* The recording backend of the schedule generator (record.c). */
#ifndef MPISCOPE_SIM_RECORD_H
#define MPISCOPE_SIM_RECORD_H

#include <mpi.h> /* the shim */
#include "schedule.h"

void rec_begin_rank(long rank, long size);
/* A reduction of `bytes` at this point of the rank's program. */
void rec_reduce(double bytes);
/* The rank's operations, valid until the next rec_begin_rank. */
void rec_end_rank(rank_sched *out);

#endif
