/* json_hash.h — a hash of a JSON value that does not depend on the order of object
 * members (private to engine/): how the store tells an object given again unchanged
 * (store.c) and one given twice with different contents. A pure function of the
 * value, so parse_ahead.c computes it on its thread while the store decodes. */
#ifndef DRA_ENGINE_JSON_HASH_H
#define DRA_ENGINE_JSON_HASH_H

#include <jansson.h>
#include <stdint.h>

/* Never 0 (0: no hash). */
uint64_t dra__json_value_hash(const json_t *v);

#endif
