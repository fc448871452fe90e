/* plan_bench.c — `dralloc bench plan`: the cost of offline planning, the loop of
 * `dralloc plan` (planner/plan_sim.c) on the engine's planning API: for each
 * replica, a pod request, a fit without commit on the candidate nodes, the best
 * binpack score (ties by node name), the commit.
 *
 * Shapes:
 *   5000pods_500nodes — scheduler_perf's SchedulingWithResourceClaimTemplate shape
 *     (../shared/reference/perf-anchors.md): 500 nodes x 10 devices, 5,000 pods of
 *     one claim from a one-device template; pods/s on one core, both with every node
 *     fitted for every pod ("full", kube-scheduler with percentageOfNodesToScore
 *     100) and with the planner's fit cache ("cached": all devices node-local and no
 *     shared claim, so only the node that took the last pod is fitted again). The
 *     two placements must be identical (else MISMATCH).
 *   36000pods_5000nodes — 5,000 nodes x 8 GPUs, 36,000 one-GPU pods (cached only;
 *     full would fit 180 million times): time and peak RSS; every pod placed and no
 *     node above 8. (bench/ sits beside planner/, so the loop is written against
 *     the engine here; it is the same rule.) --devices 500|5000 runs one shape. */
#include "bench/bench.h"

#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

static json_t *cluster(int nodes, int devs) {
    json_t *a = json_array();
    json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
                                       "kind", "DeviceClass", "metadata", "name", "test-class", "spec", "selectors",
                                       "cel", "expression", "device.driver == 'test-driver.cdi.k8s.io'"));
    json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s}}]}}}}", "apiVersion",
                                       "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name",
                                       "test-claim-template", "namespace", "bench", "spec", "spec", "devices",
                                       "requests", "name", "req-0", "exactly", "deviceClassName", "test-class"));
    for (int n = 0; n < nodes; n++) {
        char node[40];
        snprintf(node, sizeof node, "scheduler-perf-dra-%05d", n);
        json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", node));
        json_t *d = json_array();
        for (int i = 0; i < devs; i++) {
            char dn[16];
            snprintf(dn, sizeof dn, "dev-%d", i);
            json_array_append_new(d, json_pack("{s:s}", "name", dn));
        }
        json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s+}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion",
                                           "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", node,
                                           "-slice", "spec", "driver", "test-driver.cdi.k8s.io", "nodeName", node, "pool",
                                           "name", node, "generation", 1, "resourceSliceCount", 1, "devices", d));
    }
    return a;
}


/* Places `pods` pods; placement[i] = node index of pod i (-1: unplaced). Returns
 * how many were placed. */
static size_t place_all(dra_snapshot *s, size_t pods, bool cached, int *placement) {
    size_t nn = dra_snapshot_nnodes(s), placed = 0;
    const char **names = malloc(nn * sizeof *names);
    uint8_t *known = calloc(nn, 1), *ok = calloc(nn, 1);
    int64_t *score = calloc(nn, sizeof *score);
    for (size_t i = 0; i < nn; i++) names[i] = dra_snapshot_node_name(s, i);
    dra_overlay *ov = dra_overlay_new(s);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    for (size_t p = 0; p < pods; p++) {
        char name[32];
        snprintf(name, sizeof name, "pod-%zu", p);
        json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s, s:{s:[{s:s}]}}], s:[{s:s, s:s}]}}",
                                "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "bench", "uid",
                                name, "spec", "containers", "name", "pause", "image", "pause", "resources", "claims",
                                "name", "resource", "resourceClaims", "name", "resource", "resourceClaimTemplateName",
                                "test-claim-template");
        err e;
        err_clear(&e);
        dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
        placement[p] = -1;
        if (pr) {
            dra_pod_request_check_node(pr, true);
            long best = -1;
            int64_t bs = 0;
            dra_fit f;
            for (size_t i = 0; i < nn; i++) {
                if (!cached || !known[i]) {
                    dra_pod_fit_overlay(pr, ov, x, names[i], DRA_SCORE_BINPACK, 0, false, &f);
                    known[i] = 1;
                    ok[i] = f.status == DRA_FIT_OK;
                    score[i] = f.score;
                }
                if (ok[i] && (best < 0 || score[i] > bs)) best = (long)i, bs = score[i];
            }
            if (best >= 0) {
                dra_pod_fit_overlay(pr, ov, x, names[best], DRA_SCORE_BINPACK, 0, true, &f);
                known[best] = 0;
                if (f.status == DRA_FIT_OK) placement[p] = (int)best, placed++;
            }
            dra_pod_request_free(pr);
        }
        json_decref(pod);
    }
    dra_alloc_ctx_free(x);
    dra_overlay_free(ov);
    free(names);
    free(known);
    free(ok);
    free(score);
    return placed;
}

static dra_store *store_of(int nodes, int devs) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *doc = cluster(nodes, devs);
    err e;
    err_clear(&e);
    if (!dra_store_apply_json(st, doc, &e)) {
        fprintf(stderr, "bench plan: %s\n", e.msg);
        dra_store_free(st);
        st = NULL;
    }
    json_decref(doc);
    return st;
}

static int shape_500(const bench_opts *o, json_t *results) {
    const size_t pods = 5000;
    dra_store *st = store_of(500, 10);
    if (!st) return 1;
    dra_snapshot *s = dra_store_acquire(st);
    int *full = malloc(pods * sizeof *full), *cached = malloc(pods * sizeof *cached);
    uint64_t t0 = bench_now_ns();
    size_t pf = place_all(s, pods, false, full);
    double full_s = (double)(bench_now_ns() - t0) / 1e9;
    t0 = bench_now_ns();
    size_t pc = place_all(s, pods, true, cached);
    double cached_s = (double)(bench_now_ns() - t0) / 1e9;
    int rc = 0;
    if (pf != pods || pc != pods || memcmp(full, cached, pods * sizeof *full)) {
        fprintf(o->out, "MISMATCH: 5000pods_500nodes placed %zu (full) and %zu (cached), placements %s\n", pf, pc,
                memcmp(full, cached, pods * sizeof *full) ? "differ" : "equal");
        rc = 1;
    }
    fprintf(o->out, "5000pods_500nodes (500 nodes x 10 devices, 5,000 one-claim pods, binpack): full %.2f s = %.0f pods/s; "
                    "cached %.3f s = %.0f pods/s; %zu placed\n",
            full_s, (double)pods / full_s, cached_s, (double)pods / cached_s, pc);
    json_array_append_new(results, json_pack("{s:s, s:f, s:f, s:i}", "shape", "5000pods_500nodes", "fullPodsPerSec",
                                             (double)pods / full_s, "cachedPodsPerSec", (double)pods / cached_s, "placed",
                                             (json_int_t)pc));
    free(full);
    free(cached);
    dra_snapshot_release(s);
    dra_store_free(st);
    return rc;
}

static int shape_5000(const bench_opts *o, json_t *results) {
    const size_t pods = 36000, nodes = 5000;
    long rss0 = bench_status_kib("VmRSS:");
    uint64_t t0 = bench_now_ns();
    dra_store *st = store_of((int)nodes, 8);
    if (!st) return 1;
    double ingest_s = (double)(bench_now_ns() - t0) / 1e9;
    dra_snapshot *s = dra_store_acquire(st);
    int *pl = malloc(pods * sizeof *pl);
    t0 = bench_now_ns();
    size_t placed = place_all(s, pods, true, pl);
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    int *per = calloc(nodes, sizeof *per), worst = 0;
    for (size_t p = 0; p < pods; p++)
        if (pl[p] >= 0 && ++per[pl[p]] > worst) worst = per[pl[p]];
    int rc = 0;
    if (placed != pods || worst > 8) {
        fprintf(o->out, "MISMATCH: 36000pods_5000nodes placed %zu of %zu, %d on one node\n", placed, pods, worst);
        rc = 1;
    }
    long hwm = bench_status_kib("VmHWM:");
    fprintf(o->out, "36000pods_5000nodes (5,000 nodes x 8 GPUs, 36,000 one-GPU pods, cached): ingest %.2f s, plan %.2f s "
                    "= %.0f pods/s; %zu placed; RSS +%.0f MiB, peak %.0f MiB\n",
            ingest_s, secs, (double)pods / secs, placed, (double)(bench_status_kib("VmRSS:") - rss0) / 1024, (double)hwm / 1024);
    json_array_append_new(results, json_pack("{s:s, s:f, s:f, s:i, s:f}", "shape", "36000pods_5000nodes", "seconds", secs,
                                             "podsPerSec", (double)pods / secs, "placed", (json_int_t)placed, "peakRssMiB",
                                             (double)hwm / 1024));
    free(per);
    free(pl);
    dra_snapshot_release(s);
    dra_store_free(st);
    return rc;
}

int bench_plan_main(const bench_opts *o) {
    json_t *results = json_array();
    int rc = 0;
    if (!o->devices || o->devices == 500) rc |= shape_500(o, results);
    if (!o->devices || o->devices == 5000) rc |= shape_5000(o, results);
    if (o->json) {
        json_t *doc = json_pack("{s:s, s:o}", "workload", "plan", "results", results);
        json_dump_file(doc, o->json, JSON_INDENT(1));
        json_decref(doc);
    } else {
        json_decref(results);
    }
    return rc;
}
