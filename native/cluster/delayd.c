/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpiscope-delayd: holds queued packets for their time on the wire and a
 * fixed one-way delay.
 *
 * The emulated cluster's kernel has no netem, so link delay is added here:
 * iptables rules in each host's network namespace send arriving packets to
 * an NFQUEUE; this program takes them from the queue, keeps each one until
 * its due time and then accepts it. It sleeps on one timerfd armed for the
 * earliest due packet and never polls. Packets of one flow (addresses,
 * protocol, ports) leave in the order they arrived, also with jitter.
 *
 * Due time: a queue with a line rate holds the packets a host sends, before
 * its transmit queue, and models the host's outgoing wire: frames go out one
 * after another as on a real link. A packet starts on the wire at
 * max(arrival, end of the frames before) and is released when its first
 * frame has crossed: that frame's bytes (IP packet + 38 bytes of Ethernet
 * framing) at the rate. A GSO packet (larger than one frame) occupies the
 * wire for all its frames (payload cut into segments of the MTU less its
 * IP and TCP headers); the kernel's token buckets of one frame's depth
 * behind then pace the rest at the rate, each frame one frame time after
 * the one before. So every frame, the first after an idle time too, pays
 * its serialization, and a stream of GSO packets costs one verdict per
 * packet, not per frame. A queue without a rate holds arriving packets for
 * the delay, optionally +- a uniform jitter.
 *
 * Usage:
 *   mpiscope-delayd [--stats FILE] [--rt-prio N] [--seed N] [--mtu BYTES] [--daemon] [--check]
 *                   --queue NETNS_PATH:QUEUE:DELAY_NS[:JITTER_NS[:RATE_BPS]] ...
 *
 * Each --queue binds queue number QUEUE inside the network namespace named
 * by NETNS_PATH (a file such as /run/netns/x); RATE_BPS is the line rate of
 * the link out of that namespace (0 or none: no wire time); the queues of one
 * namespace share its wire. --mtu is the links' MTU (default 1500). With --daemon the program
 * forks once every queue is bound; the parent prints "ready PID" and exits.
 * SIGUSR1 writes the statistics to FILE (JSON: per queue how many packets,
 * how far the actual delays strayed from the target, a histogram of the
 * lateness); SIGTERM/SIGINT release every held packet, write the
 * statistics and exit. --check only binds the queues and exits (0 when it
 * could).
 *
 * Times: a packet's arrival is the kernel's receive time stamp (the program
 * keeps a socket with SO_TIMESTAMPNS open so that the kernel stamps packets),
 * else the moment it is read. It counts as delivered when the verdict call,
 * which carries it on to its socket, returns; verdicts start by the usual
 * duration of that call early, and timers are armed early by their usual
 * lateness (both running averages), so that deliveries land on their due
 * times. The error reported is delivery minus due time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>     /* before linux/netfilter.h, or the two define struct in_addr twice */
#include <linux/netfilter.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>
#include <libnfnetlink/libnfnetlink.h>

#define MAX_QUEUES 1024
#define COPY_BYTES 64            /* enough for an IPv4 header with options and the ports */
#define QUEUE_MAXLEN 16384       /* packets the kernel keeps per queue before dropping */
#define RCVBUF_BYTES (16u << 20)
#define FLOW_SLOTS 65536         /* power of two */
#define MAX_COMPENSATION_NS 200000
#define MAX_VERDICT_LEAD_NS 50000  /* longer verdict calls were interrupted: not counted */
#define ETH_FRAMING_BYTES 38     /* header 14, FCS 4, preamble 8, inter-frame gap 12 */
/* Lateness histogram bucket upper bounds in ns; one more bucket for larger. */
static const int64_t BUCKETS_NS[] = {1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000,
                                     500000, 1000000};
#define NBUCKETS (sizeof BUCKETS_NS / sizeof BUCKETS_NS[0] + 1)

struct stats {
    uint64_t packets;           /* released */
    uint64_t frames;            /* Ethernet frames charged wire time (a GSO packet has several) */
    uint64_t stamped;           /* arrival taken from the kernel's receive timestamp */
    uint64_t early;             /* released before the due time */
    int64_t err_min, err_max;   /* actual minus target delay, ns */
    double err_sum, err_sumsq;
    double read_sum;            /* arrival to our reading it, ns (stamped packets) */
    int64_t read_max;
    uint64_t hist[NBUCKETS];    /* |lateness| buckets for late packets */
    uint64_t verdict_errors;
    double verdict_sum;         /* time spent in the verdict call: the packet's way on to its socket */
    int64_t verdict_max;
    uint32_t held_max;
};

struct queue {
    const char *netns;
    uint16_t num;
    int64_t delay_ns, jitter_ns;
    double rate_bps;            /* line rate of the wire into netns; 0: none */
    int64_t *wire_free;         /* when that wire has sent its last frame (the handle's) */
    struct nfq_handle *h;       /* shared by the queues of one namespace */
    struct nfq_q_handle *qh;
    uint32_t held;
    struct stats st;
};

struct handle {
    const char *netns;
    struct nfq_handle *h;
    int fd;
    int64_t wire_free;
};

struct packet {
    int64_t due, arrival;
    uint64_t seq;
    uint32_t id;
    int q;
};

struct flow {
    uint64_t key;
    int64_t last_due;
};

struct ctx {
    struct queue queues[MAX_QUEUES];
    int nqueues;
    struct handle handles[MAX_QUEUES];
    int nhandles;
    struct packet *heap;
    size_t heap_len, heap_cap;
    struct flow *flows;
    uint64_t seq;
    uint64_t rng;
    int timer_fd;
    int64_t armed_at;           /* 0 when disarmed */
    int64_t compensation;       /* EWMA of timer lateness, ns; timers are armed this early */
    int64_t verdict_lead;       /* EWMA of a verdict call's duration, ns; verdicts start this early */
    int64_t mtu;                /* the links' MTU: a larger packet is a GSO packet of several frames */
    const char *stats_path;
    char buf[1 << 17];
};

static struct ctx *G; /* the one context, for the queue callback */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mpiscope-delayd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static int64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* ---- min-heap of held packets, ordered by (due, seq) ---- */

static int before(const struct packet *a, const struct packet *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct ctx *c, struct packet p)
{
    if (c->heap_len == c->heap_cap) {
        c->heap_cap = c->heap_cap ? 2 * c->heap_cap : 4096;
        c->heap = realloc(c->heap, c->heap_cap * sizeof *c->heap);
        if (!c->heap) die("out of memory");
    }
    size_t i = c->heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&p, &c->heap[parent])) break;
        c->heap[i] = c->heap[parent];
        i = parent;
    }
    c->heap[i] = p;
}

static struct packet heap_pop(struct ctx *c)
{
    struct packet top = c->heap[0];
    struct packet last = c->heap[--c->heap_len];
    size_t i = 0, n = c->heap_len;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct packet *best = &last;
        if (l < n && before(&c->heap[l], best)) m = l, best = &c->heap[l];
        if (r < n && before(&c->heap[r], best)) m = r;
        if (m == i) break;
        c->heap[i] = c->heap[m];
        i = m;
    }
    if (n) c->heap[i] = last;
    return top;
}

/* ---- per-flow order: a packet is never due before the previous one of its flow ---- */

static uint64_t flow_key(int q, const unsigned char *pkt, int len)
{
    uint64_t k = 1469598103934665603ull ^ (uint64_t)q;
    int n = 0;
    unsigned char key[13];
    if (len >= 20 && (pkt[0] >> 4) == 4) {
        int ihl = (pkt[0] & 15) * 4;
        memcpy(key, pkt + 12, 8);          /* source and destination address */
        key[8] = pkt[9];                   /* protocol */
        n = 9;
        if ((pkt[9] == IPPROTO_TCP || pkt[9] == IPPROTO_UDP) && len >= ihl + 4) {
            memcpy(key + 9, pkt + ihl, 4); /* ports */
            n = 13;
        }
    }
    for (int i = 0; i < n; i++) k = (k ^ key[i]) * 1099511628211ull;
    return k | 1; /* 0 marks a free slot */
}

/* Returns the due time to use: max(due, last due of the flow), and records it. */
static int64_t flow_order(struct ctx *c, uint64_t key, int64_t due, int64_t now)
{
    size_t mask = FLOW_SLOTS - 1, i = key & mask;
    for (size_t probe = 0; probe < FLOW_SLOTS; probe++, i = (i + 1) & mask) {
        struct flow *f = &c->flows[i];
        if (f->key == key) {
            if (due < f->last_due) due = f->last_due;
            f->last_due = due;
            return due;
        }
        /* A free slot, or one whose flow has nothing held any more, is taken over. */
        if (f->key == 0 || f->last_due < now) {
            f->key = key;
            f->last_due = due;
            return due;
        }
    }
    return due; /* table full of live flows: cannot happen with QUEUE_MAXLEN per queue */
}

/* ---- statistics ---- */

static void record(struct queue *q, int64_t err)
{
    struct stats *s = &q->st;
    if (s->packets == 0 || err < s->err_min) s->err_min = err;
    if (s->packets == 0 || err > s->err_max) s->err_max = err;
    s->packets++;
    s->err_sum += (double)err;
    s->err_sumsq += (double)err * (double)err;
    if (err < 0) {
        s->early++;
        return;
    }
    size_t b = 0;
    while (b < NBUCKETS - 1 && err >= BUCKETS_NS[b]) b++;
    s->hist[b]++;
}

static void write_stats(struct ctx *c)
{
    if (!c->stats_path) return;
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", c->stats_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "mpiscope-delayd: cannot write %s: %s\n", tmp, strerror(errno));
        return;
    }
    fprintf(f, "{\n  \"pid\": %d,\n  \"written_at_monotonic_ns\": %" PRId64 ",\n"
               "  \"timer_compensation_ns\": %" PRId64 ",\n  \"verdict_lead_ns\": %" PRId64 ",\n"
               "  \"held_now\": %zu,\n"
               "  \"histogram_upper_ns\": [",
            (int)getpid(), now_ns(CLOCK_MONOTONIC), c->compensation, c->verdict_lead, c->heap_len);
    for (size_t b = 0; b < NBUCKETS - 1; b++) fprintf(f, "%s%" PRId64, b ? ", " : "", BUCKETS_NS[b]);
    fprintf(f, ", null],\n  \"queues\": [");
    for (int i = 0; i < c->nqueues; i++) {
        struct queue *q = &c->queues[i];
        struct stats *s = &q->st;
        double n = (double)s->packets;
        double mean = n ? s->err_sum / n : 0;
        double var = n > 1 ? (s->err_sumsq - n * mean * mean) / (n - 1) : 0;
        fprintf(f, "%s\n    {\"netns\": \"%s\", \"queue\": %u, \"delay_ns\": %" PRId64
                   ", \"jitter_ns\": %" PRId64 ", \"rate_bps\": %.0f, \"packets\": %" PRIu64 ", \"frames\": %" PRIu64 ", \"stamped\": %" PRIu64
                   ", \"early\": %" PRIu64 ", \"error_min_ns\": %" PRId64 ", \"error_max_ns\": %" PRId64
                   ", \"error_mean_ns\": %.1f, \"error_sd_ns\": %.1f, \"read_mean_ns\": %.1f"
                   ", \"read_max_ns\": %" PRId64 ", \"verdict_mean_ns\": %.1f, \"verdict_max_ns\": %" PRId64
                   ", \"held_max\": %u, \"verdict_errors\": %" PRIu64
                   ", \"late_histogram\": [",
                i ? "," : "", q->netns, q->num, q->delay_ns, q->jitter_ns, q->rate_bps, s->packets, s->frames, s->stamped,
                s->early, s->err_min, s->err_max, mean, var > 0 ? sqrt(var) : 0.0,
                s->stamped ? s->read_sum / (double)s->stamped : 0.0, s->read_max,
                s->packets ? s->verdict_sum / (double)s->packets : 0.0, s->verdict_max, s->held_max,
                s->verdict_errors);
        for (size_t b = 0; b < NBUCKETS; b++) fprintf(f, "%s%" PRIu64, b ? ", " : "", s->hist[b]);
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0 || rename(tmp, c->stats_path) != 0)
        fprintf(stderr, "mpiscope-delayd: cannot write %s: %s\n", c->stats_path, strerror(errno));
}

/* ---- the wire ---- */

/* When the packet's first frame has crossed the host's outgoing wire; the
 * wire stays busy for all its frames. */
static int64_t wire_end(struct queue *q, const unsigned char *pkt, int len, int64_t arrival)
{
    if (q->rate_bps <= 0) return arrival;
    int64_t ip_len = len, headers = 0;
    if (len >= 20 && (pkt[0] >> 4) == 4) {
        ip_len = (pkt[2] << 8) | pkt[3];   /* IPv4 total length; 0 for a GSO packet beyond 64 KiB */
        if (ip_len == 0) ip_len = 65536;
        headers = (pkt[0] & 15) * 4;
        if (pkt[9] == IPPROTO_TCP && len >= headers + 13) headers += (pkt[headers + 12] >> 4) * 4;
    }
    int64_t frames = 1, total = ip_len + ETH_FRAMING_BYTES, first = total;
    int64_t segment = G->mtu - headers;    /* payload bytes one frame carries */
    if (ip_len > G->mtu && headers > 0 && segment > 0) {
        int64_t payload = ip_len - headers;
        frames = (payload + segment - 1) / segment;
        total = payload + frames * (headers + ETH_FRAMING_BYTES);
        first = G->mtu + ETH_FRAMING_BYTES;
    }
    q->st.frames += (uint64_t)frames;
    int64_t start = arrival > *q->wire_free ? arrival : *q->wire_free;
    *q->wire_free = start + (int64_t)((double)total * 8e9 / q->rate_bps);
    return start + (int64_t)((double)first * 8e9 / q->rate_bps);
}

/* ---- the queue ---- */

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data)
{
    struct queue *q = data;
    struct ctx *c = G;
    int qi = (int)(q - c->queues);
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    if (!ph) return 0;
    int64_t mono = now_ns(CLOCK_MONOTONIC);
    int64_t arrival = mono;
    struct timeval tv;
    if (nfq_get_timestamp(nfa, &tv) == 0 && tv.tv_sec > 0) {
        /* The kernel stamped the packet when it was received (realtime clock). */
        int64_t age = now_ns(CLOCK_REALTIME) - ((int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000);
        if (age >= 0 && age < 1000000000) {
            arrival = mono - age;
            q->st.stamped++;
            q->st.read_sum += (double)age;
            if (age > q->st.read_max) q->st.read_max = age;
        }
    }
    int64_t delay = q->delay_ns;
    if (q->jitter_ns > 0) {
        uint64_t span = 2 * (uint64_t)q->jitter_ns + 1;
        delay += (int64_t)(xorshift(&c->rng) % span) - q->jitter_ns;
        if (delay < 0) delay = 0;
    }
    unsigned char *payload = NULL;
    int len = nfq_get_payload(nfa, &payload);
    if (len < 0) len = 0;
    int64_t due = wire_end(q, payload, len, arrival) + delay;
    due = flow_order(c, flow_key(qi, payload, len), due, mono);
    heap_push(c, (struct packet){.due = due, .arrival = arrival, .seq = c->seq++,
                                 .id = ntohl(ph->packet_id), .q = qi});
    if (++q->held > q->st.held_max) q->st.held_max = q->held;
    return 0;
}

/* Accepts a held packet. The verdict call itself carries the packet on to its
 * socket, so a packet counts as delivered when the call returns; its error is
 * that time minus the due time. */
static void release(struct ctx *c, struct packet p, int64_t now)
{
    struct queue *q = &c->queues[p.q];
    if (nfq_set_verdict(q->qh, p.id, NF_ACCEPT, 0, NULL) < 0) q->st.verdict_errors++;
    int64_t done = now_ns(CLOCK_MONOTONIC);
    int64_t spent = done - now;
    q->st.verdict_sum += (double)spent;
    if (spent > q->st.verdict_max) q->st.verdict_max = spent;
    if (spent < MAX_VERDICT_LEAD_NS) c->verdict_lead += (spent - c->verdict_lead) / 16;
    q->held--;
    record(q, done - p.due);
}

static void arm(struct ctx *c, int64_t at)
{
    if (c->armed_at == at) return;
    struct itimerspec its = {0};
    if (at > 0) {
        its.it_value.tv_sec = at / 1000000000;
        its.it_value.tv_nsec = at % 1000000000;
    }
    if (timerfd_settime(c->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) die("timerfd_settime: %s", strerror(errno));
    c->armed_at = at;
}

/*
 * Releases what is due and arms the timer for the rest. A packet's verdict
 * starts `verdict_lead` (the usual duration of the call) before its due time.
 * A timer wakes us a little late (the measured lateness is `compensation`),
 * so it is armed that much early; a packet due within half of it is released
 * now. A re-armed timer always lies at least half the compensation ahead, so
 * we never spin.
 */
static void service(struct ctx *c)
{
    int64_t now = now_ns(CLOCK_MONOTONIC);
    int64_t slack = c->compensation / 2, lead = c->verdict_lead;
    while (c->heap_len && c->heap[0].due - lead <= now + slack) {
        release(c, heap_pop(c), now);
        now = now_ns(CLOCK_MONOTONIC);
    }
    if (!c->heap_len) {
        arm(c, 0);
        return;
    }
    int64_t start = c->heap[0].due - lead;
    int64_t at = start - c->compensation;
    if (at < now + slack) at = start - slack;
    if (at <= now) at = now + 1000;
    arm(c, at);
}

static void on_timer(struct ctx *c)
{
    uint64_t expirations;
    if (read(c->timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        die("timerfd read: %s", strerror(errno));
    if (c->armed_at > 0) {
        int64_t late = now_ns(CLOCK_MONOTONIC) - c->armed_at;
        if (late < 0) late = 0;
        if (late > MAX_COMPENSATION_NS) late = MAX_COMPENSATION_NS;
        c->compensation += (late - c->compensation) / 16;
    }
    c->armed_at = 0;
}

static void on_queue(struct ctx *c, struct handle *hd)
{
    for (;;) {
        ssize_t n = recv(hd->fd, c->buf, sizeof c->buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
            if (errno == ENOBUFS) {
                fprintf(stderr, "mpiscope-delayd: %s: netlink receive buffer overrun, packets lost\n",
                        hd->netns);
                continue;
            }
            die("recv from queue in %s: %s", hd->netns, strerror(errno));
        }
        nfq_handle_packet(hd->h, c->buf, (int)n);
    }
}

static void parse_queue(struct ctx *c, char *spec)
{
    if (c->nqueues == MAX_QUEUES) die("too many queues (at most %d)", MAX_QUEUES);
    struct queue *q = &c->queues[c->nqueues];
    char *fields[5] = {0};
    int n = 0;
    /* the path may not contain ':'; split from the left */
    for (char *tok = strtok(spec, ":"); tok && n < 5; tok = strtok(NULL, ":")) fields[n++] = tok;
    if (n < 3) die("--queue expects NETNS_PATH:QUEUE:DELAY_NS[:JITTER_NS[:RATE_BPS]], got '%s'", spec);
    char *end;
    long num = strtol(fields[1], &end, 10);
    if (*end || num < 0 || num > 65535) die("--queue: bad queue number '%s'", fields[1]);
    long long d = strtoll(fields[2], &end, 10);
    if (*end || d < 0) die("--queue: bad delay '%s' (nanoseconds)", fields[2]);
    long long j = 0;
    if (fields[3]) {
        j = strtoll(fields[3], &end, 10);
        if (*end || j < 0) die("--queue: bad jitter '%s' (nanoseconds)", fields[3]);
    }
    double rate = 0;
    if (fields[4]) {
        rate = strtod(fields[4], &end);
        if (*end || !(rate >= 0)) die("--queue: bad rate '%s' (bits per second)", fields[4]);
    }
    q->netns = fields[0]; /* points into the copy made by main: argv stays intact for ps */
    q->num = (uint16_t)num;
    q->delay_ns = d;
    q->jitter_ns = j;
    q->rate_bps = rate;
    c->nqueues++;
}

/* Opens one netlink handle per namespace (inside it) and binds the queues. */
static void bind_queues(struct ctx *c)
{
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (home < 0) die("cannot open own network namespace: %s", strerror(errno));
    for (int i = 0; i < c->nqueues; i++) {
        struct queue *q = &c->queues[i];
        struct handle *hd = NULL;
        for (int k = 0; k < c->nhandles; k++)
            if (!strcmp(c->handles[k].netns, q->netns)) hd = &c->handles[k];
        if (!hd) {
            int fd = open(q->netns, O_RDONLY | O_CLOEXEC);
            if (fd < 0) die("cannot open network namespace %s: %s", q->netns, strerror(errno));
            if (setns(fd, CLONE_NEWNET) < 0) die("cannot enter network namespace %s: %s", q->netns, strerror(errno));
            close(fd);
            hd = &c->handles[c->nhandles++];
            hd->netns = q->netns;
            hd->h = nfq_open();
            if (!hd->h) die("nfq_open in %s failed: %s (is NFQUEUE available?)", q->netns, strerror(errno));
            nfnl_rcvbufsiz(nfq_nfnlh(hd->h), RCVBUF_BYTES);
            hd->fd = nfq_fd(hd->h);
            if (setns(home, CLONE_NEWNET) < 0) die("cannot return to own network namespace: %s", strerror(errno));
        }
        q->h = hd->h;
        q->wire_free = &hd->wire_free;
        q->qh = nfq_create_queue(hd->h, q->num, on_packet, q);
        if (!q->qh) die("cannot bind queue %u in %s: %s (another program holds it?)", q->num, q->netns, strerror(errno));
        if (nfq_set_mode(q->qh, NFQNL_COPY_PACKET, COPY_BYTES) < 0) die("nfq_set_mode failed");
        if (nfq_set_queue_maxlen(q->qh, QUEUE_MAXLEN) < 0) die("nfq_set_queue_maxlen failed");
        /* Whole GSO packets, not segmented copies: we only need the headers. */
        nfq_set_queue_flags(q->qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
    }
    close(home);
}

/* Asks the kernel to stamp received packets, so delays count from arrival,
 * not from when we got around to reading the queue. */
static int enable_rx_timestamps(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s >= 0) setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    return s; /* kept open for the program's lifetime */
}

static void usage(void)
{
    fputs("usage: mpiscope-delayd [--stats FILE] [--rt-prio N] [--seed N] [--mtu BYTES] [--daemon] [--check]\n"
          "                       --queue NETNS_PATH:QUEUE:DELAY_NS[:JITTER_NS[:RATE_BPS]] ...\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    static struct ctx c;
    G = &c;
    int rt_prio = 0, daemonize = 0, check_only = 0;
    c.rng = 0x9e3779b97f4a7c15ull;
    c.mtu = 1500;
    static const struct option opts[] = {
        {"stats", required_argument, 0, 's'}, {"rt-prio", required_argument, 0, 'r'},
        {"seed", required_argument, 0, 'S'},  {"daemon", no_argument, 0, 'd'},
        {"queue", required_argument, 0, 'q'}, {"check", no_argument, 0, 'c'},
        {"mtu", required_argument, 0, 'm'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 's': c.stats_path = optarg; break;
        case 'r': rt_prio = atoi(optarg); break;
        case 'S': c.rng ^= strtoull(optarg, NULL, 10) * 0xbf58476d1ce4e5b9ull; if (!c.rng) c.rng = 1; break;
        case 'd': daemonize = 1; break;
        case 'm':
            c.mtu = strtol(optarg, NULL, 10);
            if (c.mtu < 68 || c.mtu > 65535) die("--mtu: bad MTU '%s' (68 to 65535 bytes)", optarg);
            break;
        case 'q': parse_queue(&c, strdup(optarg)); break;
        case 'c': check_only = 1; break;
        default: usage();
        }
    }
    if (optind != argc || c.nqueues == 0) usage();
    c.flows = calloc(FLOW_SLOTS, sizeof *c.flows);
    if (!c.flows) die("out of memory");
    signal(SIGPIPE, SIG_IGN);

    bind_queues(&c);
    if (check_only) return 0; /* --check: the queues can be bound, nothing else */
    int ts_sock = enable_rx_timestamps();
    (void)ts_sock;

    if (daemonize) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) die("fork: %s", strerror(errno));
        if (pid > 0) {
            printf("ready %d\n", (int)pid);
            fflush(stdout);
            _exit(0);
        }
        setsid();
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            if (null > STDERR_FILENO) close(null);
        }
    } else {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
    }

    /* Sleeping on timers only, so a real-time priority cannot starve anyone;
     * it makes the wake-ups punctual while MPI ranks keep the cores busy. */
    if (rt_prio > 0) {
        struct sched_param sp = {.sched_priority = rt_prio};
        if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0)
            fprintf(stderr, "mpiscope-delayd: no real-time priority (%s); delays may stray more\n",
                    strerror(errno));
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGUSR1);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    c.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (sig_fd < 0 || c.timer_fd < 0 || ep < 0) die("cannot set up the event loop: %s", strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.u64 = UINT64_MAX;
    epoll_ctl(ep, EPOLL_CTL_ADD, sig_fd, &ev);
    ev.data.u64 = UINT64_MAX - 1;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.timer_fd, &ev);
    for (int k = 0; k < c.nhandles; k++) {
        int fl = fcntl(c.handles[k].fd, F_GETFL);
        fcntl(c.handles[k].fd, F_SETFL, fl | O_NONBLOCK);
        ev.data.u64 = (uint64_t)k;
        epoll_ctl(ep, EPOLL_CTL_ADD, c.handles[k].fd, &ev);
    }
    write_stats(&c);

    int running = 1;
    while (running) {
        struct epoll_event evs[64];
        int n = epoll_wait(ep, evs, 64, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait: %s", strerror(errno));
        }
        for (int i = 0; i < n; i++) {
            uint64_t id = evs[i].data.u64;
            if (id == UINT64_MAX) {
                struct signalfd_siginfo si;
                while (read(sig_fd, &si, sizeof si) == sizeof si) {
                    if (si.ssi_signo == SIGUSR1) write_stats(&c);
                    else running = 0;
                }
            } else if (id == UINT64_MAX - 1) {
                on_timer(&c);
            } else {
                on_queue(&c, &c.handles[id]);
            }
        }
        service(&c);
    }
    /* Leaving: let every held packet go rather than have the kernel drop it. */
    int64_t now = now_ns(CLOCK_MONOTONIC);
    while (c.heap_len) release(&c, heap_pop(&c), now);
    write_stats(&c);
    for (int i = 0; i < c.nqueues; i++) nfq_destroy_queue(c.queues[i].qh);
    for (int k = 0; k < c.nhandles; k++) nfq_close(c.handles[k].h);
    return 0;
}
