/* world.h — private to engine/: the layout of a snapshot's world, the allocated
 * state and the node view behind the opaque handles of engine.h.
 *
 * There is one world model: the world of a store's snapshot (snapshot.h, store.c),
 * whether the store is the service's or a one-shot one filled from files. The world
 * reads the snapshot's objects (decoded once per store entry) and the catalog's
 * intern table, CEL environment and expression cache. The node
 * view is what GatherPools computes in Kubernetes, done once per (node, features):
 * pools sorted as the incubating allocator sorts them, each pool's slices targeting
 * the node sorted by name, and one flat array of candidate devices in search order,
 * so the search walks an array instead of a pool/slice/device tree. */
#ifndef DRA_ENGINE_WORLD_H
#define DRA_ENGINE_WORLD_H

#include "base/hmap.h"
#include "base/pmap.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <pthread.h>
#include <stdatomic.h>
#include "base/intern.h"
#include "engine/decode/catalog.h"
#include "engine/decode/decode.h"
#include "engine/engine.h"
#include "engine/decode/kinds.h"

#define DRA_VEC(T) VEC(T)
#define DRA_VEC_PUSH(vec, x) VEC_PUSH(vec, x)

/* Slices in arrival order (dra_slice.index), immutable once built and shared by the
 * indexes of every world that has them; reference-counted. */
typedef struct dra_slice_list {
    _Atomic long refs;
    uint32_t n;
    const dra_slice *v[];
} dra_slice_list;
extern const pmap_ops dra__slice_list_ops;

/* Where a world's objects are: lookups by namespace/name (NULL: none) and every
 * decoded object of a kind in arrival order (malloc'd, *n of them). store.c gives its
 * snapshot's object maps; a table of functions (as Redis passes a dictType), so the
 * world never calls into the store that builds it. */
typedef struct dra_world_source {
    const void *(*find)(const void *arg, dra_kind k, const char *ns, const char *name);
    const void **(*objects)(const void *arg, dra_kind k, size_t *n);
} dra_world_source;

/* The world of one snapshot: what the allocator reads. It owns only its slice indexes
 * and the lists it collects on first use; the objects are the store's entries, the
 * lists of classes and pods and the rules are the snapshot's (store.c), and lookups
 * by namespace/name go to the snapshot's object maps. */
struct dra_world {
    const dra_world_source *src;   /* the snapshot's objects */
    const void *src_arg;           /* the snapshot */
    dra_catalog *cat;
    intern_table *names;
    cel_env *env;
    cel_cache *cel;
    /* derived attribute expressions (derived.c): CEL without the bool-result rule */
    cel_env *env_any;
    cel_cache *cel_any;
    /* the snapshot's, in arrival order */
    DRA_VEC(dra_class *) classes;
    DRA_VEC(dra_pod *) pods;
    hmap class_by_name;      /* interned name → index + 1 (the last one loaded wins) */
    const dra_rules *rules;
    /* Kubernetes looks at a node's own slices (spec.nodeName) and the ones without a
     * node name only; indexing them keeps gathering proportional to what the node sees.
     * Persistent maps of immutable lists (dra_slice_list), shared with the snapshot
     * before, changed only where slices changed (dra__world_slice_add/remove). */
    pmap slices_by_node;     /* hash_u64(interned nodeName) → dra_slice_list */
    pmap slices_by_pool;     /* hash_u64(pool_key) → dra_slice_list */
    struct dra_slice_list *unnamed;   /* slices without nodeName; NULL when none */
    /* slices (as the taint rules see them), claims, templates and nodes in arrival
     * order, for the readers that walk them all (the CLI, capacity): collected from
     * the snapshot at first use, as requests never walk them */
    pthread_mutex_t lists_lock;
    struct dra_world_list { const void **v; size_t n; bool done; } lists[DRA_KIND_COUNT];
};

/* The world of a snapshot whose objects src finds (with arg); store.c snapshot_build
 * fills in its lists and indexes. */
dra_world *dra__world_new_in(dra_catalog *cat, const dra_world_source *src, const void *arg);
void dra__world_free(dra_world *w);
/* The slices naming a node (interned name) in spec.nodeName, of a pool (pool_key),
 * and those without a node name, in arrival order; NULL when there are none. */
const dra_slice_list *dra__world_node_slices(const dra_world *w, uint32_t node_id);
const dra_slice_list *dra__world_pool_slices(const dra_world *w, uint32_t pool_key);
static inline const dra_slice_list *dra__world_unnamed(const dra_world *w) { return w->unnamed; }
/* Every slice in arrival order, as the taint rules see it (collected at first call). */
const dra_slice *const *dra__world_all_slices(const dra_world *w, size_t *n);
/* The slice indexes of w rebuilt from slices v[0..n) in arrival order (store.c: a
 * snapshot's first world, or one after the taint rules changed). */
void dra__world_index_slices(dra_world *w, const dra_slice *const *v, size_t n);
/* One slice added to or removed (by its index) from w's node, pool and unnamed
 * indexes: the lists it is in are copied, the rest stays shared. */
void dra__world_slice_add(dra_world *w, const dra_slice *s);
void dra__world_slice_remove(dra_world *w, const dra_slice *s);

const dra_pod *dra__world_find_pod(const dra_world *w, const char *ns, const char *name);
/* A ResourceClaim (DRA_KIND_CLAIM) or ResourceClaimTemplate (DRA_KIND_TEMPLATE) not
 * found, in arena a: Kubernetes' NotFound text, the namespace searched and the
 * namespaces where one of that name does exist (a walk over every object of the kind:
 * for the text of a failure only):
 *   resourceclaimtemplate.resource.k8s.io "gpu" not found in namespace ml; a
 *   ResourceClaimTemplate named gpu exists in namespace team-a */
const char *dra__world_not_found(const dra_world *w, arena *a, dra_kind k, const char *ns, const char *name);
/* A claim made from a template for a pod (or a PodGroup), in arena a: the template's
 * spec, its own namespace and name, unallocated. */
dra_claim *dra__claim_instantiate(arena *a, const dra_claim_template *t, const char *ns, const char *name);

/* The in-use set. Chunked copy-on-write maps (base/pmap.h, cmap), so the next
 * snapshot's set shares every chunk with the last one and a claim change copies the
 * chunks its devices fall in. */
struct dra_allocated {
    const dra_world *w;
    cmap devices;            /* device key → number of claims holding it exclusively (≥ 1) */
    cmap shared;             /* device key → number of shared allocations (shareIDs, ≥ 1) */
    cmap capacity;           /* device key → (uintptr_t) dra_alloc_caps *, held by the map */
    /* device key → the claim holding it (const dra_claim *), for explanations only
     * (explain.c: "held by claim ns/name"): the claim recorded last that is still
     * there (a claim replaced by its next version is added before or after the old
     * one is removed); results added without a claim record none. A claim recorded here lives
     * at least as long as the state (the world's or the snapshot's objects). */
    cmap holders;
};

/* The in-use state of the next snapshot: src's maps shared (O(chunks)), capacity
 * entries shared and copied on write, over world w; then claims removed and added. */
dra_allocated *dra__allocated_clone(const dra_allocated *src, const dra_world *w);
void dra__allocated_remove_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity);

/* Capacity consumed from one device, per capacity name (grows as needed: a device
 * has at most 32 capacities in resource/v1, but nothing here relies on it). */
typedef struct dra_alloc_caps {
    _Atomic long refs;       /* capacity chunks holding it (shared between states); copied on write */
    uint32_t n, cap;
    uint32_t *id;            /* interned capacity key as written */
    quantity *value;
} dra_alloc_caps;

/* A counter of a pool's counter sets, flattened. */
typedef struct dra_pool_counter {
    uint32_t set_id, name_id;
    quantity value;
} dra_pool_counter;

/* A device's consumption mapped onto its pool's flattened counters. */
typedef struct dra_consumption {
    uint32_t counter;        /* index into pool->counters */
    quantity value;
} dra_consumption;

/* Every device of a pool (targeting the node or not), for counter accounting. */
typedef struct dra_pool_device {
    uint64_t key;
    const dra_consumption *cons;
    uint32_t ncons;
} dra_pool_device;

typedef struct dra_pool {
    const char *id_text;     /* "driver/pool" */
    uint32_t pool_key;
    const char *driver, *pool;
    int64_t generation;
    bool incomplete, invalid;
    const char *invalid_reason;
    bool has_binding;        /* some device targeting the node has binding conditions */
    const dra_slice **slices;   /* device slices targeting the node, sorted by name */
    uint32_t nslices;
    dra_pool_counter *counters;
    uint32_t ncounters;
    uint32_t *set_ids;       /* interned names of the pool's counter sets */
    uint32_t nsets;
    dra_pool_device *all_devs;
    uint32_t nall_devs;
    uint32_t first_cand, ncands;
} dra_pool;

/* 40 bytes (was 48 with the flag and the counts each padded): a view holds one a
 * device it sees, ~1.6 M of them at 100,000 nodes of 8 GPUs and 8 NICs. */
typedef struct dra_cand {
    const dra_device *dev;
    const dra_slice *slice;
    uint64_t key;
    const dra_consumption *cons;
    uint32_t pool;                    /* index into view->pools */
    uint32_t ncons : 31;              /* a device's counter consumptions (a handful: the API caps them) */
    uint32_t per_device_node : 1;     /* slice uses perDeviceNodeSelection */
} dra_cand;

struct dra_nodeview {
    /* A view built on one snapshot serves later ones while its inputs stay (store.c):
     * each later snapshot answers with a copy of this header, with its own world and
     * node, whose base is the original (which owns mem, pools and cands; the copy is
     * in the snapshot's memory and never freed on its own). */
    const dra_nodeview *base;   /* NULL in an original */
    const dra_world *w;
    const dra_node *node;
    dra_features f;
    arena mem;
    dra_pool *pools;
    uint32_t npools;
    dra_cand *cands;
    uint32_t ncands;
    /* the slices relevant to the node that the view leaves out, and why (a
     * DRA_LOST_ value), found once when the view is built: every explanation of a
     * failure on the node counts their devices (explain.c), and finding them per
     * explanation was a tenth of a cold /filter at 100,000 nodes */
    const dra_slice **lost;
    uint8_t *lost_why;
    uint32_t nlost;
};

/* Why a slice's devices are not in a node view. */
enum { DRA_LOST_COUNTERS_GATE, DRA_LOST_PER_DEVICE_GATE, DRA_LOST_MIXED };

const dra_class *dra__world_find_class(const dra_world *w, const char *name);

/* nodesel.c: Kubernetes' NodeMatches; false with e->msg on a selector parse error. */
bool dra__node_matches(const dra_node *n, const char *node_name, bool all_nodes, const dra_node_selector *sel,
                      bool *match, err *e);

#endif
