/* SPDX-License-Identifier: BSD-3-Clause */
/* advanced (Chai (2009), section 3.2): small messages inline in the
 * receiver's queue; larger ones in TP_CHUNK pieces through the sender's own
 * pool of buffers, each piece announced by a small record, so the receiver
 * copies piece k out while the sender copies piece k + 1 in. The pool is used
 * in order and the receiver counts the pieces it finished, so one counter
 * frees them. */
#include <string.h>

#include "tp_impl.h"

void tp_advanced_send(tp_pair *p, const void *buf, size_t n)
{
    if (n <= TP_ADV_EAGER) {
        tp_basic_send(p, buf, n);
        return;
    }
    const unsigned char *src = buf;
    unsigned spins = 0;
    while (n) {
        if (p->chunks_used - p->chunks_freed_seen >= TP_CHUNKS) {
            p->chunks_freed_seen = atomic_load_explicit(&p->peer->chunks_freed, memory_order_acquire);
            if (p->chunks_used - p->chunks_freed_seen >= TP_CHUNKS) {
                tp_relax(p, &spins);
                continue;
            }
        }
        uint32_t slot = (uint32_t)(p->chunks_used++ % TP_CHUNKS);
        size_t k = n < TP_CHUNK ? n : TP_CHUNK;
        memcpy(p->mine->pool[slot], src, k);
        tp_record *r = tp_reserve(p, sizeof slot);
        memcpy(r->data, &slot, sizeof slot);
        tp_publish(p, r, REC_CHUNK, (uint32_t)k, sizeof slot);
        src += k;
        n -= k;
        spins = 0;
    }
}

void tp_chunk_recv(tp_pair *p, tp_record *r, unsigned char *dst)
{
    uint32_t slot;
    memcpy(&slot, r->data, sizeof slot);
    memcpy(dst, p->peer->pool[slot], r->len);
    atomic_store_explicit(&p->mine->chunks_freed, ++p->peer_chunks_taken, memory_order_release);
}
