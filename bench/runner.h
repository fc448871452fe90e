/* runner.h — the timing loop of every workload: `warmup` untimed passes (caches,
 * branch predictors, lazily built state), then `reps` timed passes, each pass
 * being one call of the workload's pass function over its whole input. A pass
 * reports how many operations it did, and the runner records ns per operation
 * for that pass; the samples then go to bench_stats_of. Timing whole passes keeps
 * the clock's own cost (tens of ns) out of per-operation figures. */
#ifndef DRA_BENCH_RUNNER_H
#define DRA_BENCH_RUNNER_H

#include "base/base.h"
#include "bench/stats.h"

/* One pass over the workload's input; returns the number of operations done. */
typedef uint64_t (*bench_pass_fn)(void *ctx);

typedef struct bench_run {
    size_t reps;            /* timed passes (samples) */
    double *ns_per_op;      /* reps samples, one per timed pass */
    uint64_t ops_per_pass;  /* operations of the last pass */
    double total_ns;        /* wall time of the timed passes */
    bench_stats stats;      /* summary of ns_per_op */
} bench_run;

/* Runs warmup + reps passes of fn(ctx) and fills *out (free with bench_run_free). */
void bench_run_passes(bench_pass_fn fn, void *ctx, size_t warmup, size_t reps, bench_run *out);
void bench_run_free(bench_run *r);

#endif
