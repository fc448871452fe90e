/* bind.c — bind mode (bind.h): allocate on the chosen node, write the claims'
 * status with resourceVersion preconditions (creating the extended-resource claim
 * first when the pod needs one), create the binding, roll back on failure. Each
 * claim written goes into the store at once: the allocation is real from then on.
 * Every write is announced to the pending-writes table before it is sent and handed
 * to it with the server's answer (pending.h), so that the watch cannot put an older
 * version of the claim back afterwards. */
#include "extender/bind.h"

#include "extender/pending.h"

#include "base/base.h"
#include "engine/context.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINALIZER "resource.kubernetes.io/delete-protection"
#define EXTENDED_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
#define MAX_TRIES 3

struct ext_binder {
    ext_kube *k;
    dra_store *st;
    ext_pending *pending;        /* borrowed; NULL: writes go straight into the store */
    pthread_mutex_t mu;          /* one bind at a time */
    dra_alloc_ctx *x;
    _Atomic uint64_t binds, failures, conflicts;
};

ext_binder *ext_binder_new(ext_kube *k, dra_store *st, ext_pending *pending) {
    ext_binder *b = xcalloc(1, sizeof *b);
    b->k = k;
    b->st = st;
    b->pending = pending;
    pthread_mutex_init(&b->mu, NULL);
    b->x = dra_alloc_ctx_new();
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
    pthread_mutex_destroy(&b->mu);
    free(b);
}

uint64_t ext_binder_binds(const ext_binder *b) { return atomic_load(&b->binds); }
uint64_t ext_binder_failures(const ext_binder *b) { return atomic_load(&b->failures); }
uint64_t ext_binder_conflicts(const ext_binder *b) { return atomic_load(&b->conflicts); }

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
        if (!strcmp(json_string_value(json_array_get(f, i)) ?: "", FINALIZER)) return true;
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
    char *ns, *name;
    bool created;                /* we created the claim (the extended-resource claim): roll back = delete */
    bool allocated;              /* we set status.allocation */
    json_t *ref;                 /* the reservedFor entry we added, NULL when it was there */
} written;

/* One claim: finalizer, then status (allocation unless reused, the consumer `ref` in
 * reservedFor), with resourceVersion preconditions; on 409 re-read and retry. What
 * the server stored goes into the store. w->ns and w->name are set by the caller. */
static bool write_claim(ext_binder *b, const json_t *alloc, const json_t *ref, written *w, char **errmsg) {
    char *path = claim_path(w->ns, w->name), *spath = fmt("%s/status", path);
    bool ok = false;
    for (int t = 0; t < MAX_TRIES; t++) {
        long st;
        json_t *c = get_json(b, path, &st, errmsg);
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
        if (!has_finalizer(c)) {
            json_t *meta = json_object_get(c, "metadata");
            json_t *fin = json_object_get(meta, "finalizers");
            if (!json_is_array(fin)) json_object_set_new(meta, "finalizers", fin = json_array());
            json_array_append_new(fin, json_string(FINALIZER));
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
            to_store(b, upd);
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
        if (set_alloc) json_object_set(status, "allocation", (json_t *)alloc);
        if (add_ref) {
            json_t *rf = json_object_get(status, "reservedFor");
            if (!json_is_array(rf)) json_object_set_new(status, "reservedFor", rf = json_array());
            json_array_append(rf, (json_t *)ref);
        }
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
        to_store(b, done);
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
            if (!strcmp(json_string_value(json_array_get(fin, i)) ?: "", FINALIZER)) json_array_remove(fin, i);
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

/* The extended-resource claim, created as the scheduler's DynamicResources plugin
 * creates it in PreBind (extendeddynamicresources.go): generateName
 * "<pod>-extended-resources-", the pod as controlling owner, the
 * resource.kubernetes.io/extended-resource-claim annotation, the requests of the
 * plan; no status (set next, by write_claim). */
static bool create_extended_claim(ext_binder *b, const char *ns, const char *pod, const char *uid, const json_t *spec,
                                  written *w, char **errmsg) {
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
    w->ns = xstrdup(ns);
    w->name = xstrdup(name);
    w->created = true;
    to_store(b, made);
    json_decref(made);
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

char *ext_bind(ext_binder *b, const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node) {
    if (!pod_name || !*pod_name || !node || !*node) return xstrdup("bind: PodName and Node are required");
    pod_ns = dra_ns(pod_ns);
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", pod_ns, pod_name);
    long st;
    char *errmsg = NULL;
    json_t *pod = get_json(b, path, &st, &errmsg);
    if (!pod) {
        atomic_fetch_add(&b->failures, 1);
        return errmsg;
    }
    const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    if (pod_uid && *pod_uid && uid && strcmp(uid, pod_uid)) {
        json_decref(pod);
        atomic_fetch_add(&b->failures, 1);
        return fmt("Pod %s/%s: UID %s, kube-scheduler asked for %s (recreated?)", pod_ns, pod_name, uid, pod_uid);
    }
    pthread_mutex_lock(&b->mu);
    written *ws = NULL;
    size_t nw = 0;
    json_t *plan = NULL, *pod_ref = NULL, *group_ref = NULL;
    dra_pod_request *pr = NULL;
    dra_snapshot *s = dra_store_acquire(b->st);
    err e;
    err_clear(&e);
    if (!s) {
        errmsg = xstrdup("bind: no snapshot yet");
        goto fail;
    }
    pr = dra_pod_request_new(s, pod, &e);
    if (!pr) {
        char buf[1400];
        errmsg = fmt("%s", err_format(&e, buf, sizeof buf));
        goto fail;
    }
    const char *missing = dra_pod_request_uncreated_claim(pr);
    if (missing) {
        errmsg = xstrdup(missing);
        goto fail;
    }
    if (dra_pod_request_needs_dra(pr)) {
        dra_fit f;
        plan = dra_pod_fit_allocation(pr, b->x, node, dra_monotonic_ns() + 2000000000ull, &f);
        if (!plan) {
            errmsg = fmt("Pod %s/%s does not fit node %s any more: %s", pod_ns, pod_name, node, f.reason);
            goto fail;
        }
    }
    pod_ref = json_pack("{s:s, s:s}", "resource", "pods", "name", pod_name);
    if (uid && *uid) json_object_set_new(pod_ref, "uid", json_string(uid));
    ws = xcalloc(json_array_size(plan) + 1, sizeof *ws);
    for (size_t i = 0; i < json_array_size(plan); i++) {
        const json_t *c = json_array_get(plan, i);
        const char *ns = jstr(c, "namespace"), *group = jstr(c, "podGroup");
        const json_t *ref = pod_ref;
        if (group) {
            /* KEP-5729: a PodGroup's claim is reserved for the group as a whole */
            if (!group_ref) {
                char *gpath = fmt("/apis/scheduling.k8s.io/v1alpha2/namespaces/%s/podgroups/%s", ns, group);
                json_t *g = get_json(b, gpath, &st, &errmsg);
                free(gpath);
                const char *guid = jstr(json_object_get(g, "metadata"), "uid");
                if (g) group_ref = json_pack("{s:s, s:s, s:s, s:s?}", "apiGroup", "scheduling.k8s.io", "resource", "podgroups",
                                             "name", group, "uid", guid);
                json_decref(g);
                if (!group_ref) goto fail;
            }
            ref = group_ref;
        }
        if (json_is_true(json_object_get(c, "implicit"))) {
            if (!uid || !*uid) {
                errmsg = fmt("Pod %s/%s has no uid: its extended-resource claim needs one for its owner", pod_ns, pod_name);
                goto fail;
            }
            if (!create_extended_claim(b, ns, pod_name, uid, json_object_get(c, "spec"), &ws[nw], &errmsg)) goto fail;
            nw++;
            if (!write_claim(b, json_object_get(c, "allocation"), ref, &ws[nw - 1], &errmsg)) goto fail;
            if (!patch_pod_status(b, path, json_object_get(c, "requestMappings"), ws[nw - 1].name, &errmsg)) goto fail;
            continue;
        }
        ws[nw].ns = xstrdup(ns);
        ws[nw].name = xstrdup(jstr(c, "name"));
        nw++;
        if (!write_claim(b, json_object_get(c, "allocation"), ref, &ws[nw - 1], &errmsg)) goto fail;
    }
    json_t *binding = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Binding",
                                "metadata", "name", pod_name, "namespace", pod_ns, "target", "apiVersion", "v1", "kind",
                                "Node", "name", node);
    if (uid) json_object_set_new(json_object_get(binding, "metadata"), "uid", json_string(uid));
    char bpath[640];
    snprintf(bpath, sizeof bpath, "%s/binding", path);
    long code = send_json(b, "POST", bpath, binding, NULL, NULL, &errmsg);
    json_decref(binding);
    if (code / 100 != 2) {
        if (!errmsg) errmsg = fmt("POST %s: HTTP %ld", bpath, code);
        goto fail;
    }
    atomic_fetch_add(&b->binds, 1);
    goto out;
fail:
    for (size_t i = nw; i-- > 0;) roll_back(b, &ws[i]);
    atomic_fetch_add(&b->failures, 1);
out:
    for (size_t i = 0; i < nw; i++) {
        free(ws[i].ns);
        free(ws[i].name);
        json_decref(ws[i].ref);
    }
    free(ws);
    json_decref(plan);
    json_decref(pod_ref);
    json_decref(group_ref);
    dra_pod_request_free(pr);
    dra_snapshot_release(s);
    pthread_mutex_unlock(&b->mu);
    json_decref(pod);
    return errmsg;
}
