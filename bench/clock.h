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
/* A /proc/self/status figure in KiB ("VmRSS:", "VmHWM:"), 0 when unreadable. */
long bench_status_kib(const char *field);

#endif
