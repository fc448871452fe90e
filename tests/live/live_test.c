/* live_test.c — the live cache (extender/watch.c, kube.c) against the fake
 * kube-apiserver: after the first list, after a burst of changes, and after each
 * fault a watch can meet (compaction and 410, a stream cut mid-line, a stalled
 * stream, token rotation, 429 with Retry-After, an expired continue token while
 * paging, a resource the server does not serve), the store must answer exactly as a
 * fresh store loaded with the server's objects: same object counts per kind, and
 * the same fit/unfit answer for a 2-GPU pod on every node. Readiness must turn
 * false once the server has been gone longer than the staleness limit. A plain
 * program run by CTest (under ASan/LSan in the sanitizer build). */
#include "extender/bind.h"
#include "extender/kube.h"
#include "extender/lease.h"
#include "tests/deploy/api_calls.h"
#include "extender/pending.h"
#include "extender/watch.h"
#include "tests/live/fakeapi.h"
#include "tests/live/live.h"
#include "tests/live/objects.h"

#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NODES = 12 };
static ext_watch *g_watch;   /* for LIVE_DEBUG output */

int live_failures;

json_t *live_slice(const char *name, const char *node, int n, const char *model) {
    json_t *devs = json_array();
    for (int i = 0; i < n; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}}}", "name", d, "attributes", "model", "string", model));
    }
    return json_pack("{s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "metadata", "name", name, "spec", "driver",
                     "gpu.example.com", "nodeName", node, "pool", "name", node, "generation", 1, "resourceSliceCount", 1,
                     "devices", devs);
}

bool live_wait(double s, bool (*pred)(void *), void *arg) {
    for (double t = 0; t < s; t += 0.02) {
        if (pred(arg)) return true;
        usleep(20000);
    }
    return pred(arg);
}

typedef struct relist_wait {
    ext_watch *w;
    uint64_t before;
} relist_wait;

static bool relisted(void *arg) {
    relist_wait *r = arg;
    return ext_watch_relists(r->w) > r->before;
}

bool live_wait_relist(ext_watch *w, uint64_t before, double s) {
    relist_wait r = {w, before};
    return live_wait(s, relisted, &r);
}

bool live_quiet(void) { return !getenv("LIVE_DEBUG"); }

static bool env_ready(void *arg) { return ext_watch_ready(((live_env *)arg)->w); }

void live_env_start(live_env *e, ext_kube *k, dra_store *st, double pending_timeout_s, ext_watch_opts *wo,
                    const char *what) {
    e->st = st;
    e->pending = ext_pending_new(pending_timeout_s);
    wo->pending = e->pending;
    e->w = ext_watch_start(k, e->st, wo);
    e->b = ext_binder_new(k, e->st, e->pending);
    ext_config cfg;
    ext_config_default(&cfg);
    cfg.workers = 2;
    cfg.watch = e->w;
    cfg.binder = e->b;
    e->svc = ext_service_new(e->st, &cfg);
    CHECK(live_wait(10, env_ready, e), "%s: the watch is not ready", what);
}

void live_env_stop(live_env *e) {
    ext_service_free(e->svc);
    ext_binder_free(e->b);
    ext_watch_stop(e->w);
    ext_pending_free(e->pending);
    dra_store_free(e->st);
}

static json_t *slice(int n, const char *model) {
    char name[32], node[32];
    snprintf(name, sizeof name, "node-%02d-gpus", n);
    snprintf(node, sizeof node, "node-%02d", n);
    return live_slice(name, node, 8, model);
}

static json_t *claim(int n, int first, int count, const char *name) {
    char pool[32];
    snprintf(pool, sizeof pool, "node-%02d", n);
    return live_allocated_claim("ml", name, pool, first, count);
}

static const char *RESOURCES[] = {"deviceclasses", "resourceslices", "resourceclaims", "nodes"};
static const char *KINDS[] = {"DeviceClass", "ResourceSlice", "ResourceClaim", "Node"};

/* The answers of a store: per kind counts, then for each of `nodes` (every node the
 * server has) the fit status of a 1-GPU and of a 2-GPU pod: what is in use where. */
static void answers(dra_store *st, const json_t *nodes, char *out, size_t n) {
    dra_snapshot *s = dra_store_acquire(st);
    size_t o = 0;
    if (!s) {
        snprintf(out, n, "(no snapshot)");
        return;
    }
    for (int k = 0; k < 4; k++) o += (size_t)snprintf(out + o, n - o, "%s=%zu ", KINDS[k], dra_snapshot_count(s, KINDS[k]));
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    static const char *const templates[] = {"one", "two"};
    dra_pod_request *pr[2];
    for (int t = 0; t < 2; t++) {
        json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace", "ml", "spec",
                                "resourceClaims", "name", "g", "resourceClaimTemplateName", templates[t]);
        err e;
        err_clear(&e);
        pr[t] = dra_pod_request_new(s, pod, &e);
        json_decref(pod);
    }
    for (size_t i = 0; pr[0] && pr[1] && i < json_array_size(nodes) && o < n; i++) {
        const char *node = json_string_value(json_array_get(nodes, i));
        o += (size_t)snprintf(out + o, n - o, " %s:", node);
        for (int t = 0; t < 2 && o < n; t++) {
            dra_fit f;
            dra_pod_fit(pr[t], x, node, NULL, DRA_SCORE_NONE, 0, &f);
            o += (size_t)snprintf(out + o, n - o, "%c", "OUTEX"[f.status]);
        }
    }
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr[0]);
    dra_pod_request_free(pr[1]);
    dra_snapshot_release(s);
}

/* The templates the pods use live only in the static part of both stores: one and
 * two GPUs. */
json_t *live_templates(void) {
    json_t *a = json_array();
    static const char *const names[] = {"one", "two"};
    for (int i = 0; i < 2; i++)
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion",
                         "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name", names[i], "namespace",
                         "ml", "spec", "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                         "gpu.example.com", "count", i + 1));
    return a;
}

/* The reference: a fresh store of the server's objects (a static snapshot). Its answers
 * and the names of its nodes (*nodes, new). */
static void reference(fake_api *f, char *out, size_t n, json_t **nodes) {
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    json_t *all = live_templates();
    for (int r = 0; r < 4; r++) {
        json_t *objs = fake_objects(f, RESOURCES[r]);
        json_array_extend(all, objs);
        json_decref(objs);
    }
    err e;
    err_clear(&e);
    if (!dra_store_apply_json(st, all, &e)) fprintf(stderr, "live_test: reference: %s\n", e.msg);
    json_decref(all);
    *nodes = json_array();
    dra_snapshot *s = dra_store_acquire(st);
    for (size_t i = 0; s && i < dra_snapshot_nnodes(s); i++)
        json_array_append_new(*nodes, json_string(dra_snapshot_node_name(s, i)));
    dra_snapshot_release(s);
    answers(st, *nodes, out, n);
    dra_store_free(st);
}

/* Waits until the live store answers as the reference does. */
bool live_converge(fake_api *f, dra_store *st, const char *what) {
    char want[8192], got[8192];
    json_t *nodes;
    reference(f, want, sizeof want, &nodes);
    for (int i = 0; i < 200; i++) {
        answers(st, nodes, got, sizeof got);
        if (!strcmp(want, got)) {
            json_decref(nodes);
            return true;
        }
        usleep(50000);
    }
    json_decref(nodes);
    CHECK(false, "%s: the live store did not converge:\n  want %s\n  got  %s", what, want, got);
    if (getenv("LIVE_DEBUG") && g_watch) {
        json_t *s = ext_watch_status_json(g_watch);
        char *t = json_dumps(s, JSON_COMPACT);
        fprintf(stderr, "  watch: %s\n", t);
        free(t);
        json_decref(s);
    }
    return false;
}

static bool converge(fake_api *f, dra_store *st, const char *what) { return live_converge(f, st, what); }

typedef struct bind_job {
    ext_binder *b;
    int first;
    int ok;
} bind_job;

static void *bind_two(void *arg) {
    bind_job *j = arg;
    for (int i = j->first; i < j->first + 2; i++) {
        char pod[32], uid[32];
        snprintf(pod, sizeof pod, "bind-%d", i);
        snprintf(uid, sizeof uid, "uid-%d", i);
        char *e = ext_bind(j->b, "ml", pod, uid, "node-bind");
        if (!e) j->ok++;
        free(e);
    }
    return NULL;
}

static json_t *unallocated_claim(const char *name, int count) {
    return json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "metadata", "name", name, "namespace", "ml", "spec",
                     "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com", "count", count);
}

static void bind_race(fake_api *f, ext_kube *k, dra_store *st, ext_pending *pending) {
    fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", "node-bind"));
    json_t *sl = slice(90, "H100");
    json_object_set_new(json_object_get(sl, "metadata"), "name", json_string("node-bind-gpus"));
    json_object_set_new(json_object_get(sl, "spec"), "nodeName", json_string("node-bind"));
    json_object_set_new(json_object_get(json_object_get(sl, "spec"), "pool"), "name", json_string("node-bind"));
    fake_put(f, "resourceslices", sl);
    for (int i = 0; i < 8; i++) {
        char claim_name[32], pod[32], uid[32];
        snprintf(claim_name, sizeof claim_name, "bc-%d", i);
        snprintf(pod, sizeof pod, "bind-%d", i);
        snprintf(uid, sizeof uid, "uid-%d", i);
        fake_put(f, "resourceclaims", unallocated_claim(claim_name, 2));
        fake_put_pod(f, json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", pod, "namespace", "ml",
                                  "uid", uid, "spec", "resourceClaims", "name", "g", "resourceClaimName", claim_name));
    }
    /* a shared claim: the second pod only joins reservedFor */
    fake_put(f, "resourceclaims", unallocated_claim("shared-1", 1));
    for (int i = 0; i < 2; i++) {
        char pod[32];
        snprintf(pod, sizeof pod, "share-%d", i);
        fake_put_pod(f, json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", pod, "namespace", "ml",
                                  "uid", pod, "spec", "resourceClaims", "name", "g", "resourceClaimName", "shared-1"));
    }
    converge(f, st, "before binding");
    for (int i = 0; i < 100; i++) {   /* the watch has the new claims */
        dra_snapshot *s = dra_store_acquire(st);
        size_t n = dra_snapshot_count(s, "ResourceClaim");
        dra_snapshot_release(s);
        json_t *objs = fake_objects(f, "resourceclaims");
        size_t want = json_array_size(objs);
        json_decref(objs);
        if (n == want) break;
        usleep(50000);
    }
    ext_binder *b = ext_binder_new(k, st, pending);
    bind_job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (bind_job){.b = b, .first = 2 * t};
        pthread_create(&th[t], NULL, bind_two, &jobs[t]);
    }
    int ok = 0;
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL), ok += jobs[t].ok;
    CHECK(ok == 4, "bind race: %d pods bound on an 8-GPU node, want 4", ok);
    /* the server's objects: no device twice, bound pods' claims reserved for them */
    json_t *claims = fake_objects(f, "resourceclaims");
    json_t *seen = json_object();
    int allocated = 0;
    for (size_t i = 0; i < json_array_size(claims); i++) {
        json_t *c = json_array_get(claims, i);
        const char *name = json_string_value(json_object_get(json_object_get(c, "metadata"), "name"));
        if (strncmp(name, "bc-", 3)) continue;
        json_t *res = json_object_get(json_object_get(json_object_get(json_object_get(c, "status"), "allocation"), "devices"),
                                      "results");
        json_t *rf = json_object_get(json_object_get(c, "status"), "reservedFor");
        char pod[32];
        snprintf(pod, sizeof pod, "bind-%s", name + 3);
        json_t *p = fake_pod(f, "ml", pod);
        bool bound = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")) != NULL;
        json_decref(p);
        CHECK(bound == (json_array_size(res) == 2), "claim %s: allocated %zu devices, pod bound %d", name,
              json_array_size(res), bound);
        CHECK(bound == (json_array_size(rf) == 1), "claim %s: reservedFor %zu entries, pod bound %d", name,
              json_array_size(rf), bound);
        allocated += bound;
        for (size_t r = 0; r < json_array_size(res); r++) {
            const char *d = json_string_value(json_object_get(json_array_get(res, r), "device"));
            CHECK(!json_object_get(seen, d), "device %s allocated twice", d);
            json_object_set_new(seen, d, json_true());
        }
    }
    CHECK(allocated == 4, "%d claims allocated, want 4", allocated);
    json_decref(seen);
    json_decref(claims);
    /* the shared claim: both pods bound on another node, one device, two reservations */
    char *e1 = ext_bind(b, "ml", "share-0", "share-0", "node-01");
    char *e2 = ext_bind(b, "ml", "share-1", "share-1", "node-01");
    CHECK(!e1 && !e2, "shared claim binds: %s / %s", e1 ? e1 : "ok", e2 ? e2 : "ok");
    free(e1);
    free(e2);
    claims = fake_objects(f, "resourceclaims");
    for (size_t i = 0; i < json_array_size(claims); i++) {
        json_t *c = json_array_get(claims, i);
        if (strcmp(json_string_value(json_object_get(json_object_get(c, "metadata"), "name")), "shared-1")) continue;
        json_t *st2 = json_object_get(c, "status");
        CHECK(json_array_size(json_object_get(json_object_get(json_object_get(st2, "allocation"), "devices"), "results")) == 1,
              "shared claim: one device");
        CHECK(json_array_size(json_object_get(st2, "reservedFor")) == 2, "shared claim: two reservations");
        const json_t *fin = json_object_get(json_object_get(c, "metadata"), "finalizers");
        CHECK(json_array_size(fin) == 1 && !strcmp(json_string_value(json_array_get(fin, 0)),
                                                   "resource.kubernetes.io/delete-protection"),
              "shared claim: the delete-protection finalizer");
    }
    json_decref(claims);
    ext_binder_free(b);
    converge(f, st, "after binding");
}

/* ---- streaming lists (sendInitialEvents) --------------------------------------------------- */

static size_t count_of(dra_store *st, const char *kind) {
    dra_snapshot *s = dra_store_acquire(st);
    size_t n = s ? dra_snapshot_count(s, kind) : 0;
    dra_snapshot_release(s);
    return n;
}

static dra_store *store_with_template(void) {
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    json_t *t = live_templates();
    err e;
    err_clear(&e);
    dra_store_apply_json(st, t, &e);
    json_decref(t);
    return st;
}

static const char *initial_state(ext_watch *w, const char *kind) {
    json_t *s = ext_watch_status_json(w);
    const char *v = json_string_value(json_object_get(json_object_get(s, kind), "initialState"));
    const char *r = !v ? "?" : !strcmp(v, "streaming list") ? "streaming list" : "paged list";
    json_decref(s);
    return r;
}

/* The initial state as a streaming list: it replaces a stale cache at once (never a
 * mix of the stale claims and part of the server's), counts as listed only at the
 * initial-events-end bookmark, and comes back the same way after a 410. A server
 * that refuses it (422, no WatchList feature) or ignores it gets paged lists. */
static void streaming_lists(fake_api *f, ext_kube *k) {
    long s0, p0, s1, p1;
    fake_list_counts(f, &s0, &p0);
    dra_store *st = store_with_template();
    json_t *stale = json_array();
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "stale-%d", i);
        json_t *c = claim(1, i, 1, name);
        json_object_set_new(c, "kind", json_string("ResourceClaim"));
        json_object_set_new(c, "apiVersion", json_string("resource.k8s.io/v1"));
        json_array_append_new(stale, c);
    }
    err e;
    err_clear(&e);
    CHECK(dra_store_apply_json(st, stale, &e), "stale claims: %s", e.msg);
    json_decref(stale);
    json_t *objs = fake_objects(f, "resourceclaims");
    size_t want = json_array_size(objs);
    json_decref(objs);
    fake_slow_initial_events(f, 15);
    ext_watch_opts wo = {.max_staleness_s = 5, .page_limit = 5, .idle_s = 2, .watch_timeout_s = 4,
                         .backoff_max_s = 0.5, .quiet = live_quiet()};
    ext_watch *w = ext_watch_start(k, st, &wo);
    size_t seen_other = 0, last = 3;
    bool ready = false;
    for (int i = 0; i < 5000 && !ready; i++) {
        ready = ext_watch_ready(w);
        size_t n = count_of(st, "ResourceClaim");
        if (n != 3 && n != want) seen_other = n;
        last = n;
        usleep(2000);
    }
    CHECK(ready, "streaming list: not ready");
    CHECK(!seen_other, "streaming list: the cache held %zu claims, neither the stale 3 nor the server's %zu", seen_other,
          want);
    CHECK(last == want, "streaming list: %zu claims once ready, the server has %zu", last, want);
    converge(f, st, "streaming list");
    fake_list_counts(f, &s1, &p1);
    /* one per served kind (DeviceTaintRules are not served here) */
    CHECK(s1 - s0 == 4 && p1 == p0, "streaming list: %ld streaming and %ld paged lists, want 4 and 0", s1 - s0, p1 - p0);
    CHECK(!strcmp(initial_state(w, "ResourceClaim"), "streaming list"), "streaming list: status says %s",
          initial_state(w, "ResourceClaim"));
    /* 410 (the change is compacted away before the watches come back): the initial
     * state again, streamed (the paged lists are the main watch's). The claims' watch
     * is held over the put: were the event to reach the open stream before the cut,
     * the watch would resume from the newest version, which compaction keeps, and no
     * relist would follow (a CI flake, stop 16). */
    fake_hold_watch(f, "resourceclaims", true);
    fake_put(f, "resourceclaims", claim(3, 0, 4, "after-410-stream"));
    fake_compact(f);
    fake_cut_watches(f);
    fake_hold_watch(f, "resourceclaims", false);
    converge(f, st, "streaming list after 410");
    /* the store converges through the relist; wait for the relist itself too */
    long s2 = 0, p2 = 0;
    for (int i = 0; i < 500; i++) {
        fake_list_counts(f, &s2, &p2);
        if (s2 > s1) break;
        usleep(20000);
    }
    CHECK(s2 > s1, "after 410: no streaming list");
    fake_slow_initial_events(f, 0);
    ext_watch_stop(w);
    dra_store_free(st);

    /* a server without the WatchList feature: 422, then paged lists. The baseline is
     * taken once the previous watch is stopped: it may have begun one more streaming
     * list (another kind's reconnect after the cut) after s2 was read. */
    fake_set_watch_list(f, FAKE_WATCH_LIST_REFUSED);
    fake_list_counts(f, &s2, &p2);
    st = store_with_template();
    w = ext_watch_start(k, st, &wo);
    for (int i = 0; i < 500 && !ext_watch_ready(w); i++) usleep(20000);
    CHECK(ext_watch_ready(w), "refused streaming list: not ready");
    converge(f, st, "refused streaming list: paged list");
    long s3, p3;
    fake_list_counts(f, &s3, &p3);
    CHECK(p3 - p2 >= 4 && s3 == s2, "refused streaming list: %ld paged lists, %ld streamed", p3 - p2, s3 - s2);
    CHECK(!strcmp(initial_state(w, "Node"), "paged list"), "refused streaming list: status says %s",
          initial_state(w, "Node"));
    ext_watch_stop(w);
    dra_store_free(st);

    /* a server that ignores the parameter (a plain watch, bookmarks before any end of
     * initial events): paged lists */
    fake_set_watch_list(f, FAKE_WATCH_LIST_IGNORED);
    st = store_with_template();
    w = ext_watch_start(k, st, &wo);
    for (int i = 0; i < 500 && !ext_watch_ready(w); i++) usleep(20000);
    CHECK(ext_watch_ready(w), "ignored streaming list: not ready");
    converge(f, st, "ignored streaming list: paged list");
    CHECK(!strcmp(initial_state(w, "ResourceSlice"), "paged list"), "ignored streaming list: status says %s",
          initial_state(w, "ResourceSlice"));
    ext_watch_stop(w);
    dra_store_free(st);
    fake_set_watch_list(f, FAKE_WATCH_LIST_SERVED);
    fake_delete(f, "resourceclaims", "ml", "after-410-stream");
}

/* PodGroups watched where the server does not serve them (404): listed and empty,
 * marked not served, the cache ready. */
static void podgroups_unserved(fake_api *f, ext_kube *k) {
    fake_unserve(f, "podgroups");
    dra_features feat;
    dra_features_default(&feat);
    feat.workload_claims = true;
    dra_store *st = dra_store_new(&feat);
    ext_watch_opts wo = {.max_staleness_s = 5, .idle_s = 2, .watch_timeout_s = 4, .backoff_max_s = 0.5,
                         .quiet = live_quiet(), .podgroups = true};
    ext_watch *w = ext_watch_start(k, st, &wo);
    for (int i = 0; i < 500 && !ext_watch_ready(w); i++) usleep(20000);
    CHECK(ext_watch_ready(w), "PodGroups unserved: not ready");
    json_t *s = ext_watch_status_json(w);
    const json_t *pg = json_object_get(s, "PodGroup");
    CHECK(json_is_false(json_object_get(pg, "served")) && json_is_true(json_object_get(pg, "listed")),
          "PodGroups unserved: should be listed and not served");
    json_decref(s);
    CHECK(count_of(st, "PodGroup") == 0, "PodGroups unserved: the cache has some");
    ext_watch_stop(w);
    dra_store_free(st);
}

static void write_token(const char *path, const char *t) {
    FILE *fp = fopen(path, "w");
    fprintf(fp, "%s\n", t);
    fclose(fp);
}

/* ---- dralloc serve against the fake ---------------------------------------------------------- */

typedef struct http_buf {
    char *p;
    size_t n;
} http_buf;

static size_t http_write(char *d, size_t sz, size_t nm, void *arg) {
    http_buf *b = arg;
    b->p = realloc(b->p, b->n + sz * nm + 1);
    memcpy(b->p + b->n, d, sz * nm);
    b->n += sz * nm;
    b->p[b->n] = '\0';
    return sz * nm;
}

static long http(const char *url, const char *body, char **out) {
    CURL *c = curl_easy_init();
    http_buf b = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    }
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    *out = b.p ? b.p : strdup("");
    return code;
}

/* The filter answer of the reference store, in the extender's terms: which nodes pass. */
static void want_passing(fake_api *f, json_t *pod, char *out, size_t n) {
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    json_t *all = json_array();
    for (int r = 0; r < 4; r++) {
        json_t *objs = fake_objects(f, RESOURCES[r]);
        json_array_extend(all, objs);
        json_decref(objs);
    }
    err e;
    err_clear(&e);
    dra_store_apply_json(st, all, &e);
    json_decref(all);
    dra_snapshot *s = dra_store_acquire(st);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; pr && i < NODES; i++) {
        char node[32];
        snprintf(node, sizeof node, "node-%02d", i);
        dra_fit fit;
        dra_pod_fit(pr, x, node, NULL, DRA_SCORE_NONE, 0, &fit);
        if (fit.status == DRA_FIT_OK) o += (size_t)snprintf(out + o, n - o, "%s,", node);
    }
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    dra_snapshot_release(s);
    dra_store_free(st);
}

static void got_passing(const char *answer, char *out, size_t n) {
    json_t *j = json_loads(answer, 0, NULL);
    const json_t *names = json_object_get(j, "NodeNames");
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < json_array_size(names); i++)
        o += (size_t)snprintf(out + o, n - o, "%s,", json_string_value(json_array_get(names, i)));
    json_decref(j);
}

static void serve_e2e(fake_api *f, const char *dralloc, const char *tokfile) {
    json_decref(fake_request_log(f, true));   /* from here on: what serve asks (and this process's watch) */
    char url[64], logpath[] = "/tmp/dralloc-live-serve-XXXXXX";
    snprintf(url, sizeof url, "http://127.0.0.1:%d", fake_port(f));
    int logfd = mkstemp(logpath);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(logfd, 2);
        execl(dralloc, dralloc, "serve", "--server", url, "--token-file", tokfile, "--listen", "127.0.0.1:0",
              "--max-staleness", "2s", "--bind", (char *)NULL);
        _exit(127);
    }
    /* the log says where it listens */
    char listen[128] = "";
    for (int i = 0; i < 200 && !listen[0]; i++) {
        usleep(50000);
        FILE *fp = fopen(logpath, "r");
        char line[512];
        while (fp && fgets(line, sizeof line, fp))
            if (sscanf(line, "dralloc serve: listening on %127s", listen) == 1) break;
        if (fp) fclose(fp);
    }
    CHECK(listen[0], "dralloc serve did not say where it listens");
    char base[200], path[300], *body = NULL;
    snprintf(base, sizeof base, "http://%s", listen);
    long code = 0;
    for (int i = 0; i < 200; i++) {
        snprintf(path, sizeof path, "%s/readyz", base);
        free(body);
        if ((code = http(path, NULL, &body)) == 200) break;
        usleep(50000);
    }
    CHECK(code == 200, "serve --server: /readyz %ld (%s)", code, body);
    free(body);
    json_t *pod = json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "e2e", "namespace", "ml",
                            "uid", "uid-e2e", "spec", "resourceClaims", "name", "g", "resourceClaimName", "e2e-claim");
    fake_put(f, "resourceclaims", unallocated_claim("e2e-claim", 2));
    json_t *names = json_array();
    for (int i = 0; i < NODES; i++) json_array_append_new(names, json_sprintf("node-%02d", i));
    json_t *args = json_pack("{s:O, s:n, s:o}", "Pod", pod, "Nodes", "NodeNames", names);
    char *req = json_dumps(args, JSON_COMPACT);
    char want[512], got[512] = "";
    want_passing(f, pod, want, sizeof want);
    snprintf(path, sizeof path, "%s/filter", base);
    for (int i = 0; i < 100; i++) {   /* until the watch has the claim */
        code = http(path, req, &body);
        got_passing(body, got, sizeof got);
        free(body);
        if (!strcmp(got, want)) break;
        usleep(50000);
    }
    CHECK(code == 200 && !strcmp(got, want), "serve --server: /filter passes %s, want %s", got, want);
    /* a fault, then changes: the answers follow the server */
    fake_compact(f);
    fake_cut_watches(f);
    fake_put(f, "resourceclaims", claim(0, 0, 8, "e2e-hog"));
    want_passing(f, pod, want, sizeof want);
    for (int i = 0; i < 100; i++) {
        code = http(path, req, &body);
        got_passing(body, got, sizeof got);
        free(body);
        if (!strcmp(got, want)) break;
        usleep(50000);
    }
    CHECK(!strcmp(got, want), "serve --server after 410 and a change: /filter passes %s, want %s", got, want);
    /* bind through the HTTP API: the pod lands, its claim is written */
    json_t *pj = json_deep_copy(pod);
    fake_put_pod(f, pj);
    /* the first node the filter passed */
    char target[32] = "";
    sscanf(got, "%31[^,]", target);
    CHECK(target[0], "serve --server: no node passes the filter: nothing to bind to");
    char bargs[200];
    snprintf(bargs, sizeof bargs, "{\"PodName\":\"e2e\",\"PodNamespace\":\"ml\",\"PodUID\":\"uid-e2e\",\"Node\":\"%s\"}",
             target);
    snprintf(path, sizeof path, "%s/bind", base);
    code = http(path, bargs, &body);
    CHECK(code == 200 && strstr(body, "\"Error\":\"\""), "serve --bind: /bind answered %ld %s", code, body);
    free(body);
    json_t *bound = fake_pod(f, "ml", "e2e");
    CHECK(bound && json_string_value(json_object_get(json_object_get(bound, "spec"), "nodeName")) &&
              !strcmp(json_string_value(json_object_get(json_object_get(bound, "spec"), "nodeName")), target),
          "serve --bind: the pod is not bound to %s", target);
    json_decref(bound);
    snprintf(path, sizeof path, "%s/metrics", base);
    http(path, NULL, &body);
    CHECK(strstr(body, "dralloc_binds_total{outcome=\"bound\"} 1"), "serve --bind: /metrics does not count the bind");
    free(body);
    /* every request serve --bind made is one deploy/'s RBAC grants (tests/deploy/api_calls.h) */
    json_t *log = fake_request_log(f, false);
    size_t li;
    json_t *lr;
    bool bound_seen = false;
    json_array_foreach(log, li, lr) {
        char group[128], res[128];
        const char *verb = NULL;
        const char *req = json_string_value(lr);
        bool known = api_call_of(req, group, sizeof group, res, sizeof res, &verb) && api_call_find(group, res, verb);
        CHECK(known, "serve --bind requested %s: not in tests/deploy/api_calls.h (nor so in deploy/'s RBAC)", req);
        bound_seen |= known && !strcmp(res, "pods/binding");
    }
    CHECK(bound_seen && json_array_size(log) > 5, "serve --bind: the request log misses the binding (%zu requests)",
          json_array_size(log));
    json_decref(log);
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve --server: exit status %d after SIGTERM", status);
    /* the offline tools read the same cluster once: capacity as a static snapshot says */
    char cmd[600], *capout = NULL;
    snprintf(cmd, sizeof cmd, "%s capacity --server %s --token-file %s -o json", dralloc, url, tokfile);
    FILE *p = popen(cmd, "r");
    http_buf cb = {0};
    char chunk[4096];
    size_t got_n;
    while (p && (got_n = fread(chunk, 1, sizeof chunk, p)) > 0) http_write(chunk, 1, got_n, &cb);
    int prc = p ? pclose(p) : -1;
    capout = cb.p;
    CHECK(prc == 0 && capout, "capacity --server: exit %d", prc);
    json_t *cap = capout ? json_loads(capout, 0, NULL) : NULL;
    size_t want_nodes = 0;
    json_t *nodes_now = fake_objects(f, "nodes");
    want_nodes = json_array_size(nodes_now);
    json_decref(nodes_now);
    CHECK(cap && json_array_size(json_object_get(cap, "nodes")) == want_nodes,
          "capacity --server: %zu nodes, the server has %zu", json_array_size(json_object_get(cap, "nodes")), want_nodes);
    json_decref(cap);
    free(capout);
    free(req);
    json_decref(args);
    json_decref(pod);
    close(logfd);
    unlink(logpath);
}

/* One `dralloc serve` replica with --leader-elect, its log, and its two ports. */
typedef struct replica {
    pid_t pid;
    char log[64];
    char main[128], health[128];   /* "127.0.0.1:PORT" */
} replica;

static void replica_start(replica *r, const char *dralloc, const char *url, const char *tokfile) {
    snprintf(r->log, sizeof r->log, "/tmp/dralloc-live-replica-XXXXXX");
    int fd = mkstemp(r->log);
    r->pid = fork();
    if (r->pid == 0) {
        dup2(fd, 2);
        execl(dralloc, dralloc, "serve", "--server", url, "--token-file", tokfile, "--listen", "127.0.0.1:0",
              "--health-listen", "127.0.0.1:0", "--bind", "--leader-elect", "--lease-namespace", "dralloc-system",
              "--lease-name", "dralloc-e2e", "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline",
              "3s", "--leader-elect-retry-period", "1s", (char *)NULL);
        _exit(127);
    }
    close(fd);
    r->main[0] = r->health[0] = '\0';
    for (int i = 0; i < 200 && !r->main[0]; i++) {
        usleep(50000);
        FILE *fp = fopen(r->log, "r");
        char line[512];
        while (fp && fgets(line, sizeof line, fp)) {
            sscanf(line, "dralloc serve: health on %127s", r->health);
            sscanf(line, "dralloc serve: listening on %127s", r->main);
        }
        if (fp) fclose(fp);
    }
    CHECK(r->main[0] && r->health[0], "replica: no listening/health line in its log");
}

static long replica_get(const replica *r, bool health, const char *path, char **out) {
    char url[300];
    snprintf(url, sizeof url, "http://%s%s", health ? r->health : r->main, path);
    return http(url, NULL, out);
}

/* leader.leading of /debug/cache; its identity in id. */
static bool replica_leads(const replica *r, char *id, size_t n) {
    char *out = NULL;
    replica_get(r, false, "/debug/cache", &out);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    const json_t *l = json_object_get(j, "leader");
    if (id) snprintf(id, n, "%s", json_string_value(json_object_get(l, "identity")) ?: "");
    bool lead = json_is_true(json_object_get(l, "leading"));
    json_decref(j);
    free(out);
    return lead;
}

/* Two replicas with --leader-elect (deploy/'s other shape: a Service in front of
 * dralloc): both ready, one leads; the standby's /bind names the leader; the leader
 * killed (no release), the standby leads within 16 s. */
static void replicas(fake_api *f, const char *dralloc, const char *tokfile) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", fake_port(f));
    replica r[2];
    replica_start(&r[0], dralloc, url, tokfile);
    replica_start(&r[1], dralloc, url, tokfile);
    long code[2] = {0, 0};
    for (int i = 0; i < 200 && (code[0] != 200 || code[1] != 200); i++) {
        for (int k = 0; k < 2; k++) {
            char *out = NULL;
            code[k] = replica_get(&r[k], true, "/readyz", &out);
            free(out);
        }
        usleep(50000);
    }
    CHECK(code[0] == 200 && code[1] == 200, "replicas: /readyz %ld and %ld, want both 200 (a standby is ready)", code[0],
          code[1]);
    int leader = -1;
    char id[2][256];
    for (int i = 0; i < 100 && leader < 0; i++) {
        bool a = replica_leads(&r[0], id[0], sizeof id[0]), b = replica_leads(&r[1], id[1], sizeof id[1]);
        if (a != b) leader = a ? 0 : 1;
        usleep(100000);
    }
    CHECK(leader >= 0, "replicas: not exactly one leader");
    if (leader >= 0) {
        int standby = 1 - leader;
        char *out = NULL, path[300];
        snprintf(path, sizeof path, "http://%s/bind", r[standby].main);
        long c = http(path, "{\"PodName\":\"p\",\"PodNamespace\":\"ml\",\"PodUID\":\"u\",\"Node\":\"node-00\"}", &out);
        json_t *j = out ? json_loads(out, 0, NULL) : NULL;
        const char *e = json_string_value(json_object_get(j, "Error"));
        CHECK(c == 200 && e && strstr(e, id[leader]), "replicas: the standby's /bind answered %ld %s, want an Error naming %s",
              c, out ? out : "", id[leader]);
        json_decref(j);
        free(out);
        out = NULL;
        replica_get(&r[standby], true, "/metrics", &out);
        CHECK(out && strstr(out, "\ndralloc_leader 0\n"), "replicas: the standby's /metrics do not say dralloc_leader 0");
        free(out);
        /* the leader dies without releasing the Lease */
        kill(r[leader].pid, SIGKILL);
        waitpid(r[leader].pid, NULL, 0);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double took = 0;
        while (!replica_leads(&r[standby], NULL, 0) && took < 30) {
            usleep(100000);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        }
        printf("live_test: replicas: failover %.1f s after the leader was killed (lease 4s, retry 1s)\n", took);
        CHECK(took <= 16, "replicas: the standby took over %.1f s after the kill (want <= 16 s)", took);
        kill(r[standby].pid, SIGTERM);
        int st = 0;
        waitpid(r[standby].pid, &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "replicas: exit status %d after SIGTERM", st);
    } else {
        for (int k = 0; k < 2; k++) kill(r[k].pid, SIGKILL), waitpid(r[k].pid, NULL, 0);
    }
    for (int k = 0; k < 2; k++) unlink(r[k].log);
}

/* After each fault a watch meets, the store answers as the server's objects do. */
static void cache_faults(fake_api *f, dra_store *st, ext_watch *w, const char *tokfile) {
    /* a burst: new claims, deletions, a slice replaced */
    for (int n = 1; n < NODES; n += 2) {
        char name[32];
        snprintf(name, sizeof name, "new-%02d", n);
        fake_put(f, "resourceclaims", claim(n, 0, 7, name));
    }
    fake_delete(f, "resourceclaims", "ml", "busy-00");
    fake_delete(f, "resourceclaims", "ml", "busy-02");
    fake_put(f, "resourceslices", slice(4, "H200"));
    converge(f, st, "burst of changes");

    /* compaction, then the stream is cut: the watch from the old version gets 410.
     * The claims' watch is held over the delete: had the event reached the open
     * stream first, the watch would resume from the newest version and not relist. */
    uint64_t relists = ext_watch_relists(w);
    fake_hold_watch(f, "resourceclaims", true);
    fake_compact(f);
    fake_delete(f, "resourceclaims", "ml", "new-01");
    fake_cut_watches(f);
    fake_hold_watch(f, "resourceclaims", false);
    converge(f, st, "compaction + 410");
    /* the objects can converge a moment before the counter moves (seen under
     * ThreadSanitizer in CI): wait for it */
    CHECK(live_wait_relist(w, relists, 10), "no relist after 410");

    /* a stream cut in the middle of a line */
    fake_put(f, "resourceclaims", claim(0, 0, 3, "after-cut"));
    fake_cut_watches(f);
    fake_delete(f, "resourceclaims", "ml", "busy-04");
    converge(f, st, "cut mid-line");

    /* a stalled stream: silent connections are dropped and reopened */
    fake_stall_watches(f);
    fake_put(f, "resourceclaims", claim(2, 0, 8, "during-stall"));
    converge(f, st, "stalled stream");

    /* token rotation: the file changes, the server wants the new token */
    write_token(tokfile, "t2");
    fake_set_token(f, "t2");
    fake_cut_watches(f);
    fake_delete(f, "resourceclaims", "ml", "during-stall");
    converge(f, st, "token rotation");

    /* 429 with Retry-After on the next requests */
    fake_fail_next(f, 3, 429, 1);
    fake_cut_watches(f);
    fake_put(f, "resourceclaims", claim(5, 0, 8, "after-429"));
    converge(f, st, "429 Retry-After");

    /* an expired continue token while paging a relist */
    fake_expire_next_continue(f, 1);
    fake_compact(f);
    fake_delete(f, "resourceclaims", "ml", "after-429");
    fake_cut_watches(f);
    converge(f, st, "expired continue");

    /* one object the engine refuses among six it takes: the six land without it (the
     * fake server writes one event per chunk, so each is its own batch here; that a
     * batch with a refused object is still one snapshot is test_store.c's
     * a_batch_skips_what_the_engine_refuses_in_one_snapshot) */
    fake_hold_watch(f, "resourceclaims", true);
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "batch-%d", i);
        fake_put(f, "resourceclaims", unallocated_claim(name, 1));
    }
    json_t *bad = unallocated_claim("batch-bad", 1);
    json_t *req = json_array_get(json_object_get(json_object_get(json_object_get(bad, "spec"), "devices"), "requests"), 0);
    json_object_set_new(json_object_get(req, "exactly"), "selectors",
                        json_pack("[{s:{s:s}}]", "cel", "expression", "device.driver =="));
    fake_put(f, "resourceclaims", bad);
    dra_snapshot *before = dra_store_acquire(st);
    size_t claims0 = dra_snapshot_count(before, "ResourceClaim");
    dra_snapshot_release(before);
    fake_hold_watch(f, "resourceclaims", false);
    size_t claims = 0;
    for (int i = 0; i < 500 && claims < claims0 + 6; i++) {
        usleep(20000);
        dra_snapshot *s = dra_store_acquire(st);
        claims = dra_snapshot_count(s, "ResourceClaim");
        dra_snapshot_release(s);
    }
    fake_delete(f, "resourceclaims", "ml", "batch-bad");
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "batch-%d", i);
        fake_delete(f, "resourceclaims", "ml", name);
    }
    CHECK(claims == claims0 + 6, "a batch with one refused object: %zu claims, want %zu", claims, claims0 + 6);
    converge(f, st, "a batch with one refused object");

    json_t *status = ext_watch_status_json(w);
    CHECK(json_is_false(json_object_get(json_object_get(status, "DeviceTaintRule"), "served")),
          "DeviceTaintRule should be marked not served");
    CHECK(json_is_false(json_object_get(json_object_get(status, "PodGroup"), "watched")),
          "PodGroups should not be watched without the gate");
    json_decref(status);
    CHECK(ext_watch_ready(w), "not ready while the server is fine");
}

/* Leader election: two candidates, one leader; the leader dies (no release), the
 * standby takes over within the lease duration; a clean stop releases. */
static void leader_election(fake_api *f, ext_kube *k) {
    ext_lease_opts lo = {.ns = "kube-system", .name = "dralloc", .duration_s = 1.5, .renew_deadline_s = 1.0,
                         .retry_s = 0.2, .quiet = !getenv("LIVE_DEBUG")};
    lo.identity = "replica-a";
    ext_lease *a = ext_lease_start(k, &lo);
    for (int i = 0; i < 100 && !ext_lease_is_leader(a); i++) usleep(20000);
    lo.identity = "replica-b";
    ext_lease *b = ext_lease_start(k, &lo);
    usleep(600000);
    CHECK(ext_lease_is_leader(a) && !ext_lease_is_leader(b), "a should lead, b stand by");
    double t0 = (double)time(NULL);
    ext_lease_stop(a, false);   /* dies: no release */
    int waited_b = 0;
    while (!ext_lease_is_leader(b) && waited_b++ < 200) usleep(20000);
    CHECK(ext_lease_is_leader(b), "b did not take over within 4 s");
    CHECK((double)time(NULL) - t0 <= 3.5, "takeover took longer than the lease duration plus a retry");
    json_t *lease = fake_lease(f, "kube-system", "dralloc");
    CHECK(lease && !strcmp(json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity")), "replica-b"),
          "the Lease does not name replica-b");
    CHECK(json_integer_value(json_object_get(json_object_get(lease, "spec"), "leaseTransitions")) == 1,
          "one transition expected");
    json_decref(lease);
    ext_lease_stop(b, true);
    lease = fake_lease(f, "kube-system", "dralloc");
    CHECK(lease && !strcmp(json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity")), ""),
          "a clean stop should release the Lease");
    json_decref(lease);
}

/* LIVE_ONLY=part,part,... runs only those parts (after the first list, which every
 * part needs): tls discovery faults lease bind stream gang er pending serve replicas podgroups. */
static bool part(const char *name) {
    const char *only = getenv("LIVE_ONLY");
    if (!only || !*only) return true;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n])) return true;
    return false;
}

int main(int argc, char **argv) {
    /* https and client certificates first, while no thread runs (it forks openssl) */
    if (part("tls")) live_tls();

    /* the offline read finds each kind at the version the server serves (its own fake) */
    if (argc > 1 && part("discovery")) live_discovery(argv[1]);

    fake_api *f = fake_start();
    fake_put(f, "deviceclasses", json_pack("{s:{s:s}, s:{s:[{s:{s:s}}]}}", "metadata", "name", "gpu.example.com", "spec",
                                            "selectors", "cel", "expression", "device.driver == 'gpu.example.com'"));
    for (int n = 0; n < NODES; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%02d", n);
        fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", node));
        fake_put(f, "resourceslices", slice(n, "H100"));
    }
    for (int n = 0; n < NODES; n += 2) {
        char name[32];
        snprintf(name, sizeof name, "busy-%02d", n);
        fake_put(f, "resourceclaims", claim(n, 0, 7, name));
    }
    fake_unserve(f, "devicetaintrules");
    char tokfile[] = "/tmp/dralloc-live-token-XXXXXX";
    int fd = mkstemp(tokfile);
    close(fd);
    write_token(tokfile, "t1");
    fake_set_token(f, "t1");

    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", fake_port(f));
    err e;
    err_clear(&e);
    ext_kube_opts ko = {.server = url, .token_file = tokfile};
    ext_kube *k = ext_kube_new(&ko, &e);
    if (!k) {
        fprintf(stderr, "live_test: %s\n", e.msg);
        return 1;
    }
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    json_t *t = live_templates();
    dra_store_apply_json(st, t, &e);
    json_decref(t);
    /* paged lists here, so that paging meets its faults (streaming lists: below); a
     * pending-writes table as in bind mode (the bind race binds into this store) */
    ext_pending *pending = ext_pending_new(60);
    ext_watch_opts wo = {.max_staleness_s = 1.5, .page_limit = 5, .idle_s = 2, .watch_timeout_s = 4,
                         .backoff_max_s = 0.5, .quiet = !getenv("LIVE_DEBUG"), .no_watch_list = true,
                         .pending = pending};
    ext_watch *w = ext_watch_start(k, st, &wo);
    g_watch = w;
    int waited = 0;
    while (!ext_watch_ready(w) && waited++ < 200) usleep(50000);
    CHECK(ext_watch_ready(w), "not ready after the first list");
    converge(f, st, "first list");
    /* dralloc why on the cluster as first listed (later parts add claims and pods) */
    if (argc > 1 && part("why")) live_why(f, argv[1], tokfile, NODES);

    if (part("faults")) cache_faults(f, st, w, tokfile);

    /* leader election: two candidates, one leader; the leader dies (no release),
     * the standby takes over within the lease duration; a clean stop releases */
    if (part("lease")) leader_election(f, k);

    /* bind mode: 8 pods of 2 GPUs race for one 8-GPU node from 4 threads; exactly 4
     * bind, no device is in two claims, the losers' claims are left unallocated */
    if (part("bind")) bind_race(f, k, st, pending);

    /* the initial state as a streaming list (sendInitialEvents), and its refusal */
    if (part("stream")) streaming_lists(f, k);

    /* bind mode: gang siblings of a PodGroup, then DRA extended resources */
    if (part("gang")) live_gang_siblings(f, k);
    if (part("er")) live_extended_resources(f, k);
    /* bind mode against a lagging watch: no stale event undoes a write */
    if (part("pending")) live_pending(f, k);
    if (part("concurrent")) live_concurrent(f, k);
    if (part("requeue")) live_requeue(f, k);
    if (part("evict")) live_evict();

    /* dralloc serve as kube-scheduler sees it, fed by the same server */
    if (argc > 1 && part("serve")) serve_e2e(f, argv[1], tokfile);

    /* two serve --leader-elect processes: both ready, the standby names the leader, failover */
    if (argc > 1 && part("replicas")) replicas(f, argv[1], tokfile);

    if (part("podgroups")) podgroups_unserved(f, k);

    /* the server goes away: not ready once the staleness limit has passed */
    fake_stop(f);
    sleep(3);
    CHECK(!ext_watch_ready(w), "still ready 3 s after the server went away (limit 1.5 s)");

    ext_watch_stop(w);
    ext_pending_free(pending);
    dra_store_free(st);
    ext_kube_free(k);
    unlink(tokfile);
    printf("live_test: %s (%d failure%s)\n", live_failures ? "FAILED" : "every check passed", live_failures,
           live_failures == 1 ? "" : "s");
    return live_failures ? 1 : 0;
}

/* POST /filter of pod on nodes through svc: the passing nodes as "a,b," in out and, in
 * why, the failure message of node `explain` (why NULL: none). */
void live_filter(ext_service *svc, const json_t *pod, const char *const *nodes, int n, char *out, size_t outn,
                 const char *explain, char *why, size_t whyn) {
    json_t *names = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(names, json_string(nodes[i]));
    json_t *args = json_pack("{s:O, s:n, s:o}", "Pod", pod, "Nodes", "NodeNames", names);
    char *body = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    ext_reply r;
    ext_service_handle(svc, "POST", "/filter", body, strlen(body), &r);
    free(body);
    json_t *j = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    CHECK(j, "/filter answered %d %.*s", r.status, (int)r.len, r.body);
    size_t o = 0;
    out[0] = '\0';
    const json_t *pass = json_object_get(j, "NodeNames");
    for (size_t i = 0; i < json_array_size(pass); i++)
        o += (size_t)snprintf(out + o, outn - o, "%s,", json_string_value(json_array_get(pass, i)));
    if (why) {
        const char *m = json_string_value(json_object_get(json_object_get(j, "FailedNodes"), explain));
        if (!m) m = json_string_value(json_object_get(json_object_get(j, "FailedAndUnresolvableNodes"), explain));
        snprintf(why, whyn, "%s", m ? m : "");
    }
    json_decref(j);
    ext_reply_free(&r);
}
