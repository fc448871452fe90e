/* hash.c — thin wrappers over XXH3 (see hash.h). */
#include "base/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t hash_bytes(const void *p, size_t n) { return XXH3_64bits(p, n); }
