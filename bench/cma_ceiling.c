/* How fast process_vm_readv can be on this machine, against memcpy, and
 * what limits it (issue 16's cma target: >= 0.9 x memcpy at >= 1 MiB).
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
 *
 *   gcc -O2 -pthread bench/cma_ceiling.c -o /tmp/cma_ceiling && /tmp/cma_ceiling [SIZE_MIB]
 */
#define _GNU_SOURCE
#include <pthread.h>
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

static void *region(size_t n, int huge)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) perror("mmap"), exit(1);
    madvise(p, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    memset(p, 1, n);
    return p;
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

static void *pull_thread(void *arg)
{
    pull_once(arg);
    return NULL;
}

/* Median GB/s of REPS pulls; threads: readers, each one slice; cold: fresh dst each time. */
static double measure(pid_t pid, char *src, size_t n, size_t iov_bytes, int threads, int cold, int is_memcpy)
{
    double t[REPS];
    char *dst = region(n, 0);
    for (int i = 0; i < REPS; i++) {
        if (cold) munmap(dst, n), dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        pull q[8];
        pthread_t th[8];
        double a = now();
        if (is_memcpy) memcpy(dst, src, n);
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
    munmap(dst, n);
    qsort(t, REPS, sizeof *t, cmp);
    return n / t[REPS / 2] / 1e9;
}

int main(int argc, char **argv)
{
    size_t n = (size_t)(argc > 1 ? atof(argv[1]) : 1) * (1 << 20);
    void *src, *src_huge;
    pid_t a = holder(n, 0, &src), b = holder(n, 1, &src_huge);
    char *local = region(n, 0);
    double mc = measure(0, local, n, n, 1, 0, 1);
    struct { const char *name; pid_t pid; void *src; size_t iov; int threads, cold; } v[] = {
        {"readv 1 iov", a, src, n, 1, 0},        {"readv 4K iovs", a, src, PAGE, 1, 0},
        {"readv 2 threads", a, src, n, 2, 0},    {"readv cold dst", a, src, n, 1, 1},
        {"readv THP src", b, src_huge, n, 1, 0}, {"readv THP src, 2 threads", b, src_huge, n, 2, 0},
    };
    printf("%zu KiB: memcpy %.2f GB/s\n", n >> 10, mc);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        double g = measure(v[i].pid, v[i].src, n, v[i].iov, v[i].threads, v[i].cold, 0);
        printf("  %-26s %6.2f GB/s  %.2f x memcpy\n", v[i].name, g, g / mc);
    }
    kill(a, SIGKILL), kill(b, SIGKILL);
    waitpid(a, NULL, 0), waitpid(b, NULL, 0);
    return 0;
}
