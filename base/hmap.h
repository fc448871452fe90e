/* hmap.h — an open-addressing hash map from 64-bit keys to 64-bit values (or
 * pointers), linear probing, power-of-two capacity, grown at 70% load. Keys are
 * whatever the caller packs into 64 bits: an interned id, a pair of ids, a
 * pointer. Deletion uses backward-shift, so there are no tombstones and lookups
 * stay short after churn. Not thread-safe for writers; concurrent readers of a
 * map nobody writes are fine (snapshots are built, then only read). */
#ifndef DRA_HMAP_H
#define DRA_HMAP_H

#include "base/base.h"

typedef struct hmap_slot {
    uint64_t key;
    uint64_t val;
} hmap_slot;

typedef struct hmap {
    hmap_slot *slots;
    uint8_t *used;      /* 1 per occupied slot; keys may take any value, so no sentinel key */
    size_t cap;         /* power of two, 0 before the first insert */
    size_t len;
} hmap;

void hmap_init(hmap *m);
void hmap_free(hmap *m);
void hmap_clear(hmap *m);
/* Returns true and sets *val when key is present. */
bool hmap_get(const hmap *m, uint64_t key, uint64_t *val);
/* Inserts or overwrites. Returns true when the key was new. */
bool hmap_put(hmap *m, uint64_t key, uint64_t val);
/* Returns a pointer to the value slot, inserting `dflt` first when missing. The
 * pointer is valid until the next insert. */
uint64_t *hmap_upsert(hmap *m, uint64_t key, uint64_t dflt, bool *inserted);
bool hmap_del(hmap *m, uint64_t key);
/* Starts loading the memory a lookup of key reads first, and changes nothing: a
 * batch of lookups on a large map issues these ahead so that its cache misses
 * overlap instead of queueing one behind the other. */
void hmap_prefetch(const hmap *m, uint64_t key);
/* dst (initialised or not; its old contents are dropped) becomes a copy of src:
 * two memcpy, so snapshots copy an index instead of rebuilding it. */
void hmap_copy(hmap *dst, const hmap *src);
static inline size_t hmap_len(const hmap *m) { return m->len; }

/* Iteration: for (size_t i = 0; hmap_next(m, &i, &k, &v); ) — order unspecified. */
bool hmap_next(const hmap *m, size_t *iter, uint64_t *key, uint64_t *val);

static inline uint64_t hmap_pair(uint32_t a, uint32_t b) { return ((uint64_t)a << 32) | b; }

#endif
