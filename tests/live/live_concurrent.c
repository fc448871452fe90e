/* live_concurrent.c — bind mode's binds side by side (bind.c, Concurrency), against
 * the fake kube-apiserver with slow claim writes (each answered D ms after it is
 * stored), each part with its own store, watch, claims' JSON and binder:
 *   - parallel: N binds of different pods, each two claim writes, complete in about
 *     one bind's time (2·D), not N of them: the decision lock is not held across a
 *     request. No claim is read first: the watch's JSON is written from.
 *   - the last device: two binds racing for one free device give exactly one
 *     success, and the server's claims hold the device once.
 *   - a failed write: while the bind's writes are in flight the device is held (a
 *     /filter sees it in use); when the status write fails the hold is released and
 *     the device is allocatable again (the next bind gets it).
 *   - no starving: over HTTP, with one HTTP thread, a /bind waiting on the API server
 *     (its binding held) leaves /filter answered at once (offload.h).
 * Two-phase /bind over HTTP (bind.h, Two phases), with an offload pool of one thread:
 *   - decided on arrival: with the pool busy (a bind held at its binding), a second
 *     /bind is decided and holds its device at once, and a /filter right after it sees
 *     the device in use; both bind in the end;
 *   - past the deadline: a bind queued longer than --bind-timeout answers an error,
 *     writes nothing and gives its device back;
 *   - the same pod twice: a second /bind of a pod UID whose first is in flight waits
 *     and answers the first one's outcome: bound once, allocated once; a third /bind to
 *     another node afterwards is an error at once. */
#include "tests/live/live.h"

#include "extender/objcache.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOW_MS 150
/* the parallel part's: long against a bind's own cost even under ThreadSanitizer */
#define PAR_SLOW_MS 300

typedef struct cenv {
    live_env e;
    ext_objcache *claims;
} cenv;

static void cenv_start(cenv *c, ext_kube *k) {
    dra_features feat;
    dra_features_default(&feat);
    c->claims = ext_objcache_new();
    ext_watch_opts wo = {.max_staleness_s = 10, .page_limit = 50, .idle_s = 2, .watch_timeout_s = 4,
                         .backoff_max_s = 0.5, .quiet = live_quiet(), .claims = c->claims};
    live_env_start(&c->e, k, dra_store_new(&feat), 20, &wo, "concurrent env");
    ext_binder_set_claims(c->e.b, c->claims);
}

static void cenv_stop(cenv *c) {
    live_env_stop(&c->e);
    ext_objcache_free(c->claims);
}

static json_t *claim_obj(const char *name, int count) {
    return json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "metadata", "name", name, "namespace", "ml", "spec",
                     "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com", "count", count);
}

static json_t *pod_obj(const char *name, const char *claim) {
    return json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s}], s:[{s:s, s:s}]}}", "metadata", "name", name, "namespace", "ml",
                     "uid", name, "spec", "containers", "name", "main", "resourceClaims", "name", "g",
                     "resourceClaimName", claim);
}

/* The store has the server's claims (by count) and the claims' JSON all of them. */
typedef struct settled {
    cenv *c;
    fake_api *f;
} settled;

static bool claims_in(void *arg) {
    settled *s = arg;
    json_t *objs = fake_objects(s->f, "resourceclaims");
    size_t want = json_array_size(objs);
    json_decref(objs);
    dra_snapshot *snap = dra_store_acquire(s->c->e.st);
    size_t got = snap ? dra_snapshot_count(snap, "ResourceClaim") : 0;
    size_t slices = snap ? dra_snapshot_count(snap, "ResourceSlice") : 0;
    dra_snapshot_release(snap);
    objs = fake_objects(s->f, "resourceslices");
    size_t want_slices = json_array_size(objs);
    json_decref(objs);
    return got == want && slices == want_slices && ext_objcache_size(s->c->claims) == want;
}

static void settle(cenv *c, fake_api *f) {
    settled s = {c, f};
    CHECK(live_wait(10, claims_in, &s), "concurrent: the store does not have the server's claims and slices");
}

typedef struct job {
    ext_binder *b;
    const char *pod, *node;
    char *err;
} job;

static void *bind_main(void *arg) {
    job *j = arg;
    j->err = ext_bind(j->b, "ml", j->pod, j->pod, j->node);
    return NULL;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void add_node(fake_api *f, const char *node, int gpus) {
    char sl[64];
    snprintf(sl, sizeof sl, "%s-gpus", node);
    fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", node));
    fake_put(f, "resourceslices", live_slice(sl, node, gpus, "H100"));
}

static size_t results(const json_t *claim) {
    return json_array_size(json_object_get(
        json_object_get(json_object_get(json_object_get(claim, "status"), "allocation"), "devices"), "results"));
}

/* Every device allocated on the server at most once; how many claims with prefix hold one. */
static int allocated_once(fake_api *f, const char *prefix) {
    json_t *claims = fake_objects(f, "resourceclaims"), *seen = json_object();
    int n = 0;
    for (size_t i = 0; i < json_array_size(claims); i++) {
        const json_t *c = json_array_get(claims, i);
        const char *name = json_string_value(json_object_get(json_object_get(c, "metadata"), "name"));
        if (strncmp(name, prefix, strlen(prefix))) continue;
        const json_t *res = json_object_get(
            json_object_get(json_object_get(json_object_get(c, "status"), "allocation"), "devices"), "results");
        n += json_array_size(res) > 0;
        for (size_t r = 0; r < json_array_size(res); r++) {
            const json_t *d = json_array_get(res, r);
            char key[256];
            snprintf(key, sizeof key, "%s/%s", json_string_value(json_object_get(d, "pool")),
                     json_string_value(json_object_get(d, "device")));
            CHECK(!json_object_get(seen, key), "device %s allocated twice", key);
            json_object_set_new(seen, key, json_true());
        }
    }
    json_decref(seen);
    json_decref(claims);
    return n;
}

static void parallel(fake_api *f, ext_kube *k) {
    enum { N = 8 };
    add_node(f, "par-node", 16);
    char pods[N][32], claims[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(pods[i], sizeof pods[i], "par-%d", i);
        snprintf(claims[i], sizeof claims[i], "par-claim-%d", i);
        fake_put(f, "resourceclaims", claim_obj(claims[i], 2));
        fake_put_pod(f, pod_obj(pods[i], claims[i]));
    }
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    fake_slow_claim_answers(f, PAR_SLOW_MS);
    job jobs[N];
    pthread_t th[N];
    double t0 = now_s();
    for (int i = 0; i < N; i++) {
        jobs[i] = (job){c.e.b, pods[i], "par-node", NULL};
        pthread_create(&th[i], NULL, bind_main, &jobs[i]);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK(!jobs[i].err, "parallel: bind %s: %s", pods[i], jobs[i].err);
        ok += !jobs[i].err;
        free(jobs[i].err);
    }
    double took = now_s() - t0;
    fake_slow_claim_answers(f, 0);
    /* serialized: N × (finalizer + status) = N·2·D = 4.8 s; side by side: ~2·D = 0.6 s */
    double serial = N * 2 * PAR_SLOW_MS / 1000.0;
    fprintf(stderr, "live_test: concurrent: %d binds with claim writes answered after %d ms: %.2f s (serialized: %.2f s)\n",
            N, PAR_SLOW_MS, took, serial);
    CHECK(ok == N, "parallel: %d of %d bound", ok, N);
    CHECK(took < serial / 2, "parallel: %d binds took %.2f s, serialized they take %.2f s", N, took, serial);
    CHECK(allocated_once(f, "par-claim-") == N, "parallel: want %d claims allocated", N);
    CHECK(ext_binder_claim_gets(c.e.b) == 0, "parallel: %llu claims read before their write, want 0 (the watch's JSON)",
          (unsigned long long)ext_binder_claim_gets(c.e.b));
    cenv_stop(&c);
}

static void last_device(fake_api *f, ext_kube *k) {
    add_node(f, "last-node", 3);
    /* two of three devices taken already */
    fake_put(f, "resourceclaims", claim_obj("last-taken", 2));
    fake_put_pod(f, pod_obj("last-taker", "last-taken"));
    fake_put(f, "resourceclaims", claim_obj("last-a", 1));
    fake_put(f, "resourceclaims", claim_obj("last-b", 1));
    fake_put_pod(f, pod_obj("last-pod-a", "last-a"));
    fake_put_pod(f, pod_obj("last-pod-b", "last-b"));
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    char *e0 = ext_bind(c.e.b, "ml", "last-taker", "last-taker", "last-node");
    CHECK(!e0, "last device: the first bind: %s", e0);
    free(e0);
    fake_slow_claim_answers(f, SLOW_MS);
    for (int round = 0; round < 1; round++) {
        job ja = {c.e.b, "last-pod-a", "last-node", NULL}, jb = {c.e.b, "last-pod-b", "last-node", NULL};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, bind_main, &ja);
        pthread_create(&tb, NULL, bind_main, &jb);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        CHECK((!ja.err) + (!jb.err) == 1, "last device: %s / %s, want exactly one bound", ja.err ? ja.err : "bound",
              jb.err ? jb.err : "bound");
        const char *lost = ja.err ? ja.err : jb.err;
        CHECK(lost && strstr(lost, "does not fit node last-node"), "last device: the loser's error: %s", lost);
        free(ja.err);
        free(jb.err);
    }
    fake_slow_claim_answers(f, 0);
    CHECK(allocated_once(f, "last-") == 2, "last device: want 2 claims allocated (taken and one of a/b)");
    cenv_stop(&c);
}

static bool one_held(void *arg) { return fake_held_bindings(arg) == 1; }

typedef struct held_arg {
    cenv *c;
    const char *name;
} held_arg;

static bool is_held(void *arg) {
    held_arg *h = arg;
    return ext_pending_held(h->c->e.pending, "ResourceClaim", "ml", h->name);
}

/* /filter of pod on node: whether the node passes. */
static bool passes(cenv *c, fake_api *f, const char *pod, const char *node) {
    json_t *p = fake_pod(f, "ml", pod);
    json_t *args = json_pack("{s:o, s:n, s:[s]}", "Pod", p, "Nodes", "NodeNames", node);
    char *body = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    ext_reply r;
    ext_service_handle(c->e.svc, "POST", "/filter", body, strlen(body), &r);
    free(body);
    json_t *j = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    bool ok = json_array_size(json_object_get(j, "NodeNames")) == 1;
    json_decref(j);
    ext_reply_free(&r);
    return ok;
}

static void rollback(fake_api *f, ext_kube *k) {
    add_node(f, "rb-node", 1);
    fake_put(f, "resourceclaims", claim_obj("rb-a", 1));
    fake_put(f, "resourceclaims", claim_obj("rb-b", 1));
    fake_put_pod(f, pod_obj("rb-pod-a", "rb-a"));
    fake_put_pod(f, pod_obj("rb-pod-b", "rb-b"));
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    CHECK(passes(&c, f, "rb-pod-b", "rb-node"), "rollback: rb-pod-b should fit the free device first");
    /* a's status write fails after a pause; meanwhile the device is held */
    fake_slow_claim_answers(f, 2 * SLOW_MS);
    fake_fail_request(f, "PUT", "/resourceclaims/rb-a/status", 500);
    job ja = {c.e.b, "rb-pod-a", "rb-node", NULL};
    pthread_t ta;
    pthread_create(&ta, NULL, bind_main, &ja);
    held_arg h = {&c, "rb-a"};
    CHECK(live_wait(5, is_held, &h), "rollback: rb-a is never held");
    CHECK(!passes(&c, f, "rb-pod-b", "rb-node"), "rollback: with rb-a's write in flight the device should be in use");
    pthread_join(ta, NULL);
    fake_slow_claim_answers(f, 0);
    CHECK(ja.err && strstr(ja.err, "HTTP 500"), "rollback: rb-pod-a should fail with the injected 500: %s", ja.err);
    free(ja.err);
    CHECK(!is_held(&h), "rollback: rb-a still held after its write failed");
    /* released: allocatable again, at once (no waiting for the watch) */
    CHECK(passes(&c, f, "rb-pod-b", "rb-node"), "rollback: after the failed write the device should be free");
    char *eb = ext_bind(c.e.b, "ml", "rb-pod-b", "rb-pod-b", "rb-node");
    CHECK(!eb, "rollback: rb-pod-b should get the released device: %s", eb);
    free(eb);
    json_t *claims = fake_objects(f, "resourceclaims");
    for (size_t i = 0; i < json_array_size(claims); i++) {
        const json_t *cl = json_array_get(claims, i);
        const char *name = json_string_value(json_object_get(json_object_get(cl, "metadata"), "name"));
        if (!strcmp(name, "rb-a")) CHECK(results(cl) == 0, "rollback: rb-a is allocated on the server");
        if (!strcmp(name, "rb-b")) CHECK(results(cl) == 1, "rollback: rb-b is not allocated on the server");
    }
    json_decref(claims);
    ext_pending_stats ps;
    ext_pending_stats_of(c.e.pending, "ResourceClaim", &ps);
    CHECK(ps.holds == 0 && ps.released >= 1, "rollback: %zu holds left, %llu released", ps.holds,
          (unsigned long long)ps.released);
    cenv_stop(&c);
}

typedef struct post {
    char url[160];
    const char *body;
    long status;
    char answer[512];
    size_t n;
} post;

static size_t on_answer(char *p, size_t sz, size_t nm, void *arg) {
    post *r = arg;
    size_t n = sz * nm, room = sizeof r->answer - 1 - r->n;
    memcpy(r->answer + r->n, p, n < room ? n : room);
    r->n += n < room ? n : room;
    r->answer[r->n] = '\0';
    return n;
}

static void *post_main(void *arg) {
    post *r = arg;
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, r->url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
}

static void no_starving(fake_api *f, ext_kube *k) {
    add_node(f, "st-node", 2);
    fake_put(f, "resourceclaims", claim_obj("st-claim", 1));
    fake_put_pod(f, pod_obj("st-pod", "st-claim"));
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    char bound[128];
    err e;
    err_clear(&e);
    ext_server_opts so = {.listen = "127.0.0.1:0", .threads = 1, .conn_timeout_s = 10};
    ext_server *srv = ext_server_start(c.e.svc, &so, bound, sizeof bound, &e);
    CHECK(srv, "no starving: the server does not start: %s", e.msg);
    if (!srv) {
        cenv_stop(&c);
        return;
    }
    fake_hold_bindings(f, true);
    post bind = {.body = "{\"PodName\":\"st-pod\",\"PodNamespace\":\"ml\",\"PodUID\":\"st-pod\",\"Node\":\"st-node\"}"};
    snprintf(bind.url, sizeof bind.url, "http://%s/bind", bound);
    pthread_t th;
    pthread_create(&th, NULL, post_main, &bind);
    CHECK(live_wait(10, one_held, f), "no starving: the bind never reached the binding");
    json_t *pod = fake_pod(f, "ml", "st-pod");
    json_t *args = json_pack("{s:o, s:n, s:[s]}", "Pod", pod, "Nodes", "NodeNames", "st-node");
    char *body = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    post filt = {.body = body};
    snprintf(filt.url, sizeof filt.url, "http://%s/filter", bound);
    double t0 = now_s();
    post_main(&filt);
    double took = now_s() - t0;
    free(body);
    CHECK(filt.status == 200 && took < 1.0, "no starving: /filter with a /bind waiting: HTTP %ld after %.2f s", filt.status,
          took);
    /* the held bind's device counts already: the second GPU is still free */
    CHECK(strstr(filt.answer, "\"NodeNames\":[\"st-node\"]") != NULL, "no starving: /filter: %s", filt.answer);
    fake_hold_bindings(f, false);
    pthread_join(th, NULL);
    CHECK(bind.status == 200 && strstr(bind.answer, "\"Error\":\"\""), "no starving: /bind: HTTP %ld %s", bind.status,
          bind.answer);
    ext_server_stop(srv, 2000);
    cenv_stop(&c);
}

/* An HTTP server for c's service with `pool` offload threads, or NULL (CHECK failed). */
static ext_server *serve(cenv *c, unsigned pool, char *bound, size_t n) {
    err e;
    err_clear(&e);
    ext_server_opts so = {.listen = "127.0.0.1:0", .threads = 2, .conn_timeout_s = 10, .offload_threads = pool};
    ext_server *srv = ext_server_start(c->e.svc, &so, bound, n, &e);
    CHECK(srv, "two phases: the server does not start: %s", e.msg);
    return srv;
}

typedef struct async_post {
    post p;
    pthread_t th;
} async_post;

static void bind_async(async_post *a, const char *bound, const char *pod, const char *node) {
    static char bodies[16][200];
    static int next;
    char *body = bodies[next++ % 16];
    snprintf(body, 200, "{\"PodName\":\"%s\",\"PodNamespace\":\"ml\",\"PodUID\":\"%s\",\"Node\":\"%s\"}", pod, pod,
             node);
    memset(&a->p, 0, sizeof a->p);
    a->p.body = body;
    snprintf(a->p.url, sizeof a->p.url, "http://%s/bind", bound);
    pthread_create(&a->th, NULL, post_main, &a->p);
}

static bool bound_ok(const post *p) { return p->status == 200 && strstr(p->answer, "\"Error\":\"\"") != NULL; }

/* The claim `name` as the server has it: whether it is allocated, has the finalizer. */
static void server_claim(fake_api *f, const char *name, bool *allocated, bool *finalized) {
    json_t *claims = fake_objects(f, "resourceclaims");
    *allocated = *finalized = false;
    for (size_t i = 0; i < json_array_size(claims); i++) {
        const json_t *cl = json_array_get(claims, i);
        const json_t *meta = json_object_get(cl, "metadata");
        if (strcmp(json_string_value(json_object_get(meta, "name")), name)) continue;
        *allocated = results(cl) > 0;
        *finalized = json_array_size(json_object_get(meta, "finalizers")) > 0;
    }
    json_decref(claims);
}

static int bindings_posted(fake_api *f, const char *pod) {
    json_t *log = fake_request_log(f, false);
    char want[200];
    snprintf(want, sizeof want, "POST /api/v1/namespaces/ml/pods/%s/binding", pod);
    int n = 0;
    for (size_t i = 0; i < json_array_size(log); i++) n += !strcmp(json_string_value(json_array_get(log, i)), want);
    json_decref(log);
    return n;
}

static void decided_on_arrival(fake_api *f, ext_kube *k) {
    add_node(f, "pf-node", 2);
    const char *pods[3] = {"pf-a", "pf-b", "pf-c"}, *claims[3] = {"pf-ca", "pf-cb", "pf-cc"};
    for (int i = 0; i < 3; i++) {
        fake_put(f, "resourceclaims", claim_obj(claims[i], 1));
        fake_put_pod(f, pod_obj(pods[i], claims[i]));
    }
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    char bound[128];
    ext_server *srv = serve(&c, 1, bound, sizeof bound);
    if (!srv) {
        cenv_stop(&c);
        return;
    }
    /* kube-scheduler's order: each pod filtered (the binder keeps it), then bound */
    for (int i = 0; i < 3; i++) CHECK(passes(&c, f, pods[i], "pf-node"), "decided on arrival: %s should fit", pods[i]);
    fake_hold_bindings(f, true);
    async_post a, b;
    bind_async(&a, bound, "pf-a", "pf-node");
    CHECK(live_wait(10, one_held, f), "decided on arrival: pf-a's bind never reached its binding");
    /* the only pool thread is waiting on pf-a's binding: pf-b's hold can only come from
     * the HTTP thread */
    bind_async(&b, bound, "pf-b", "pf-node");
    held_arg h = {&c, "pf-cb"};
    CHECK(live_wait(5, is_held, &h), "decided on arrival: pf-b's claim is not held while the pool is busy");
    CHECK(!passes(&c, f, "pf-c", "pf-node"),
          "decided on arrival: /filter after pf-b's /bind arrived should see both devices in use");
    fake_hold_bindings(f, false);
    pthread_join(a.th, NULL);
    pthread_join(b.th, NULL);
    CHECK(bound_ok(&a.p), "decided on arrival: pf-a: HTTP %ld %s", a.p.status, a.p.answer);
    CHECK(bound_ok(&b.p), "decided on arrival: pf-b: HTTP %ld %s", b.p.status, b.p.answer);
    CHECK(allocated_once(f, "pf-c") == 2, "decided on arrival: want pf-ca and pf-cb allocated");
    ext_server_stop(srv, 2000);
    cenv_stop(&c);
}

static void past_deadline(fake_api *f, ext_kube *k) {
    add_node(f, "dl-node", 2);
    fake_put(f, "resourceclaims", claim_obj("dl-ca", 1));
    fake_put(f, "resourceclaims", claim_obj("dl-cb", 1));
    fake_put_pod(f, pod_obj("dl-a", "dl-ca"));
    fake_put_pod(f, pod_obj("dl-b", "dl-cb"));
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    ext_binder_set_timeout(c.e.b, 0.5);
    char bound[128];
    ext_server *srv = serve(&c, 1, bound, sizeof bound);
    if (!srv) {
        cenv_stop(&c);
        return;
    }
    CHECK(passes(&c, f, "dl-a", "dl-node") && passes(&c, f, "dl-b", "dl-node"), "past deadline: both should fit");
    fake_hold_bindings(f, true);
    async_post a, b;
    bind_async(&a, bound, "dl-a", "dl-node");
    CHECK(live_wait(10, one_held, f), "past deadline: dl-a's bind never reached its binding");
    bind_async(&b, bound, "dl-b", "dl-node");
    held_arg h = {&c, "dl-cb"};
    CHECK(live_wait(5, is_held, &h), "past deadline: dl-b's claim is not held on arrival");
    usleep(1000 * 1000);   /* dl-b waits in the queue past its 0.5 s */
    json_decref(fake_request_log(f, true));
    fake_hold_bindings(f, false);
    pthread_join(a.th, NULL);
    pthread_join(b.th, NULL);
    CHECK(bound_ok(&a.p), "past deadline: dl-a: HTTP %ld %s", a.p.status, a.p.answer);
    CHECK(b.p.status == 200 && strstr(b.p.answer, "--bind-timeout"), "past deadline: dl-b: HTTP %ld %s", b.p.status,
          b.p.answer);
    CHECK(!is_held(&h), "past deadline: dl-cb still held");
    bool alloc, fin;
    server_claim(f, "dl-cb", &alloc, &fin);
    CHECK(!alloc && !fin, "past deadline: dl-cb written on the server (allocated %d, finalizer %d)", alloc, fin);
    CHECK(bindings_posted(f, "dl-b") == 0, "past deadline: dl-b's binding was posted");
    CHECK(ext_binder_expired(c.e.b) == 1, "past deadline: %llu binds expired, want 1",
          (unsigned long long)ext_binder_expired(c.e.b));
    /* its device is free again at once */
    CHECK(passes(&c, f, "dl-b", "dl-node"), "past deadline: dl-b's device should be free again");
    ext_server_stop(srv, 2000);
    cenv_stop(&c);
}

static void same_pod_twice(fake_api *f, ext_kube *k) {
    add_node(f, "tw-node", 2);
    add_node(f, "tw-other", 2);
    fake_put(f, "resourceclaims", claim_obj("tw-claim", 1));
    fake_put_pod(f, pod_obj("tw-pod", "tw-claim"));
    cenv c;
    cenv_start(&c, k);
    settle(&c, f);
    char bound[128];
    ext_server *srv = serve(&c, 4, bound, sizeof bound);
    if (!srv) {
        cenv_stop(&c);
        return;
    }
    CHECK(passes(&c, f, "tw-pod", "tw-node"), "same pod twice: tw-pod should fit");
    json_decref(fake_request_log(f, true));
    fake_hold_bindings(f, true);
    async_post first, second;
    bind_async(&first, bound, "tw-pod", "tw-node");
    CHECK(live_wait(10, one_held, f), "same pod twice: the first bind never reached its binding");
    bind_async(&second, bound, "tw-pod", "tw-node");
    usleep(300 * 1000);   /* the second is waiting on the first */
    CHECK(fake_held_bindings(f) == 1, "same pod twice: %d bindings waiting, want 1", fake_held_bindings(f));
    fake_hold_bindings(f, false);
    pthread_join(first.th, NULL);
    pthread_join(second.th, NULL);
    CHECK(bound_ok(&first.p), "same pod twice: first: HTTP %ld %s", first.p.status, first.p.answer);
    CHECK(bound_ok(&second.p), "same pod twice: second: HTTP %ld %s", second.p.status, second.p.answer);
    CHECK(bindings_posted(f, "tw-pod") == 1, "same pod twice: %d bindings posted, want 1", bindings_posted(f, "tw-pod"));
    CHECK(allocated_once(f, "tw-") == 1, "same pod twice: want tw-claim allocated once");
    CHECK(ext_binder_binds(c.e.b) == 1 && ext_binder_retried(c.e.b) == 1,
          "same pod twice: %llu bound, %llu answered from the first; want 1 and 1",
          (unsigned long long)ext_binder_binds(c.e.b), (unsigned long long)ext_binder_retried(c.e.b));
    /* bound now: a /bind to another node is an error, at once, and writes nothing */
    async_post third;
    bind_async(&third, bound, "tw-pod", "tw-other");
    pthread_join(third.th, NULL);
    CHECK(third.p.status == 200 && strstr(third.p.answer, "bound to node tw-node already"), "same pod twice: third: %s",
          third.p.answer);
    CHECK(bindings_posted(f, "tw-pod") == 1, "same pod twice: a binding posted for the third");
    ext_server_stop(srv, 2000);
    cenv_stop(&c);
}

void live_concurrent(fake_api *f, ext_kube *k) {
    decided_on_arrival(f, k);
    past_deadline(f, k);
    same_pod_twice(f, k);
    no_starving(f, k);
    parallel(f, k);
    last_device(f, k);
    rollback(f, k);
}
