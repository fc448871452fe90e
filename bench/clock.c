/* clock.c — bench's clocks on base/clock.h (bench_now_ns: monotonic, bench_cpu_ns: the
 * calling thread's CPU time), peak RSS from /proc, and the hardware counters. */
#include "bench/clock.h"

#include "base/clock.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void) { return monotonic_ns(); }

uint64_t bench_cpu_ns(void) { return thread_cpu_ns(); }

uint64_t bench_proc_cpu_ns(void) { return clock_ns_of(CLOCK_PROCESS_CPUTIME_ID); }

void bench_reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return;
    fputs("5", f);   /* "reset the peak resident set size" (proc(5)) */
    fclose(f);
}

bool bench_release_freed(void) {
    /* jemalloc when it is the process's allocator (found at run time: the sanitizer
     * builds link none); 4096 is MALLCTL_ARENAS_ALL */
    typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
    mallctl_fn mc = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
    if (mc) return mc("arena.4096.purge", NULL, NULL, NULL, 0) == 0;
    return malloc_trim(0) >= 0;
}

long bench_status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long v = 0;
    size_t fl = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, fl)) v = strtol(line + fl, NULL, 10);
    fclose(f);
    return v;
}

/* One user-space hardware counter of the calling thread; -1 when the kernel or the
 * container does not allow it (perf_event_paranoid, no PMU in the VM). */
static int counter_open(uint64_t config) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

bool bench_counters_open(bench_counters *c) {
    c->fd[0] = counter_open(PERF_COUNT_HW_CPU_CYCLES);
    c->fd[1] = c->fd[0] >= 0 ? counter_open(PERF_COUNT_HW_INSTRUCTIONS) : -1;
    if (c->fd[1] < 0) {
        bench_counters_close(c);
        return false;
    }
    return true;
}

void bench_counters_read(const bench_counters *c, uint64_t *cycles, uint64_t *instructions) {
    uint64_t v[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (c->fd[i] < 0 || read(c->fd[i], &v[i], sizeof v[i]) != (ssize_t)sizeof v[i]) v[i] = 0;
    *cycles = v[0];
    *instructions = v[1];
}

void bench_counters_close(bench_counters *c) {
    for (int i = 0; i < 2; i++) {
        if (c->fd[i] >= 0) close(c->fd[i]);
        c->fd[i] = -1;
    }
}
