/* item_facts.h — what a thread ahead of the decoder learns of one object (private to
 * engine/): pure functions of its value, computed where a second core is free —
 * parse_ahead.c while it parses a file's items, the store's second thread over a batch
 * given in memory (work_ahead.h) — and handed to the store with the object (store.c
 * apply_one). Each one
 * spares the decoding thread a walk over the whole tree: the hash tells an object
 * given again unchanged; fields_known lets the decoder skip kubectl's unknown-field
 * walk, a third of decoding a device-heavy slice (perf, `dralloc bench
 * mig_5000nodes`). */
#ifndef DRA_ENGINE_ITEM_FACTS_H
#define DRA_ENGINE_ITEM_FACTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/text/json_hash.h"
#include "engine/decode/validate.h"

typedef struct dra_item_facts {
    uint64_t hash;       /* dra__object_identity; 0: not computed (the store hashes) */
    bool fields_known;   /* dra__input_fields_known; false: not known (the decoder walks) */
} dra_item_facts;

/* fields: whether the decoder would walk for unknown fields (dra__input_heard) —
 * else the walk here is skipped too; served: dra_change.served. */
static inline dra_item_facts dra__item_facts(const json_t *v, bool fields, bool served) {
    return (dra_item_facts){dra__object_identity(v, served), fields && dra__input_fields_known(v)};
}

#endif
