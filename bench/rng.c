/* rng.c — mulberry32 as bench.js writes it. In JavaScript the intermediate values
 * are int32 or uint32 and `t + Math.imul(...)` may leave the int32 range before
 * `^=` wraps it back, which is exactly uint32 arithmetic modulo 2^32; so plain
 * uint32_t operations reproduce every bit. */
#include "bench/rng.h"

void bench_rng_init(bench_rng *r, uint32_t seed) { r->s = seed; }

uint32_t bench_rng_u32(bench_rng *r) {
    r->s += 0x6d2b79f5u;
    uint32_t t = r->s;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return t ^ (t >> 14);
}

double bench_rng_next(bench_rng *r) { return (double)bench_rng_u32(r) / 4294967296.0; }

size_t bench_rng_pick(bench_rng *r, size_t n) {
    /* r * n is exact in a double (u * n < 2^53), so the truncation is Math.floor's. */
    return (size_t)(bench_rng_next(r) * (double)n);
}
