/* watch.c — list+watch of each DRA kind into the store (watch.h). One thread per
 * kind: the initial state (a streaming list, else a paged list), then watch until
 * the stream ends, fails or needs a relist. The changes of a chunk are collected,
 * then decided and applied under the pending-writes table's lock when bind mode
 * shares one (pending.h), as one snapshot. A relist is decoded as its pages (or
 * initial events) come and published as one snapshot after the last (dra_relist), so
 * it never holds more than a page's JSON; only the kind bind mode writes, with a
 * pending table, has its items held and decided at the end as one. */
#include "extender/watch.h"

#include "base/base.h"
#include "base/clock.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "extender/metrics.h"
#include "extender/objcache.h"
#include "extender/pending.h"
#include "extender/requeue.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct kind_def {
    const char *kind, *api_version, *path;
    bool podgroup;               /* watched only with ext_watch_opts.podgroups */
    /* bind mode writes objects of this kind (bind.c): with a pending-writes table its
     * relists are decided against the table as one, after the last item, so their
     * items are held until then; every other kind's relist is decoded item by item
     * as it comes (dra_relist), holding no more than a page's JSON */
    bool written;
} kind_def;

static const kind_def KINDS[] = {
    {"DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses", false, false},
    {"ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices", false, false},
    {"ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims", false, true},
    {"Node", "v1", "/api/v1/nodes", false, false},
    {"DeviceTaintRule", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/devicetaintrules", false, false},
    /* KEP-4671/5832 PodGroups with KEP-5729 resourceClaims: scheduling.k8s.io/v1alpha2
     * since 1.36 (1.35's v1alpha1 had PodGroups only inside Workloads, without claims) */
    {"PodGroup", "scheduling.k8s.io/v1alpha2", "/apis/scheduling.k8s.io/v1alpha2/podgroups", true, false},
};
enum { NKINDS = sizeof KINDS / sizeof KINDS[0] };

/* Where a collected change came from, for the pending-writes table. */
typedef struct change_src {
    const json_t *obj;           /* the event's object (a DELETED event: its last state); NULL: a relist's deletion */
    bool list;                   /* a relist's item or deletion, not a watch event */
} change_src;

typedef struct kind_state {
    const kind_def *def;
    struct ext_watch *w;
    pthread_t th;
    bool enabled;                /* not watched: no thread, counts as listed */
    pthread_mutex_t mu;          /* guards rv and last_error for the status page */
    char *rv;
    char last_error[1024];       /* the latest failure, "" once healthy again */
    _Atomic bool listed;
    _Atomic bool served;
    _Atomic bool watch_list;     /* the initial state comes as a streaming list */
    _Atomic int64_t failing_since_ns;   /* 0 while healthy */
    _Atomic uint64_t events, relists, errors, skipped;
    /* the watch stream being parsed */
    strbuf line;
    bool relist;                 /* an ERROR 410 event asked for a relist */
    bool ignored;                /* a plain BOOKMARK before the initial events ended: sendInitialEvents ignored */
    json_t *initial;             /* streaming list, held: "ns/name" → object until the end bookmark */
    dra_relist *rl;              /* streaming list, not held: the objects decoded so far */
    VEC(json_t *) rl_objs;       /* initial objects not yet given to rl (a batch decodes on two threads) */
    size_t rl_bytes;             /* the text of their events */
    VEC(json_t *) ups;
    VEC(dra_change) changes;
    VEC(change_src) srcs;        /* one per change */
    char *chunk_rv;              /* the latest resourceVersion of the chunk, recorded once flushed */
} kind_state;

struct ext_watch {
    ext_kube *k;
    dra_store *st;
    ext_watch_opts o;
    _Atomic bool stop;
    kind_state kinds[NKINDS];
};

static int64_t mono_ns(void) { return (int64_t)monotonic_ns(); }

static void wlog(const ext_watch *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wlog(const ext_watch *w, const char *fmt, ...) {
    if (w->o.quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "watch: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A log line at -v only. */
static void vlog(const ext_watch *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vlog(const ext_watch *w, const char *fmt, ...) {
    if (w->o.quiet || !w->o.verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "watch: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void set_rv(kind_state *ks, const char *rv) {
    if (!rv || !*rv) return;
    pthread_mutex_lock(&ks->mu);
    free(ks->rv);
    ks->rv = xstrdup(rv);
    pthread_mutex_unlock(&ks->mu);
}

static void healthy(kind_state *ks) {
    if (!atomic_load(&ks->failing_since_ns)) return;
    atomic_store(&ks->failing_since_ns, 0);
    pthread_mutex_lock(&ks->mu);
    ks->last_error[0] = '\0';
    pthread_mutex_unlock(&ks->mu);
}

/* A failure: logged, kept for the status page, and the staleness clock starts. */
static void failing(kind_state *ks, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failing(kind_state *ks, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wlog(ks->w, "%s: %s", ks->def->kind, msg);
    pthread_mutex_lock(&ks->mu);
    snprintf(ks->last_error, sizeof ks->last_error, "%s", msg);
    pthread_mutex_unlock(&ks->mu);
    int64_t zero = 0;
    atomic_compare_exchange_strong(&ks->failing_since_ns, &zero, mono_ns());
    atomic_fetch_add(&ks->errors, 1);
}

/* An answer that is not 2xx, as "HTTP 401 Unauthorized: <the Status message>". */
static void http_error(char *out, size_t n, const ext_kube_resp *r) {
    json_t *st = r->body ? json_loadb(r->body, r->len, 0, NULL) : NULL;
    const char *reason = json_string_value(json_object_get(st, "reason")), *msg = json_string_value(json_object_get(st, "message"));
    snprintf(out, n, "HTTP %ld%s%s%s%s", r->status, reason ? " " : "", reason ? reason : "", msg ? ": " : "", msg ? msg : "");
    json_decref(st);
}

/* A watch's non-200 answer (its body is not kept): the status and its usual name. */
static const char *status_name(long status) {
    switch (status) {
    case 400: return " Bad Request";
    case 401: return " Unauthorized (no or rejected credentials)";
    case 403: return " Forbidden (RBAC)";
    case 404: return " Not Found";
    case 422: return " Unprocessable Entity";
    case 429: return " Too Many Requests";
    case 500: return " Internal Server Error";
    case 503: return " Service Unavailable";
    default: return "";
    }
}

/* Sleeps s seconds, waking early when stopped. */
static void nap(ext_watch *w, double s) {
    for (double t = 0; t < s && !atomic_load(&w->stop); t += 0.05) nanosleep(&(struct timespec){0, 50000000}, NULL);
}

/* Full jitter: uniform in [0, min(max, base·2^n)]. */
static double backoff(const ext_watch *w, int n, unsigned *seed) {
    double cap = 0.2 * (double)(1u << (n < 10 ? n : 10));
    if (cap > w->o.backoff_max_s) cap = w->o.backoff_max_s;
    return cap * ((double)rand_r(seed) / RAND_MAX);
}

/* ---- applying changes ------------------------------------------------------------------------ */

static void clear_changes(kind_state *ks) {
    for (size_t i = 0; i < ks->ups.n; i++) json_decref(ks->ups.v[i]);
    ks->ups.n = 0;
    for (size_t i = 0; i < ks->changes.n; i++) {
        free((char *)ks->changes.v[i].ns);
        free((char *)ks->changes.v[i].name);
    }
    ks->changes.n = 0;
    ks->srcs.n = 0;
}

/* A change the engine refused: an invalid object is logged (a deletion of what the
 * store never took is not news). */
static void skipped_change(void *arg, const dra_change *c, const err *why) {
    kind_state *ks = arg;
    if (!c->upsert) return;
    char buf[1400];
    wlog(ks->w, "%s: skipped: %s", ks->def->kind, err_format(why, buf, sizeof buf));
}

/* changes[0..n) as one snapshot, those the engine refuses left out (one bad object
 * costs the batch nothing). Only when the snapshot itself cannot be built (a rule
 * across objects) does it go one change at a time, keeping what can be kept. */
static void apply(kind_state *ks, const dra_change *changes, size_t n) {
    if (!n) return;
    ext_watch *w = ks->w;
    err e;
    err_clear(&e);
    if (dra_store_apply_batch(w->st, changes, n, skipped_change, ks, &e)) return;
    char buf[1400];
    wlog(w, "%s: a batch of %zu changes refused (%s): applying them one at a time", ks->def->kind, n,
         err_format(&e, buf, sizeof buf));
    for (size_t i = 0; i < n; i++) {
        err_clear(&e);
        if (!dra_store_apply(w->st, &changes[i], 1, &e) && changes[i].upsert)
            wlog(w, "%s: skipped: %s", ks->def->kind, err_format(&e, buf, sizeof buf));
    }
}

static const char *meta_of(const json_t *obj, const char *k) {
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), k));
}

/* Bind mode: what went into the store of the ResourceClaims, as JSON too, so that the
 * binder writes a claim without reading it first (objcache.h). An object the engine
 * refused is mirrored all the same: the write's precondition tells. */
static void mirror(kind_state *ks, const dra_change *changes, size_t n) {
    ext_objcache *oc = ks->w->o.claims;
    if (!oc || !ks->def->written) return;
    for (size_t i = 0; i < n; i++) {
        if (changes[i].upsert) ext_objcache_put(oc, (json_t *)changes[i].upsert);
        else ext_objcache_del(oc, changes[i].ns, changes[i].name);
    }
}

/* A pending write whose event never came: the watch's latest version wins (none:
 * the store keeps ours, which nothing the watch said contradicts). */
static void expired_view(void *arg, const char *ns, const char *name, bool has_view, const json_t *view) {
    kind_state *ks = arg;
    wlog(ks->w, "%s %s%s%s: the event of our write did not come within %.0f s: %s", ks->def->kind, ns, *ns ? "/" : "",
         name, ext_pending_timeout(ks->w->o.pending),
         !has_view ? "the watch said nothing since, ours stays" : view ? "the watch's version wins" : "the watch says it is gone");
    if (!has_view) return;
    dra_change c = {.upsert = view, .kind = ks->def->kind, .ns = *ns ? ns : NULL, .name = name, .served = true};
    err e;
    err_clear(&e);
    dra_store_apply(ks->w->st, &c, 1, &e);   /* a deletion of what is not there: nothing to do */
    mirror(ks, &c, 1);
}

/* Bind mode: after changes are in the store, the requeue is told of those that may free
 * devices (requeue.h: kube-scheduler may have parked a pod on an answer given before
 * them). Deletions carry their object in src when the event had one. */
static void tell_requeue(kind_state *ks, const dra_change *changes, size_t n) {
    ext_requeue *rq = ks->w->o.requeue;
    if (!rq) return;
    for (size_t i = 0; i < n; i++)
        if (ext_requeue_frees(rq, ks->def->kind, changes[i].upsert, changes[i].ns, changes[i].name)) {
            char why[96];
            snprintf(why, sizeof why, "%s %s", ks->def->kind, changes[i].upsert ? "changed" : "deleted");
            ext_requeue_changed(rq, why);
            return;
        }
}

/* The collected changes into the store, the caller holding the pending table's lock
 * (when there is one): marks past their timeout go first, then every change the table
 * does not hold back as older than our own write. */
static void flush_locked(kind_state *ks) {
    ext_watch *w = ks->w;
    ext_pending *p = w->o.pending;
    if (!p) {
        apply(ks, ks->changes.v, ks->changes.n);
        mirror(ks, ks->changes.v, ks->changes.n);
        tell_requeue(ks, ks->changes.v, ks->changes.n);
        clear_changes(ks);
        return;
    }
    ext_pending_expire_locked(p, ks->def->kind, expired_view, ks);
    if (!ks->changes.n) return;
    dra_change *kept = xmalloc(ks->changes.n * sizeof *kept);
    size_t nk = 0;
    uint64_t skipped = 0;
    for (size_t i = 0; i < ks->changes.n; i++) {
        const dra_change *c = &ks->changes.v[i];
        const change_src *src = &ks->srcs.v[i];
        char ours[128] = "";
        ext_pending_verdict v;
        if (src->list && c->upsert) v = ext_pending_listed_locked(p, ks->def->kind, c->upsert);
        else if (src->list) v = ext_pending_unlisted_locked(p, ks->def->kind, c->ns ? c->ns : "", c->name);
        else if (src->obj) v = ext_pending_event_locked(p, ks->def->kind, src->obj, !c->upsert, ours, sizeof ours);
        else v = EXT_PENDING_APPLY;
        const json_t *o = c->upsert ? c->upsert : src->obj;
        const char *ns = c->upsert ? meta_of(o, "namespace") : c->ns, *name = c->upsert ? meta_of(o, "name") : c->name;
        if (v == EXT_PENDING_SKIP) {
            skipped++;
            if (src->list)
                vlog(w, "%s %s%s%s: relist: kept our write over the listed version %s (the list may predate it)",
                     ks->def->kind, ns ? ns : "", ns ? "/" : "", name ? name : "",
                     c->upsert ? meta_of(o, "resourceVersion") ?: "?" : "(absent)");
            else
                vlog(w, "%s %s%s%s: skipped resourceVersion %s: older than our write (%s)", ks->def->kind, ns ? ns : "",
                     ns ? "/" : "", name ? name : "", meta_of(o, "resourceVersion") ?: "?", ours);
            continue;
        }
        if (v == EXT_PENDING_EXPIRED)
            wlog(w, "%s %s%s%s: the event of our write did not come within %.0f s: the watch's version wins",
                 ks->def->kind, ns ? ns : "", ns ? "/" : "", name ? name : "", ext_pending_timeout(p));
        kept[nk++] = *c;
    }
    if (skipped) {
        atomic_fetch_add(&ks->skipped, skipped);
    }
    apply(ks, kept, nk);
    mirror(ks, kept, nk);
    tell_requeue(ks, kept, nk);
    free(kept);
    clear_changes(ks);
}

static void flush(kind_state *ks) {
    ext_pending *p = ks->w->o.pending;
    if (p) ext_pending_lock(p);
    flush_locked(ks);
    if (p) ext_pending_unlock(p);
}

/* List items come without kind and apiVersion: the kind's, set here. */
static void set_kind(const kind_state *ks, json_t *obj) {
    if (!json_object_get(obj, "kind")) json_object_set_new(obj, "kind", json_string(ks->def->kind));
    if (!json_object_get(obj, "apiVersion")) json_object_set_new(obj, "apiVersion", json_string(ks->def->api_version));
}

/* obj: the object to upsert, as the API server served it (its resourceVersion tells
 * the store whether it holds it already: dra_change.served). */
static void add_upsert(kind_state *ks, json_t *obj, bool list) {
    set_kind(ks, obj);
    json_incref(obj);
    VEC_PUSH(ks->ups, obj);
    VEC_PUSH(ks->changes, ((dra_change){.upsert = obj, .served = true}));
    VEC_PUSH(ks->srcs, ((change_src){.obj = obj, .list = list}));
}

/* obj: a DELETED event's object, NULL for a relist's deletion. */
static void add_delete(kind_state *ks, const char *ns, const char *name, json_t *obj) {
    if (obj) VEC_PUSH(ks->ups, json_incref(obj));
    VEC_PUSH(ks->changes, ((dra_change){.kind = ks->def->kind, .ns = ns ? xstrdup(ns) : NULL, .name = xstrdup(name)}));
    VEC_PUSH(ks->srcs, ((change_src){.obj = obj, .list = !obj}));
}

static void obj_key(const json_t *obj, char *key, size_t n) {
    const json_t *m = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace")), *name = json_string_value(json_object_get(m, "name"));
    snprintf(key, n, "%s/%s", ns ? ns : "", name ? name : "");
}

/* The kind's whole state, as a relist gives it: `items` upserted and every object of
 * the kind the store has beyond them deleted, in one snapshot. */
static void replace_all(kind_state *ks, json_t *items) {
    ext_watch *w = ks->w;
    /* the store's keys, the items and what the pending table keeps: one decision */
    if (w->o.pending) ext_pending_lock(w->o.pending);
    dra_snapshot *s = dra_store_acquire(w->st);
    json_t *keys = s ? dra_snapshot_keys(s, ks->def->kind) : json_array();
    dra_snapshot_release(s);
    json_t *seen = json_object();
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        if (!json_string_value(json_object_get(json_object_get(it, "metadata"), "name"))) continue;
        char key[600];
        obj_key(it, key, sizeof key);
        json_object_set_new(seen, key, json_true());
        add_upsert(ks, it, true);
    }
    for (size_t i = 0; i < json_array_size(keys); i++) {
        const char *ns = json_string_value(json_array_get(json_array_get(keys, i), 0));
        const char *name = json_string_value(json_array_get(json_array_get(keys, i), 1));
        char key[600];
        snprintf(key, sizeof key, "%s/%s", ns, name);
        if (!json_object_get(seen, key)) add_delete(ks, *ns ? ns : NULL, name, NULL);
    }
    json_decref(seen);
    json_decref(keys);
    flush_locked(ks);
    if (w->o.pending) ext_pending_unlock(w->o.pending);
}

/* A list's objects (a LIST page's items, a streaming list's initial events) are given
 * to the relist in batches (dra_relist_batch_full: 64 to 256, by their text's size),
 * so that a batch is decoded on two threads while the trees held stay a few MiB. */

/* Whether this kind's relists are held whole (kind_def.written). */
static bool held(const kind_state *ks) { return ks->w->o.pending && ks->def->written; }

/* Objects of a relist into rl; one the engine refuses is logged, the store's stays. */
static void relist_put(kind_state *ks, dra_relist *rl, json_t *const *objs, size_t n) {
    for (size_t i = 0; i < n; i++) set_kind(ks, objs[i]);
    dra_relist_put(rl, (const json_t *const *)objs, n, skipped_change, ks);
}

/* The streaming list's initial objects collected so far into ks->rl. */
static void relist_put_collected(kind_state *ks) {
    if (!ks->rl_objs.n) return;
    relist_put(ks, ks->rl, ks->rl_objs.v, ks->rl_objs.n);
    for (size_t i = 0; i < ks->rl_objs.n; i++) json_decref(ks->rl_objs.v[i]);
    ks->rl_objs.n = 0;
    ks->rl_bytes = 0;
}

static void relist_abort(kind_state *ks) {
    for (size_t i = 0; i < ks->rl_objs.n; i++) json_decref(ks->rl_objs.v[i]);
    ks->rl_objs.n = 0;
    ks->rl_bytes = 0;
    dra_relist_abort(ks->rl);
    ks->rl = NULL;
}

/* The relist's objects become the kind's (rl freed); false (logged) when the snapshot
 * cannot be built. */
static bool relist_commit(kind_state *ks, dra_relist *rl) {
    err e;
    err_clear(&e);
    if (dra_relist_commit(rl, &e)) return true;
    char buf[1400];
    failing(ks, "relist: %s", err_format(&e, buf, sizeof buf));
    return false;
}

/* The kind counts as listed: readiness, relist counter, health. */
static void listed(kind_state *ks) {
    atomic_store(&ks->served, true);
    atomic_fetch_add(&ks->relists, 1);
    atomic_store(&ks->listed, true);
    healthy(ks);
}

/* ---- list ------------------------------------------------------------------------------------- */

typedef enum { L_OK, L_GONE, L_NOT_SERVED, L_FAIL } list_rc;

/* The objects of batch (freed) given to the relist, or kept in items (no relist). */
static void list_items(kind_state *ks, dra_relist *rl, json_t *items, json_t **batch, size_t n) {
    size_t no = 0;
    for (size_t i = 0; i < n; i++) {
        if (items) json_array_append(items, batch[i]);
        if (json_is_object(batch[i])) batch[no++] = batch[i];
        else json_decref(batch[i]);
    }
    if (rl) relist_put(ks, rl, batch, no);
    for (size_t i = 0; i < no; i++) json_decref(batch[i]);
}

/* The next item of a LIST page: from l (parsed now, *len its text's length), or, where
 * the page could not be read item by item, from its whole tree (*len 0, *i the
 * position). NULL past the last, or at one that does not parse (*failed). */
static json_t *page_next(dra_json_list *l, const json_t *page, size_t *i, size_t *len, bool *failed) {
    if (l) return dra_json_list_next(l, len, failed);
    *len = 0;
    *failed = false;
    return *i < json_array_size(page) ? json_incref(json_array_get(page, (*i)++)) : NULL;
}

/* One LIST page's items taken (list_items); the page without its items (its metadata:
 * continue, resourceVersion), or NULL when it is not JSON. The items are parsed a
 * batch at a time where the page allows it (dra_json_list_open): a page's trees are
 * ~15 times its text, and a page of 500 MIG-carved slices is ~11 MB of text. */
static json_t *list_page(kind_state *ks, dra_relist *rl, json_t *items, const char *text, size_t len) {
    json_t *batch[DRA_RELIST_BATCH_MAX], *doc, *t;
    size_t n = 0, bytes = 0, item_len, at = 0;
    bool failed = false;
    dra_json_list *l = dra_json_list_open(text, len, &doc);
    if (!l && !(doc = dra_json_parse(text, len, 0, NULL))) return NULL;
    const json_t *page = json_object_get(doc, "items");   /* l: empty */
    while ((t = page_next(l, page, &at, &item_len, &failed))) {
        batch[n++] = t;
        bytes += item_len;
        if (dra_relist_batch_full(n, bytes)) list_items(ks, rl, items, batch, n), n = 0, bytes = 0;
    }
    dra_json_list_close(l);
    if (failed) {
        /* what was given stays given: the failed list is aborted by the caller */
        for (size_t i = 0; i < n; i++) json_decref(batch[i]);
        json_decref(doc);
        return NULL;
    }
    list_items(ks, rl, items, batch, n);
    return doc;
}

static list_rc list_all(kind_state *ks, long *retry_after) {
    ext_watch *w = ks->w;
    char *cont = NULL;
    dra_relist *rl = held(ks) ? NULL : dra_store_relist_begin(w->st, ks->def->kind);
    json_t *items = rl ? NULL : json_array();
    char *rv = NULL;
    list_rc rc = L_OK;
    *retry_after = -1;
    for (;;) {
        char path[2048];
        int n = snprintf(path, sizeof path, "%s?limit=%ld", ks->def->path, w->o.page_limit);
        if (cont) {
            char *esc = NULL;
            /* continue tokens are base64: '+', '/', '=' need escaping in a query */
            size_t cl = strlen(cont);
            esc = xmalloc(cl * 3 + 1);
            size_t o = 0;
            for (size_t i = 0; i < cl; i++) {
                unsigned char c = (unsigned char)cont[i];
                if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                    c == '.' || c == '~')
                    esc[o++] = (char)c;
                else
                    o += (size_t)sprintf(esc + o, "%%%02X", c);
            }
            esc[o] = '\0';
            snprintf(path + n, sizeof path - (size_t)n, "&continue=%s", esc);
            free(esc);
        }
        ext_kube_resp r;
        err e;
        err_clear(&e);
        if (!ext_kube_request(w->k, "GET", path, NULL, NULL, &r, &e)) {
            failing(ks, "list: %s", e.msg);
            rc = L_FAIL;
            break;
        }
        *retry_after = r.retry_after_s;
        if (r.status == 404) rc = L_NOT_SERVED;
        else if (r.status == 410) rc = L_GONE;
        else if (r.status != 200) {
            char why[300];
            http_error(why, sizeof why, &r);
            failing(ks, "list: %s", why);
            rc = L_FAIL;
        }
        if (rc != L_OK) {
            free(r.body);
            break;
        }
        json_t *doc = list_page(ks, rl, items, r.body, r.len);
        free(r.body);
        if (!doc) {
            failing(ks, "list: the answer is not JSON");
            rc = L_FAIL;
            break;
        }
        const json_t *meta = json_object_get(doc, "metadata");
        const char *c = json_string_value(json_object_get(meta, "continue"));
        free(cont);
        cont = c && *c ? xstrdup(c) : NULL;
        if (!cont) {
            const char *v = json_string_value(json_object_get(meta, "resourceVersion"));
            rv = v ? xstrdup(v) : NULL;
        }
        json_decref(doc);
        if (!cont || atomic_load(&w->stop)) break;
    }
    free(cont);
    if (rc == L_OK && !atomic_load(&w->stop)) {
        if (!rl) replace_all(ks, items);
        else if (!relist_commit(ks, rl)) rc = L_FAIL;
        rl = NULL;
        if (rc == L_OK) set_rv(ks, rv);
    }
    dra_relist_abort(rl);
    free(rv);
    json_decref(items);
    return rc;
}

/* ---- watch ------------------------------------------------------------------------------------- */

/* The BOOKMARK that ends a streaming list's initial events (KEP-3157). */
static bool initial_events_end(const json_t *meta) {
    const char *v = json_string_value(json_object_get(json_object_get(meta, "annotations"), "k8s.io/initial-events-end"));
    return v && !strcmp(v, "true");
}

static void on_event(kind_state *ks, const char *line, size_t n) {
    json_t *ev = dra_json_parse(line, n, 0, NULL);
    if (!ev) {
        wlog(ks->w, "%s: watch: an event that is not JSON (%zu bytes)", ks->def->kind, n);
        json_decref(ev);
        return;
    }
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    const json_t *meta = json_object_get(obj, "metadata");
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!type || !json_is_object(obj)) {
    } else if (!strcmp(type, "ERROR")) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        if (code == 410) ks->relist = true;
        else wlog(ks->w, "%s: watch: ERROR %lld %s", ks->def->kind, (long long)code,
                  json_string_value(json_object_get(obj, "message")) ?: "");
        rv = NULL;
    } else if (!strcmp(type, "BOOKMARK")) {
        /* bookmarks come only after the initial events: a server sending one before
         * their end bookmark treats sendInitialEvents as a plain watch */
        bool initial = ks->initial || ks->rl;
        if (initial && !initial_events_end(meta)) ks->ignored = true;
        if (ks->rl && initial_events_end(meta)) {
            /* the initial state is complete: the kind's objects at once */
            relist_put_collected(ks);
            dra_relist *rl = ks->rl;
            ks->rl = NULL;
            if (relist_commit(ks, rl)) {
                set_rv(ks, rv);
                listed(ks);
            } else {
                ks->relist = true;   /* the stream is void: list again */
            }
        } else if (ks->initial && initial_events_end(meta)) {
            /* the initial state is complete: it replaces the kind's objects at once */
            json_t *items = json_array();
            const char *k;
            json_t *v;
            json_object_foreach(ks->initial, k, v) json_array_append(items, v);
            json_decref(ks->initial);
            ks->initial = NULL;
            replace_all(ks, items);
            json_decref(items);
            set_rv(ks, rv);
            listed(ks);
        }
    } else if (ks->rl && name) {
        /* initial events: decoded as they come, applied only when they are all there */
        if (!strcmp(type, "DELETED")) {
            relist_put_collected(ks);   /* in order: what came before it first */
            dra_relist_drop(ks->rl, json_string_value(json_object_get(meta, "namespace")), name);
        } else {
            VEC_PUSH(ks->rl_objs, json_incref(obj));
            ks->rl_bytes += n;
            if (dra_relist_batch_full(ks->rl_objs.n, ks->rl_bytes)) relist_put_collected(ks);
        }
        atomic_fetch_add(&ks->events, 1);
    } else if (ks->initial && name) {
        /* initial events: collected, applied only when they are all there */
        char key[600];
        obj_key(obj, key, sizeof key);
        if (!strcmp(type, "DELETED")) json_object_del(ks->initial, key);
        else json_object_set(ks->initial, key, obj);
        atomic_fetch_add(&ks->events, 1);
    } else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
        add_upsert(ks, obj, false);
        atomic_fetch_add(&ks->events, 1);
    } else if (!strcmp(type, "DELETED")) {
        if (name) add_delete(ks, json_string_value(json_object_get(meta, "namespace")), name, obj);
        atomic_fetch_add(&ks->events, 1);
    }
    if (rv && *rv) {
        /* recorded once the chunk is in the store (on_chunk) */
        free(ks->chunk_rv);
        ks->chunk_rv = xstrdup(rv);
    }
    json_decref(ev);
}

/* Each chunk: its complete lines are events; they become one snapshot. */
static bool on_chunk(void *arg, const char *data, size_t n) {
    kind_state *ks = arg;
    /* initial events do not make a kind healthy: only their end does */
    if (!ks->initial && !ks->rl) healthy(ks);
    sbuf_add(&ks->line, data, n);
    size_t start = 0;
    for (size_t i = 0; i < ks->line.len; i++)
        if (ks->line.buf[i] == '\n') {
            /* after an ERROR 410 the stream is void: nothing after it is applied */
            if (i > start && !ks->relist) on_event(ks, ks->line.buf + start, i - start);
            start = i + 1;
        }
    if (start) {
        memmove(ks->line.buf, ks->line.buf + start, ks->line.len - start);
        ks->line.len -= start;
    }
    flush(ks);
    if (ks->chunk_rv) {
        set_rv(ks, ks->chunk_rv);
        free(ks->chunk_rv);
        ks->chunk_rv = NULL;
    }
    return !ks->relist && !ks->ignored && !atomic_load(&ks->w->stop);
}

/* A kind the server does not serve (404): nothing to wait for; looked at again later. */
static void not_served(kind_state *ks) {
    if (atomic_load(&ks->served)) wlog(ks->w, "%s: not served by the API server", ks->def->kind);
    atomic_store(&ks->served, false);
    atomic_store(&ks->listed, true);
    healthy(ks);
    nap(ks->w, 300);
}

static void *run_kind(void *arg) {
    kind_state *ks = arg;
    ext_watch *w = ks->w;
    unsigned seed = (unsigned)mono_ns() ^ (unsigned)(uintptr_t)ks;
    int fails = 0, incomplete = 0;
    bool need_list = true;
    while (!atomic_load(&w->stop)) {
        long retry_after = -1;
        /* the initial state: a streaming list opens the watch itself (below), a paged
         * list comes first */
        bool stream_list = need_list && atomic_load(&ks->watch_list);
        if (need_list && !stream_list) {
            list_rc rc = list_all(ks, &retry_after);
            if (rc == L_NOT_SERVED) {
                not_served(ks);
                continue;
            }
            if (rc != L_OK) {
                if (rc == L_GONE) failing(ks, "list: HTTP 410 (an expired continue token): listing again");
                nap(w, retry_after >= 0 ? (double)retry_after : backoff(w, fails++, &seed));
                continue;
            }
            listed(ks);
            fails = 0;
            need_list = false;
        }
        char path[1024];
        if (stream_list) {
            /* sendInitialEvents: the state as ADDED events, then a BOOKMARK annotated
             * k8s.io/initial-events-end; no resourceVersion: the most recent state */
            snprintf(path, sizeof path,
                     "%s?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
                     "&timeoutSeconds=%ld",
                     ks->def->path, w->o.watch_timeout_s);
            if (held(ks)) ks->initial = json_object();
            else ks->rl = dra_store_relist_begin(w->st, ks->def->kind);
        } else {
            pthread_mutex_lock(&ks->mu);
            snprintf(path, sizeof path, "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=%ld&resourceVersion=%s",
                     ks->def->path, w->o.watch_timeout_s, ks->rv ? ks->rv : "");
            pthread_mutex_unlock(&ks->mu);
        }
        ks->line.len = 0;
        ks->relist = false;
        ks->ignored = false;
        long status = 0;
        err e;
        err_clear(&e);
        bool ok = ext_kube_stream(w->k, path, on_chunk, ks, &w->stop, w->o.idle_s, &status, &retry_after, &e);
        clear_changes(ks);
        bool unfinished = ks->initial || ks->rl;   /* a streaming list without its end */
        json_decref(ks->initial);
        ks->initial = NULL;
        relist_abort(ks);
        if (atomic_load(&w->stop)) break;
        if (stream_list && !unfinished) need_list = false, incomplete = 0;
        if (ks->relist || status == 410) {
            wlog(w, "%s: resourceVersion too old: relisting", ks->def->kind);
            need_list = true;
            continue;
        }
        if (stream_list && ks->ignored) {
            wlog(w, "%s: the server ignores sendInitialEvents: paged lists from now on", ks->def->kind);
            atomic_store(&ks->watch_list, false);
            continue;
        }
        if (stream_list && ok && status == 404) {
            not_served(ks);
            continue;
        }
        if (stream_list && ok && status / 100 == 4 && status != 401 && status != 403 && status != 429) {
            /* a server without the WatchList feature refuses sendInitialEvents (422) */
            wlog(w, "%s: the server refuses streaming lists (HTTP %ld): paged lists from now on", ks->def->kind, status);
            atomic_store(&ks->watch_list, false);
            continue;
        }
        if (ok && status == 200) {
            if (!unfinished) {
                healthy(ks);
                fails = 0;
                continue;   /* ended (timeout, cut, stall): reconnect from the last resourceVersion */
            }
            /* the stream ended before the initial events did; a server that ignores
             * sendInitialEvents never ends them: after a few tries, paged lists */
            failing(ks, "watch: the stream ended before its initial events did");
            if (++incomplete >= 3) {
                wlog(w, "%s: no initial-events-end bookmark after %d streaming lists: paged lists from now on",
                     ks->def->kind, incomplete);
                atomic_store(&ks->watch_list, false);
                continue;
            }
        } else if (!ok) {
            failing(ks, "watch: %s", e.msg);
        } else {
            failing(ks, "watch: HTTP %ld%s", status, status_name(status));
        }
        nap(w, retry_after >= 0 ? (double)retry_after : backoff(w, fails++, &seed));
    }
    return NULL;
}

ext_watch *ext_watch_start(ext_kube *k, dra_store *st, const ext_watch_opts *o) {
    ext_watch *w = xcalloc(1, sizeof *w);
    w->k = k;
    w->st = st;
    w->o = *o;
    if (w->o.max_staleness_s <= 0) w->o.max_staleness_s = 60;
    if (w->o.page_limit <= 0) w->o.page_limit = 500;
    if (w->o.idle_s <= 0) w->o.idle_s = 90;
    if (w->o.watch_timeout_s <= 0) w->o.watch_timeout_s = 300;
    if (w->o.backoff_max_s <= 0) w->o.backoff_max_s = 30;
    for (int i = 0; i < NKINDS; i++) {
        kind_state *ks = &w->kinds[i];
        ks->def = &KINDS[i];
        ks->w = w;
        ks->enabled = !KINDS[i].podgroup || w->o.podgroups;
        atomic_init(&ks->served, ks->enabled);
        atomic_init(&ks->listed, !ks->enabled);
        atomic_init(&ks->watch_list, !w->o.no_watch_list);
        pthread_mutex_init(&ks->mu, NULL);
        sbuf_init(&ks->line);
    }
    for (int i = 0; i < NKINDS; i++)
        if (w->kinds[i].enabled) pthread_create(&w->kinds[i].th, NULL, run_kind, &w->kinds[i]);
    return w;
}

void ext_watch_stop(ext_watch *w) {
    if (!w) return;
    atomic_store(&w->stop, true);
    for (int i = 0; i < NKINDS; i++) {
        kind_state *ks = &w->kinds[i];
        if (ks->enabled) pthread_join(ks->th, NULL);
        clear_changes(ks);
        relist_abort(ks);
        free(ks->rl_objs.v);
        free(ks->ups.v);
        free(ks->changes.v);
        free(ks->srcs.v);
        free(ks->chunk_rv);
        sbuf_free(&ks->line);
        free(ks->rv);
        pthread_mutex_destroy(&ks->mu);
    }
    free(w);
}

bool ext_watch_ready(ext_watch *w) {
    int64_t now = mono_ns(), limit = (int64_t)(w->o.max_staleness_s * 1e9);
    for (int i = 0; i < NKINDS; i++) {
        const kind_state *ks = &w->kinds[i];
        if (!atomic_load(&ks->listed)) return false;
        int64_t since = atomic_load(&ks->failing_since_ns);
        if (since && now - since > limit) return false;
    }
    return true;
}

json_t *ext_watch_status_json(ext_watch *w) {
    json_t *o = json_object();
    int64_t now = mono_ns();
    for (int i = 0; i < NKINDS; i++) {
        kind_state *ks = &w->kinds[i];
        if (!ks->enabled) {
            json_object_set_new(o, ks->def->kind, json_pack("{s:b}", "watched", 0));
            continue;
        }
        pthread_mutex_lock(&ks->mu);
        int64_t since = atomic_load(&ks->failing_since_ns);
        json_t *k = json_pack("{s:s?, s:b, s:b, s:s, s:I, s:I, s:I, s:f}", "resourceVersion", ks->rv, "listed",
                              atomic_load(&ks->listed), "served", atomic_load(&ks->served), "initialState",
                              atomic_load(&ks->watch_list) ? "streaming list" : "paged list", "events",
                              (json_int_t)atomic_load(&ks->events), "relists", (json_int_t)atomic_load(&ks->relists),
                              "errors", (json_int_t)atomic_load(&ks->errors), "failingForSeconds",
                              since ? (double)(now - since) / 1e9 : 0.0);
        if (ks->last_error[0]) json_object_set_new(k, "lastError", json_string(ks->last_error));
        pthread_mutex_unlock(&ks->mu);
        if (w->o.pending) {
            ext_pending_stats ps;
            ext_pending_stats_of(w->o.pending, ks->def->kind, &ps);
            json_object_set_new(k, "pendingWrites", json_integer((json_int_t)ps.marks));
            json_object_set_new(k, "staleSkipped", json_integer((json_int_t)atomic_load(&ks->skipped)));
            json_object_set_new(k, "pendingExpired", json_integer((json_int_t)ps.expired));
            json_object_set_new(k, "writesSeenFirst", json_integer((json_int_t)ps.seen_first));
        }
        json_object_set_new(o, ks->def->kind, k);
    }
    return o;
}

uint64_t ext_watch_events(ext_watch *w) {
    uint64_t n = 0;
    for (int i = 0; i < NKINDS; i++) n += atomic_load(&w->kinds[i].events);
    return n;
}

uint64_t ext_watch_stale_skipped(ext_watch *w) {
    uint64_t n = 0;
    for (int i = 0; i < NKINDS; i++) n += atomic_load(&w->kinds[i].skipped);
    return n;
}

uint64_t ext_watch_relists(ext_watch *w) {
    uint64_t n = 0;
    for (int i = 0; i < NKINDS; i++) n += atomic_load(&w->kinds[i].relists);
    return n;
}

bool ext_watch_feed(dra_store *st, const char *kind, const char *const *chunks, const size_t *lens, size_t nchunks,
                    bool *relist) {
    const kind_def *def = NULL;
    for (int i = 0; i < NKINDS && !def; i++)
        if (!strcmp(KINDS[i].kind, kind)) def = &KINDS[i];
    if (!def) return false;
    ext_watch w = {.st = st, .o = {.quiet = true}};
    kind_state ks = {.def = def, .w = &w};
    pthread_mutex_init(&ks.mu, NULL);
    sbuf_init(&ks.line);
    for (size_t i = 0; i < nchunks; i++)
        if (!on_chunk(&ks, chunks[i], lens[i])) break;
    *relist = ks.relist;
    clear_changes(&ks);
    free(ks.ups.v);
    free(ks.changes.v);
    free(ks.srcs.v);
    free(ks.chunk_rv);
    sbuf_free(&ks.line);
    free(ks.rv);
    pthread_mutex_destroy(&ks.mu);
    return true;
}
