/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes this rank's profile as JSON (format:
 * docs/reference/formats/run-directory.md): under a temporary name, renamed
 * into place when complete, so a rank that dies never leaves half a file and
 * the reader can tell which ranks did not finish. Only cells, peers and call
 * sites that saw traffic are written. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callsites.h"
#include "prof.h"
#include "libview.h"
#include "trace.h"
#include "writer.h"

#define FORMAT_VERSION 1
static const char *const channel_names[NCHANNELS] = {"self", "node", "net", "none"};
uint64_t prof_requests_dropped(void);

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void u64_array(FILE *f, const uint64_t *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
    fputc(']', f);
}

static void cells(FILE *f)
{
    int first = 1;
    fputs("[", f);
    for (int call = 0; call < NCALLS; call++)
        for (int s = 0; s < NSIZES; s++)
            for (int ch = 0; ch < NCHANNELS; ch++)
                for (int b = 0; b < NBINS; b++) {
                    const cell *c = &prof_cells[call][s][ch][b];
                    if (!c->count) continue;
                    fprintf(f, "%s\n  [%d,%d,%d,%d,%llu,%llu,%llu]", first ? "" : ",", call, s, ch, b,
                            (unsigned long long)c->count, (unsigned long long)c->bytes,
                            (unsigned long long)c->ticks);
                    first = 0;
                }
    fputs("]", f);
}

/* Call sites outside this library (its own overhead measurement is left out). */
static void sites(FILE *f)
{
    Dl_info self;
    dladdr((void *)&write_profile, &self);
    int first = 1;
    fputs("[", f);
    for (int i = 0; i < NSITES; i++) {
        const site_entry *e = &prof_sites[i];
        if (e->key <= 1 || !e->count) continue;
        uintptr_t addr = (uintptr_t)(e->key >> 8);
        Dl_info where;
        if (dladdr((void *)addr, &where) && where.dli_fbase == self.dli_fbase) continue;
        fprintf(f, "%s\n  [%d,\"0x%llx\",%llu,%llu,%llu]", first ? "" : ",", (int)(e->key & 0xff) - 1,
                (unsigned long long)addr, (unsigned long long)e->count, (unsigned long long)e->bytes,
                (unsigned long long)e->ticks);
        first = 0;
    }
    fputs("]", f);
}

/* Executable mappings, for symbolizing call sites afterwards: [start, end, file offset, path]. */
static void modules(FILE *f)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int first = 1;
    fputs("[", f);
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long long lo, hi, off;
        char perms[8], path[4096] = "";
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, path) < 4) continue;
        if (path[0] != '/') continue;
        fprintf(f, "%s\n  [\"0x%llx\",\"0x%llx\",\"0x%llx\",\"%s\",", first ? "" : ",", lo, hi, off, perms);
        json_string(f, path);
        fputc(']', f);
        first = 0;
    }
    if (maps) fclose(maps);
    fputs("]", f);
}

static int write_json(FILE *f, double wall_s, double tick_s, const overhead *o, const char *trace_file)
{
    char host[256] = "";
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, level = 0;
    gethostname(host, sizeof host - 1);
    PMPI_Get_library_version(library, &len);
    PMPI_Query_thread(&level);
    fprintf(f, "{\"format\": \"mpiscope-profile\", \"version\": %d, \"rank\": %d, \"world_size\": %d, "
               "\"host\": ", FORMAT_VERSION, prof.rank, prof.world_size);
    json_string(f, host);
    fprintf(f, ", \"pid\": %d, \"node\": %d, \"nodes\": %d, \"node_of\": [", (int)getpid(), prof.node, prof.nodes);
    for (int r = 0; r < prof.world_size; r++) fprintf(f, "%s%d", r ? "," : "", prof.node_of[r]);
    fputs("],\n\"library\": ", f);
    json_string(f, library);
    fprintf(f, ",\n\"thread_level\": %d, \"wall_s\": %.9g, \"tick_s\": %.17g,\n", level, wall_s, tick_s);
    fprintf(f, "\"overhead\": {\"wrapped_ns\": %.3f, \"direct_ns\": %.3f},\n", o->wrapped_ns, o->direct_ns);
    fputs("\"calls\": [", f);
    for (int c = 0; c < NCALLS; c++) fprintf(f, "%s[\"%s\",\"%s\"]", c ? "," : "", prof_call_names[c], prof_call_families[c]);
    fputs("],\n\"channels\": [", f);
    for (int c = 0; c < NCHANNELS; c++) fprintf(f, "%s\"%s\"", c ? "," : "", channel_names[c]);
    fputs("],\n\"comm_sizes\": [", f);
    for (int i = 0; i < prof.nsizes; i++) fprintf(f, "%s%d", i ? "," : "", prof.comm_sizes[i]);
    fprintf(f, "], \"nbins\": %d,\n\"cells\": ", NBINS);
    cells(f);
    fputs(",\n\"peers\": {\"sent_bytes\": ", f);
    u64_array(f, prof.sent_bytes, prof.world_size);
    fputs(", \"sent_msgs\": ", f);
    u64_array(f, prof.sent_msgs, prof.world_size);
    fputs(", \"recv_bytes\": ", f);
    u64_array(f, prof.recv_bytes, prof.world_size);
    fputs(", \"recv_msgs\": ", f);
    u64_array(f, prof.recv_msgs, prof.world_size);
    fputs("},\n\"sites\": ", f);
    sites(f);
    fprintf(f, ",\n\"lost\": {\"sites\": %llu, \"requests\": %llu, \"communicators\": %llu},\n\"modules\": ",
            (unsigned long long)prof_sites_dropped, (unsigned long long)prof_requests_dropped(),
            (unsigned long long)prof.unattributed);
    modules(f);
    fputs(",\n\"library_colls\": ", f);
    if (prof.libview) libview_describe(f);
    else fputs("null", f);
    fputs(",\n\"trace\": ", f);
    if (trace_file) {
        trace_describe(f);
        fputs(",\n\"trace_file\": ", f);
        json_string(f, trace_file);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
    return ferror(f) ? -1 : 0;
}

static int finish(const char *tmp, const char *final)
{
    if (rename(tmp, final) == 0) return 0;
    perror(final);
    unlink(tmp);
    return -1;
}

int write_profile(const char *dir, double wall_s, double tick_s, const overhead *o)
{
    char path[4096], tmp[4096], tpath[4096], ttmp[4096], tname[64];
    mkdir(dir, 0777); /* mpiscope creates it; a bare LD_PRELOAD run may not have */
    snprintf(tname, sizeof tname, "rank-%d.trace", prof.rank);
    snprintf(path, sizeof path, "%s/rank-%d.json", dir, prof.rank);
    snprintf(tmp, sizeof tmp, "%s/.rank-%d.json.tmp", dir, prof.rank);
    snprintf(tpath, sizeof tpath, "%s/%s", dir, tname);
    snprintf(ttmp, sizeof ttmp, "%s/.%s.tmp", dir, tname);
    const char *trace = getenv("MPISCOPE_PROFILE_TRACE");
    int tracing = trace && atoll(trace) > 0;
    if (tracing) {
        if (trace_write(ttmp) != 0 || finish(ttmp, tpath) != 0) {
            fprintf(stderr, "mpiscope-pmpi: rank %d: cannot write %s\n", prof.rank, tpath);
            return -1;
        }
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "mpiscope-pmpi: rank %d: cannot write %s: ", prof.rank, tmp);
        perror("");
        return -1;
    }
    int bad = write_json(f, wall_s, tick_s, o, tracing ? tname : NULL);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "mpiscope-pmpi: rank %d: writing %s failed\n", prof.rank, tmp);
        unlink(tmp);
        return -1;
    }
    return finish(tmp, path);
}
