/* catalog.h — private to engine/: what outlives snapshots — the intern table and the
 * compiled CEL programs (keyed by expression text) that every world built on the
 * catalog shares — and what each decoded object holds in it.
 *
 * A catalog that lives as long as a service follows the live objects, not their
 * history: every name interned and every program compiled while an object is decoded
 * is recorded in that object's dra_holds, and given back (dra__holds_release) when
 * the object goes — for a store entry, when the last snapshot holding it is released.
 * Names and programs no object holds are freed at once (base/intern.h, cel_cache), so
 * a cluster that creates and deletes claims for months keeps the catalog it has.
 *
 * Every decoder has holds — a store entry's, a pod request's — so the CLI's one-shot
 * store gives back what a service's does; a decoder without them (holds NULL) would
 * keep what it interned until the catalog goes. Request threads never compile, and
 * intern only what the request itself carries (its pod, a Node it brings), held by it. */
#ifndef DRA_ENGINE_CATALOG_H
#define DRA_ENGINE_CATALOG_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/intern.h"
#include "cel/cel.h"
#include "engine/snapshot.h"

/* Reference-counted; the intern table and both caches are internally locked, so the
 * snapshot builder may intern and compile while request threads read. */
/* Byte arrays kept once by content (catalog_share.c): open addressing on the hash
 * (0: empty), the arrays in an arena that lives with the catalog. */
typedef struct dra_catalog_shared {
    pthread_mutex_t lock;
    struct dra_shared_slot { uint64_t hash; size_t n; const void *p; } *slot;
    uint32_t cap, len;
    arena mem;
} dra_catalog_shared;

typedef struct dra_catalog {
    _Atomic long refs;
    intern_table *names;
    cel_env *env, *env_any;  /* selectors (bool results); derived attributes (any result) */
    cel_cache *cel, *cel_any;
    /* the bytes the last node view built on the catalog's worlds took (pools.c): the
     * next view's arena starts with a block of that size. A hint: any value is correct. */
    _Atomic uint32_t view_bytes;
    dra_catalog_shared shared;   /* dra__catalog_share */
} dra_catalog;

dra_catalog *dra__catalog_new(void);
dra_catalog *dra__catalog_retain(dra_catalog *c);
void dra__catalog_release(dra_catalog *c);

/* An immutable copy of p[0..n) shared with every equal one asked for before (16-byte
 * aligned, valid while the catalog lives); NULL when n is 0 or the shared bytes are
 * at their bound (the caller keeps a copy of its own). Any thread. */
const void *dra__catalog_share(dra_catalog *c, const void *p, size_t n);
size_t dra__catalog_shared_bytes(dra_catalog *c);

/* Its sizes (snapshot.h's dra_catalog_sizes). */
void dra__catalog_sizes(dra_catalog *c, dra_catalog_sizes *out);

/* What one decoded object holds: a reference per distinct name and per program. */
typedef struct dra_held_prog {
    bool any;                /* from cel_any (derived attributes) */
    const cel_program *p;
} dra_held_prog;

typedef struct dra_holds {
    uint32_t *names;
    uint32_t nnames, capnames;
    dra_held_prog *progs;
    uint32_t nprogs, capprogs;
    /* while the object is decoded: the names it holds already, by hash (open
     * addressing, id 0 empty), so a name met again — "memory-slice-3" on every device
     * of a slice — is found without the table's write lock and without a reference
     * to give back at compaction; freed by dra__holds_compact */
    uint64_t *seen_hash;
    uint32_t *seen_id;
    uint32_t capseen;
} dra_holds;

/* Names one thread interned lately, for the objects it decodes next (a fleet's
 * slices name the same devices node after node): a name met again is one more
 * reference taken without the table's lock, which the memo's own reference to it
 * makes safe. Taking the read lock for each of them — a line both decoding threads
 * write — was a tenth of building `dralloc bench mig_5000nodes`. A slot keeps the
 * first name hashed to it. One thread's at a time; a batch's threads have one each
 * (store.c), freed when the batch ends, so the memo holds nothing past it. */
typedef struct dra_name_memo dra_name_memo;
dra_name_memo *dra__name_memo_new(void);
/* Gives back the memo's references and frees it (NULL: nothing). */
void dra__name_memo_free(dra_name_memo *m, dra_catalog *c);

/* The id of s[0..n), held by h (NULL: kept until the catalog goes), found through m
 * when it is there (m NULL: none). 0 only when the table is full. */
uint32_t dra__cat_intern(dra_catalog *c, dra_holds *h, dra_name_memo *m, const char *s, size_t n);
/* The program of an expression (selectors: any = false), held by h; NULL with e set
 * when it does not compile. */
const cel_program *dra__cat_compile(dra_catalog *c, dra_holds *h, bool any, const char *expr, size_t n, err *e,
                                    char **text);
/* One reference per distinct name and program (an object names "model" on every
 * device): the extra ones are given back. Called once an object is decoded. */
void dra__holds_compact(dra_holds *h, dra_catalog *c);
/* Gives everything back and empties h. */
void dra__holds_release(dra_holds *h, dra_catalog *c);

#endif
