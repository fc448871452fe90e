/* hash.h — the hash function every table uses: XXH3 from libxxhash (Debian
 * package), fast on short keys such as attribute names, with good dispersion so
 * open addressing with linear probing stays short. */
#ifndef DRA_HASH_H
#define DRA_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash_bytes(const void *p, size_t n);

/* One word: the splitmix64 finaliser, cheaper than XXH3 on one word and just as well
 * mixed. Inline: a call each time was 6 % of decoding a device (perf on a hot
 * `mig_5000nodes` batch), most of it the call. */
static inline uint64_t hash_u64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

#endif
