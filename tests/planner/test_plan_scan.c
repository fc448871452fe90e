/* test_plan_scan.c — plan_scan (planner/plan_scan.h), the planner's scan of every node
 * for one replica, on two threads from 512 nodes on: its answers are what one thread
 * gives (the same scan in chunks under 512 nodes, and each node decided alone by
 * dra_pod_fit_overlay), before and after commits, and the plan made from them is the
 * hand-worked one.
 *
 * The fleet: 640 nodes node-000..node-639 with 8 GPUs each; the first 320 carry model
 * a100, the others h100; the workload's pods want one h100 GPU each (a template claim
 * selecting the model). So node-320 is the first node, in name order, that fits. */
#include <criterion/criterion.h>
#include <string.h>

#include "planner/plan_scan.h"
#include "planner/planner.h"

enum { NODES = 640, FIRST_H100 = 320, GPUS = 8, CHUNK = 128 };

static json_t *node_objects(void) {
    json_t *docs = json_array();
    json_array_append_new(docs, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
                                          "kind", "DeviceClass", "metadata", "name", "gpu.example.com", "spec",
                                          "selectors", "cel", "expression", "device.driver == \"gpu.example.com\""));
    for (int i = 0; i < NODES; i++) {
        char name[32], slice[48];
        snprintf(name, sizeof name, "node-%03d", i);
        snprintf(slice, sizeof slice, "%s-gpus", name);
        json_array_append_new(docs, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name",
                                              name));
        json_t *devices = json_array();
        for (int d = 0; d < GPUS; d++) {
            char dev[16];
            snprintf(dev, sizeof dev, "gpu-%d", d);
            json_array_append_new(devices, json_pack("{s:s, s:{s:{s:s}}}", "name", dev, "attributes", "model", "string",
                                                     i < FIRST_H100 ? "a100" : "h100"));
        }
        json_array_append_new(docs, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:i, s:i}, s:s, s:o}}", "apiVersion",
                                              "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", slice,
                                              "spec", "driver", "gpu.example.com", "pool", "name", name, "generation", 1,
                                              "resourceSliceCount", 1, "nodeName", name, "devices", devices));
    }
    return docs;
}

/* The workload file's documents: the template (one h100) and `replicas` pods of it. */
static json_t *workload_docs(long replicas) {
    return json_pack(
        "[{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:[{s:{s:s}}]}}]}}}},"
        " {s:[{s:s, s:i, s:{s:{s:[{s:s, s:s}], s:[{s:s, s:s}]}}}]}]",
        "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name", "one-h100", "namespace",
        "default", "spec", "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com",
        "selectors", "cel", "expression", "device.attributes[\"gpu.example.com\"].model == \"h100\"", "workloads", "name",
        "train", "replicas", (json_int_t)replicas, "template", "spec", "containers", "name", "c", "image", "busybox",
        "resourceClaims", "name", "gpu", "resourceClaimTemplateName", "one-h100");
}

typedef struct fleet {
    plan_objects objs;
    plan_workloads w;
} fleet;

static void fleet_load(fleet *f, long replicas) {
    plan_objects_init(&f->objs);
    json_t *nodes = node_objects(), *wdocs = workload_docs(replicas);
    plan_objects_add_doc(&f->objs, nodes, "fleet");
    err e;
    err_clear(&e);
    memset(&f->w, 0, sizeof f->w);
    cr_assert(plan_workloads_from_docs(wdocs, "workload", &f->w, &f->objs, &e), "%s", e.msg);
    json_decref(nodes);
    json_decref(wdocs);
}

static void fleet_free(fleet *f) {
    plan_workloads_free(&f->w);
    plan_objects_free(&f->objs);
}

/* "node-320:8 node-321:8 node-322:4" */
static void placements(const json_t *plan, char *buf, size_t n) {
    const json_t *w = json_array_get(json_object_get(plan, "workloads"), 0);
    size_t len = 0, i;
    json_t *p;
    buf[0] = '\0';
    json_array_foreach(json_object_get(w, "placements"), i, p)
        len += (size_t)snprintf(buf + len, n - len, "%s%s:%lld", i ? " " : "", json_string_value(json_object_get(p, "node")),
                                (long long)json_integer_value(json_object_get(p, "replicas")));
}

static void plan_expect(long replicas, dra_score_mode score, bool no_fit_cache, const char *want) {
    fleet f;
    fleet_load(&f, replicas);
    plan_opts o;
    plan_opts_default(&o);
    o.score = score;
    o.no_fit_cache = no_fit_cache;
    o.headroom_max = 0;
    err e;
    err_clear(&e);
    json_t *plan = plan_run(&f.objs, &f.w, &o, &e);
    cr_assert_not_null(plan, "%s", e.msg);
    char got[256];
    placements(plan, got, sizeof got);
    cr_expect_str_eq(got, want, "%s, fit cache %s", score == DRA_SCORE_SPREAD ? "spread" : "binpack",
                     no_fit_cache ? "off" : "on");
    json_decref(plan);
    fleet_free(&f);
}

/* binpack: the first node that fits (ties by name: node-320) filled to its 8 GPUs, then
 * the next; spread: each replica on an emptiest node, ties by name. With the fit cache
 * off every replica scans all 640 nodes on two threads; with it on, the first. */
Test(plan_scan, plan_on_two_threads_is_the_hand_worked_one) {
    for (int cache = 0; cache < 2; cache++) {
        plan_expect(20, DRA_SCORE_BINPACK, cache == 0, "node-320:8 node-321:8 node-322:4");
        plan_expect(3, DRA_SCORE_SPREAD, cache == 0, "node-320:1 node-321:1 node-322:1");
    }
}

/* One replica's pod request (as plan_sim.c makes it: whole-pod checks on). */
static dra_pod_request *replica(dra_snapshot *s, const fleet *f, long rep) {
    json_t *pod = plan_replica_pod(&f->w.v[0], rep);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_pod_request_check_node(pr, true);
    json_decref(pod);
    return pr;
}

/* a cost that makes plan_scan hand nodes to its second thread: 1 ms a node */
#define TWO_THREADS (&(plan_scan_cost){.node_ns = 1000000, .copy_ns = 1000})

/* The three ways to decide every node for pr, one overlay each (the same commits). */
typedef struct three {
    dra_overlay *ov[3];
    dra_alloc_ctx *x[3];
} three;

static void scan_three(three *t, const dra_pod_request *pr, const char *const *names, const size_t *idx,
                       plan_scan_answer out[3][NODES]) {
    /* two threads: a cost measured as high as a node's search can be (plan_scan.h) */
    plan_scan(pr, t->ov[0], t->x[0], DRA_SCORE_BINPACK, names, idx, NODES, false, out[0], TWO_THREADS);
    for (size_t k = 0; k < NODES; k += CHUNK)                                          /* one, chunk by chunk */
        plan_scan(pr, t->ov[1], t->x[1], DRA_SCORE_BINPACK, names, idx + k, CHUNK, true, out[1] + k,
                  &(plan_scan_cost){0});
    for (size_t k = 0; k < NODES; k++) {                                               /* one, node by node */
        dra_fit f;
        dra_pod_fit_overlay(pr, t->ov[2], t->x[2], names[k], DRA_SCORE_BINPACK, 0, false, &f);
        out[2][k] = (plan_scan_answer){f.status == DRA_FIT_OK, f.score};
    }
    for (int w = 1; w < 3; w++)
        for (size_t k = 0; k < NODES; k++) {
            cr_assert_eq(out[0][k].fits, out[w][k].fits, "%s: fits %d on two threads, %d on one (way %d)", names[k],
                         out[0][k].fits, out[w][k].fits, w);
            cr_assert_eq(out[0][k].score, out[w][k].score, "%s: score %lld on two threads, %lld on one (way %d)",
                         names[k], (long long)out[0][k].score, (long long)out[w][k].score, w);
        }
}

static void commit_three(three *t, const dra_pod_request *pr, const char *node) {
    for (int w = 0; w < 3; w++) {
        dra_fit f;
        dra_pod_fit_overlay(pr, t->ov[w], t->x[w], node, DRA_SCORE_BINPACK, 0, true, &f);
        cr_assert_eq(f.status, DRA_FIT_OK, "commit on %s", node);
    }
}

Test(plan_scan, two_threads_answer_as_one) {
    fleet f;
    fleet_load(&f, 1);
    err e;
    err_clear(&e);
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = plan_store_new(&f.objs, &feat, &e);
    cr_assert_not_null(st, "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(st);
    static char namebuf[NODES][16];
    static const char *names[NODES];
    static size_t idx[NODES];
    static plan_scan_answer out[3][NODES];
    for (size_t k = 0; k < NODES; k++) {
        snprintf(namebuf[k], sizeof namebuf[k], "node-%03zu", k);
        names[k] = namebuf[k];
        idx[k] = k;
    }
    three t;
    for (int w = 0; w < 3; w++) t.ov[w] = dra_overlay_new(s), t.x[w] = dra_alloc_ctx_new();
    dra_overlay_memo(t.ov[2], false);

    /* nothing committed: the h100 nodes fit, all with one score */
    dra_pod_request *pr = replica(s, &f, 0);
    scan_three(&t, pr, names, idx, out);
    for (size_t k = 0; k < NODES; k++) cr_assert_eq(out[0][k].fits, k >= FIRST_H100, "%s", names[k]);
    for (size_t k = FIRST_H100 + 1; k < NODES; k++) cr_assert_eq(out[0][k].score, out[0][FIRST_H100].score);
    /* the second thread's answers adopted into the overlay's memo: asked again, the same */
    plan_scan_answer again[NODES];
    plan_scan(pr, t.ov[0], t.x[0], DRA_SCORE_BINPACK, names, idx, NODES, false, again, TWO_THREADS);
    for (size_t k = 0; k < NODES; k++)
        cr_assert(again[k].fits == out[0][k].fits && again[k].score == out[0][k].score, "%s asked again", names[k]);
    dra_pod_request_free(pr);

    /* node-320 filled (8 replicas), one replica on node-500 and one on node-639 (the
     * last chunk): the copy the second thread decides on holds these commits */
    long rep = 1;
    for (int g = 0; g < GPUS; g++, rep++) {
        pr = replica(s, &f, rep);
        commit_three(&t, pr, "node-320");
        dra_pod_request_free(pr);
    }
    static const char *const one_more[] = {"node-500", "node-639"};
    for (size_t m = 0; m < 2; m++, rep++) {
        pr = replica(s, &f, rep);
        commit_three(&t, pr, one_more[m]);
        dra_pod_request_free(pr);
    }
    pr = replica(s, &f, rep);
    scan_three(&t, pr, names, idx, out);
    cr_assert(!out[0][320].fits, "node-320 is full");
    /* binpack: a node with a GPU in use scores above an empty one */
    cr_assert(out[0][500].fits && out[0][501].fits && out[0][500].score > out[0][501].score);
    cr_assert(out[0][639].fits && out[0][639].score == out[0][500].score);
    dra_pod_request_free(pr);

    for (int w = 0; w < 3; w++) dra_overlay_free(t.ov[w]), dra_alloc_ctx_free(t.x[w]);
    dra_snapshot_release(s);
    dra_store_free(st);
    fleet_free(&f);
}
