/* alloc_objects.c — builds the `alloc` workload's Kubernetes objects with
 * json_pack, field for field as scheduler_perf writes them (see alloc_objects.h). */
#include "bench/alloc_objects.h"

#include <stdio.h>

static json_t *meta(const char *name, const char *ns) {
    json_t *m = json_pack("{s:s}", "name", name);
    if (ns) json_object_set_new(m, "namespace", json_string(ns));
    return m;
}

json_t *bench_alloc_class(const char *name, const char *cel) {
    return json_pack("{s:s, s:s, s:o, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass",
                     "metadata", meta(name, NULL), "spec", "selectors", "cel", "expression", cel);
}

json_t *bench_alloc_node(const char *name, const char *label_key, const char *label_value) {
    json_t *m = meta(name, NULL);
    if (label_key) json_object_set_new(m, "labels", json_pack("{s:s}", label_key, label_value));
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "Node", "metadata", m);
}

json_t *bench_alloc_node_slice(const char *node, size_t n, const int64_t *numa) {
    json_t *devs = json_array();
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "instance-%zu", i);
        json_int_t k = numa ? (json_int_t)numa[i] : (json_int_t)i;
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:I}}, s:{s:{s:s}}}", "name", name,
                                              "attributes", "model", "string", "A100", "family", "string", "GPU",
                                              "driverVersion", "version", "1.2.3", "dra.example.com/numa", "int", k,
                                              "capacity", "memory", "value", "1Gi"));
    }
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceSlice", "metadata", meta(node, NULL), "spec", "driver", BENCH_ALLOC_DRIVER, "nodeName",
                     node, "pool", "name", node, "resourceSliceCount", 1, "generation", 0, "devices", devs);
}

json_t *bench_alloc_claim(const char *name, const bench_alloc_req *reqs, size_t nreqs, const char *match_attr) {
    json_t *rs = json_array(), *names = json_array();
    for (size_t i = 0; i < nreqs; i++) {
        json_t *ex = json_pack("{s:s, s:s, s:I}", "deviceClassName", BENCH_ALLOC_CLASS, "allocationMode", "ExactCount",
                               "count", (json_int_t)reqs[i].count);
        if (reqs[i].selector)
            json_object_set_new(ex, "selectors", json_pack("[{s:{s:s}}]", "cel", "expression", reqs[i].selector));
        json_array_append_new(rs, json_pack("{s:s, s:o}", "name", reqs[i].name, "exactly", ex));
        json_array_append_new(names, json_string(reqs[i].name));
    }
    json_t *devices = json_pack("{s:o}", "requests", rs);
    if (match_attr)
        json_object_set_new(devices, "constraints", json_pack("[{s:o, s:s}]", "requests", names, "matchAttribute", match_attr));
    else
        json_decref(names);
    return json_pack("{s:s, s:s, s:o, s:{s:o}}", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata",
                     meta(name, BENCH_ALLOC_NS), "spec", "devices", devices);
}

json_t *bench_alloc_allocated_claim(const char *name, const char *node, const char *device) {
    json_t *spec = json_pack("{s:{s:[{s:s, s:{s:s, s:s, s:i}}]}}", "devices", "requests", "name", "req-0", "exactly",
                             "deviceClassName", BENCH_ALLOC_CLASS, "allocationMode", "ExactCount", "count", 1);
    json_t *alloc = json_pack("{s:{s:[{s:s, s:s, s:s, s:s}]}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}", "devices", "results",
                              "request", "req-0", "driver", BENCH_ALLOC_DRIVER, "pool", node, "device", device,
                              "nodeSelector", "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In",
                              "values", node);
    return json_pack("{s:s, s:s, s:o, s:o, s:{s:o}}", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim",
                     "metadata", meta(name, BENCH_ALLOC_NS), "spec", spec, "status", "allocation", alloc);
}

/* One slice of the backtracking pool (resourceSliceCount 2), visible from nodes
 * labelled node-with-dra=true; `what` is "sharedCounters" or "devices". */
static json_t *backtracking_part(const char *name, const char *what, json_t *v) {
    json_t *sel = json_pack("{s:[{s:[{s:s, s:s, s:[s]}]}]}", "nodeSelectorTerms", "matchExpressions", "key",
                            "node-with-dra", "operator", "In", "values", "true");
    return json_pack("{s:s, s:s, s:o, s:{s:{s:s, s:i, s:i}, s:s, s:o, s:o}}", "kind", "ResourceSlice", "apiVersion",
                     "resource.k8s.io/v1", "metadata", meta(name, NULL), "spec", "pool", "name", "resourceslice-0",
                     "generation", 1, "resourceSliceCount", 2, "driver", BENCH_ALLOC_DRIVER, "nodeSelector", sel, what, v);
}

json_t *bench_alloc_backtracking_slices(void) {
    json_t *cpu = json_object();
    for (int i = 1; i <= 8; i++) {
        char k[8];
        snprintf(k, sizeof k, "cpu%d", i);
        json_object_set_new(cpu, k, json_pack("{s:s}", "value", "1"));
    }
    json_t *devs = json_array();
    for (int i = 1; i <= 8; i++) {
        char name[16], k[8];
        snprintf(name, sizeof name, "device-%d", i);
        snprintf(k, sizeof k, "cpu%d", i);
        json_array_append_new(devs, json_pack("{s:s, s:[{s:s, s:{s:{s:s}}}, {s:s, s:{s:{s:s}}}]}", "name", name,
                                              "consumesCounters", "counterSet", "counter-set-for-cpu", "counters", k,
                                              "value", "1", "counterSet", "counter-set-for-mem", "counters", "mem",
                                              "value", i == 1 ? "20Gi" : "10Gi"));
    }
    json_t *shared = json_pack("[{s:s, s:o}, {s:s, s:{s:{s:s}}}]", "name", "counter-set-for-cpu", "counters", cpu, "name",
                               "counter-set-for-mem", "counters", "mem", "value", "70Gi");
    return json_pack("[o, o]", backtracking_part("resourceslice-countersets-0", "sharedCounters", shared),
                     backtracking_part("resourceslice-devices-0", "devices", devs));
}

json_t *bench_alloc_backtracking_template(void) {
    return json_pack("{s:s, s:s, s:o, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceClaimTemplate", "metadata", meta("test-claim-template", NULL), "spec", "spec", "devices",
                     "requests", "name", "req-0", "exactly", "deviceClassName", BENCH_ALLOC_CLASS, "count", 7);
}
