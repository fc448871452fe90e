/* live_pending.c — bind mode while the watch lags behind the binder's own writes
 * (extender/pending.h), against the fake kube-apiserver with its ResourceClaim watch
 * events held back and released one at a time (a lagging watch cache):
 *
 *   1. stale events: pod A binds on a one-GPU node while the claim events are held;
 *      the events then arrive one by one — first its finalizer update (no allocation
 *      yet), then its status update. After each one a second pod that needs that GPU
 *      must not pass /filter on the node, and its /bind must fail, not double-book.
 *      (Without the pending-writes table, the finalizer event puts the unallocated
 *      claim back into the store and the second pod binds: the same GPU twice.)
 *   2. once everything is delivered the store answers as a fresh store of the
 *      server's objects does, and no mark is left;
 *   3. the timeout: the events of our write are lost to a relist whose list already
 *      shows a newer version by somebody else (the claim deallocated); the store keeps
 *      ours (the list might have predated our write) until the mark times out, then
 *      the watch's version wins;
 *   4. relists while a mark is pending: a list from before our write (the watch
 *      cache lags) keeps ours and the mark, the held events then clear it; a list that
 *      shows our write clears the mark at once; a claim we created that a lagging list
 *      does not show yet stays;
 *   5. events before answers: the server answers each claim write only after its
 *      watch event went out; no mark is left behind for an event already passed (a
 *      later change by somebody else shows at once, not after the timeout);
 *   6. a claim our failed bind created and deleted again does not come back with the
 *      held events of its short life (its devices are free after each of them).
 * Each part has its own store, pending table, watch, binder and service. */
#include "tests/live/live.h"

#include "engine/engine.h"
#include "extender/bind.h"
#include "extender/extender.h"
#include "extender/pending.h"
#include "extender/watch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef live_env env;

static void env_start(env *e, fake_api *f, ext_kube *k, double timeout_s, bool paged) {
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    json_t *t = live_templates();
    err er;
    err_clear(&er);
    dra_store_apply_json(st, t, &er);
    json_decref(t);
    ext_watch_opts wo = {.max_staleness_s = 10, .page_limit = 50, .idle_s = 3, .watch_timeout_s = 30,
                         .backoff_max_s = 0.5, .quiet = live_quiet(), .verbose = true, .no_watch_list = paged};
    live_env_start(e, k, st, timeout_s, &wo, "pending");
    live_converge(f, e->st, "pending: the first list");
}

static void env_stop(env *e) { live_env_stop(e); }

/* ---- objects --------------------------------------------------------------------------------- */

static void one_gpu_node(fake_api *f, const char *node) {
    char sl[64];
    snprintf(sl, sizeof sl, "%s-gpus", node);
    fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", node));
    fake_put(f, "resourceslices", live_slice(sl, node, 1, "H100"));
}

/* An unallocated one-GPU claim and a pod using it (pod "<name>", claim "<name>-claim"). */
static json_t *pod_with_claim(fake_api *f, const char *name) {
    char claim[64], uid[64];
    snprintf(claim, sizeof claim, "%s-claim", name);
    snprintf(uid, sizeof uid, "%s-uid", name);
    fake_put(f, "resourceclaims",
             json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "metadata", "name", claim, "namespace", "ml",
                       "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com",
                       "count", 1));
    json_t *pod = json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s}], s:[{s:s, s:s}]}}", "metadata", "name", name, "namespace",
                            "ml", "uid", uid, "spec", "containers", "name", "main", "resourceClaims", "name", "g",
                            "resourceClaimName", claim);
    fake_put_pod(f, json_deep_copy(pod));
    return pod;
}

static json_t *server_claim(fake_api *f, const char *name) {
    json_t *all = fake_objects(f, "resourceclaims"), *found = NULL;
    for (size_t i = 0; i < json_array_size(all) && !found; i++) {
        json_t *c = json_array_get(all, i);
        if (!strcmp(json_string_value(json_object_get(json_object_get(c, "metadata"), "name")) ?: "", name))
            found = json_incref(c);
    }
    json_decref(all);
    return found;
}

static bool allocated_on_server(fake_api *f, const char *claim) {
    json_t *c = server_claim(f, claim);
    bool a = json_object_get(json_object_get(c, "status"), "allocation") != NULL;
    json_decref(c);
    return a;
}

/* ---- what the extender says ------------------------------------------------------------------ */

/* Whether /filter passes `node` for the pod. */
static bool passes(env *e, const json_t *pod, const char *node) {
    json_t *args = json_pack("{s:O, s:n, s:[s]}", "Pod", pod, "Nodes", "NodeNames", node);
    char *body = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    ext_reply r;
    ext_service_handle(e->svc, "POST", "/filter", body, strlen(body), &r);
    free(body);
    json_t *j = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    CHECK(j, "pending: /filter answered %d %.*s", r.status, (int)r.len, r.body);
    bool pass = false;
    const json_t *names = json_object_get(j, "NodeNames");
    for (size_t i = 0; i < json_array_size(names); i++)
        if (!strcmp(json_string_value(json_array_get(names, i)) ?: "", node)) pass = true;
    json_decref(j);
    ext_reply_free(&r);
    return pass;
}

/* The ResourceClaim watch's status field (an integer). */
static long long claim_status(env *e, const char *field) {
    json_t *s = ext_watch_status_json(e->w);
    long long v = json_integer_value(json_object_get(json_object_get(s, "ResourceClaim"), field));
    json_decref(s);
    return v;
}

typedef struct rv_wait {
    env *e;
    long rv;
} rv_wait;

/* The claim watch has the event of rv in the store (or skipped it): its status
 * resourceVersion is recorded once the chunk is flushed. */
static bool at_rv(void *arg) {
    rv_wait *w = arg;
    json_t *s = ext_watch_status_json(w->e->w);
    const char *rv = json_string_value(json_object_get(json_object_get(s, "ResourceClaim"), "resourceVersion"));
    bool at = rv && strtol(rv, NULL, 10) >= w->rv;
    json_decref(s);
    return at;
}

/* The second pod (pod_b, needing the node's only GPU) neither passes /filter on node
 * (sampled a few times over 100 ms) nor binds there. */
static void no_double_booking(fake_api *f, env *e, const json_t *pod_b, const char *node, const char *when) {
    const json_t *m = json_object_get(pod_b, "metadata");
    const char *name = json_string_value(json_object_get(m, "name")), *uid = json_string_value(json_object_get(m, "uid"));
    int passed = 0;
    for (int i = 0; i < 5; i++) {
        passed += passes(e, pod_b, node);
        usleep(20000);
    }
    CHECK(!passed, "pending, %s: %s passes /filter on %s (%d of 5 samples), whose only GPU is allocated", when, name, node,
          passed);
    char *err = ext_bind(e->b, "ml", name, uid, node);
    CHECK(err != NULL, "pending, %s: %s bound on %s, whose only GPU is allocated: double-booked", when, name, node);
    free(err);
    char claim[64];
    snprintf(claim, sizeof claim, "%s-claim", name);
    CHECK(!allocated_on_server(f, claim), "pending, %s: %s's claim got allocated", when, name);
}

/* Releases the held claim events one by one; after each, no double booking. */
static void release_one_by_one(fake_api *f, env *e, int n, const json_t *pod_b, const char *node, const char *what) {
    for (int i = 0; i < n; i++) {
        json_t *obj = NULL;
        const char *type = "";
        long rv = fake_release_watch_event(f, "resourceclaims", &obj, &type);
        CHECK(rv, "%s: no held event %d", what, i + 1);
        if (!rv) break;
        const json_t *meta = json_object_get(obj, "metadata");
        char when[300];
        snprintf(when, sizeof when, "%s, after event %d of %d (%s %s rv %ld, %s)", what, i + 1, n, type,
                 json_string_value(json_object_get(meta, "name")) ?: "?", rv,
                 json_object_get(json_object_get(obj, "status"), "allocation") ? "allocated" : "not allocated");
        json_decref(obj);
        rv_wait rw = {e, rv};
        CHECK(live_wait(10, at_rv, &rw), "%s: the watch never got there", when);
        no_double_booking(f, e, pod_b, node, when);
    }
}

typedef struct fit_wait {
    env *e;
    const json_t *pod;
    const char *node;
} fit_wait;

static bool fits_now(void *arg) {
    fit_wait *w = arg;
    return passes(w->e, w->pod, w->node);
}

static bool no_marks(void *arg) { return claim_status(arg, "pendingWrites") == 0; }

/* ---- 1, 2: stale events -------------------------------------------------------------------------- */

static void stale_events(fake_api *f, env *e) {
    one_gpu_node(f, "pend-a");
    json_t *a = pod_with_claim(f, "pend-pod-a"), *b = pod_with_claim(f, "pend-pod-b");
    live_converge(f, e->st, "pending: stale events: set-up");
    long long skipped0 = claim_status(e, "staleSkipped");

    fake_hold_watch(f, "resourceclaims", true);
    char *err = ext_bind(e->b, "ml", "pend-pod-a", "pend-pod-a-uid", "pend-a");
    CHECK(!err, "pending: stale events: bind pend-pod-a: %s", err);
    free(err);
    int held = fake_held_events(f, "resourceclaims");
    CHECK(held == 2, "pending: stale events: %d claim events held, want 2 (finalizer, status)", held);
    CHECK(claim_status(e, "pendingWrites") == 1, "pending: stale events: %lld marks, want 1",
          claim_status(e, "pendingWrites"));
    no_double_booking(f, e, b, "pend-a", "stale events, before any event");
    release_one_by_one(f, e, held, b, "pend-a", "stale events");
    fake_hold_watch(f, "resourceclaims", false);

    /* 2: all delivered: no mark left, the finalizer event skipped, the store as the
     * server's objects say */
    CHECK(live_wait(5, no_marks, e), "pending: stale events: %lld marks left", claim_status(e, "pendingWrites"));
    CHECK(claim_status(e, "staleSkipped") > skipped0, "pending: stale events: nothing counted as skipped");
    live_converge(f, e->st, "pending: stale events: after the held events");
    json_t *pa = fake_pod(f, "ml", "pend-pod-a");
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(pa, "spec"), "nodeName")) ?: "", "pend-a"),
          "pending: pend-pod-a is not bound to pend-a");
    json_decref(pa);
    /* and the metric */
    ext_reply r;
    ext_service_handle(e->svc, "GET", "/metrics", NULL, 0, &r);
    const char *m = r.body ? strstr(r.body, "\ndralloc_watch_stale_events_skipped_total ") : NULL;
    CHECK(m && strtoll(m + strlen("\ndralloc_watch_stale_events_skipped_total "), NULL, 10) >= 1,
          "pending: /metrics lacks dralloc_watch_stale_events_skipped_total >= 1");
    ext_reply_free(&r);
    json_decref(a);
    json_decref(b);
}

/* ---- 4: relists while a mark is pending ----------------------------------------------------------- */

/* The list predates our write (the lagging cache serves it): ours stays, the mark too,
 * until the held events come. */
static void relist_before_write(fake_api *f, env *e) {
    one_gpu_node(f, "pend-e");
    json_t *pe = pod_with_claim(f, "pend-pod-e"), *pf = pod_with_claim(f, "pend-pod-f");
    live_converge(f, e->st, "pending: old relist: set-up");
    fake_hold_watch(f, "resourceclaims", true);
    char *err = ext_bind(e->b, "ml", "pend-pod-e", "pend-pod-e-uid", "pend-e");
    CHECK(!err, "pending: old relist: bind pend-pod-e: %s", err);
    free(err);
    int held = fake_held_events(f, "resourceclaims");
    uint64_t relists = ext_watch_relists(e->w);
    fake_gone_watches(f, "resourceclaims");
    CHECK(live_wait_relist(e->w, relists, 10), "pending: old relist: no relist after 410");
    CHECK(claim_status(e, "pendingWrites") == 1, "pending: old relist: %lld marks after the relist, want 1",
          claim_status(e, "pendingWrites"));
    no_double_booking(f, e, pf, "pend-e", "a relist from before the write");
    release_one_by_one(f, e, held, pf, "pend-e", "old relist");
    fake_hold_watch(f, "resourceclaims", false);
    CHECK(live_wait(5, no_marks, e), "pending: old relist: %lld marks left", claim_status(e, "pendingWrites"));
    live_converge(f, e->st, "pending: old relist: after the held events");
    json_decref(pe);
    json_decref(pf);
}

/* The list shows our write (its events never come on a stream): the mark goes at once. */
static void relist_after_write(fake_api *f, env *e) {
    one_gpu_node(f, "pend-g");
    json_t *pg = pod_with_claim(f, "pend-pod-g"), *ph = pod_with_claim(f, "pend-pod-h");
    live_converge(f, e->st, "pending: new relist: set-up");
    fake_hold_watch(f, "resourceclaims", true);
    char *err = ext_bind(e->b, "ml", "pend-pod-g", "pend-pod-g-uid", "pend-g");
    CHECK(!err, "pending: new relist: bind pend-pod-g: %s", err);
    free(err);
    CHECK(claim_status(e, "pendingWrites") == 1, "pending: new relist: %lld marks, want 1", claim_status(e, "pendingWrites"));
    uint64_t relists = ext_watch_relists(e->w);
    fake_release_by_relist(f, "resourceclaims");
    CHECK(live_wait_relist(e->w, relists, 10), "pending: new relist: no relist after 410");
    CHECK(claim_status(e, "pendingWrites") == 0, "pending: new relist: %lld marks after a list with our version, want 0",
          claim_status(e, "pendingWrites"));
    no_double_booking(f, e, ph, "pend-g", "a relist showing the write");
    live_converge(f, e->st, "pending: new relist");
    json_decref(pg);
    json_decref(ph);
}

/* A claim we created (DRA extended resource) that a lagging list does not show yet. */
static void relist_before_create(fake_api *f, env *e) {
    fake_put(f, "deviceclasses", json_pack("{s:{s:s}, s:{s:[{s:{s:s}}], s:s}}", "metadata", "name", "pgpu.example.com",
                                            "spec", "selectors", "cel", "expression",
                                            "device.driver == 'gpu.example.com'", "extendedResourceName",
                                            "example.com/pgpu"));
    one_gpu_node(f, "pend-x");
    fake_put_pod(f, json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name", "pend-pod-x",
                              "namespace", "ml", "uid", "pend-pod-x-uid", "spec", "containers", "name", "main",
                              "resources", "requests", "example.com/pgpu", "1"));
    json_t *py = pod_with_claim(f, "pend-pod-y");
    live_converge(f, e->st, "pending: relist without the created claim: set-up");
    fake_hold_watch(f, "resourceclaims", true);
    char *err = ext_bind(e->b, "ml", "pend-pod-x", "pend-pod-x-uid", "pend-x");
    CHECK(!err, "pending: relist without the created claim: bind pend-pod-x: %s", err);
    free(err);
    int held = fake_held_events(f, "resourceclaims");
    CHECK(held == 3, "pending: relist without the created claim: %d events held, want 3 (create, finalizer, status)",
          held);
    uint64_t relists = ext_watch_relists(e->w);
    fake_gone_watches(f, "resourceclaims");
    CHECK(live_wait_relist(e->w, relists, 10), "pending: relist without the created claim: no relist after 410");
    CHECK(claim_status(e, "pendingWrites") == 1, "pending: relist without the created claim: %lld marks, want 1",
          claim_status(e, "pendingWrites"));
    no_double_booking(f, e, py, "pend-x", "a relist without the created claim");
    release_one_by_one(f, e, held, py, "pend-x", "relist without the created claim");
    fake_hold_watch(f, "resourceclaims", false);
    CHECK(live_wait(5, no_marks, e), "pending: relist without the created claim: %lld marks left",
          claim_status(e, "pendingWrites"));
    live_converge(f, e->st, "pending: relist without the created claim: after the held events");
    json_decref(py);
}

/* ---- 5, 6: events before answers, a deleted claim ------------------------------------------------- */

static void events_before_answers(fake_api *f, env *e) {
    one_gpu_node(f, "pend-s");
    json_t *ps = pod_with_claim(f, "pend-pod-s"), *pt = pod_with_claim(f, "pend-pod-t");
    live_converge(f, e->st, "pending: events before answers: set-up");
    long long seen0 = claim_status(e, "writesSeenFirst");
    fake_slow_claim_answers(f, 300);
    char *err = ext_bind(e->b, "ml", "pend-pod-s", "pend-pod-s-uid", "pend-s");
    fake_slow_claim_answers(f, 0);
    CHECK(!err, "pending: events before answers: bind pend-pod-s: %s", err);
    free(err);
    CHECK(claim_status(e, "writesSeenFirst") > seen0, "pending: events before answers: no write seen first");
    CHECK(claim_status(e, "pendingWrites") == 0, "pending: events before answers: %lld marks left for events passed",
          claim_status(e, "pendingWrites"));
    no_double_booking(f, e, pt, "pend-s", "events before answers");
    /* somebody frees the claim: seen at once, no mark holds it back */
    json_t *c = server_claim(f, "pend-pod-s-claim");
    json_object_del(c, "status");
    fake_put(f, "resourceclaims", c);
    fit_wait fw = {e, pt, "pend-s"};
    CHECK(live_wait(5, fits_now, &fw), "pending: events before answers: the claim freed by somebody else is not seen");
    live_converge(f, e->st, "pending: events before answers");
    json_decref(ps);
    json_decref(pt);
}

/* Needs the example.com/pgpu DeviceClass of relist_before_create. */
static void deleted_stays_gone(fake_api *f, env *e) {
    one_gpu_node(f, "pend-z");
    fake_put_pod(f, json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:{s:{s:s}}}]}}", "metadata", "name", "pend-pod-z",
                              "namespace", "ml", "uid", "pend-pod-z-uid", "spec", "containers", "name", "main",
                              "resources", "requests", "example.com/pgpu", "1"));
    json_t *pw = pod_with_claim(f, "pend-pod-w");
    live_converge(f, e->st, "pending: deleted claim: set-up");
    fake_hold_watch(f, "resourceclaims", true);
    fake_fail_request(f, "POST", "/pods/pend-pod-z/binding", 500);
    char *err = ext_bind(e->b, "ml", "pend-pod-z", "pend-pod-z-uid", "pend-z");
    CHECK(err != NULL, "pending: deleted claim: the bind of pend-pod-z should fail");
    free(err);
    int held = fake_held_events(f, "resourceclaims");
    CHECK(held == 5, "pending: deleted claim: %d events held, want 5 (create, finalizer, status, finalizer, delete)",
          held);
    CHECK(claim_status(e, "pendingWrites") == 1, "pending: deleted claim: %lld marks, want 1",
          claim_status(e, "pendingWrites"));
    fit_wait fw = {e, pw, "pend-z"};
    for (int i = 0; i < held; i++) {
        json_t *obj = NULL;
        const char *type = "";
        long rv = fake_release_watch_event(f, "resourceclaims", &obj, &type);
        json_decref(obj);
        rv_wait rw = {e, rv};
        CHECK(rv && live_wait(10, at_rv, &rw), "pending: deleted claim: event %d never got there", i + 1);
        int fit = 0;
        for (int j = 0; j < 5; j++) fit += fits_now(&fw), usleep(20000);
        CHECK(fit == 5, "pending: deleted claim: after event %d of %d (%s rv %ld) pend-pod-w passes pend-z %d of 5 times",
              i + 1, held, type, rv, fit);
    }
    fake_hold_watch(f, "resourceclaims", false);
    CHECK(live_wait(5, no_marks, e), "pending: deleted claim: %lld marks left", claim_status(e, "pendingWrites"));
    live_converge(f, e->st, "pending: deleted claim");
    json_decref(pw);
}

/* ---- 3: the timeout ------------------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void mark_timeout(fake_api *f, env *e, double timeout_s) {
    one_gpu_node(f, "pend-c");
    json_t *pc = pod_with_claim(f, "pend-pod-c"), *pd = pod_with_claim(f, "pend-pod-d");
    live_converge(f, e->st, "pending: timeout: set-up");
    long long expired0 = claim_status(e, "pendingExpired");
    fake_hold_watch(f, "resourceclaims", true);
    double t0 = now_s();
    char *err = ext_bind(e->b, "ml", "pend-pod-c", "pend-pod-c-uid", "pend-c");
    CHECK(!err, "pending: timeout: bind pend-pod-c: %s", err);
    free(err);
    /* somebody frees the claim meanwhile (its pod ended): a version after ours */
    json_t *c = server_claim(f, "pend-pod-c-claim");
    json_object_del(c, "status");
    fake_put(f, "resourceclaims", c);
    /* the relist shows that version; the events of our write never come on a stream */
    uint64_t relists = ext_watch_relists(e->w);
    fake_release_by_relist(f, "resourceclaims");
    CHECK(live_wait_relist(e->w, relists, 10), "pending: timeout: no relist after 410");
    double relisted_at = now_s() - t0;
    if (relisted_at < timeout_s - 0.5) {
        /* the list might predate our write: ours is kept, conservatively */
        CHECK(claim_status(e, "pendingWrites") == 1, "pending: timeout: %lld marks after the relist, want 1",
              claim_status(e, "pendingWrites"));
        CHECK(!passes(e, pd, "pend-c"), "pending: timeout: pend-pod-d passes pend-c before the mark timed out");
    } else {
        fprintf(stderr, "live_test: pending: timeout: the relist took %.1f s, not checking before the timeout\n",
                relisted_at);
    }
    /* the timeout: the watch's version (deallocated) wins */
    fit_wait fw = {e, pd, "pend-c"};
    CHECK(live_wait(timeout_s + 5, fits_now, &fw), "pending: timeout: pend-pod-d never fits pend-c");
    double took = now_s() - t0;
    CHECK(took >= timeout_s, "pending: timeout: the mark went after %.2f s, before its %.1f s", took, timeout_s);
    CHECK(claim_status(e, "pendingExpired") > expired0, "pending: timeout: no expired mark counted");
    CHECK(claim_status(e, "pendingWrites") == 0, "pending: timeout: %lld marks left", claim_status(e, "pendingWrites"));
    live_converge(f, e->st, "pending: after the timeout");
    json_decref(pc);
    json_decref(pd);
}

void live_pending(fake_api *f, ext_kube *k) {
    env e;
    /* streaming lists (a relist is a streaming list from the lagging cache) */
    env_start(&e, f, k, 30, false);
    stale_events(f, &e);
    relist_before_write(f, &e);
    relist_after_write(f, &e);
    relist_before_create(f, &e);
    events_before_answers(f, &e);
    deleted_stays_gone(f, &e);
    env_stop(&e);
    /* paged lists, a short timeout */
    env_start(&e, f, k, 3, true);
    mark_timeout(f, &e, 3);
    env_stop(&e);
}
