/* hash.c — thin wrappers over XXH3 (see hash.h). */
#include "base/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t hash_bytes(const void *p, size_t n) { return XXH3_64bits(p, n); }

uint64_t hash_u64(uint64_t x) {
    /* splitmix64 finaliser: cheaper than XXH3 on one word and just as well mixed */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}
