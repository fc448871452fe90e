/* pool_test.c — the extender's worker pool (extender/pool.c) hands out nodes in
 * chunks, decides small batches on the submitting thread and lets concurrent batches
 * interleave: whatever path a batch takes, every node gets exactly the answer one
 * thread deciding it alone gives. Nodes alternate between a free one (2 GPUs, the
 * pod fits), one whose GPUs are held (unschedulable) and a name the cluster does not
 * have (unresolvable), so a node given the wrong slot or decided twice shows. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine/context.h"
#include "engine/snapshot.h"
#include "extender/pool.h"

enum { NODES = 600 };

static json_t *cluster(void) {
    json_t *a = json_pack("[{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}]", "apiVersion", "resource.k8s.io/v1", "kind",
                          "DeviceClass", "metadata", "name", "gpu", "spec", "selectors", "cel", "expression",
                          "device.driver == 'gpu.example.com'");
    for (int i = 0; i < NODES; i++) {
        if (i % 3 == 2) continue;   /* no such node */
        char node[32], cl[48];
        snprintf(node, sizeof node, "node-%04d", i);
        json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", node));
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:[{s:s}, {s:s}]}}", "apiVersion",
                         "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", node, "spec", "driver",
                         "gpu.example.com", "nodeName", node, "pool", "name", node, "generation", 1,
                         "resourceSliceCount", 1, "devices", "name", "gpu-0", "name", "gpu-1"));
        if (i % 3 != 1) continue;
        snprintf(cl, sizeof cl, "held-%04d", i);
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}},"
                         " s:{s:{s:{s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]}}}}",
                         "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", cl,
                         "namespace", "ml", "spec", "devices", "requests", "name", "r", "exactly", "deviceClassName",
                         "gpu", "count", 2, "status", "allocation", "devices", "results", "request", "r", "driver",
                         "gpu.example.com", "pool", node, "device", "gpu-0", "request", "r", "driver",
                         "gpu.example.com", "pool", node, "device", "gpu-1"));
    }
    json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}}", "apiVersion",
                                       "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", "want",
                                       "namespace", "ml", "spec", "devices", "requests", "name", "r", "exactly",
                                       "deviceClassName", "gpu"));
    return a;
}

typedef struct fixture {
    dra_store *st;
    dra_snapshot *s;
    dra_pod_request *pr;
    char names[NODES][32];
    const char *np[NODES];
    dra_fit want[NODES];
} fixture;

static void setup(fixture *f) {
    dra_features feat;
    dra_features_default(&feat);
    f->st = dra_store_new(&feat);
    err e;
    err_clear(&e);
    json_t *c = cluster();
    cr_assert(dra_store_apply_json(f->st, c, &e), "%s", e.msg);
    json_decref(c);
    f->s = dra_store_acquire(f->st);
    json_t *pod = json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s}], s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace",
                            "ml", "uid", "u-p", "spec", "containers", "name", "c", "resourceClaims", "name", "a",
                            "resourceClaimName", "want");
    f->pr = dra_pod_request_new(f->s, pod, &e);
    json_decref(pod);
    cr_assert(f->pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    for (int i = 0; i < NODES; i++) {
        snprintf(f->names[i], sizeof f->names[i], "node-%04d", i);
        f->np[i] = f->names[i];
        dra_pod_fit(f->pr, x, f->names[i], NULL, DRA_SCORE_BINPACK, 0, &f->want[i]);
    }
    dra_alloc_ctx_free(x);
    /* the three kinds of answer are all there, by the cluster's construction */
    cr_assert_eq(f->want[0].status, DRA_FIT_OK);
    cr_assert_eq(f->want[1].status, DRA_FIT_UNSCHEDULABLE);
    cr_assert_eq(f->want[2].status, DRA_FIT_UNRESOLVABLE);
}

static void teardown(fixture *f) {
    dra_pod_request_free(f->pr);
    dra_snapshot_release(f->s);
    dra_store_free(f->st);
}

/* Decides nodes [lo, lo+n) through the pool and checks each against the lone answer. */
static void run_and_check(ext_pool *p, fixture *f, size_t lo, size_t n) {
    dra_fit *out = calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; i < n; i++) out[i].status = (dra_fit_status)99;   /* not decided */
    ext_batch_spec b = {.pr = f->pr, .names = f->np + lo, .n = n, .mode = DRA_SCORE_BINPACK, .out = out};
    ext_pool_run(p, &b);
    for (size_t i = 0; i < n; i++) {
        const dra_fit *w = &f->want[lo + i];
        cr_assert_eq(out[i].status, w->status, "%s: status %d, want %d", f->names[lo + i], out[i].status, w->status);
        cr_assert_eq(out[i].score, w->score, "%s", f->names[lo + i]);
        cr_assert_str_eq(out[i].reason, w->reason, "%s", f->names[lo + i]);
    }
    free(out);
}

Test(pool, every_size_every_node_once) {
    static fixture f;
    setup(&f);
    ext_pool *p = ext_pool_new(3);
    /* sizes from one node to all; repeated, so the measured cost moves between the
     * inline and the chunked path (memo hits after the first round make it cheap) */
    static const size_t sizes[] = {1, 2, 7, 64, 599, 600, 3, 300};
    for (int round = 0; round < 4; round++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) run_and_check(p, &f, NODES - sizes[k], sizes[k]);
    ext_batch_spec none = {.pr = f.pr, .names = f.np, .n = 0, .out = NULL};
    ext_pool_run(p, &none);   /* an empty batch returns at once */
    /* both paths ran: the first batch (one node at the assumed 20 µs, under the assumed
     * 50 µs start) alone, the 64-node one after it (a search a node) shared */
    size_t alone, shared;
    ext_pool_counts(p, &alone, &shared);
    cr_assert_gt(alone, 0);
    cr_assert_gt(shared, 0);
    cr_assert_eq(alone + shared, 4 * sizeof sizes / sizeof *sizes);
    ext_pool_free(p);
    teardown(&f);
}

typedef struct submitter {
    ext_pool *p;
    fixture *f;
    unsigned seed;
} submitter;

static void *submit_many(void *arg) {
    submitter *s = arg;
    for (int i = 0; i < 40; i++) {
        s->seed = s->seed * 1103515245u + 12345u;
        size_t n = 1 + (s->seed >> 8) % NODES;
        run_and_check(s->p, s->f, NODES - n, n);
    }
    return NULL;
}

Test(pool, concurrent_batches_interleave) {
    static fixture f;
    setup(&f);
    ext_pool *p = ext_pool_new(2);
    pthread_t th[4];
    submitter s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = (submitter){p, &f, (unsigned)i * 7919u + 1u};
        cr_assert_eq(pthread_create(&th[i], NULL, submit_many, &s[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    ext_pool_free(p);
    teardown(&f);
}
