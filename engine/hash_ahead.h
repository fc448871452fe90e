/* hash_ahead.h — the hashes of a batch of changes computed on a second thread while
 * the store decodes them (private to engine/; store.c dra_store_apply). Hashing a
 * value (json_hash.h) was a third of building a large snapshot from objects in memory
 * (perf, `dralloc bench mig_5000nodes`) and needs nothing the decoding does. */
#ifndef DRA_ENGINE_HASH_AHEAD_H
#define DRA_ENGINE_HASH_AHEAD_H

#include "engine/snapshot.h"

#include <stdint.h>

typedef struct dra_hash_ahead dra_hash_ahead;

/* Starts hashing changes[0..n) (which must outlive it); NULL when the batch is too
 * small for a thread to pay, or none can be started (the caller hashes). */
dra_hash_ahead *dra__hash_ahead_start(const dra_change *changes, size_t n);
/* The hash of change i's object (0 for a deletion), waiting for it if need be. */
uint64_t dra__hash_ahead_get(dra_hash_ahead *ha, size_t i);
/* Stops the thread (at once, when not all were taken) and frees ha. */
void dra__hash_ahead_free(dra_hash_ahead *ha);

#endif
