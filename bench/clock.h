/* clock.h — the benchmark clock: CLOCK_MONOTONIC in nanoseconds (never steps
 * backwards with NTP adjustments; vDSO-backed, ~20 ns per read on Linux), so
 * time a whole pass of many operations rather than single operations. */
#ifndef DRA_BENCH_CLOCK_H
#define DRA_BENCH_CLOCK_H

#include "base/base.h"

uint64_t bench_now_ns(void);
/* CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), ns: what a figure costs
 * when the machine is shared and wall time includes waiting for a core. */
uint64_t bench_cpu_ns(void);
/* CPU time of the whole process (every thread), ns. */
uint64_t bench_proc_cpu_ns(void);
/* A /proc/self/status figure in KiB ("VmRSS:", "VmHWM:"), 0 when unreadable. */
long bench_status_kib(const char *field);
/* VmHWM back to the current RSS, so that the next peak read is of what follows. */
void bench_reset_peak_rss(void);
/* Gives the pages the allocator keeps freed for reuse back to the kernel (jemalloc:
 * every arena purged; glibc's malloc: malloc_trim), so that the next VmRSS counts what
 * is held — what a service shows once its allocator's decay has run (dralloc keeps
 * freed pages 10 s: cmd/main.c). False when neither could be asked. */
bool bench_release_freed(void);

/* The calling thread's user-space cycles and instructions (perf_event_open): what a
 * loop costs on the core, whatever else the machine runs meanwhile (a descheduled
 * thread counts nothing). bench_counters_open is false where counters are not
 * allowed; reads then give 0. */
typedef struct bench_counters {
    int fd[2];   /* cycles, instructions */
} bench_counters;
bool bench_counters_open(bench_counters *c);
void bench_counters_read(const bench_counters *c, uint64_t *cycles, uint64_t *instructions);
void bench_counters_close(bench_counters *c);

#endif
