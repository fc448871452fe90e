/* hash.h — the hash function every table uses: XXH3 from libxxhash (Debian
 * package), fast on short keys such as attribute names, with good dispersion so
 * open addressing with linear probing stays short. */
#ifndef DRA_HASH_H
#define DRA_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash_bytes(const void *p, size_t n);
uint64_t hash_u64(uint64_t x);

#endif
