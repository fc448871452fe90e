/* requeue.c — bind mode's wake-up write (requeue.h: why it exists, when it writes).
 *
 * Invariants (under mu):
 *   - wanted implies a change came after some rejection newer than last_write: a write
 *     then wakes at least one pod that could be parked on an answer older than the
 *     change;
 *   - last_write is set before the write is sent, so a pod rejected while the write is
 *     on its way is rejected after last_write and counts for the next one (never lost);
 *   - at most one write per interval: the thread sleeps until last_write + interval;
 *   - no wake-up lost between an answer and a change: ext_requeue_changed stores
 *     last_change_ns before it reads last_reject_ns, ext_requeue_rejected stores
 *     last_reject_ns before it reads last_change_ns (both sequentially consistent), so
 *     for a change made while an answer was being decided at least one of the two sees
 *     the other and asks for the write. Without it a pod answered "no" on a snapshot
 *     from before the last change, rejected after that change was told, stayed parked
 *     for kube-scheduler's 5 minutes (tests/e2e preempt on a slow machine: 8 of 32 pods
 *     pending after the claims of the pods before them were deleted). */
#include "extender/requeue.h"

#include "base/base.h"
#include "base/clock.h"
#include "base/error.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RQ__ANNOTATION "dralloc.dev/requeue"

struct ext_requeue {
    ext_kube *k;                 /* NULL: never writes (tests) */
    char *ns, *name;
    double interval_s, parked_s;
    bool quiet;
    _Atomic uint64_t last_reject_ns;   /* the newest /filter with no node (0: none yet) */
    _Atomic uint64_t last_change_ns;   /* the newest ext_requeue_changed (0: none yet) */
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    uint64_t last_write_ns;      /* when the last write was sent (0: never) */
    bool wanted, stop;
    char why[128];               /* the change behind the wanted write */
    char last_why[128];          /* behind the last write sent */
    long last_failed_status;     /* the last failure's status, logged once (0: none; -1: no answer) */
    _Atomic uint64_t writes, failures;
    pthread_t th;
    bool started;
};

static uint64_t rq__now_ns(void) { return monotonic_ns(); }

static void rq__log(const ext_requeue *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rq__log(const ext_requeue *r, const char *fmt, ...) {
    if (r->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "requeue: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The annotation's value: a count (so that every write changes the object: an update
 * that changes nothing makes no event) and the change that asked for it. */
static json_t *rq__annotations(uint64_t n, const char *why) {
    char v[200];
    snprintf(v, sizeof v, "%llu: %s", (unsigned long long)n, why);
    return json_pack("{s:s}", RQ__ANNOTATION, v);
}

static char *rq__claim_json(const ext_requeue *r, uint64_t n, const char *why) {
    json_t *ann = rq__annotations(n, why);
    json_object_set_new(ann, "dralloc.dev/purpose",
                        json_string("allocates nothing: dralloc --bind updates it to requeue the pods kube-scheduler "
                                    "parked after dralloc's /filter found no node, when devices may have become free"));
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, s:{s:{}}}", "apiVersion", "resource.k8s.io/v1",
                          "kind", "ResourceClaim", "metadata", "name", r->name, "namespace", r->ns, "labels",
                          "app.kubernetes.io/managed-by", "dralloc", "annotations", ann, "spec", "devices");
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* One status the log has not shown yet, once; a success after failures says so. */
static void rq__outcome(ext_requeue *r, long status, const char *what, const char *body) {
    if (status >= 200 && status < 300) {
        if (r->last_failed_status) rq__log(r, "ResourceClaim %s/%s: %s again", r->ns, r->name, what);
        r->last_failed_status = 0;
        return;
    }
    atomic_fetch_add(&r->failures, 1);
    long key = status ? status : -1;
    if (key == r->last_failed_status) return;
    r->last_failed_status = key;
    rq__log(r, "ResourceClaim %s/%s: %s failed (%s%ld): %.300s; pods parked on dralloc's answers wait for "
               "kube-scheduler's own retry (at most 5 minutes)", r->ns, r->name, what, status ? "HTTP " : "no answer ",
            status, body ? body : "");
}

/* The write itself: a merge patch of the annotation; the claim created when missing. */
static void rq__write(ext_requeue *r, uint64_t n, const char *why) {
    char path[600];
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", r->ns, r->name);
    json_t *patch = json_pack("{s:{s:o}}", "metadata", "annotations", rq__annotations(n, why));
    char *body = json_dumps(patch, JSON_COMPACT);
    json_decref(patch);
    ext_kube_resp resp = {0};
    err e;
    err_clear(&e);
    ext_kube_request(r->k, "PATCH", path, body, "application/merge-patch+json", &resp, &e);
    free(body);
    if (resp.status == 404) {
        free(resp.body);
        resp = (ext_kube_resp){0};
        snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", r->ns);
        body = rq__claim_json(r, n, why);
        ext_kube_request(r->k, "POST", path, body, "application/json", &resp, &e);
        free(body);
        rq__outcome(r, resp.status, "create", resp.body ? resp.body : e.msg);
    } else {
        rq__outcome(r, resp.status, "update", resp.body ? resp.body : e.msg);
    }
    if (resp.status >= 200 && resp.status < 300) atomic_fetch_add(&r->writes, 1);
    free(resp.body);
}

static void *rq__run(void *arg) {
    ext_requeue *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->wanted && !r->stop) pthread_cond_wait(&r->cv, &r->mu);
        if (r->stop) break;
        /* coalesce: not before last_write + interval */
        uint64_t at = r->last_write_ns ? r->last_write_ns + (uint64_t)(r->interval_s * 1e9) : 0;
        while (!r->stop && rq__now_ns() < at) {
            struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        }
        if (r->stop) break;
        r->wanted = false;
        r->last_write_ns = rq__now_ns();
        char why[sizeof r->why];
        memcpy(why, r->why, sizeof why);
        memcpy(r->last_why, why, sizeof why);
        uint64_t n = atomic_load(&r->writes) + atomic_load(&r->failures) + 1;
        pthread_mutex_unlock(&r->mu);
        rq__write(r, n, why);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

ext_requeue *ext_requeue_start(ext_kube *k, const ext_requeue_opts *o) {
    assert(o && o->ns && *o->ns);
    ext_requeue *r = xcalloc(1, sizeof *r);
    r->k = k;
    r->ns = xstrdup(o->ns);
    r->name = xstrdup(o->name && *o->name ? o->name : "dralloc-requeue");
    r->interval_s = o->interval_s > 0 ? o->interval_s : 1;
    r->parked_s = o->parked_s > 0 ? o->parked_s : 300;
    r->quiet = o->quiet;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (k) r->started = pthread_create(&r->th, NULL, rq__run, r) == 0;
    return r;
}

void ext_requeue_stop(ext_requeue *r) {
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (r->started) pthread_join(r->th, NULL);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r->ns);
    free(r->name);
    free(r);
}

/* Under mu: a write is wanted for why (the first reason since the last write stays). */
static void rq__want(ext_requeue *r, const char *why) {
    if (!r->wanted) snprintf(r->why, sizeof r->why, "%s", why ? why : "a change");
    r->wanted = true;
    pthread_cond_signal(&r->cv);
}

void ext_requeue_rejected(ext_requeue *r, uint64_t since_ns) {
    if (!r) return;
    atomic_store(&r->last_reject_ns, rq__now_ns());
    uint64_t ch = atomic_load(&r->last_change_ns);
    if (!ch || ch < since_ns) return;   /* every change told is in the answer's snapshot */
    pthread_mutex_lock(&r->mu);
    rq__want(r, "a change while a /filter found no node");
    pthread_mutex_unlock(&r->mu);
}

void ext_requeue_changed(ext_requeue *r, const char *why) {
    if (!r) return;
    atomic_store(&r->last_change_ns, rq__now_ns());
    uint64_t rej = atomic_load(&r->last_reject_ns), now = rq__now_ns();
    if (!rej || now - rej > (uint64_t)(r->parked_s * 1e9)) return;   /* nobody parked on our word */
    pthread_mutex_lock(&r->mu);
    if (rej > r->last_write_ns) rq__want(r, why);   /* rejected since the last write: not woken yet */
    pthread_mutex_unlock(&r->mu);
}

bool ext_requeue_frees(const ext_requeue *r, const char *kind, const json_t *obj, const char *ns, const char *name) {
    if (!r || !kind) return false;
    if (!strcmp(kind, "ResourceSlice")) return obj != NULL;   /* a slice gone frees nothing */
    if (!strcmp(kind, "DeviceTaintRule")) return true;        /* a taint changed or lifted */
    if (strcmp(kind, "ResourceClaim")) return false;
    if (obj) {
        const json_t *md = json_object_get(obj, "metadata");
        ns = json_string_value(json_object_get(md, "namespace"));
        name = json_string_value(json_object_get(md, "name"));
    }
    if (ns && name && !strcmp(ns, r->ns) && !strcmp(name, r->name)) return false;   /* our own write */
    return !obj || !json_object_get(json_object_get(obj, "status"), "allocation");
}

json_t *ext_requeue_status_json(ext_requeue *r) {
    char claim[600];
    snprintf(claim, sizeof claim, "%s/%s", r->ns, r->name);
    pthread_mutex_lock(&r->mu);
    json_t *o = json_pack("{s:s, s:I, s:I, s:s}", "claim", claim, "writes", (json_int_t)atomic_load(&r->writes), "failures",
                          (json_int_t)atomic_load(&r->failures), "lastWhy", r->last_why);
    pthread_mutex_unlock(&r->mu);
    return o;
}

uint64_t ext_requeue_writes(ext_requeue *r) {
    return r ? atomic_load(&r->writes) : 0;
}
