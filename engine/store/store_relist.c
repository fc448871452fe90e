/* store_relist.c — a kind's whole state fed to the store in parts (snapshot.h:
 * dra_relist): the watch's paged LISTs and streaming lists' initial events, each
 * object decoded as it comes, one snapshot published at commit; and the batch size
 * the callers collect by (dra_relist_batch_full). */

#include "engine/text/json_hash.h"
#include "engine/store/store_layout.h"

#include "base/hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* snapshot.h's rule for a list's batches: the least the second thread takes, more
 * while the trees held stay a few MiB of text. */
enum { RELIST_BATCH_BYTES = 4 << 20 };
_Static_assert((int)DRA_RELIST_BATCH_MAX >= (int)DRA_WORK_AHEAD_MIN, "a full batch is decoded on two threads");

bool dra_relist_batch_full(size_t n, size_t text_bytes) {
    return n >= DRA_RELIST_BATCH_MAX || (n >= DRA_WORK_AHEAD_MIN && text_bytes >= RELIST_BATCH_BYTES);
}

/* ---- a kind's whole state, fed in parts (snapshot.h: dra_relist) ---------------------------- */

/* One object the relist gave: its entry (decoded as it came, or the store's own when
 * the store held it unchanged then), or none when it was refused — then whatever the
 * store holds under the key stays. Chained by key hash through next (index + 1). */
typedef struct staged {
    char *key;
    uint64_t h;
    entry *en;
    bool fresh;       /* decoded for the relist: placed in the arrival order at commit */
    bool dropped;     /* a streaming list's DELETED: as if never given */
    uint64_t next;
} staged;

struct dra_relist {
    dra_store *st;
    dra_kind kind;
    DRA_VEC(staged) v;
    hmap by_hash;     /* key hash → index + 1 of the latest staged object with it */
};

dra_relist *dra_store_relist_begin(dra_store *st, const char *kind) {
    assert(!st->opts.as_given && !st->opts.one_shot && "a relist replaces objects by key");
    dra_kind k = dra__kind_of(kind);
    if (!k) return NULL;
    dra_relist *r = xcalloc(1, sizeof *r);
    r->st = st;
    r->kind = k;
    hmap_init(&r->by_hash);
    return r;
}

static staged *relist_find(dra_relist *r, const char *key, uint64_t h) {
    uint64_t i;
    if (!hmap_get(&r->by_hash, h, &i)) return NULL;
    for (; i; i = r->v.v[i - 1].next)
        if (!strcmp(r->v.v[i - 1].key, key)) return &r->v.v[i - 1];
    return NULL;
}

/* key (taken over) now stands for en (taken over; NULL: refused, the store's stays). */
static void relist_stage(dra_relist *r, char *key, uint64_t h, entry *en, bool fresh) {
    staged *s = relist_find(r, key, h);
    if (s) {   /* given again (a streaming list's MODIFIED): the later one counts */
        free(key);
        dra__store_entry_release(s->en);
        s->en = en, s->fresh = fresh, s->dropped = false;
        return;
    }
    uint64_t head = 0;
    hmap_get(&r->by_hash, h, &head);
    DRA_VEC_PUSH(r->v, ((staged){.key = key, .h = h, .en = en, .fresh = fresh, .next = head}));
    hmap_put(&r->by_hash, h, r->v.n);
}

/* One object, p its facts and what was prepared of it against base (the snapshot at
 * the time): staged, or refused with e set (its key still staged: the store's stays). */
static bool relist_take(dra_relist *r, const dra_snapshot *base, const json_t *obj, prepared *p, err *e) {
    dra_store *st = r->st;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    dra_kind k = dra__kind_of(kind);
    if (k != r->kind) {
        dra__store_entry_release(p->en);
        return err_set(e, "a %s in a list of %s", kind ? kind : "object without a kind", dra__kind_name(r->kind));
    }
    const char *name = dra__store_meta_str(obj, "name");
    if (!name || !*name) {
        dra__store_entry_release(p->en);
        return err_set(e, "%s: metadata.name: Required value", dra__kind_name(k));
    }
    char *key = dra__object_key(k, dra__store_meta_str(obj, "namespace"), name);
    uint64_t h = hash_bytes(key, strlen(key)), jh = p->f.hash ? p->f.hash : dra__object_identity(obj, true);
    /* nothing prepared: unchanged in base (the store's entry, shared), or decoded here */
    const entry *old = !p->en && !p->failed && base ? dra__store_find_entry(base, k, key, h) : NULL;
    bool fresh = !(old && old->json_hash == jh);
    entry *en = fresh ? dra__store_entry_for(st, obj, k, NULL, xstrdup(key), h, jh, old, p, e) : entry_retain((entry *)old);
    relist_stage(r, key, h, en, fresh);
    return en != NULL;
}

void dra_relist_put(dra_relist *r, const json_t *const *objs, size_t n, dra_skip_fn skipped, void *arg) {
    dra_store *st = r->st;
    dra_snapshot *base = dra_store_acquire(st);
    dra_change *changes = xcalloc(n ? n : 1, sizeof *changes);
    for (size_t i = 0; i < n; i++) changes[i] = (dra_change){.upsert = objs[i], .served = true};
    /* a large page is decoded on two threads, staged here in order */
    prep_batch pb = {st, base, changes, xcalloc(n ? n : 1, sizeof(prepared)), {NULL}};
    dra_work_ahead *wa = dra__work_ahead_start(n, dra__store_prepare_one, &pb);
    for (size_t i = 0; i < n; i++) {
        if (wa) dra__work_ahead_need(wa, i);
        else dra__store_prepare_one(&pb, i, DRA_LANE_CALLER);
        err e;
        err_clear(&e);
        if (!relist_take(r, base, objs[i], &pb.p[i], &e) && skipped) skipped(arg, &changes[i], &e);
    }
    dra__work_ahead_free(wa);
    dra__store_prep_batch_end(&pb);
    free(changes);
    dra_snapshot_release(base);
}

void dra_relist_drop(dra_relist *r, const char *ns, const char *name) {
    char *key = dra__object_key(r->kind, ns, name);
    staged *s = relist_find(r, key, hash_bytes(key, strlen(key)));
    free(key);
    if (!s) return;
    dra__store_entry_release(s->en);
    s->en = NULL, s->dropped = true;
}

static void relist_free(dra_relist *r) {
    for (size_t i = 0; i < r->v.n; i++) {
        free(r->v.v[i].key);
        dra__store_entry_release(r->v.v[i].en);
    }
    free(r->v.v);
    hmap_free(&r->by_hash);
    free(r);
}

void dra_relist_abort(dra_relist *r) {
    if (r) relist_free(r);
}

bool dra_relist_commit(dra_relist *r, err *e) {
    dra_store *st = r->st;
    dra_kind k = r->kind;
    uint64_t t0 = monotonic_ns();
    pthread_mutex_lock(&st->write_lock);
    dra_snapshot *old = dra_store_acquire(st);
    dra_snapshot *s = dra__store_snapshot_fork(st, old);
    size_t changed = 0;
    for (size_t i = 0; i < r->v.n; i++) {
        staged *g = &r->v.v[i];
        if (!g->en) continue;
        entry *cur = dra__store_find_entry(s, k, g->key, g->h);
        if (cur == g->en || (cur && cur->json_hash == g->en->json_hash)) continue;
        if (g->fresh) dra__store_entry_place(st, g->en);
        g->fresh = false;   /* placed once, whatever follows */
        DRA_VEC_PUSH(s->changes, ((change){k, cur ? entry_retain(cur) : NULL, entry_retain(g->en)}));
        pmap_put(&s->objs[k], g->en->hash, entry_retain(g->en), entry_is, g->en->key);   /* the map's own */
        changed++;
    }
    /* what the relist did not give is gone (refused objects were given: theirs stay) */
    size_t n;
    entry **v = dra__store_entries_by_seq(&s->objs[k], &n);
    for (size_t i = 0; i < n; i++) {
        staged *g = relist_find(r, v[i]->key, v[i]->hash);
        if (g && !g->dropped) continue;
        DRA_VEC_PUSH(s->changes, ((change){k, entry_retain(v[i]), NULL}));
        pmap_del(&s->objs[k], v[i]->hash, entry_is, v[i]->key);
        changed++;
    }
    free(v);
    bool ok = true;
    if (!changed) {   /* the store already holds exactly this: no new snapshot */
        dra_snapshot_release(s);
        dra_snapshot_release(old);
    } else {
        ok = dra__store_publish(st, s, old, true, t0, e) != 0;
    }
    pthread_mutex_unlock(&st->write_lock);
    relist_free(r);
    return ok;
}

