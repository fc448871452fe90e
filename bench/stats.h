/* stats.h — summary statistics of a set of timing samples (one sample per timed
 * pass, e.g. ns per operation): min, max, mean, median and the p50/p90/p99
 * percentiles. Percentiles use linear interpolation between the closest ranks
 * (the "R-7" definition NumPy and spreadsheets use), so p50 equals the median and
 * with few samples p99 lies just below the maximum. */
#ifndef DRA_BENCH_STATS_H
#define DRA_BENCH_STATS_H

#include "base/base.h"

typedef struct bench_stats {
    size_t n;
    double min, max, mean;
    double median;               /* = p50 */
    double p50, p90, p99;
} bench_stats;

/* Summarises samples[0..n) (the array is left unchanged). All zero when n == 0. */
bench_stats bench_stats_of(const double *samples, size_t n);
/* The q-quantile (0 <= q <= 1) of sorted[0..n), interpolated; 0 when n == 0. */
double bench_quantile(const double *sorted, size_t n, double q);
/* a / b, or 0 when b is 0 (ratios in reports: "peer ns / our ns" = our speed-up). */
double bench_ratio(double a, double b);

#endif
