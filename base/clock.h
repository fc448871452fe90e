/* clock.h — the process's clocks in nanoseconds: CLOCK_MONOTONIC (never steps: what
 * deadlines, timeouts and durations are measured on), CLOCK_REALTIME (Unix time, for
 * what is shown to people: a snapshot's build time) and the calling thread's CPU time
 * (what a computation cost on a shared machine). One definition, so that every layer
 * measures a deadline on the same clock. */
#ifndef DRA_BASE_CLOCK_H
#define DRA_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns_of(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t monotonic_ns(void) { return clock_ns_of(CLOCK_MONOTONIC); }
static inline int64_t realtime_ns(void) { return (int64_t)clock_ns_of(CLOCK_REALTIME); }
static inline uint64_t thread_cpu_ns(void) { return clock_ns_of(CLOCK_THREAD_CPUTIME_ID); }

#endif
