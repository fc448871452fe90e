/* clock.c — bench_now_ns over clock_gettime(CLOCK_MONOTONIC). */
#include "bench/clock.h"

#include <time.h>

uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
