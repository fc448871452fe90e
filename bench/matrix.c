/* matrix.c — the scheduler_perf DRA matrix (`dralloc bench --list`, `dralloc bench
 * WORKLOAD... [-o json]`, `dralloc bench compare OLD.json NEW.json`).
 *
 * Each named workload reproduces one of scheduler_perf's DRA shapes
 * (../shared/reference/perf-anchors.md): createResourceDriver's one slice per node
 * with devices instance-0..N-1 (model, family, driverVersion, numa, 1Gi memory),
 * DeviceClass test-class, pods with one claim from a template. The whole scheduling
 * cycle runs as kube-scheduler runs it, on the engine's planning overlay: for each
 * pod, filter every node (the DynamicResources decision), score (binpack), pick the
 * best (ties by node order), commit the allocation. "fill" workloads keep every pod
 * (initPods pre-allocated, then the measured pods fill the cluster); "steady" ones
 * (SteadyStateClusterResourceClaimTemplate) keep the cluster at its pre-filled state:
 * each measured pod is decided and not kept.
 * Figures, the median over --reps repetitions (default 3) after one warm-up:
 *   podsPerSecond        measured pods / time of their whole cycles
 *   filterLatencyNs      per pod: time to filter every node (p50, p90, p99, max)
 *   allocationsPerSecond allocator decisions (node fits) / time spent in them
 *   snapshotBuildMs      objects to a published snapshot
 *   peakRssBytes         the process's peak RSS after the workload
 * with, per figure, the spread of the repetitions ((max − min) / median), which
 * `compare` weighs a change against. --threads N filters the nodes of one pod on N
 * threads. The overlay's fit memo (an answer reused while nothing that could change
 * it was committed) is on, as `plan` runs; --no-memo decides every node every time,
 * which is what the allocator costs. */
#include "bench/bench.h"
#include "bench/alloc_objects.h"

#include "engine/engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef enum { FILL, STEADY } mx_mode;

typedef struct mx_workload {
    const char *name;
    int nodes, devices;          /* per node */
    int init_claims;             /* pre-allocated one-device claims, spread over the nodes */
    int pods;                    /* measured pods */
    mx_mode mode;
    int requests;                /* one-device requests per claim (2 with matchAttribute) */
    bool selector, match;
    const char *source;
    bool taints;                 /* every device tainted NoSchedule, the request tolerates it */
    bool backtracking;           /* the PartitionableBacktracking pool instead of per-node slices */
} mx_workload;

static const char SELECTOR[] = "device.attributes[\"test-driver.cdi.k8s.io\"].driverVersion.major() >= 1 && "
                               "device.capacity[\"test-driver.cdi.k8s.io\"].memory.isGreaterThan(quantity(\"1Mi\"))";

static const mx_workload MX[] = {
    {"5000pods_500nodes", 500, 10, 2500, 2500, FILL, 1, false, false,
     "SchedulingWithResourceClaimTemplate/5000pods_500nodes: 2500 init + 2500 measured pods", false, false},
    {"2000pods_100nodes", 100, 20, 1000, 1000, FILL, 1, false, false,
     "SchedulingWithResourceClaimTemplate/2000pods_100nodes", false, false},
    {"2000pods_200nodes", 200, 10, 1000, 1000, FILL, 1, false, false,
     "SchedulingWithResourceClaimTemplate/2000pods_200nodes", false, false},
    {"steady_empty_500nodes", 500, 10, 0, 1000, STEADY, 1, false, false,
     "SteadyStateClusterResourceClaimTemplate/empty_500nodes", false, false},
    {"steady_half_500nodes", 500, 10, 2500, 1000, STEADY, 1, false, false,
     "SteadyStateClusterResourceClaimTemplate/half_500nodes", false, false},
    {"steady_full_500nodes", 500, 10, 4990, 1000, STEADY, 1, false, false,
     "SteadyStateClusterResourceClaimTemplate/full_500nodes: 10 free devices", false, false},
    {"selector_empty_500nodes", 500, 10, 0, 1000, STEADY, 1, true, false,
     "SteadyState.../selector_empty_500nodes (PR kubernetes#140254): CEL selector on driverVersion and memory", false, false},
    {"match_empty_500nodes", 500, 10, 0, 1000, STEADY, 2, false, true,
     "SteadyState.../match_empty_500nodes (PR kubernetes#140254): two requests, matchAttribute numa", false, false},
    {"taints_empty_500nodes", 500, 10, 0, 1000, STEADY, 1, false, false,
     "steady_empty_500nodes with every device tainted (NoSchedule) and the request tolerating it "
     "(scheduler_perf's devicetaintrule/toleration templates)", true, false},
    {"backtracking_1node", 1, 8, 0, 200, STEADY, 1, false, false,
     "PartitionableBacktracking: 8 devices on a 70Gi counter (device-1 20Gi), count 7 -> device-2..device-8", false, true},
    {"gpu_5000nodes", 5000, 8, 0, 36000, FILL, 1, false, false,
     "dralloc's own scale point: 5,000 nodes x 8 GPUs filled to 90 % (36,000 one-GPU pods)", false, false},
};
enum { NMX = sizeof MX / sizeof MX[0] };

size_t bench_matrix_count(void) { return NMX; }
const char *bench_matrix_name(size_t i) { return MX[i].name; }

int bench_matrix_find(const char *name) {
    for (int i = 0; i < NMX; i++)
        if (!strcmp(MX[i].name, name)) return i;
    return -1;
}

void bench_matrix_list(FILE *f) {
    for (int i = 0; i < NMX; i++) {
        const mx_workload *w = &MX[i];
        fprintf(f, "  %-24s %d nodes x %d devices, %d pre-allocated claims, %d %s pods, %d request(s)%s%s\n", w->name,
                w->nodes, w->devices, w->init_claims, w->pods, w->mode == FILL ? "kept" : "steady-state", w->requests,
                w->selector ? ", CEL selector" : "", w->match ? ", matchAttribute" : "");
        fprintf(f, "  %-24s from %s\n", "", w->source);
    }
}

/* ---- the cluster ---------------------------------------------------------------------------- */

static json_t *cluster(const mx_workload *w) {
    json_t *a = json_array();
    json_array_append_new(a, bench_alloc_class(BENCH_ALLOC_CLASS, "device.driver == \"" BENCH_ALLOC_DRIVER "\""));
    if (w->backtracking) {
        /* one node the pool's nodeSelector picks; the pods' template asks for 7 */
        json_array_append_new(a, bench_alloc_node("node-00000", "node-with-dra", "true"));
        json_t *sl = bench_alloc_backtracking_slices();
        json_array_extend(a, sl);
        json_decref(sl);
        json_t *t = bench_alloc_backtracking_template();
        json_object_set_new(json_object_get(t, "metadata"), "name", json_string("tmpl"));
        json_object_set_new(json_object_get(t, "metadata"), "namespace", json_string(BENCH_ALLOC_NS));
        json_array_append_new(a, t);
        return a;
    }
    int64_t *numa = xcalloc((size_t)w->devices, sizeof *numa);
    for (int i = 0; i < w->devices; i++) numa[i] = w->match ? i % 2 : i;
    for (int n = 0; n < w->nodes; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05d", n);
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
    for (int c = 0; c < w->init_claims; c++) {
        char name[32], node[32], dev[32];
        snprintf(name, sizeof name, "init-%d", c);
        snprintf(node, sizeof node, "node-%05d", c % w->nodes);
        snprintf(dev, sizeof dev, "instance-%d", c / w->nodes);
        json_array_append_new(a, bench_alloc_allocated_claim(name, node, dev));
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
    json_t *tmpl = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:O}}", "apiVersion", "resource.k8s.io/v1", "kind",
                             "ResourceClaimTemplate", "metadata", "name", "tmpl", "namespace", BENCH_ALLOC_NS, "spec", "spec",
                             json_object_get(claim, "spec"));
    json_decref(claim);
    json_array_append_new(a, tmpl);
    return a;
}

/* ---- one run ---------------------------------------------------------------------------------- */

typedef struct mx_fit_job {
    const dra_pod_request *pr;
    dra_overlay *ov;
    dra_alloc_ctx *x;
    int first, step, nodes;
    dra_fit *fits;
} mx_fit_job;

static void *fit_range(void *arg) {
    mx_fit_job *j = arg;
    for (int n = j->first; n < j->nodes; n += j->step) {
        char node[32];
        snprintf(node, sizeof node, "node-%05d", n);
        dra_pod_fit_overlay(j->pr, j->ov, j->x, node, DRA_SCORE_BINPACK, 0, false, &j->fits[n]);
    }
    return NULL;
}

typedef struct mx_result {
    double pods_per_s, allocs_per_s, build_ms;
    double p50, p90, p99, max;
    size_t placed;
} mx_result;

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bool run_once(const mx_workload *w, unsigned threads, bool memo, mx_result *r) {
    dra_features f;
    dra_features_default(&f);
    json_t *objs = cluster(w);
    uint64_t t0 = bench_now_ns();
    dra_store *st = dra_store_new(&f);
    err e;
    err_clear(&e);
    if (!dra_store_apply_json(st, objs, &e)) {
        char buf[2048];
        fprintf(stderr, "bench %s: %s\n", w->name, err_format(&e, buf, sizeof buf));
        json_decref(objs);
        dra_store_free(st);
        return false;
    }
    r->build_ms = (double)(bench_now_ns() - t0) / 1e6;
    json_decref(objs);
    dra_snapshot *s = dra_store_acquire(st);
    dra_overlay *ov = dra_overlay_new(s);
    dra_overlay_memo(ov, memo);
    if (threads < 1) threads = 1;
    dra_alloc_ctx **ctx = xcalloc(threads, sizeof *ctx);
    for (unsigned t = 0; t < threads; t++) ctx[t] = dra_alloc_ctx_new();
    dra_fit *fits = xcalloc((size_t)w->nodes, sizeof *fits);
    double *lat = xcalloc((size_t)w->pods, sizeof *lat);
    uint64_t fit_ns = 0, cycles = 0;
    size_t decisions = 0, placed = 0;
    for (int p = 0; p < w->pods; p++) {
        char name[32];
        snprintf(name, sizeof name, "pod-%d", p);
        json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s}], s:[{s:s, s:s}]}}", "metadata", "name", name, "namespace",
                                BENCH_ALLOC_NS, "spec", "containers", "name", "c", "resourceClaims", "name", "claim",
                                "resourceClaimTemplateName", "tmpl");
        uint64_t c0 = bench_now_ns();
        dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
        json_decref(pod);
        if (!pr) continue;
        uint64_t f0 = bench_now_ns();
        if (threads == 1) {
            mx_fit_job j = {pr, ov, ctx[0], 0, 1, w->nodes, fits};
            fit_range(&j);
        } else {
            pthread_t th[64];
            mx_fit_job jobs[64];
            unsigned nt = threads > 64 ? 64 : threads;
            for (unsigned t = 0; t < nt; t++) {
                jobs[t] = (mx_fit_job){pr, ov, ctx[t], (int)t, (int)nt, w->nodes, fits};
                pthread_create(&th[t], NULL, fit_range, &jobs[t]);
            }
            for (unsigned t = 0; t < nt; t++) pthread_join(th[t], NULL);
        }
        uint64_t f1 = bench_now_ns();
        fit_ns += f1 - f0;
        decisions += (size_t)w->nodes;
        lat[p] = (double)(f1 - f0);
        /* score and pick: the highest binpack score, ties by node order */
        int best = -1;
        for (int n = 0; n < w->nodes; n++)
            if (fits[n].status == DRA_FIT_OK && (best < 0 || fits[n].score > fits[best].score)) best = n;
        if (best >= 0 && w->mode == FILL) {
            char node[32];
            snprintf(node, sizeof node, "node-%05d", best);
            dra_fit commit;
            dra_pod_fit_overlay(pr, ov, ctx[0], node, DRA_SCORE_BINPACK, 0, true, &commit);
        }
        placed += best >= 0;
        dra_pod_request_free(pr);
        cycles += bench_now_ns() - c0;
    }
    qsort(lat, (size_t)w->pods, sizeof *lat, cmp_d);
    r->p50 = bench_quantile(lat, (size_t)w->pods, 0.5);
    r->p90 = bench_quantile(lat, (size_t)w->pods, 0.9);
    r->p99 = bench_quantile(lat, (size_t)w->pods, 0.99);
    r->max = w->pods ? lat[w->pods - 1] : 0;
    r->pods_per_s = cycles ? (double)w->pods / ((double)cycles / 1e9) : 0;
    r->allocs_per_s = fit_ns ? (double)decisions / ((double)fit_ns / 1e9) : 0;
    r->placed = placed;
    free(lat);
    free(fits);
    for (unsigned t = 0; t < threads; t++) dra_alloc_ctx_free(ctx[t]);
    free(ctx);
    dra_overlay_free(ov);
    dra_snapshot_release(s);
    dra_store_free(st);
    return true;
}


/* The median of the repetitions and their spread ((max − min) / median). */
static double med(double *v, size_t n, double *spread) {
    qsort(v, n, sizeof *v, cmp_d);
    double m = bench_quantile(v, n, 0.5);
    *spread = m > 0 ? (v[n - 1] - v[0]) / m : 0;
    return m;
}

static json_t *machine(unsigned threads) {
    struct utsname u;
    uname(&u);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    return json_pack("{s:s, s:s, s:s, s:I, s:i}", "host", host, "kernel", u.release, "arch", u.machine, "cpus",
                     (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "threads", (int)threads);
}

int bench_matrix_run(const int *which, size_t n, const bench_opts *o, unsigned threads, bool as_json, bool memo) {
    size_t reps = o->reps ? o->reps : 3;
    json_t *out = json_pack("{s:o, s:b, s:[]}", "machine", machine(threads), "fitMemo", memo, "workloads");
    bench_table *tb = NULL;
    static const char *const cols[] = {"workload", "pods/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "allocs/s", "build ms",
                                       "placed", "spread"};
    if (!as_json) tb = bench_table_new(cols, ARRAY_SIZE(cols));
    int rc = 0;
    for (size_t k = 0; k < n; k++) {
        const mx_workload *w = &MX[which[k]];
        mx_result warm;
        if (!run_once(w, threads, memo, &warm)) {
            rc = 1;
            continue;
        }
        double pods[16], allocs[16], build[16], p50[16], p90[16], p99[16], mx[16];
        size_t R = reps > 16 ? 16 : reps, placed = 0;
        for (size_t i = 0; i < R; i++) {
            mx_result r;
            if (!run_once(w, threads, memo, &r)) {
                rc = 1;
                break;
            }
            pods[i] = r.pods_per_s, allocs[i] = r.allocs_per_s, build[i] = r.build_ms;
            p50[i] = r.p50, p90[i] = r.p90, p99[i] = r.p99, mx[i] = r.max;
            placed = r.placed;
        }
        double s_pods, s_alloc, s_build, s50, s90, s99, smax;
        double m_pods = med(pods, R, &s_pods), m_alloc = med(allocs, R, &s_alloc), m_build = med(build, R, &s_build);
        double m50 = med(p50, R, &s50), m90 = med(p90, R, &s90), m99 = med(p99, R, &s99), mmax = med(mx, R, &smax);
        json_array_append_new(
            json_object_get(out, "workloads"),
            json_pack("{s:s, s:f, s:{s:I, s:I, s:I, s:I}, s:f, s:f, s:I, s:I, s:I, s:{s:f, s:f, s:f, s:f, s:f}, s:s}",
                      "name", w->name, "podsPerSecond", m_pods, "filterLatencyNs", "p50", (json_int_t)m50, "p90",
                      (json_int_t)m90, "p99", (json_int_t)m99, "max", (json_int_t)mmax, "allocationsPerSecond", m_alloc,
                      "snapshotBuildMs", m_build, "peakRssBytes", (json_int_t)bench_status_kib("VmHWM:") * 1024, "placed",
                      (json_int_t)placed, "repetitions", (json_int_t)R, "spread", "podsPerSecond", s_pods,
                      "allocationsPerSecond", s_alloc, "snapshotBuildMs", s_build, "filterLatencyP50", s50,
                      "filterLatencyP99", s99, "source", w->source));
        if (tb) {
            bench_table_addf(tb, "%s", w->name);
            bench_table_addf(tb, "%.0f", m_pods);
            bench_table_addf(tb, "%.3f", m50 / 1e6);
            bench_table_addf(tb, "%.3f", m90 / 1e6);
            bench_table_addf(tb, "%.3f", m99 / 1e6);
            bench_table_addf(tb, "%.3f", mmax / 1e6);
            bench_table_addf(tb, "%.2fM", m_alloc / 1e6);
            bench_table_addf(tb, "%.0f", m_build);
            bench_table_addf(tb, "%zu/%d", placed, w->pods);
            bench_table_addf(tb, "%.0f%%", s_pods * 100);
        }
    }
    if (as_json) {
        char *s = json_dumps(out, JSON_INDENT(1));
        fprintf(o->out, "%s\n", s);
        free(s);
    } else {
        fprintf(o->out, "scheduling cycles (filter every node, binpack score, commit), median of %zu after a warm-up; "
                        "threads %u; fit memo %s; spread = (max - min) / median of pods/s\n",
                reps, threads, memo ? "on (--no-memo: every node decided)" : "off");
        bench_table_print(tb, o->out);
        bench_table_free(tb);
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
