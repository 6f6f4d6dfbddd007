/* SPDX-License-Identifier: BSD-3-Clause */
/* /proc/cpuinfo's text, parsed on any CPU (the timer's test checks every
 * architecture's parsing on each). */
#include "cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *next_line(const char *line)
{
    const char *nl = strchr(line, '\n');
    return nl ? nl + 1 : NULL;
}

/* The value of the first line whose key (before the ':') is `key`, up to
 * the end of its line; NULL when none. */
static const char *line_value(const char *text, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line; line = next_line(line)) {
        if (strncmp(line, key, klen) || !strchr(" \t:", line[klen])) continue;
        const char *colon = strchr(line, ':'), *end = strchr(line, '\n');
        if (!colon || (end && colon > end)) continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        *len = end ? (size_t)(end - v) : strlen(v);
        return v;
    }
    return NULL;
}

int cpuinfo_has_flag(const char *text, const char *flag)
{
    size_t len, flen = strlen(flag);
    const char *v = line_value(text, "flags", &len);
    for (const char *p = v, *end = v ? v + len : NULL; p && p + flen <= end; p++)
        if (!strncmp(p, flag, flen) && (p == v || p[-1] == ' ') && (p + flen == end || p[flen] == ' '))
            return 1;
    return 0;
}

double cpuinfo_timebase_hz(const char *text)
{
    size_t len;
    const char *v = line_value(text, "timebase", &len);
    return v ? strtod(v, NULL) : 0.0;
}

int cpuinfo_tsc_invariant(const char *text, char *why, size_t n)
{
    const char *need[] = {"constant_tsc", "nonstop_tsc"};
    for (int i = 0; i < 2; i++)
        if (!cpuinfo_has_flag(text, need[i])) {
            snprintf(why, n, "the TSC is not invariant: no %s in /proc/cpuinfo's flags", need[i]);
            return 0;
        }
    return 1;
}
