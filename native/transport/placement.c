/* SPDX-License-Identifier: BSD-3-Clause */
/* The placement class of two CPUs, read from sysfs: the same CPU, SMT
 * siblings of one core, a shared L2, a shared L3, one socket, two sockets. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_impl.h"

static const char *const class_names[TP_CLASSES] = {"same_cpu", "smt", "l2", "l3", "socket", "remote", "unknown"};
const char *tp_class_name(tp_class c) { return c >= 0 && c < TP_CLASSES ? class_names[c] : "unknown"; }

static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    int ok = f && fgets(buf, (int)n, f);
    if (f) fclose(f);
    return ok;
}

/* Whether `cpu` is in a sysfs CPU list such as "0-3,8,10-11". */
static int list_has(const char *list, int cpu)
{
    const char *p = list;
    while (*p && *p != '\n') {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p) return 0;
        if (*end == '-') b = strtol(end + 1, &end, 10);
        if (cpu >= a && cpu <= b) return 1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int sysfs_has(int cpu, const char *file, int other)
{
    char path[160], buf[4096];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/%s", cpu, file);
    return read_line(path, buf, sizeof buf) ? list_has(buf, other) : -1;
}

/* Whether the unified or data cache of `level` is shared by the two; -1: unknown. */
static int cache_shared(int a, int b, int level)
{
    for (int i = 0; i < 8; i++) {
        char path[160], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", a, i);
        if (!read_line(path, buf, sizeof buf)) return -1;
        if (atoi(buf) != level) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", a, i);
        if (read_line(path, buf, sizeof buf) && !strncmp(buf, "Instruction", 11)) continue;
        snprintf(path, sizeof path, "cache/index%d/shared_cpu_list", i);
        return sysfs_has(a, path, b);
    }
    return 0;
}

tp_class tp_classify(int a, int b)
{
    if (a < 0 || b < 0) return TP_UNKNOWN;
    if (a == b) return TP_SAME_CPU;
    int smt = sysfs_has(a, "topology/thread_siblings_list", b);
    if (smt < 0) return TP_UNKNOWN;
    if (smt) return TP_SMT;
    if (cache_shared(a, b, 2) == 1) return TP_L2;
    if (cache_shared(a, b, 3) == 1) return TP_L3;
    char pa[32], pb[32], path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", a);
    if (!read_line(path, pa, sizeof pa)) return TP_UNKNOWN;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", b);
    if (!read_line(path, pb, sizeof pb)) return TP_UNKNOWN;
    return atoi(pa) == atoi(pb) ? TP_SOCKET : TP_REMOTE;
}

int tp_current_cpu(void) { return sched_getcpu(); }

void tp_own_cpus(char *out, size_t n)
{
    cpu_set_t set;
    size_t k = 0;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set)) return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set) || (c > 0 && CPU_ISSET(c - 1, &set))) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
        int w = last > c ? snprintf(out + k, n - k, "%s%d-%d", k ? "," : "", c, last)
                         : snprintf(out + k, n - k, "%s%d", k ? "," : "", c);
        if (w < 0 || (size_t)w >= n - k) return;
        k += (size_t)w;
    }
}

int tp_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return d ? n : -1;
}
