/* SPDX-License-Identifier: BSD-3-Clause */
/* Why Cross Memory Attach may not work here, in the system's own terms:
 * Yama's ptrace scope, CAP_SYS_PTRACE, seccomp (container runtimes' default
 * profiles deny process_vm_readv without that capability), container hints. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_impl.h"

typedef struct cma_facts {
    int scope;          /* -1: no Yama */
    int cap_ptrace;     /* CAP_SYS_PTRACE in the effective set */
    int seccomp, filters, no_new_privs; /* -1: not reported */
    char container[96]; /* "" : no hint */
} cma_facts;

static long status_field(const char *key, int hex)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') v = (long)strtoull(line + k + 1, NULL, hex ? 16 : 10);
    if (f) fclose(f);
    return v;
}

static int file_has(const char *path, const char *const *words)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int hit = 0;
    while (f && !hit && fgets(line, sizeof line, f))
        for (int i = 0; words[i] && !hit; i++) hit = strstr(line, words[i]) != NULL;
    if (f) fclose(f);
    return hit;
}

static cma_facts gather(void)
{
    cma_facts f = {.scope = -1};
    FILE *y = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (y && fscanf(y, "%d", &f.scope) != 1) f.scope = -1;
    if (y) fclose(y);
    long cap = status_field("CapEff", 1);
    f.cap_ptrace = cap >= 0 && (cap >> 19 & 1); /* CAP_SYS_PTRACE = 19 */
    f.seccomp = (int)status_field("Seccomp", 0);
    f.filters = (int)status_field("Seccomp_filters", 0);
    f.no_new_privs = (int)status_field("NoNewPrivs", 0);
    static const char *const runtimes[] = {"docker", "kubepods", "containerd", "lxc", "podman", "libpod", NULL};
    if (!access("/.dockerenv", F_OK)) snprintf(f.container, sizeof f.container, "docker (/.dockerenv exists)");
    else if (!access("/run/.containerenv", F_OK)) snprintf(f.container, sizeof f.container, "podman (/run/.containerenv exists)");
    else if (getenv("container")) snprintf(f.container, sizeof f.container, "%.40s ($container)", getenv("container"));
    else if (file_has("/proc/1/cgroup", runtimes)) snprintf(f.container, sizeof f.container, "a container runtime (/proc/1/cgroup)");
    return f;
}

static const char *scope_text(int scope)
{
    switch (scope) {
    case -1: return "no Yama (no /proc/sys/kernel/yama/ptrace_scope): the same user may attach";
    case 0: return "kernel.yama.ptrace_scope = 0: the same user may attach";
    case 1: return "kernel.yama.ptrace_scope = 1: only ancestors or a declared tracer (PR_SET_PTRACER, which we set)";
    case 2: return "kernel.yama.ptrace_scope = 2: only with CAP_SYS_PTRACE";
    default: return "kernel.yama.ptrace_scope = 3: no process may attach until reboot";
    }
}

static void facts_text(const cma_facts *f, char *out, size_t n)
{
    snprintf(out, n, "%s; CAP_SYS_PTRACE %s; seccomp %s%s%s", scope_text(f->scope),
             f->cap_ptrace ? "effective" : "not effective",
             f->seccomp == 2 ? "filter mode" : f->seccomp == 1 ? "strict mode" : f->seccomp == 0 ? "off" : "unknown",
             f->container[0] ? "; container: " : "", f->container);
}


/* Which fact explains a failure with `err`. */
static const char *cause(const cma_facts *f, int err)
{
    if (err == ENOSYS) return f->seccomp == 2 ? "a seccomp filter answers ENOSYS (the container's profile)"
                                              : "the kernel was built without CONFIG_CROSS_MEMORY_ATTACH";
    if (err == EPERM || err == EACCES) {
        if (f->scope == 3) return "Yama ptrace_scope 3 forbids every attach";
        if (f->scope == 2 && !f->cap_ptrace) return "Yama ptrace_scope 2 needs CAP_SYS_PTRACE, which this process lacks";
        if (f->seccomp == 2) return "a seccomp filter denies process_vm_readv (container runtimes do so without CAP_SYS_PTRACE)";
        if (f->scope == 1) return "Yama ptrace_scope 1: the peer is not an ancestor and PR_SET_PTRACER did not help";
        return "permission denied (different users, or an LSM such as SELinux or AppArmor)";
    }
    return "process_vm_readv failed";
}

void tp_cma_explain(int err, char *out, size_t n)
{
    cma_facts f = gather();
    char facts[400];
    facts_text(&f, facts, sizeof facts);
    snprintf(out, n, "%s (%s)", err ? cause(&f, err) : "process_vm_readv returned wrong bytes", facts);
}

int tp_cma_test_errno(void)
{
    const char *e = getenv("MPISCOPE_TEST_CMA_ERRNO");
    if (!e) return 0;
    return !strcmp(e, "ENOSYS") ? ENOSYS : !strcmp(e, "EACCES") ? EACCES : EPERM;
}

int tp_cma_probe_json(char *out, size_t n)
{
    cma_facts f = gather();
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    volatile unsigned char token[64];
    for (int i = 0; i < 64; i++) token[i] = (unsigned char)(i * 3 + 1);
    pid_t parent = getpid();
    int fds[2], err = EIO;
    if (pipe(fds)) return snprintf(out, n, "{\"available\": false, \"reason\": \"pipe: %s\"}", strerror(errno)), 0;
    pid_t child = fork();
    if (child == 0) { /* reads its parent, which is no descendant: as one MPI rank reads another */
        unsigned char got[64];
        struct iovec l = {got, sizeof got}, r = {(void *)token, sizeof got};
        int e = tp_cma_test_errno();
        if (!e) e = process_vm_readv(parent, &l, 1, &r, 1, 0) == (ssize_t)sizeof got ? 0 : errno ? errno : EIO;
        for (int i = 0; !e && i < 64; i++) e = got[i] == (unsigned char)(i * 3 + 1) ? 0 : EIO;
        if (write(fds[1], &e, sizeof e) != (ssize_t)sizeof e) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    if (child < 0 || read(fds[0], &err, sizeof err) != (ssize_t)sizeof err) err = child < 0 ? errno : EIO;
    close(fds[0]);
    if (child > 0) waitpid(child, NULL, 0);
    char facts[400];
    facts_text(&f, facts, sizeof facts);
    snprintf(out, n,
             "{\"available\": %s, \"errno\": %s%s%s, \"reason\": \"%s\", \"facts\": \"%s\", \"ptrace_scope\": %d, "
             "\"cap_sys_ptrace\": %s, \"seccomp\": %d, \"seccomp_filters\": %d, \"no_new_privs\": %d, "
             "\"container\": \"%s\"}",
             err ? "false" : "true", err ? "\"" : "", err ? (strerrorname_np(err) ? strerrorname_np(err) : "?") : "null",
             err ? "\"" : "", err ? cause(&f, err) : "process_vm_readv between two processes of this user works",
             facts, f.scope, f.cap_ptrace ? "true" : "false", f.seccomp, f.filters, f.no_new_privs, f.container);
    return !err;
}
