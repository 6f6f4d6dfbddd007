/* SPDX-License-Identifier: BSD-3-Clause */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void sb_printf(strbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = 2 * (b->cap + (size_t)n + 64);
        b->s = realloc(b->s, b->cap);
    }
}

static void comma(strbuf *b)
{
    if (b->len && b->s[b->len - 1] != '{' && b->s[b->len - 1] != '[') sb_printf(b, ", ");
}

void sb_str(strbuf *b, const char *val)
{
    sb_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)val; *p; p++) {
        if (*p == '"' || *p == '\\') sb_printf(b, "\\%c", *p);
        else if (*p < 0x20) sb_printf(b, "\\u%04x", *p);
        else sb_printf(b, "%c", *p);
    }
    sb_printf(b, "\"");
}

void sb_key_str(strbuf *b, const char *key, const char *val)
{
    comma(b);
    sb_printf(b, "\"%s\": ", key);
    sb_str(b, val);
}

void sb_key_num(strbuf *b, const char *key, double val)
{
    comma(b);
    if (isfinite(val)) sb_printf(b, "\"%s\": %.17g", key, val);
    else sb_printf(b, "\"%s\": null", key);
}

void sb_key_int(strbuf *b, const char *key, long long val)
{
    comma(b);
    sb_printf(b, "\"%s\": %lld", key, val);
}

void sb_free(strbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
