/* metrics.c — counters and histograms behind GET /metrics (metrics.h), written in the
 * Prometheus text exposition format. Histogram buckets are stored per bucket (one
 * atomic increment per observation) and made cumulative when rendered. */
#include "extender/metrics.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/strbuf.h"

static const char *const verb_names[EXT_VERB_COUNT] = {"filter", "prioritize", "bind",  "objects", "healthz",
                                                       "readyz", "metrics",    "debug", "other"};
static const int codes[] = {200, 400, 404, 405, 408, 413, 503};
#define NCODES (ARRAY_SIZE(codes) + 1)   /* + every other code */
/* seconds; a filter over hundreds of nodes lands in the middle, kube-scheduler's
 * default extender timeout (5 s) near the top */
static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                 0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,     10};
#define NBUCKETS (ARRAY_SIZE(buckets) + 1)   /* + Inf */
static const char *const fit_names[5] = {"fit", "unschedulable", "unresolvable", "timeout", "error"};

struct ext_metrics {
    _Atomic uint64_t requests[EXT_VERB_COUNT][NCODES];
    _Atomic uint64_t latency[EXT_VERB_COUNT][NBUCKETS];
    _Atomic uint64_t latency_ns[EXT_VERB_COUNT];
    _Atomic uint64_t fits[5];
    _Atomic uint64_t nodes, steps, pods_no_dra, pods_error, pods_evaluated;
};

ext_metrics *ext_metrics_new(void) { return xcalloc(1, sizeof(ext_metrics)); }
void ext_metrics_free(ext_metrics *m) { free(m); }

void ext_metrics_request(ext_metrics *m, ext_verb v, int status, uint64_t ns) {
    size_t c = NCODES - 1;
    for (size_t i = 0; i < ARRAY_SIZE(codes); i++)
        if (codes[i] == status) c = i;
    atomic_fetch_add_explicit(&m->requests[v][c], 1, memory_order_relaxed);
    double s = (double)ns / 1e9;
    size_t b = 0;
    while (b < ARRAY_SIZE(buckets) && s > buckets[b]) b++;
    atomic_fetch_add_explicit(&m->latency[v][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency_ns[v], ns, memory_order_relaxed);
}

void ext_metrics_fits(ext_metrics *m, const uint64_t per_status[5], uint64_t nodes, uint64_t steps) {
    for (int i = 0; i < 5; i++)
        if (per_status[i]) atomic_fetch_add_explicit(&m->fits[i], per_status[i], memory_order_relaxed);
    atomic_fetch_add_explicit(&m->nodes, nodes, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->steps, steps, memory_order_relaxed);
}

void ext_metrics_pod(ext_metrics *m, bool needs_dra, bool pod_error) {
    _Atomic uint64_t *c = pod_error ? &m->pods_error : needs_dra ? &m->pods_evaluated : &m->pods_no_dra;
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static uint64_t ld(_Atomic uint64_t *a) { return atomic_load_explicit(a, memory_order_relaxed); }

static void header(strbuf *b, const char *name, const char *type, const char *help) {
    sbuf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static uint64_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (!f) return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2) resident = 0;
    fclose(f);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

char *ext_metrics_render(ext_metrics *m, dra_snapshot *s) {
    strbuf b;
    sbuf_init(&b);
    header(&b, "dralloc_http_requests_total", "counter", "HTTP requests answered, by verb and status code.");
    for (int v = 0; v < EXT_VERB_COUNT; v++)
        for (size_t c = 0; c < NCODES; c++) {
            uint64_t n = ld(&m->requests[v][c]);
            if (!n) continue;
            if (c < ARRAY_SIZE(codes))
                sbuf_addf(&b, "dralloc_http_requests_total{verb=\"%s\",code=\"%d\"} %llu\n", verb_names[v],
                          codes[c], (unsigned long long)n);
            else
                sbuf_addf(&b, "dralloc_http_requests_total{verb=\"%s\",code=\"other\"} %llu\n", verb_names[v],
                          (unsigned long long)n);
        }
    header(&b, "dralloc_http_request_duration_seconds", "histogram", "Time from request received to answer ready.");
    for (int v = 0; v < EXT_VERB_COUNT; v++) {
        uint64_t cum = 0;
        for (size_t k = 0; k < NBUCKETS; k++) {
            cum += ld(&m->latency[v][k]);
            if (k < ARRAY_SIZE(buckets))
                sbuf_addf(&b, "dralloc_http_request_duration_seconds_bucket{verb=\"%s\",le=\"%g\"} %llu\n",
                          verb_names[v], buckets[k], (unsigned long long)cum);
            else
                sbuf_addf(&b, "dralloc_http_request_duration_seconds_bucket{verb=\"%s\",le=\"+Inf\"} %llu\n",
                          verb_names[v], (unsigned long long)cum);
        }
        sbuf_addf(&b, "dralloc_http_request_duration_seconds_sum{verb=\"%s\"} %.9f\n", verb_names[v],
                  (double)ld(&m->latency_ns[v]) / 1e9);
        sbuf_addf(&b, "dralloc_http_request_duration_seconds_count{verb=\"%s\"} %llu\n", verb_names[v],
                  (unsigned long long)cum);
    }
    header(&b, "dralloc_filter_nodes_total", "counter",
           "Nodes decided by filter and prioritize, by outcome (fit, unschedulable, unresolvable, timeout, error).");
    for (int i = 0; i < 5; i++)
        sbuf_addf(&b, "dralloc_filter_nodes_total{outcome=\"%s\"} %llu\n", fit_names[i],
                  (unsigned long long)ld(&m->fits[i]));
    header(&b, "dralloc_nodes_evaluated_total", "counter", "Nodes the allocator was run for.");
    sbuf_addf(&b, "dralloc_nodes_evaluated_total %llu\n", (unsigned long long)ld(&m->nodes));
    header(&b, "dralloc_allocator_steps_total", "counter", "Allocator search steps spent (sum of dra_fit.steps).");
    sbuf_addf(&b, "dralloc_allocator_steps_total %llu\n", (unsigned long long)ld(&m->steps));
    header(&b, "dralloc_filter_pods_total", "counter",
           "Pods seen by filter and prioritize: no_dra (no claims, all nodes pass), evaluated, error (refused as a whole).");
    sbuf_addf(&b, "dralloc_filter_pods_total{result=\"no_dra\"} %llu\n", (unsigned long long)ld(&m->pods_no_dra));
    sbuf_addf(&b, "dralloc_filter_pods_total{result=\"evaluated\"} %llu\n",
              (unsigned long long)ld(&m->pods_evaluated));
    sbuf_addf(&b, "dralloc_filter_pods_total{result=\"error\"} %llu\n", (unsigned long long)ld(&m->pods_error));
    header(&b, "dralloc_snapshot_loaded", "gauge", "1 once a snapshot is loaded (readyz).");
    sbuf_addf(&b, "dralloc_snapshot_loaded %d\n", s ? 1 : 0);
    if (s) {
        header(&b, "dralloc_snapshot_generation", "gauge", "Generation of the current snapshot.");
        sbuf_addf(&b, "dralloc_snapshot_generation %llu\n", (unsigned long long)dra_snapshot_generation(s));
        header(&b, "dralloc_snapshot_build_seconds", "gauge", "How long building the current snapshot took.");
        sbuf_addf(&b, "dralloc_snapshot_build_seconds %.9f\n", (double)dra_snapshot_build_ns(s) / 1e9);
        header(&b, "dralloc_snapshot_built_timestamp_seconds", "gauge", "Unix time the current snapshot was published.");
        sbuf_addf(&b, "dralloc_snapshot_built_timestamp_seconds %.3f\n",
                  (double)dra_snapshot_built_unix_ns(s) / 1e9);
        header(&b, "dralloc_snapshot_objects", "gauge", "Objects in the current snapshot, by kind.");
        json_t *counts = dra_snapshot_counts_json(s);
        const char *k;
        json_t *v;
        json_object_foreach(counts, k, v)
            sbuf_addf(&b, "dralloc_snapshot_objects{kind=\"%s\"} %lld\n", k, (long long)json_integer_value(v));
        json_decref(counts);
        dra_catalog_sizes cs;
        dra_snapshot_catalog_sizes(s, &cs);
        header(&b, "dralloc_catalog_names", "gauge", "Names interned for the objects alive (they go with them).");
        sbuf_addf(&b, "dralloc_catalog_names %zu\n", cs.names);
        header(&b, "dralloc_catalog_programs", "gauge", "CEL programs compiled for the objects alive.");
        sbuf_addf(&b, "dralloc_catalog_programs %zu\n", cs.programs);
        header(&b, "dralloc_catalog_bytes", "gauge", "Bytes the catalog holds, by part.");
        sbuf_addf(&b, "dralloc_catalog_bytes{part=\"names\"} %zu\n", cs.name_bytes);
        sbuf_addf(&b, "dralloc_catalog_bytes{part=\"programs\"} %zu\n", cs.program_bytes);
    }
    header(&b, "process_resident_memory_bytes", "gauge", "Resident set size (/proc/self/statm).");
    sbuf_addf(&b, "process_resident_memory_bytes %llu\n", (unsigned long long)rss_bytes());
    return sbuf_take(&b);
}
