/* fleet.c — `dralloc bench fleet`: the fleet a capacity planner plans on (issue 22),
 * written as files for `dralloc plan` / `dralloc capacity`, or ingested in memory to
 * measure what the engine's capacity view costs at that size.
 *
 * N nodes (--devices N, default 2,000), in three shapes by node index, every object
 * resource.k8s.io/v1 as the drivers publish it:
 *   40 % H100 nodes   p5.48xlarge: 8 GPUs (gpu.nvidia.com, type gpu, 80Gi) and 4 RDMA
 *                     NICs (dra.net). Of each ten, six have all 8 GPUs and 4 NICs held by
 *                     an allocated claim, two have 4 GPUs and 2 NICs held, two are free.
 *   30 % A100 nodes   p4d.24xlarge: 4 A100-40GB carved by KEP-4815 counters: per GPU one
 *                     counter set (memory, memorySlice0..7, multiprocessors, engines) and
 *                     15 devices consuming from it — the whole GPU (type gpu) and the MIG
 *                     profiles 1g.5gb x7, 2g.10gb x3, 3g.20gb x2, 4g.20gb, 7g.40gb (type
 *                     mig), placed on memory slices as NVIDIA places them. Held: a 7g.40gb
 *                     on every GPU (the GPU is full), except on every eighth node (GPU 3
 *                     has three 1g.5gb instead) and on every eighth node from the fourth
 *                     (GPUs 2 and 3 are free).
 *   30 % CPU nodes    m7i.8xlarge, no devices.
 * Two DeviceTaintRules: example.com/maintenance=firmware:NoSchedule on the pool of the
 * first free H100 node, example.com/ecc=uncorrectable:NoExecute on the pool of the
 * first A100 node with free GPUs.
 *
 * --dump DIR writes DIR/cluster.json (one List), DIR/workloads.json (the plan's
 * workloads: a 4-GPU H100 job sized to leave 4 replicas unplaced, a gang of 8-GPU
 * replicas, 1g.5gb inference, CPU batch and a 16-GPU job no node can run) and the node
 * shapes DIR/shape-h100.json and DIR/shape-a100.json (for --add-nodes, --min-nodes).
 * Without --dump: the cluster ingested into a store and dra_capacity_json on it, the
 * time of each and the RSS. */
#include "bench/bench.h"
#include "bench/list_writer.h"

#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum { SHAPE_H100, SHAPE_A100, SHAPE_CPU } shape;

typedef struct fleet {
    size_t n, nh, na, nc;
    size_t maint_h100, ecc_a100;   /* the tainted pools' node indexes */
} fleet;

static void fleet_init(fleet *f, size_t n) {
    f->n = n;
    f->nh = n * 4 / 10;
    f->na = n * 3 / 10;
    f->nc = n - f->nh - f->na;
    f->maint_h100 = 8;   /* j % 10 == 8: a free H100 node */
    f->ecc_a100 = 4;     /* j % 8 == 4: GPUs 2 and 3 free */
}

static void node_name(char *buf, size_t n, shape s, size_t j) {
    static const char *const pre[] = {"h100", "a100", "cpu"};
    snprintf(buf, n, "%s-%05zu", pre[s], j);
}

/* ---- objects --------------------------------------------------------------------------- */

static json_t *node_obj(shape s, size_t j) {
    static const char *const type[] = {"p5.48xlarge", "p4d.24xlarge", "m7i.8xlarge"};
    static const char *const cpu[] = {"192", "96", "32"}, *const mem[] = {"2048Gi", "1152Gi", "128Gi"};
    char name[32], zone[32];
    node_name(name, sizeof name, s, j);
    snprintf(zone, sizeof zone, "zone-%c", (char)('a' + j % 3));
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}}, s:{s:{s:s, s:s, s:s}}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", "kubernetes.io/hostname", name,
                     "node.kubernetes.io/instance-type", type[s], "topology.kubernetes.io/zone", zone, "status",
                     "allocatable", "cpu", cpu[s], "memory", mem[s], "pods", "110");
}

static json_t *slice_obj(const char *name, const char *driver, const char *node, int count, json_t *devices,
                         json_t *counters) {
    json_t *spec = json_pack("{s:s, s:s, s:{s:s, s:i, s:i}}", "driver", driver, "nodeName", node, "pool", "name", node,
                             "generation", 1, "resourceSliceCount", count);
    if (devices) json_object_set_new(spec, "devices", devices);
    if (counters) json_object_set_new(spec, "sharedCounters", counters);
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
                     "metadata", "name", name, "spec", spec);
}

static json_t *h100_gpus(const char *node, size_t j) {
    json_t *devs = json_array();
    for (int i = 0; i < 8; i++) {
        char d[16], uuid[64];
        snprintf(d, sizeof d, "gpu-%d", i);
        snprintf(uuid, sizeof uuid, "GPU-%08zx-%04x-4e2a-9c1d-%012zx", j, i, j * 8 + (size_t)i);
        json_array_append_new(
            devs, json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:i}, s:{s:s}, s:{s:s}},"
                            " s:{s:{s:s}}}",
                            "name", d, "attributes", "type", "string", "gpu", "productName", "string",
                            "NVIDIA H100 80GB HBM3", "architecture", "string", "Hopper", "uuid", "string", uuid, "index",
                            "int", i, "driverVersion", "version", "560.35.3", "cudaComputeCapability", "version", "9.0.0",
                            "capacity", "memory", "value", "80Gi"));
    }
    char name[64];
    snprintf(name, sizeof name, "%s-gpu.nvidia.com", node);
    return slice_obj(name, "gpu.nvidia.com", node, 1, devs, NULL);
}

static json_t *h100_nics(const char *node) {
    json_t *devs = json_array();
    for (int i = 0; i < 4; i++) {
        char d[16], root[32];
        snprintf(d, sizeof d, "nic-%d", i);
        snprintf(root, sizeof root, "pci0000:%02x", 0x10 * (i + 1));
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:b}, s:{s:s}}, s:{s:{s:s}}}", "name", d, "attributes",
                                              "rdma", "bool", 1, "resource.kubernetes.io/pcieRoot", "string", root,
                                              "capacity", "bandwidth", "value", "400G"));
    }
    char name[64];
    snprintf(name, sizeof name, "%s-dra.net", node);
    return slice_obj(name, "dra.net", node, 1, devs, NULL);
}

/* A100-40GB MIG profiles (NVIDIA's A100 placements: profile → first memory slice of
 * each placement, slices used, and the counters each draws; KEP-4815's figures for
 * 1g.5gb, nvidia-smi's for the rest). */
typedef struct mig_profile {
    const char *name;            /* device-name form (DNS label) */
    const char *attr;            /* gpu.nvidia.com/profile */
    int slices, nplace, place[7];
    const char *memory;
    int sms, ce, dec, jpeg, ofa;
} mig_profile;

static const mig_profile PROFILES[] = {
    {"1g-5gb", "1g.5gb", 1, 7, {0, 1, 2, 3, 4, 5, 6}, "4864Mi", 14, 1, 0, 0, 0},
    {"2g-10gb", "2g.10gb", 2, 3, {0, 2, 4}, "9856Mi", 28, 2, 1, 0, 0},
    {"3g-20gb", "3g.20gb", 4, 2, {0, 4}, "19968Mi", 42, 3, 2, 0, 0},
    {"4g-20gb", "4g.20gb", 4, 1, {0}, "19968Mi", 56, 4, 2, 0, 0},
    {"7g-40gb", "7g.40gb", 8, 1, {0}, "40192Mi", 98, 7, 5, 1, 1},
};

static json_t *counter_set(int gpu) {
    char name[32];
    snprintf(name, sizeof name, "gpu-%d-counter-set", gpu);
    json_t *c = json_pack("{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "copy-engines", "value", "7",
                          "decoders", "value", "5", "encoders", "value", "0", "jpeg-engines", "value", "1", "memory",
                          "value", "40Gi", "multiprocessors", "value", "98", "ofa-engines", "value", "1");
    for (int s = 0; s < 8; s++) {
        char k[32];
        snprintf(k, sizeof k, "memorySlice%d", s);
        json_object_set_new(c, k, json_pack("{s:s}", "value", "1"));
    }
    return json_pack("{s:s, s:o}", "name", name, "counters", c);
}

/* A device drawing the given counters from GPU gpu's set, slices [s0, s0+ns). */
static json_t *mig_device(const char *name, int gpu, const char *type, const char *profile, int s0, int ns,
                          const char *memory, int sms, int ce, int dec, int jpeg, int ofa, size_t j) {
    char set[32], uuid[80], parent[64];
    snprintf(set, sizeof set, "gpu-%d-counter-set", gpu);
    snprintf(parent, sizeof parent, "GPU-a100%04zx-%04x-4e2a-9c1d-%012zx", j % 0x10000, gpu, j * 4 + (size_t)gpu);
    snprintf(uuid, sizeof uuid, "%s%s", !strcmp(type, "mig") ? "MIG-" : "", parent + (strcmp(type, "mig") ? 0 : 4));
    json_t *cons = json_pack("{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "copy-engines", "value",
                             "0", "decoders", "value", "0", "encoders", "value", "0", "jpeg-engines", "value", "0",
                             "memory", "value", memory, "multiprocessors", "value", "0", "ofa-engines", "value", "0");
    char v[16], smv[16];
    snprintf(smv, sizeof smv, "%d", sms);
    json_object_set_new(cons, "multiprocessors", json_pack("{s:s}", "value", smv));
    snprintf(v, sizeof v, "%d", ce);
    json_object_set_new(cons, "copy-engines", json_pack("{s:s}", "value", v));
    snprintf(v, sizeof v, "%d", dec);
    json_object_set_new(cons, "decoders", json_pack("{s:s}", "value", v));
    snprintf(v, sizeof v, "%d", jpeg);
    json_object_set_new(cons, "jpeg-engines", json_pack("{s:s}", "value", v));
    snprintf(v, sizeof v, "%d", ofa);
    json_object_set_new(cons, "ofa-engines", json_pack("{s:s}", "value", v));
    for (int s = s0; s < s0 + ns; s++) {
        char k[32];
        snprintf(k, sizeof k, "memorySlice%d", s);
        json_object_set_new(cons, k, json_pack("{s:s}", "value", "1"));
    }
    json_t *attrs = json_pack("{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:i}, s:{s:s}}", "type", "string", type, "productName",
                              "string", "NVIDIA A100-SXM4-40GB", "uuid", "string", uuid, "index", "int", gpu,
                              "driverVersion", "version", "560.35.3");
    if (profile) {
        json_object_set_new(attrs, "profile", json_pack("{s:s}", "string", profile));
        json_object_set_new(attrs, "parentUUID", json_pack("{s:s}", "string", parent));
    }
    return json_pack("{s:s, s:o, s:{s:{s:s}, s:{s:s}}, s:[{s:s, s:o}]}", "name", name, "attributes", attrs, "capacity",
                     "memory", "value", memory, "multiprocessors", "value", smv, "consumesCounters", "counterSet", set,
                     "counters", cons);
}

static json_t *a100_slices(const char *node, size_t j, json_t **counters) {
    json_t *sets = json_array(), *devs = json_array();
    for (int g = 0; g < 4; g++) {
        json_array_append_new(sets, counter_set(g));
        char d[48];
        snprintf(d, sizeof d, "gpu-%d", g);
        json_array_append_new(devs, mig_device(d, g, "gpu", NULL, 0, 8, "40Gi", 98, 7, 5, 1, 1, j));
        for (size_t p = 0; p < ARRAY_SIZE(PROFILES); p++) {
            const mig_profile *m = &PROFILES[p];
            for (int k = 0; k < m->nplace; k++) {
                snprintf(d, sizeof d, "gpu-%d-mig-%s-%d", g, m->name, m->place[k]);
                json_array_append_new(devs, mig_device(d, g, "mig", m->attr, m->place[k], m->slices, m->memory, m->sms,
                                                       m->ce, m->dec, m->jpeg, m->ofa, j));
            }
        }
    }
    char name[64];
    snprintf(name, sizeof name, "%s-gpu.nvidia.com-counters", node);
    *counters = slice_obj(name, "gpu.nvidia.com", node, 2, NULL, sets);
    snprintf(name, sizeof name, "%s-gpu.nvidia.com-devices", node);
    return slice_obj(name, "gpu.nvidia.com", node, 2, devs, NULL);
}

/* An allocated claim: results (driver, pool = node, device) for each device name,
 * reserved for a pod of the same name. */
static json_t *claim_obj(const char *name, const char *node, const char *cls, const char *driver,
                         const char *const *devs, size_t n, const char *cls2, const char *driver2,
                         const char *const *devs2, size_t n2) {
    json_t *reqs = json_pack("[{s:s, s:{s:s, s:I}}]", "name", "gpu", "exactly", "deviceClassName", cls, "count",
                             (json_int_t)n);
    json_t *res = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver", driver, "pool", node,
                                             "device", devs[i]));
    if (n2) {
        json_array_append_new(reqs, json_pack("{s:s, s:{s:s, s:I}}", "name", "nic", "exactly", "deviceClassName", cls2,
                                              "count", (json_int_t)n2));
        for (size_t i = 0; i < n2; i++)
            json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "nic", "driver", driver2, "pool",
                                                 node, "device", devs2[i]));
    }
    char uid[96];
    snprintf(uid, sizeof uid, "uid-%s", name);
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:o}}, s:{s:{s:{s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}},"
                     " s:[{s:s, s:s, s:s}]}}",
                     "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace",
                     "ml", "spec", "devices", "requests", reqs, "status", "allocation", "devices", "results", res,
                     "nodeSelector", "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In",
                     "values", node, "reservedFor", "resource", "pods", "name", name, "uid", uid);
}

static json_t *taint_rule(const char *name, const char *pool, const char *key, const char *value, const char *effect) {
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s}, s:{s:s, s:s, s:s}}}", "apiVersion", "resource.k8s.io/v1beta2",
                     "kind", "DeviceTaintRule", "metadata", "name", name, "spec", "deviceSelector", "driver",
                     "gpu.nvidia.com", "pool", pool, "taint", "key", key, "value", value, "effect", effect);
}

static json_t *device_classes(void) {
    return json_pack("[{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}], s:s}},"
                     " {s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}},"
                     " {s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}]",
                     "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", "gpu.nvidia.com",
                     "spec", "selectors", "cel", "expression",
                     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
                     "extendedResourceName", "nvidia.com/gpu", "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass",
                     "metadata", "name", "mig.nvidia.com", "spec", "selectors", "cel", "expression",
                     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
                     "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", "rdma.dra.net",
                     "spec", "selectors", "cel", "expression", "device.driver == 'dra.net' && device.attributes['dra.net'].rdma");
}

/* Calls emit for every object of node j of shape s (the Node, its slices and, with
 * claims, the claims already allocated on it). */
typedef void (*emit_fn)(void *arg, json_t *obj);

static void node_objects(const fleet *f, shape s, size_t j, bool claims, emit_fn emit, void *arg) {
    char node[32];
    node_name(node, sizeof node, s, j);
    emit(arg, node_obj(s, j));
    static const char *const gpus[] = {"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"};
    static const char *const nics[] = {"nic-0", "nic-1", "nic-2", "nic-3"};
    char cname[64];
    if (s == SHAPE_H100) {
        emit(arg, h100_gpus(node, j));
        emit(arg, h100_nics(node));
        size_t held = j % 10 < 6 ? 8 : j % 10 < 8 ? 4 : 0;
        if (claims && held) {
            snprintf(cname, sizeof cname, "train-%s", node);
            emit(arg, claim_obj(cname, node, "gpu.nvidia.com", "gpu.nvidia.com", gpus, held, "rdma.dra.net", "dra.net",
                                nics, held / 2));
        }
    } else if (s == SHAPE_A100) {
        json_t *counters;
        json_t *devs = a100_slices(node, j, &counters);
        emit(arg, counters);
        emit(arg, devs);
        if (!claims) return;
        /* what each GPU holds: a 7g.40gb, three 1g.5gb (GPU 3 of every eighth node), or nothing */
        char held[16][48];
        const char *hv[16];
        size_t nh = 0;
        for (int g = 0; g < 4; g++) {
            if (j % 8 == f->ecc_a100 % 8 && g >= 2) continue;
            if (j % 8 == 0 && g == 3) {
                for (int k = 0; k < 3; k++) snprintf(held[nh++], sizeof held[0], "gpu-%d-mig-1g-5gb-%d", g, k);
                continue;
            }
            snprintf(held[nh++], sizeof held[0], "gpu-%d-mig-7g-40gb-0", g);
        }
        for (size_t i = 0; i < nh; i++) hv[i] = held[i];
        snprintf(cname, sizeof cname, "mig-%s", node);
        emit(arg, claim_obj(cname, node, "mig.nvidia.com", "gpu.nvidia.com", hv, nh, NULL, NULL, NULL, 0));
    }
}

static void fleet_objects(const fleet *f, emit_fn emit, void *arg) {
    json_t *cls = device_classes();
    size_t i;
    json_t *c;
    json_array_foreach(cls, i, c) emit(arg, json_incref(c));
    json_decref(cls);
    char pool[32];
    node_name(pool, sizeof pool, SHAPE_H100, f->maint_h100);
    if (f->maint_h100 < f->nh) emit(arg, taint_rule("h100-firmware-maintenance", pool, "example.com/maintenance", "firmware", "NoSchedule"));
    node_name(pool, sizeof pool, SHAPE_A100, f->ecc_a100);
    if (f->ecc_a100 < f->na) emit(arg, taint_rule("a100-ecc-errors", pool, "example.com/ecc", "uncorrectable", "NoExecute"));
    for (size_t j = 0; j < f->nh; j++) node_objects(f, SHAPE_H100, j, true, emit, arg);
    for (size_t j = 0; j < f->na; j++) node_objects(f, SHAPE_A100, j, true, emit, arg);
    for (size_t j = 0; j < f->nc; j++) node_objects(f, SHAPE_CPU, j, true, emit, arg);
}

/* ---- the workload file -------------------------------------------------------------------- */

static json_t *template_obj(const char *name, const char *cls, int count, const char *selector) {
    json_t *ex = json_pack("{s:s, s:i}", "deviceClassName", cls, "count", count);
    if (selector) json_object_set_new(ex, "selectors", json_pack("[{s:{s:s}}]", "cel", "expression", selector));
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:o}]}}}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceClaimTemplate", "metadata", "name", name, "namespace", "ml", "spec", "spec", "devices",
                     "requests", "name", "dev", "exactly", ex);
}

static json_t *workload_obj(const char *name, size_t replicas, bool gang, const char *tmpl, const char *cpu,
                            const char *mem) {
    json_t *c = json_pack("{s:s, s:s, s:{s:{s:s, s:s}}}", "name", "main", "image", "registry.example.com/job:1",
                          "resources", "requests", "cpu", cpu, "memory", mem);
    json_t *spec = json_pack("{s:[o]}", "containers", c);
    if (tmpl) {
        json_object_set_new(json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "resources"), "claims",
                            json_pack("[{s:s}]", "name", "dev"));
        json_object_set_new(spec, "resourceClaims", json_pack("[{s:s, s:s}]", "name", "dev", "resourceClaimTemplateName", tmpl));
    }
    json_t *w = json_pack("{s:s, s:I, s:{s:{s:s}, s:o}}", "name", name, "replicas", (json_int_t)replicas, "template",
                          "metadata", "namespace", "ml", "spec", spec);
    if (gang) json_object_set_new(w, "gang", json_true());
    return w;
}

static json_t *workloads(const fleet *f) {
    const char *h100 = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')";
    /* free H100 GPUs: 8 on two nodes of ten, 4 on two more, less the 8 under maintenance */
    size_t free_gpus = (f->nh / 10) * 2 * 8 + (f->nh / 10) * 2 * 4;
    for (size_t j = f->nh / 10 * 10; j < f->nh; j++) free_gpus += j % 10 >= 8 ? 8 : j % 10 >= 6 ? 4 : 0;
    if (f->maint_h100 < f->nh) free_gpus -= 8;
    json_t *ws = json_array();
    json_array_append_new(ws, workload_obj("llm-train", free_gpus / 4 + 4, false, "h100x4", "16", "128Gi"));
    json_array_append_new(ws, workload_obj("llm-gang", 4, true, "h100x8", "32", "256Gi"));
    json_array_append_new(ws, workload_obj("mig-infer", f->na / 2, false, "mig-1g", "2", "8Gi"));
    json_array_append_new(ws, workload_obj("cpu-batch", f->nc * 3, false, NULL, "8", "32Gi"));
    json_array_append_new(ws, workload_obj("wide-train", 1, false, "h100x16", "32", "256Gi"));
    json_t *objs = json_array();
    json_array_append_new(objs, template_obj("h100x4", "gpu.nvidia.com", 4, h100));
    json_array_append_new(objs, template_obj("h100x8", "gpu.nvidia.com", 8, h100));
    json_array_append_new(objs, template_obj("h100x16", "gpu.nvidia.com", 16, h100));
    json_array_append_new(objs, template_obj("mig-1g", "mig.nvidia.com", 1,
                                             "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"));
    return json_pack("{s:o, s:o}", "workloads", ws, "objects", objs);
}

/* ---- output ----------------------------------------------------------------------------- */

static FILE *open_in(const char *dir, const char *file, char *path, size_t n) {
    snprintf(path, n, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "dralloc bench fleet: cannot write %s\n", path);
    return f;
}

static bool write_list(const char *dir, const char *file, const fleet *f, bool shape_of, shape s, size_t *count) {
    char path[4096];
    FILE *out = open_in(dir, file, path, sizeof path);
    if (!out) return false;
    bench_list_writer w = {.f = out};
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", out);
    if (shape_of) node_objects(f, s, 99999, false, bench_list_put, &w);
    else fleet_objects(f, bench_list_put, &w);
    fputs("\n]}\n", out);
    bool ok = !ferror(out);
    if (fclose(out) || !ok) {
        fprintf(stderr, "dralloc bench fleet: writing %s failed\n", path);
        return false;
    }
    if (count) *count = w.n;
    return true;
}

static int dump(const bench_opts *o, const fleet *f) {
    if (mkdir(o->dump, 0777) && errno != EEXIST) {
        fprintf(stderr, "dralloc bench fleet: --dump %s: cannot make the directory\n", o->dump);
        return 1;
    }
    size_t objs = 0;
    if (!write_list(o->dump, "cluster.json", f, false, SHAPE_CPU, &objs) ||
        !write_list(o->dump, "shape-h100.json", f, true, SHAPE_H100, NULL) ||
        !write_list(o->dump, "shape-a100.json", f, true, SHAPE_A100, NULL))
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/workloads.json", o->dump);
    json_t *w = workloads(f);
    int rc = json_dump_file(w, path, JSON_INDENT(2));
    json_decref(w);
    if (rc) {
        fprintf(stderr, "dralloc bench fleet: cannot write %s\n", path);
        return 1;
    }
    fprintf(o->out, "fleet of %zu nodes (%zu H100, %zu A100, %zu CPU): %zu objects in %s/cluster.json; workloads.json, "
                    "shape-h100.json, shape-a100.json beside it\n",
            f->n, f->nh, f->na, f->nc, objs, o->dump);
    return 0;
}

/* ---- in memory: ingest and the capacity view ------------------------------------------- */

static void collect(void *arg, json_t *obj) { json_array_append_new(arg, obj); }

int bench_fleet_main(const bench_opts *o) {
    if (o->shape) return bench_fleet_scale_main(o, o->shape);
    fleet f;
    fleet_init(&f, o->devices ? o->devices : 2000);
    if (o->dump) return dump(o, &f);
    long rss0 = bench_status_kib("VmRSS:");
    json_t *all = json_array();
    fleet_objects(&f, collect, all);
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    err e;
    err_clear(&e);
    uint64_t t0 = bench_now_ns();
    uint64_t gen = dra_store_apply_json(st, all, &e);
    double ingest = (double)(bench_now_ns() - t0) / 1e9;
    size_t nobj = json_array_size(all);
    json_decref(all);
    if (!gen) {
        fprintf(stderr, "dralloc bench fleet: %s\n", e.msg);
        dra_store_free(st);
        return 1;
    }
    dra_snapshot *s = dra_store_acquire(st);
    size_t reps = o->reps ? o->reps : 3;
    double *t = xcalloc(reps, sizeof *t);
    json_t *cap = NULL;
    for (size_t r = 0; r < reps; r++) {
        json_decref(cap);
        t0 = bench_now_ns();
        cap = dra_capacity_json(s, NULL);
        t[r] = (double)(bench_now_ns() - t0) / 1e6;
    }
    bench_stats bs = bench_stats_of(t, reps);
    json_int_t devs = 0, fr = 0;
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(cap, "nodes"), i, n) {
        devs += json_integer_value(json_object_get(n, "devices"));
        fr += json_integer_value(json_object_get(n, "free"));
    }
    fprintf(o->out, "fleet %zu nodes (%zu objects, %lld devices, %lld allocatable now): ingest %.2f s; capacity view "
                    "median %.1f ms (%zu reps); RSS +%.0f MiB, peak %.0f MiB\n",
            f.n, nobj, (long long)devs, (long long)fr, ingest, bs.median, reps,
            (double)(bench_status_kib("VmRSS:") - rss0) / 1024, (double)bench_status_kib("VmHWM:") / 1024);
    json_decref(cap);
    free(t);
    dra_snapshot_release(s);
    dra_store_free(st);
    return 0;
}
