/* bind.c — bind mode (bind.h): allocate on the chosen node, write the claims'
 * status with resourceVersion preconditions (creating the extended-resource claim
 * first when the pod needs one), create the binding, roll back on failure. Each
 * claim written goes into the store at once: the allocation is real from then on.
 * Every write is announced to the pending-writes table before it is sent and handed
 * to it with the server's answer (pending.h), so that the watch cannot put an older
 * version of the claim back afterwards.
 *
 * Concurrency. Only the decision is serialized: under b->mu a bind takes the current
 * snapshot, decides the allocation and holds each claim it allocates in the pending
 * table (ext_pending_hold: the claim as it is about to be written goes into the store
 * at once), then lets go. The next bind's snapshot shows those devices in use, so two
 * binds never pick the same device; the API requests — a few round trips of ~25 ms
 * each — run outside the lock, side by side. A write that fails releases its holds
 * (the store gets the server's version back: the devices are allocatable again). The
 * claim to write comes from the watch's JSON (objcache.h) when it has it, so the
 * first write needs no GET; its resourceVersion guards it (409: read once, retry).
 * Without a pending table (tests) there is nothing to hold with, and a bind keeps the
 * lock across its requests as it always did.
 *
 * Two phases (bind.h). The decision and the holds need nothing but memory when the pod
 * was filtered and the claims are in the watch's JSON, so they run on the HTTP thread
 * as the request arrives (ext_bind_prepare) and the next pod's /filter sees them; an
 * offload thread does the writes (ext_bind_finish). The same code, run(), goes as far
 * as it may: !may_wait stops before any request or wait. Each bind with a pod UID is a
 * "flight" until it lands: a retry of that UID waits for it rather than deciding again
 * against its holds. */
#include "extender/bind.h"

#include "extender/objcache.h"
#include "extender/pending.h"
#include "extender/requeue.h"

#include "base/base.h"
#include "engine/context.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXTENDED_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
#define MAX_TRIES 3

struct ext_binder {
    ext_kube *k;
    dra_store *st;
    ext_pending *pending;        /* borrowed; NULL: writes go straight into the store */
    ext_objcache *claims;        /* borrowed; NULL: every claim is read before its write */
    pthread_mutex_t mu;          /* one decision at a time (with pending: never across a request) */
    dra_alloc_ctx *x;            /* used under mu only */
    _Atomic uint64_t binds, failures, conflicts, claim_gets;
    _Atomic uint64_t phase_ns[EXT_BIND_NPHASES];
    _Atomic uint64_t expired, retried;
    _Atomic int inflight;
    ext_objcache *pods;          /* pods /filter saw (ext_binder_saw_pod) */
    double timeout_s;            /* --bind-timeout: kube-scheduler's httpTimeout for /bind */
    struct ext_requeue *requeue; /* told when a bind gives devices back (borrowed; NULL: nobody) */
    pthread_mutex_t flmu;        /* flights and bound */
    pthread_cond_t flcv;         /* a flight landed (CLOCK_MONOTONIC, as dra_monotonic_ns) */
    struct flight *flights;      /* binds in progress that have a pod UID (few: one per bind) */
    json_t *bound;               /* pod UID → node, of the pods this process bound (at most
                                  * EXT_BIND_PODS_MAX, then afresh) */
};

static const char *const phase_names[EXT_BIND_NPHASES] = {"pod_get", "lock_wait", "decide", "claim_writes",
                                                           "binding", "rollback", "queue"};

const char *ext_bind_phase_name(ext_bind_phase p) {
    assert(p < EXT_BIND_NPHASES);
    return phase_names[p];
}

double ext_binder_phase_seconds(const ext_binder *b, ext_bind_phase p) {
    assert(p < EXT_BIND_NPHASES);
    return (double)atomic_load(&b->phase_ns[p]) / 1e9;
}

uint64_t ext_binder_claim_gets(const ext_binder *b) { return atomic_load(&b->claim_gets); }
int ext_binder_inflight(const ext_binder *b) { return atomic_load(&b->inflight); }

void ext_binder_set_claims(ext_binder *b, ext_objcache *claims) { b->claims = claims; }

void ext_binder_saw_pod(ext_binder *b, const json_t *pod) {
    const json_t *m = json_object_get(pod, "metadata");
    if (!json_string_value(json_object_get(m, "uid")) || !json_string_value(json_object_get(m, "name"))) return;
    /* pods filtered and never bound (deleted, unschedulable) would pile up: past the
     * bound, start afresh — a bind whose pod is gone reads it as before */
    if (ext_objcache_size(b->pods) >= EXT_BIND_PODS_MAX) ext_objcache_clear(b->pods);
    json_t *copy = json_deep_copy(pod);
    if (!json_string_value(json_object_get(json_object_get(copy, "metadata"), "namespace")))
        json_object_set_new(json_object_get(copy, "metadata"), "namespace", json_string("default"));
    ext_objcache_put(b->pods, copy);
    json_decref(copy);
}

/* Time since *t0 into the phase's total; *t0 moves to now. */
static void took(ext_binder *b, ext_bind_phase p, uint64_t *t0) {
    uint64_t now = dra_monotonic_ns();
    atomic_fetch_add(&b->phase_ns[p], now - *t0);
    *t0 = now;
}

ext_binder *ext_binder_new(ext_kube *k, dra_store *st, ext_pending *pending) {
    ext_binder *b = xcalloc(1, sizeof *b);
    b->k = k;
    b->st = st;
    b->pending = pending;
    pthread_mutex_init(&b->mu, NULL);
    b->x = dra_alloc_ctx_new();
    b->pods = ext_objcache_new();
    b->timeout_s = EXT_BIND_TIMEOUT_DEFAULT_S;
    pthread_mutex_init(&b->flmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->flcv, &ca);
    pthread_condattr_destroy(&ca);
    b->bound = json_object();
    return b;
}

void ext_binder_set_device_choice(ext_binder *b, dra_device_choice c) {
    pthread_mutex_lock(&b->mu);
    dra_alloc_ctx_set_device_choice(b->x, c);
    pthread_mutex_unlock(&b->mu);
}

void ext_binder_free(ext_binder *b) {
    if (!b) return;
    dra_alloc_ctx_free(b->x);
    ext_objcache_free(b->pods);
    assert(!b->flights);   /* every bind ended before the binder goes */
    json_decref(b->bound);
    pthread_cond_destroy(&b->flcv);
    pthread_mutex_destroy(&b->flmu);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

uint64_t ext_binder_binds(const ext_binder *b) { return atomic_load(&b->binds); }
uint64_t ext_binder_failures(const ext_binder *b) { return atomic_load(&b->failures); }
uint64_t ext_binder_conflicts(const ext_binder *b) { return atomic_load(&b->conflicts); }
uint64_t ext_binder_expired(const ext_binder *b) { return atomic_load(&b->expired); }
uint64_t ext_binder_retried(const ext_binder *b) { return atomic_load(&b->retried); }

void ext_binder_set_timeout(ext_binder *b, double seconds) {
    assert(seconds > 0);
    b->timeout_s = seconds;
}

void ext_binder_set_requeue(ext_binder *b, struct ext_requeue *rq) {
    b->requeue = rq;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list ap, again;
    va_start(ap, f);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    assert(n >= 0);   /* only a bad format fails, and the formats are literals */
    char *s = xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, f, again);
    va_end(again);
    return s;
}

static json_t *get_json(ext_binder *b, const char *path, long *status, char **errmsg) {
    ext_kube_resp r;
    err e;
    err_clear(&e);
    *status = 0;
    if (!ext_kube_request(b->k, "GET", path, NULL, NULL, &r, &e)) {
        *errmsg = fmt("GET %s: %s", path, e.msg);
        return NULL;
    }
    *status = r.status;
    json_t *j = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    if (!j) *errmsg = fmt("GET %s: HTTP %ld", path, r.status);
    free(r.body);
    return j;
}

/* method obj to path (content type ctype, NULL: JSON); the answer (the stored
 * object) in *out. The status, 0 when no answer came. */
static long send_json(ext_binder *b, const char *method, const char *path, const json_t *obj, const char *ctype,
                      json_t **out, char **errmsg) {
    char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    ext_kube_resp r;
    err e;
    err_clear(&e);
    bool ok = ext_kube_request(b->k, method, path, body, ctype ? ctype : "application/json", &r, &e);
    free(body);
    if (out) *out = NULL;
    if (!ok) {
        free(*errmsg);
        *errmsg = fmt("%s %s: %s", method, path, e.msg);
        return 0;
    }
    if (out) *out = r.status / 100 == 2 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    if (r.status / 100 != 2 && r.status != 409) {
        json_t *st = json_loadb(r.body, r.len, 0, NULL);
        free(*errmsg);
        *errmsg = fmt("%s %s: HTTP %ld %s", method, path, r.status,
                      json_string_value(json_object_get(st, "message")) ?: "");
        json_decref(st);
    }
    free(r.body);
    return r.status;
}

static bool has_finalizer(const json_t *claim) {
    const json_t *f = json_object_get(json_object_get(claim, "metadata"), "finalizers");
    for (size_t i = 0; i < json_array_size(f); i++)
        if (!strcmp(json_string_value(json_array_get(f, i)) ?: "", DRA_CLAIM_FINALIZER)) return true;
    return false;
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* Whether a status.reservedFor entry names the consumer `ref` ({apiGroup?, resource,
 * name, uid?}): by uid when both have one, else by resource and name. */
static bool same_consumer(const json_t *a, const json_t *ref) {
    const char *ua = jstr(a, "uid"), *ur = jstr(ref, "uid");
    if (ua && *ua && ur && *ur) return !strcmp(ua, ur);
    return !strcmp(jstr(a, "resource") ?: "", jstr(ref, "resource") ?: "") &&
           !strcmp(jstr(a, "apiGroup") ?: "", jstr(ref, "apiGroup") ?: "") &&
           !strcmp(jstr(a, "name") ?: "", jstr(ref, "name") ?: "");
}

static bool reserved_for(const json_t *claim, const json_t *ref) {
    const json_t *rf = json_object_get(json_object_get(claim, "status"), "reservedFor");
    for (size_t i = 0; i < json_array_size(rf); i++)
        if (same_consumer(json_array_get(rf, i), ref)) return true;
    return false;
}

static char *claim_path(const char *ns, const char *name) {
    return fmt("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns, name);
}

/* A claim write is about to be sent: from now the watch journals the claims' versions
 * it delivers (pending.h: its answer may come after its event). */
static void writing(ext_binder *b) {
    if (b->pending) ext_pending_begin(b->pending, "ResourceClaim");
}

/* The write brought no object back (failed, 409): nothing to mark. */
static void not_written(ext_binder *b) {
    if (b->pending) ext_pending_abandon(b->pending, "ResourceClaim");
}

/* A claim as the API server stored it goes into the store now, before the watch
 * brings it: what this process wrote counts as in use for every later /filter and
 * /bind, and older versions the watch still delivers are not applied over it. */
static void to_store(ext_binder *b, json_t *claim) {
    if (!claim) {
        not_written(b);
        return;
    }
    if (!json_object_get(claim, "kind")) json_object_set_new(claim, "kind", json_string("ResourceClaim"));
    if (!json_object_get(claim, "apiVersion")) json_object_set_new(claim, "apiVersion", json_string("resource.k8s.io/v1"));
    if (b->pending) {
        ext_pending_wrote(b->pending, b->st, claim);
        return;
    }
    err e;
    err_clear(&e);
    dra_store_apply_json(b->st, claim, &e);
}

/* One PUT of a rollback (c consumed): the stored answer goes into the store, a failure
 * leaves the watch to tell; the HTTP status (409: read again and retry). The message of
 * a failure is not kept: a rollback is best effort, the bind's own error is answered. */
static long undo_put(ext_binder *b, const char *path, json_t *c) {
    char *msg = NULL;
    json_t *stored = NULL;
    writing(b);
    long code = send_json(b, "PUT", path, c, NULL, &stored, &msg);
    free(msg);
    json_decref(c);
    if (code / 100 == 2) to_store(b, stored);
    else not_written(b);
    json_decref(stored);
    return code;
}

/* A claim we deleted is gone. */
static void gone_from_store(ext_binder *b, const char *ns, const char *name) {
    if (b->pending) {
        ext_pending_deleted(b->pending, b->st, "ResourceClaim", ns, name);
        return;
    }
    dra_change c = {.kind = "ResourceClaim", .ns = ns, .name = name};
    err e;
    err_clear(&e);
    dra_store_apply(b->st, &c, 1, &e);   /* not there (the watch was faster): nothing to do */
}

typedef struct written {
    char *ns, *name;             /* name NULL: the extended-resource claim, not created yet */
    bool created;                /* we created the claim (the extended-resource claim): roll back = delete */
    bool allocated;              /* we set status.allocation */
    json_t *ref;                 /* the reservedFor entry we added, NULL when it was there */
    bool held;                   /* held in the pending table (pending.h): released when the bind fails */
} written;

/* kind and apiVersion, which answers and list items may lack and the store needs. */
static void typed(json_t *claim) {
    if (!json_object_get(claim, "kind")) json_object_set_new(claim, "kind", json_string("ResourceClaim"));
    if (!json_object_get(claim, "apiVersion")) json_object_set_new(claim, "apiVersion", json_string("resource.k8s.io/v1"));
}

/* The answer to a write of a held claim that is not yet the allocation's (the
 * finalizer, the create): the hold goes on over it. */
static void to_hold(ext_binder *b, json_t *claim) {
    typed(claim);
    ext_pending_wrote_held(b->pending, claim);
}

static json_t *get_claim(ext_binder *b, const char *path, char **errmsg) {
    long st;
    atomic_fetch_add(&b->claim_gets, 1);
    return get_json(b, path, &st, errmsg);
}

/* One claim: finalizer, then status (allocation unless reused, the consumer `ref` in
 * reservedFor), with resourceVersion preconditions; on 409 re-read and retry. `base`
 * (consumed; NULL: read it first) is the claim to start from — the watch's version,
 * whose resourceVersion makes a stale one a 409. What the server stored goes into the
 * store (a held claim's finalizer write: into its hold). w->ns and w->name are set by
 * the caller. */
static bool write_claim(ext_binder *b, const json_t *alloc, const json_t *ref, json_t *base, written *w,
                        char **errmsg) {
    char *path = claim_path(w->ns, w->name), *spath = fmt("%s/status", path);
    bool ok = false;
    for (int t = 0; t < MAX_TRIES; t++) {
        json_t *c = base ? base : get_claim(b, path, errmsg);
        base = NULL;
        if (!c) goto out;
        json_t *status = json_object_get(c, "status");
        json_t *cur_alloc = json_object_get(status, "allocation");
        if (json_object_get(json_object_get(c, "metadata"), "deletionTimestamp")) {
            *errmsg = fmt("ResourceClaim %s/%s is being deleted", w->ns, w->name);
            json_decref(c);
            goto out;
        }
        if (alloc && cur_alloc && !json_equal(cur_alloc, alloc)) {
            /* somebody else allocated it meanwhile: our choice is stale */
            *errmsg = fmt("ResourceClaim %s/%s was allocated by someone else meanwhile", w->ns, w->name);
            json_decref(c);
            goto out;
        }
        if (!alloc && !cur_alloc) {
            *errmsg = fmt("ResourceClaim %s/%s is no longer allocated", w->ns, w->name);
            json_decref(c);
            goto out;
        }
        if (dra_claim_prebind_finalizer(c)) {   /* PreBind's first update */
            json_t *upd = NULL;
            writing(b);
            long code = send_json(b, "PUT", path, c, NULL, &upd, errmsg);
            json_decref(c);
            if (code / 100 != 2 || !upd) {
                not_written(b);
                json_decref(upd);
                if (code == 409) {
                    atomic_fetch_add(&b->conflicts, 1);
                    continue;
                }
                goto out;
            }
            if (w->held) to_hold(b, upd);
            else to_store(b, upd);
            c = upd;
            status = json_object_get(c, "status");
        }
        if (!json_is_object(status)) json_object_set_new(c, "status", status = json_object());
        bool set_alloc = alloc && !json_object_get(status, "allocation");
        bool add_ref = !reserved_for(c, ref);
        if (!set_alloc && !add_ref) {
            /* a PodGroup's claim already reserved for the group: nothing to write (the
             * store has it: the snapshot we decided on showed it allocated) */
            json_decref(c);
            ok = true;
            goto out;
        }
        dra_claim_prebind_status(c, set_alloc ? alloc : NULL, add_ref ? ref : NULL);   /* and its second */
        json_t *done = NULL;
        writing(b);
        long code = send_json(b, "PUT", spath, c, NULL, &done, errmsg);
        json_decref(c);
        if (code / 100 != 2 || !done) {
            not_written(b);
            json_decref(done);
            if (code == 409) {
                atomic_fetch_add(&b->conflicts, 1);
                continue;
            }
            goto out;
        }
        w->allocated = set_alloc;
        w->ref = add_ref ? json_incref((json_t *)ref) : NULL;
        to_store(b, done);   /* ends the hold: the allocation is the server's now */
        w->held = false;
        json_decref(done);
        ok = true;
        goto out;
    }
    *errmsg = fmt("ResourceClaim %s/%s: still conflicting after %d tries", w->ns, w->name, MAX_TRIES);
out:
    free(path);
    free(spath);
    return ok;
}

/* Deletes a claim we created: its finalizer removed first, as the scheduler's
 * deleteClaim does, then DELETE. */
static void delete_claim(ext_binder *b, const written *w) {
    char *path = claim_path(w->ns, w->name);
    for (int t = 0; t < MAX_TRIES; t++) {
        long st;
        char *msg = NULL;
        json_t *c = get_json(b, path, &st, &msg);
        free(msg);
        if (!c || !has_finalizer(c)) {
            json_decref(c);
            break;
        }
        json_t *fin = json_object_get(json_object_get(c, "metadata"), "finalizers");
        for (size_t i = json_array_size(fin); i-- > 0;)
            if (!strcmp(json_string_value(json_array_get(fin, i)) ?: "", DRA_CLAIM_FINALIZER)) json_array_remove(fin, i);
        if (undo_put(b, path, c) != 409) break;
    }
    char *msg = NULL;
    json_t *left = NULL;
    writing(b);
    long code = send_json(b, "DELETE", path, NULL, NULL, &left, &msg);
    free(msg);
    free(path);
    const json_t *meta = json_object_get(left, "metadata");
    if (code / 100 == 2 && json_object_get(meta, "deletionTimestamp") && json_array_size(json_object_get(meta, "finalizers")))
        to_store(b, left);   /* another finalizer holds it: it is still there, as answered */
    else if (code / 100 == 2 || code == 404)
        gone_from_store(b, w->ns, w->name);
    else
        not_written(b);   /* not deleted: the watch keeps telling what there is */
    json_decref(left);
}

/* Undoes a claim write: the reservedFor entry we added, and the allocation when we
 * made it and nobody else uses the claim; a claim we created is deleted. */
static void roll_back(ext_binder *b, const written *w) {
    if (w->created) {
        delete_claim(b, w);
        return;
    }
    if (!w->ref && !w->allocated) return;
    char *path = claim_path(w->ns, w->name), *spath = fmt("%s/status", path);
    for (int t = 0; t < MAX_TRIES; t++) {
        long st;
        char *msg = NULL;
        json_t *c = get_json(b, path, &st, &msg);
        free(msg);
        if (!c) break;
        json_t *status = json_object_get(c, "status");
        json_t *rf = json_object_get(status, "reservedFor");
        for (size_t i = json_array_size(rf); w->ref && i-- > 0;)
            if (same_consumer(json_array_get(rf, i), w->ref)) json_array_remove(rf, i);
        if (w->allocated && !json_array_size(rf)) json_object_del(status, "allocation");
        if (undo_put(b, spath, c) != 409) break;
    }
    free(path);
    free(spath);
}

/* The claim as this bind is about to write it, for its hold: base with the finalizer,
 * the allocation (unless it has one) and the consumer in reservedFor. */
static json_t *tentative(const json_t *base, const json_t *alloc, const json_t *ref) {
    json_t *t = json_deep_copy(base);
    typed(t);
    dra_claim_prebind_finalizer(t);
    dra_claim_prebind_status(t, alloc, reserved_for(t, ref) ? NULL : ref);
    return t;
}

/* The extended-resource claim, created as the scheduler's DynamicResources plugin
 * creates it in PreBind (extendeddynamicresources.go): generateName
 * "<pod>-extended-resources-", the pod as controlling owner, the
 * resource.kubernetes.io/extended-resource-claim annotation, the requests of the
 * plan; no status (set next, by write_claim). With a pending table the new claim is
 * held at once with its allocation (its devices were held under a placeholder until
 * now); *made gets the claim as created, to write from. */
static bool create_extended_claim(ext_binder *b, const char *ns, const char *pod, const char *uid, const json_t *spec,
                                  const json_t *alloc, const json_t *ref, written *w, json_t **made_out,
                                  char **errmsg) {
    *made_out = NULL;
    json_t *claim = json_pack("{s:s, s:s, s:{s:s+, s:s, s:[{s:s, s:s, s:s, s:s?, s:b}], s:{s:s}}, s:O}", "apiVersion",
                              "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "generateName", pod,
                              "-extended-resources-", "namespace", ns, "ownerReferences", "apiVersion", "v1", "kind",
                              "Pod", "name", pod, "uid", uid, "controller", 1, "annotations", EXTENDED_ANNOTATION, "true",
                              "spec", spec);
    char *path = fmt("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", ns);
    json_t *made = NULL;
    writing(b);
    long code = send_json(b, "POST", path, claim, NULL, &made, errmsg);
    json_decref(claim);
    free(path);
    const char *name = jstr(json_object_get(made, "metadata"), "name");
    if (code / 100 != 2 || !name) {
        not_written(b);
        if (code / 100 == 2) *errmsg = fmt("Pod %s/%s: the created extended-resource claim has no name", ns, pod);
        json_decref(made);
        return false;
    }
    free(w->name);
    w->name = xstrdup(name);
    w->created = true;
    typed(made);
    if (b->pending) {
        json_t *t = tentative(made, alloc, ref);
        bool held = ext_pending_hold(b->pending, b->st, made, t);
        json_decref(t);
        if (!held) {
            not_written(b);
            *errmsg = fmt("ResourceClaim %s/%s: cannot hold its devices in the store", ns, name);
            json_decref(made);
            return false;
        }
        w->held = true;
        to_hold(b, made);
    } else {
        to_store(b, made);
    }
    *made_out = made;
    return true;
}

/* pod.status.extendedResourceClaimStatus, as the scheduler's PatchPodStatus writes
 * it: a strategic-merge patch of the pods/status subresource. */
static bool patch_pod_status(ext_binder *b, const char *pod_path, const json_t *mappings, const char *claim,
                             char **errmsg) {
    json_t *patch = json_pack("{s:{s:{s:O, s:s}}}", "status", "extendedResourceClaimStatus", "requestMappings", mappings,
                              "resourceClaimName", claim);
    char *path = fmt("%s/status", pod_path);
    long code = send_json(b, "PATCH", path, patch, "application/strategic-merge-patch+json", NULL, errmsg);
    json_decref(patch);
    free(path);
    return code / 100 == 2;
}

/* What one bind decides and holds: the plan, per entry the claim written (its
 * base, from the watch or read here), and the PodGroup reference. */
typedef struct bind_state {
    json_t *plan;
    json_t *bases;               /* "ns/name" → the claim as the API server served it */
    json_t *pod_ref, *group_ref;
    char *group;                 /* "ns/name" of the group group_ref names */
    written *ws;                 /* one per plan entry */
    size_t nw;
    written placeholder;         /* the implicit claim's devices until it exists (held when .held) */
} bind_state;

static const char *key_of(const char *ns, const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", ns, name);
    return buf;
}

/* The claim a plan entry writes, as we know it (a copy; NULL: not known here). */
static json_t *base_of(ext_binder *b, const bind_state *bs, const char *ns, const char *name) {
    char key[600];
    json_t *c = json_object_get(bs->bases, key_of(ns, name, key, sizeof key));
    if (c) return json_deep_copy(c);
    return b->claims ? ext_objcache_copy(b->claims, ns, name) : NULL;
}

/* Decides the pod on node against the current snapshot (under b->mu): the plan in
 * bs->plan, NULL on success, else the error. */
static char *decide(ext_binder *b, const json_t *pod, const char *pod_ns, const char *pod_name, const char *node,
                    bind_state *bs) {
    json_decref(bs->plan);
    bs->plan = NULL;
    dra_snapshot *s = dra_store_acquire(b->st);
    if (!s) return xstrdup("bind: no snapshot yet");
    char *errmsg = NULL;
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    if (!pr) {
        char buf[1400];
        errmsg = fmt("%s", err_format(&e, buf, sizeof buf));
    } else if (dra_pod_request_uncreated_claim(pr)) {
        errmsg = xstrdup(dra_pod_request_uncreated_claim(pr));
    } else if (dra_pod_request_needs_dra(pr)) {
        dra_fit f;
        bs->plan = dra_pod_fit_allocation(pr, b->x, node, dra_monotonic_ns() + 2000000000ull, &f);
        if (!bs->plan) errmsg = fmt("Pod %s/%s does not fit node %s any more: %s", pod_ns, pod_name, node, f.reason);
    }
    dra_pod_request_free(pr);
    dra_snapshot_release(s);
    return errmsg;
}

/* Whether something the holds need is not at hand — a PodGroup's uid, a claim the
 * watch's JSON lacks (holding) — and unless dry, reads it (outside the lock; the pod is
 * then decided again). *errmsg when a read failed. */
static bool fetch_missing(ext_binder *b, bind_state *bs, bool holding, bool dry, char **errmsg) {
    bool missing = false;
    for (size_t i = 0; i < json_array_size(bs->plan); i++) {
        const json_t *c = json_array_get(bs->plan, i);
        const char *ns = jstr(c, "namespace"), *group = jstr(c, "podGroup"), *name = jstr(c, "name");
        char key[600];
        if (group && (!bs->group || strcmp(bs->group, key_of(ns, group, key, sizeof key)))) {
            missing = true;
            if (dry) return true;
            char *gpath = fmt("/apis/scheduling.k8s.io/v1alpha2/namespaces/%s/podgroups/%s", ns, group);
            long st;
            json_t *g = get_json(b, gpath, &st, errmsg);
            free(gpath);
            if (!g) return true;
            json_decref(bs->group_ref);
            bs->group_ref = json_pack("{s:s, s:s, s:s, s:s?}", "apiGroup", "scheduling.k8s.io", "resource", "podgroups",
                                      "name", group, "uid", jstr(json_object_get(g, "metadata"), "uid"));
            json_decref(g);
            free(bs->group);
            bs->group = xstrdup(key);
        }
        if (!holding || json_is_true(json_object_get(c, "implicit")) || !json_object_get(c, "allocation")) continue;
        json_t *have = base_of(b, bs, ns, name);
        if (have) {
            json_decref(have);
            continue;
        }
        missing = true;
        if (dry) return true;
        char *path = claim_path(ns, name);
        json_t *got = get_claim(b, path, errmsg);
        free(path);
        if (!got) return true;
        json_object_set_new(bs->bases, key_of(ns, name, key, sizeof key), got);
    }
    return missing;
}

/* Under b->mu, the plan decided and everything at hand: each claim the plan allocates
 * is held (the store shows it allocated from now), and the implicit claim's devices
 * under a placeholder. NULL on success, else the error (the holds taken so far are
 * released by the caller's failure path). */
static char *hold_all(ext_binder *b, bind_state *bs, const char *pod_name) {
    for (size_t i = 0; i < bs->nw; i++) {
        const json_t *c = json_array_get(bs->plan, i);
        const json_t *alloc = json_object_get(c, "allocation");
        const json_t *ref = jstr(c, "podGroup") ? bs->group_ref : bs->pod_ref;
        written *w = &bs->ws[i];
        if (!alloc) continue;   /* reused: allocated already, nothing to hold */
        if (json_is_true(json_object_get(c, "implicit"))) {
            /* no object yet (its name comes from the create): the devices are held under a
             * name of our own until it exists */
            written *ph = &bs->placeholder;
            ph->ns = xstrdup(w->ns);
            ph->name = fmt("%s-extended-resources-dralloc-pending", pod_name);
            json_t *t = json_pack("{s:s, s:s, s:{s:s, s:s}, s:O, s:{s:O, s:[O]}}", "apiVersion", "resource.k8s.io/v1",
                                  "kind", "ResourceClaim", "metadata", "name", ph->name, "namespace", ph->ns, "spec",
                                  json_object_get(c, "spec"), "status", "allocation", alloc, "reservedFor", ref);
            ph->held = ext_pending_hold(b->pending, b->st, NULL, t);
            json_decref(t);
            if (!ph->held) return fmt("Pod %s/%s: its extended-resource devices are being bound already", w->ns, pod_name);
            continue;
        }
        json_t *base = base_of(b, bs, w->ns, w->name);
        assert(base);   /* fetch_missing made sure */
        json_t *t = tentative(base, alloc, ref);
        w->held = ext_pending_hold(b->pending, b->st, base, t);
        json_decref(t);
        json_decref(base);
        if (!w->held) return fmt("ResourceClaim %s/%s is being bound by another /bind at the moment", w->ns, w->name);
    }
    return NULL;
}

static void release(ext_binder *b, written *w) {
    if (!w->held) return;
    ext_pending_release(b->pending, b->st, "ResourceClaim", w->ns, w->name);
    w->held = false;
}

/* Whether the pod at pod_path (with uid, when given) is bound to node, as the API
 * server has it now (a binding answered 409). */
static bool bound_to(ext_binder *b, const char *pod_path, const char *uid, const char *node) {
    long st;
    char *msg = NULL;
    json_t *pod = get_json(b, pod_path, &st, &msg);
    free(msg);
    const char *have = jstr(json_object_get(pod, "spec"), "nodeName");
    const char *puid = jstr(json_object_get(pod, "metadata"), "uid");
    bool same = have && !strcmp(have, node) && (!uid || !*uid || (puid && !strcmp(puid, uid)));
    json_decref(pod);
    return same;
}

/* The claims' writes and the binding, outside the lock (inside it without a pending
 * table). NULL on success, else the error. */
static char *write_all(ext_binder *b, bind_state *bs, const char *pod_ns, const char *pod_name, const char *uid,
                       const char *pod_path, const char *node, uint64_t *t0) {
    char *errmsg = NULL;
    for (size_t i = 0; i < bs->nw; i++) {
        const json_t *c = json_array_get(bs->plan, i);
        const json_t *alloc = json_object_get(c, "allocation");
        const json_t *ref = jstr(c, "podGroup") ? bs->group_ref : bs->pod_ref;
        written *w = &bs->ws[i];
        if (json_is_true(json_object_get(c, "implicit"))) {
            if (!uid || !*uid)
                return fmt("Pod %s/%s has no uid: its extended-resource claim needs one for its owner", pod_ns, pod_name);
            json_t *made = NULL;
            if (!create_extended_claim(b, w->ns, pod_name, uid, json_object_get(c, "spec"), alloc, ref, w, &made,
                                       &errmsg))
                return errmsg;
            release(b, &bs->placeholder);   /* the claim holds the devices now */
            if (!write_claim(b, alloc, ref, made, w, &errmsg)) return errmsg;
            if (!patch_pod_status(b, pod_path, json_object_get(c, "requestMappings"), w->name, &errmsg)) return errmsg;
            continue;
        }
        if (!write_claim(b, alloc, ref, base_of(b, bs, w->ns, w->name), w, &errmsg)) return errmsg;
    }
    took(b, EXT_BIND_CLAIM_WRITES, t0);
    json_t *binding = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Binding",
                                "metadata", "name", pod_name, "namespace", pod_ns, "target", "apiVersion", "v1", "kind",
                                "Node", "name", node);
    if (uid) json_object_set_new(json_object_get(binding, "metadata"), "uid", json_string(uid));
    char *bpath = fmt("%s/binding", pod_path);
    long code = send_json(b, "POST", bpath, binding, NULL, NULL, &errmsg);
    json_decref(binding);
    if (code == 409 && bound_to(b, pod_path, uid, node)) {
        /* an earlier /bind of this pod (whose answer kube-scheduler gave up on) bound it
         * here: the same outcome, and the claims say so already */
        code = 200;
        free(errmsg);
        errmsg = NULL;
    }
    if (code / 100 != 2 && !errmsg) errmsg = fmt("POST %s: HTTP %ld", bpath, code);
    free(bpath);
    took(b, EXT_BIND_BINDING, t0);
    return code / 100 == 2 ? NULL : errmsg;
}


/* ---- one bind in two phases (bind.h, Two phases) -------------------------------------- */

/* A bind of a pod UID in progress: a second /bind of the same UID (kube-scheduler timed
 * out on the first and retried) waits for it and answers from its outcome instead of
 * deciding again against the first one's holds. Under b->flmu. */
typedef struct flight {
    struct flight *next;
    char *uid, *node;
    bool done;
    char *err;                   /* the outcome once done: NULL bound */
    int refs;                    /* the bind that owns it and each waiter */
} flight;

struct ext_bind_job {
    char *ns, *name, *uid, *node;  /* uid NULL: none given */
    char *path;                  /* the pod's */
    uint64_t received_ns;        /* when the request came in: its deadline counts from here */
    uint64_t t0;                 /* the current phase's start (took) */
    json_t *pod;                 /* NULL until found (cache or GET) */
    flight *fl;                  /* registered for uid; NULL: not yet, or no uid */
    bool prepared;               /* decided and held: only the writes are left */
    bind_state bs;
};

ext_bind_job *ext_bind_job_new(const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node,
                               uint64_t received_ns) {
    ext_bind_job *j = xcalloc(1, sizeof *j);
    j->ns = xstrdup(dra_ns(pod_ns));
    j->name = xstrdup(pod_name ? pod_name : "");
    j->uid = pod_uid && *pod_uid ? xstrdup(pod_uid) : NULL;
    j->node = xstrdup(node ? node : "");
    j->path = fmt("/api/v1/namespaces/%s/pods/%s", j->ns, j->name);
    j->received_ns = received_ns ? received_ns : dra_monotonic_ns();
    j->t0 = dra_monotonic_ns();
    j->bs.bases = json_object();
    return j;
}

static void flight_put(flight *f) {
    if (--f->refs) return;
    free(f->uid);
    free(f->node);
    free(f->err);
    free(f);
}

static void job_free(ext_binder *b, ext_bind_job *j) {
    bind_state *bs = &j->bs;
    for (size_t i = 0; i < bs->nw; i++) {
        assert(!bs->ws[i].held);   /* every hold ends, written or released, before the job does */
        free(bs->ws[i].ns);
        free(bs->ws[i].name);
        json_decref(bs->ws[i].ref);
    }
    assert(!bs->placeholder.held);
    free(bs->placeholder.ns);
    free(bs->placeholder.name);
    free(bs->ws);
    json_decref(bs->plan);
    json_decref(bs->bases);
    json_decref(bs->pod_ref);
    json_decref(bs->group_ref);
    free(bs->group);
    json_decref(j->pod);
    if (j->fl) {
        /* a job ends only through landed() */
        pthread_mutex_lock(&b->flmu);
        assert(j->fl->done);
        flight_put(j->fl);
        pthread_mutex_unlock(&b->flmu);
    }
    free(j->ns);
    free(j->name);
    free(j->uid);
    free(j->node);
    free(j->path);
    free(j);
}

/* The job's outcome (err: NULL bound) goes to its flight's waiters and, bound, into
 * the pods bound. */
static void landed(ext_binder *b, ext_bind_job *j, const char *err) {
    if (!j->fl) return;
    pthread_mutex_lock(&b->flmu);
    flight *f = j->fl;
    f->done = true;
    f->err = err ? xstrdup(err) : NULL;
    for (flight **p = &b->flights; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    if (!err) {
        if (json_object_size(b->bound) >= EXT_BIND_PODS_MAX) json_object_clear(b->bound);
        json_object_set_new(b->bound, f->uid, json_string(f->node));
    }
    pthread_cond_broadcast(&b->flcv);
    pthread_mutex_unlock(&b->flmu);
}

static uint64_t deadline_of(const ext_binder *b, const ext_bind_job *j) {
    return j->received_ns + (uint64_t)(b->timeout_s * 1e9);
}

/* The answer to a bind of a pod already bound (by this process) to `have`. */
static char *already(const ext_bind_job *j, const char *have) {
    if (!strcmp(have, j->node)) return NULL;
    return fmt("Pod %s/%s is bound to node %s already, not %s", j->ns, j->name, have, j->node);
}

typedef enum step { STEP_ANSWERED, STEP_LATER } step;

/* Admission: the pod bound already, or a bind of its UID in flight. STEP_ANSWERED with
 * *errmsg when that decides the answer; STEP_LATER when it must wait (and may not);
 * else the job's flight is registered and *errmsg is left alone — go on. */
static bool admit(ext_binder *b, ext_bind_job *j, bool may_wait, step *out, char **errmsg) {
    if (!j->uid || j->fl) return true;
    pthread_mutex_lock(&b->flmu);
    for (;;) {
        const char *have = json_string_value(json_object_get(b->bound, j->uid));
        if (have) {
            *errmsg = already(j, have);
            break;
        }
        flight *f = b->flights;
        while (f && strcmp(f->uid, j->uid)) f = f->next;
        if (!f) {
            f = xcalloc(1, sizeof *f);
            f->uid = xstrdup(j->uid);
            f->node = xstrdup(j->node);
            f->refs = 1;
            f->next = b->flights;
            b->flights = f;
            j->fl = f;
            pthread_mutex_unlock(&b->flmu);
            return true;
        }
        if (!may_wait) {
            pthread_mutex_unlock(&b->flmu);
            *out = STEP_LATER;
            return false;
        }
        /* wait for the earlier bind, no longer than this request's deadline (its job may
         * even be queued behind this one in the pool) */
        f->refs++;
        uint64_t dl = deadline_of(b, j);
        struct timespec ts = {.tv_sec = (time_t)(dl / 1000000000ull), .tv_nsec = (long)(dl % 1000000000ull)};
        while (!f->done && dra_monotonic_ns() < dl) pthread_cond_timedwait(&b->flcv, &b->flmu, &ts);
        if (!f->done) {
            *errmsg = fmt("Pod %s/%s: an earlier /bind of it (to node %s) is still in progress", j->ns, j->name, f->node);
        } else if (!f->err) {
            *errmsg = already(j, f->node);
        } else {
            *errmsg = strcmp(f->node, j->node) ? fmt("Pod %s/%s: an earlier /bind of it (to node %s) failed: %s", j->ns,
                                                     j->name, f->node, f->err)
                                               : xstrdup(f->err);
        }
        flight_put(f);
        break;
    }
    pthread_mutex_unlock(&b->flmu);
    atomic_fetch_add(&b->retried, 1);
    *out = STEP_ANSWERED;
    return false;
}

/* The pod to decide: the one /filter saw when its UID is the one asked for, else (when
 * may_read) read from the API server. False with *errmsg set, or (!may_read) neither. */
static bool find_pod(ext_binder *b, ext_bind_job *j, bool may_read, char **errmsg) {
    if (j->pod) return true;
    json_t *pod = ext_objcache_copy(b->pods, j->ns, j->name);
    const char *seen_uid = jstr(json_object_get(pod, "metadata"), "uid");
    if (pod && (!j->uid || !seen_uid || strcmp(seen_uid, j->uid))) {
        json_decref(pod);   /* not known to be the pod kube-scheduler means: read it */
        pod = NULL;
    }
    if (!pod) {
        if (!may_read) return false;
        long st;
        pod = get_json(b, j->path, &st, errmsg);
        took(b, EXT_BIND_POD_GET, &j->t0);
        if (!pod) return false;
    }
    const char *uid = jstr(json_object_get(pod, "metadata"), "uid");
    if (j->uid && uid && strcmp(uid, j->uid)) {
        *errmsg = fmt("Pod %s/%s: UID %s, kube-scheduler asked for %s (recreated?)", j->ns, j->name, uid, j->uid);
        json_decref(pod);
        return false;
    }
    j->pod = pod;
    return true;
}

/* Releases what the job holds and undoes what it wrote (the failure path). */
static void unwind(ext_binder *b, ext_bind_job *j) {
    bind_state *bs = &j->bs;
    /* first what the server never got (the store goes back to the server's version),
     * then what it did get, newest first */
    release(b, &bs->placeholder);
    for (size_t i = 0; i < bs->nw; i++) release(b, &bs->ws[i]);
    for (size_t i = bs->nw; i-- > 0;)
        if (bs->ws[i].name) roll_back(b, &bs->ws[i]);
    took(b, EXT_BIND_ROLLBACK, &j->t0);
    ext_requeue_changed(b->requeue, "a bind gave its devices back");
}

/* Decide and hold, under b->mu. !may_read: only with what is at hand — false, nothing
 * held, when a read is needed (*errmsg left NULL). False with *errmsg on a failure
 * (nothing held). */
static bool decide_and_hold(ext_binder *b, ext_bind_job *j, bool may_read, char **errmsg) {
    bind_state *bs = &j->bs;
    bool holding = b->pending != NULL;
    const char *uid = jstr(json_object_get(j->pod, "metadata"), "uid");
    if (!bs->pod_ref) {
        bs->pod_ref = json_pack("{s:s, s:s}", "resource", "pods", "name", j->name);
        if (uid && *uid) json_object_set_new(bs->pod_ref, "uid", json_string(uid));
    }
    /* decide; when something the holds need is not at hand, let go of the lock, read it
     * and decide again (twice at most: the second read is of what a newer snapshot
     * added) */
    pthread_mutex_lock(&b->mu);
    took(b, EXT_BIND_LOCK_WAIT, &j->t0);
    for (int round = 0;; round++) {
        *errmsg = decide(b, j->pod, j->ns, j->name, j->node, bs);
        if (*errmsg) goto fail;
        if (!fetch_missing(b, bs, holding, true, errmsg)) break;
        if (!may_read) {
            pthread_mutex_unlock(&b->mu);
            took(b, EXT_BIND_DECIDE, &j->t0);
            return false;
        }
        if (round == 2) {
            *errmsg = fmt("Pod %s/%s: its claims keep changing while it is bound; retry", j->ns, j->name);
            goto fail;
        }
        pthread_mutex_unlock(&b->mu);
        took(b, EXT_BIND_DECIDE, &j->t0);
        fetch_missing(b, bs, holding, false, errmsg);
        took(b, EXT_BIND_CLAIM_WRITES, &j->t0);
        if (*errmsg) return false;
        pthread_mutex_lock(&b->mu);
        took(b, EXT_BIND_LOCK_WAIT, &j->t0);
    }
    bs->nw = json_array_size(bs->plan);
    bs->ws = xcalloc(bs->nw + 1, sizeof *bs->ws);
    for (size_t i = 0; i < bs->nw; i++) {
        const json_t *c = json_array_get(bs->plan, i);
        bs->ws[i].ns = xstrdup(jstr(c, "namespace"));
        if (!json_is_true(json_object_get(c, "implicit"))) bs->ws[i].name = xstrdup(jstr(c, "name"));
    }
    if (holding) {
        *errmsg = hold_all(b, bs, j->name);
        if (*errmsg) {
            release(b, &bs->placeholder);
            for (size_t i = 0; i < bs->nw; i++) release(b, &bs->ws[i]);
            goto fail;
        }
        pthread_mutex_unlock(&b->mu);   /* the store shows our devices in use: the next bind may decide */
    }
    /* without a pending table the lock stays, across the writes (commit lets go) */
    took(b, EXT_BIND_DECIDE, &j->t0);
    j->prepared = true;
    return true;
fail:
    pthread_mutex_unlock(&b->mu);
    took(b, EXT_BIND_DECIDE, &j->t0);
    return false;
}

/* The job's end: its outcome landed, counted, the job freed; returns errmsg. */
static char *done(ext_binder *b, ext_bind_job *j, char *errmsg) {
    landed(b, j, errmsg);
    if (!errmsg) {
        atomic_fetch_add(&b->binds, 1);
        ext_objcache_del(b->pods, j->ns, j->name);
    }
    atomic_fetch_sub(&b->inflight, 1);
    job_free(b, j);
    return errmsg;
}

static char *expired_error(ext_binder *b, const ext_bind_job *j) {
    atomic_fetch_add(&b->expired, 1);
    return fmt("Pod %s/%s: /bind waited %.1f s, past --bind-timeout %.1f s (kube-scheduler has given up on it): "
               "nothing written",
               j->ns, j->name, (double)(dra_monotonic_ns() - j->received_ns) / 1e9, b->timeout_s);
}

/* As far as the job can go: with !may_wait (the HTTP thread) up to the holds, without
 * a request to another server or a wait; else to its end. STEP_ANSWERED: *errmsg is the
 * answer (NULL: bound) and j is freed. */
static step run(ext_binder *b, ext_bind_job *j, bool may_wait, char **errmsg) {
    *errmsg = NULL;
    step st;
    if (!j->prepared) {
        if (!*j->name || !*j->node) {
            *errmsg = xstrdup("bind: PodName and Node are required");
            atomic_fetch_add(&b->failures, 1);
            atomic_fetch_sub(&b->inflight, 1);
            job_free(b, j);
            return STEP_ANSWERED;
        }
        if (dra_monotonic_ns() > deadline_of(b, j)) {
            *errmsg = expired_error(b, j);
            return (*errmsg = done(b, j, *errmsg)), STEP_ANSWERED;
        }
        if (!admit(b, j, may_wait, &st, errmsg)) {
            if (st == STEP_LATER) return STEP_LATER;
            atomic_fetch_sub(&b->inflight, 1);   /* answered from another bind: not one of ours */
            job_free(b, j);
            return STEP_ANSWERED;
        }
        if (!find_pod(b, j, may_wait, errmsg)) {
            if (!*errmsg) return STEP_LATER;
            atomic_fetch_add(&b->failures, 1);
            return (*errmsg = done(b, j, *errmsg)), STEP_ANSWERED;
        }
        /* the pod's own word: bound already (by us, or anybody) */
        const char *have = jstr(json_object_get(j->pod, "spec"), "nodeName");
        if (have && *have) return (*errmsg = done(b, j, already(j, have))), STEP_ANSWERED;
        if (!may_wait && !b->pending) return STEP_LATER;   /* the lock would be held across the writes */
        if (!decide_and_hold(b, j, may_wait, errmsg)) {
            if (!*errmsg) return STEP_LATER;
            atomic_fetch_add(&b->failures, 1);
            return (*errmsg = done(b, j, *errmsg)), STEP_ANSWERED;
        }
        if (!may_wait) return STEP_LATER;   /* prepared: the writes are left */
    }
    took(b, EXT_BIND_QUEUE, &j->t0);
    /* nothing written yet: a bind past kube-scheduler's timeout gives its devices back
     * rather than writing for a pod the scheduler has unreserved and will retry */
    if (dra_monotonic_ns() > deadline_of(b, j)) {
        *errmsg = expired_error(b, j);
        unwind(b, j);
        if (!b->pending) pthread_mutex_unlock(&b->mu);
        return (*errmsg = done(b, j, *errmsg)), STEP_ANSWERED;
    }
    const char *uid = jstr(json_object_get(j->pod, "metadata"), "uid");
    *errmsg = write_all(b, &j->bs, j->ns, j->name, uid, j->path, j->node, &j->t0);
    if (*errmsg) {
        took(b, EXT_BIND_CLAIM_WRITES, &j->t0);
        unwind(b, j);
        atomic_fetch_add(&b->failures, 1);
    }
    if (!b->pending) pthread_mutex_unlock(&b->mu);
    return (*errmsg = done(b, j, *errmsg)), STEP_ANSWERED;
}

bool ext_bind_prepare(ext_binder *b, ext_bind_job *j, char **errmsg) {
    atomic_fetch_add(&b->inflight, 1);
    return run(b, j, false, errmsg) == STEP_ANSWERED;
}

char *ext_bind_finish(ext_binder *b, ext_bind_job *j) {
    char *errmsg;
    step st = run(b, j, true, &errmsg);
    assert(st == STEP_ANSWERED);
    (void)st;
    return errmsg;
}

char *ext_bind(ext_binder *b, const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node) {
    ext_bind_job *j = ext_bind_job_new(pod_ns, pod_name, pod_uid, node, 0);
    char *errmsg;
    if (ext_bind_prepare(b, j, &errmsg)) return errmsg;
    return ext_bind_finish(b, j);
}
