/* bind.c — bind mode (bind.h): allocate on the chosen node, write the claims'
 * status with resourceVersion preconditions, create the binding, roll back on
 * failure. */
#include "extender/bind.h"

#include "base/base.h"
#include "engine/engine.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINALIZER "resource.kubernetes.io/delete-protection"
#define MAX_TRIES 3

struct ext_binder {
    ext_kube *k;
    dra_store *st;
    pthread_mutex_t mu;          /* one bind at a time */
    dra_alloc_ctx *x;
    _Atomic uint64_t binds, failures, conflicts;
};

ext_binder *ext_binder_new(ext_kube *k, dra_store *st) {
    ext_binder *b = xcalloc(1, sizeof *b);
    b->k = k;
    b->st = st;
    pthread_mutex_init(&b->mu, NULL);
    b->x = dra_alloc_ctx_new();
    return b;
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
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) s = NULL;
    va_end(ap);
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

/* PUT obj to path; the answer (the stored object) in *out. */
static long put_json(ext_binder *b, const char *method, const char *path, const json_t *obj, json_t **out, char **errmsg) {
    char *body = json_dumps(obj, JSON_COMPACT);
    ext_kube_resp r;
    err e;
    err_clear(&e);
    bool ok = ext_kube_request(b->k, method, path, body, "application/json", &r, &e);
    free(body);
    if (!ok) {
        *errmsg = fmt("%s %s: %s", method, path, e.msg);
        return 0;
    }
    if (out) *out = r.status / 100 == 2 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    if (r.status / 100 != 2 && r.status != 409) {
        json_t *st = json_loadb(r.body, r.len, 0, NULL);
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

static bool reserved_for(const json_t *claim, const char *uid, const char *name) {
    const json_t *rf = json_object_get(json_object_get(claim, "status"), "reservedFor");
    for (size_t i = 0; i < json_array_size(rf); i++) {
        const json_t *c = json_array_get(rf, i);
        const char *u = json_string_value(json_object_get(c, "uid")), *n = json_string_value(json_object_get(c, "name"));
        if ((uid && *uid && u && !strcmp(u, uid)) || (n && !strcmp(n, name))) return true;
    }
    return false;
}

typedef struct written {
    char *ns, *name;
    bool allocated;              /* we set status.allocation */
    json_t *final;               /* the claim as the API server stored it */
} written;

/* One claim: finalizer, then status (allocation unless reused, reservedFor), with
 * resourceVersion preconditions; on 409 re-read and retry. */
static bool write_claim(ext_binder *b, const char *ns, const char *name, const json_t *alloc, const char *pod,
                        const char *uid, written *w, char **errmsg) {
    char path[600];
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns, name);
    for (int t = 0; t < MAX_TRIES; t++) {
        long st;
        json_t *c = get_json(b, path, &st, errmsg);
        if (!c) return false;
        json_t *status = json_object_get(c, "status");
        json_t *cur_alloc = json_object_get(status, "allocation");
        if (alloc && cur_alloc && !json_equal(cur_alloc, alloc)) {
            /* somebody else allocated it meanwhile: our choice is stale */
            *errmsg = fmt("ResourceClaim %s/%s was allocated by someone else meanwhile", ns, name);
            json_decref(c);
            return false;
        }
        if (!alloc && !cur_alloc) {
            *errmsg = fmt("ResourceClaim %s/%s is no longer allocated", ns, name);
            json_decref(c);
            return false;
        }
        if (!has_finalizer(c)) {
            json_t *meta = json_object_get(c, "metadata");
            json_t *fin = json_object_get(meta, "finalizers");
            if (!json_is_array(fin)) json_object_set_new(meta, "finalizers", fin = json_array());
            json_array_append_new(fin, json_string(FINALIZER));
            json_t *upd = NULL;
            long code = put_json(b, "PUT", path, c, &upd, errmsg);
            json_decref(c);
            if (code == 409) {
                atomic_fetch_add(&b->conflicts, 1);
                continue;
            }
            if (code / 100 != 2 || !upd) {
                json_decref(upd);
                return false;
            }
            c = upd;
            status = json_object_get(c, "status");
        }
        if (!json_is_object(status)) json_object_set_new(c, "status", status = json_object());
        bool set_alloc = alloc && !json_object_get(status, "allocation");
        if (set_alloc) json_object_set(status, "allocation", (json_t *)alloc);
        if (!reserved_for(c, uid, pod)) {
            json_t *rf = json_object_get(status, "reservedFor");
            if (!json_is_array(rf)) json_object_set_new(status, "reservedFor", rf = json_array());
            json_t *ref = json_pack("{s:s, s:s}", "resource", "pods", "name", pod);
            if (uid && *uid) json_object_set_new(ref, "uid", json_string(uid));
            json_array_append_new(rf, ref);
        }
        char spath[640];
        snprintf(spath, sizeof spath, "%s/status", path);
        json_t *done = NULL;
        long code = put_json(b, "PUT", spath, c, &done, errmsg);
        json_decref(c);
        if (code == 409) {
            atomic_fetch_add(&b->conflicts, 1);
            continue;
        }
        if (code / 100 != 2 || !done) {
            json_decref(done);
            return false;
        }
        w->ns = strdup(ns);
        w->name = strdup(name);
        w->allocated = set_alloc;
        w->final = done;
        return true;
    }
    *errmsg = fmt("ResourceClaim %s/%s: still conflicting after %d tries", ns, name, MAX_TRIES);
    return false;
}

/* Undoes a claim write: our reservedFor entry, and the allocation when we made it. */
static void roll_back(ext_binder *b, const written *w, const char *pod, const char *uid) {
    char path[640];
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", w->ns, w->name);
    for (int t = 0; t < MAX_TRIES; t++) {
        long st;
        char *msg = NULL;
        json_t *c = get_json(b, path, &st, &msg);
        free(msg);
        if (!c) return;
        json_t *status = json_object_get(c, "status");
        json_t *rf = json_object_get(status, "reservedFor");
        for (size_t i = json_array_size(rf); i-- > 0;) {
            const json_t *r = json_array_get(rf, i);
            const char *u = json_string_value(json_object_get(r, "uid")), *n = json_string_value(json_object_get(r, "name"));
            if ((uid && *uid && u && !strcmp(u, uid)) || (n && !strcmp(n, pod))) json_array_remove(rf, i);
        }
        if (w->allocated && !json_array_size(rf)) json_object_del(status, "allocation");
        char spath[680];
        snprintf(spath, sizeof spath, "%s/status", path);
        json_t *done = NULL;
        msg = NULL;
        long code = put_json(b, "PUT", spath, c, &done, &msg);
        free(msg);
        json_decref(c);
        json_decref(done);
        if (code != 409) return;
    }
}

char *ext_bind(ext_binder *b, const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node) {
    if (!pod_name || !*pod_name || !node || !*node) return strdup("bind: PodName and Node are required");
    if (!pod_ns || !*pod_ns) pod_ns = "default";
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
    json_t *plan = NULL;
    dra_pod_request *pr = NULL;
    dra_snapshot *s = dra_store_acquire(b->st);
    err e;
    err_clear(&e);
    if (!s) {
        errmsg = strdup("bind: no snapshot yet");
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
        errmsg = strdup(missing);
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
    ws = xcalloc(json_array_size(plan) + 1, sizeof *ws);
    for (size_t i = 0; i < json_array_size(plan); i++) {
        const json_t *c = json_array_get(plan, i);
        if (json_is_true(json_object_get(c, "implicit"))) {
            errmsg = fmt("Pod %s/%s: extended resources backed by DRA are not supported in bind mode yet", pod_ns, pod_name);
            goto fail;
        }
        if (!write_claim(b, json_string_value(json_object_get(c, "namespace")), json_string_value(json_object_get(c, "name")),
                         json_object_get(c, "allocation"), pod_name, uid, &ws[nw], &errmsg))
            goto fail;
        nw++;
    }
    json_t *binding = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Binding",
                                "metadata", "name", pod_name, "namespace", pod_ns, "target", "apiVersion", "v1", "kind",
                                "Node", "name", node);
    if (uid) json_object_set_new(json_object_get(binding, "metadata"), "uid", json_string(uid));
    char bpath[640];
    snprintf(bpath, sizeof bpath, "%s/binding", path);
    long code = put_json(b, "POST", bpath, binding, NULL, &errmsg);
    json_decref(binding);
    if (code / 100 != 2) {
        if (!errmsg) errmsg = fmt("POST %s: HTTP %ld", bpath, code);
        goto fail;
    }
    /* what was written counts as in use from now on, before the watch shows it */
    for (size_t i = 0; i < nw; i++) {
        err ae;
        err_clear(&ae);
        if (!json_object_get(ws[i].final, "kind")) json_object_set_new(ws[i].final, "kind", json_string("ResourceClaim"));
        if (!json_object_get(ws[i].final, "apiVersion"))
            json_object_set_new(ws[i].final, "apiVersion", json_string("resource.k8s.io/v1"));
        dra_store_apply_json(b->st, ws[i].final, &ae);
    }
    atomic_fetch_add(&b->binds, 1);
    goto out;
fail:
    for (size_t i = nw; i-- > 0;) roll_back(b, &ws[i], pod_name, uid);
    atomic_fetch_add(&b->failures, 1);
out:
    for (size_t i = 0; i < nw; i++) {
        free(ws[i].ns);
        free(ws[i].name);
        json_decref(ws[i].final);
    }
    free(ws);
    json_decref(plan);
    dra_pod_request_free(pr);
    dra_snapshot_release(s);
    pthread_mutex_unlock(&b->mu);
    json_decref(pod);
    return errmsg;
}
