/* SPDX-License-Identifier: BSD-3-Clause */
/* basic: the message copied into the receiver's queue in records of at most
 * TP_RECORD_MAX bytes (the receiver copies one out while the next goes in). */
#include <string.h>

#include "tp_impl.h"

void tp_basic_send(tp_pair *p, const void *buf, size_t n)
{
    const unsigned char *src = buf;
    do {
        size_t k = n < TP_RECORD_MAX ? n : TP_RECORD_MAX;
        tp_record *r = tp_reserve(p, k);
        memcpy(r->data, src, k);
        tp_publish(p, r, REC_DATA, (uint32_t)k, k);
        src += k;
        n -= k;
    } while (n);
}
