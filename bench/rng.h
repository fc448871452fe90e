/* rng.h — the deterministic random number generator of the shared benchmark
 * workloads: a bit-exact port of the mulberry32-style `rng(seed)` in
 * ../shared/bench/cel-peers/bench.js. Every draw is a double in [0, 1) with 32
 * bits of randomness (u / 2^32), so comparisons such as `r < 0.1` and picks such
 * as floor(r * len) give the same results as in JavaScript, draw for draw. */
#ifndef DRA_BENCH_RNG_H
#define DRA_BENCH_RNG_H

#include "base/base.h"

typedef struct bench_rng {
    uint32_t s;          /* state; advanced by the golden-ratio-like constant per draw */
} bench_rng;

void bench_rng_init(bench_rng *r, uint32_t seed);
/* Next 32 raw bits (JavaScript: the value before the division by 2^32). */
uint32_t bench_rng_u32(bench_rng *r);
/* Next draw in [0, 1), exactly as bench.js's r(). */
double bench_rng_next(bench_rng *r);
/* Index of bench.js's pick(r, a) for an array of length n: floor(r() * n). */
size_t bench_rng_pick(bench_rng *r, size_t n);

#endif
