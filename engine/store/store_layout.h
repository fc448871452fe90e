/* store_layout.h — private to the store's files (store.c: entries, snapshots, apply;
 * store_relist.c; store_load.c; store_views.c): the layout of a store, its snapshots
 * and their entries, and the helpers the four share. See store.c for how the pieces
 * fit (persistent maps, what a change drops). */
#ifndef DRA_ENGINE_STORE_LAYOUT_H
#define DRA_ENGINE_STORE_LAYOUT_H

#include "engine/decode/catalog.h"
#include "engine/text/item_facts.h"
#include "engine/text/json_warm.h"
#include "engine/text/work_ahead.h"
#include "engine/snapshot.h"
#include "engine/store/store_internal.h"
#include "engine/world/world.h"

#include "base/hmap.h"
#include "base/pmap.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

/* ---- invariants ---------------------------------------------------------------------------
 * References: entries, parts, tainted slices, view cells, memo nodes and snapshots are
 * counted; every retain is of a live object (count >= 1) and every release matches a
 * retain — ref_take and ref_drop assert both in test builds (a count below 1 is a
 * use after free waiting to happen).
 * Locks, in the only order they nest:
 *   write_lock  one writer: dra_store_apply, held for the whole build (asserted where
 *               the snapshot being built is changed);
 *   cur_lock    taken briefly inside write_lock to publish, and by readers to pin;
 *   memo_lock   a snapshot's memo map, then one mnode's lock inside it;
 *   views_lock  a snapshot's view slots, alone; taken to add one, not to find one
 *               (view_table: published slots are read without it).
 * What a change drops from the memo (memo_carry) is asserted after the fact: no
 * answer of a changed Node's or pod's node survives into the new snapshot. */
static inline void ref_take(_Atomic long *r) {
    long old = atomic_fetch_add_explicit(r, 1, memory_order_relaxed);
    assert(old >= 1 && "retained after its last release");
    (void)old;
}

/* True when this was the last reference. */
static inline bool ref_drop(_Atomic long *r) {
    long old = atomic_fetch_sub_explicit(r, 1, memory_order_acq_rel);
    assert(old >= 1 && "released more often than retained");
    return old == 1;
}


typedef struct entry {
    _Atomic long refs;       /* trie nodes and change records holding it */
    dra_kind kind;
    char *key;               /* "Kind/namespace/name" (namespace empty when cluster-scoped) */
    uint64_t hash;
    uint64_t seq;            /* arrival order in the store: the world's lists keep it */
    json_t *json;            /* the object as given: kept only for kinds decoded per world */
    uint64_t json_hash;      /* dra__object_identity of the object: "the same object again" */
    char *source;            /* where it came from, for duplicate errors; may be NULL */
    arena mem;               /* the decoded object */
    void *obj;               /* decoded model object; NULL for kinds decoded per world */
    dra_catalog *cat;        /* where holds are (retained while the entry lives) */
    dra_holds holds;         /* the names and programs the object holds (catalog.h) */
    /* A slice's previous version whose unchanged devices this one took over
     * (decode_take.c), held: their memory is in its arena (or its base's), their names
     * in its holds. NULL: decoded whole. depth: how many bases the chain has below this
     * entry; at ENTRY_BASE_MAX the next version is decoded whole, so a slice that is
     * republished for months keeps at most that many old versions. */
    struct entry *base;
    uint32_t depth;
} entry;
enum { ENTRY_BASE_MAX = 4 };

/* A list the world walks (classes or pods, in arrival order), or the decoded taint
 * rules and pod groups: shared by the snapshots between two changes of its kind. */
typedef struct part {
    _Atomic long refs;
    DRA_VEC(void *) v;
    hmap by_name;            /* classes: interned name → index+1 */
    dra_rules *rw;           /* rules: the DeviceTaintRules and PodGroups, decoded */
} part;

/* A slice as the taint rules see it, when some rule selects one of its devices. */
typedef struct tainted {
    _Atomic long refs;
    arena mem;
    const dra_slice *s;
    part *rules;             /* held: the copy's taints point into its rules */
} tainted;

/* A node's view (or why it could not be built), made on one snapshot and handed on
 * to the next while its inputs stay; it owns the view. */
typedef struct vcell {
    _Atomic long refs;
    char *name;
    dra_node *bare;          /* a node known only by name (no Node object) */
    dra_nodeview *view;      /* NULL with err when gathering pools failed */
    char *err;
} vcell;

/* What one snapshot answers for a node: the cell's view itself when the cell was
 * made here, else a header over it with this snapshot's world and node. */
typedef struct view_slot {
    vcell *cell;             /* held when made here; inherited ones are held by `inherited` */
    const dra_nodeview *view;
    const dra_node *node;
    uint64_t hash;           /* of the node's name */
    bool made_here;
} view_slot;

/* A snapshot's slots by node name, read without a lock: open addressing, a slot
 * published once (release) into an empty place and never moved or removed there, so
 * a reader that finds it (acquire) sees it whole, and a reader that meets an empty
 * place knows the name was not there when it looked (it then looks again under
 * views_lock). Grown by doubling under views_lock into a new table that replaces it
 * (release); the old one stays, on `retired`, until the snapshot goes — a reader may
 * still be walking it. */
typedef struct view_table {
    struct view_table *retired;   /* the table this one replaced */
    uint32_t cap, n;              /* cap a power of two; n slots, at most cap / 2 */
    _Atomic(view_slot *) at[];
} view_table;

/* The fit memo of one node: its answers by pod signature, shared by consecutive
 * snapshots while the node's inputs stay (memo_carry), so each has its own lock. */
typedef struct mnode {
    _Atomic long refs;
    char *name;
    pthread_mutex_t lock;    /* guards ents: snapshots sharing the node add to it */
    DRA_VEC(struct memo { uint64_t sig; int status; int64_t score; char *reason; }) ents;
} mnode;

/* One change of an apply, in order (both entries held): what the build looks at. */
typedef struct change {
    dra_kind kind;
    entry *old, *neu;        /* NULL: added / deleted */
} change;

struct dra_snapshot {
    _Atomic long refs;
    dra_catalog *cat;
    dra_features f;
    uint64_t gen;
    int64_t built_unix_ns;
    uint64_t build_ns;
    pmap objs[DRA_KIND_COUNT];   /* per kind: hash of the key → entry */
    part *classes, *pods, *rules;
    pmap tainted;            /* hash_u64(slice index) → tainted, while some rule exists */
    dra_world *w;
    dra_allocated *st;
    DRA_VEC(change) changes; /* since the fork, until the build has used them */
    pmap inherited;          /* node name → vcell: earlier snapshots' views still valid here */
    pthread_once_t names_once;
    const char **node_names; /* Node objects, sorted; built at first use */
    pthread_mutex_t memo_lock;   /* guards the map memo (each mnode has its own lock) */
    pmap memo;               /* node name → mnode, some shared with earlier snapshots */
    /* Writers of the views take views_lock (adding a slot, growing the table); a
     * reader finding its node's slot takes nothing and writes nothing (two threads
     * deciding nodes shared no line here but the table's, read-only). */
    pthread_mutex_t views_lock;  /* guards the writes of vtab, vslots, vmem, nbare */
    _Atomic(view_table *) vtab;  /* node name → slot (NULL: none yet) */
    DRA_VEC(view_slot *) vslots;
    arena vmem;              /* the slots and the view headers */
    size_t nbare;            /* slots of nodes without a Node object (BARE_VIEWS_MAX) */
};

/* Views of nodes without a Node object (named in a request, not in the cluster) kept
 * per snapshot. Past it such views are built per call and freed: a client naming
 * random nodes cannot grow a snapshot without bound (it did, by ~5 KiB a name). They
 * are not handed on to later snapshots either, for the same reason. */
enum { BARE_VIEWS_MAX = 4096 };

enum { ENTRY_SHAPES = 256 };

struct dra_store {
    pthread_mutex_t write_lock;   /* one writer at a time */
    pthread_mutex_t cur_lock;     /* guards cur: taken briefly by readers and the publisher */
    dra_catalog *cat;
    dra_features f;
    dra_snapshot *cur;
    uint64_t gen;
    uint64_t seq;                 /* arrival order of entries */
    uint32_t slice_seq;           /* stable-sort tie-break for slices, in arrival order */
    dra_store_opts opts;          /* how objects are read (dra_store_new_with) */
    dra_input input;              /* opts.input, copied: where decoding warns */
    /* by the shape of an object (store.c entry_shape: its kind and the sizes of its
     * lists), the bytes the last object of that shape took: the next one's arena
     * starts with a block of about that size (arena_init_sized) instead of a fixed
     * 2 KiB that a 400-byte Node or a 700-byte claim left mostly empty for as long as
     * it lived. Hints, written by both decoding lanes without order: any value is
     * correct, a wrong one costs memory only. */
    _Atomic uint32_t entry_bytes[ENTRY_SHAPES];
};

/* ---- shared by the store's files (store.c unless named) ---- */

static inline entry *entry_retain(entry *e) {
    ref_take(&e->refs);
    return e;
}
static inline bool entry_is(const void *val, const void *key) { return !strcmp(((const entry *)val)->key, key); }
static inline bool vcell_is(const void *val, const void *key) { return !strcmp(((const vcell *)val)->name, key); }
static inline bool mnode_is(const void *val, const void *key) { return !strcmp(((const mnode *)val)->name, key); }

typedef struct prepared {
    dra_item_facts f;
    entry *en;
    bool failed;
    err e;
} prepared;

typedef struct prep_batch {
    dra_store *st;
    const dra_snapshot *base;   /* the snapshot the batch forks, only read */
    const dra_change *changes;
    prepared *p;
    dra_name_memo *memo[DRA_LANES];   /* each lane's, made when it first decodes */
} prep_batch;

/* ---- entries ---------------------------------------------------------------------------- */
void dra__store_entry_release(entry *e);
/* The entries of one map in arrival order (malloc'd; *n of them). */
entry **dra__store_entries_by_seq(const pmap *m, size_t *n);
/* The entry for obj under key (taken over): the one p prepared ahead (taken; p may be
 * NULL), else decoded here — prev: the entry it replaces (NULL: none), whose unchanged
 * devices a slice takes over; NULL with e set when it is refused (ahead or here). */
entry *dra__store_entry_for(dra_store *st, const json_t *obj, dra_kind k, const char *source, char *key, uint64_t h,
                        uint64_t jh, const entry *prev, prepared *p, err *e);
/* Its place in the store's arrival order, given when it is applied (entries are
 * decoded on two threads, applied on one, in order). */
void dra__store_entry_place(dra_store *st, entry *en);
entry *dra__store_find_entry(const dra_snapshot *s, dra_kind k, const char *key, uint64_t h);
const char *dra__store_meta_str(const json_t *o, const char *key);
/* Gives back what the batch's lanes hold (their threads done). */
void dra__store_prep_batch_end(prep_batch *b);
void dra__store_prepare_one(void *arg, size_t i, unsigned lane);
/* Builds s (forked from old, its changes applied when ok) and publishes it: its
 * generation, or 0 with e set (s released). old is released. Under the write lock. */
uint64_t dra__store_publish(dra_store *st, dra_snapshot *s, dra_snapshot *old, bool ok, uint64_t t0, err *e);
/* A new, unpublished snapshot: another version of each of old's object maps (O(1)). */
dra_snapshot *dra__store_snapshot_fork(const dra_store *st, const dra_snapshot *old);
/* Applies one change to s (unpublished) and records it for the build; p: what was
 * prepared of it (its entry is taken), NULL when nothing. */
bool dra__store_apply_one(dra_store *st, dra_snapshot *s, const dra_change *c, prepared *p, err *e);
/* Duplicate keys within one call: the same object twice is fine, a different one
 * is an error naming both sources. */
bool dra__store_check_duplicates(const dra_change *changes, size_t n, err *e);
/* "Kind/namespace/name" as error texts name an object: "Kind ns/name", "Kind name"
 * when cluster-scoped (the namespace empty). */
const char *dra__store_key_text(const char *key, char *buf, size_t n);
/* p (its facts set) prepared for obj: decoded into an entry against base, the snapshot
 * it will be applied over — unless apply_one would refuse it first, decode it per
 * world, or find it unchanged. Any thread; memo: the batch lane's (NULL: not a batch's
 * item, a file's document just read), made here when the lane first decodes. */
void dra__store_prepare_entry(dra_store *st, const dra_snapshot *base, const json_t *obj, const char *source, prepared *p,
                          dra_name_memo **memo);
void dra__store_vcell_release(void *p);

#endif
