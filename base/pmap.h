/* pmap.h — persistent maps: many versions of one map, each a value of its own,
 * sharing whatever they have in common, so that making the next version costs what
 * changed and not what stayed. Two shapes, for two access patterns:
 *
 * pmap — a hash array mapped trie (HAMT) from 64-bit hashes to pointers. Each level
 * of the trie takes 6 bits of the hash (a 64-bit bitmap says which of 64 children
 * exist, popcount finds the slot); 11 levels consume the hash, and what still agrees
 * after that lands in a collision node, told apart by the caller's `match`. A version
 * is a root pointer: pmap_share copies one in O(1); pmap_put and pmap_del copy the
 * nodes on the path from the root to the key (path copying, O(log64 n)) and share the
 * rest. Nodes are reference-counted; a node only this version holds (count 1) is
 * changed in place, so building a fresh version by many puts costs no more than a
 * mutable table would. Values are reference-counted through the map's pmap_ops: each
 * node holding a value holds one reference. Iteration is in trie order (by hash),
 * the same for two versions holding the same keys. Used for the store's object index
 * and the node and pool indexes, which need deletion, iteration and string keys.
 *
 * cmap — a chunked copy-on-write hash map from 64-bit keys to 64-bit values: 2^bits
 * open-addressing hmaps (base/hmap.h) chosen by the key's hash, each reference-
 * counted, behind a reference-counted array of their pointers. cmap_share takes a
 * reference to that array, so a version whose claims did not change (a slice
 * update's snapshot, a request's overlay) copies nothing — copying the pointers, one
 * per ~256 entries with each chunk's count raised and later lowered, grew with the
 * fleet; the first write to a shared array copies it, and a write copies only the
 * chunk it lands in. Lookups cost one more indirection than an hmap,
 * against the three or four of a trie: this is for the in-use set, read for every
 * candidate device of every allocation and changed by one claim at a time.
 *
 * Thread safety: a version is read by any number of threads while nobody changes
 * that version; different versions may be changed by different threads at once (the
 * counts are atomic, and a node shared with another version is copied before it is
 * written). */
#ifndef DRA_PMAP_H
#define DRA_PMAP_H

#include "base/hmap.h"

#include <stdatomic.h>

/* How the map holds its values: NULL functions (or a NULL ops) for values it does
 * not own. */
typedef struct pmap_ops {
    void (*retain)(void *val);
    void (*release)(void *val);
} pmap_ops;

/* Tells apart values whose hashes are equal: true when val is the one `key` names.
 * NULL: the 64-bit hash is the key. */
typedef bool (*pmap_match)(const void *val, const void *key);

typedef struct pmap_node pmap_node;   /* opaque */

typedef struct pmap {
    pmap_node *root;
    size_t len;
    const pmap_ops *ops;
} pmap;

void pmap_init(pmap *m, const pmap_ops *ops);
/* Drops this version: what no other version holds is freed. */
void pmap_free(pmap *m);
/* dst (uninitialised, or freed) becomes another version equal to src, in O(1). */
void pmap_share(pmap *dst, const pmap *src);
static inline size_t pmap_len(const pmap *m) { return m->len; }
/* The value under hash (and matching key), or NULL. */
void *pmap_get(const pmap *m, uint64_t hash, pmap_match match, const void *key);
/* Inserts val (not NULL) under hash, or replaces the value that matches key (which
 * the map releases). The map takes over the caller's reference to val. True when new. */
bool pmap_put(pmap *m, uint64_t hash, void *val, pmap_match match, const void *key);
/* Removes (and releases) the value under hash that matches key; false when absent. */
bool pmap_del(pmap *m, uint64_t hash, pmap_match match, const void *key);

/* Iteration in trie order: pmap_iter it; pmap_iter_init(&it, m); while (pmap_next(&it, &h, &v)) ...
 * The version must not change meanwhile. */
typedef struct pmap_iter {
    const pmap_node *stack[13];
    uint32_t pos[13];
    int depth;
} pmap_iter;
void pmap_iter_init(pmap_iter *it, const pmap *m);
bool pmap_next(pmap_iter *it, uint64_t *hash, void **val);

/* ---- cmap ---------------------------------------------------------------------------- */

typedef struct cmap_chunk {
    _Atomic long refs;
    hmap m;
} cmap_chunk;

/* The chunk pointers, shared by the versions of a map until one of them writes
 * (then it copies them: O(chunks) once per version that writes). */
typedef struct cmap_dir {
    _Atomic long refs;
    cmap_chunk *c[];         /* 1 << bits, NULL while empty; chosen by hash_u64(key)'s top bits */
} cmap_dir;

typedef struct cmap {
    cmap_dir *dir;
    uint32_t bits;
    size_t len;
    const pmap_ops *ops;     /* values are pointers the map holds (a chunk copy retains them), or NULL */
} cmap;

void cmap_init(cmap *m, const pmap_ops *ops);
void cmap_free(cmap *m);
/* dst (uninitialised, or freed) becomes a copy of src sharing its chunks: O(1); the
 * first write to either copies the chunk pointers (O(chunks)), then the chunk written. */
void cmap_share(cmap *dst, const cmap *src);
static inline size_t cmap_len(const cmap *m) { return m->len; }
bool cmap_get(const cmap *m, uint64_t key, uint64_t *val);
void cmap_prefetch(const cmap *m, uint64_t key);   /* as hmap_prefetch */
/* Starts loading the header of key's chunk only: a pass of these over a batch of keys
 * before the pass of cmap_prefetch, which reads the headers, lets their misses overlap. */
void cmap_prefetch_chunk(const cmap *m, uint64_t key);
/* As hmap_upsert, in a chunk made private to m first (the pointer is valid until the
 * next change of m). With ops, a value replaced through the pointer is the caller's
 * to release. */
uint64_t *cmap_upsert(cmap *m, uint64_t key, uint64_t dflt, bool *inserted);
bool cmap_put(cmap *m, uint64_t key, uint64_t val);   /* true when new; a replaced pointer value is released */
bool cmap_del(cmap *m, uint64_t key);                 /* a removed pointer value is released */

#endif
