/* clock.c — bench_now_ns over clock_gettime(CLOCK_MONOTONIC), bench_cpu_ns over the
 * calling thread's CPU clock. */
#include "bench/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
