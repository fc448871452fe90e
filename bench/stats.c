/* stats.c — sorts a copy of the samples and reads the ranks off it. */
#include "bench/stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

double bench_quantile(const double *sorted, size_t n, double q) {
    if (n == 0) return 0;
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[n - 1];
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;
    if (lo + 1 >= n) return sorted[n - 1];
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

bench_stats bench_stats_of(const double *samples, size_t n) {
    bench_stats s = {0};
    if (n == 0) return s;
    double *v = xmalloc(n * sizeof *v);
    memcpy(v, samples, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += v[i];
    s.n = n;
    s.min = v[0];
    s.max = v[n - 1];
    s.mean = sum / (double)n;
    s.p50 = s.median = bench_quantile(v, n, 0.50);
    s.p90 = bench_quantile(v, n, 0.90);
    s.p99 = bench_quantile(v, n, 0.99);
    free(v);
    return s;
}

double bench_ratio(double a, double b) { return b == 0 ? 0 : a / b; }
