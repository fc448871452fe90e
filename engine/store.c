/* store.c — the object store and its snapshots (snapshot.h).
 *
 * Every object lives in an entry: its JSON, the decoded model object in an arena of
 * its own, and a reference count. A snapshot holds a reference to each entry it
 * contains, so an object that did not change is decoded once and shared by every
 * snapshot that has it; replacing or deleting it only drops the old snapshot's
 * reference. Building the next snapshot decodes just the changed objects; the world
 * indexes (pools, nodes, names) and the in-use set are then laid out again over the
 * shared objects — pointer work proportional to the object count, no decoding and
 * no CEL compilation (programs live in the catalog, keyed by expression text).
 *
 * Readers pin the current snapshot under a short lock; the writer publishes a new
 * one under the same lock, so a reader sees either the old or the new snapshot,
 * never half of an update. Node views are built lazily, once per node per snapshot,
 * and shared by every request on that snapshot. */
#include "engine/snapshot.h"

#include "engine/extres.h"
#include "engine/world.h"

#include "base/hash.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- entries ---------------------------------------------------------------------------- */

typedef struct entry {
    _Atomic long refs;
    dra_kind kind;
    char *key;               /* "Kind/namespace/name" (namespace empty when cluster-scoped) */
    uint64_t hash;
    json_t *json;            /* the object as given: kept only for kinds decoded per world */
    uint64_t json_hash;      /* json_value_hash of the object: "the same object again" */
    char *source;            /* where it came from, for duplicate errors; may be NULL */
    arena mem;               /* the decoded object */
    void *obj;               /* decoded model object; NULL for kinds decoded per world */
} entry;

static entry *entry_retain(entry *e) {
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    return e;
}

static void entry_release(entry *e) {
    if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1) return;
    json_decref(e->json);
    arena_free(&e->mem);
    free(e->key);
    free(e->source);
    free(e);
}

static bool cluster_scoped(dra_kind k) {
    return k == DRA_KIND_CLASS || k == DRA_KIND_SLICE || k == DRA_KIND_NODE || k == DRA_KIND_TAINT_RULE;
}

static char *make_key(dra_kind k, const char *ns, const char *name) {
    if (cluster_scoped(k)) ns = "";
    else if (!ns || !*ns) ns = "default";
    size_t n = strlen(dra__kind_name(k)) + strlen(ns) + strlen(name) + 3;
    char *key = xmalloc(n);
    snprintf(key, n, "%s/%s/%s", dra__kind_name(k), ns, name);
    return key;
}

/* ---- snapshots ------------------------------------------------------------------------------- */

typedef struct view_slot {
    char *name;
    dra_node *bare;          /* a node known only by name (no Node object) */
    dra_nodeview *view;      /* NULL with err when gathering pools failed */
    char *err;
} view_slot;

struct dra_snapshot {
    _Atomic long refs;
    dra_catalog *cat;
    dra_features f;
    uint64_t gen;
    int64_t built_unix_ns;
    uint64_t build_ns;
    entry **entries;         /* NULL slots are deleted objects, compacted now and then */
    size_t n, cap, live;
    hmap by_key;             /* key hash → index+1 of the first entry; chain through key_next */
    uint32_t *key_next;
    size_t counts[DRA_KIND_COUNT];
    dra_world *w;
    dra_allocated *st;
    /* claim changes since the snapshot this one was forked from, in order (a claim
     * added and deleted in one batch must end up not counted), for the in-use set */
    DRA_VEC(struct claim_delta { entry *e; bool add; }) deltas;
    pthread_once_t names_once;
    const char **node_names; /* Node objects, sorted; built at first use */
    pthread_mutex_t memo_lock;
    hmap memo;               /* hash(node, signature) → index+1 into memos; chain through mnext */
    DRA_VEC(struct memo { char *node; uint64_t sig; int status; int64_t score; char *reason; }) memos;
    DRA_VEC(uint32_t) mnext;
    pthread_mutex_t views_lock;
    hmap views;              /* node name hash → index+1 into vslots; chain through vnext */
    DRA_VEC(view_slot *) vslots;
    DRA_VEC(uint32_t) vnext;
};

struct dra_store {
    pthread_mutex_t write_lock;   /* one writer at a time */
    pthread_mutex_t cur_lock;     /* guards cur: taken briefly by readers and the publisher */
    dra_catalog *cat;
    dra_features f;
    dra_snapshot *cur;
    uint64_t gen;
    uint32_t slice_seq;           /* stable-sort tie-break for slices, in arrival order */
};

dra_snapshot *dra_snapshot_retain(dra_snapshot *s) {
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void dra_snapshot_release(dra_snapshot *s) {
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
    for (size_t i = 0; i < s->vslots.n; i++) {
        view_slot *v = s->vslots.v[i];
        dra_nodeview_free(v->view);
        free(v->bare);
        free(v->name);
        free(v->err);
        free(v);
    }
    free(s->vslots.v);
    free(s->vnext.v);
    for (size_t i = 0; i < s->memos.n; i++) {
        free(s->memos.v[i].node);
        free(s->memos.v[i].reason);
    }
    free(s->memos.v);
    free(s->mnext.v);
    hmap_free(&s->memo);
    pthread_mutex_destroy(&s->memo_lock);
    hmap_free(&s->views);
    pthread_mutex_destroy(&s->views_lock);
    dra_allocated_free(s->st);
    dra_world_free(s->w);
    for (size_t i = 0; i < s->deltas.n; i++) entry_release(s->deltas.v[i].e);
    free(s->deltas.v);
    for (size_t i = 0; i < s->n; i++) entry_release(s->entries[i]);
    free(s->entries);
    free(s->key_next);
    free(s->node_names);
    hmap_free(&s->by_key);
    dra_catalog_release(s->cat);
    free(s);
}

uint64_t dra_snapshot_generation(const dra_snapshot *s) { return s->gen; }
int64_t dra_snapshot_built_unix_ns(const dra_snapshot *s) { return s->built_unix_ns; }
uint64_t dra_snapshot_build_ns(const dra_snapshot *s) { return s->build_ns; }

size_t dra_snapshot_count(const dra_snapshot *s, const char *kind) {
    dra_kind k = dra__kind_of(kind);
    return k ? s->counts[k] : 0;
}

json_t *dra_snapshot_counts_json(const dra_snapshot *s) {
    json_t *o = json_object();
    for (int k = 1; k < DRA_KIND_COUNT; k++) json_object_set_new(o, dra__kind_name(k), json_integer((json_int_t)s->counts[k]));
    return o;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* pthread_once gives no argument: the snapshot being named travels in a thread-local. */
static _Thread_local dra_snapshot *naming;

static void build_node_names(void) {
    dra_snapshot *s = naming;
    s->node_names = xmalloc((s->counts[DRA_KIND_NODE] + 1) * sizeof *s->node_names);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->entries[i] && s->entries[i]->kind == DRA_KIND_NODE) s->node_names[k++] = ((dra_node *)s->entries[i]->obj)->name;
    qsort(s->node_names, k, sizeof *s->node_names, cmp_cstr);
}

size_t dra_snapshot_nnodes(const dra_snapshot *s) { return s->counts[DRA_KIND_NODE]; }
const char *dra_snapshot_node_name(const dra_snapshot *s, size_t i) {
    if (i >= s->counts[DRA_KIND_NODE]) return NULL;
    naming = (dra_snapshot *)s;
    pthread_once((pthread_once_t *)&s->names_once, build_node_names);
    return s->node_names[i];
}

json_t *dra_snapshot_keys(const dra_snapshot *s, const char *kind) {
    dra_kind k = dra__kind_of(kind);
    json_t *a = json_array();
    for (size_t i = 0; k && i < s->n; i++) {
        const entry *en = s->entries[i];
        if (!en || en->kind != k) continue;
        /* the key is "Kind/namespace/name"; names have no '/' */
        const char *ns = strchr(en->key, '/') + 1, *name = strchr(ns, '/') + 1;
        json_array_append_new(a, json_pack("[s#, s]", ns, (int)(name - ns - 1), name));
    }
    return a;
}

/* Index+1 of the entry with this key, 0 when absent. */
static size_t find_key(const dra_snapshot *s, const char *key, uint64_t h) {
    uint64_t head = 0;
    if (!hmap_get(&s->by_key, h, &head)) return 0;
    for (uint32_t i = (uint32_t)head; i; i = s->key_next[i - 1])
        if (s->entries[i - 1] && !strcmp(s->entries[i - 1]->key, key)) return i;
    return 0;
}

static void index_add(dra_snapshot *s, size_t i) {
    uint64_t head = 0;
    hmap_get(&s->by_key, s->entries[i]->hash, &head);
    s->key_next[i] = (uint32_t)head;
    hmap_put(&s->by_key, s->entries[i]->hash, i + 1);
}

/* Drops deleted slots and rebuilds the key index. */
static void compact(dra_snapshot *s) {
    size_t o = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->entries[i]) s->entries[o++] = s->entries[i];
    s->n = o;
    hmap_clear(&s->by_key);
    for (size_t i = 0; i < s->n; i++) index_add(s, i);
}

/* A new, unpublished snapshot with the old one's entries (each retained). */
static dra_snapshot *snapshot_fork(const dra_store *st, const dra_snapshot *old, size_t extra) {
    dra_snapshot *s = xcalloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    s->cat = dra_catalog_retain(st->cat);
    s->f = st->f;
    s->names_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    if (old) memcpy(s->counts, old->counts, sizeof s->counts);
    pthread_mutex_init(&s->views_lock, NULL);
    pthread_mutex_init(&s->memo_lock, NULL);
    hmap_init(&s->memo);
    hmap_init(&s->views);
    hmap_init(&s->by_key);
    size_t n = old ? old->n : 0, cap = n + extra + 16;
    s->entries = xmalloc(cap * sizeof *s->entries);
    s->key_next = xcalloc(cap, sizeof *s->key_next);
    s->cap = cap;
    if (old) {
        for (size_t i = 0; i < n; i++) s->entries[i] = old->entries[i] ? entry_retain(old->entries[i]) : NULL;
        s->n = n;
        s->live = old->live;
        /* the key index is copied, not rebuilt: chains refer to the same indexes */
        if (old->by_key.cap) {
            s->by_key.cap = old->by_key.cap;
            s->by_key.len = old->by_key.len;
            s->by_key.slots = xmalloc(old->by_key.cap * sizeof *old->by_key.slots);
            s->by_key.used = xmalloc(old->by_key.cap);
            memcpy(s->by_key.slots, old->by_key.slots, old->by_key.cap * sizeof *old->by_key.slots);
            memcpy(s->by_key.used, old->by_key.used, old->by_key.cap);
        }
        memcpy(s->key_next, old->key_next, n * sizeof *s->key_next);
    }
    return s;
}

/* World lookups by namespace/name, answered from the snapshot's key index. */
static const void *snapshot_find(const void *arg, int kind, const char *ns, const char *name) {
    const dra_snapshot *s = arg;
    char stack[512];
    dra_kind k = (dra_kind)kind;
    const char *sns = cluster_scoped(k) ? "" : ns && *ns ? ns : "default";
    const char *kn = dra__kind_name(k);
    size_t n = strlen(kn) + strlen(sns) + strlen(name) + 3;
    char *key = n <= sizeof stack ? stack : xmalloc(n);
    snprintf(key, n, "%s/%s/%s", kn, sns, name);
    size_t i = find_key(s, key, hash_bytes(key, strlen(key)));
    if (key != stack) free(key);
    return i ? s->entries[i - 1]->obj : NULL;
}

/* Lays the world out over the entries and derives the in-use set: from `old`'s by
 * the claims removed and added since, else from every claim. Claims, templates,
 * nodes and pods stay out of the world's vectors (looked up through the key
 * index); classes, slices and pods are listed (the pools and the device-plugin
 * count walk them). */
static bool snapshot_build(dra_snapshot *s, const dra_snapshot *old, err *e) {
    if (s->n > s->live + s->live / 4 + 64) compact(s);
    dra_world *w = dra__world_new_in(s->cat, true);
    w->borrowed = true;
    w->find = snapshot_find;
    w->find_arg = s;
    for (size_t i = 0; i < s->n; i++) {
        entry *en = s->entries[i];
        if (!en) continue;
        switch (en->kind) {
        case DRA_KIND_CLASS:
        case DRA_KIND_SLICE:
        case DRA_KIND_POD:
            dra__world_push(w, en->kind, en->obj);
            break;
        case DRA_KIND_TAINT_RULE:
        case DRA_KIND_POD_GROUP:
            if (!dra_world_add_json(w, en->json, e)) {
                dra_world_free(w);
                return false;
            }
            break;
        default:
            break;
        }
    }
    dra_world_freeze(w);
    s->w = w;
    bool cc = s->f.consumable_capacity;
    if (old && old->st) {
        s->st = dra__allocated_clone(old->st, w);
        for (size_t i = 0; i < s->deltas.n; i++) {
            const struct claim_delta *d = &s->deltas.v[i];
            if (d->add) dra_allocated_add_claim(s->st, d->e->obj, cc);
            else dra__allocated_remove_claim(s->st, d->e->obj, cc);
        }
    } else {
        s->st = dra_allocated_new(w);
        for (size_t i = 0; i < s->n; i++)
            if (s->entries[i] && s->entries[i]->kind == DRA_KIND_CLAIM) dra_allocated_add_claim(s->st, s->entries[i]->obj, cc);
    }
    /* the deltas served their purpose */
    for (size_t i = 0; i < s->deltas.n; i++) entry_release(s->deltas.v[i].e);
    s->deltas.n = 0;
    return true;
}

/* ---- the store ------------------------------------------------------------------------------- */

static dra_store *store_new_over(const dra_features *f, dra_catalog *cat) {
    dra_store *st = xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->write_lock, NULL);
    pthread_mutex_init(&st->cur_lock, NULL);
    st->cat = cat;
    st->f = *f;
    return st;
}

dra_store *dra_store_new(const dra_features *f) { return store_new_over(f, dra_catalog_new()); }

dra_store *dra_store_new_sharing(const dra_features *f, const dra_store *like) {
    return store_new_over(f, dra_catalog_retain(like->cat));
}

void dra_store_free(dra_store *st) {
    if (!st) return;
    dra_snapshot_release(st->cur);
    dra_catalog_release(st->cat);
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

static const char *meta_str(const json_t *o, const char *key) {
    return json_string_value(json_object_get(json_object_get(o, "metadata"), key));
}

/* A hash of a JSON value that does not depend on the order of object members: equal
 * for equal values, as the hash of the canonical text (json_dumps with sorted keys)
 * was, without printing that text — which was half of ingesting a large cluster
 * (perf, `dralloc bench mig_5000nodes`). Members combine by addition (order-free),
 * each mixing its key's hash with its value's; array elements in order; each type
 * tagged, so 1 and 1.0 and "1" differ as their texts did. Never 0 (0: no hash). */
static uint64_t json_value_hash(const json_t *v) {
    uint64_t h;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        h = 0x6f626a6563740000ull + json_object_size(v);
        for (void *it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
            uint64_t kh = hash_bytes(json_object_iter_key(it), json_object_iter_key_len(it));
            h += hash_u64(kh ^ hash_u64(json_value_hash(json_object_iter_value(it)) + 0x9E3779B97F4A7C15ull));
        }
        break;
    }
    case JSON_ARRAY: {
        h = 0x6172726179000000ull + json_array_size(v);
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) h = hash_u64(h ^ json_value_hash(x));
        break;
    }
    case JSON_STRING: h = hash_bytes(json_string_value(v), json_string_length(v)) ^ 0x737472ull; break;
    case JSON_INTEGER: h = hash_u64((uint64_t)json_integer_value(v) ^ 0x696e74ull); break;
    case JSON_REAL: {
        double d = json_real_value(v);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        h = hash_u64(bits ^ 0x7265616cull);
        break;
    }
    case JSON_TRUE: h = 0x74727565ull; break;
    case JSON_FALSE: h = 0x66616c7365ull; break;
    default: h = 0x6e756c6cull; break;
    }
    return h ? h : 1;
}

/* A new entry for an object, decoded. NULL with e set when it is invalid. */
static entry *entry_new(dra_store *st, const json_t *obj, dra_kind k, const char *source, err *e) {
    const char *name = meta_str(obj, "name");
    if (!name || !*name) {
        err_set(e, "%s: metadata.name: Required value", dra__kind_name(k));
        return NULL;
    }
    entry *en = xcalloc(1, sizeof *en);
    atomic_init(&en->refs, 1);
    en->kind = k;
    en->key = make_key(k, meta_str(obj, "namespace"), name);
    en->hash = hash_bytes(en->key, strlen(en->key));
    /* the JSON itself is kept only where a world decodes it again (taint rules, pod
     * groups); the rest is compared by a hash of its value — a full copy of every
     * object would double the store's memory */
    en->json_hash = json_value_hash(obj);
    if (k == DRA_KIND_TAINT_RULE || k == DRA_KIND_POD_GROUP) en->json = json_deep_copy(obj);
    en->source = source ? strdup(source) : NULL;
    /* small objects dominate (claims, one-node slices): start with a small block */
    arena_init(&en->mem, 2048);
    dra_decoder d = {.a = &en->mem, .names = st->cat->names, .apply_defaults = true, .no_raw_text = true};
    if (k == DRA_KIND_TAINT_RULE || k == DRA_KIND_POD_GROUP) {
        /* decoded per world (they are few): check now that they decode */
        dra_world *probe = dra__world_new_in(st->cat, true);
        bool ok = dra_world_add_json(probe, obj, e);
        dra_world_free(probe);
        if (!ok) goto fail;
    } else if (!dra__decode_object(&d, k, obj, &en->obj, e)) {
        goto fail;
    }
    if (k == DRA_KIND_SLICE) {
        dra_slice *sl = en->obj;
        sl->index = st->slice_seq++;
        if (sl->node_name && *sl->node_name) sl->node_id = intern_cstr(st->cat->names, sl->node_name);
    }
    return en;
fail:
    entry_release(en);
    return NULL;
}

/* Applies one change to s (unpublished). */
static bool apply_one(dra_store *st, dra_snapshot *s, const dra_change *c, err *e) {
    if (!c->upsert) {
        dra_kind k = dra__kind_of(c->kind);
        if (!k) return err_set(e, "unknown kind %s", c->kind ? c->kind : "(none)");
        char *key = make_key(k, c->ns, c->name ? c->name : "");
        size_t i = find_key(s, key, hash_bytes(key, strlen(key)));
        free(key);
        if (!i) {
            if (cluster_scoped(k) || !c->ns || !*c->ns) return err_set(e, "%s %s not found", c->kind, c->name);
            return err_set(e, "%s %s/%s not found", c->kind, c->ns, c->name);
        }
        entry *gone = s->entries[i - 1];
        s->entries[i - 1] = NULL;
        s->live--;
        s->counts[k]--;
        if (k == DRA_KIND_CLAIM) DRA_VEC_PUSH(s->deltas, ((struct claim_delta){gone, false}));
        else entry_release(gone);
        return true;
    }
    const char *kind = json_string_value(json_object_get(c->upsert, "kind"));
    dra_kind k = dra__kind_of(kind);
    if (!k) return err_set(e, "unsupported kind %s", kind ? kind : "(none: the object has no kind)");
    entry *en = entry_new(st, c->upsert, k, c->source, e);
    if (!en) return false;
    size_t i = find_key(s, en->key, en->hash);
    if (i) {
        entry *old = s->entries[i - 1];
        if (old->json_hash == en->json_hash && en->json_hash) {
            entry_release(en);   /* the same object again: keep sharing the old one */
            return true;
        }
        s->entries[i - 1] = en;
        if (k == DRA_KIND_CLAIM) {
            DRA_VEC_PUSH(s->deltas, ((struct claim_delta){old, false}));
            DRA_VEC_PUSH(s->deltas, ((struct claim_delta){entry_retain(en), true}));
        } else {
            entry_release(old);
        }
        return true;
    }
    if (s->n == s->cap) {
        s->cap *= 2;
        s->entries = xrealloc(s->entries, s->cap * sizeof *s->entries);
        s->key_next = xrealloc(s->key_next, s->cap * sizeof *s->key_next);
    }
    s->entries[s->n] = en;
    index_add(s, s->n);
    s->n++;
    s->live++;
    s->counts[k]++;
    if (k == DRA_KIND_CLAIM) DRA_VEC_PUSH(s->deltas, ((struct claim_delta){entry_retain(en), true}));
    return true;
}

static uint64_t now_ns(clockid_t clk) {
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Duplicate keys within one call: the same object twice is fine, a different one
 * is an error naming both sources. */
static bool check_duplicates(const dra_change *changes, size_t n, err *e) {
    hmap seen;
    hmap_init(&seen);
    bool ok = true;
    char **keys = xcalloc(n ? n : 1, sizeof *keys);
    for (size_t i = 0; i < n && ok; i++) {
        const json_t *o = changes[i].upsert;
        dra_kind k = o ? dra__kind_of(json_string_value(json_object_get(o, "kind"))) : DRA_KIND_NONE;
        const char *name = o ? meta_str(o, "name") : NULL;
        if (!k || !name) continue;
        keys[i] = make_key(k, meta_str(o, "namespace"), name);
        uint64_t h = hash_bytes(keys[i], strlen(keys[i])), j;
        if (hmap_get(&seen, h, &j) && keys[j - 1] && !strcmp(keys[j - 1], keys[i]) &&
            !json_equal(changes[j - 1].upsert, o)) {
            const char *a = changes[j - 1].source ? changes[j - 1].source : "(input)";
            const char *b = changes[i].source ? changes[i].source : "(input)";
            ok = err_set(e, "%s is given twice with different contents: in %s and in %s", keys[i], a, b);
        }
        hmap_put(&seen, h, i + 1);
    }
    for (size_t i = 0; i < n; i++) free(keys[i]);
    free(keys);
    hmap_free(&seen);
    return ok;
}

uint64_t dra_store_apply(dra_store *st, const dra_change *changes, size_t n, err *e) {
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    pthread_mutex_lock(&st->write_lock);
    uint64_t gen = 0;
    if (!check_duplicates(changes, n, e)) goto out;
    dra_snapshot *old = dra_store_acquire(st);
    dra_snapshot *s = snapshot_fork(st, old, n);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) ok = apply_one(st, s, &changes[i], e);
    ok = ok && snapshot_build(s, old, e);
    dra_snapshot_release(old);
    if (!ok) {
        dra_snapshot_release(s);
        goto out;
    }
    s->gen = gen = ++st->gen;
    s->built_unix_ns = (int64_t)now_ns(CLOCK_REALTIME);
    s->build_ns = now_ns(CLOCK_MONOTONIC) - t0;
    pthread_mutex_lock(&st->cur_lock);
    dra_snapshot *prev = st->cur;
    st->cur = s;
    pthread_mutex_unlock(&st->cur_lock);
    dra_snapshot_release(prev);
out:
    pthread_mutex_unlock(&st->write_lock);
    return gen;
}

/* ---- JSON documents to changes ----------------------------------------------------------------- */

typedef struct change_list {
    DRA_VEC(dra_change) v;
    DRA_VEC(json_t *) owned;   /* typed-list items given their kind */
    bool skip_unknown;         /* files: objects of other kinds are skipped, as kubectl apply would not */
} change_list;

static bool collect(change_list *cl, const json_t *doc, const char *source, err *e) {
    if (json_is_array(doc)) {
        for (size_t i = 0; i < json_array_size(doc); i++)
            if (!collect(cl, json_array_get(doc, i), source, e)) return false;
        return true;
    }
    if (!json_is_object(doc)) return err_set(e, "%s: expected a Kubernetes object", source ? source : "input");
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    size_t kl = kind ? strlen(kind) : 0;
    if (kind && (!strcmp(kind, "List") || (kl > 4 && !strcmp(kind + kl - 4, "List")))) {
        const json_t *items = json_object_get(doc, "items");
        for (size_t i = 0; json_is_array(items) && i < json_array_size(items); i++) {
            json_t *it = json_array_get(items, i);
            if (!json_object_get(it, "kind") && strcmp(kind, "List") && json_is_object(it)) {
                /* typed lists print items without kind */
                json_t *copy = json_copy(it);
                json_object_set_new(copy, "kind", json_stringn(kind, kl - 4));
                if (!json_object_get(copy, "apiVersion") && json_object_get(doc, "apiVersion"))
                    json_object_set(copy, "apiVersion", json_object_get(doc, "apiVersion"));
                DRA_VEC_PUSH(cl->owned, copy);
                it = copy;
            }
            if (!collect(cl, it, source, e)) return false;
        }
        return true;
    }
    if (cl->skip_unknown && !dra__kind_of(kind)) return true;
    DRA_VEC_PUSH(cl->v, ((dra_change){.upsert = doc, .source = source}));
    return true;
}

static void change_list_free(change_list *cl) {
    for (size_t i = 0; i < cl->owned.n; i++) json_decref(cl->owned.v[i]);
    free(cl->owned.v);
    free(cl->v.v);
}

uint64_t dra_store_apply_json(dra_store *st, const json_t *doc, err *e) {
    change_list cl = {0};
    uint64_t gen = collect(&cl, doc, NULL, e) ? dra_store_apply(st, cl.v.v, cl.v.n, e) : 0;
    change_list_free(&cl);
    return gen;
}

typedef struct load_state {
    change_list cl;
    DRA_VEC(json_t *) docs;
    DRA_VEC(char *) sources;
} load_state;

static bool load_docs(void *arg, const char *file, json_t *docs, err *e) {
    load_state *ls = arg;
    char *src = strdup(file);
    DRA_VEC_PUSH(ls->sources, src);
    DRA_VEC_PUSH(ls->docs, json_incref(docs));
    return collect(&ls->cl, docs, src, e);
}

uint64_t dra_store_load_paths(dra_store *st, const char *const *paths, size_t n, err *e) {
    load_state ls = {.cl = {.skip_unknown = true}};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) ok = dra__path_docs(paths[i], load_docs, &ls, e);
    uint64_t gen = ok ? dra_store_apply(st, ls.cl.v.v, ls.cl.v.n, e) : 0;
    change_list_free(&ls.cl);
    for (size_t i = 0; i < ls.docs.n; i++) json_decref(ls.docs.v[i]);
    for (size_t i = 0; i < ls.sources.n; i++) free(ls.sources.v[i]);
    free(ls.docs.v);
    free(ls.sources.v);
    return gen;
}

/* ---- node views, once per node per snapshot ------------------------------------------------------ */

/* The view of a node (by name; a node without a Node object is seen bare), built at
 * first use. *errmsg is set when gathering pools failed. */
const dra_nodeview *dra__snapshot_view(dra_snapshot *s, const char *name, const dra_node **node, const char **errmsg) {
    uint64_t h = hash_bytes(name, strlen(name)), head = 0;
    *errmsg = NULL;
    pthread_mutex_lock(&s->views_lock);
    if (hmap_get(&s->views, h, &head))
        for (uint32_t i = (uint32_t)head; i; i = s->vnext.v[i - 1]) {
            view_slot *v = s->vslots.v[i - 1];
            if (strcmp(v->name, name)) continue;
            pthread_mutex_unlock(&s->views_lock);
            *errmsg = v->err;
            *node = v->view ? v->view->node : v->bare;
            if (!v->view && !v->bare) *node = dra_world_find_node(s->w, name);
            return v->view;
        }
    pthread_mutex_unlock(&s->views_lock);
    /* build outside the lock: other nodes' requests go on meanwhile */
    view_slot *v = xcalloc(1, sizeof *v);
    v->name = strdup(name);
    const dra_node *n = dra_world_find_node(s->w, name);
    if (!n) {
        v->bare = xcalloc(1, sizeof *v->bare);
        v->bare->name = v->name;
        n = v->bare;
    }
    err e;
    err_clear(&e);
    v->view = dra_nodeview_new(s->w, n, &s->f, &e);
    if (!v->view) v->err = strdup(e.msg);
    pthread_mutex_lock(&s->views_lock);
    /* another thread may have built it meanwhile: keep the first */
    if (hmap_get(&s->views, h, &head))
        for (uint32_t i = (uint32_t)head; i; i = s->vnext.v[i - 1]) {
            view_slot *o = s->vslots.v[i - 1];
            if (strcmp(o->name, name)) continue;
            pthread_mutex_unlock(&s->views_lock);
            dra_nodeview_free(v->view);
            free(v->bare);
            free(v->name);
            free(v->err);
            free(v);
            *errmsg = o->err;
            *node = o->view ? o->view->node : o->bare ? o->bare : dra_world_find_node(s->w, name);
            return o->view;
        }
    DRA_VEC_PUSH(s->vslots, v);
    DRA_VEC_PUSH(s->vnext, (uint32_t)head);
    hmap_put(&s->views, h, s->vslots.n);
    pthread_mutex_unlock(&s->views_lock);
    *errmsg = v->err;
    *node = n;
    return v->view;
}

/* ---- the fit memo ------------------------------------------------------------------------- */

char *dra__reason_template(const char *reason, const char *const *names, size_t nnames) {
    /* each name (longest first, so a claim named after its pod is not split) becomes
     * \x01<index+1>; a stray \x01 in the text becomes '?' */
    size_t rl = strlen(reason);
    char *t = xmalloc(rl * 2 + 1);
    size_t o = 0;
    for (size_t i = 0; i < rl;) {
        size_t best = 0, bk = 0;
        for (size_t k = 0; k < nnames && k < 200; k++) {
            size_t l = strlen(names[k]);
            if (l > best && !strncmp(reason + i, names[k], l)) best = l, bk = k;
        }
        if (best) {
            t[o++] = '\x01';
            t[o++] = (char)(bk + 1);
            i += best;
        } else {
            t[o++] = reason[i++] == '\x01' ? '?' : reason[i - 1];
        }
    }
    t[o] = '\0';
    return t;
}

void dra__reason_expand(const char *tmpl, char *reason, size_t n, const char *const *names, size_t nnames) {
    size_t o = 0;
    for (const char *p = tmpl; *p && o + 1 < n; p++) {
        if (*p == '\x01' && p[1]) {
            size_t k = (size_t)(unsigned char)p[1] - 1;
            const char *nm = k < nnames ? names[k] : "?";
            while (*nm && o + 1 < n) reason[o++] = *nm++;
            p++;
        } else {
            reason[o++] = *p;
        }
    }
    if (n) reason[o < n ? o : n - 1] = '\0';
}

/* A bound on memory, not on correctness: past it, answers are computed, not kept. */
enum { MEMO_MAX = 1 << 17 };   /* ~30 MiB at worst: 5,000 nodes x 26 pod shapes */

static uint64_t memo_key(const char *node, uint64_t sig) { return hash_bytes(node, strlen(node)) ^ hash_u64(sig); }

bool dra__memo_get(dra_snapshot *s, const char *node, uint64_t sig, int *status, int64_t *score, char *reason,
                   size_t n, const char *const *names, size_t nnames) {
    uint64_t head;
    bool hit = false;
    pthread_mutex_lock(&s->memo_lock);
    if (hmap_get(&s->memo, memo_key(node, sig), &head))
        for (uint32_t i = (uint32_t)head; i && !hit; i = s->mnext.v[i - 1]) {
            const struct memo *m = &s->memos.v[i - 1];
            if (m->sig != sig || strcmp(m->node, node)) continue;
            hit = true;
            *status = m->status;
            *score = m->score;
            dra__reason_expand(m->reason, reason, n, names, nnames);
        }
    pthread_mutex_unlock(&s->memo_lock);
    return hit;
}

void dra__memo_put(dra_snapshot *s, const char *node, uint64_t sig, int status, int64_t score, const char *reason,
                   const char *const *names, size_t nnames) {
    if (nnames > 200) return;
    char *t = dra__reason_template(reason, names, nnames);
    pthread_mutex_lock(&s->memo_lock);
    uint64_t key = memo_key(node, sig), head = 0;
    bool known = false;
    if (hmap_get(&s->memo, key, &head))
        for (uint32_t i = (uint32_t)head; i && !known; i = s->mnext.v[i - 1])
            known = s->memos.v[i - 1].sig == sig && !strcmp(s->memos.v[i - 1].node, node);
    if (!known && s->memos.n < MEMO_MAX) {
        struct memo m = {.node = strdup(node), .sig = sig, .status = status, .score = score, .reason = t};
        t = NULL;
        DRA_VEC_PUSH(s->memos, m);
        DRA_VEC_PUSH(s->mnext, (uint32_t)head);
        hmap_put(&s->memo, key, s->memos.n);
    }
    pthread_mutex_unlock(&s->memo_lock);
    free(t);
}

const dra_world *dra__snapshot_world(const dra_snapshot *s) { return s->w; }
const dra_allocated *dra__snapshot_allocated(const dra_snapshot *s) { return s->st; }
const dra_features *dra__snapshot_features(const dra_snapshot *s) { return &s->f; }
dra_catalog *dra__snapshot_catalog(const dra_snapshot *s) { return s->cat; }
