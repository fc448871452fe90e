/* matrix_objects.c — builds the matrix workloads' partitionable, firstAvailable,
 * consumable-capacity and MIG objects with json_pack (see matrix_objects.h). */
#include "bench/matrix_objects.h"

#include <stdio.h>

static json_t *meta(const char *name, const char *ns) {
    json_t *m = json_pack("{s:s}", "name", name);
    if (ns) json_object_set_new(m, "namespace", json_string(ns));
    return m;
}

json_t *bench_mx_template(json_t *devices) {
    return json_pack("{s:s, s:s, s:o, s:{s:{s:o}}}", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate",
                     "metadata", meta(BENCH_MX_TEMPLATE, BENCH_ALLOC_NS), "spec", "spec", "devices", devices);
}

/* ---- partitionable (SteadyStateClusterResourceClaimTemplatePartitionable) ------------------ */

/* nodeSelector node-with-dra In [true]: the partitionable slices' (and so their
 * allocations') node selector */
static json_t *with_dra_selector(void) {
    return json_pack("{s:[{s:[{s:s, s:s, s:[s]}]}]}", "nodeSelectorTerms", "matchExpressions", "key", "node-with-dra",
                     "operator", "In", "values", "true");
}

static json_t *part_slice(const char *name, const char *pool, const char *what, json_t *v) {
    return json_pack("{s:s, s:s, s:o, s:{s:{s:s, s:i, s:i}, s:s, s:o, s:o}}", "kind", "ResourceSlice", "apiVersion",
                     "resource.k8s.io/v1", "metadata", meta(name, NULL), "spec", "pool", "name", pool, "generation", 1,
                     "resourceSliceCount", 2, "driver", BENCH_ALLOC_DRIVER, "nodeSelector", with_dra_selector(), what, v);
}

json_t *bench_mx_partitionable_pool(int i) {
    char pool[40], cs[48], ds[48];
    snprintf(pool, sizeof pool, "resourceslice-%d", i);
    snprintf(cs, sizeof cs, "resourceslice-countersets-%d", i);
    snprintf(ds, sizeof ds, "resourceslice-devices-%d", i);
    json_t *shared = json_pack("[{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}]", "name", "counter-set", "counters",
                               "counter1", "value", "1", "counter2", "value", "1", "counter3", "value", "1", "counter4",
                               "value", "1");
    /* in the template's order: two 2-counter devices, then four 1-counter ones */
    static const struct { const char *name, *c1, *c2; bool pre; } devs[] = {
        {"device-2-counters-1", "counter1", "counter2", true}, {"device-2-counters-2", "counter3", "counter4", false},
        {"device-1-counter-1", "counter1", NULL, false},       {"device-1-counter-2", "counter2", NULL, false},
        {"device-1-counter-3", "counter3", NULL, false},       {"device-1-counter-4", "counter4", NULL, false},
    };
    json_t *d = json_array();
    for (size_t k = 0; k < ARRAY_SIZE(devs); k++) {
        json_t *counters = json_pack("{s:{s:s}}", devs[k].c1, "value", "1");
        if (devs[k].c2) json_object_set_new(counters, devs[k].c2, json_pack("{s:s}", "value", "1"));
        json_array_append_new(d, json_pack("{s:s, s:{s:{s:b}, s:{s:i}}, s:{s:{s:s}}, s:[{s:s, s:o}]}", "name",
                                           devs[k].name, "attributes", "preallocate", "bool", devs[k].pre,
                                           "dra.example.com/slice", "int", i, "capacity", "counters", "value",
                                           devs[k].c2 ? "2" : "1", "consumesCounters", "counterSet", "counter-set",
                                           "counters", counters));
    }
    return json_pack("[o, o]", part_slice(cs, pool, "sharedCounters", shared), part_slice(ds, pool, "devices", d));
}

static const char PREALLOCATE_SELECTOR[] =
    "device.capacity['test-driver.cdi.k8s.io'].counters.compareTo(quantity('2')) >= 0 &&\n"
    "device.attributes['test-driver.cdi.k8s.io'].preallocate";

json_t *bench_mx_partitionable_init_claim(int c, int pool) {
    char name[48], pn[40];
    snprintf(name, sizeof name, "test-claim-with-selector-%d", c);
    snprintf(pn, sizeof pn, "resourceslice-%d", pool);
    json_t *spec = json_pack("{s:{s:[{s:s, s:{s:s, s:[{s:{s:s}}]}}]}}", "devices", "requests", "name", "req-0", "exactly",
                             "deviceClassName", BENCH_ALLOC_CLASS, "selectors", "cel", "expression", PREALLOCATE_SELECTOR);
    json_t *alloc = json_pack("{s:{s:[{s:s, s:s, s:s, s:s}]}, s:o}", "devices", "results", "request", "req-0", "driver",
                              BENCH_ALLOC_DRIVER, "pool", pn, "device", "device-2-counters-1", "nodeSelector",
                              with_dra_selector());
    return json_pack("{s:s, s:s, s:o, s:o, s:{s:o}}", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim",
                     "metadata", meta(name, BENCH_ALLOC_NS), "spec", spec, "status", "allocation", alloc);
}

json_t *bench_mx_two_devices_template(void) {
    return bench_mx_template(json_pack("{s:[{s:s, s:{s:s, s:i}}], s:[{s:[s], s:s}]}", "requests", "name", "req-0",
                                       "exactly", "deviceClassName", BENCH_ALLOC_CLASS, "count", 2, "constraints",
                                       "requests", "req-0", "matchAttribute", "dra.example.com/slice"));
}

/* ---- firstAvailable (SteadyStateClusterResourceClaimTemplateFirstAvailable) ----------------- */

json_t *bench_mx_first_available_template(void) {
    return bench_mx_template(json_pack("{s:[{s:s, s:[{s:s, s:s}, {s:s, s:s}]}]}", "requests", "name", "req-0",
                                       "firstAvailable", "name", "sub-0", "deviceClassName", BENCH_MX_NO_DEVICES_CLASS,
                                       "name", "sub-1", "deviceClassName", BENCH_ALLOC_CLASS));
}

/* ---- consumable capacity (SteadyStateClusterResourceClaimTemplateConsumableCapacity) ---------- */

json_t *bench_mx_consumable_slice(const char *node, int n) {
    json_t *d = json_array();
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "shareable-device-%d", i);
        json_array_append_new(d, json_pack("{s:s, s:b, s:{s:{s:s, s:{s:s, s:{s:s}}}}}", "name", name,
                                           "allowMultipleAllocations", 1, "capacity", "memory", "value", "80Gi",
                                           "requestPolicy", "default", "1Gi", "validRange", "min", "1Gi"));
    }
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceSlice", "metadata", meta(node, NULL), "spec", "driver", BENCH_ALLOC_DRIVER, "nodeName",
                     node, "pool", "name", node, "resourceSliceCount", 1, "generation", 1, "devices", d);
}

json_t *bench_mx_consumable_class(void) {
    return bench_alloc_class(BENCH_ALLOC_CLASS, "device.driver == \"" BENCH_ALLOC_DRIVER "\" &&\n"
                                                "device.allowMultipleAllocations == true");
}

json_t *bench_mx_consumable_template(void) {
    return bench_mx_template(json_pack("{s:[{s:s, s:{s:s, s:{s:{s:s}}}}, {s:s, s:{s:s, s:{s:{s:s}}}}]}", "requests",
                                       "name", "req-0", "exactly", "deviceClassName", BENCH_ALLOC_CLASS, "capacity",
                                       "requests", "memory", "40Gi", "name", "req-1", "exactly", "deviceClassName",
                                       BENCH_ALLOC_CLASS, "capacity", "requests", "memory", "40Gi"));
}

/* ---- MIG ---------------------------------------------------------------------------------- */

/* A100-40GB: 8 memory slices of 5 GB, 98 multiprocessors in 7 compute slices of 14.
 * Each placement consumes its memory slices [start, start + slices). */
static const struct mig_profile {
    const char *profile, *name;   /* name: the profile as a DNS label */
    int slices, sms, starts[8], nstarts;
    const char *memory;
} MIG[] = {
    {NULL, NULL, 8, 98, {0}, 1, "40Gi"},                    /* the whole GPU */
    {"1g.5gb", "1g5gb", 1, 14, {0, 1, 2, 3, 4, 5, 6}, 7, "5Gi"},
    {"1g.10gb", "1g10gb", 2, 14, {0, 2, 4, 6}, 4, "10Gi"},
    {"2g.10gb", "2g10gb", 2, 28, {0, 2, 4}, 3, "10Gi"},
    {"3g.20gb", "3g20gb", 4, 42, {0, 4}, 2, "20Gi"},
    {"4g.20gb", "4g20gb", 4, 56, {0}, 1, "20Gi"},
    {"7g.40gb", "7g40gb", 8, 98, {0}, 1, "40Gi"},
};
enum { MIG_GPUS_PER_SLICE = 3 };
_Static_assert(1 + 7 + 4 + 3 + 2 + 1 + 1 == BENCH_MX_MIG_PER_GPU, "devices per GPU");
_Static_assert(MIG_GPUS_PER_SLICE * BENCH_MX_MIG_PER_GPU <= 64, "v1: at most 64 devices per slice with counters");

static json_t *mig_device(int node_index, int gpu, const struct mig_profile *p, int start) {
    char name[64], uuid[80], cs[32];
    if (p->profile) snprintf(name, sizeof name, "gpu-%d-mig-%s-%d", gpu, p->name, start);
    else snprintf(name, sizeof name, "gpu-%d", gpu);
    snprintf(uuid, sizeof uuid, "%s-%08x-%04x-%04x-%04x", p->profile ? "MIG" : "GPU", (unsigned)node_index,
             (unsigned)gpu, (unsigned)(p - MIG), (unsigned)start);
    snprintf(cs, sizeof cs, "gpu-%d", gpu);
    json_t *counters = json_pack("{s:{s:s}, s:{s:I}}", "memory", "value", p->memory, "multiprocessors", "value",
                                 (json_int_t)p->sms);
    for (int s = start; s < start + p->slices; s++) {
        char k[32];
        snprintf(k, sizeof k, "memory-slice-%d", s);
        json_object_set_new(counters, k, json_pack("{s:s}", "value", "1"));
    }
    json_t *attrs = json_pack("{s:{s:s}, s:{s:s}, s:{s:i}, s:{s:s}, s:{s:s}, s:{s:s}}", "type", "string",
                              p->profile ? "mig" : "gpu", "uuid", "string", uuid, "index", "int", gpu, "productName",
                              "string", "NVIDIA A100-SXM4-40GB", "architecture", "string", "Ampere", "driverVersion",
                              "version", "550.54.15");
    if (p->profile) {
        json_object_set_new(attrs, "profile", json_pack("{s:s}", "string", p->profile));
        json_object_set_new(attrs, "placementStart", json_pack("{s:i}", "int", start));
    }
    return json_pack("{s:s, s:o, s:{s:{s:s}, s:{s:I}}, s:[{s:s, s:o}]}", "name", name, "attributes", attrs, "capacity",
                     "memory", "value", p->memory, "multiprocessors", "value", (json_int_t)p->sms, "consumesCounters",
                     "counterSet", cs, "counters", counters);
}

/* A node's slice i, as the API server serves it: with a uid and a resourceVersion of
 * its own (what the store knows an unchanged object by, dra_change.served). */
static json_t *mig_slice(const char *node, int node_index, int i, const char *name, int count, const char *what, json_t *v) {
    json_t *m = meta(name, NULL);
    char uid[48], rv[24];
    snprintf(uid, sizeof uid, "6d1f0c2e-%04x-4a1b-9c3d-%012x", (unsigned)i, (unsigned)node_index);
    snprintf(rv, sizeof rv, "%d", 1000 + node_index * 8 + i);
    json_object_set_new(m, "uid", json_string(uid));
    json_object_set_new(m, "resourceVersion", json_string(rv));
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceSlice", "metadata", m, "spec", "driver", BENCH_MX_MIG_DRIVER, "nodeName", node, "pool",
                     "name", node, "resourceSliceCount", count, "generation", 1, what, v);
}

json_t *bench_mx_mig_node_slices(const char *node, int node_index, int gpus) {
    int nslices = 1 + (gpus + MIG_GPUS_PER_SLICE - 1) / MIG_GPUS_PER_SLICE;
    json_t *out = json_array(), *sets = json_array();
    for (int g = 0; g < gpus; g++) {
        char cs[32];
        snprintf(cs, sizeof cs, "gpu-%d", g);
        json_t *c = json_pack("{s:{s:s}, s:{s:i}}", "memory", "value", "40Gi", "multiprocessors", "value", 98);
        for (int s = 0; s < 8; s++) {
            char k[32];
            snprintf(k, sizeof k, "memory-slice-%d", s);
            json_object_set_new(c, k, json_pack("{s:s}", "value", "1"));
        }
        json_array_append_new(sets, json_pack("{s:s, s:o}", "name", cs, "counters", c));
    }
    char name[64];
    snprintf(name, sizeof name, "%s-counters", node);
    json_array_append_new(out, mig_slice(node, node_index, 0, name, nslices, "sharedCounters", sets));
    for (int g0 = 0; g0 < gpus; g0 += MIG_GPUS_PER_SLICE) {
        json_t *devs = json_array();
        for (int g = g0; g < gpus && g < g0 + MIG_GPUS_PER_SLICE; g++)
            for (size_t p = 0; p < ARRAY_SIZE(MIG); p++)
                for (int s = 0; s < MIG[p].nstarts; s++)
                    json_array_append_new(devs, mig_device(node_index, g, &MIG[p], MIG[p].starts[s]));
        snprintf(name, sizeof name, "%s-gpus-%d", node, g0 / MIG_GPUS_PER_SLICE);
        json_array_append_new(out, mig_slice(node, node_index, 1 + g0 / MIG_GPUS_PER_SLICE, name, nslices, "devices", devs));
    }
    return out;
}

json_t *bench_mx_mig_class(void) {
    return bench_alloc_class(BENCH_MX_MIG_CLASS, "device.driver == \"" BENCH_MX_MIG_DRIVER "\" && "
                                                 "device.attributes[\"" BENCH_MX_MIG_DRIVER "\"].type == \"mig\"");
}

json_t *bench_mx_mig_template(const char *profile) {
    char sel[128];
    snprintf(sel, sizeof sel, "device.attributes[\"" BENCH_MX_MIG_DRIVER "\"].profile == \"%s\"", profile);
    return bench_mx_template(json_pack("{s:[{s:s, s:{s:s, s:[{s:{s:s}}]}}]}", "requests", "name", "req-0", "exactly",
                                       "deviceClassName", BENCH_MX_MIG_CLASS, "selectors", "cel", "expression", sel));
}
