/* soak_bench.c — `dralloc bench soak`: does memory stay flat in a long-running
 * process? On one store (a node of 8 GPUs, a class with a plain selector and one
 * with the selector that leaked 1.25 GB after 20,000 evaluations before the arena
 * fix: `[1,…×4000].map(x, x+1).size() > 0`), it runs
 *   - 1,000,000 pod decisions (a new pod request each, decoded and resolved, the
 *     node decided with the fit memo bypassed — the whole-pod checks are on), and
 *   - 20,000 decisions through the leaking selector,
 * while snapshots keep being published (a claim added and deleted every 10,000
 * decisions), and reports RSS after warm-up and at the end: the growth must stay
 * within 10 %. --reps N scales the first count (N × 100,000). */
#include "bench/bench.h"

#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>


static dra_fit_status decide(dra_store *st, const json_t *pod, dra_alloc_ctx *x) {
    dra_snapshot *s = dra_store_acquire(st);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    dra_fit f = {.status = DRA_FIT_ERROR};
    if (pr) {
        dra_pod_request_check_node(pr, true);   /* also keeps the memo out of the way */
        dra_pod_fit(pr, x, "node-0", NULL, DRA_SCORE_BINPACK, 0, &f);
    }
    dra_pod_request_free(pr);
    dra_snapshot_release(s);
    return f.status;
}

int bench_soak_main(const bench_opts *o) {
    size_t n = (o->reps ? o->reps : 10) * 100000;
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    /* the leaking selector: a 4,000-element list literal mapped */
    size_t cap = 4000 * 2 + 64;
    char *leaky = malloc(cap);
    size_t off = (size_t)snprintf(leaky, cap, "[");
    for (int i = 0; i < 4000; i++) off += (size_t)snprintf(leaky + off, cap - off, i ? ",1" : "1");
    snprintf(leaky + off, cap - off, "].map(x, x+1).size() > 0");
    json_t *devobjs = json_array();
    for (int i = 0; i < 8; i++) json_array_append_new(devobjs, json_pack("{s:o}", "name", json_sprintf("gpu-%d", i)));
    json_t *objs = json_pack(
        "[{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}, {s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}, {s:s, s:s, s:{s:s}},"
        " {s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}},"
        " {s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}},"
        " {s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s}}]}}}}]",
        "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", "gpu", "spec", "selectors", "cel",
        "expression", "device.driver == 'gpu.example.com'", "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass",
        "metadata", "name", "leaky", "spec", "selectors", "cel", "expression", leaky, "apiVersion", "v1", "kind", "Node",
        "metadata", "name", "node-0", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name",
        "node-0-gpus", "spec", "driver", "gpu.example.com", "nodeName", "node-0", "pool", "name", "node-0", "generation", 1,
        "resourceSliceCount", 1, "devices", devobjs, "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate",
        "metadata", "name", "two", "namespace", "soak", "spec", "spec", "devices", "requests", "name", "gpu", "exactly",
        "deviceClassName", "gpu", "count", 2, "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate",
        "metadata", "name", "leaky", "namespace", "soak", "spec", "spec", "devices", "requests", "name", "gpu", "exactly",
        "deviceClassName", "leaky");
    free(leaky);
    err e;
    err_clear(&e);
    if (!objs || !dra_store_apply_json(st, objs, &e)) {
        fprintf(stderr, "bench soak: %s\n", e.msg);
        return 1;
    }
    json_decref(objs);
    json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace", "soak", "spec",
                            "resourceClaims", "name", "g", "resourceClaimTemplateName", "two");
    json_t *pod_leaky = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "q", "namespace", "soak", "spec",
                                  "resourceClaims", "name", "g", "resourceClaimTemplateName", "leaky");
    json_t *busy = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}}, s:{s:{s:{s:[{s:s, s:s, s:s, s:s}]}}}}",
                             "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", "busy",
                             "namespace", "soak", "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                             "gpu", "status", "allocation", "devices", "results", "request", "gpu", "driver",
                             "gpu.example.com", "pool", "node-0", "device", "gpu-0");
    dra_change del = {.kind = "ResourceClaim", .ns = "soak", .name = "busy"};
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    size_t warm = n / 10, fits = 0;
    long rss_warm = 0;
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < n; i++) {
        if (i % 10000 == 0) (i / 10000) % 2 ? dra_store_apply(st, &del, 1, &e) : dra_store_apply_json(st, busy, &e);
        fits += decide(st, pod, x) == DRA_FIT_OK;
        if (i + 1 == warm) rss_warm = bench_status_kib("VmRSS:");
    }
    double t1 = (double)(bench_now_ns() - t0) / 1e9;
    long rss_mid = bench_status_kib("VmRSS:");
    size_t leaky_n = 20000, leaky_fit = 0;
    t0 = bench_now_ns();
    long rss_leaky0 = 0;
    for (size_t i = 0; i < leaky_n; i++) {
        leaky_fit += decide(st, pod_leaky, x) == DRA_FIT_OK;
        if (i + 1 == leaky_n / 10) rss_leaky0 = bench_status_kib("VmRSS:");
    }
    double t2 = (double)(bench_now_ns() - t0) / 1e9;
    long rss_end = bench_status_kib("VmRSS:");
    double g1 = rss_warm ? 100.0 * (double)(rss_mid - rss_warm) / (double)rss_warm : 0;
    double g2 = rss_leaky0 ? 100.0 * (double)(rss_end - rss_leaky0) / (double)rss_leaky0 : 0;
    fprintf(o->out,
            "soak: %zu pod decisions (%zu fit) in %.1f s with a snapshot every 10,000: RSS %ld KiB after %zu, %ld KiB at "
            "the end (%+.1f %%)\n"
            "soak: %zu decisions through the 4,000-element map() selector (%zu fit) in %.1f s: RSS %ld KiB after %zu, "
            "%ld KiB at the end (%+.1f %%)\n",
            n, fits, t1, rss_warm, warm, rss_mid, g1, leaky_n, leaky_fit, t2, rss_leaky0, leaky_n / 10, rss_end, g2);
    bool flat = g1 <= 10 && g2 <= 10;
    fprintf(o->out, "soak: memory %s (limit +10 %%)\n", flat ? "flat" : "GREW");
    dra_alloc_ctx_free(x);
    json_decref(pod);
    json_decref(pod_leaky);
    json_decref(busy);
    dra_store_free(st);
    return flat ? 0 : 1;
}
