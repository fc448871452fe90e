/* intern.h — string interning: each distinct string gets a small, stable integer
 * id (1, 2, 3, … in insertion order; 0 means "none"). Names that are compared
 * over and over — drivers, pools, attribute domains and ids, capacity names,
 * class names — are compared as ids. Lookups never allocate. The table is shared
 * by the decoder (writer) and the CEL compiler and request threads (readers), so
 * it is internally locked: a reader/writer lock around the hash index, while
 * id → string reads need no lock at all (entries live in chunks that never move). */
#ifndef DRA_INTERN_H
#define DRA_INTERN_H

#include "base/base.h"

typedef struct intern_table intern_table;   /* opaque */

intern_table *intern_new(void);
void intern_free(intern_table *t);

/* The id of s[0..n), inserting it when new. */
uint32_t intern_put(intern_table *t, const char *s, size_t n);
static inline uint32_t intern_cstr(intern_table *t, const char *s);
/* The id of s[0..n) or 0 when it was never interned. */
uint32_t intern_get(const intern_table *t, const char *s, size_t n);
/* The string of an id (NUL-terminated, lives as long as the table); NULL for 0 or an unknown id. */
const char *intern_str(const intern_table *t, uint32_t id);
size_t intern_len(const intern_table *t, uint32_t id);
size_t intern_count(const intern_table *t);

#include <string.h>
static inline uint32_t intern_cstr(intern_table *t, const char *s) { return intern_put(t, s, strlen(s)); }

#endif
