/* SPDX-License-Identifier: BSD-3-Clause */
/* A growing string for the JSON headers of raw files. */
#ifndef MPISCOPE_JSON_H
#define MPISCOPE_JSON_H

#include <stddef.h>

typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;

void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a quoted, escaped JSON string. */
void sb_str(strbuf *b, const char *val);
/* Appends `"key": "escaped value"` with a leading comma unless first. */
void sb_key_str(strbuf *b, const char *key, const char *val);
void sb_key_num(strbuf *b, const char *key, double val); /* null when not finite */
void sb_key_int(strbuf *b, const char *key, long long val);
void sb_free(strbuf *b);

#endif
