/* live_test.c — the live cache (extender/watch.c, kube.c) against the fake
 * kube-apiserver: after the first list, after a burst of changes, and after each
 * fault a watch can meet (compaction and 410, a stream cut mid-line, a stalled
 * stream, token rotation, 429 with Retry-After, an expired continue token while
 * paging, a resource the server does not serve), the store must answer exactly as a
 * fresh store loaded with the server's objects: same object counts per kind, and
 * the same fit/unfit answer for a 2-GPU pod on every node. Readiness must turn
 * false once the server has been gone longer than the staleness limit. A plain
 * program run by CTest (under ASan/LSan in the sanitizer build). */
#include "extender/kube.h"
#include "extender/lease.h"
#include "extender/watch.h"
#include "tests/live/fakeapi.h"

#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { NODES = 12 };
static ext_watch *g_watch;   /* for LIVE_DEBUG output */

static int failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "live_test: FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                           \
            failures++;                                    \
        }                                                  \
    } while (0)

static json_t *slice(int n, const char *model) {
    json_t *devs = json_array();
    for (int i = 0; i < 8; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}}}", "name", d, "attributes", "model", "string", model));
    }
    char name[32], node[32];
    snprintf(name, sizeof name, "node-%02d-gpus", n);
    snprintf(node, sizeof node, "node-%02d", n);
    return json_pack("{s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "metadata", "name", name, "spec", "driver",
                     "gpu.example.com", "nodeName", node, "pool", "name", node, "generation", 1, "resourceSliceCount", 1,
                     "devices", devs);
}

static json_t *claim(int n, int first, int count, const char *name) {
    json_t *res = json_array();
    char pool[32];
    snprintf(pool, sizeof pool, "node-%02d", n);
    for (int i = first; i < first + count; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver", "gpu.example.com", "pool",
                                             pool, "device", d));
    }
    return json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}, s:{s:{s:{s:o}}}}", "metadata", "name", name,
                     "namespace", "ml", "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                     "gpu.example.com", "count", count, "status", "allocation", "devices", "results", res);
}

static const char *RESOURCES[] = {"deviceclasses", "resourceslices", "resourceclaims", "nodes"};
static const char *KINDS[] = {"DeviceClass", "ResourceSlice", "ResourceClaim", "Node"};

/* The answers of a store: per kind counts, then fit status of a 2-GPU pod per node. */
static void answers(dra_store *st, char *out, size_t n) {
    dra_snapshot *s = dra_store_acquire(st);
    size_t o = 0;
    if (!s) {
        snprintf(out, n, "(no snapshot)");
        return;
    }
    for (int k = 0; k < 4; k++) o += (size_t)snprintf(out + o, n - o, "%s=%zu ", KINDS[k], dra_snapshot_count(s, KINDS[k]));
    json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace", "ml", "spec",
                            "resourceClaims", "name", "g", "resourceClaimTemplateName", "two");
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    for (int i = 0; pr && i < NODES + 2; i++) {
        char node[32];
        snprintf(node, sizeof node, "node-%02d", i);
        dra_fit f;
        dra_pod_fit(pr, x, node, NULL, DRA_SCORE_NONE, 0, &f);
        o += (size_t)snprintf(out + o, n - o, "%c", "OUTEX"[f.status]);
    }
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(pod);
    dra_snapshot_release(s);
}

/* The template the pod uses lives only in the static part of both stores. */
static json_t *tmpl(void) {
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceClaimTemplate", "metadata", "name", "two", "namespace", "ml", "spec", "spec",
                     "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com", "count", 2);
}

static void reference(fake_api *f, char *out, size_t n) {
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    json_t *all = json_array();
    json_array_append_new(all, tmpl());
    for (int r = 0; r < 4; r++) {
        json_t *objs = fake_objects(f, RESOURCES[r]);
        json_array_extend(all, objs);
        json_decref(objs);
    }
    err e;
    err_clear(&e);
    if (!dra_store_apply_json(st, all, &e)) fprintf(stderr, "live_test: reference: %s\n", e.msg);
    json_decref(all);
    answers(st, out, n);
    dra_store_free(st);
}

/* Waits until the live store answers as the reference does. */
static bool converge(fake_api *f, dra_store *st, const char *what) {
    char want[512], got[512];
    reference(f, want, sizeof want);
    for (int i = 0; i < 200; i++) {
        answers(st, got, sizeof got);
        if (!strcmp(want, got)) return true;
        usleep(50000);
    }
    CHECK(false, "%s: the live store did not converge:\n  want %s\n  got  %s", what, want, got);
    if (getenv("LIVE_DEBUG")) {
        json_t *s = ext_watch_status_json(g_watch);
        char *t = json_dumps(s, JSON_COMPACT);
        fprintf(stderr, "  watch: %s\n", t);
        free(t);
        json_decref(s);
    }
    return false;
}

static void write_token(const char *path, const char *t) {
    FILE *fp = fopen(path, "w");
    fprintf(fp, "%s\n", t);
    fclose(fp);
}

int main(void) {
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
    json_t *t = tmpl();
    dra_store_apply_json(st, t, &e);
    json_decref(t);
    ext_watch_opts wo = {.max_staleness_s = 1.5, .page_limit = 5, .idle_s = 2, .watch_timeout_s = 4,
                         .backoff_max_s = 0.5, .quiet = !getenv("LIVE_DEBUG")};
    ext_watch *w = ext_watch_start(k, st, &wo);
    g_watch = w;
    int waited = 0;
    while (!ext_watch_ready(w) && waited++ < 200) usleep(50000);
    CHECK(ext_watch_ready(w), "not ready after the first list");
    converge(f, st, "first list");

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

    /* compaction, then the stream is cut: the watch from the old version gets 410 */
    uint64_t relists = ext_watch_relists(w);
    fake_compact(f);
    fake_delete(f, "resourceclaims", "ml", "new-01");
    fake_cut_watches(f);
    converge(f, st, "compaction + 410");
    CHECK(ext_watch_relists(w) > relists, "no relist after 410");

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

    json_t *status = ext_watch_status_json(w);
    CHECK(json_is_false(json_object_get(json_object_get(status, "DeviceTaintRule"), "served")),
          "DeviceTaintRule should be marked not served");
    json_decref(status);
    CHECK(ext_watch_ready(w), "not ready while the server is fine");

    /* leader election: two candidates, one leader; the leader dies (no release),
     * the standby takes over within the lease duration; a clean stop releases */
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

    /* the server goes away: not ready once the staleness limit has passed */
    fake_stop(f);
    sleep(3);
    CHECK(!ext_watch_ready(w), "still ready 3 s after the server went away (limit 1.5 s)");

    ext_watch_stop(w);
    dra_store_free(st);
    ext_kube_free(k);
    unlink(tokfile);
    printf("live_test: %s (%d failure%s)\n", failures ? "FAILED" : "every check passed", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
