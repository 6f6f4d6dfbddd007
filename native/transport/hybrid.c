/* SPDX-License-Identifier: BSD-3-Clause */
/* hybrid: per message the design the thresholds of the pair's placement
 * class choose; cma only once the receiver is already waiting, unless the
 * message is too large for the copy buffers to let the sender leave early
 * anyway (cma_min_late). Thresholds: per placement class, the defaults below
 * or MPISCOPE_TP_THRESHOLDS =
 * "CLASS:BASIC_MAX,CMA_MIN,CMA_MIN_LATE;..." (sizes with K/M suffixes; "-"
 * for never), as `mpiscope transport advise` prints them. */
#include <stdlib.h>
#include <string.h>

#include "tp_impl.h"

#define NEVER ((size_t)-1)

/* The classes up to a shared L3 take what `mpiscope transport advise`
 * finds where two cores share an L3: two copies through the
 * shared L3 beat process_vm_readv whenever the receiver is waiting, warm or
 * cold, up to 16 MiB; the pipelined pool beats the ring from 64 KiB; with
 * the receiver late, a pull wins from 256 KiB (a copy cannot let the sender
 * leave once the message outgrows what the queue takes at once). The pull's
 * crossover moves with the machine and its other work (it can be as low as
 * 4 KiB): measure with advise and set MPISCOPE_TP_THRESHOLDS. Without a
 * shared cache (socket, remote) the copies go through memory and a single
 * copy should win for large messages whatever the receiver does, as Chai
 * (2009), section 6.3, found: those rows follow that shape, to be replaced by
 * what advise measures on such a machine. */
static const tp_thresholds defaults[TP_CLASSES] = {
    [TP_SAME_CPU] = {16 * 1024, NEVER, 256 * 1024},
    [TP_SMT] = {16 * 1024, NEVER, 256 * 1024},
    [TP_L2] = {16 * 1024, NEVER, 256 * 1024},
    [TP_L3] = {16 * 1024, NEVER, 256 * 1024},
    [TP_SOCKET] = {16 * 1024, 256 * 1024, 256 * 1024},
    [TP_REMOTE] = {8 * 1024, 64 * 1024, 64 * 1024},
    [TP_UNKNOWN] = {16 * 1024, NEVER, 256 * 1024},
};

static size_t size_of(const char *s, char **end)
{
    if (*s == '-') return *end = (char *)s + 1, NEVER;
    size_t v = strtoull(s, end, 10);
    if (**end == 'K' || **end == 'k') v <<= 10, ++*end;
    else if (**end == 'M' || **end == 'm') v <<= 20, ++*end;
    return v;
}

tp_thresholds tp_hybrid_thresholds(tp_class c)
{
    tp_thresholds t = defaults[c];
    const char *env = getenv("MPISCOPE_TP_THRESHOLDS"), *name = tp_class_name(c);
    size_t k = strlen(name);
    for (const char *p = env; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
        if (strncmp(p, name, k) || p[k] != ':') continue;
        char *e;
        tp_thresholds v;
        v.basic_max = size_of(p + k + 1, &e);
        if (*e != ',') continue;
        v.cma_min = size_of(e + 1, &e);
        if (*e != ',') continue;
        v.cma_min_late = size_of(e + 1, &e);
        if (*e == ';' || !*e) t = v;
    }
    return t;
}

/* Whether the receiver's arrival decides a message of n bytes: only between
 * the two cma thresholds. Elsewhere the size alone does, and neither side
 * touches the `waiting` word: asking costs the sender a cache line the
 * receiver just wrote, a miss as long as a whole small message's latency
 * (asking on every message made the hybrid several times slower than the
 * ring for the smallest messages). */
int tp_hybrid_asks(const tp_pair *p, size_t n)
{
    size_t lo = p->th.cma_min < p->th.cma_min_late ? p->th.cma_min : p->th.cma_min_late;
    size_t hi = p->th.cma_min < p->th.cma_min_late ? p->th.cma_min_late : p->th.cma_min;
    return p->design == TP_HYBRID && n > p->th.basic_max && n >= lo && n < hi;
}

void tp_hybrid_send(tp_pair *p, const void *buf, size_t n)
{
    if (n <= p->th.basic_max) {
        tp_basic_send(p, buf, n);
        return;
    }
    int waiting = tp_hybrid_asks(p, n)
                      ? atomic_load_explicit(&p->peer->waiting, memory_order_relaxed) == p->out_recs + 1
                      : p->th.cma_min <= p->th.cma_min_late; /* either answer gives the same choice here */
    if (n >= (waiting ? p->th.cma_min : p->th.cma_min_late)) tp_cma_send(p, buf, n);
    else tp_advanced_send(p, buf, n);
}
