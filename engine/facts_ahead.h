/* facts_ahead.h — the facts (item_facts.h) of a batch of changes computed on a second
 * thread while the store decodes them (private to engine/; store.c dra_store_apply).
 * Hashing a value and walking it for unknown fields were half of building a large
 * snapshot from objects in memory (perf, `dralloc bench mig_5000nodes`) and need
 * nothing the decoding does. */
#ifndef DRA_ENGINE_FACTS_AHEAD_H
#define DRA_ENGINE_FACTS_AHEAD_H

#include "engine/item_facts.h"
#include "engine/snapshot.h"

#include <stdint.h>

typedef struct dra_facts_ahead dra_facts_ahead;

/* Starts on changes[0..n) (which must outlive it); NULL when the batch is too small
 * for a thread to pay, or none can be started (the caller goes without). */
dra_facts_ahead *dra__facts_ahead_start(const dra_change *changes, size_t n);
/* The facts of change i's object (all zero for a deletion), waiting for them if need be. */
dra_item_facts dra__facts_ahead_get(dra_facts_ahead *fa, size_t i);
/* Stops the thread (at once, when not all were taken) and frees fa. */
void dra__facts_ahead_free(dra_facts_ahead *fa);

#endif
