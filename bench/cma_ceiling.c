/* SPDX-License-Identifier: BSD-3-Clause */
/* How fast process_vm_readv can be on this machine, against memcpy, and
 * what limits it (the transport lab's cma target: >= 0.9 x memcpy at >= 1 MiB;
 * bench/transport_lab.py).
 *
 * A child process owns the source buffer (written by it: its own pages);
 * the parent pulls it as one MPI rank pulls another. Variants, each the
 * median of REPS pulls of SIZE bytes into a warm, pre-faulted destination:
 *   memcpy            the same copy inside one process (the reference)
 *   readv 1 iov       one iovec each side, page-aligned buffers
 *   readv 4K iovs     one iovec per page (what per-page costs add)
 *   readv 2 threads   two readers, each pulling one half (chunked pipelining)
 *   readv cold dst    a fresh destination every pull (first-touch faults)
 *   readv THP src     the source in transparent huge pages (fewer pages to pin)
 *   readv THP dst     the destination in huge pages (fewer TLB misses while copying)
 *   readv THP both    both (what the lab's --huge-pages gives a pair of ranks)
 * and memcpy with both buffers in huge pages, the reference for the last.
 * Huge-page regions are 2 MiB-aligned and madvise(MADV_HUGEPAGE)d before the
 * first touch; the share of each region the kernel backed by huge pages
 * (/proc/PID/smaps, AnonHugePages) is printed beside it, since THP is a
 * request, not a promise. The kernel's cost per 4 KiB page is
 * (readv time - memcpy time) / pages, for each page kind.
 *
 *   gcc -O2 -pthread bench/cma_ceiling.c -o /tmp/cma_ceiling && /tmp/cma_ceiling [SIZE_MIB]
 *   /tmp/cma_ceiling SIZE_MIB --loop VARIANT SECONDS   one variant only, for perf record -g
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { REPS = 41, PAGE = 4096 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { HUGE = 2 << 20 };

/* n bytes, touched; huge: 2 MiB-aligned and advised before the first touch,
 * so even 1 MiB can sit in one huge page. The mapping is never unmapped
 * (a bench: the process ends soon). */
static void *region(size_t n, int huge)
{
    size_t len = huge ? (n + HUGE - 1) / HUGE * HUGE + HUGE : n;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) perror("mmap"), exit(1);
    if (huge) p = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    madvise(p, huge ? (n + HUGE - 1) / HUGE * HUGE : n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(p, 1, n);
    return p;
}

/* KiB of the mapping holding `addr` in process `pid` that are huge pages. */
static long huge_kib(pid_t pid, const void *addr)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    int inside = 0;
    uintptr_t a = (uintptr_t)addr;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) inside = a >= lo && a < hi;
        else if (inside && sscanf(line, "AnonHugePages: %ld", &kib) == 1) break;
    }
    if (f) fclose(f);
    return kib;
}

/* A child holding `n` bytes at the returned address (its own written pages). */
static pid_t holder(size_t n, int huge, void **addr)
{
    int fd[2];
    if (pipe(fd)) perror("pipe"), exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        void *p = region(n, huge);
        if (write(fd[1], &p, sizeof p) != sizeof p) _exit(1);
        pause();
        _exit(0);
    }
    if (read(fd[0], addr, sizeof *addr) != sizeof *addr) perror("read"), exit(1);
    close(fd[0]), close(fd[1]);
    return pid;
}

typedef struct pull {
    pid_t pid;
    char *dst, *src;
    size_t n, iov_bytes;
} pull;

static void pull_once(const pull *q)
{
    enum { MAXV = 1024 };
    struct iovec l[MAXV], r[MAXV];
    for (size_t off = 0; off < q->n;) {
        int k = 0;
        size_t start = off;
        for (; k < MAXV && off < q->n; k++, off += q->iov_bytes) {
            size_t len = q->n - off < q->iov_bytes ? q->n - off : q->iov_bytes;
            l[k] = (struct iovec){q->dst + off, len};
            r[k] = (struct iovec){q->src + off, len};
        }
        ssize_t got = process_vm_readv(q->pid, l, k, r, k, 0);
        if (got != (ssize_t)((off < q->n ? off : q->n) - start)) perror("process_vm_readv"), exit(1);
    }
}

/* What the kernel's copy loop does (copy_page_to_iter -> copy_user_generic,
 * `rep movsb` on CPUs with FSRM/ERMS), in user space: one 4 KiB page at a
 * time. Its speed against glibc's memcpy is the share of the gap that is
 * the copy instruction, not pinning or walking pages. */
static void movsb_pages(char *dst, const char *src, size_t n)
{
    for (size_t off = 0; off < n; off += PAGE) {
        size_t len = n - off < PAGE ? n - off : PAGE;
        char *d = dst + off;
        const char *s = src + off;
        __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(len) : : "memory");
    }
}

/* The kernel's copy alone, no pinning of another process's pages: pread of
 * a memfd whose pages are in memory (filemap_read -> _copy_to_iter, the
 * function process_vm_readv spends its time in). */
static int memfd_of(size_t n, int huge)
{
    int fd = memfd_create("cma_ceiling", 0);
    char *p = region(n, huge);
    if (fd < 0 || write(fd, p, n) != (ssize_t)n) perror("memfd"), exit(1);
    return fd;
}

static void *pull_thread(void *arg)
{
    pull_once(arg);
    return NULL;
}

/* Median seconds of `reps` pulls; threads: readers, each one slice; cold:
 * fresh dst each time; huge_dst: the destination in huge pages. */
static double measure(pid_t pid, char *src, size_t n, size_t iov_bytes, int threads, int cold, int is_memcpy,
                      int huge_dst, int reps)
{
    double *t = calloc((size_t)reps, sizeof *t);
    char *dst = region(n, huge_dst);
    for (int i = 0; i < reps; i++) {
        if (cold) munmap(dst, n), dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        pull q[8];
        pthread_t th[8];
        double a = now();
        if (is_memcpy == 3) {
            if (pread((int)(intptr_t)src, dst, n, 0) != (ssize_t)n) perror("pread"), exit(1);
        } else if (is_memcpy == 2) movsb_pages(dst, src, n);
        else if (is_memcpy) memcpy(dst, src, n);
        else if (threads == 1) pull_once(&(pull){pid, dst, src, n, iov_bytes});
        else {
            for (int k = 0; k < threads; k++) {
                q[k] = (pull){pid, dst + k * (n / threads), src + k * (n / threads), n / threads, iov_bytes};
                pthread_create(&th[k], NULL, pull_thread, &q[k]);
            }
            for (int k = 0; k < threads; k++) pthread_join(th[k], NULL);
        }
        t[i] = now() - a;
    }
    if (!huge_dst) munmap(dst, n);
    qsort(t, (size_t)reps, sizeof *t, cmp);
    double med = t[reps / 2];
    free(t);
    return med;
}

typedef struct variant {
    const char *name;
    int src_huge, dst_huge, threads, cold, is_memcpy; /* 2: rep movsb per page; 3: pread of a memfd */
    size_t iov; /* 0: one iovec for the whole message */
} variant;

static const variant variants[] = {
    {"memcpy", 0, 0, 1, 0, 1, 0},          {"memcpy THP both", 1, 1, 1, 0, 1, 0},
    {"rep movsb per 4K page", 0, 0, 1, 0, 2, 0}, {"rep movsb per 4K, THP both", 1, 1, 1, 0, 2, 0},
    {"kernel copy (memfd pread)", 0, 0, 1, 0, 3, 0}, {"kernel copy, THP dst", 0, 1, 1, 0, 3, 0},
    {"readv 1 iov", 0, 0, 1, 0, 0, 0},     {"readv 4K iovs", 0, 0, 1, 0, 0, PAGE},
    {"readv 2 threads", 0, 0, 2, 0, 0, 0}, {"readv cold dst", 0, 0, 1, 1, 0, 0},
    {"readv THP src", 1, 0, 1, 0, 0, 0},   {"readv THP dst", 0, 1, 1, 0, 0, 0},
    {"readv THP both", 1, 1, 1, 0, 0, 0},  {"readv THP both, 2 threads", 1, 1, 2, 0, 0, 0},
};
enum { NV = sizeof variants / sizeof *variants };

int main(int argc, char **argv)
{
    size_t n = (size_t)(argc > 1 ? atof(argv[1]) : 1) * (1 << 20);
    const char *only = argc > 3 && !strcmp(argv[2], "--loop") ? argv[3] : NULL;
    double loop_s = argc > 4 ? atof(argv[4]) : 5;
    void *src[2];
    pid_t holders[2] = {holder(n, 0, &src[0]), holder(n, 1, &src[1])};
    char *local[2] = {region(n, 0), region(n, 1)}; /* memcpy's own sources */
    int fd = memfd_of(n, 0);
    double t[NV];
    for (int i = 0; i < NV; i++) {
        const variant *v = &variants[i];
        if (only && strcmp(only, v->name)) continue;
        char *from = v->is_memcpy == 3 ? (char *)(intptr_t)fd : v->is_memcpy ? local[v->src_huge] : src[v->src_huge];
        pid_t pid = v->is_memcpy ? 0 : holders[v->src_huge];
        size_t iov = v->iov ? v->iov : n;
        int reps = REPS;
        if (only) /* about loop_s seconds of this variant alone */
            reps = (int)(loop_s / measure(pid, from, n, iov, v->threads, v->cold, v->is_memcpy, v->dst_huge, 3)) | 1;
        t[i] = measure(pid, from, n, iov, v->threads, v->cold, v->is_memcpy, v->dst_huge, reps);
    }
    if (only) {
        kill(holders[0], SIGKILL), kill(holders[1], SIGKILL);
        return 0;
    }
    printf("%zu KiB: AnonHugePages of the THP source's mapping %ld KiB (of the 4K source's %ld KiB); "
           "of memcpy's THP source %ld KiB\n", n >> 10, huge_kib(holders[1], src[1]),
           huge_kib(holders[0], src[0]), huge_kib(getpid(), local[1]));
    for (int i = 0; i < NV; i++) {
        const variant *v = &variants[i];
        /* the reference: memcpy between buffers of the same page kind as the destination */
        double ref = t[v->dst_huge && v->src_huge ? 1 : 0], pages = (double)n / PAGE;
        printf("  %-26s %6.2f GB/s  %.2f x memcpy", v->name, n / t[i] / 1e9, t[0] / t[i]);
        if (v->is_memcpy != 1)
            printf("  %.2f x memcpy THP  %+.0f ns per 4K page", t[1] / t[i], (t[i] - ref) / pages * 1e9);
        printf("\n");
    }
    kill(holders[0], SIGKILL), kill(holders[1], SIGKILL);
    waitpid(holders[0], NULL, 0), waitpid(holders[1], NULL, 0);
    return 0;
}
