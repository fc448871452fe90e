/* snapshot_bench.c — `dralloc bench snapshot`: what the long-running core costs at
 * cluster scale. For 500 and 5,000 nodes of 8 GPUs (one ResourceSlice per node,
 * scheduler_perf's device shape: model, driverVersion, index, numa attributes and
 * 80Gi of memory) with half the GPUs held by allocated one-GPU claims (2,000 and
 * 20,000 claims):
 *   - ingest: the whole cluster as JSON into an empty store (decode, index, in-use
 *     set), with the process's RSS growth;
 *   - one slice update and one claim update applied to the current snapshot
 *     (median and p99 over --reps updates), which must cost the same order at both
 *     sizes;
 *   - the first /filter-style decision of a one-GPU pod on every node of a fresh
 *     snapshot (node views built lazily) and the same on a warm snapshot;
 *   - the same right after a one-slice update (median of 5): the views of the nodes
 *     the update did not touch are handed on, the fit memo starts afresh. */
#include "bench/bench.h"

#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

static json_t *gpu_slice(int n, int gen, const char *model) {
    json_t *devs = json_array();
    for (int i = 0; i < 8; i++) {
        char d[16], uuid[64];
        snprintf(d, sizeof d, "gpu-%d", i);
        snprintf(uuid, sizeof uuid, "GPU-%08d-%04d", n, i);
        json_array_append_new(
            devs, json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:i}, s:{s:i}, s:{s:s}}, s:{s:{s:s}}}", "name", d,
                            "attributes", "model", "string", model, "driverVersion", "version", "1.0.0", "index", "int",
                            i, "numa", "int", i / 4, "uuid", "string", uuid, "capacity", "memory", "value", "80Gi"));
    }
    char name[32], node[32];
    snprintf(name, sizeof name, "node-%05d-gpus", n);
    snprintf(node, sizeof node, "node-%05d", n);
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceSlice", "metadata", "name", name, "spec", "driver", "gpu.example.com", "nodeName",
                     node, "pool", "name", node, "generation", gen, "resourceSliceCount", 1, "devices", devs);
}

static json_t *one_gpu_claim(int n, int gpu, int serial) {
    char name[48], pool[32], dev[16];
    snprintf(name, sizeof name, "claim-%05d-%d-%d", n, gpu, serial);
    snprintf(pool, sizeof pool, "node-%05d", n);
    snprintf(dev, sizeof dev, "gpu-%d", gpu);
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}, s:{s:{s:{s:[{s:s, s:s, s:s, s:s}]},"
                     " s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}}",
                     "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace",
                     "bench", "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                     "gpu.example.com", "status", "allocation", "devices", "results", "request", "gpu", "driver",
                     "gpu.example.com", "pool", pool, "device", dev, "nodeSelector", "nodeSelectorTerms",
                     "matchFields", "key", "metadata.name", "operator", "In", "values", pool);
}

static json_t *cluster(int nodes) {
    json_t *a = json_array();
    json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
                                       "kind", "DeviceClass", "metadata", "name", "gpu.example.com", "spec",
                                       "selectors", "cel", "expression", "device.driver == 'gpu.example.com'"));
    json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s}}]}}}}", "apiVersion",
                                       "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name",
                                       "one-gpu", "namespace", "bench", "spec", "spec", "devices", "requests", "name",
                                       "gpu", "exactly", "deviceClassName", "gpu.example.com"));
    for (int n = 0; n < nodes; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05d", n);
        json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Node",
                                           "metadata", "name", node, "labels", "kubernetes.io/hostname", node));
        json_array_append_new(a, gpu_slice(n, 1, "H100"));
        for (int g = 0; g < 4; g++) json_array_append_new(a, one_gpu_claim(n, g, 0));
    }
    return a;
}


static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bench_stats stats(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return bench_stats_of(v, n);
}

/* Decides a one-GPU pod on every node; returns how many fit. */
static size_t filter_all(dra_snapshot *s, const json_t *pod, dra_alloc_ctx *x, int nodes) {
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    size_t fits = 0;
    for (int n = 0; pr && n < nodes; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05d", n);
        dra_fit f;
        dra_pod_fit(pr, x, node, NULL, DRA_SCORE_BINPACK, 0, &f);
        fits += f.status == DRA_FIT_OK;
    }
    dra_pod_request_free(pr);
    return fits;
}

static int run_size(const bench_opts *o, int nodes, json_t *results) {
    size_t reps = o->reps ? o->reps : 200;
    dra_features f;
    dra_features_default(&f);
    json_t *doc = cluster(nodes);
    long rss0 = bench_status_kib("VmRSS:");
    dra_store *st = dra_store_new(&f);
    err e;
    err_clear(&e);
    uint64_t t0 = bench_now_ns();
    if (!dra_store_apply_json(st, doc, &e)) {
        char buf[2048];
        fprintf(stderr, "bench snapshot: %s\n", err_format(&e, buf, sizeof buf));
        return 1;
    }
    double ingest_ms = (double)(bench_now_ns() - t0) / 1e6;
    long rss1 = bench_status_kib("VmRSS:");
    /* a relist (after a 410, or a resync): every object again, none changed */
    t0 = bench_now_ns();
    uint64_t gen1 = dra_store_apply_json(st, doc, &e);
    double relist_ms = (double)(bench_now_ns() - t0) / 1e6;
    json_decref(doc);   /* the store keeps its own copies */
    if (!gen1) {
        fprintf(stderr, "bench snapshot: relist failed: %s\n", e.msg);
        return 1;
    }
    json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace", "bench", "spec",
                            "resourceClaims", "name", "g", "resourceClaimTemplateName", "one-gpu");
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_snapshot *s = dra_store_acquire(st);
    t0 = bench_now_ns();
    size_t fits = filter_all(s, pod, x, nodes);
    double cold_ms = (double)(bench_now_ns() - t0) / 1e6;
    t0 = bench_now_ns();
    filter_all(s, pod, x, nodes);
    double warm_ms = (double)(bench_now_ns() - t0) / 1e6;
    dra_snapshot_release(s);
    /* one slice update, one claim update per sample, against the current snapshot */
    double *slice_ns = calloc(reps, sizeof *slice_ns), *claim_ns = calloc(reps, sizeof *claim_ns);
    for (size_t r = 0; r < reps; r++) {
        int n = (int)(r * 7919 % (size_t)nodes);
        json_t *sl = gpu_slice(n, 2 + (int)r, r % 2 ? "H200" : "H100");
        t0 = bench_now_ns();
        uint64_t g1 = dra_store_apply_json(st, sl, &e);
        slice_ns[r] = (double)(bench_now_ns() - t0);
        json_decref(sl);
        json_t *cl = one_gpu_claim(n, 4 + (int)(r % 4), (int)r + 1);
        t0 = bench_now_ns();
        uint64_t g2 = dra_store_apply_json(st, cl, &e);
        claim_ns[r] = (double)(bench_now_ns() - t0);
        json_decref(cl);
        if (!g1 || !g2) {
            fprintf(stderr, "bench snapshot: update failed: %s\n", e.msg);
            return 1;
        }
    }
    /* after one slice update: the pod on every node again */
    double after[5];
    for (int r = 0; r < 5; r++) {
        json_t *sl = gpu_slice((int)((size_t)(r + 1) * 104729 % (size_t)nodes), 1000 + r, "H100");
        uint64_t g = dra_store_apply_json(st, sl, &e);
        json_decref(sl);
        if (!g) {
            fprintf(stderr, "bench snapshot: update failed: %s\n", e.msg);
            return 1;
        }
        s = dra_store_acquire(st);
        t0 = bench_now_ns();
        filter_all(s, pod, x, nodes);
        after[r] = (double)(bench_now_ns() - t0) / 1e6;
        dra_snapshot_release(s);
    }
    qsort(after, 5, sizeof *after, cmp_double);
    double after_ms = after[2];
    bench_stats ss = stats(slice_ns, reps), cs = stats(claim_ns, reps);
    fprintf(o->out,
            "%5d nodes x 8 GPUs, %d claims: ingest %.0f ms, RSS +%.0f MiB (peak %.0f MiB), relist unchanged %.0f ms; "
            "one-GPU pod on every node: first %.1f ms, warm %.1f ms, after a slice update %.1f ms (%zu fit)\n"
            "      slice update: p50 %.0f us p99 %.0f us; claim update: p50 %.0f us p99 %.0f us (%zu each)\n",
            nodes, nodes * 4, ingest_ms, (double)(rss1 - rss0) / 1024, (double)bench_status_kib("VmHWM:") / 1024, relist_ms, cold_ms,
            warm_ms, after_ms, fits, ss.p50 / 1e3, ss.p99 / 1e3, cs.p50 / 1e3, cs.p99 / 1e3, reps);
    json_array_append_new(results,
                          json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "nodes", nodes, "claims",
                                    nodes * 4, "ingestMs", ingest_ms, "rssGrowthMiB", (double)(rss1 - rss0) / 1024,
                                    "relistUnchangedMs", relist_ms,
                                    "filterAllColdMs", cold_ms, "filterAllWarmMs", warm_ms, "filterAllAfterUpdateMs",
                                    after_ms, "sliceUpdateP50Us", ss.p50 / 1e3, "sliceUpdateP99Us", ss.p99 / 1e3,
                                    "claimUpdateP50Us", cs.p50 / 1e3, "claimUpdateP99Us", cs.p99 / 1e3));
    free(slice_ns);
    free(claim_ns);
    dra_alloc_ctx_free(x);
    json_decref(pod);
    dra_store_free(st);
    return 0;
}

int bench_snapshot_main(const bench_opts *o) {
    json_t *results = json_array();
    int sizes[] = {500, 5000};
    int rc = 0;
    for (size_t i = 0; i < ARRAY_SIZE(sizes) && !rc; i++)
        if (!o->devices || (size_t)sizes[i] == o->devices) rc = run_size(o, sizes[i], results);
    if (!rc && o->json) {
        json_t *doc = json_pack("{s:s, s:o}", "workload", "snapshot", "results", results);
        json_dump_file(doc, o->json, JSON_INDENT(1));
        json_decref(doc);
    } else {
        json_decref(results);
    }
    return rc;
}
