/* json_hash.c — the store's hash of a JSON value (json_hash.h). */
#include "engine/text/json_hash.h"

#include "base/hash.h"

#include <string.h>

/* A hash of a JSON value that does not depend on the order of object members: equal
 * for equal values, as the hash of the canonical text (json_dumps with sorted keys)
 * was, without printing that text — which was half of ingesting a large cluster
 * (perf, `dralloc bench mig_5000nodes`). Members combine by addition (order-free),
 * each one mix of its key's hash plus its value's times an odd constant (the
 * multiplication keeps a key's hash and a value's from trading places); array
 * elements in order; each type tagged, so 1 and 1.0 and "1" differ as their texts
 * did. Never 0 (0: no hash). */
uint64_t dra__json_value_hash(const json_t *v) {
    uint64_t h;
    switch (json_typeof(v)) {
    /* The walk is bound by memory, not by hashing: a tree built long before (a batch
     * of objects given in memory) is read from DRAM node by node. The next member's
     * value, and the element after next, are asked for before this one is hashed, so
     * two loads are in flight rather than one (a sixth off the walk: perf, `dralloc
     * bench mig_5000nodes`). */
    case JSON_OBJECT: {
        h = 0x6f626a6563740000ull + json_object_size(v);
        void *it = json_object_iter((json_t *)v);
        while (it) {
            void *next = json_object_iter_next((json_t *)v, it);
            if (next) __builtin_prefetch(json_object_iter_value(next));
            uint64_t kh = hash_bytes(json_object_iter_key(it), json_object_iter_key_len(it));
            h += hash_u64(kh + dra__json_value_hash(json_object_iter_value(it)) * 0x9E3779B97F4A7C15ull);
            it = next;
        }
        break;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        h = 0x6172726179000000ull + n;
        for (size_t i = 0; i < n; i++) {
            if (i + 2 < n) __builtin_prefetch(json_array_get(v, i + 2));
            h = hash_u64(h ^ dra__json_value_hash(json_array_get(v, i)));
        }
        break;
    }
    case JSON_STRING: h = hash_bytes(json_string_value(v), json_string_length(v)) ^ 0x737472ull; break;
    case JSON_INTEGER: h = hash_u64((uint64_t)json_integer_value(v) ^ 0x696e74ull); break;
    case JSON_REAL: {
        double d = json_real_value(v);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        h = hash_u64(bits ^ 0x7265616cull);
        break;
    }
    case JSON_TRUE: h = 0x74727565ull; break;
    case JSON_FALSE: h = 0x66616c7365ull; break;
    default: h = 0x6e756c6cull; break;
    }
    return h ? h : 1;
}

uint64_t dra__object_identity(const json_t *obj, bool served) {
    const json_t *meta = served ? json_object_get(obj, "metadata") : NULL;
    const json_t *rv = json_object_get(meta, "resourceVersion"), *uid = json_object_get(meta, "uid");
    if (!json_is_string(rv) || !json_string_length(rv)) return dra__json_value_hash(obj);
    uint64_t h = hash_u64(0x7276657273696f6eull ^ hash_bytes(json_string_value(rv), json_string_length(rv)));
    if (json_is_string(uid)) h = hash_u64(h + hash_bytes(json_string_value(uid), json_string_length(uid)));
    return h ? h : 1;
}
