/* live_bench.c — the live cache at scale (issue "live clusters", done-when): the fake
 * kube-apiserver holds NODES nodes × 8 GPUs and 4 allocated one-GPU claims per node;
 * measured:
 *   - ready: from starting the watch (a list of every kind) to ready, and RSS
 *     once ready and at its peak while listing (the watch decodes a list as it comes:
 *     its peak is what the store keeps plus a page, not the whole list's JSON);
 *   - reflected: after a claim that takes a node's GPUs from gpu-4 on is created (or
 *     deleted), how long until a 2-GPU pod's answer on that node changes — the
 *     event through the watch stream, the snapshot swap, the decision (p50, max
 *     over 20 changes each way).
 * Not run by CTest (it takes tens of seconds at 5,000 nodes):
 *   build-release/tests/live_bench [--gpus G | --mig] [--paged] [NODES ...]
 * (default 8 GPUs a node, streaming lists, 500 and 5,000 nodes; --paged: lists of
 * 500-item pages, as against a server without WatchList; --mig: run_mig below, 1,000
 * nodes by default) */
#include "extender/kube.h"
#include "extender/watch.h"
#include "tests/live/fakeapi.h"
#include "tests/live/objects.h"

#include "bench/matrix_objects.h"

#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* jemalloc's options as dralloc's (cmd/main.c); unused without jemalloc */
extern const char *malloc_conf;
const char *malloc_conf = "dirty_decay_ms:10000,muzzy_decay_ms:0";

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = 0;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n)) v = strtol(line + n, NULL, 10);
    if (f) fclose(f);
    return v;
}

static long rss_kib(void) { return status_kib("VmRSS:"); }

static void reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return;
    fputs("5", f);   /* "reset the peak resident set size" (proc(5)) */
    fclose(f);
}

/* The watch under test: a client of the fake kube-apiserver f, a store, the watch. */
typedef struct lb_session {
    fake_api *f;
    ext_kube *k;
    dra_store *st;
    ext_watch *w;
    long rss0;   /* KiB, before the watch started */
    double t0;   /* ms, when it started */
} lb_session;

static lb_session lb_open(fake_api *f) {
    lb_session r = {.f = f};
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", fake_port(f));
    err e;
    err_clear(&e);
    ext_kube_opts ko = {.server = url};
    r.k = ext_kube_new(&ko, &e);
    dra_features feat;
    dra_features_default(&feat);
    r.st = dra_store_new(&feat);
    return r;
}

/* Starts the watch (lists paged, or streaming); ms until it is ready. */
static double lb_ready(lb_session *r, bool paged) {
    r->rss0 = rss_kib();
    reset_peak_rss();
    r->t0 = now_ms();
    ext_watch_opts wo = {.quiet = true, .no_watch_list = paged};
    r->w = ext_watch_start(r->k, r->st, &wo);
    while (!ext_watch_ready(r->w)) usleep(2000);
    return now_ms() - r->t0;
}

static void lb_close(lb_session *r) {
    ext_watch_stop(r->w);
    dra_store_free(r->st);
    ext_kube_free(r->k);
    fake_stop(r->f);
}

static json_t *claim(int n, int first, int count, const char *name) {
    char pool[32];
    snprintf(pool, sizeof pool, "node-%05d", n);
    return live_allocated_claim("bench", name, pool, first, count);
}

static dra_fit_status decide(dra_store *st, const json_t *pod, dra_alloc_ctx *x, const char *node) {
    dra_snapshot *s = dra_store_acquire(st);
    err e;
    err_clear(&e);
    dra_pod_request *pr = s ? dra_pod_request_new(s, pod, &e) : NULL;
    dra_fit f = {.status = DRA_FIT_ERROR};
    if (pr) dra_pod_fit(pr, x, node, NULL, DRA_SCORE_NONE, 0, &f);
    dra_pod_request_free(pr);
    dra_snapshot_release(s);
    return f.status;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run(int nodes, int gpus, bool paged) {
    fake_api *f = fake_start();
    fake_put(f, "deviceclasses", json_pack("{s:{s:s}, s:{s:[{s:{s:s}}]}}", "metadata", "name", "gpu.example.com", "spec",
                                            "selectors", "cel", "expression", "device.driver == 'gpu.example.com'"));
    for (int n = 0; n < nodes; n++) {
        char node[32], sl[40];
        snprintf(node, sizeof node, "node-%05d", n);
        snprintf(sl, sizeof sl, "node-%05d-gpus", n);
        fake_put(f, "nodes", json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", node, "labels", "kubernetes.io/hostname", node));
        json_t *devs = json_array();
        for (int i = 0; i < gpus; i++)
            json_array_append_new(devs, json_pack("{s:o, s:{s:{s:s}, s:{s:i}}, s:{s:{s:s}}}", "name",
                                                  json_sprintf("gpu-%d", i), "attributes", "model", "string", "H100",
                                                  "index", "int", i, "capacity", "memory", "value", "80Gi"));
        fake_put(f, "resourceslices", json_pack("{s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "metadata", "name", sl,
                                                "spec", "driver", "gpu.example.com", "nodeName", node, "pool", "name", node,
                                                "generation", 1, "resourceSliceCount", 1, "devices", devs));
        for (int g = 0; g < 4; g++) {
            char name[48];
            snprintf(name, sizeof name, "c-%05d-%d", n, g);
            fake_put(f, "resourceclaims", claim(n, g, 1, name));
        }
    }
    lb_session r = lb_open(f);
    dra_store *st = r.st;
    err e;
    err_clear(&e);
    json_t *tmpl = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion",
                             "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name", "two", "namespace",
                             "bench", "spec", "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                             "gpu.example.com", "count", 2);
    dra_store_apply_json(st, tmpl, &e);
    json_decref(tmpl);
    double ready = lb_ready(&r, paged);
    /* the claims arrive with their kind; wait for the last one */
    for (;;) {
        dra_snapshot *s = dra_store_acquire(st);
        size_t c = dra_snapshot_count(s, "ResourceClaim");
        dra_snapshot_release(s);
        if (c >= (size_t)nodes * 4) break;
        usleep(2000);
    }
    double all = now_ms() - r.t0;
    long rss1 = rss_kib(), peak = status_kib("VmHWM:");
    json_t *pod = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", "p", "namespace", "bench", "spec",
                            "resourceClaims", "name", "g", "resourceClaimTemplateName", "two");
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    enum { CHANGES = 20 };
    double add[CHANGES], del[CHANGES];
    for (int i = 0; i < CHANGES; i++) {
        int n = (i * 7919) % nodes;
        char node[32], name[48];
        snprintf(node, sizeof node, "node-%05d", n);
        snprintf(name, sizeof name, "hog-%d", i);
        double a = now_ms();
        fake_put(f, "resourceclaims", claim(n, 4, gpus - 4, name));
        while (decide(st, pod, x, node) == DRA_FIT_OK) usleep(100);
        add[i] = now_ms() - a;
        a = now_ms();
        fake_delete(f, "resourceclaims", "bench", name);
        while (decide(st, pod, x, node) != DRA_FIT_OK) usleep(100);
        del[i] = now_ms() - a;
    }
    qsort(add, CHANGES, sizeof *add, cmp_d);
    qsort(del, CHANGES, sizeof *del, cmp_d);
    printf("%5d nodes x %d GPUs, %d claims, %s lists: ready in %.0f ms (every claim in %.0f ms), RSS +%.0f MiB, peak +%.0f MiB; "
           "a claim change reflected in a decision: created p50 %.1f ms max %.1f ms, deleted p50 %.1f ms max %.1f ms\n",
           nodes, gpus, nodes * 4, paged ? "paged" : "streaming", ready, all, (double)(rss1 - r.rss0) / 1024, (double)(peak - r.rss0) / 1024,
           add[CHANGES / 2], add[CHANGES - 1],
           del[CHANGES / 2], del[CHANGES - 1]);
    fflush(stdout);
    dra_alloc_ctx_free(x);
    json_decref(pod);
    lb_close(&r);
}

/* --mig: the fake kube-apiserver holds NODES nodes of 8 MIG-carved A100s as `dralloc
 * bench mig_5000nodes` builds them (4 slices a node: the counters, 3 of 57 devices, ~30 KB
 * of JSON each); measured: ready (every slice listed and decoded), RSS once ready and
 * at its peak while listing. */
static void run_mig(int nodes, bool paged) {
    fake_api *f = fake_start();
    for (int n = 0; n < nodes; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05d", n);
        fake_put(f, "nodes", json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", node, "labels", "kubernetes.io/hostname", node));
        json_t *sl = bench_mx_mig_node_slices(node, n, 8), *it;
        size_t i;
        json_array_foreach(sl, i, it) fake_put(f, "resourceslices", json_incref(it));
        json_decref(sl);
    }
    lb_session r = lb_open(f);
    dra_store *st = r.st;
    double ready = lb_ready(&r, paged);
    long rss1 = rss_kib(), peak = status_kib("VmHWM:");
    dra_snapshot *s = dra_store_acquire(st);
    size_t got = dra_snapshot_count(s, "ResourceSlice");
    dra_snapshot_release(s);
    printf("%5d nodes x 8 MIG-carved A100s (%zu slices), %s lists: ready in %.0f ms, RSS +%.0f MiB, peak +%.0f MiB%s\n",
           nodes, got, paged ? "paged" : "streaming", ready, (double)(rss1 - r.rss0) / 1024,
           (double)(peak - r.rss0) / 1024, got == (size_t)nodes * 4 ? "" : " (MISSING SLICES)");
    fflush(stdout);
    lb_close(&r);
}

int main(int argc, char **argv) {
    int gpus = 8, first = 1;
    bool paged = false, mig = false;
    for (;;) {
        if (argc > first + 1 && !strcmp(argv[first], "--gpus")) gpus = atoi(argv[first + 1]), first += 2;
        else if (argc > first && !strcmp(argv[first], "--paged")) paged = true, first++;
        else if (argc > first && !strcmp(argv[first], "--mig")) mig = true, first++;
        else break;
    }
    if (mig) {
        for (int i = first; i < argc; i++) run_mig(atoi(argv[i]), paged);
        if (argc <= first) run_mig(1000, paged);
        return 0;
    }
    if (gpus < 8 || gpus > 128) {
        fprintf(stderr, "live_bench: --gpus takes 8..128 (claims hold GPUs 0-7; a slice holds at most 128 devices)\n");
        return 2;
    }
    if (argc <= first) {
        run(500, gpus, paged);
        run(5000, gpus, paged);
    }
    for (int i = first; i < argc; i++) run(atoi(argv[i]), gpus, paged);
    return 0;
}
