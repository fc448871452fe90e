/* store_stress.c — many request threads allocating from one store while a writer
 * publishes new snapshots built from the old ones and old ones are released: the
 * concurrency proof of the long-running core. A plain program (Criterion forks and
 * crashes under ThreadSanitizer), run by CTest in the sanitizer build (ASan, LSan)
 * and by `make tsan` in the ThreadSanitizer build.
 *
 * The cluster: NODES nodes of 8 GPUs. The writer toggles two states — A: claim
 * "hog" holds all 8 GPUs of every third node; B: it does not — by deleting and
 * re-adding the claims — and between toggles publishes one node's slice again with a
 * new generation (the same devices: no answer changes, but that node's view is built
 * again while the others' are handed on from snapshot to snapshot). Every reader pins a snapshot, decides a 2-GPU pod on every
 * node, and checks each answer against the single-threaded answer of the same
 * state, computed before the threads start. Exit 0 when every answer matched. */
#include "engine/engine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NODES = 30, READERS = 4, ROUNDS = 60 };

static json_t *slice(int n, int gen) {
    json_t *devs = json_array();
    for (int i = 0; i < 8; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:i}}}", "name", d, "attributes", "index", "int", i));
    }
    char name[32], pool[32];
    snprintf(name, sizeof name, "node-%d-gpus", n);
    snprintf(pool, sizeof pool, "node-%d", n);
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceSlice", "metadata", "name", name, "spec", "driver", "gpu.example.com", "nodeName",
                     pool, "pool", "name", pool, "generation", gen, "resourceSliceCount", 1, "devices", devs);
}

static json_t *hog(int n) {
    json_t *res = json_array();
    char pool[32], name[32];
    snprintf(pool, sizeof pool, "node-%d", n);
    snprintf(name, sizeof name, "hog-%d", n);
    for (int i = 0; i < 8; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver", "gpu.example.com",
                                             "pool", pool, "device", d));
    }
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}, s:{s:{s:{s:o}}}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace", "ml", "spec",
                     "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com", "count", 8,
                     "status", "allocation", "devices", "results", res);
}

typedef struct shared {
    dra_store *st;
    json_t *pod;
    dra_fit_status want[2][NODES];   /* [state A=1/B=0][node] */
    _Atomic bool stop;
    _Atomic long checked, wrong;
} shared;

static void decide(dra_snapshot *s, const json_t *pod, dra_alloc_ctx *x, dra_fit_status *out) {
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    if (!pr) {
        fprintf(stderr, "store_stress: pod: %s\n", e.msg);
        exit(1);
    }
    for (int n = 0; n < NODES; n++) {
        char name[32];
        snprintf(name, sizeof name, "node-%d", n);
        dra_fit f;
        dra_pod_fit(pr, x, name, NULL, DRA_SCORE_BINPACK, 0, &f);
        out[n] = f.status;
    }
    dra_pod_request_free(pr);
}

static void *reader(void *arg) {
    shared *sh = arg;
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit_status got[NODES];
    while (!atomic_load(&sh->stop)) {
        dra_snapshot *s = dra_store_acquire(sh->st);
        decide(s, sh->pod, x, got);
        int state = dra_snapshot_count(s, "ResourceClaim") > 0;
        for (int n = 0; n < NODES; n++)
            if (got[n] != sh->want[state][n]) atomic_fetch_add(&sh->wrong, 1);
        atomic_fetch_add(&sh->checked, NODES);
        dra_snapshot_release(s);
    }
    dra_alloc_ctx_free(x);
    return NULL;
}

static void apply(dra_store *st, json_t *doc, const dra_change *dels, size_t ndels) {
    err e;
    err_clear(&e);
    uint64_t g = doc ? dra_store_apply_json(st, doc, &e) : dra_store_apply(st, dels, ndels, &e);
    if (!g) {
        char buf[2048];
        fprintf(stderr, "store_stress: apply: %s\n", err_format(&e, buf, sizeof buf));
        exit(1);
    }
}

int main(void) {
    dra_features f;
    dra_features_default(&f);
    shared sh = {.st = dra_store_new(&f)};
    json_t *base = json_array(), *hogs = json_array();
    json_array_append_new(base, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
                                          "kind", "DeviceClass", "metadata", "name", "gpu.example.com", "spec",
                                          "selectors", "cel", "expression", "device.driver == 'gpu.example.com'"));
    json_array_append_new(base, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion",
                                          "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name",
                                          "two", "spec", "spec", "devices", "requests", "name", "gpu", "exactly",
                                          "deviceClassName", "gpu.example.com", "count", 2));
    json_object_set_new(json_object_get(json_array_get(base, 1), "metadata"), "namespace", json_string("ml"));
    dra_change dels[NODES];
    size_t ndels = 0;
    static char names[NODES][32];
    for (int n = 0; n < NODES; n++) {
        json_array_append_new(base, slice(n, 1));
        if (n % 3 == 0) {
            json_array_append_new(hogs, hog(n));
            snprintf(names[ndels], sizeof names[ndels], "hog-%d", n);
            dels[ndels] = (dra_change){.kind = "ResourceClaim", .ns = "ml", .name = names[ndels]};
            ndels++;
        }
    }
    sh.pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace", "ml", "spec",
                       "resourceClaims", "name", "g", "resourceClaimTemplateName", "two");
    /* the single-threaded answers of both states */
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    apply(sh.st, base, NULL, 0);
    dra_snapshot *s = dra_store_acquire(sh.st);
    decide(s, sh.pod, x, sh.want[0]);
    dra_snapshot_release(s);
    apply(sh.st, hogs, NULL, 0);
    s = dra_store_acquire(sh.st);
    decide(s, sh.pod, x, sh.want[1]);
    dra_snapshot_release(s);
    dra_alloc_ctx_free(x);
    int differ = 0;
    for (int n = 0; n < NODES; n++) differ += sh.want[0][n] != sh.want[1][n];
    if (differ != (int)ndels) {
        fprintf(stderr, "store_stress: the two states differ on %d nodes, want %zu\n", differ, ndels);
        return 1;
    }
    pthread_t t[READERS];
    for (int i = 0; i < READERS; i++) pthread_create(&t[i], NULL, reader, &sh);
    for (int r = 0; r < ROUNDS; r++) {
        apply(sh.st, r % 2 ? hogs : NULL, dels, ndels);
        json_t *sl = slice(r % NODES, 2 + r);
        apply(sh.st, sl, NULL, 0);
        json_decref(sl);
    }
    atomic_store(&sh.stop, true);
    for (int i = 0; i < READERS; i++) pthread_join(t[i], NULL);
    long checked = atomic_load(&sh.checked), wrong = atomic_load(&sh.wrong);
    printf("store_stress: %d snapshots published, %ld node answers checked, %ld wrong\n", 2 * ROUNDS + 2, checked, wrong);
    json_decref(base);
    json_decref(hogs);
    json_decref(sh.pod);
    dra_store_free(sh.st);
    return wrong || !checked ? 1 : 0;
}
