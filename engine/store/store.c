/* store.c — the object store and its snapshots (snapshot.h).
 *
 * Every object lives in an entry: its JSON, the decoded model object in an arena of
 * its own, and a reference count. A snapshot is a set of persistent maps (base/pmap.h)
 * and the next snapshot starts as another version of each, so what an update costs is
 * what it changed, whatever the cluster's size:
 *
 *   objects         per kind, "Kind/namespace/name" → entry. A change copies one path of
 *                   the trie; the entries themselves are shared and decoded once.
 *   slice indexes   the world's node → slices, pool → slices and unnamed-slices lists
 *                   (what the node view builder reads). A slice change copies the lists
 *                   of its node and pool (old and new) and nothing else; with
 *                   DeviceTaintRules, each slice a rule selects has a tainted copy kept
 *                   by slice (`tainted`), and a change of the rules builds the indexes
 *                   again.
 *   in-use set      chunked copy-on-write maps: a claim change copies the chunks its
 *                   devices fall in.
 *   node views      built lazily on the snapshot where a node is first decided, then
 *                   handed to the next snapshots (`inherited`, node name → cell) until
 *                   one of its inputs changes (below); each snapshot answers a cell with
 *                   a header of its own (its world, its node) over the shared pools and
 *                   candidates.
 *   classes, pods,  small lists the world walks, shared until an object of their kind
 *   rules           changes, then listed again (O(objects of that kind)). Pod groups
 *                   and taint rules are decoded again then (they are few).
 *
 * What a node's view reads (pools.c, dra_nodeview_new): the Node object (labels for
 * node selectors), the slices naming the node, every slice without a node name
 * (nodeSelector, allNodes, perDeviceNodeSelection), all slices of the pools those
 * belong to (completeness, generations, counter sets), the taint rules (device
 * taints) and the features (fixed per store). Not DeviceClasses (the allocator looks
 * them up in the world, the snapshot's own), not claims (the in-use set is passed
 * beside the view). So a new snapshot drops the inherited views of: a Node changed or
 * deleted; a slice's node, old and new; every node with a slice in the slice's pool,
 * old and new; and all views when a slice without a node name changes, when a
 * changed pool has one, or when the taint rules change (rare, and then correct).
 *
 * The fit memo (answers per node and pod signature) is kept per node and handed on
 * like the views, but it also reads the in-use set and the DeviceClasses: a node's
 * answers go with its view, and also with an allocation added or removed on a pool the
 * node sees (a pool without a node name: every node), with a bound pod on the node
 * (its extended resources), and all of them with a class change (memo_carry).
 *
 * Readers pin the current snapshot under a short lock; the writer publishes a new
 * one under the same lock, so a reader sees either the old or the new snapshot,
 * never half of an update. */
#include "engine/snapshot.h"

#include "engine/text/json_warm.h"
#include "engine/text/work_ahead.h"
#include "engine/text/json_hash.h"
#include "engine/decode/taintrule.h"
#include "engine/decode/validate.h"
#include "engine/text/docs.h"
#include "engine/store/store_layout.h"

#include "base/clock.h"
#include "base/hash.h"
#include "base/pmap.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- entries ---------------------------------------------------------------------------- */

void dra__store_entry_release(entry *e) {
    if (!e || !ref_drop(&e->refs)) return;
    dra__holds_release(&e->holds, e->cat);
    dra__catalog_release(e->cat);
    json_decref(e->json);
    arena_free(&e->mem);
    free(e->key);
    free(e->source);
    entry *base = e->base;   /* at most ENTRY_BASE_MAX deep */
    free(e);
    dra__store_entry_release(base);
}

static void entry_retain_v(void *p) { entry_retain(p); }
static void entry_release_v(void *p) { dra__store_entry_release(p); }
static const pmap_ops entry_ops = {entry_retain_v, entry_release_v};

static int cmp_entry_seq(const void *a, const void *b) {
    uint64_t x = (*(const entry *const *)a)->seq, y = (*(const entry *const *)b)->seq;
    return x < y ? -1 : x > y;
}

/* The entries of one map in arrival order (malloc'd; *n of them). */
entry **dra__store_entries_by_seq(const pmap *m, size_t *n) {
    entry **v = xmalloc((pmap_len(m) + 1) * sizeof *v);
    pmap_iter it;
    pmap_iter_init(&it, m);
    void *p;
    size_t k = 0;
    while (pmap_next(&it, NULL, &p)) v[k++] = p;
    qsort(v, k, sizeof *v, cmp_entry_seq);
    *n = k;
    return v;
}

/* ---- snapshots ------------------------------------------------------------------------------- */


static part *part_retain(part *p) {
    ref_take(&p->refs);
    return p;
}

static void part_release(part *p) {
    if (!p || !ref_drop(&p->refs)) return;
    free(p->v.v);
    hmap_free(&p->by_name);
    dra__rules_free(p->rw);
    free(p);
}


static void tainted_retain(void *p) { ref_take(&((tainted *)p)->refs); }
static void tainted_release(void *p) {
    tainted *t = p;
    if (!t || !ref_drop(&t->refs)) return;
    arena_free(&t->mem);
    part_release(t->rules);
    free(t);
}
static const pmap_ops tainted_ops = {tainted_retain, tainted_release};


static void vcell_retain(void *p) { ref_take(&((vcell *)p)->refs); }
void dra__store_vcell_release(void *p) {
    vcell *c = p;
    if (!c || !ref_drop(&c->refs)) return;
    dra_nodeview_free(c->view);
    free(c->bare);
    free(c->name);
    free(c->err);
    free(c);
}
static const pmap_ops vcell_ops = {vcell_retain, dra__store_vcell_release};



static void mnode_retain(void *p) { ref_take(&((mnode *)p)->refs); }
static void mnode_release(void *p) {
    mnode *m = p;
    if (!m || !ref_drop(&m->refs)) return;
    for (size_t i = 0; i < m->ents.n; i++) free(m->ents.v[i].reason);
    free(m->ents.v);
    pthread_mutex_destroy(&m->lock);
    free(m->name);
    free(m);
}
static const pmap_ops mnode_ops = {mnode_retain, mnode_release};





dra_snapshot *dra_snapshot_retain(dra_snapshot *s) {
    ref_take(&s->refs);
    return s;
}

void dra_snapshot_release(dra_snapshot *s) {
    if (!s || !ref_drop(&s->refs)) return;
    for (size_t i = 0; i < s->vslots.n; i++)
        if (s->vslots.v[i]->made_here) dra__store_vcell_release(s->vslots.v[i]->cell);
    free(s->vslots.v);
    for (view_table *t = atomic_load_explicit(&s->vtab, memory_order_relaxed), *next; t; t = next) {
        next = t->retired;
        free(t);
    }
    arena_free(&s->vmem);
    pthread_mutex_destroy(&s->views_lock);
    pmap_free(&s->inherited);
    pmap_free(&s->memo);
    pthread_mutex_destroy(&s->memo_lock);
    dra_allocated_free(s->st);
    dra__world_free(s->w);
    for (size_t i = 0; i < s->changes.n; i++) {
        dra__store_entry_release(s->changes.v[i].old);
        dra__store_entry_release(s->changes.v[i].neu);
    }
    free(s->changes.v);
    pmap_free(&s->tainted);
    part_release(s->classes);
    part_release(s->pods);
    part_release(s->rules);
    for (int k = 0; k < DRA_KIND_COUNT; k++) pmap_free(&s->objs[k]);
    free(s->node_names);
    dra__catalog_release(s->cat);
    free(s);
}

uint64_t dra_snapshot_generation(const dra_snapshot *s) { return s->gen; }
int64_t dra_snapshot_built_unix_ns(const dra_snapshot *s) { return s->built_unix_ns; }
uint64_t dra_snapshot_build_ns(const dra_snapshot *s) { return s->build_ns; }

size_t dra_snapshot_count(const dra_snapshot *s, const char *kind) {
    dra_kind k = dra__kind_of(kind);
    return k ? pmap_len(&s->objs[k]) : 0;
}

json_t *dra_snapshot_counts_json(const dra_snapshot *s) {
    json_t *o = json_object();
    for (int k = 1; k < DRA_KIND_COUNT; k++)
        json_object_set_new(o, dra__kind_name(k), json_integer((json_int_t)pmap_len(&s->objs[k])));
    return o;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* pthread_once gives no argument: the snapshot being named travels in a thread-local. */
static _Thread_local dra_snapshot *naming;

static void build_node_names(void) {
    dra_snapshot *s = naming;
    const pmap *m = &s->objs[DRA_KIND_NODE];
    s->node_names = xmalloc((pmap_len(m) + 1) * sizeof *s->node_names);
    size_t k = 0;
    pmap_iter it;
    pmap_iter_init(&it, m);
    void *p;
    while (pmap_next(&it, NULL, &p)) s->node_names[k++] = ((const dra_node *)((const entry *)p)->obj)->name;
    qsort(s->node_names, k, sizeof *s->node_names, cmp_cstr);
}

size_t dra_snapshot_nnodes(const dra_snapshot *s) { return pmap_len(&s->objs[DRA_KIND_NODE]); }
const char *dra_snapshot_node_name(const dra_snapshot *s, size_t i) {
    if (i >= pmap_len(&s->objs[DRA_KIND_NODE])) return NULL;
    naming = (dra_snapshot *)s;
    pthread_once((pthread_once_t *)&s->names_once, build_node_names);
    return s->node_names[i];
}

json_t *dra_snapshot_keys(const dra_snapshot *s, const char *kind) {
    dra_kind k = dra__kind_of(kind);
    json_t *a = json_array();
    if (!k) return a;
    size_t n;
    entry **v = dra__store_entries_by_seq(&s->objs[k], &n);
    for (size_t i = 0; i < n; i++) {
        /* the key is "Kind/namespace/name"; names have no '/' */
        const char *ns = strchr(v[i]->key, '/') + 1, *name = strchr(ns, '/') + 1;
        json_array_append_new(a, json_pack("[s#, s]", ns, (int)(name - ns - 1), name));
    }
    free(v);
    return a;
}

entry *dra__store_find_entry(const dra_snapshot *s, dra_kind k, const char *key, uint64_t h) {
    return pmap_get(&s->objs[k], h, entry_is, key);
}

/* A new, unpublished snapshot: another version of each of old's object maps (O(1)). */
dra_snapshot *dra__store_snapshot_fork(const dra_store *st, const dra_snapshot *old) {
    dra_snapshot *s = xcalloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    s->cat = dra__catalog_retain(st->cat);
    s->f = st->f;
    s->names_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    pthread_mutex_init(&s->views_lock, NULL);
    pthread_mutex_init(&s->memo_lock, NULL);
    pmap_init(&s->memo, &mnode_ops);
    atomic_init(&s->vtab, NULL);
    arena_init(&s->vmem, 0);
    pmap_init(&s->tainted, &tainted_ops);
    pmap_init(&s->inherited, &vcell_ops);
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        if (old) pmap_share(&s->objs[k], &old->objs[k]);
        else pmap_init(&s->objs[k], &entry_ops);
    }
    return s;
}

/* World lookups by namespace/name, answered from the snapshot's object maps. */
static const void *snapshot_find(const void *arg, dra_kind k, const char *ns, const char *name) {
    const dra_snapshot *s = arg;
    char stack[512];
    const char *sns = dra__kind_cluster_scoped(k) ? "" : dra_ns(ns);
    const char *kn = dra__kind_name(k);
    size_t a = strlen(kn), b = strlen(sns), c = strlen(name), n = a + b + c + 2;
    char *key = n + 1 <= sizeof stack ? stack : xmalloc(n + 1);
    /* "Kind/namespace/name", as dra__object_key writes it, without a malloc (every request looks up) */
    memcpy(key, kn, a);
    key[a] = '/';
    memcpy(key + a + 1, sns, b);
    key[a + 1 + b] = '/';
    memcpy(key + a + b + 2, name, c + 1);
    const entry *en = dra__store_find_entry(s, k, key, hash_bytes(key, n));
    if (key != stack) free(key);
    return en ? en->obj : NULL;
}

/* The decoded objects of a kind in arrival order (malloc'd; *n of them). */
static const void **snapshot_objects(const void *arg, dra_kind k, size_t *n) {
    entry **v = dra__store_entries_by_seq(&((const dra_snapshot *)arg)->objs[k], n);
    const void **o = (const void **)v;
    for (size_t i = 0; i < *n; i++) o[i] = v[i]->obj;
    return o;
}

/* Where a snapshot's world finds its objects. */
static const dra_world_source snapshot_source = {snapshot_find, snapshot_objects};

/* The objects of kind k in arrival order, as a list (classes: indexed by name). */
static part *part_list(const dra_snapshot *s, dra_kind k) {
    part *p = xcalloc(1, sizeof *p);
    atomic_init(&p->refs, 1);
    hmap_init(&p->by_name);
    size_t n;
    entry **v = dra__store_entries_by_seq(&s->objs[k], &n);
    for (size_t i = 0; i < n; i++) {
        DRA_VEC_PUSH(p->v, v[i]->obj);
        if (k == DRA_KIND_CLASS) hmap_put(&p->by_name, ((const dra_class *)v[i]->obj)->name_id, i + 1);
    }
    free(v);
    return p;
}

/* The taint rules and pod groups, decoded together (NULL with e set
 * when one does not decode: they were checked on arrival, so only in theory). */
static part *part_rules(const dra_snapshot *s, err *e) {
    part *p = xcalloc(1, sizeof *p);
    atomic_init(&p->refs, 1);
    hmap_init(&p->by_name);
    p->rw = dra__rules_new(s->cat, NULL);
    dra_kind kinds[] = {DRA_KIND_TAINT_RULE, DRA_KIND_POD_GROUP};
    for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
        size_t n;
        entry **v = dra__store_entries_by_seq(&s->objs[kinds[k]], &n);
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++) ok = dra__rules_add(p->rw, kinds[k], v[i]->json, e);
        free(v);
        if (!ok) {
            part_release(p);
            return NULL;
        }
    }
    return p;
}

/* A slice as this snapshot's world sees it: itself, or its tainted copy (kept in
 * s->tainted) when a taint rule selects one of its devices. */
static const dra_slice *effective(dra_snapshot *s, const dra_slice *sl) {
    if (!s->rules->rw->taint_rules.n) return sl;
    /* the copy an earlier snapshot made, under the same rules: views handed on point into it */
    tainted *t = pmap_get(&s->tainted, hash_u64(sl->index), NULL, NULL);
    if (t) return t->s;
    t = xcalloc(1, sizeof *t);
    atomic_init(&t->refs, 1);
    arena_init(&t->mem, 4096);
    t->s = dra__taintrule_slice(s->rules->rw, sl, &t->mem);
    if (t->s == sl) {
        tainted_release(t);
        return sl;
    }
    t->rules = part_retain(s->rules);
    pmap_put(&s->tainted, hash_u64(sl->index), t, NULL, NULL);
    return t->s;
}

/* The slice indexes from every slice (a first snapshot, new taint rules, or a change
 * of most slices). */
static void index_all_slices(dra_snapshot *s) {
    size_t n;
    entry **v = dra__store_entries_by_seq(&s->objs[DRA_KIND_SLICE], &n);
    const dra_slice **sl = xmalloc((n + 1) * sizeof *sl);
    for (size_t i = 0; i < n; i++) sl[i] = v[i]->obj;
    /* arrival order is the slices' index order (entries_by_seq sorts by the entry's seq,
     * which grows with the index: both are given in entry_new) */
    for (size_t i = 0; i < n; i++) sl[i] = effective(s, sl[i]);
    dra__world_index_slices(s->w, sl, n);
    free(sl);
    free(v);
}

/* Drops what a per-node map (views: vcell_is, memos: mnode_is) holds for a node. */
static void drop_node(pmap *m, pmap_match is, const char *name) {
    if (name && *name) pmap_del(m, hash_bytes(name, strlen(name)), is, name);
}
static void drop_view(pmap *inh, const char *name) { drop_node(inh, vcell_is, name); }

/* Drops what the map holds for a list's slices' nodes; true when the list has a slice
 * without a node name (then every node depends on it). */
static bool drop_nodes_of(pmap *m, pmap_match is, const dra_slice_list *l) {
    bool unnamed = false;
    for (uint32_t i = 0; l && i < l->n; i++) {
        if (l->v[i]->node_name && *l->v[i]->node_name) drop_node(m, is, l->v[i]->node_name);
        else unnamed = true;
    }
    return unnamed;
}
static bool drop_views_of(pmap *inh, const dra_slice_list *l) { return drop_nodes_of(inh, vcell_is, l); }

/* The views s takes over from old: old's (inherited or made there) less those whose
 * inputs the changes touched. */
static void inherit_views(dra_snapshot *s, dra_snapshot *old, bool all_stale) {
    if (all_stale) return;
    pmap_free(&s->inherited);
    pmap_share(&s->inherited, &old->inherited);
    pthread_mutex_lock(&old->views_lock);
    for (size_t i = 0; i < old->vslots.n; i++) {
        view_slot *v = old->vslots.v[i];
        if (!v->made_here || v->cell->bare) continue;
        vcell_retain(v->cell);
        pmap_put(&s->inherited, hash_bytes(v->cell->name, strlen(v->cell->name)), v->cell, vcell_is, v->cell->name);
    }
    pthread_mutex_unlock(&old->views_lock);
    for (size_t i = 0; i < s->changes.n; i++) {
        const change *c = &s->changes.v[i];
        if (c->kind == DRA_KIND_NODE) {
            drop_view(&s->inherited, ((const dra_node *)(c->old ? c->old : c->neu)->obj)->name);
            continue;
        }
        if (c->kind != DRA_KIND_SLICE) continue;
        const dra_slice *a = c->old ? c->old->obj : NULL, *b = c->neu ? c->neu->obj : NULL;
        bool global = false;
        if (a) {
            global |= !a->node_name || !*a->node_name;
            drop_view(&s->inherited, a->node_name);
            global |= drop_views_of(&s->inherited, dra__world_pool_slices(old->w, a->pool_key));
            global |= drop_views_of(&s->inherited, dra__world_pool_slices(s->w, a->pool_key));
        }
        if (b) {
            global |= !b->node_name || !*b->node_name;
            drop_view(&s->inherited, b->node_name);
            global |= drop_views_of(&s->inherited, dra__world_pool_slices(old->w, b->pool_key));
            global |= drop_views_of(&s->inherited, dra__world_pool_slices(s->w, b->pool_key));
        }
        if (global) {
            pmap_free(&s->inherited);
            return;
        }
    }
}

static void drop_memo(pmap *m, const char *name) { drop_node(m, mnode_is, name); }
static bool drop_memos_of(pmap *m, const dra_slice_list *l) { return drop_nodes_of(m, mnode_is, l); }

/* Drops the memos of the nodes that see a claim's allocated pools; true when one of
 * those pools is seen from every node. */
static bool drop_memos_of_claim(dra_snapshot *s, dra_snapshot *old, const dra_claim *c) {
    bool global = false;
    for (uint32_t i = 0; c && c->allocated && i < c->nalloc_results && !global; i++) {
        const dra_claim_result *r = &c->alloc_results[i];
        char key[512];
        int n = snprintf(key, sizeof key, "%s/%s", r->driver ? r->driver : "", r->pool ? r->pool : "");
        if (n < 0 || (size_t)n >= sizeof key) return true;   /* no such pool name fits: be safe */
        uint32_t pk = intern_get(s->cat->names, key, (size_t)n);
        if (!pk) continue;   /* never seen in a slice: no node sees it */
        global |= drop_memos_of(&s->memo, dra__world_pool_slices(old->w, pk));
        global |= drop_memos_of(&s->memo, dra__world_pool_slices(s->w, pk));
    }
    return global;
}

/* The memos s takes over from old: every node's answers whose inputs the changes did
 * not touch. What an answer reads (podfit.c fit_core): the node's view (see
 * inherit_views for what that reads), the in-use set of the pools the view holds, the
 * DeviceClasses, the pod's claims (in the signature: specs, or for allocated claims
 * their store entry), the pods bound to the node (extended resources), and the
 * features (the store's). So: the node of a changed Node or pod, the nodes of a
 * changed slice's pool (as views), the nodes seeing a changed claim's allocated
 * pools; everything on a class, taint rule or pod group change, or when one of those
 * pools has a slice without a node name. */
static void memo_carry(dra_snapshot *s, dra_snapshot *old) {
    for (size_t i = 0; i < s->changes.n; i++) {
        dra_kind k = s->changes.v[i].kind;
        if (k != DRA_KIND_NODE && k != DRA_KIND_SLICE && k != DRA_KIND_CLAIM && k != DRA_KIND_POD &&
            k != DRA_KIND_TEMPLATE)
            return;
    }
    pmap_free(&s->memo);
    pthread_mutex_lock(&old->memo_lock);
    pmap_share(&s->memo, &old->memo);
    pthread_mutex_unlock(&old->memo_lock);
    for (size_t i = 0; i < s->changes.n; i++) {
        const change *c = &s->changes.v[i];
        bool global = false;
        switch (c->kind) {
        case DRA_KIND_NODE: drop_memo(&s->memo, ((const dra_node *)(c->old ? c->old : c->neu)->obj)->name); break;
        case DRA_KIND_POD:
            if (c->old) drop_memo(&s->memo, ((const dra_pod *)c->old->obj)->node_name);
            if (c->neu) drop_memo(&s->memo, ((const dra_pod *)c->neu->obj)->node_name);
            break;
        case DRA_KIND_SLICE:
            for (int side = 0; side < 2; side++) {
                const dra_slice *sl = (side ? c->neu : c->old) ? (side ? c->neu : c->old)->obj : NULL;
                if (!sl) continue;
                global |= !sl->node_name || !*sl->node_name;
                drop_memo(&s->memo, sl->node_name);
                global |= drop_memos_of(&s->memo, dra__world_pool_slices(old->w, sl->pool_key));
                global |= drop_memos_of(&s->memo, dra__world_pool_slices(s->w, sl->pool_key));
            }
            break;
        case DRA_KIND_CLAIM:
            global |= drop_memos_of_claim(s, old, c->old ? c->old->obj : NULL);
            global |= drop_memos_of_claim(s, old, c->neu ? c->neu->obj : NULL);
            break;
        default: break;   /* templates: the signature holds the instantiated spec */
        }
        if (global) {
            pmap_free(&s->memo);
            pmap_init(&s->memo, &mnode_ops);
            return;
        }
    }
#ifndef NDEBUG
    for (size_t i = 0; i < s->changes.n; i++) {   /* what a Node or pod change reaches is gone */
        const change *c = &s->changes.v[i];
        for (int side = 0; side < 2; side++) {
            const entry *en = side ? c->neu : c->old;
            const char *n = !en                      ? NULL
                            : c->kind == DRA_KIND_NODE ? ((const dra_node *)en->obj)->name
                            : c->kind == DRA_KIND_POD  ? ((const dra_pod *)en->obj)->node_name
                                                       : NULL;
            assert((!n || !*n || !pmap_get(&s->memo, hash_bytes(n, strlen(n)), mnode_is, n)) &&
                   "a changed node's answers were handed on");
        }
    }
#endif
}

/* Lays the world out for s from old's (NULL: from the objects alone): the parts of
 * kinds that did not change are shared, the slice indexes edited where slices
 * changed, the in-use set derived from old's by the claims removed and added. Claims,
 * templates, nodes and pods are looked up through the object maps (snapshot_source). */
static bool snapshot_build(dra_snapshot *s, dra_snapshot *old, err *e) {
    bool changed[DRA_KIND_COUNT] = {0};
    size_t nslice = 0;
    for (size_t i = 0; i < s->changes.n; i++) {
        changed[s->changes.v[i].kind] = true;
        nslice += s->changes.v[i].kind == DRA_KIND_SLICE;
    }
    s->classes = old && !changed[DRA_KIND_CLASS] ? part_retain(old->classes) : part_list(s, DRA_KIND_CLASS);
    s->pods = old && !changed[DRA_KIND_POD] ? part_retain(old->pods) : part_list(s, DRA_KIND_POD);
    bool rules_changed = !old || changed[DRA_KIND_TAINT_RULE] || changed[DRA_KIND_POD_GROUP];
    s->rules = rules_changed ? part_rules(s, e) : part_retain(old->rules);
    if (!s->rules) return false;
    dra_world *w = dra__world_new_in(s->cat, &snapshot_source, s);
    s->w = w;
    w->classes.v = (dra_class **)s->classes->v.v;
    w->classes.n = s->classes->v.n;
    w->class_by_name = s->classes->by_name;
    w->pods.v = (dra_pod **)s->pods->v.v;
    w->pods.n = s->pods->v.n;
    w->rules = s->rules->rw;
    bool taints_changed = !old || changed[DRA_KIND_TAINT_RULE];
    if (!taints_changed) {
        /* the tainted copies of slices that stay, shared */
        pmap_free(&s->tainted);
        pmap_share(&s->tainted, &old->tainted);
        for (size_t i = 0; i < s->changes.n; i++)
            if (s->changes.v[i].kind == DRA_KIND_SLICE && s->changes.v[i].old)
                pmap_del(&s->tainted, hash_u64(((const dra_slice *)s->changes.v[i].old->obj)->index), NULL, NULL);
    }
    bool reindex = taints_changed || (nslice > 64 && nslice * 4 > pmap_len(&s->objs[DRA_KIND_SLICE]));
    if (reindex) {
        index_all_slices(s);
    } else {
        pmap_free(&w->slices_by_node);
        pmap_free(&w->slices_by_pool);
        pmap_share(&w->slices_by_node, &old->w->slices_by_node);
        pmap_share(&w->slices_by_pool, &old->w->slices_by_pool);
        w->unnamed = old->w->unnamed;
        if (w->unnamed) dra__slice_list_ops.retain(w->unnamed);
        for (size_t i = 0; i < s->changes.n; i++) {
            const change *c = &s->changes.v[i];
            if (c->kind != DRA_KIND_SLICE) continue;
            if (c->old) dra__world_slice_remove(w, c->old->obj);
            if (c->neu) dra__world_slice_add(w, effective(s, c->neu->obj));
        }
    }
    if (old) inherit_views(s, old, changed[DRA_KIND_TAINT_RULE]);
    if (old) memo_carry(s, old);
    bool cc = s->f.consumable_capacity;
    if (old && old->st) {
        s->st = dra__allocated_clone(old->st, w);
        for (size_t i = 0; i < s->changes.n; i++) {
            const change *c = &s->changes.v[i];
            if (c->kind != DRA_KIND_CLAIM) continue;
            if (c->old) dra__allocated_remove_claim(s->st, c->old->obj, cc);
            if (c->neu) dra_allocated_add_claim(s->st, c->neu->obj, cc);
        }
    } else {
        s->st = dra_allocated_new(w);
        pmap_iter it;
        pmap_iter_init(&it, &s->objs[DRA_KIND_CLAIM]);
        void *p;
        while (pmap_next(&it, NULL, &p)) dra_allocated_add_claim(s->st, ((entry *)p)->obj, cc);
    }
    /* the changes served their purpose */
    for (size_t i = 0; i < s->changes.n; i++) {
        dra__store_entry_release(s->changes.v[i].old);
        dra__store_entry_release(s->changes.v[i].neu);
    }
    s->changes.n = 0;
    return true;
}

/* ---- the store ------------------------------------------------------------------------------- */

static dra_store *store_new_over(const dra_features *f, dra_catalog *cat, const dra_store_opts *o) {
    dra_store *st = xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->write_lock, NULL);
    pthread_mutex_init(&st->cur_lock, NULL);
    st->cat = cat;
    st->f = *f;
    if (o) st->opts = *o;
    if (o && o->input) st->input = *o->input;
    st->opts.input = NULL;
    return st;
}

dra_store *dra_store_new(const dra_features *f) { return store_new_over(f, dra__catalog_new(), NULL); }

dra_store *dra_store_new_with(const dra_features *f, const dra_store_opts *o) {
    return store_new_over(f, dra__catalog_new(), o);
}

dra_store *dra_store_new_sharing(const dra_features *f, const dra_store *like) {
    dra_store_opts o = like->opts;
    o.input = &like->input;
    return store_new_over(f, dra__catalog_retain(like->cat), &o);
}

void dra_store_free(dra_store *st) {
    if (!st) return;
    dra_snapshot_release(st->cur);
    dra__catalog_release(st->cat);
    pthread_mutex_destroy(&st->write_lock);
    pthread_mutex_destroy(&st->cur_lock);
    free(st);
}

dra_snapshot *dra_store_acquire(dra_store *st) {
    pthread_mutex_lock(&st->cur_lock);
    dra_snapshot *s = st->cur ? dra_snapshot_retain(st->cur) : NULL;
    pthread_mutex_unlock(&st->cur_lock);
    return s;
}

const char *dra__store_meta_str(const json_t *o, const char *key) {
    return json_string_value(json_object_get(json_object_get(o, "metadata"), key));
}

/* A new entry for an object under key (taken over; hash its hash_bytes) whose
 * identity (dra__object_identity) is json_hash, decoded; placed in the arrival order when applied (dra__store_entry_place).
 * NULL with e set when it is invalid. Touches nothing of st but its catalog (locked):
 * two threads decode a batch's entries. */
/* An entry's arena: the first block when nothing of its kind was decoded yet, the
 * blocks after a first one sized from the last object (small: they take what did not
 * fit), and the largest object whose size the next one's first block follows (a
 * 3 MiB slice is not a reason for the next small one to reserve 3 MiB). */
enum { ENTRY_BLOCK_FIRST = 2048, ENTRY_BLOCK_MORE = 512, ENTRY_EXPECT_MAX = 64 * 1024 };

/* What predicts an object's decoded size, folded: its kind, a slice's driver and the sizes of the
 * objects and lists under spec, status and metadata, three levels down (a slice's
 * devices or counter sets, a claim's requests and results, a Node's labels) — not
 * their contents. A fleet's objects come in a few shapes (a node's counters slice and
 * its device slices alternate in a LIST, claims of 1 and 8 GPUs), each with a hint of
 * its own (st->entry_bytes). */
static uint32_t shape_fold(uint64_t h, const json_t *v, int depth) {
    const char *k;
    const json_t *m;
    json_object_foreach((json_t *)v, k, m) {
        size_t n = json_is_array(m) ? json_array_size(m) : json_is_object(m) ? json_object_size(m) : 0;
        h = hash_u64(h ^ (n + 1));
        if (depth > 1 && json_is_object(m)) h = shape_fold(h, m, depth - 1);
    }
    return (uint32_t)h;
}

static size_t entry_shape(const json_t *obj, dra_kind k) {
    uint64_t h = hash_u64(k);
    /* a slice's driver too: a node's GPUs and NICs come in slices of one shape */
    const char *driver = json_string_value(json_object_get(json_object_get(obj, "spec"), "driver"));
    if (driver) h ^= hash_bytes(driver, strlen(driver));
    static const char *const parts[] = {"metadata", "spec", "status"};
    for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
        const json_t *p = json_object_get(obj, parts[i]);
        if (json_is_object(p)) h = shape_fold(h ^ i, p, 3);
    }
    return (size_t)(hash_u64(h) % ENTRY_SHAPES);
}

/* prev: the entry this one replaces (NULL: none); a slice takes its unchanged devices
 * over unless its chain of bases is ENTRY_BASE_MAX deep. */
static entry *entry_new(dra_store *st, const json_t *obj, dra_kind k, const char *source, char *key, uint64_t hash,
                        uint64_t json_hash, bool fields_known, const entry *prev, dra_name_memo *memo, err *e) {
    entry *en = xcalloc(1, sizeof *en);
    atomic_init(&en->refs, 1);
    en->kind = k;
    en->key = key;
    en->hash = hash;
    /* the JSON itself is kept only where a world decodes it again (taint rules, pod
     * groups); the rest is compared by its identity (dra__object_identity) — a full
     * copy of every object would double the store's memory */
    en->json_hash = json_hash;
    if (k == DRA_KIND_TAINT_RULE || k == DRA_KIND_POD_GROUP) en->json = json_deep_copy(obj);
    en->source = source ? xstrdup(source) : NULL;
    /* small objects dominate (claims, one-node slices): the first block sized as the
     * last object of its shape took, a little to spare (names differ in length; the
     * size class rounds up besides); what overflows it goes to small blocks */
    size_t shape = entry_shape(obj, k);
    uint32_t expect = atomic_load_explicit(&st->entry_bytes[shape], memory_order_relaxed);
    if (expect) arena_init_like(&en->mem, expect, ENTRY_BLOCK_MORE);
    else arena_init(&en->mem, ENTRY_BLOCK_FIRST);
    en->cat = dra__catalog_retain(st->cat);
    uint32_t taken = 0;
    if (k != DRA_KIND_SLICE || (prev && (prev->kind != k || prev->depth >= ENTRY_BASE_MAX))) prev = NULL;
    dra_decoder d = {.a = &en->mem,
                     .prev = prev ? prev->obj : NULL,
                     .taken = &taken,
                     .cat = st->cat,
                     .holds = &en->holds,
                     .memo = memo,
                     .apply_defaults = !st->opts.as_given,
                     .no_raw_text = !st->opts.keep_text,
                     .fields_known = fields_known,
                     .input = &st->input};
    if (k == DRA_KIND_TAINT_RULE || k == DRA_KIND_POD_GROUP) {
        /* decoded per world (they are few): check now that they decode, warnings said once */
        dra_rules *probe = dra__rules_new(st->cat, &st->input);
        bool ok = dra__rules_add(probe, k, obj, e);
        dra__rules_free(probe);
        if (!ok) goto fail;
    } else if (!dra__decode_object(&d, k, obj, &en->obj, e)) {
        goto fail;
    }
    dra__holds_compact(&en->holds, st->cat);
    if (taken) {
        /* prev lives while it is read here (the snapshot holding it is pinned) */
        en->base = entry_retain((entry *)prev);
        en->depth = prev->depth + 1;
        return en;   /* its arena holds the changed devices only: no size to expect */
    }
    if (en->mem.total < ENTRY_EXPECT_MAX)
        atomic_store_explicit(&st->entry_bytes[shape], (uint32_t)en->mem.total, memory_order_relaxed);
    return en;
fail:
    dra__store_entry_release(en);
    return NULL;
}

/* Its place in the store's arrival order, given when it is applied (entries are
 * decoded on two threads, applied on one, in order). */
void dra__store_entry_place(dra_store *st, entry *en) {
    en->seq = st->seq++;
    if (en->kind == DRA_KIND_CLAIM) ((dra_claim *)en->obj)->store_seq = en->seq + 1;
    if (en->kind == DRA_KIND_SLICE) ((dra_slice *)en->obj)->index = st->slice_seq++;
}

/* The key of an object kept beside another of its name, or without one (as_given and
 * one-shot stores): its own, the arrival order appended (lookups by name find the
 * object that has the name itself). */
static void entry_own_key(entry *en) {
    char *own = xmalloc(strlen(en->key) + 24);
    sprintf(own, "%s/#%llu", en->key, (unsigned long long)en->seq);
    free(en->key);
    en->key = own;
    en->hash = hash_bytes(own, strlen(own));
}

/* One change as prepared before it is applied, on either thread (work_ahead.h): its
 * object's facts, and its entry decoded — or the decoder's refusal. Nothing is
 * decoded for what apply_one refuses before decoding, for the kinds decoded per world,
 * or for an object the batch's base snapshot holds unchanged. */
/* Gives back what the batch's lanes hold (their threads done). */
void dra__store_prep_batch_end(prep_batch *b) {
    for (unsigned l = 0; l < DRA_LANES; l++) dra__name_memo_free(b->memo[l], b->st->cat);
    free(b->p);
}

/* p (its facts set) prepared for obj: decoded into an entry against base, the snapshot
 * it will be applied over — unless apply_one would refuse it first, decode it per
 * world, or find it unchanged. Any thread; memo: the batch lane's (NULL: not a batch's
 * item, a file's document just read), made here when the lane first decodes. */
void dra__store_prepare_entry(dra_store *st, const dra_snapshot *base, const json_t *obj, const char *source, prepared *p,
                          dra_name_memo **memo) {
    /* a store that warns (the CLI's) decodes on the applying thread: its warnings come
     * in input order */
    if (st->input.warn) return;
    dra_kind k = dra__kind_of(json_string_value(json_object_get(obj, "kind")));
    const char *name = dra__store_meta_str(obj, "name");
    if (!k || !name || !*name || k == DRA_KIND_TAINT_RULE || k == DRA_KIND_POD_GROUP) return;
    char *key = dra__object_key(k, dra__store_meta_str(obj, "namespace"), name);
    uint64_t h = hash_bytes(key, strlen(key));
    const entry *old = base ? dra__store_find_entry(base, k, key, h) : NULL;
    if (old && old->json_hash == p->f.hash) {
        free(key);
        return;
    }
    /* the error on the stack, copied out only when there is one: a batch's array of
     * them is fresh memory, and clearing each one faulted its pages in (perf) */
    err e;
    err_clear(&e);
    if (memo) {
        if (!*memo) *memo = dra__name_memo_new();
        /* a batch's trees were built before it (a LIST's page, the watch's events) and
         * have left the cache: fetched side by side first, the reads of validation and
         * decoding that waited for each line in turn find it there (json_warm.h) */
        dra__json_warm(obj);
    }
    p->en = entry_new(st, obj, k, source, key, h, p->f.hash, p->f.fields_known, old, memo ? *memo : NULL, &e);
    p->failed = !p->en;
    if (p->failed) p->e = e;
}

void dra__store_prepare_one(void *arg, size_t i, unsigned lane) {
    prep_batch *b = arg;
    const dra_change *c = &b->changes[i];
    prepared *p = &b->p[i];
    if (!c->upsert) return;
    p->f = dra__item_facts(c->upsert, dra__input_heard(&b->st->input), c->served);
    dra__store_prepare_entry(b->st, b->base, c->upsert, c->source, p, &b->memo[lane]);
}

/* The entry for obj under key (taken over): the one p prepared ahead (taken; p may be
 * NULL), else decoded here; NULL with e set when it is refused (ahead or here). */
entry *dra__store_entry_for(dra_store *st, const json_t *obj, dra_kind k, const char *source, char *key, uint64_t h,
                        uint64_t jh, const entry *prev, prepared *p, err *e) {
    if (p && (p->en || p->failed)) {
        free(key);   /* decoded (or refused) ahead, under the same key */
        entry *en = p->en;
        p->en = NULL;
        if (!en) *e = p->e;
        return en;
    }
    return entry_new(st, obj, k, source, key, h, jh, p && p->f.fields_known, prev, NULL, e);
}

/* Applies one change to s (unpublished) and records it for the build; p: what was
 * prepared of it (its entry is taken), NULL when nothing. */
bool dra__store_apply_one(dra_store *st, dra_snapshot *s, const dra_change *c, prepared *p, err *e) {
    assert(pthread_mutex_trylock(&st->write_lock) == EBUSY && "applied outside dra_store_apply");
    if (!c->upsert) {
        dra_kind k = dra__kind_of(c->kind);
        if (!k) return err_set(e, "unknown kind %s", c->kind ? c->kind : "(none)");
        char *key = dra__object_key(k, c->ns, c->name ? c->name : "");
        uint64_t h = hash_bytes(key, strlen(key));
        entry *gone = dra__store_find_entry(s, k, key, h);
        if (gone) {
            DRA_VEC_PUSH(s->changes, ((change){k, entry_retain(gone), NULL}));
            pmap_del(&s->objs[k], h, entry_is, key);
        }
        free(key);
        if (!gone) {
            if (dra__kind_cluster_scoped(k) || !c->ns || !*c->ns) return err_set(e, "%s %s not found", c->kind, c->name);
            return err_set(e, "%s %s/%s not found", c->kind, c->ns, c->name);
        }
        return true;
    }
    const char *kind = json_string_value(json_object_get(c->upsert, "kind"));
    dra_kind k = dra__kind_of(kind);
    if (!k) return err_set(e, "unsupported kind %s", kind ? kind : "(none: the object has no kind)");
    const char *name = dra__store_meta_str(c->upsert, "name");
    /* a one-shot store keeps an object known by generateName only (the decoder says
     * when it has neither) */
    bool one_shot = st->opts.one_shot || st->opts.as_given;
    if ((!name || !*name) && !one_shot) return err_set(e, "%s: metadata.name: Required value", dra__kind_name(k));
    char *key = dra__object_key(k, dra__store_meta_str(c->upsert, "namespace"), name ? name : "");
    uint64_t h = hash_bytes(key, strlen(key)), jh = p && p->f.hash ? p->f.hash : dra__object_identity(c->upsert, c->served);
    entry *old = dra__store_find_entry(s, k, key, h);
    /* every object given is kept: a later one under a taken name, or one without a
     * name, gets a key of its own once placed (entry_own_key) */
    bool own_key = (old && st->opts.as_given) || (one_shot && (!name || !*name));
    if (own_key) old = NULL;
    if (old && old->json_hash == jh) {
        free(key);   /* the same object again (a relist, a resync): keep sharing the old one, undecoded */
        if (p) dra__store_entry_release(p->en), p->en = NULL;
        return true;
    }
    entry *en = dra__store_entry_for(st, c->upsert, k, c->source, key, h, jh, old, p, e);
    if (!en) return false;
    dra__store_entry_place(st, en);
    if (own_key) entry_own_key(en);
    DRA_VEC_PUSH(s->changes, ((change){k, old ? entry_retain(old) : NULL, entry_retain(en)}));
    pmap_put(&s->objs[k], en->hash, en, entry_is, en->key);
    return true;
}

/* "Kind/namespace/name" as error texts name an object: "Kind ns/name", "Kind name"
 * when cluster-scoped (the namespace empty). */
const char *dra__store_key_text(const char *key, char *buf, size_t n) {
    const char *ns = strchr(key, '/') + 1, *name = strchr(ns, '/') + 1;
    int nsl = name - ns > 1 ? (int)(name - ns) : 0;   /* with its '/' */
    snprintf(buf, n, "%.*s %.*s%s", (int)(ns - key - 1), key, nsl, ns, name);
    return buf;
}

/* Duplicate keys within one call: the same object twice is fine, a different one
 * is an error naming both sources. */
bool dra__store_check_duplicates(const dra_change *changes, size_t n, err *e) {
    hmap seen;
    hmap_init(&seen);
    bool ok = true;
    char **keys = xcalloc(n ? n : 1, sizeof *keys);
    for (size_t i = 0; i < n && ok; i++) {
        const json_t *o = changes[i].upsert;
        dra_kind k = o ? dra__kind_of(json_string_value(json_object_get(o, "kind"))) : DRA_KIND_NONE;
        const char *name = o ? dra__store_meta_str(o, "name") : NULL;
        if (!k || !name) continue;
        keys[i] = dra__object_key(k, dra__store_meta_str(o, "namespace"), name);
        uint64_t h = hash_bytes(keys[i], strlen(keys[i])), j;
        if (hmap_get(&seen, h, &j) && keys[j - 1] && !strcmp(keys[j - 1], keys[i]) &&
            !json_equal(changes[j - 1].upsert, o)) {
            const char *a = changes[j - 1].source ? changes[j - 1].source : "(input)";
            const char *b = changes[i].source ? changes[i].source : "(input)";
            char kt[512];
            ok = err_set(e, "%s is given twice with different contents: in %s and in %s",
                         dra__store_key_text(keys[i], kt, sizeof kt), a, b);
        }
        hmap_put(&seen, h, i + 1);
    }
    for (size_t i = 0; i < n; i++) free(keys[i]);
    free(keys);
    hmap_free(&seen);
    return ok;
}

/* Builds s (forked from old, its changes applied when ok) and publishes it: its
 * generation, or 0 with e set (s released). old is released. Under the write lock. */
uint64_t dra__store_publish(dra_store *st, dra_snapshot *s, dra_snapshot *old, bool ok, uint64_t t0, err *e) {
    ok = ok && snapshot_build(s, old, e);
    dra_snapshot_release(old);
    if (!ok) {
        dra_snapshot_release(s);
        return 0;
    }
    s->gen = ++st->gen;
    s->built_unix_ns = realtime_ns();
    s->build_ns = monotonic_ns() - t0;
    pthread_mutex_lock(&st->cur_lock);
    dra_snapshot *prev = st->cur;
    st->cur = s;
    pthread_mutex_unlock(&st->cur_lock);
    dra_snapshot_release(prev);
    return s->gen;
}

/* The changes into a fork of the current snapshot, published as the next one. With
 * skipped, a change apply_one refuses (it refuses before touching the fork) is
 * reported and left out; without, it fails the whole call. */
static uint64_t apply_changes(dra_store *st, const dra_change *changes, size_t n, dra_skip_fn skipped, void *arg,
                              err *e) {
    uint64_t t0 = monotonic_ns();
    pthread_mutex_lock(&st->write_lock);
    uint64_t gen = 0;
    dra_snapshot *old = dra_store_acquire(st);
    /* a large batch is decoded on two threads, applied here in order; the second one
     * starts while this one checks the batch for an object given twice (a twentieth
     * of building `dralloc bench mig_5000nodes`, the other core idle) */
    prep_batch pb = {st, old, changes, xcalloc(n ? n : 1, sizeof(prepared)), {NULL}};
    dra_work_ahead *wa = dra__work_ahead_start(n, dra__store_prepare_one, &pb);
    bool ok = skipped || st->opts.as_given || dra__store_check_duplicates(changes, n, e);
    dra_snapshot *s = ok ? dra__store_snapshot_fork(st, old) : NULL;
    size_t taken = 0;
    for (size_t i = 0; i < n && ok; i++) {
        if (wa) dra__work_ahead_need(wa, i);
        if (dra__store_apply_one(st, s, &changes[i], wa ? &pb.p[i] : NULL, e)) {
            taken++;
        } else if (skipped) {
            skipped(arg, &changes[i], e);
            err_clear(e);
        } else {
            ok = false;
        }
    }
    dra__work_ahead_free(wa);
    for (size_t i = 0; i < n; i++) dra__store_entry_release(pb.p[i].en);   /* prepared past the first error */
    dra__store_prep_batch_end(&pb);
    if (!s) {   /* given twice: nothing applied */
        dra_snapshot_release(old);
        goto out;
    }
    if (ok && !taken && old) {   /* every change refused: the current snapshot stands */
        gen = old->gen;
        dra_snapshot_release(s);
        dra_snapshot_release(old);
        goto out;
    }
    gen = dra__store_publish(st, s, old, ok, t0, e);
out:
    pthread_mutex_unlock(&st->write_lock);
    return gen;
}

uint64_t dra_store_apply(dra_store *st, const dra_change *changes, size_t n, err *e) {
    return apply_changes(st, changes, n, NULL, NULL, e);
}

uint64_t dra_store_apply_batch(dra_store *st, const dra_change *changes, size_t n, dra_skip_fn skipped, void *arg,
                               err *e) {
    assert(skipped);
    return apply_changes(st, changes, n, skipped, arg, e);
}

void dra_snapshot_catalog_sizes(const dra_snapshot *s, dra_catalog_sizes *out) { dra__catalog_sizes(s->cat, out); }

json_t *dra_catalog_sizes_json(const dra_catalog_sizes *c) {
    return json_pack("{s:I, s:I, s:I, s:I}", "names", (json_int_t)c->names, "nameBytes", (json_int_t)c->name_bytes,
                     "programs", (json_int_t)c->programs, "programBytes", (json_int_t)c->program_bytes);
}

const dra_world *dra__snapshot_world(const dra_snapshot *s) { return s->w; }
const dra_world *dra_snapshot_world(const dra_snapshot *s) { return s->w; }
const dra_allocated *dra__snapshot_allocated(const dra_snapshot *s) { return s->st; }
const dra_features *dra__snapshot_features(const dra_snapshot *s) { return &s->f; }
dra_catalog *dra__snapshot_catalog(const dra_snapshot *s) { return s->cat; }
