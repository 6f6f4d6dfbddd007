/* SPDX-License-Identifier: BSD-3-Clause */
/* Event queue (evq.h). */
#include <stdlib.h>
#include <string.h>
#include "evq.h"

#define NIL UINT32_MAX

struct heap_ev { double t; uint64_t seq; uint32_t op, kind; };
/* A bucket's events in a chain of chunks, 15 events and the next chunk's
 * number in two cache lines: pushes and pops walk memory forwards, and
 * emptied chunks are reused first (still in cache). */
#define CHUNK 15
struct chunk { struct { uint32_t op, kind; } ev[CHUNK]; uint32_t next, pad; };
_Static_assert(sizeof(struct chunk) == 128, "a chunk is two cache lines");
struct bucket { double t; uint32_t head, tail; uint16_t hpos, tpos; }; /* next to pop at head[hpos], to push at tail[tpos] */
struct tslot { uint64_t key; uint32_t bucket; }; /* key: the time's bits; 0 = empty (time +0.0 is key 1) */

static void *grow(void *p, size_t *cap, size_t elem, size_t first)
{
    size_t c = *cap ? 2 * *cap : first;
    void *q = realloc(p, c * elem);
    if (q) *cap = c;
    return q;
}

int evq_init(evq *q, int bucketed)
{
    memset(q, 0, sizeof *q);
    q->bucketed = bucketed;
    q->ch_free = q->bk_free = NIL;
    if (!bucketed) return 0;
    q->tmap_cap = 1024;
    q->tmap = calloc(q->tmap_cap, sizeof *q->tmap);
    return q->tmap ? 0 : -1;
}

void evq_free(evq *q)
{
    free(q->heap), free(q->ch), free(q->bk), free(q->th), free(q->tmap);
    memset(q, 0, sizeof *q);
}

/* ------------------------------------------------------------- heap form */

static int heap_before(const struct heap_ev *a, const struct heap_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_push(evq *q, double t, uint32_t op, uint32_t kind)
{
    if (q->n == q->heap_cap) {
        void *h = grow(q->heap, &q->heap_cap, sizeof *q->heap, 1 << 16);
        if (!h) return -1;
        q->heap = h;
    }
    struct heap_ev e = {t, q->seq++, op, kind};
    size_t i = q->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_before(&e, &q->heap[p])) break;
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = e;
    return 0;
}

static void heap_pop(evq *q, evq_item *out)
{
    struct heap_ev top = q->heap[0], last = q->heap[--q->n];
    size_t i = 0, n = q->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_before(&q->heap[c + 1], &q->heap[c])) c++;
        if (!heap_before(&q->heap[c], &last)) break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n) q->heap[i] = last;
    *out = (evq_item){top.t, top.op, top.kind};
}

/* ----------------------------------------------------------- bucket form */

static uint64_t key_of(double t)
{
    uint64_t k;
    memcpy(&k, &t, sizeof k);
    return k ? k : 1;
}

static size_t slot_of(const evq *q, uint64_t k)
{
    k ^= k >> 33, k *= 0xff51afd7ed558ccdULL, k ^= k >> 33;
    return (size_t)k & (q->tmap_cap - 1);
}

static struct tslot *tmap_find(evq *q, uint64_t k)
{
    for (size_t i = slot_of(q, k);; i = (i + 1) & (q->tmap_cap - 1)) {
        if (q->tmap[i].key == k) return &q->tmap[i];
        if (!q->tmap[i].key) return NULL;
    }
}

static int tmap_put(evq *q, uint64_t k, uint32_t b)
{
    if (2 * (q->tmap_n + 1) > q->tmap_cap) {
        struct tslot *old = q->tmap;
        size_t oc = q->tmap_cap;
        q->tmap_cap *= 2;
        if (!(q->tmap = calloc(q->tmap_cap, sizeof *q->tmap))) return -1;
        for (size_t i = 0; i < oc; i++)
            if (old[i].key) {
                size_t j = slot_of(q, old[i].key);
                while (q->tmap[j].key) j = (j + 1) & (q->tmap_cap - 1);
                q->tmap[j] = old[i];
            }
        free(old);
    }
    size_t i = slot_of(q, k);
    while (q->tmap[i].key) i = (i + 1) & (q->tmap_cap - 1);
    q->tmap[i] = (struct tslot){k, b};
    q->tmap_n++;
    return 0;
}

/* Deletion without tombstones: later entries of the probe run move back. */
static void tmap_del(evq *q, struct tslot *s)
{
    size_t mask = q->tmap_cap - 1, i = (size_t)(s - q->tmap), j = i;
    q->tmap_n--;
    for (;;) {
        q->tmap[i].key = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!q->tmap[j].key) return;
            size_t h = slot_of(q, q->tmap[j].key);
            if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) break;
        }
        q->tmap[i] = q->tmap[j];
        i = j;
    }
}

static int th_push(evq *q, uint32_t b)
{
    if (q->nth == q->th_cap) {
        size_t cap = q->th_cap;
        void *h = grow(q->th, &cap, sizeof *q->th, 1024);
        if (!h) return -1;
        q->th = h, q->th_cap = (uint32_t)cap;
    }
    double t = q->bk[b].t;
    uint32_t i = q->nth++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (q->bk[q->th[p]].t <= t) break;
        q->th[i] = q->th[p];
        i = p;
    }
    q->th[i] = b;
    return 0;
}

static void th_pop(evq *q)
{
    uint32_t last = q->th[--q->nth], i = 0, n = q->nth;
    double t = q->bk[last].t;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && q->bk[q->th[c + 1]].t < q->bk[q->th[c]].t) c++;
        if (q->bk[q->th[c]].t >= t) break;
        q->th[i] = q->th[c];
        i = c;
    }
    if (n) q->th[i] = last;
}

/* A free chunk (-1: out of memory). */
static int64_t chunk_new(evq *q)
{
    uint32_t c = q->ch_free;
    if (c != NIL) {
        q->ch_free = q->ch[c].next;
        return c;
    }
    if (q->ch_used == q->ch_cap) {
        size_t cap = q->ch_cap;
        void *p = grow(q->ch, &cap, sizeof *q->ch, 1 << 10);
        if (!p || cap >= NIL) return -1;
        q->ch = p, q->ch_cap = (uint32_t)cap;
    }
    return q->ch_used++;
}

static void chunk_release(evq *q, uint32_t c)
{
    q->ch[c].next = q->ch_free, q->ch_free = c;
}

static int bucket_push(evq *q, double t, uint32_t op, uint32_t kind)
{
    uint64_t k = key_of(t);
    struct tslot *s = k == q->last_key ? NULL : tmap_find(q, k);
    struct bucket *bk;
    if (k == q->last_key || s) {
        if (s) q->last_key = k, q->last_bk = s->bucket;
        bk = &q->bk[q->last_bk];
        if (bk->tpos == CHUNK) {
            int64_t c = chunk_new(q);
            if (c < 0) return -1;
            bk = &q->bk[q->last_bk];
            q->ch[bk->tail].next = (uint32_t)c, bk->tail = (uint32_t)c, bk->tpos = 0;
        }
    } else {
        uint32_t b = q->bk_free;
        if (b != NIL) {
            q->bk_free = q->bk[b].head;
        } else {
            if (q->bk_used == q->bk_cap) {
                size_t cap = q->bk_cap;
                void *p = grow(q->bk, &cap, sizeof *q->bk, 1024);
                if (!p) return -1;
                q->bk = p, q->bk_cap = (uint32_t)cap;
            }
            b = q->bk_used++;
        }
        int64_t c = chunk_new(q);
        if (c < 0) return -1;
        q->bk[b] = (struct bucket){t, (uint32_t)c, (uint32_t)c, 0, 0};
        if (tmap_put(q, k, b) || th_push(q, b)) return -1;
        q->last_key = k, q->last_bk = b;
        bk = &q->bk[b];
    }
    struct chunk *ch = &q->ch[bk->tail];
    ch->ev[bk->tpos].op = op, ch->ev[bk->tpos].kind = kind;
    bk->tpos++;
    q->n++;
    return 0;
}

static void bucket_pop(evq *q, evq_item *out)
{
    uint32_t b = q->th[0];
    struct bucket *bk = &q->bk[b];
    uint32_t c = bk->head;
    *out = (evq_item){bk->t, q->ch[c].ev[bk->hpos].op, q->ch[c].ev[bk->hpos].kind};
    bk->hpos++;
    if (c == bk->tail && bk->hpos == bk->tpos) { /* the bucket is empty: its time is done */
        chunk_release(q, c);
        if (q->last_key == key_of(bk->t)) q->last_key = 0;
        tmap_del(q, tmap_find(q, key_of(bk->t)));
        th_pop(q);
        bk->head = q->bk_free, q->bk_free = b;
    } else if (bk->hpos == CHUNK) {
        bk->head = q->ch[c].next, bk->hpos = 0;
        chunk_release(q, c);
    }
    q->n--;
}

int evq_push(evq *q, double t, uint32_t op, uint32_t kind)
{
    return q->bucketed ? bucket_push(q, t, op, kind) : heap_push(q, t, op, kind);
}

int evq_pop_at(evq *q, double t, evq_item *out)
{
    if (!q->n) return 0;
    if (q->bucketed ? q->bk[q->th[0]].t != t : q->heap[0].t != t) return 0;
    return evq_pop(q, out);
}

int evq_pop(evq *q, evq_item *out)
{
    if (!q->n) return 0;
    if (q->bucketed) bucket_pop(q, out);
    else heap_pop(q, out);
    return 1;
}
