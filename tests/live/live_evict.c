/* live_evict.c — bind mode's opt-in preemption (extender/evict.h, hold.h) against a
 * fake kube-apiserver of its own: two nodes of 2 GPUs, every GPU held by a running
 * pod (node n0: two of priority 1; n1: two of priority 5), and pending pods of
 * priority 10. Checked, in order:
 *   - /filter with no node queues the preemptor; one victim of priority 1 on n0 is
 *     evicted (a policy/v1 Eviction with its UID), the preemptor labelled and
 *     annotated dralloc.dev/hold, Events "Preempted" and "Preempting" posted;
 *   - no second eviction while the hold exists (the victim terminating, /filter asked
 *     again and again);
 *   - once the victim is gone, an equal-priority pod is kept off n0 at /filter and at
 *     /bind, while the preemptor passes n0 and binds there; the bind releases the hold
 *     (label and annotation removed, an Event);
 *   - an Eviction answered 429 (a PodDisruptionBudget): nothing evicted, the hold
 *     released, a Warning Event; the next try evicts;
 *   - a new evictor (a new leader) restores that hold from the API and blocks an
 *     equal-priority pod with it; the preemptor deleted: the hold is dropped;
 *   - a hold that expires is released with an Event;
 *   - every request made is a row of tests/deploy/api_calls.h. */
#include "tests/live/live.h"

#include "extender/evict.h"
#include "extender/hold.h"
#include "extender/objcache.h"
#include "tests/deploy/api_calls.h"
#include "tests/live/objects.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct ev_env {
    dra_store *st;
    ext_pending *pending;
    ext_objcache *claims;
    ext_watch *w;
    ext_binder *b;
    ext_holds *holds;
    ext_evictor *ev;
    ext_service *svc;
} ev_env;

static void nap(double s) {
    nanosleep(&(struct timespec){(time_t)s, (long)((s - (double)(time_t)s) * 1e9)}, NULL);
}

static json_t *running_pod(const char *name, const char *node, int prio, const char *start) {
    char uid[64], claim[64];
    snprintf(uid, sizeof uid, "uid-%s", name);
    snprintf(claim, sizeof claim, "%s-gpu", name);
    return json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:i, s:[{s:s, s:s}]}, s:{s:s, s:s}}", "metadata", "name", name,
                     "namespace", "ml", "uid", uid, "spec", "nodeName", node, "priority", prio, "resourceClaims", "name",
                     "gpu", "resourceClaimName", claim, "status", "phase", "Running", "startTime", start);
}

static json_t *pending_pod(const char *name, int prio, bool never) {
    char uid[64], claim[64];
    snprintf(uid, sizeof uid, "uid-%s", name);
    snprintf(claim, sizeof claim, "%s-gpu", name);
    json_t *p = json_pack("{s:{s:s, s:s, s:s}, s:{s:i, s:[{s:s, s:s}]}, s:{s:s}}", "metadata", "name", name,
                          "namespace", "ml", "uid", uid, "spec", "priority", prio, "resourceClaims", "name", "gpu",
                          "resourceClaimName", claim, "status", "phase", "Pending");
    if (never) json_object_set_new(json_object_get(p, "spec"), "preemptionPolicy", json_string("Never"));
    return p;
}

static json_t *free_claim(const char *pod) {
    char name[64];
    snprintf(name, sizeof name, "%s-gpu", pod);
    return json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "metadata", "name", name, "namespace", "ml",
                     "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com",
                     "count", 1);
}

/* pod's claim, allocated gpu-<dev> of node and reserved for it */
static json_t *held_claim(const char *pod, const char *node, int dev) {
    char name[64], uid[64];
    snprintf(name, sizeof name, "%s-gpu", pod);
    snprintf(uid, sizeof uid, "uid-%s", pod);
    json_t *c = live_allocated_claim("ml", name, node, dev, 1);
    json_object_set_new(json_object_get(c, "status"), "reservedFor",
                        json_pack("[{s:s, s:s, s:s}]", "resource", "pods", "name", pod, "uid", uid));
    return c;
}

static void env_start(ev_env *e, ext_kube *k, double hold_s) {
    dra_features feat;
    dra_features_default(&feat);
    e->st = dra_store_new(&feat);
    e->pending = ext_pending_new(20);
    e->claims = ext_objcache_new();
    ext_watch_opts wo = {.max_staleness_s = 10, .idle_s = 2, .watch_timeout_s = 4, .backoff_max_s = 0.5,
                         .quiet = live_quiet(), .pending = e->pending, .claims = e->claims};
    e->w = ext_watch_start(k, e->st, &wo);
    e->b = ext_binder_new(k, e->st, e->pending);
    ext_binder_set_claims(e->b, e->claims);
    e->holds = ext_holds_new();
    e->ev = ext_evictor_start(k, e->st, e->claims, e->holds,
                              &(ext_evictor_opts){.hold_s = hold_s, .sync_s = 0.3, .retry_s = 0.5, .quiet = live_quiet()});
    ext_config cfg;
    ext_config_default(&cfg);
    cfg.workers = 2;
    cfg.watch = e->w;
    cfg.binder = e->b;
    cfg.holds = e->holds;
    cfg.evictor = e->ev;
    e->svc = ext_service_new(e->st, &cfg);
}

static void env_stop(ev_env *e) {
    ext_service_free(e->svc);
    ext_evictor_stop(e->ev);
    ext_holds_free(e->holds);
    ext_binder_free(e->b);
    ext_watch_stop(e->w);
    ext_objcache_free(e->claims);
    ext_pending_free(e->pending);
    dra_store_free(e->st);
}

/* /filter of pod on n0 and n1: the passing nodes as "n0,n1," and the reason given for
 * n0 (why). */
static void filter(ev_env *e, fake_api *f, const char *name, char *out, size_t n, char *why, size_t nwhy) {
    static const char *const nodes[] = {"n0", "n1"};
    json_t *pod = fake_pod(f, "ml", name);
    live_filter(e->svc, pod, nodes, 2, out, n, "n0", why, nwhy);
    json_decref(pod);
}

/* /bind of pod on node: NULL when bound, else the Error (static buffer). */
static const char *bind(ev_env *e, const char *name, const char *node) {
    static char err_buf[600];
    char uid[64];
    snprintf(uid, sizeof uid, "uid-%s", name);
    json_t *args = json_pack("{s:s, s:s, s:s, s:s}", "PodName", name, "PodNamespace", "ml", "PodUID", uid, "Node", node);
    char *body = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    ext_reply r;
    ext_service_handle(e->svc, "POST", "/bind", body, strlen(body), &r);
    free(body);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    const char *m = json_string_value(json_object_get(j, "Error"));
    snprintf(err_buf, sizeof err_buf, "%s", m ? m : "");
    json_decref(j);
    ext_reply_free(&r);
    return err_buf[0] ? err_buf : NULL;
}

/* The requests of the log that evict ("POST .../eviction"); the last one's pod name. */
static int evictions(fake_api *f, char *last, size_t n) {
    json_t *log = fake_request_log(f, false);
    int c = 0;
    size_t i;
    json_t *x;
    json_array_foreach(log, i, x) {
        const char *r = json_string_value(x);
        const char *p = strstr(r, "/pods/");
        if (strncmp(r, "POST ", 5) || !strstr(r, "/eviction") || !p) continue;
        c++;
        if (last) snprintf(last, n, "%.*s", (int)(strstr(r, "/eviction") - p - 6), p + 6);
    }
    json_decref(log);
    return c;
}

static bool has_event(fake_api *f, const char *pod, const char *reason, const char *text) {
    json_t *evs = fake_events(f);
    bool found = false;
    size_t i;
    json_t *x;
    json_array_foreach(evs, i, x) {
        const char *n = json_string_value(json_object_get(json_object_get(x, "involvedObject"), "name"));
        const char *r = json_string_value(json_object_get(x, "reason"));
        const char *m = json_string_value(json_object_get(x, "message"));
        found |= n && r && !strcmp(n, pod) && !strcmp(r, reason) && (!text || (m && strstr(m, text)));
    }
    json_decref(evs);
    return found;
}

static bool labelled(fake_api *f, const char *name) {
    json_t *p = fake_pod(f, "ml", name);
    bool l = json_object_get(json_object_get(json_object_get(p, "metadata"), "labels"), EXT_HOLD_LABEL) != NULL;
    bool a = json_object_get(json_object_get(json_object_get(p, "metadata"), "annotations"), EXT_HOLD_ANNOTATION) != NULL;
    json_decref(p);
    return l && a;
}

typedef struct wait_arg {
    fake_api *f;
    ev_env *e;
    const char *s;
    int n;
    const char *reason, *text;
} wait_arg;
static bool w_event(void *a) { wait_arg *w = a; return has_event(w->f, w->s, w->reason, w->text); }
/* has_event within 5 s (the Events follow the writes they tell of) */
static bool event_soon(fake_api *f, const char *pod, const char *reason, const char *text) {
    wait_arg w = {.f = f, .s = pod, .reason = reason, .text = text};
    return live_wait(5, w_event, &w);
}
static bool w_evictions(void *a) { wait_arg *w = a; return evictions(w->f, NULL, 0) >= w->n; }
static bool w_held(void *a) { wait_arg *w = a; return ext_holds_has(w->e->holds, w->s); }
static bool w_unheld(void *a) { wait_arg *w = a; return !ext_holds_has(w->e->holds, w->s); }
static bool w_unlabelled(void *a) { wait_arg *w = a; return !labelled(w->f, w->s); }
static bool w_labelled(void *a) { wait_arg *w = a; return labelled(w->f, w->s); }
static bool w_passes_n0(void *a) {
    wait_arg *w = a;
    char got[64];
    filter(w->e, w->f, w->s, got, sizeof got, NULL, 0);
    return !strcmp(got, "n0,");
}
static bool w_refused(void *a) {
    wait_arg *w = a;
    ext_evictor_stats s;
    ext_evictor_stats_of(w->e->ev, &s);
    return s.refused >= (uint64_t)w->n;
}
static bool w_expired_event(void *a) {
    wait_arg *w = a;
    return has_event(w->f, w->s, "PreemptionHoldReleased", "expired");
}
static bool w_claims(void *a) {
    wait_arg *w = a;
    dra_snapshot *s = dra_store_acquire(w->e->st);
    size_t n = s ? dra_snapshot_count(s, "ResourceClaim") : 0;
    if (s) dra_snapshot_release(s);
    return n == (size_t)w->n;
}

/* The victim gone as the kubelet and the resourceclaim controller make it go: the pod
 * deleted, its claim's reservation and allocation removed. */
static void victim_gone(fake_api *f, const char *name) {
    fake_delete_pod(f, "ml", name);
    char claim[64];
    snprintf(claim, sizeof claim, "%s-gpu", name);
    fake_delete(f, "resourceclaims", "ml", claim);
}

void live_evict(void) {
    fake_api *f = fake_start();
    fake_put(f, "deviceclasses", json_pack("{s:{s:s}, s:{s:[{s:{s:s}}]}}", "metadata", "name", "gpu.example.com", "spec",
                                            "selectors", "cel", "expression", "device.driver == 'gpu.example.com'"));
    const char *nodes[] = {"n0", "n1"};
    for (int i = 0; i < 2; i++) {
        char s[16];
        snprintf(s, sizeof s, "%s-gpus", nodes[i]);
        fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", nodes[i]));
        fake_put(f, "resourceslices", live_slice(s, nodes[i], 2, "H100"));
    }
    static const struct {
        const char *name, *node;
        int dev, prio;
        const char *start;
    } run[] = {{"low-a", "n0", 0, 1, "2026-01-01T00:00:00Z"}, {"low-b", "n0", 1, 1, "2026-01-02T00:00:00Z"},
               {"mid-c", "n1", 0, 5, "2026-01-01T00:00:00Z"}, {"mid-d", "n1", 1, 5, "2026-01-01T00:00:00Z"}};
    for (size_t i = 0; i < 4; i++) {
        fake_put_pod(f, running_pod(run[i].name, run[i].node, run[i].prio, run[i].start));
        fake_put(f, "resourceclaims", held_claim(run[i].name, run[i].node, run[i].dev));
    }
    static const char *const pend[] = {"high", "peer", "high2", "peer2", "high3"};
    for (size_t i = 0; i < 5; i++) {
        fake_put_pod(f, pending_pod(pend[i], 10, !strncmp(pend[i], "peer", 4)));
        fake_put(f, "resourceclaims", free_claim(pend[i]));
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", fake_port(f));
    err er;
    err_clear(&er);
    ext_kube *k = ext_kube_new(&(ext_kube_opts){.server = url}, &er);
    ev_env e;
    env_start(&e, k, 30);
    wait_arg w = {.f = f, .e = &e, .n = 9};
    CHECK(live_wait(10, w_claims, &w), "evict: the store does not have the 9 claims");

    /* 1. preemption: one victim of priority 1 on n0 */
    char got[64], why[600], victim[64] = "";
    filter(&e, f, "high", got, sizeof got, NULL, 0);
    CHECK(!*got, "evict: high passes %s with every GPU in use", got);
    w = (wait_arg){.f = f, .e = &e, .s = "uid-high", .n = 1};
    /* asked again now and then, as kube-scheduler retries a parked pod */
    for (int i = 0; i < 15 && !w_evictions(&w); i++) {
        nap(0.7);
        filter(&e, f, "high", got, sizeof got, NULL, 0);
    }
    CHECK(live_wait(5, w_evictions, &w), "evict: no eviction for high");
    CHECK(live_wait(5, w_held, &w), "evict: no hold for high");
    evictions(f, victim, sizeof victim);
    CHECK(!strcmp(victim, "low-a") || !strcmp(victim, "low-b"), "evict: evicted %s, want a priority-1 pod of n0", victim);
    CHECK(labelled(f, "high"), "evict: high carries no hold label and annotation");
    CHECK(event_soon(f, victim, "Preempted", "ml/high"), "evict: no Preempted event on %s", victim);
    CHECK(event_soon(f, "high", "Preempting", "n0"), "evict: no Preempting event on high");
    ext_hold h;
    if (ext_holds_get(e.holds, "uid-high", &h)) {
        CHECK(!strcmp(h.node, "n0") && json_array_size(h.victims) == 1, "evict: hold on %s with %zu victims", h.node,
              json_array_size(h.victims));
        ext_hold_clear(&h);
    }

    /* 2. no cascade: asked again while the victim terminates */
    for (int i = 0; i < 5; i++) {
        filter(&e, f, "high", got, sizeof got, NULL, 0);
        nap(0.3);
    }
    nap(0.8);
    CHECK(evictions(f, NULL, 0) == 1, "evict: %d evictions for one preemptor (a cascade)", evictions(f, NULL, 0));

    /* 3. the victim gone: an equal-priority pod is kept off n0, the preemptor binds there */
    victim_gone(f, victim);
    w.s = "high";
    CHECK(live_wait(10, w_passes_n0, &w), "evict: high does not pass n0 once its victim is gone");
    filter(&e, f, "peer", got, sizeof got, why, sizeof why);
    CHECK(!*got && strstr(why, "held for pod ml/high"), "evict: peer passes '%s' (n0: %s)", got, why);
    const char *be = bind(&e, "peer", "n0");
    CHECK(be && strstr(be, "held"), "evict: /bind of peer on held n0: %s", be ? be : "bound");
    be = bind(&e, "high", "n0");
    CHECK(!be, "evict: /bind of high on n0: %s", be);
    w.s = "uid-high";
    CHECK(live_wait(2, w_unheld, &w), "evict: the hold outlived high's bind");
    w.s = "high";
    CHECK(live_wait(5, w_unlabelled, &w), "evict: high's hold label not removed after its bind");
    CHECK(event_soon(f, "high", "PreemptionHoldReleased", "bound"),
          "evict: no release Event on high");

    /* 4. a 429 (PodDisruptionBudget): nothing evicted, the hold released; the next try evicts */
    int before = evictions(f, NULL, 0);
    fake_fail_request(f, "POST", "/eviction", 429);
    filter(&e, f, "high2", got, sizeof got, NULL, 0);
    w = (wait_arg){.f = f, .e = &e, .s = "uid-high2", .n = 1};
    CHECK(live_wait(10, w_refused, &w), "evict: the 429 was not counted as refused");
    CHECK(!ext_holds_has(e.holds, "uid-high2"), "evict: a hold kept after a refused eviction");
    w.s = "high2";
    CHECK(live_wait(5, w_unlabelled, &w), "evict: the hold label stays after a refused eviction");
    CHECK(event_soon(f, "high2", "FailedPreemption", "429"), "evict: no FailedPreemption event naming the 429");
    nap(0.6);   /* retry_s */
    filter(&e, f, "high2", got, sizeof got, NULL, 0);
    w = (wait_arg){.f = f, .e = &e, .s = "uid-high2", .n = before + 2};
    CHECK(live_wait(10, w_evictions, &w), "evict: no eviction on the retry after a 429 (%d)", evictions(f, NULL, 0));
    CHECK(live_wait(5, w_held, &w), "evict: no hold for high2 after the retry");

    /* 5. a new leader: a fresh evictor restores high2's hold from the API */
    env_stop(&e);
    env_start(&e, k, 30);
    w = (wait_arg){.f = f, .e = &e, .s = "uid-high2", .n = 9};
    CHECK(live_wait(10, w_held, &w), "evict: the new evictor did not restore high2's hold");
    ext_evictor_stats s;
    ext_evictor_stats_of(e.ev, &s);
    CHECK(s.restored >= 1, "evict: restored %llu", (unsigned long long)s.restored);
    if (ext_holds_get(e.holds, "uid-high2", &h)) {
        int32_t p10 = 10;
        CHECK(ext_holds_blocks(e.holds, h.node, "uid-peer2", &p10, NULL, 0), "evict: the restored hold lets peer2 on %s",
              h.node);
        ext_hold_clear(&h);
    }
    /* the preemptor deleted: dropped */
    fake_delete_pod(f, "ml", "high2");
    w.s = "uid-high2";
    CHECK(live_wait(10, w_unheld, &w), "evict: the hold of a deleted pod stays");
    env_stop(&e);

    /* 6. a hold that expires */
    env_start(&e, k, 1);
    json_t *all = fake_objects(f, "resourceclaims");
    w = (wait_arg){.f = f, .e = &e, .s = NULL, .n = (int)json_array_size(all)};
    json_decref(all);
    CHECK(live_wait(10, w_claims, &w), "evict: the third store does not have the server's claims");
    int b3 = evictions(f, NULL, 0);
    w = (wait_arg){.f = f, .e = &e, .s = "uid-high3", .n = b3 + 1};
    for (int i = 0; i < 20 && !ext_holds_has(e.holds, "uid-high3") && evictions(f, NULL, 0) == b3; i++) {
        filter(&e, f, "high3", got, sizeof got, NULL, 0);
        nap(0.3);
    }
    CHECK(live_wait(10, w_evictions, &w), "evict: no eviction for high3");
    w.s = "high3";
    CHECK(live_wait(5, w_labelled, &w) || has_event(f, "high3", "PreemptionHoldReleased", NULL),
          "evict: high3 never held");
    CHECK(live_wait(10, w_unlabelled, &w), "evict: high3's hold did not expire");
    CHECK(live_wait(5, w_expired_event, &w), "evict: no Event for the expired hold");
    env_stop(&e);

    /* every request is one deploy/'s RBAC grants */
    json_t *log = fake_request_log(f, false);
    size_t i;
    json_t *x;
    json_array_foreach(log, i, x) {
        char group[128], res[128];
        const char *verb;
        char req[1200];
        snprintf(req, sizeof req, "%s", json_string_value(x));
        bool known = api_call_of(req, group, sizeof group, res, sizeof res, &verb) && api_call_find(group, res, verb);
        CHECK(known, "evict: requested %s: not in tests/deploy/api_calls.h", json_string_value(x));
    }
    json_decref(log);
    ext_kube_free(k);
    fake_stop(f);
}
