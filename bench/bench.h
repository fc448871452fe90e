/* bench.h — the latency/throughput harness behind `dralloc bench`: named
 * workloads, timing loops, and reports with medians, percentiles and ratios. */
#ifndef DRA_BENCH_H
#define DRA_BENCH_H
#endif
