/* pending.c — the pending-writes table of bind mode (pending.h). One mutex; entries in
 * a hash map from XXH3 of "kind\0namespace\0name" to a chain of entries (collisions
 * are compared by the strings). An entry lives while it carries a mark or a journal;
 * the journaled entries are also listed in `journaled`, so the end of the last write
 * in flight clears them without walking the whole map. Per kind: the writes in
 * flight and the counters. A held entry (a reservation in flight) stays while held. */
#include "extender/pending.h"

#include "base/base.h"
#include "base/clock.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "base/vec.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct entry {
    struct entry *next;          /* the next entry of the same hash */
    uint64_t h;
    char *kind, *ns, *name;      /* ns "" when cluster-scoped */
    /* the mark: set by our write, cleared by its event, a DELETED event or the timeout */
    char *rv;                    /* the resourceVersion our write returned; NULL: no mark, or gone */
    bool gone;                   /* our write deleted it */
    int64_t since_ns;            /* when the mark was made (CLOCK_MONOTONIC) */
    bool has_view;               /* the watch said something newer-or-unknown while the mark held: */
    json_t *view;                /*   that version (NULL with has_view: it is gone); applied on expiry */
    /* the journal: what the watch delivered while a write of the kind was in flight */
    bool journaled;              /* listed in ext_pending.journaled */
    VEC(char *) seen;            /* the resourceVersions delivered */
    bool seen_deleted;           /* a DELETED event came */
    bool has_last;               /* the latest delivered: the object (NULL with has_last: gone) */
    json_t *last;
    /* the hold (pending.h, Holds): the store has our tentative version until it ends */
    bool held;
    json_t *base;                /* the server's version under the hold (our copy); NULL: not created yet */
} entry;

typedef struct kind_rec {
    char *kind;
    int inflight;                /* writes begun and not answered */
    size_t marks;
    uint64_t skipped, expired, seen_first;
    size_t holds;
    uint64_t released;
} kind_rec;

struct ext_pending {
    pthread_mutex_t mu;
    int64_t timeout_ns;
    hmap map;                    /* hash → first entry of that hash */
    VEC(entry *) journaled;
    VEC(kind_rec) kinds;
};

static int64_t now_ns(void) { return (int64_t)monotonic_ns(); }

ext_pending *ext_pending_new(double timeout_s) {
    ext_pending *p = xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    p->timeout_ns = (int64_t)((timeout_s > 0 ? timeout_s : 60) * 1e9);
    hmap_init(&p->map);
    return p;
}

double ext_pending_timeout(const ext_pending *p) { return (double)p->timeout_ns / 1e9; }

static void clear_journal(entry *e) {
    for (size_t i = 0; i < e->seen.n; i++) free(e->seen.v[i]);
    e->seen.n = 0;
    e->seen_deleted = false;
    json_decref(e->last);
    e->last = NULL;
    e->has_last = false;
}

static void free_entry(entry *e) {
    clear_journal(e);
    free(e->seen.v);
    json_decref(e->view);
    json_decref(e->base);
    free(e->rv);
    free(e->kind);
    free(e->ns);
    free(e->name);
    free(e);
}

void ext_pending_free(ext_pending *p) {
    if (!p) return;
    uint64_t k, v;
    for (size_t i = 0; hmap_next(&p->map, &i, &k, &v);)
        for (entry *e = (entry *)(uintptr_t)v, *next; e; e = next) {
            next = e->next;
            free_entry(e);
        }
    hmap_free(&p->map);
    free(p->journaled.v);
    for (size_t i = 0; i < p->kinds.n; i++) free(p->kinds.v[i].kind);
    free(p->kinds.v);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void ext_pending_lock(ext_pending *p) { pthread_mutex_lock(&p->mu); }
void ext_pending_unlock(ext_pending *p) { pthread_mutex_unlock(&p->mu); }

/* ---- entries ------------------------------------------------------------------------------------ */

static kind_rec *kind_of(ext_pending *p, const char *kind, bool create) {
    for (size_t i = 0; i < p->kinds.n; i++)
        if (!strcmp(p->kinds.v[i].kind, kind)) return &p->kinds.v[i];
    if (!create) return NULL;
    VEC_PUSH(p->kinds, ((kind_rec){.kind = xstrdup(kind)}));
    return &p->kinds.v[p->kinds.n - 1];
}

static uint64_t key_hash(const char *kind, const char *ns, const char *name) {
    size_t lk = strlen(kind), ln = strlen(ns), lm = strlen(name);
    char stack[512], *buf = lk + ln + lm + 2 <= sizeof stack ? stack : xmalloc(lk + ln + lm + 2);
    memcpy(buf, kind, lk);
    buf[lk] = '\0';
    memcpy(buf + lk + 1, ns, ln);
    buf[lk + 1 + ln] = '\0';
    memcpy(buf + lk + ln + 2, name, lm);
    uint64_t h = hash_bytes(buf, lk + ln + lm + 2);
    if (buf != stack) free(buf);
    return h;
}

static entry *find(ext_pending *p, const char *kind, const char *ns, const char *name, bool create) {
    if (!ns) ns = "";
    uint64_t h = key_hash(kind, ns, name), head = 0;
    bool any = hmap_get(&p->map, h, &head);
    for (entry *e = any ? (entry *)(uintptr_t)head : NULL; e; e = e->next)
        if (!strcmp(e->name, name) && !strcmp(e->ns, ns) && !strcmp(e->kind, kind)) return e;
    if (!create) return NULL;
    entry *e = xcalloc(1, sizeof *e);
    e->h = h;
    e->kind = xstrdup(kind);
    e->ns = xstrdup(ns);
    e->name = xstrdup(name);
    e->next = any ? (entry *)(uintptr_t)head : NULL;
    hmap_put(&p->map, h, (uint64_t)(uintptr_t)e);
    return e;
}

static bool marked(const entry *e) { return e->rv || e->gone; }

/* An entry with neither a mark nor a journal goes. */
static void gc(ext_pending *p, entry *e) {
    if (marked(e) || e->journaled || e->held) return;
    uint64_t head = 0;
    hmap_get(&p->map, e->h, &head);
    entry *first = (entry *)(uintptr_t)head;
    if (first == e) {
        if (e->next) hmap_put(&p->map, e->h, (uint64_t)(uintptr_t)e->next);
        else hmap_del(&p->map, e->h);
    } else {
        entry *q = first;
        while (q && q->next != e) q = q->next;
        if (q) q->next = e->next;
    }
    free_entry(e);
}

static void set_view(entry *e, const json_t *obj) {
    json_decref(e->view);
    e->view = obj ? json_incref((json_t *)obj) : NULL;
    e->has_view = true;
}

static void clear_mark(kind_rec *kr, entry *e) {
    if (marked(e) && kr->marks) kr->marks--;
    free(e->rv);
    e->rv = NULL;
    e->gone = false;
    json_decref(e->view);
    e->view = NULL;
    e->has_view = false;
}

/* A new mark: rv (NULL: gone). What the watch delivered during the write, if anything,
 * is its view from now on. */
static void set_mark(kind_rec *kr, entry *e, const char *rv) {
    clear_mark(kr, e);
    e->rv = rv ? xstrdup(rv) : NULL;
    e->gone = !rv;
    e->since_ns = now_ns();
    if (e->has_last) set_view(e, e->last);
    kr->marks++;
}

static bool expired(const ext_pending *p, const entry *e, int64_t now) { return now - e->since_ns > p->timeout_ns; }

/* While a write of the kind is in flight: what the watch delivers, per key. */
static void journal(ext_pending *p, const char *kind, const char *ns, const char *name, const char *rv,
                    const json_t *obj, bool gone, bool deleted) {
    entry *e = find(p, kind, ns, name, true);
    if (!e->journaled) {
        e->journaled = true;
        VEC_PUSH(p->journaled, e);
    }
    if (rv) VEC_PUSH(e->seen, xstrdup(rv));
    if (deleted) e->seen_deleted = true;
    json_decref(e->last);
    e->last = gone ? NULL : json_incref((json_t *)obj);
    e->has_last = true;
}

/* A write ended: with none of its kind in flight any more, the journals go. */
static void end_write(ext_pending *p, kind_rec *kr) {
    if (kr->inflight > 0) kr->inflight--;
    if (kr->inflight) return;
    size_t keep = 0;
    for (size_t i = 0; i < p->journaled.n; i++) {
        entry *e = p->journaled.v[i];
        if (strcmp(e->kind, kr->kind)) {
            p->journaled.v[keep++] = e;
            continue;
        }
        clear_journal(e);
        e->journaled = false;
        gc(p, e);
    }
    p->journaled.n = keep;
}

static bool journal_has(const entry *e, const char *rv) {
    for (size_t i = 0; rv && i < e->seen.n; i++)
        if (!strcmp(e->seen.v[i], rv)) return true;
    return false;
}

static void store_upsert(dra_store *st, const json_t *obj) {
    dra_change c = {.upsert = obj};
    err e;
    err_clear(&e);
    dra_store_apply(st, &c, 1, &e);
}

static void store_delete(dra_store *st, const char *kind, const char *ns, const char *name) {
    dra_change c = {.kind = kind, .ns = ns && *ns ? ns : NULL, .name = name};
    err e;
    err_clear(&e);
    dra_store_apply(st, &c, 1, &e);   /* not there: nothing to do */
}

static const char *meta_str(const json_t *obj, const char *k) {
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), k));
}

/* ---- the writer ---------------------------------------------------------------------------------- */

static void end_hold(kind_rec *kr, entry *e) {
    assert(e->held && kr->holds > 0);
    e->held = false;
    kr->holds--;
    json_decref(e->base);
    e->base = NULL;
}

/* The store's update must take: a reservation the store does not show would let the
 * devices be given away again. */
static bool store_upsert_ok(dra_store *st, const json_t *obj) {
    dra_change c = {.upsert = obj};
    err e;
    err_clear(&e);
    return dra_store_apply(st, &c, 1, &e) != 0;
}

bool ext_pending_hold(ext_pending *p, dra_store *st, const json_t *base, const json_t *tentative) {
    const char *kind = json_string_value(json_object_get(tentative, "kind"));
    const char *ns = meta_str(tentative, "namespace"), *name = meta_str(tentative, "name");
    assert(kind && name);
    pthread_mutex_lock(&p->mu);
    kind_rec *kr = kind_of(p, kind, true);
    entry *e = find(p, kind, ns, name, true);
    bool ok = !e->held && store_upsert_ok(st, tentative);
    if (ok) {
        e->held = true;
        e->base = base ? json_deep_copy(base) : NULL;
        kr->holds++;
    }
    gc(p, e);
    pthread_mutex_unlock(&p->mu);
    return ok;
}

void ext_pending_wrote_held(ext_pending *p, const json_t *obj) {
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name"), *rv = meta_str(obj, "resourceVersion");
    assert(kind && name);
    pthread_mutex_lock(&p->mu);
    kind_rec *kr = kind_of(p, kind, true);
    entry *e = find(p, kind, ns, name, true);
    assert(e->held);
    json_decref(e->base);
    e->base = json_deep_copy(obj);
    if (rv && *rv && journal_has(e, rv)) {
        /* already delivered (and skipped for the hold: it is in the view, or older than it) */
        kr->seen_first++;
        if (marked(e) && kr->marks) kr->marks--;
        free(e->rv);
        e->rv = NULL;
        e->gone = false;
    } else if (rv && *rv) {
        set_mark(kr, e, rv);   /* what the watch delivers before it is older than the base */
    }
    gc(p, e);
    end_write(p, kr);
    pthread_mutex_unlock(&p->mu);
}

void ext_pending_release(ext_pending *p, dra_store *st, const char *kind, const char *ns, const char *name) {
    pthread_mutex_lock(&p->mu);
    kind_rec *kr = kind_of(p, kind, true);
    entry *e = find(p, kind, ns, name, false);
    if (!e || !e->held) {
        pthread_mutex_unlock(&p->mu);
        return;
    }
    kr->released++;
    if (!marked(e) && e->has_view) {
        /* the watch said something after our own writes: the newest word there is */
        if (e->view) store_upsert(st, e->view);
        else store_delete(st, kind, ns, name);
        json_decref(e->view);
        e->view = NULL;
        e->has_view = false;
    } else if (e->base) {
        store_upsert(st, e->base);   /* a mark of ours stays: older versions are still kept out */
    } else {
        store_delete(st, kind, ns, name);
    }
    end_hold(kr, e);
    gc(p, e);
    pthread_mutex_unlock(&p->mu);
}

bool ext_pending_held(ext_pending *p, const char *kind, const char *ns, const char *name) {
    pthread_mutex_lock(&p->mu);
    entry *e = find(p, kind, ns, name, false);
    bool h = e && e->held;
    pthread_mutex_unlock(&p->mu);
    return h;
}

void ext_pending_begin(ext_pending *p, const char *kind) {
    pthread_mutex_lock(&p->mu);
    kind_of(p, kind, true)->inflight++;
    pthread_mutex_unlock(&p->mu);
}

void ext_pending_abandon(ext_pending *p, const char *kind) {
    pthread_mutex_lock(&p->mu);
    end_write(p, kind_of(p, kind, true));
    pthread_mutex_unlock(&p->mu);
}

void ext_pending_wrote(ext_pending *p, dra_store *st, const json_t *obj) {
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name"), *rv = meta_str(obj, "resourceVersion");
    pthread_mutex_lock(&p->mu);
    kind_rec *kr = kind_of(p, kind ? kind : "", true);
    if (!kind || !name || !rv || !*rv) {
        /* nothing to recognise its event by: into the store as it is */
        entry *h = kind && name ? find(p, kind, ns, name, false) : NULL;
        if (h && h->held) {
            end_hold(kr, h);
            gc(p, h);
        }
        store_upsert(st, obj);
        end_write(p, kr);
        pthread_mutex_unlock(&p->mu);
        return;
    }
    entry *e = find(p, kind, ns, name, true);
    bool was_held = e->held;
    if (was_held) end_hold(kr, e);
    if (journal_has(e, rv)) {
        /* the watch delivered our version before the answer came: the store has it or a
         * newer one — unless the watch was skipping (a mark, a hold), then its view
         * (ours or newer) */
        kr->seen_first++;
        if (was_held && !e->has_view) {
            store_upsert(st, obj);   /* not skipped for the hold: a journal from before it */
        } else if ((marked(e) || was_held) && e->has_view) {
            if (e->view) store_upsert(st, e->view);
            else store_delete(st, kind, ns, name);
        }
        clear_mark(kr, e);
    } else {
        store_upsert(st, obj);
        set_mark(kr, e, rv);
    }
    gc(p, e);            /* first: a journaled entry stays for end_write, which may free it */
    end_write(p, kr);
    pthread_mutex_unlock(&p->mu);
}

void ext_pending_deleted(ext_pending *p, dra_store *st, const char *kind, const char *ns, const char *name) {
    pthread_mutex_lock(&p->mu);
    kind_rec *kr = kind_of(p, kind, true);
    entry *e = find(p, kind, ns, name, true);
    if (e->seen_deleted) {
        kr->seen_first++;   /* the watch applied the deletion already */
        clear_mark(kr, e);
    } else {
        store_delete(st, kind, ns, name);
        set_mark(kr, e, NULL);
    }
    gc(p, e);            /* first: a journaled entry stays for end_write, which may free it */
    end_write(p, kr);
    pthread_mutex_unlock(&p->mu);
}

/* ---- the watch ------------------------------------------------------------------------------------ */

static ext_pending_verdict decide(ext_pending *p, const char *kind, const json_t *obj, bool deleted, char *ours,
                                  size_t ours_n) {
    kind_rec *kr = kind_of(p, kind, false);
    if (!kr) return EXT_PENDING_APPLY;   /* never written: the common case */
    const char *ns = meta_str(obj, "namespace"), *name = meta_str(obj, "name"), *rv = meta_str(obj, "resourceVersion");
    if (!name) return EXT_PENDING_APPLY;
    if (kr->inflight) journal(p, kind, ns, name, rv, obj, deleted, deleted);
    entry *e = find(p, kind, ns, name, false);
    if (e && e->held) {
        /* the store has our tentative: nothing the watch says replaces it before the
         * hold ends; the echo of our own earlier write (or a deletion) ends its mark,
         * and whatever came is the watch's latest word */
        if (deleted || (e->rv && rv && !strcmp(e->rv, rv))) clear_mark(kr, e);
        if (ours && ours_n) snprintf(ours, ours_n, "a reservation in flight");
        set_view(e, deleted ? NULL : obj);
        kr->skipped++;
        return EXT_PENDING_SKIP;
    }
    if (!e || !marked(e)) return EXT_PENDING_APPLY;
    ext_pending_verdict v = EXT_PENDING_APPLY;
    if (expired(p, e, now_ns())) {
        kr->expired++;
        v = EXT_PENDING_EXPIRED;
    } else if (!deleted && !(e->rv && rv && !strcmp(rv, e->rv))) {
        /* older than ours (the stream is ordered; our version has not come yet) */
        if (ours && ours_n) snprintf(ours, ours_n, "%s", e->rv ? e->rv : "deletion");
        set_view(e, obj);
        kr->skipped++;
        return EXT_PENDING_SKIP;
    }
    clear_mark(kr, e);
    gc(p, e);
    return v;
}

ext_pending_verdict ext_pending_event_locked(ext_pending *p, const char *kind, const json_t *obj, bool deleted,
                                             char *ours, size_t ours_n) {
    return decide(p, kind, obj, deleted, ours, ours_n);
}

ext_pending_verdict ext_pending_listed_locked(ext_pending *p, const char *kind, const json_t *obj) {
    /* as an event: our version clears the mark, another is kept out (the list may
     * predate our write) and becomes the view */
    return decide(p, kind, obj, false, NULL, 0);
}

ext_pending_verdict ext_pending_unlisted_locked(ext_pending *p, const char *kind, const char *ns, const char *name) {
    kind_rec *kr = kind_of(p, kind, false);
    if (!kr) return EXT_PENDING_APPLY;
    if (kr->inflight) journal(p, kind, ns, name, NULL, NULL, true, false);
    entry *e = find(p, kind, ns, name, false);
    if (e && e->held) return EXT_PENDING_SKIP;   /* the list may predate it: the hold stays as it is */
    if (!e || !marked(e)) return EXT_PENDING_APPLY;
    if (expired(p, e, now_ns())) {
        kr->expired++;
        clear_mark(kr, e);
        gc(p, e);
        return EXT_PENDING_EXPIRED;
    }
    set_view(e, NULL);   /* the list may predate the create: ours stays */
    return EXT_PENDING_SKIP;
}

size_t ext_pending_expire_locked(ext_pending *p, const char *kind,
                                 void (*fn)(void *arg, const char *ns, const char *name, bool has_view,
                                            const json_t *view),
                                 void *arg) {
    kind_rec *kr = kind_of(p, kind, false);
    if (!kr || !kr->marks) return 0;
    int64_t now = now_ns();
    VEC(entry *) due = {0};
    uint64_t k, v;
    for (size_t i = 0; hmap_next(&p->map, &i, &k, &v);)
        for (entry *e = (entry *)(uintptr_t)v; e; e = e->next)
            if (marked(e) && !e->held && !strcmp(e->kind, kind) && expired(p, e, now)) VEC_PUSH(due, e);
    for (size_t i = 0; i < due.n; i++) {
        entry *e = due.v[i];
        if (fn) fn(arg, e->ns, e->name, e->has_view, e->view);
        kr->expired++;
        clear_mark(kr, e);
        gc(p, e);
    }
    free(due.v);
    return due.n;
}

void ext_pending_stats_of(ext_pending *p, const char *kind, ext_pending_stats *out) {
    *out = (ext_pending_stats){0};
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->kinds.n; i++) {
        const kind_rec *kr = &p->kinds.v[i];
        if (kind && strcmp(kr->kind, kind)) continue;
        out->marks += kr->marks;
        out->skipped += kr->skipped;
        out->expired += kr->expired;
        out->seen_first += kr->seen_first;
        out->holds += kr->holds;
        out->released += kr->released;
    }
    pthread_mutex_unlock(&p->mu);
}
