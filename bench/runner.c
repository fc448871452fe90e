/* runner.c — warm-up, then timed passes with bench_now_ns around each. */
#include "bench/runner.h"
#include "bench/clock.h"

#include <stdlib.h>

void bench_run_passes(bench_pass_fn fn, void *ctx, size_t warmup, size_t reps, bench_run *out) {
    *out = (bench_run){.reps = reps, .ns_per_op = xcalloc(reps ? reps : 1, sizeof(double))};
    for (size_t i = 0; i < warmup; i++) out->ops_per_pass = fn(ctx);
    for (size_t i = 0; i < reps; i++) {
        uint64_t t0 = bench_now_ns();
        uint64_t ops = fn(ctx);
        uint64_t dt = bench_now_ns() - t0;
        out->ops_per_pass = ops;
        out->total_ns += (double)dt;
        out->ns_per_op[i] = ops ? (double)dt / (double)ops : (double)dt;
    }
    out->stats = bench_stats_of(out->ns_per_op, reps);
}

void bench_run_free(bench_run *r) {
    free(r->ns_per_op);
    r->ns_per_op = NULL;
}
