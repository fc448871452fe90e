/* intern.h — string interning: each distinct string gets a small integer id (1, 2,
 * 3, … in insertion order while nothing is freed; 0 means "none"), stable while the
 * name is referenced. Names that are compared over and over — drivers, pools,
 * attribute domains and ids, capacity names, class names — are compared as ids.
 * Lookups never allocate.
 *
 * Every intern_put is a reference to the name; intern_release gives it back and the
 * last release frees the name, whose id a later new name may get. So a holder (a
 * decoded object, a compiled program) releases what it interned when it goes, and a
 * table that lives for months holds only the names something still holds. A caller
 * that never releases (a one-shot world, a CEL environment's own names) keeps its
 * names until intern_free. Using an id after its last release is a bug.
 *
 * The table is shared by the decoder and the CEL compiler (writers) and request
 * threads (readers), so it is internally locked: a reader/writer lock around the
 * hash index and the counts, while id → string reads need no lock at all (entries
 * live in chunks that never move). */
#ifndef DRA_INTERN_H
#define DRA_INTERN_H

#include "base/base.h"

typedef struct intern_table intern_table;   /* opaque */

intern_table *intern_new(void);
void intern_free(intern_table *t);

/* The id of s[0..n), inserting it when new, with one more reference; 0 only when the
 * table already holds 16M names (callers fail loudly: no workload gets there). */
uint32_t intern_put(intern_table *t, const char *s, size_t n);
/* intern_put for a caller that has s's hash_bytes already (h: hash_bytes(s, n)). */
uint32_t intern_put_hashed(intern_table *t, const char *s, size_t n, uint64_t h);
/* One more reference to a live id (returns it; 0 stays 0). */
uint32_t intern_retain(intern_table *t, uint32_t id);
/* n more references to id for a caller that holds one itself: without the lock, since
 * the reference held keeps the name alive (no release can free it meanwhile). */
uint32_t intern_retain_held(intern_table *t, uint32_t id, uint32_t n);
/* Gives back one reference; the last one frees the name. 0 is ignored. */
void intern_release(intern_table *t, uint32_t id);
/* Gives back n references at once. */
void intern_release_n(intern_table *t, uint32_t id, uint32_t n);
static inline uint32_t intern_cstr(intern_table *t, const char *s);
/* The id of s[0..n) or 0 when it was never interned. */
uint32_t intern_get(const intern_table *t, const char *s, size_t n);
/* The string of an id (NUL-terminated, lives as long as the table); NULL for 0 or an unknown id. */
const char *intern_str(const intern_table *t, uint32_t id);
size_t intern_len(const intern_table *t, uint32_t id);
/* Names alive, and the bytes the table holds for them (strings, entries, index). */
size_t intern_count(const intern_table *t);
size_t intern_bytes(const intern_table *t);

#include <string.h>
static inline uint32_t intern_cstr(intern_table *t, const char *s) { return intern_put(t, s, strlen(s)); }

#endif
