/* evict.c — bind mode's opt-in preemption (evict.h: what, why, and the steps).
 *
 * Invariants (under mu): a pod UID is queued at most once; a UID taken off the queue
 * is in `tried` from then on (so a /filter that rejects it again while its preemption
 * runs queues nothing until retry_s passed, and by then the hold exists or the
 * preemption failed). A hold is put in the table before the first Eviction is sent, so
 * no /filter between two evictions gives the freed devices away. */
#include "extender/evict.h"

#include "base/base.h"
#include "base/clock.h"
#include "base/error.h"
#include "engine/preempt.h"
#include "extender/lease.h"
#include "extender/objcache.h"
#include "extender/requeue.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EV__QUEUE_MAX 256

typedef enum ev__kind { EV__PREEMPT, EV__RELEASE } ev__kind;

typedef struct ev__job {
    ev__kind kind;
    json_t *pod;                 /* preempt: the Pod as /filter saw it */
    json_t *nodes;               /* preempt: [node names] */
    ext_hold hold;               /* release: the hold (copy) */
    char why[128];               /* release: bound, expired, ... */
} ev__job;

struct ext_evictor {
    ext_kube *k;
    dra_store *st;
    ext_objcache *claims;
    ext_holds *holds;
    ext_evictor_opts o;
    char instance[128];          /* reportingInstance of the Events: the host name */
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    ev__job *q;
    size_t qn, qcap;
    json_t *tried;               /* uid → monotonic ns of the last try */
    uint64_t wake_ns;            /* when to wake the parked pods for a retry (0: no need) */
    bool stop, started;
    pthread_t th;
    _Atomic uint64_t preemptions, evictions, refused, released, restored, api_errors;
};

static void ev__log(const ext_evictor *ev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ev__log(const ext_evictor *ev, const char *fmt, ...) {
    if (ev->o.quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "preemption: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *jstr(const json_t *o, const char *a, const char *b) {
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

static void job_free(ev__job *j) {
    json_decref(j->pod);
    json_decref(j->nodes);
    ext_hold_clear(&j->hold);
}

/* ---- requests ---------------------------------------------------------------------------- */

/* One request; the answer's status (0: none) and, when wanted, its body parsed. The
 * message of a failure (the Status's message, else the transport's) goes to msg. */
static long ev__call(ext_evictor *ev, const char *method, const char *path, const json_t *body, const char *ctype,
                     json_t **out, char *msg, size_t nmsg) {
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    ext_kube_resp r = {0};
    err e;
    err_clear(&e);
    ext_kube_request(ev->k, method, path, text, ctype ? ctype : "application/json", &r, &e);
    free(text);
    json_t *doc = r.body ? json_loads(r.body, 0, NULL) : NULL;
    if (msg && nmsg) {
        const char *m = json_string_value(json_object_get(doc, "message"));
        snprintf(msg, nmsg, "%.250s", r.status ? (m ? m : (r.body ? r.body : "")) : e.msg);
    }
    if (r.status < 200 || r.status >= 300) atomic_fetch_add(&ev->api_errors, r.status == 404 ? 0 : 1);
    if (out) *out = doc;
    else json_decref(doc);
    free(r.body);
    return r.status;
}

/* A core/v1 Event on a pod (the simplest kind every client reads: kubectl describe). */
static void ev__event(ext_evictor *ev, const char *ns, const char *name, const char *uid, const char *type,
                      const char *reason, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void ev__event(ext_evictor *ev, const char *ns, const char *name, const char *uid, const char *type,
                      const char *reason, const char *fmt, ...) {
    char message[1024], ename[400], now[40], path[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    int64_t t = realtime_ns();
    snprintf(ename, sizeof ename, "%.240s.%llx", name, (unsigned long long)t);
    time_t s = (time_t)(t / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, s:{s:s}, s:s, s:s, "
                          "s:i, s:s, s:s}",
                          "apiVersion", "v1", "kind", "Event", "metadata", "name", ename, "namespace", ns,
                          "involvedObject", "apiVersion", "v1", "kind", "Pod", "namespace", ns, "name", name, "uid",
                          uid ? uid : "", "reason", reason, "message", message, "type", type, "source", "component",
                          "dralloc", "firstTimestamp", now, "lastTimestamp", now, "count", 1, "reportingComponent",
                          "dralloc", "reportingInstance", ev->instance);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", ns);
    char err_msg[300];
    long st = e ? ev__call(ev, "POST", path, e, NULL, NULL, err_msg, sizeof err_msg) : 0;
    if (st < 200 || st >= 300) ev__log(ev, "Event %s on pod %s/%s: HTTP %ld: %s", reason, ns, name, st, e ? err_msg : "");
    json_decref(e);
}

/* The hold's label and annotation on its pod (set: h; removed: NULL), with the pod's
 * UID as a precondition (a pod of the same name made since is not touched). */
static long ev__patch_hold(ext_evictor *ev, const char *ns, const char *name, const char *uid, const ext_hold *h,
                           char *msg, size_t nmsg) {
    char *ann = h ? ext_hold_annotation(h) : NULL;
    json_t *p = json_pack("{s:{s:s, s:{s:o}, s:{s:o}}}", "metadata", "uid", uid, "labels", EXT_HOLD_LABEL,
                          h ? json_string("true") : json_null(), "annotations", EXT_HOLD_ANNOTATION,
                          ann ? json_string(ann) : json_null());
    free(ann);
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    long st = ev__call(ev, "PATCH", path, p, "application/merge-patch+json", NULL, msg, nmsg);
    json_decref(p);
    return st;
}

/* Drops uid's hold: the node is open again to the pods /filter turned away from it,
 * which kube-scheduler may have parked on that answer with no event of its own to
 * come (the preemptor's binding may have reached it first): the requeue is told. */
static void ev__drop(ext_evictor *ev, const char *uid) {
    if (ext_holds_drop(ev->holds, uid)) ext_requeue_changed(ev->o.requeue, "a node hold released");
}

static void ev__release(ext_evictor *ev, const ext_hold *h, const char *why) {
    char msg[300];
    long st = ev__patch_hold(ev, h->ns, h->name, h->uid, NULL, msg, sizeof msg);
    atomic_fetch_add(&ev->released, 1);
    if (st == 404 || st == 409) return;   /* the pod is gone (or another of its name): nothing to say it to */
    if (st < 200 || st >= 300) ev__log(ev, "pod %s/%s: removing the hold: HTTP %ld: %s", h->ns, h->name, st, msg);
    ev__event(ev, h->ns, h->name, h->uid, "Normal", "PreemptionHoldReleased",
              "dralloc released the hold on node %s it kept for this pod since its preemption: %s", h->node, why);
    ev__log(ev, "pod %s/%s: hold on node %s released: %s", h->ns, h->name, h->node, why);
}

/* ---- one preemption ------------------------------------------------------------------------ */

static bool allocated_json(const json_t *c, const char *want_uid) {
    const char *uid = json_string_value(json_object_get(json_object_get(c, "metadata"), "uid"));
    return json_object_get(json_object_get(c, "status"), "allocation") && (!uid || !want_uid || !strcmp(uid, want_uid));
}

/* A claim as a room reads it (status.allocation and status.reservedFor), when the
 * snapshot has it allocated (one that is not frees nothing): the store's text of it
 * (serve --preempt-verb keeps it), else the watch's JSON — either may lag the
 * snapshot's allocation (a version the pending table held back, a bind's answer), and
 * a version without the allocation would leave its devices taken by nobody — else the
 * API server's. NULL: not allocated, or not readable. */
static json_t *ev__claim(ext_evictor *ev, dra_snapshot *snap, const char *ns, const char *name) {
    const char *want;
    json_t *c = NULL;
    if (!dra_room_claim_allocated(snap, ns, name, &want, &c)) return NULL;
    if (c && allocated_json(c, want)) return c;
    json_decref(c);
    c = ev->claims ? ext_objcache_copy(ev->claims, ns, name) : NULL;
    if (c && allocated_json(c, want)) return c;
    json_decref(c);
    char path[600], msg[300];
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns, name);
    c = NULL;
    long st = ev__call(ev, "GET", path, NULL, NULL, &c, msg, sizeof msg);
    if (st == 200 && allocated_json(c, want)) return c;
    if (st != 200 && st != 404) ev__log(ev, "reading ResourceClaim %s/%s: HTTP %ld: %s", ns, name, st, msg);
    json_decref(c);
    return NULL;
}

/* The pods bound to node, and their claims (allocated in snap), appended to items;
 * byname gets "ns/name" → uid. False when the list failed. */
static bool ev__node_pods(ext_evictor *ev, dra_snapshot *snap, const char *node, const char *self_uid, json_t *items,
                          json_t *byname, json_t *seen_claims, const json_t *going) {
    char path[600], msg[300];
    snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", node);
    json_t *list = NULL;
    long st = ev__call(ev, "GET", path, NULL, NULL, &list, msg, sizeof msg);
    if (st != 200 || !json_is_array(json_object_get(list, "items"))) {
        ev__log(ev, "listing the pods of node %s: HTTP %ld: %s", node, st, msg);
        json_decref(list);
        return false;
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(list, "items"), i, p) {
        const char *uid = jstr(p, "metadata", "uid"), *ns = jstr(p, "metadata", "namespace"),
                   *name = jstr(p, "metadata", "name");
        if (!name || !ns || (uid && self_uid && !strcmp(uid, self_uid))) continue;
        char key[600];
        snprintf(key, sizeof key, "%s/%s", ns, name);
        json_object_set_new(byname, key, json_string(uid ? uid : ""));
        json_object_set_new(p, "kind", json_string("Pod"));
        /* a victim of a hold is going, whatever the list says yet (it may be served from a
         * cache older than the eviction): never a victim twice, its devices promised */
        if (uid && json_object_get(going, uid) && !json_object_get(json_object_get(p, "metadata"), "deletionTimestamp"))
            json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp", json_string("1970-01-01T00:00:00Z"));
        json_array_append(items, p);
        json_t *names = json_array();
        dra_room_pod_claim_names(p, names);
        size_t j;
        json_t *nm;
        json_array_foreach(names, j, nm) {
            snprintf(key, sizeof key, "%s/%s", ns, json_string_value(nm));
            if (json_object_get(seen_claims, key)) continue;
            json_object_set_new(seen_claims, key, json_true());
            json_t *c = ev__claim(ev, snap, ns, json_string_value(nm));
            if (!c) continue;
            json_object_set_new(c, "kind", json_string("ResourceClaim"));
            json_array_append_new(items, c);
        }
        json_decref(names);
    }
    json_decref(list);
    return true;
}

/* "ns/a (priority 1), ns/b (priority 1)" of a candidate's victims. */
static void victims_text(const json_t *victims, char *buf, size_t n) {
    size_t i, at = 0;
    const json_t *v;
    buf[0] = '\0';
    json_array_foreach(victims, i, v) {
        if (at >= n) break;
        at += (size_t)snprintf(buf + at, n - at, "%s%s/%s (priority %lld)", i ? ", " : "",
                               json_string_value(json_object_get(v, "namespace")) ?: "",
                               json_string_value(json_object_get(v, "name")) ?: "",
                               (long long)json_integer_value(json_object_get(v, "priority")));
    }
}

static void devices_text(const json_t *devices, char *buf, size_t n) {
    size_t i, at = 0;
    const json_t *d;
    buf[0] = '\0';
    json_array_foreach(devices, i, d) {
        if (at >= n) break;
        at += (size_t)snprintf(buf + at, n - at, "%s%s/%s/%s", i ? ", " : "",
                               json_string_value(json_object_get(d, "driver")) ?: "",
                               json_string_value(json_object_get(d, "pool")) ?: "",
                               json_string_value(json_object_get(d, "device")) ?: "");
    }
}

/* The evictions of a hold made: true when every victim is gone or going. */
static bool ev__evict_all(ext_evictor *ev, const ext_hold *h, char *why, size_t nwhy) {
    size_t i, done = 0;
    const json_t *v;
    char evicted[600] = "";
    size_t at = 0;
    json_array_foreach(h->victims, i, v) {
        const char *ns = json_string_value(json_object_get(v, "namespace")), *name = json_string_value(json_object_get(v, "name")),
                   *uid = json_string_value(json_object_get(v, "uid"));
        json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1", "kind", "Eviction",
                                 "metadata", "name", name, "namespace", ns, "deleteOptions", "preconditions", "uid", uid);
        char path[600], msg[300];
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/eviction", ns, name);
        long st = ev__call(ev, "POST", path, body, NULL, NULL, msg, sizeof msg);
        json_decref(body);
        if (st >= 200 && st < 300) {
            atomic_fetch_add(&ev->evictions, 1);
            ev__event(ev, ns, name, uid, "Normal", "Preempted",
                      "Preempted by dralloc for pod %s/%s (priority %d) on node %s: it needs the devices this pod's "
                      "claims hold", h->ns, h->name, h->priority, h->node);
            ev__log(ev, "evicted %s/%s on node %s for %s/%s", ns, name, h->node, h->ns, h->name);
        } else {
            /* 404/409: gone already, or another pod of that name (the UID precondition) —
             * its devices are some other preemptor's or taken; what the room chose does
             * not hold any more: stop, and decide again later */
            snprintf(why, nwhy, "%s%s%sthe eviction of %s/%s was refused (HTTP %ld%s): %s", done ? "evicted " : "no pod evicted",
                     done ? evicted : "", "; ", ns, name, st,
                     st == 429 ? ", a PodDisruptionBudget" : st == 404 || st == 409 ? ", the pod is gone" : "", msg);
            return false;
        }
        if (at < sizeof evicted) at += (size_t)snprintf(evicted + at, sizeof evicted - at, "%s%s/%s", done ? ", " : "", ns, name);
        done++;
    }
    return true;
}

static void ev__preempt(ext_evictor *ev, const json_t *pod, const json_t *nodes) {
    const char *ns = jstr(pod, "metadata", "namespace") ?: "default", *name = jstr(pod, "metadata", "name"),
               *uid = jstr(pod, "metadata", "uid");
    int32_t prio = (int32_t)json_integer_value(json_object_get(json_object_get(pod, "spec"), "priority"));
    if (!name || !uid || ext_holds_has(ev->holds, uid)) return;
    /* the pod as it is now: queued behind other preemptions, it may have been bound
     * (devices came free), deleted, or given a hold by another replica since /filter */
    char path[600], msg[300];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    json_t *now = NULL;
    long gst = ev__call(ev, "GET", path, NULL, NULL, &now, msg, sizeof msg);
    const char *now_uid = jstr(now, "metadata", "uid"), *now_node = jstr(now, "spec", "nodeName");
    if (gst != 200 || !now_uid || strcmp(now_uid, uid) || (now_node && *now_node) ||
        json_object_get(json_object_get(now, "metadata"), "deletionTimestamp") ||
        json_object_get(json_object_get(json_object_get(now, "metadata"), "annotations"), EXT_HOLD_ANNOTATION)) {
        if (gst != 200 && gst != 404) ev__log(ev, "pod %s/%s: reading it: HTTP %ld: %s", ns, name, gst, msg);
        json_decref(now);
        return;
    }
    json_t *items = json_array(), *byname = json_object(), *seen = json_object(), *looked = json_object();
    json_t *self = now;
    json_object_set_new(self, "kind", json_string("Pod"));
    json_array_append_new(items, self);
    size_t i, listed = 0, max = ev->o.max_nodes ? ev->o.max_nodes : 16;
    const json_t *nd;
    dra_snapshot *snap = dra_store_acquire(ev->st);
    ext_hold *held;
    size_t nheld = ext_holds_list(ev->holds, &held);
    json_t *going = json_object();
    for (size_t k = 0; k < nheld; k++) {
        size_t vi;
        const json_t *v;
        json_array_foreach(held[k].victims, vi, v) if (json_string_value(json_object_get(v, "uid")))
            json_object_set_new(going, json_string_value(json_object_get(v, "uid")), json_true());
    }
    json_array_foreach(nodes, i, nd) {
        if (listed >= max) break;
        const char *node = json_string_value(nd);
        /* a held node is a candidate too: its victims are terminating, so the room
         * counts their devices as taken and picks other pods there, if any */
        if (!node) continue;
        if (snap && ev__node_pods(ev, snap, node, uid, items, byname, seen, going)) {
            listed++;
            json_object_set_new(looked, node, json_true());
        }
    }
    json_decref(seen);
    err e;
    err_clear(&e);
    dra_room *room = snap && listed ? dra_room_new(snap, items, &e) : NULL;
    /* what other preemptors' holds wait for is no room for this pod (unless it ranks
     * higher: /filter lets it through those holds) */
    json_decref(going);
    for (size_t k = 0; k < nheld; k++) {
        if (room && strcmp(held[k].uid, uid) && held[k].priority >= prio)
            dra_room_take(room, held[k].node, held[k].devices);
        ext_hold_clear(&held[k]);
    }
    free(held);
    /* the room decides every node of the snapshot; only those looked at count: another
     * node kube-scheduler did not send (its own filters failed it) is no fit as things
     * are (and without its pods listed, no victims there either) */
    for (size_t k = 0; room && k < dra_snapshot_nnodes(snap); k++) {
        const char *node = dra_snapshot_node_name(snap, k);
        if (node && !json_object_get(looked, node)) dra_room_take(room, node, NULL);
    }
    json_decref(looked);
    dra_room_status status = DRA_ROOM_ERROR;
    json_t *out = room ? dra_room_make(room, ns, name, &(dra_room_opts){.list = 8}, &status, &e) : NULL;
    /* the best candidate with a victim: on a held node the pod may fit with none (the
     * free devices there are promised to its holders), which is no room for it — as
     * kube-scheduler 1.37 drops a candidate without victims */
    const json_t *cand = NULL, *c0 = json_array_get(json_object_get(out, "candidates"), 0);
    for (size_t k = 0; !cand && k < json_array_size(json_object_get(out, "candidates")); k++) {
        const json_t *c = json_array_get(json_object_get(out, "candidates"), k);
        if (json_array_size(json_object_get(c, "victims"))) cand = c;
    }
    if (!listed) {
        ev__log(ev, "pod %s/%s: no node to look at (listing the pods failed)", ns, name);
    } else if (!out) {
        ev__log(ev, "pod %s/%s: %s", ns, name, e.msg);
    } else if (json_is_true(json_object_get(out, "fits")) || (status == DRA_ROOM_FOUND && !cand)) {
        ev__log(ev, "pod %s/%s fits node %s as things are%s: not preempting (asked again in %.0fs)", ns, name,
                json_string_value(json_object_get(c0, "node")) ?: "?",
                json_is_true(json_object_get(out, "fits")) ? "" : " (with devices held for others)", ev->o.retry_s);
        /* it fits as things are: devices came free (a pod left) that /filter has not
         * seen, or that a hold keeps for another pod (the binder's first fit may take
         * other devices than the room chose). Asked again after retry_s, if parked. */
        pthread_mutex_lock(&ev->mu);
        if (!ev->wake_ns) ev->wake_ns = monotonic_ns() + (uint64_t)(ev->o.retry_s * 1e9);
        pthread_mutex_unlock(&ev->mu);
    } else if (status != DRA_ROOM_FOUND || !cand) {
        char *o = json_dumps(out, JSON_COMPACT);
        ev__log(ev, "pod %s/%s: no candidate among %zu node(s), %zu objects: %.300s", ns, name, listed,
                json_array_size(items), o ? o : "");
        free(o);
        ev__event(ev, ns, name, uid, "Warning", "FailedPreemption",
                  "dralloc found no set of lower-priority pods on the %zu node(s) it looked at whose eviction frees "
                  "the devices this pod needs", listed);
    } else {
        ext_hold h = {.ns = (char *)ns, .name = (char *)name, .uid = (char *)uid,
                      .node = (char *)json_string_value(json_object_get(cand, "node")), .priority = prio,
                      .expires_ns = realtime_ns() + (int64_t)(ev->o.hold_s * 1e9), .since_ns = realtime_ns(),
                      .victims = json_array(), .devices = json_object_get(cand, "devices")};
        bool ok = h.node != NULL;
        const json_t *v;
        json_array_foreach(json_object_get(cand, "victims"), i, v) {
            char key[600];
            snprintf(key, sizeof key, "%s/%s", json_string_value(json_object_get(v, "namespace")) ?: "",
                     json_string_value(json_object_get(v, "name")) ?: "");
            const char *vu = json_string_value(json_object_get(byname, key));
            ok = ok && vu && *vu;
            json_array_append_new(h.victims, json_pack("{s:s?, s:s?, s:s?}", "namespace",
                                                       json_string_value(json_object_get(v, "namespace")), "name",
                                                       json_string_value(json_object_get(v, "name")), "uid", vu));
        }
        char vt[800], dt[800];
        victims_text(json_object_get(cand, "victims"), vt, sizeof vt);
        devices_text(h.devices, dt, sizeof dt);
        long st = ok ? ev__patch_hold(ev, ns, name, uid, &h, msg, sizeof msg) : 0;
        if (!ok) {
            ev__log(ev, "pod %s/%s: a victim without a UID on node %s: not preempting", ns, name, h.node ? h.node : "?");
        } else if (st < 200 || st >= 300) {
            ev__log(ev, "pod %s/%s: recording the hold: HTTP %ld: %s; not preempting", ns, name, st, msg);
        } else {
            ext_holds_put(ev->holds, &h);
            char why[1400];
            if (ev__evict_all(ev, &h, why, sizeof why)) {
                atomic_fetch_add(&ev->preemptions, 1);
                char exp[40];
                time_t s = (time_t)(h.expires_ns / 1000000000);
                struct tm tm;
                gmtime_r(&s, &tm);
                strftime(exp, sizeof exp, "%Y-%m-%dT%H:%M:%SZ", &tm);
                ev__event(ev, ns, name, uid, "Normal", "Preempting",
                          "dralloc evicted %s on node %s to free devices for this pod (%s); the node is held for it "
                          "until it binds, is deleted, or %s", vt, h.node, dt, exp);
            } else {
                atomic_fetch_add(&ev->refused, 1);
                ev__drop(ev, uid);
                pthread_mutex_lock(&ev->mu);
                ev->wake_ns = monotonic_ns() + (uint64_t)(ev->o.retry_s * 1e9);
                pthread_mutex_unlock(&ev->mu);
                ev__event(ev, ns, name, uid, "Warning", "FailedPreemption",
                          "dralloc preempting on node %s for this pod: %s; the hold is released, tried again in %.0fs",
                          h.node, why, ev->o.retry_s);
                ev__patch_hold(ev, ns, name, uid, NULL, msg, sizeof msg);
                ev__log(ev, "pod %s/%s on node %s: %s", ns, name, h.node, why);
            }
        }
        json_decref(h.victims);
    }
    json_decref(out);
    dra_room_free(room);
    if (snap) dra_snapshot_release(snap);
    json_decref(items);
    json_decref(byname);
}

/* ---- the holds, read back ------------------------------------------------------------------ */

static bool ev__leading(const ext_evictor *ev) { return !ev->o.lease || ext_lease_is_leader(ev->o.lease); }

static void ev__sync(ext_evictor *ev) {
    json_t *list = NULL;
    char msg[300];
    long st = ev__call(ev, "GET", "/api/v1/pods?labelSelector=" "dralloc.dev%2Fhold", NULL, NULL, &list, msg, sizeof msg);
    bool leading = ev__leading(ev);
    int64_t now = realtime_ns();
    json_t *seen = json_object();
    if (st == 200 && json_is_array(json_object_get(list, "items"))) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(list, "items"), i, p) {
            ext_hold h;
            if (!ext_hold_from_pod(p, &h)) continue;
            json_object_set_new(seen, h.uid, json_true());
            const char *node = jstr(p, "spec", "nodeName");
            const char *why = json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") ? "the pod is being deleted"
                              : node && *node                                                  ? "the pod is bound (seen on the API server)"
                              : h.expires_ns <= now                                            ? "it expired"
                                                                                               : NULL;
            if (why) {
                ev__drop(ev, h.uid);
                if (leading) ev__release(ev, &h, why);
            } else if (!ext_holds_has(ev->holds, h.uid)) {
                ext_holds_put(ev->holds, &h);
                atomic_fetch_add(&ev->restored, 1);
                ev__log(ev, "restored the hold of pod %s/%s on node %s", h.ns, h.name, h.node);
            }
            ext_hold_clear(&h);
        }
    } else {
        ev__log(ev, "listing the held pods: HTTP %ld: %s", st, msg);
    }
    /* the table's own: expired, or gone from a list that succeeded (after a grace: the
     * list may be served from a cache older than the hold's patch) */
    ext_hold *all;
    size_t n = ext_holds_list(ev->holds, &all);
    int64_t grace = (int64_t)((ev->o.sync_s * 2 + 1) * 1e9);
    for (size_t i = 0; i < n; i++) {
        bool expired = all[i].expires_ns <= now;
        bool gone = st == 200 && !json_object_get(seen, all[i].uid) && now - all[i].since_ns > grace;
        if (expired || gone) {
            ev__drop(ev, all[i].uid);
            if (expired && leading) ev__release(ev, &all[i], "it expired");
            else if (gone) ev__log(ev, "pod %s/%s: its hold is gone from the API (deleted): dropped", all[i].ns, all[i].name);
        }
        ext_hold_clear(&all[i]);
    }
    free(all);
    json_decref(seen);
    json_decref(list);
}

/* ---- the thread ------------------------------------------------------------------------------- */

static void *ev__run(void *arg) {
    ext_evictor *ev = arg;
    uint64_t next_sync = 0;
    pthread_mutex_lock(&ev->mu);
    while (!ev->stop) {
        uint64_t now = monotonic_ns();
        if (ev->qn) {
            ev__job j = ev->q[0];
            memmove(ev->q, ev->q + 1, --ev->qn * sizeof *ev->q);
            pthread_mutex_unlock(&ev->mu);
            if (j.kind == EV__PREEMPT) ev__preempt(ev, j.pod, j.nodes);
            else ev__release(ev, &j.hold, j.why);
            job_free(&j);
            pthread_mutex_lock(&ev->mu);
        } else if (ev->wake_ns && now >= ev->wake_ns) {
            ev->wake_ns = 0;
            pthread_mutex_unlock(&ev->mu);
            ext_requeue_changed(ev->o.requeue, "a refused preemption to try again");
            pthread_mutex_lock(&ev->mu);
        } else if (now >= next_sync) {
            pthread_mutex_unlock(&ev->mu);
            ev__sync(ev);
            /* a held pod parked by kube-scheduler after its last "no node" may hear no
             * event when its victims' devices come free (that came before it was parked,
             * or reached kube-scheduler before dralloc): wake the parked pods while holds
             * wait (requeue.h writes only when a pod was rejected since its last write) */
            if (ext_holds_count(ev->holds)) ext_requeue_changed(ev->o.requeue, "pods hold nodes for their devices");
            pthread_mutex_lock(&ev->mu);
            next_sync = monotonic_ns() + (uint64_t)(ev->o.sync_s * 1e9);
        } else {
            uint64_t at = ev->wake_ns && ev->wake_ns < next_sync ? ev->wake_ns : next_sync;
            struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
            pthread_cond_timedwait(&ev->cv, &ev->mu, &ts);
        }
    }
    pthread_mutex_unlock(&ev->mu);
    return NULL;
}

ext_evictor *ext_evictor_start(ext_kube *k, dra_store *st, ext_objcache *claims, ext_holds *holds,
                               const ext_evictor_opts *o) {
    assert(k && st && holds);
    ext_evictor *ev = xcalloc(1, sizeof *ev);
    ev->k = k, ev->st = st, ev->claims = claims, ev->holds = holds;
    ev->o = o ? *o : (ext_evictor_opts){0};
    if (ev->o.hold_s <= 0) ev->o.hold_s = 300;
    if (ev->o.sync_s <= 0) ev->o.sync_s = 5;
    if (ev->o.retry_s <= 0) ev->o.retry_s = 10;
    if (!ev->o.max_nodes) ev->o.max_nodes = 16;
    if (gethostname(ev->instance, sizeof ev->instance - 1) != 0) snprintf(ev->instance, sizeof ev->instance, "dralloc");
    ev->tried = json_object();
    pthread_mutex_init(&ev->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ev->cv, &ca);
    pthread_condattr_destroy(&ca);
    ev->started = pthread_create(&ev->th, NULL, ev__run, ev) == 0;
    return ev;
}

void ext_evictor_stop(ext_evictor *ev) {
    if (!ev) return;
    pthread_mutex_lock(&ev->mu);
    ev->stop = true;
    pthread_cond_broadcast(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
    if (ev->started) pthread_join(ev->th, NULL);
    for (size_t i = 0; i < ev->qn; i++) job_free(&ev->q[i]);
    free(ev->q);
    json_decref(ev->tried);
    pthread_cond_destroy(&ev->cv);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

static void push_locked(ext_evictor *ev, const ev__job *j) {
    if (ev->qn == ev->qcap) ev->q = xrealloc(ev->q, (ev->qcap = ev->qcap ? 2 * ev->qcap : 16) * sizeof *ev->q);
    ev->q[ev->qn++] = *j;
    pthread_cond_signal(&ev->cv);
}

void ext_evictor_rejected(ext_evictor *ev, const json_t *pod, const char *const *nodes, size_t n) {
    if (!ev || !pod || !n) return;
    const json_t *spec = json_object_get(pod, "spec");
    const char *uid = jstr(pod, "metadata", "uid"), *policy = json_string_value(json_object_get(spec, "preemptionPolicy"));
    json_int_t prio = json_integer_value(json_object_get(spec, "priority"));
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    if (!uid || prio <= 0 || (policy && !strcmp(policy, "Never")) || json_object_get(ann, EXT_HOLD_ANNOTATION) ||
        ext_holds_has(ev->holds, uid))
        return;
    uint64_t now = monotonic_ns();
    pthread_mutex_lock(&ev->mu);
    const json_t *t = json_object_get(ev->tried, uid);
    bool queued = false;
    for (size_t i = 0; i < ev->qn && !queued; i++)
        queued = ev->q[i].kind == EV__PREEMPT && !strcmp(jstr(ev->q[i].pod, "metadata", "uid") ?: "", uid);
    bool recent = t && now - (uint64_t)json_integer_value(t) < (uint64_t)(ev->o.retry_s * 1e9);
    if (!queued && !recent && ev->qn < EV__QUEUE_MAX) {
        ev__job j = {.kind = EV__PREEMPT, .pod = json_deep_copy(pod), .nodes = json_array()};
        for (size_t i = 0; i < n; i++)
            if (nodes[i]) json_array_append_new(j.nodes, json_string(nodes[i]));
        json_object_set_new(ev->tried, uid, json_integer((json_int_t)now));
        /* forget old tries: the map stays as small as the pods tried within retry_s */
        if (json_object_size(ev->tried) > 4 * EV__QUEUE_MAX) {
            const char *k;
            json_t *v, *tmp;
            json_object_foreach_safe(ev->tried, tmp, k, v) if (now - (uint64_t)json_integer_value(v) >=
                                                               (uint64_t)(ev->o.retry_s * 1e9)) json_object_del(ev->tried, k);
        }
        push_locked(ev, &j);
    }
    pthread_mutex_unlock(&ev->mu);
}

void ext_evictor_bound(ext_evictor *ev, const char *uid) {
    if (!ev || !uid) return;
    ext_hold h;
    if (!ext_holds_get(ev->holds, uid, &h)) return;
    ev__drop(ev, uid);
    ev__job j = {.kind = EV__RELEASE, .hold = h};
    snprintf(j.why, sizeof j.why, "the pod is bound (its /bind succeeded)");
    pthread_mutex_lock(&ev->mu);
    push_locked(ev, &j);
    pthread_mutex_unlock(&ev->mu);
}

void ext_evictor_stats_of(ext_evictor *ev, ext_evictor_stats *out) {
    *out = (ext_evictor_stats){.preemptions = atomic_load(&ev->preemptions), .evictions = atomic_load(&ev->evictions),
                               .refused = atomic_load(&ev->refused), .released = atomic_load(&ev->released),
                               .restored = atomic_load(&ev->restored), .api_errors = atomic_load(&ev->api_errors)};
}

json_t *ext_evictor_status_json(ext_evictor *ev) {
    ext_evictor_stats s;
    ext_evictor_stats_of(ev, &s);
    return json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I}", "holds", ext_holds_json(ev->holds), "preemptions",
                     (json_int_t)s.preemptions, "evictions", (json_int_t)s.evictions, "refused", (json_int_t)s.refused,
                     "released", (json_int_t)s.released, "restored", (json_int_t)s.restored, "apiErrors",
                     (json_int_t)s.api_errors);
}
