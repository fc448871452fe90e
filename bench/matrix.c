/* matrix.c — the scheduler_perf DRA matrix (`dralloc bench --list`, `dralloc bench
 * WORKLOAD... [-o json]`, `dralloc bench scaling WORKLOAD...`, `dralloc bench compare
 * OLD.json NEW.json`).
 *
 * Each named workload reproduces one of scheduler_perf's DRA shapes
 * (../shared/reference/perf-anchors.md, test/integration/scheduler_perf/dra/):
 * createResourceDriver's one slice per node with devices instance-0..N-1 (model,
 * family, driverVersion, numa, 1Gi memory) and DeviceClass test-class, or the
 * partitionable, consumable-capacity and backtracking templates (matrix_objects.h,
 * alloc_objects.h), or our own MIG scale point; pods with one claim from a
 * template. The whole scheduling cycle runs as kube-scheduler runs it, on the
 * engine's planning overlay: for each pod, filter every node (the DynamicResources
 * decision), score (binpack), pick the best (ties by node order), commit the
 * allocation. "fill" workloads keep every pod (initPods pre-allocated, then the
 * measured pods fill the cluster); "steady" ones (SteadyStateCluster...) keep the
 * cluster at its pre-filled state: each measured pod is decided and not kept.
 * Figures, the median over --reps repetitions (default 3) after one warm-up:
 *   podsPerSecond        measured pods / time of their whole cycles (podsPerCpuSecond:
 *                        / the process's CPU time over them, every thread: on a shared
 *                        machine what the cycles cost, not the waits for a core)
 *   filterLatencyNs      per pod: time to filter every node (p50, p90, p99, max)
 *   allocationsPerSecond allocator decisions (node fits) / time spent in them
 *   snapshotBuildMs      objects to a published snapshot (dra_store_apply, each object
 *                        the API server's, as the watch gives them: dra_change.served;
 *                        the MIG cluster comes in batches of 100 nodes, as a paged LIST);
 *                        snapshotBuildCpuMs the same in CPU time (a shared machine)
 *   peakRssBytes         the process's peak RSS during the workload (VmHWM, reset
 *                        before each run through /proc/self/clear_refs), the max over
 *                        the runs; snapshotPeakRssBytes the same once the snapshot is
 *                        built (before any pod: node views are built lazily)
 * with, per figure, the spread of the repetitions ((max − min) / median), which
 * `compare` weighs a change against; and firstAllocation, what the first pod gets
 * on the first node (checked where the upstream shape fixes it, else MISMATCH).
 *
 * Threads (--threads N, or a range 1..max for the scaling report): the nodes of one
 * pod are filtered by N threads from a pool made once per run (mx_pool.h): blocks of
 * contiguous nodes, each on its own planning overlay (the overlay and its fit memo are
 * single-threaded), claimed in chunks by whichever thread comes first, the caller
 * included; a filter cheaper than a worker's measured start runs on the caller alone.
 * That is exact when a commit can only change its own node's answers — node-local
 * pools — and in steady workloads (nothing committed); a fill workload over shared
 * pools runs on one thread. The overlay's fit memo (an answer reused while nothing
 * that could change it was committed) is on, as `plan`
 * runs; --no-memo decides every node every time, which is what the allocator costs.
 * --scale F multiplies nodes, pools, init claims and pods (at least 1 each), for
 * quick runs (the CTest runs the new shapes at 1 %). --build-only stops each run once
 * the snapshot is built: the build's figures alone, without the scheduling cycles
 * after it (a 5,000-node MIG build in ~15 s instead of ~30 s, so that more runs fit
 * between the swings of a shared machine); the pod figures are then 0. */
#include "bench/bench.h"
#include "bench/alloc_objects.h"
#include "bench/matrix_objects.h"
#include "bench/mx_pool.h"

#include "engine/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef enum { FILL, STEADY } mx_mode;

typedef enum {
    SHAPE_DRIVER,          /* createResourceDriver: one node-local slice, `devices` instance-i per node */
    SHAPE_BACKTRACKING,    /* the PartitionableBacktracking pool, one node */
    SHAPE_PARTITIONABLE,   /* `pools` shared partitionable pools visible from every node */
    SHAPE_CONSUMABLE,      /* `devices` shareable 80Gi devices per node */
    SHAPE_MIG,             /* `devices` MIG-partitionable GPUs per node */
} mx_shape;

typedef struct mx_workload {
    const char *name;
    mx_shape shape;
    int nodes, devices;          /* devices per node (GPUs for SHAPE_MIG) */
    int pools;                   /* SHAPE_PARTITIONABLE: shared pools (two slices each) */
    int init_claims;             /* pre-allocated claims */
    int pods;                    /* measured pods */
    mx_mode mode;
    int requests;                /* SHAPE_DRIVER: one-device requests per claim (2 with matchAttribute) */
    bool selector, match;        /* SHAPE_DRIVER: CEL selector; matchAttribute numa */
    bool taints;                 /* SHAPE_DRIVER: every device tainted NoSchedule, the request tolerates it */
    bool first_available;        /* SHAPE_DRIVER: firstAvailable [no-devices-class, test-class] */
    const char *source;
    /* the first pod on node-00000: comma-separated parts that its allocation
     * ("request:pool/device,...") must contain; NULL: not checked */
    const char *expect;
} mx_workload;

static const char SELECTOR[] = "device.attributes[\"test-driver.cdi.k8s.io\"].driverVersion.major() >= 1 && "
                               "device.capacity[\"test-driver.cdi.k8s.io\"].memory.isGreaterThan(quantity(\"1Mi\"))";

static const mx_workload MX[] = {
    {.name = "5000pods_500nodes", .nodes = 500, .devices = 10, .init_claims = 2500, .pods = 2500, .mode = FILL,
     .requests = 1, .source = "SchedulingWithResourceClaimTemplate/5000pods_500nodes: 2500 init + 2500 measured pods",
     .expect = "req-0:node-00000/instance-5"},
    {.name = "2000pods_100nodes", .nodes = 100, .devices = 20, .init_claims = 1000, .pods = 1000, .mode = FILL,
     .requests = 1, .source = "SchedulingWithResourceClaimTemplate/2000pods_100nodes"},
    {.name = "2000pods_200nodes", .nodes = 200, .devices = 10, .init_claims = 1000, .pods = 1000, .mode = FILL,
     .requests = 1, .source = "SchedulingWithResourceClaimTemplate/2000pods_200nodes"},
    {.name = "steady_empty_500nodes", .nodes = 500, .devices = 10, .pods = 1000, .mode = STEADY, .requests = 1,
     .source = "SteadyStateClusterResourceClaimTemplate/empty_500nodes", .expect = "req-0:node-00000/instance-0"},
    {.name = "steady_half_500nodes", .nodes = 500, .devices = 10, .init_claims = 2500, .pods = 1000, .mode = STEADY,
     .requests = 1, .source = "SteadyStateClusterResourceClaimTemplate/half_500nodes"},
    {.name = "steady_full_500nodes", .nodes = 500, .devices = 10, .init_claims = 4990, .pods = 1000, .mode = STEADY,
     .requests = 1, .source = "SteadyStateClusterResourceClaimTemplate/full_500nodes: 10 free devices"},
    {.name = "selector_empty_500nodes", .nodes = 500, .devices = 10, .pods = 1000, .mode = STEADY, .requests = 1,
     .selector = true,
     .source = "SteadyState.../selector_empty_500nodes (PR kubernetes#140254): CEL selector on driverVersion and memory"},
    {.name = "match_empty_500nodes", .nodes = 500, .devices = 10, .pods = 1000, .mode = STEADY, .requests = 2,
     .match = true,
     .source = "SteadyState.../match_empty_500nodes (PR kubernetes#140254): two requests, matchAttribute numa"},
    {.name = "taints_empty_500nodes", .nodes = 500, .devices = 10, .pods = 1000, .mode = STEADY, .requests = 1,
     .taints = true,
     .source = "steady_empty_500nodes with every device tainted (NoSchedule) and the request tolerating it "
               "(scheduler_perf's devicetaintrule/toleration templates)"},
    {.name = "backtracking_1node", .shape = SHAPE_BACKTRACKING, .nodes = 1, .devices = 8, .pods = 200, .mode = STEADY,
     .requests = 1,
     .source = "PartitionableBacktracking: 8 devices on a 70Gi counter (device-1 20Gi), count 7 -> device-2..device-8",
     .expect = "/device-2,/device-3,/device-4,/device-5,/device-6,/device-7,/device-8"},
    {.name = "gpu_5000nodes", .nodes = 5000, .devices = 8, .pods = 36000, .mode = FILL, .requests = 1,
     .source = "dralloc's own scale point: 5,000 nodes x 8 GPUs filled to 90 % (36,000 one-GPU pods)"},
    {.name = "firstavailable_empty_500nodes", .nodes = 500, .devices = 10, .pods = 1000, .mode = STEADY, .requests = 1,
     .first_available = true,
     .source = "SteadyStateClusterResourceClaimTemplateFirstAvailable (prioritizedlist/, upstream runs only its 1-node "
               "fast variant): firstAvailable [sub-0 of no-devices-class, sub-1 of test-class], at empty_500nodes' size",
     .expect = "req-0/sub-1:node-00000/instance-0"},
    {.name = "partitionable_2000pods_100nodes", .shape = SHAPE_PARTITIONABLE, .nodes = 100, .pools = 2000,
     .init_claims = 2000, .pods = 2000, .mode = STEADY, .requests = 1,
     .source = "SteadyStateClusterResourceClaimTemplatePartitionable/2000pods_100nodes: 2,000 shared pools (4 counters, "
               "6 devices) seen from every node, device-2-counters-1 of each pre-allocated; two devices with "
               "matchAttribute dra.example.com/slice (one backtrack)",
     .expect = "/device-1-counter-3,/device-1-counter-4"},
    {.name = "consumable_empty_100nodes", .shape = SHAPE_CONSUMABLE, .nodes = 100, .devices = 4, .pods = 1000,
     .mode = STEADY, .requests = 2,
     .source = "SteadyStateClusterResourceClaimTemplateConsumableCapacity/empty_100nodes (PR kubernetes#139511): "
               "4 allowMultipleAllocations devices of 80Gi per node, two requests of 40Gi",
     .expect = "req-0:node-00000/shareable-device-0,req-1:node-00000/shareable-device-0"},
    {.name = "mig_5000nodes", .shape = SHAPE_MIG, .nodes = 5000, .devices = 8, .pods = 5000, .mode = FILL,
     .requests = 1,
     .source = "dralloc's own scale point: 5,000 nodes x 8 A100-40GB GPUs, each a counter set with its whole-GPU "
               "and 18 MIG devices (152 devices per node, 760,000 in 20,000 slices); 5,000 pods of one 1g.5gb",
     .expect = "req-0:node-00000/gpu-0-mig-1g5gb-0"},
};
enum { NMX = sizeof MX / sizeof MX[0] };

size_t bench_matrix_count(void) { return NMX; }
const char *bench_matrix_name(size_t i) { return MX[i].name; }

int bench_matrix_find(const char *name) {
    for (int i = 0; i < NMX; i++)
        if (!strcmp(MX[i].name, name)) return i;
    return -1;
}

/* Commits on one node can change other nodes' answers. */
static bool shared_pools(const mx_workload *w) { return w->shape == SHAPE_BACKTRACKING || w->shape == SHAPE_PARTITIONABLE; }

static int devices_per_node(const mx_workload *w) {
    return w->shape == SHAPE_MIG ? w->devices * BENCH_MX_MIG_PER_GPU : w->shape == SHAPE_PARTITIONABLE ? 0 : w->devices;
}

void bench_matrix_list(FILE *f) {
    for (int i = 0; i < NMX; i++) {
        const mx_workload *w = &MX[i];
        char what[96];
        if (w->shape == SHAPE_PARTITIONABLE)
            snprintf(what, sizeof what, "%d nodes x %d shared pools (6 devices each)", w->nodes, w->pools);
        else if (w->shape == SHAPE_MIG)
            snprintf(what, sizeof what, "%d nodes x %d GPUs (%d devices)", w->nodes, w->devices, devices_per_node(w));
        else
            snprintf(what, sizeof what, "%d nodes x %d devices", w->nodes, w->devices);
        fprintf(f, "  %-31s %s, %d pre-allocated claims, %d %s pods, %d request(s)%s%s%s%s\n", w->name, what,
                w->init_claims, w->pods, w->mode == FILL ? "kept" : "steady-state", w->requests,
                w->selector ? ", CEL selector" : "", w->match ? ", matchAttribute" : "",
                w->first_available ? ", firstAvailable" : "", w->shape == SHAPE_CONSUMABLE ? ", consumable capacity" : "");
        fprintf(f, "  %-31s from %s\n", "", w->source);
    }
}

/* The workload at scale f: nodes, pools, init claims and pods times f (at least 1;
 * init claims keep their share of the devices). */
static mx_workload scaled(const mx_workload *w, double f) {
    mx_workload s = *w;
    if (f == 1.0) return s;
    int nodes = (int)lround(w->nodes * f), pools = (int)lround(w->pools * f), pods = (int)lround(w->pods * f);
    s.nodes = nodes < 1 ? 1 : nodes;
    s.pools = w->pools ? (pools < 1 ? 1 : pools) : 0;
    s.pods = pods < 1 ? 1 : pods;
    if (w->shape == SHAPE_PARTITIONABLE) s.init_claims = (int)lround((double)w->init_claims * s.pools / w->pools);
    else if (w->init_claims) s.init_claims = (int)lround((double)w->init_claims * s.nodes / w->nodes);
    return s;
}

/* ---- the cluster ---------------------------------------------------------------------------- */

static void node_name(int n, char *buf, size_t size) { snprintf(buf, size, "node-%05d", n); }

static json_t *driver_cluster(const mx_workload *w, json_t *a) {
    json_array_append_new(a, bench_alloc_class(BENCH_ALLOC_CLASS, "device.driver == \"" BENCH_ALLOC_DRIVER "\""));
    if (w->first_available)
        json_array_append_new(a, bench_alloc_class(BENCH_MX_NO_DEVICES_CLASS, "device.driver == \"no-such-driver.cdi.k8s.io\""));
    int64_t *numa = xcalloc((size_t)w->devices, sizeof *numa);
    for (int i = 0; i < w->devices; i++) numa[i] = w->match ? i % 2 : i;
    for (int n = 0; n < w->nodes; n++) {
        char node[32];
        node_name(n, node, sizeof node);
        json_array_append_new(a, bench_alloc_node(node, NULL, NULL));
        json_t *sl = bench_alloc_node_slice(node, (size_t)w->devices, numa);
        size_t di;
        json_t *dev;
        if (w->taints)
            json_array_foreach(json_object_get(json_object_get(sl, "spec"), "devices"), di, dev)
                json_object_set_new(dev, "taints", json_pack("[{s:s, s:s, s:s}]", "key", "example.com/maintenance", "value",
                                                             "planned", "effect", "NoSchedule"));
        json_array_append_new(a, sl);
    }
    free(numa);
    /* init claims, spread over the nodes (scheduler_perf shuffles; round robin here) */
    for (int c = 0; c < w->init_claims && c < w->nodes * w->devices; c++) {
        char name[32], node[32], dev[32];
        snprintf(name, sizeof name, "init-%d", c);
        node_name(c % w->nodes, node, sizeof node);
        snprintf(dev, sizeof dev, "instance-%d", c / w->nodes);
        json_array_append_new(a, bench_alloc_allocated_claim(name, node, dev));
    }
    if (w->first_available) {
        json_array_append_new(a, bench_mx_first_available_template());
        return a;
    }
    /* the pods' template: the claim's spec under spec.spec */
    bench_alloc_req reqs[2] = {{"req-0", 1, w->selector ? SELECTOR : NULL}, {"req-1", 1, NULL}};
    json_t *claim = bench_alloc_claim("tmpl", reqs, (size_t)w->requests, w->match ? "dra.example.com/numa" : NULL);
    size_t ri;
    json_t *rq;
    if (w->taints)
        json_array_foreach(json_object_get(json_object_get(json_object_get(claim, "spec"), "devices"), "requests"), ri, rq)
            json_object_set_new(json_object_get(rq, "exactly"), "tolerations",
                                json_pack("[{s:s, s:s, s:s}]", "key", "example.com/maintenance", "operator", "Exists",
                                          "effect", "NoSchedule"));
    json_array_append_new(a, bench_mx_template(json_incref(json_object_get(json_object_get(claim, "spec"), "devices"))));
    json_decref(claim);
    return a;
}

enum { MIG_BATCH_NODES = 100 };

/* Part k of the workload's objects, NULL after the last: everything at once, but the
 * MIG cluster (3.5 KB of jansson objects per device) in batches of MIG_BATCH_NODES
 * nodes, as a paged LIST would bring it. */
static json_t *cluster_part(const mx_workload *w, int k) {
    json_t *a = json_array();
    char node[32];
    switch (w->shape) {
    case SHAPE_DRIVER:
        if (k) break;
        return driver_cluster(w, a);
    case SHAPE_BACKTRACKING: {
        if (k) break;
        /* one node the pool's nodeSelector picks; the pods' template asks for 7 */
        json_array_append_new(a, bench_alloc_class(BENCH_ALLOC_CLASS, "device.driver == \"" BENCH_ALLOC_DRIVER "\""));
        json_array_append_new(a, bench_alloc_node("node-00000", "node-with-dra", "true"));
        json_t *sl = bench_alloc_backtracking_slices();
        json_array_extend(a, sl);
        json_decref(sl);
        json_t *t = bench_alloc_backtracking_template();
        json_object_set_new(json_object_get(t, "metadata"), "name", json_string(BENCH_MX_TEMPLATE));
        json_object_set_new(json_object_get(t, "metadata"), "namespace", json_string(BENCH_ALLOC_NS));
        json_array_append_new(a, t);
        return a;
    }
    case SHAPE_PARTITIONABLE:
        if (k) break;
        json_array_append_new(a, bench_alloc_class(BENCH_ALLOC_CLASS, "device.driver == \"" BENCH_ALLOC_DRIVER "\""));
        for (int n = 0; n < w->nodes; n++) {
            node_name(n, node, sizeof node);
            json_array_append_new(a, bench_alloc_node(node, "node-with-dra", "true"));
        }
        for (int p = 0; p < w->pools; p++) {
            json_t *sl = bench_mx_partitionable_pool(p);
            json_array_extend(a, sl);
            json_decref(sl);
        }
        /* allocResourceClaims: each init claim's selector takes the one preallocate
         * device of a pool, so after `pools` claims every pool has lost its first */
        for (int c = 0; c < w->init_claims && c < w->pools; c++)
            json_array_append_new(a, bench_mx_partitionable_init_claim(c, c));
        json_array_append_new(a, bench_mx_two_devices_template());
        return a;
    case SHAPE_CONSUMABLE:
        if (k) break;
        json_array_append_new(a, bench_mx_consumable_class());
        for (int n = 0; n < w->nodes; n++) {
            node_name(n, node, sizeof node);
            json_array_append_new(a, bench_alloc_node(node, NULL, NULL));
            json_array_append_new(a, bench_mx_consumable_slice(node, w->devices));
        }
        json_array_append_new(a, bench_mx_consumable_template());
        return a;
    case SHAPE_MIG:
        if (k * MIG_BATCH_NODES >= w->nodes) break;
        if (!k) {
            json_array_append_new(a, bench_mx_mig_class());
            json_array_append_new(a, bench_mx_mig_template("1g.5gb"));
        }
        for (int n = k * MIG_BATCH_NODES; n < w->nodes && n < (k + 1) * MIG_BATCH_NODES; n++) {
            node_name(n, node, sizeof node);
            json_array_append_new(a, bench_alloc_node(node, NULL, NULL));
            json_t *sl = bench_mx_mig_node_slices(node, n, w->devices);
            json_array_extend(a, sl);
            json_decref(sl);
        }
        return a;
    }
    json_decref(a);
    return NULL;
}

/* ---- one run ---------------------------------------------------------------------------------- */

typedef struct mx_result {
    double pods_per_s, allocs_per_s, build_ms, build_cpu_ms;
    double pods_per_cpu_s;   /* pods / CPU time of the process over their cycles (every thread) */
    double p50, p90, p99, max, first_ms;
    double memo_hits;        /* share of node decisions answered by the overlay's fit memo */
    size_t placed;
    long peak_kib, build_peak_kib;   /* VmHWM at the end, and once the snapshot was built */
    char first_alloc[512];   /* "request:pool/device,..." of the first pod on node-00000, or why not */
    uint64_t digest;         /* fnv_step over every pod's answer digest (mx_pool_answer) and pick */
} mx_result;

/* One step of the digest: FNV-1a's multiply a word at a time, with a shift to carry the
 * high bits down (a digest to compare runs, not a hash table's). */
static uint64_t fnv_step(uint64_t h, uint64_t v) {
    h = (h ^ v) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static json_t *pod_json(int p) {
    char name[32];
    snprintf(name, sizeof name, "pod-%d", p);
    return json_pack("{s:{s:s, s:s}, s:{s:[{s:s}], s:[{s:s, s:s}]}}", "metadata", "name", name, "namespace", BENCH_ALLOC_NS,
                     "spec", "containers", "name", "c", "resourceClaims", "name", "claim", "resourceClaimTemplateName",
                     BENCH_MX_TEMPLATE);
}

/* What pod 0 gets on node-00000 of the fresh snapshot, as "request:pool/device,...". */
static void first_allocation(dra_snapshot *s, dra_alloc_ctx *x, char *out, size_t n) {
    err e;
    err_clear(&e);
    json_t *pod = pod_json(0);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    json_decref(pod);
    if (!pr) {
        snprintf(out, n, "pod request: %.400s", e.msg);
        return;
    }
    dra_fit fit;
    bool reasons = dra_alloc_ctx_reasons(x);
    dra_alloc_ctx_set_reasons(x, true);   /* this one's reason is printed */
    json_t *al = dra_pod_fit_allocation(pr, x, "node-00000", 0, &fit);
    dra_alloc_ctx_set_reasons(x, reasons);
    if (!al) snprintf(out, n, "%s: %.400s", dra_fit_status_name(fit.status), fit.reason);
    else {
        size_t len = 0, i, j;
        json_t *c, *r;
        out[0] = '\0';
        json_array_foreach(al, i, c) json_array_foreach(
            json_object_get(json_object_get(json_object_get(c, "allocation"), "devices"), "results"), j, r) {
            int k = snprintf(out + len, n - len, "%s%s:%s/%s", len ? "," : "",
                             json_string_value(json_object_get(r, "request")) ?: "?",
                             json_string_value(json_object_get(r, "pool")) ?: "?",
                             json_string_value(json_object_get(r, "device")) ?: "?");
            if (k < 0 || (size_t)k >= n - len) break;
            len += (size_t)k;
        }
    }
    json_decref(al);
    dra_pod_request_free(pr);
}

static bool first_allocation_ok(const mx_workload *w, const char *got) {
    if (!w->expect) return true;
    char want[512];
    snprintf(want, sizeof want, "%s", w->expect);
    char *save = NULL;
    for (char *t = strtok_r(want, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strstr(got, t)) return false;
    return true;
}

static bool run_once(const mx_workload *w, unsigned threads, bool memo, bool build_only, mx_result *r) {
    memset(r, 0, sizeof *r);
    bench_reset_peak_rss();
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    err e;
    err_clear(&e);
    uint64_t build_ns = 0, build_cpu = 0;
    json_t *objs;
    for (int k = 0; (objs = cluster_part(w, k)); k++) {
        /* as the watch gives them: served by the API server (dra_change.served) */
        size_t n = json_array_size(objs);
        dra_change *ch = xcalloc(n ? n : 1, sizeof *ch);
        for (size_t i = 0; i < n; i++) ch[i] = (dra_change){.upsert = json_array_get(objs, i), .served = true};
        uint64_t t0 = bench_now_ns(), c0 = bench_cpu_ns();
        bool ok = dra_store_apply(st, ch, n, &e) != 0;
        build_ns += bench_now_ns() - t0;
        build_cpu += bench_cpu_ns() - c0;
        free(ch);
        json_decref(objs);
        if (!ok) {
            char buf[2048];
            fprintf(stderr, "bench %s: %s\n", w->name, err_format(&e, buf, sizeof buf));
            dra_store_free(st);
            return false;
        }
    }
    r->build_ms = (double)build_ns / 1e6;
    r->build_cpu_ms = (double)build_cpu / 1e6;
    r->build_peak_kib = bench_status_kib("VmHWM:");
    if (build_only) {
        r->peak_kib = r->build_peak_kib;
        dra_store_free(st);
        return true;
    }
    dra_snapshot *s = dra_store_acquire(st);
    if (threads < 1) threads = 1;
    if (w->mode == FILL && shared_pools(w)) threads = 1;   /* a commit reaches every node */
    char(*names)[32] = xcalloc((size_t)w->nodes, sizeof *names);
    for (int n = 0; n < w->nodes; n++) node_name(n, names[n], sizeof names[n]);
    dra_fit *fits = xcalloc((size_t)w->nodes, sizeof *fits);
    mx_pool *pool = mx_pool_new(threads, s, memo, w->nodes, names, fits);
    first_allocation(s, mx_pool_ctx(pool), r->first_alloc, sizeof r->first_alloc);
    double *lat = xcalloc((size_t)w->pods, sizeof *lat);
    uint64_t fit_ns = 0, cycles = 0, cpu0 = bench_proc_cpu_ns();
    size_t decisions = 0, placed = 0, hits = 0;
    uint64_t digest = 14695981039346656037ull;
    for (int p = 0; p < w->pods; p++) {
        json_t *pod = pod_json(p);
        uint64_t c0 = bench_now_ns();
        dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
        json_decref(pod);
        if (!pr) continue;
        uint64_t f0 = bench_now_ns();
        /* filter, and score and pick: the highest binpack score, ties by node order —
         * reduced by the threads that decided the nodes (mx_pool_answer) */
        mx_pool_answer ans;
        mx_pool_filter(pool, pr, &ans);
        uint64_t f1 = bench_now_ns();
        fit_ns += f1 - f0;
        decisions += (size_t)w->nodes;
        hits += ans.hits;
        lat[p] = (double)(f1 - f0);
        int best = ans.best;
        if (best >= 0 && w->mode == FILL) {
            dra_fit commit;
            mx_pool_commit(pool, pr, best, &commit);
        }
        placed += best >= 0;
        dra_pod_request_free(pr);
        cycles += bench_now_ns() - c0;
        digest = fnv_step(fnv_step(digest, ans.digest), (uint64_t)(int64_t)best);
    }
    r->digest = digest;
    uint64_t cpu = bench_proc_cpu_ns() - cpu0;
    r->pods_per_cpu_s = cpu ? (double)w->pods / ((double)cpu / 1e9) : 0;
    r->first_ms = w->pods ? lat[0] / 1e6 : 0;
    qsort(lat, (size_t)w->pods, sizeof *lat, cmp_d);
    r->p50 = bench_quantile(lat, (size_t)w->pods, 0.5);
    r->p90 = bench_quantile(lat, (size_t)w->pods, 0.9);
    r->p99 = bench_quantile(lat, (size_t)w->pods, 0.99);
    r->max = w->pods ? lat[w->pods - 1] : 0;
    r->pods_per_s = cycles ? (double)w->pods / ((double)cycles / 1e9) : 0;
    r->allocs_per_s = fit_ns ? (double)decisions / ((double)fit_ns / 1e9) : 0;
    r->placed = placed;
    r->memo_hits = decisions ? (double)hits / (double)decisions : 0;
    r->peak_kib = bench_status_kib("VmHWM:");
    free(lat);
    mx_pool_free(pool);
    free(fits);
    free(names);
    dra_snapshot_release(s);
    dra_store_free(st);
    return true;
}

/* ---- repetitions, thread counts, the report ------------------------------------------------------ */

/* The median of the repetitions and their spread ((max − min) / median). */
static double med(double *v, size_t n, double *spread) {
    qsort(v, n, sizeof *v, cmp_d);
    double m = bench_quantile(v, n, 0.5);
    *spread = m > 0 ? (v[n - 1] - v[0]) / m : 0;
    return m;
}

/* One workload at one thread count: the medians over the repetitions. */
typedef struct mx_figures {
    unsigned threads;
    size_t reps, placed;
    double pods, allocs, build, build_cpu, p50, p90, p99, max, first_ms, pods_cpu, memo_hits;
    double s_pods, s_allocs, s_build, s50, s99;
    long peak_kib, build_peak_kib;
    char first_alloc[512];
    uint64_t digest;   /* the runs' decisions (mx_result.digest); runs that differ: 0 */
} mx_figures;

static bool run_reps(const mx_workload *w, unsigned threads, bool memo, bool build_only, size_t reps,
                     mx_figures *out) {
    mx_result warm;
    if (!run_once(w, threads, memo, build_only, &warm)) return false;
    enum { MAXR = 16 };
    double pods[MAXR], allocs[MAXR], build[MAXR], build_cpu[MAXR], pods_cpu[MAXR], p50[MAXR], p90[MAXR], p99[MAXR], mx[MAXR], first[MAXR];
    size_t R = reps > MAXR ? MAXR : reps;
    memset(out, 0, sizeof *out);
    out->threads = threads;
    out->reps = R;
    out->peak_kib = warm.peak_kib;
    out->build_peak_kib = warm.build_peak_kib;
    snprintf(out->first_alloc, sizeof out->first_alloc, "%s", warm.first_alloc);
    out->digest = warm.digest;
    for (size_t i = 0; i < R; i++) {
        mx_result r;
        if (!run_once(w, threads, memo, build_only, &r)) return false;
        pods[i] = r.pods_per_s, allocs[i] = r.allocs_per_s, build[i] = r.build_ms, build_cpu[i] = r.build_cpu_ms;
        pods_cpu[i] = r.pods_per_cpu_s;
        p50[i] = r.p50, p90[i] = r.p90, p99[i] = r.p99, mx[i] = r.max, first[i] = r.first_ms;
        out->placed = r.placed;
        if (r.digest != out->digest) out->digest = 0;   /* not deterministic: said as 0 */
        out->memo_hits = r.memo_hits;   /* the same every run: the decisions are deterministic */
        if (r.peak_kib > out->peak_kib) out->peak_kib = r.peak_kib;
        if (r.build_peak_kib > out->build_peak_kib) out->build_peak_kib = r.build_peak_kib;
    }
    double s90, smax, sfirst, scpu, spcpu;
    out->pods = med(pods, R, &out->s_pods);
    out->allocs = med(allocs, R, &out->s_allocs);
    out->build = med(build, R, &out->s_build);
    out->build_cpu = med(build_cpu, R, &scpu);
    out->pods_cpu = med(pods_cpu, R, &spcpu);
    out->p50 = med(p50, R, &out->s50);
    out->p90 = med(p90, R, &s90);
    out->p99 = med(p99, R, &out->s99);
    out->max = med(mx, R, &smax);
    out->first_ms = med(first, R, &sfirst);
    return true;
}

static json_t *machine(const unsigned *threads, size_t nthreads, double scale) {
    struct utsname u;
    uname(&u);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    double load[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = 0;
        fclose(f);
    }
    json_t *tc = json_array();
    for (size_t i = 0; i < nthreads; i++) json_array_append_new(tc, json_integer(threads[i]));
    return json_pack("{s:s, s:s, s:s, s:I, s:i, s:o, s:f, s:[f, f, f]}", "host", host, "kernel", u.release, "arch",
                     u.machine, "cpus", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "threads", (int)threads[0],
                     "threadCounts", tc, "scale", scale, "loadAverage", load[0], load[1], load[2]);
}

static json_t *latency_json(const mx_figures *g) {
    return json_pack("{s:I, s:I, s:I, s:I}", "p50", (json_int_t)g->p50, "p90", (json_int_t)g->p90, "p99",
                     (json_int_t)g->p99, "max", (json_int_t)g->max);
}

int bench_matrix_run(const int *which, size_t n, const bench_matrix_opts *mo) {
    const bench_opts *o = mo->o;
    size_t reps = o->reps ? o->reps : 3;
    double scale = mo->scale > 0 ? mo->scale : 1.0;
    unsigned one = 1;
    const unsigned *tc = mo->nthreads ? mo->threads : &one;
    size_t ntc = mo->nthreads ? mo->nthreads : 1;
    json_t *out = json_pack("{s:o, s:b, s:[]}", "machine", machine(tc, ntc, scale), "fitMemo", mo->memo, "workloads");
    bench_table *tb = NULL, *sc = NULL;
    static const char *const cols[] = {"workload", "pods/s", "pods/cpu-s", "p50 ms", "p90 ms", "p99 ms", "max ms", "allocs/s",
                                       "build ms", "build cpu", "RSS built", "peak RSS", "placed", "memo hits", "spread",
                                       "first pod on node-00000"};
    static const char *const scols[] = {"workload", "threads", "pods/s", "speedup", "pods/cpu-s", "filter p50 ms", "p99 ms",
                                        "allocs/s", "filter speedup", "spread"};
    if (!mo->as_json) {
        tb = bench_table_new(cols, ARRAY_SIZE(cols));
        if (mo->scaling) sc = bench_table_new(scols, ARRAY_SIZE(scols));
    }
    int rc = 0;
    mx_figures *figs = xcalloc(ntc, sizeof *figs);
    for (size_t k = 0; k < n; k++) {
        const mx_workload w = scaled(&MX[which[k]], scale);
        size_t done = 0;
        for (; done < ntc; done++)
            if (!run_reps(&w, tc[done], mo->memo, mo->build_only, reps, &figs[done])) break;
        if (done < ntc) {
            rc = 1;
            continue;
        }
        const mx_figures *g = &figs[0];
        bool ok = mo->build_only || first_allocation_ok(&w, g->first_alloc);
        if (!ok) {
            fprintf(stderr, "MISMATCH: %s: the first pod on node-00000 got \"%s\", expected parts \"%s\"\n", w.name,
                    g->first_alloc, w.expect);
            rc = 1;
        }
        json_t *wj = json_pack(
            "{s:s, s:f, s:o, s:f, s:f, s:I, s:I, s:I, s:{s:f, s:f, s:f, s:f, s:f}, s:s, s:{s:i, s:i, s:i, s:i, s:i, s:i}, "
            "s:f, s:f, s:f, s:I, s:s, s:s, s:i}",
            "name", w.name, "podsPerSecond", g->pods, "filterLatencyNs", latency_json(g), "allocationsPerSecond", g->allocs,
            "snapshotBuildMs", g->build, "peakRssBytes", (json_int_t)g->peak_kib * 1024, "placed", (json_int_t)g->placed,
            "repetitions", (json_int_t)g->reps, "spread", "podsPerSecond", g->s_pods, "allocationsPerSecond", g->s_allocs,
            "snapshotBuildMs", g->s_build, "filterLatencyP50", g->s50, "filterLatencyP99", g->s99, "source", w.source,
            "parameters", "nodes", w.nodes, "devicesPerNode", devices_per_node(&w), "pools", w.pools, "initClaims",
            w.init_claims, "pods", w.pods, "requests", w.requests, "firstPodFilterMs", g->first_ms, "podsPerCpuSecond", g->pods_cpu, "snapshotBuildCpuMs", g->build_cpu, "snapshotPeakRssBytes",
            (json_int_t)g->build_peak_kib * 1024, "firstAllocation",
            g->first_alloc, "firstAllocationCheck", !w.expect || mo->build_only ? "unchecked" : ok ? "ok" : "MISMATCH", "threads",
            (int)g->threads);
        json_object_set_new(wj, "memoHitRate", json_real(g->memo_hits));
        char dg[20];
        snprintf(dg, sizeof dg, "%016llx", (unsigned long long)g->digest);
        /* every node's answer and every pick, the same whatever the threads and the memo */
        json_object_set_new(wj, "decisionDigest", json_string(dg));
        if (mo->build_only) json_object_set_new(wj, "buildOnly", json_true());
        if (mo->scaling) {
            json_t *sj = json_array();
            for (size_t t = 0; t < ntc; t++) {
                const mx_figures *h = &figs[t];
                json_array_append_new(
                    sj, json_pack("{s:i, s:f, s:f, s:f, s:o, s:f, s:f, s:f}", "threads", (int)h->threads, "podsPerSecond",
                                  h->pods, "podsPerCpuSecond", h->pods_cpu, "speedup", g->pods > 0 ? h->pods / g->pods : 0, "filterLatencyNs",
                                  latency_json(h), "allocationsPerSecond", h->allocs, "filterSpeedup",
                                  g->allocs > 0 ? h->allocs / g->allocs : 0, "spread", h->s_pods));
                if (sc) {
                    bench_table_addf(sc, "%s", t ? "" : w.name);
                    bench_table_addf(sc, "%u", h->threads);
                    bench_table_addf(sc, "%.0f", h->pods);
                    bench_table_addf(sc, "%.2fx", g->pods > 0 ? h->pods / g->pods : 0);
                    bench_table_addf(sc, "%.0f", h->pods_cpu);
                    bench_table_addf(sc, "%.3f", h->p50 / 1e6);
                    bench_table_addf(sc, "%.3f", h->p99 / 1e6);
                    bench_table_addf(sc, "%.2fM", h->allocs / 1e6);
                    bench_table_addf(sc, "%.2fx", g->allocs > 0 ? h->allocs / g->allocs : 0);
                    bench_table_addf(sc, "%.0f%%", h->s_pods * 100);
                }
            }
            json_object_set_new(wj, "scaling", sj);
        }
        json_array_append_new(json_object_get(out, "workloads"), wj);
        if (tb) {
            bench_table_addf(tb, "%s", w.name);
            bench_table_addf(tb, "%.0f", g->pods);
            bench_table_addf(tb, "%.0f", g->pods_cpu);
            bench_table_addf(tb, "%.3f", g->p50 / 1e6);
            bench_table_addf(tb, "%.3f", g->p90 / 1e6);
            bench_table_addf(tb, "%.3f", g->p99 / 1e6);
            bench_table_addf(tb, "%.3f", g->max / 1e6);
            bench_table_addf(tb, "%.2fM", g->allocs / 1e6);
            bench_table_addf(tb, "%.0f", g->build);
            bench_table_addf(tb, "%.0f", g->build_cpu);
            bench_table_addf(tb, "%.0f MiB", (double)g->build_peak_kib / 1024);
            bench_table_addf(tb, "%.0f MiB", (double)g->peak_kib / 1024);
            bench_table_addf(tb, "%zu/%d", g->placed, w.pods);
            bench_table_addf(tb, "%.1f%%", g->memo_hits * 100);
            bench_table_addf(tb, "%.0f%%", (mo->build_only ? g->s_build : g->s_pods) * 100);
            if (mo->build_only) bench_table_addf(tb, "-");
            else
                bench_table_addf(tb, "%.60s%s%s", g->first_alloc, strlen(g->first_alloc) > 60 ? "..." : "",
                                 !w.expect ? "" : ok ? " (ok)" : " (MISMATCH)");
        }
    }
    free(figs);
    if (mo->as_json) {
        char *s = json_dumps(out, JSON_INDENT(1));
        fprintf(o->out, "%s\n", s);
        free(s);
    } else {
        if (mo->build_only)
            fprintf(o->out, "snapshot build only (--build-only: no scheduling cycle, pod figures 0), median of %zu after "
                            "a warm-up; scale %g; spread = (max - min) / median of build ms\n",
                    reps, scale);
        else
            fprintf(o->out, "scheduling cycles (filter every node, binpack score, commit), median of %zu after a warm-up; "
                            "threads %u; fit memo %s; scale %g; spread = (max - min) / median of pods/s\n",
                    reps, tc[0], mo->memo ? "on (--no-memo: every node decided)" : "off", scale);
        bench_table_print(tb, o->out);
        bench_table_free(tb);
        if (sc) {
            fprintf(o->out, "\nscaling (speedup: pods/s over %u thread(s); filter speedup: node decisions/s over the same)\n",
                    tc[0]);
            bench_table_print(sc, o->out);
            bench_table_free(sc);
        }
        if (o->json) json_dump_file(out, o->json, JSON_INDENT(1));
    }
    json_decref(out);
    return rc;
}

/* ---- compare ---------------------------------------------------------------------------------- */

int bench_matrix_compare(const char *old_path, const char *new_path, FILE *out) {
    json_error_t je;
    json_t *a = json_load_file(old_path, 0, &je), *b = a ? json_load_file(new_path, 0, &je) : NULL;
    if (!a || !b) {
        fprintf(stderr, "dralloc bench compare: %s: %s (line %d)\n", a ? new_path : old_path, je.text, je.line);
        json_decref(a);
        return 2;
    }
    static const struct {
        const char *label, *key, *sub, *spread;
        bool higher_better;
    } figs[] = {
        {"pods/s", "podsPerSecond", NULL, "podsPerSecond", true},
        {"filter p50", "filterLatencyNs", "p50", "filterLatencyP50", false},
        {"filter p99", "filterLatencyNs", "p99", "filterLatencyP99", false},
        {"allocs/s", "allocationsPerSecond", NULL, "allocationsPerSecond", true},
        {"build ms", "snapshotBuildMs", NULL, "snapshotBuildMs", false},
        {"peak RSS", "peakRssBytes", NULL, NULL, false},
    };
    fprintf(out, "%-26s %-12s %14s %14s %8s  %s\n", "workload", "figure", "old", "new", "new/old", "");
    size_t i;
    json_t *wb;
    int flagged = 0;
    json_array_foreach(json_object_get(b, "workloads"), i, wb) {
        const char *name = json_string_value(json_object_get(wb, "name"));
        json_t *wa = NULL, *x;
        size_t j;
        json_array_foreach(json_object_get(a, "workloads"), j, x) if (!strcmp(json_string_value(json_object_get(x, "name")) ?: "", name)) wa = x;
        if (!wa) {
            fprintf(out, "%-26s (not in %s)\n", name, old_path);
            continue;
        }
        for (size_t f = 0; f < ARRAY_SIZE(figs); f++) {
            const json_t *va = json_object_get(wa, figs[f].key), *vb = json_object_get(wb, figs[f].key);
            if (figs[f].sub) va = json_object_get(va, figs[f].sub), vb = json_object_get(vb, figs[f].sub);
            double oa = json_number_value(va), nb = json_number_value(vb);
            double ratio = oa > 0 ? nb / oa : 0;
            double sa = figs[f].spread ? json_number_value(json_object_get(json_object_get(wa, "spread"), figs[f].spread)) : 0;
            double sb = figs[f].spread ? json_number_value(json_object_get(json_object_get(wb, "spread"), figs[f].spread)) : 0;
            double noise = sa > sb ? sa : sb, change = ratio > 1 ? ratio - 1 : 1 - ratio;
            const char *verdict = "";
            if (oa > 0 && change > 0.02) {
                bool better = figs[f].higher_better ? ratio > 1 : ratio < 1;
                verdict = noise > change ? "within noise (repetitions spread more than the change)"
                                         : better ? "better" : "WORSE";
                if (noise > change) flagged++;
            }
            fprintf(out, "%-26s %-12s %14.6g %14.6g %8.3f  %s\n", name, figs[f].label, oa, nb, ratio, verdict);
        }
    }
    if (flagged) fprintf(out, "%d figure(s) changed by less than their repetitions spread\n", flagged);
    json_decref(a);
    json_decref(b);
    return 0;
}
