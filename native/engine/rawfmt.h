/* SPDX-License-Identifier: BSD-3-Clause */
/* Every JSON the engine writes into raw files and onto stdout: the file
 * header, sync, series and trace blocks, the progress line. The only code
 * that writes what docs/reference/formats/raw-files.md documents; record.c stores the bytes. */
#ifndef MPISCOPE_RAWFMT_H
#define MPISCOPE_RAWFMT_H

#include <mpi.h>
#include "engine.h"
#include "stoprule.h"

struct coll_trace;
#include "../transport/tp.h"

/* What the file header says about this rank's machine and MPI library
 * (gathered by header_facts_gather, machine.c). */
typedef struct header_facts {
    char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING], cpus[1024], version[16];
    timer probes[TIMER_WTIME + 1]; /* every timer's cost and resolution */
} header_facts;

/* Each returns 0, or -1 with errno set (I/O error). */
int rawfmt_open(engine *e, const header_facts *f, int argc, char **argv);
int rawfmt_sync(engine *e, const char *phase);
int rawfmt_series(engine *e, const bench_def *def, const series *s, const series_outcome *out);
int rawfmt_trace(struct rawfile *raw, const series *s, const char *bench, const struct coll_trace *tr, long reps);
/* A series some rank cannot run: its params say why. */
void rawfmt_skip_params(series *s, const char *why);
/* The benchmarks' own "params" (rawfmt_params.c); a negative count or a
 * NULL address leaves its key out. */
typedef struct overhead_params {
    int receive;
    double step, compute_s, compute_nominal_s, g0_s, fake_overhead_s;
    long msgs;
} overhead_params;
typedef struct layer_params {
    const char *layer, *address;
    long msgs, wire_bytes, ring_bytes;
    int port;
} layer_params;
void rawfmt_params_flood(series *s, int queue_depth, long msgs);
void rawfmt_params_overhead(series *s, const overhead_params *p);
void rawfmt_params_rma(series *s, int get, int fence, long msgs, int queue_depth);
void rawfmt_params_layer(series *s, const layer_params *p);
void rawfmt_params_segment(series *s, size_t segment);
/* The transport lab's (bench/transport.c); a negative number leaves its key out. */
void rawfmt_params_transport(series *s, const tp_info *t, long msgs, double skew_s, double compute_s,
                             double compute_actual_s);
void rawfmt_params_poll(series *s, const char *polling, int socket_every, int skip_max);

/* Method blocks and their "@progress {...}" line (rawfmt_methods.c, methods/). */
struct mctx;
struct mop_traits;
int rawfmt_method(engine *e, const struct mctx *m, const struct mop_traits *tr);
void rawfmt_method_progress(const struct mctx *m);
/* The "methods" list of --describe. */
struct strbuf;
void rawfmt_methods_describe(struct strbuf *b);

/* Rank 0's "@progress {...}" line on stdout after each series. */
void rawfmt_progress(const bench_def *def, const series *s, const series_outcome *out);
/* Rank 0's seconds per phase, on stdout: "@timing {...}". */
void rawfmt_timing(const phases *ph);

const char *rawfmt_rule_name(sample_rule r);
const char *rawfmt_rule_text(sample_rule r);
const char *rawfmt_unit_name(sample_unit u);
const char *rawfmt_role_name(role r);

#endif
