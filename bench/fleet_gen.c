/* fleet_gen.c — the gpu8 and mig8 fleets of issue 43, object by object (fleet_gen.h). */
#include "bench/fleet_gen.h"

#include "bench/matrix_objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_DRIVER "gpu.nvidia.com"
#define NIC_DRIVER "dra.net"
#define GPU_CLASS "gpu.nvidia.com"
#define NIC_CLASS "rdma.dra.net"
#define PCIE_ROOT "resource.kubernetes.io/pcieRoot"
#define NS "ml"

bool fleet_shape_parse(const char *s, fleet_shape *out) {
    if (!strcmp(s, "gpu8")) *out = FLEET_GPU8;
    else if (!strcmp(s, "mig8")) *out = FLEET_MIG8;
    else return false;
    return true;
}

const char *fleet_shape_name(fleet_shape s) { return s == FLEET_GPU8 ? "gpu8" : "mig8"; }

void fleet_gen_node_name(fleet_shape s, size_t j, char *buf, size_t n) {
    snprintf(buf, n, "%s-%06zu", s == FLEET_GPU8 ? "gpu" : "mig", j);
}

size_t fleet_gen_devices_per_node(fleet_shape s) { return s == FLEET_GPU8 ? 16 : 8 * BENCH_MX_MIG_PER_GPU; }

static json_t *class_obj(const char *name, const char *expr) {
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass",
                     "metadata", "name", name, "spec", "selectors", "cel", "expression", expr);
}

void fleet_gen_classes(fleet_shape s, fleet_emit_fn emit, void *arg) {
    if (s == FLEET_MIG8) {
        emit(arg, bench_mx_mig_class());
        return;
    }
    emit(arg, class_obj(GPU_CLASS, "device.driver == '" GPU_DRIVER "' && device.attributes['" GPU_DRIVER "'].type == 'gpu'"));
    emit(arg, class_obj(NIC_CLASS, "device.driver == '" NIC_DRIVER "' && device.attributes['" NIC_DRIVER "'].rdma"));
}

static json_t *node_obj(fleet_shape s, size_t j) {
    char name[32], zone[16];
    fleet_gen_node_name(s, j, name, sizeof name);
    snprintf(zone, sizeof zone, "zone-%c", (char)('a' + j % 3));
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}}, s:{s:{s:s, s:s, s:s}}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", "kubernetes.io/hostname", name,
                     "node.kubernetes.io/instance-type", s == FLEET_GPU8 ? "p5.48xlarge" : "p4d.24xlarge",
                     "topology.kubernetes.io/zone", zone, "status", "allocatable", "cpu", "192", "memory", "2048Gi",
                     "pods", "110");
}

static json_t *slice_obj(const char *name, const char *driver, const char *node, json_t *devices) {
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceSlice", "metadata", "name", name, "spec", "driver", driver, "nodeName", node,
                     "pool", "name", node, "generation", 1, "resourceSliceCount", 1, "devices", devices);
}

static void pcie_root(int i, char *buf, size_t n) { snprintf(buf, n, "pci0000:%02x", 0x10 * (i / 2 + 1)); }

static json_t *gpu_slice(size_t j, const char *driver_version) {
    char node[32], name[64];
    fleet_gen_node_name(FLEET_GPU8, j, node, sizeof node);
    json_t *devs = json_array();
    for (int i = 0; i < 8; i++) {
        char d[16], uuid[64], root[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        snprintf(uuid, sizeof uuid, "GPU-%08zx-%04x-4e2a-9c1d-%012zx", j, i, j * 8 + (size_t)i);
        pcie_root(i, root, sizeof root);
        json_array_append_new(
            devs, json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:i}, s:{s:s}, s:{s:s}, s:{s:s}},"
                            " s:{s:{s:s}}}",
                            "name", d, "attributes", "type", "string", "gpu", "productName", "string",
                            "NVIDIA H100 80GB HBM3", "architecture", "string", "Hopper", "uuid", "string", uuid, "index",
                            "int", i, "driverVersion", "version", driver_version, "cudaComputeCapability", "version",
                            "9.0.0", PCIE_ROOT, "string", root, "capacity", "memory", "value", "80Gi"));
    }
    snprintf(name, sizeof name, "%s-" GPU_DRIVER, node);
    return slice_obj(name, GPU_DRIVER, node, devs);
}

static json_t *nic_slice(size_t j) {
    char node[32], name[64];
    fleet_gen_node_name(FLEET_GPU8, j, node, sizeof node);
    json_t *devs = json_array();
    for (int i = 0; i < 8; i++) {
        char d[16], root[16], ifn[16];
        snprintf(d, sizeof d, "nic-%d", i);
        snprintf(ifn, sizeof ifn, "ens%d", 100 + i);
        pcie_root(i, root, sizeof root);
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:b}, s:{s:s}, s:{s:s}}, s:{s:{s:s}}}", "name", d,
                                              "attributes", "rdma", "bool", 1, "ifName", "string", ifn, PCIE_ROOT,
                                              "string", root, "capacity", "bandwidth", "value", "400G"));
    }
    snprintf(name, sizeof name, "%s-" NIC_DRIVER, node);
    return slice_obj(name, NIC_DRIVER, node, devs);
}

/* A claim allocated on node: requests (name, class, count) with their devices, the
 * matchAttribute pcieRoot constraint over all of them when `aligned`. */
typedef struct creq {
    const char *name, *cls, *driver;
    int first, count;   /* devices <prefix>-first .. first+count-1 */
    const char *prefix;
} creq;

static json_t *claim_obj(const char *name, const char *node, const creq *r, size_t nr, bool aligned) {
    json_t *reqs = json_array(), *res = json_array(), *names = json_array();
    for (size_t i = 0; i < nr; i++) {
        json_array_append_new(reqs, json_pack("{s:s, s:{s:s, s:i}}", "name", r[i].name, "exactly", "deviceClassName",
                                              r[i].cls, "count", r[i].count));
        json_array_append_new(names, json_string(r[i].name));
        for (int d = r[i].first; d < r[i].first + r[i].count; d++) {
            char dev[48];
            snprintf(dev, sizeof dev, "%s-%d", r[i].prefix, d);
            json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", r[i].name, "driver", r[i].driver,
                                                 "pool", node, "device", dev));
        }
    }
    json_t *devices = json_pack("{s:o}", "requests", reqs);
    if (aligned)
        json_object_set_new(devices, "constraints", json_pack("[{s:o, s:s}]", "requests", names, "matchAttribute", PCIE_ROOT));
    else json_decref(names);
    char uid[96];
    snprintf(uid, sizeof uid, "uid-%s", name);
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:o}, s:{s:{s:{s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}},"
                     " s:[{s:s, s:s, s:s}]}}",
                     "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace",
                     NS, "spec", "devices", devices, "status", "allocation", "devices", "results", res, "nodeSelector",
                     "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In", "values", node,
                     "reservedFor", "resource", "pods", "name", name, "uid", uid);
}

/* gpu8's claims on node j: (first GPU, count) pairs by j mod 10 (fleet_gen.h). */
static size_t gpu8_groups(size_t j, int first[4], int count[4]) {
    static const int f[10][4] = {{0}, {0}, {0}, {0}, {0}, {0}, {0, 4}, {0, 4}, {0, 4, 6, 7}, {0, 2, 4}};
    static const int c[10][4] = {{8}, {8}, {8}, {8}, {8}, {8}, {4, 2}, {4, 2}, {4, 2, 1, 1}, {2, 1, 1}};
    size_t n = 0;
    for (int k = 0; k < 4 && c[j % 10][k]; k++, n++) first[k] = f[j % 10][k], count[k] = c[j % 10][k];
    return n;
}

/* mig8's held devices on node j (fleet_gen.h): "gpu-G-mig-<profile>-<start>". */
static size_t mig8_held(size_t j, char out[12][40]) {
    size_t n = 0;
    for (int g = 0; g < 6; g++) snprintf(out[n++], 40, "gpu-%d-mig-7g40gb-0", g);
    static const char *const even[] = {"gpu-6-mig-3g20gb-0", "gpu-6-mig-2g10gb-4", "gpu-6-mig-1g5gb-6",
                                       "gpu-7-mig-4g20gb-0", "gpu-7-mig-1g10gb-4"};
    static const char *const odd[] = {"gpu-6-mig-3g20gb-0", "gpu-7-mig-1g5gb-0", "gpu-7-mig-1g5gb-1"};
    const char *const *x = j % 2 ? odd : even;
    size_t nx = j % 2 ? 3 : 5;
    for (size_t i = 0; i < nx; i++) snprintf(out[n++], 40, "%s", x[i]);
    return n;
}

void fleet_gen_fill(fleet_shape s, size_t j, size_t *claims, size_t *held, size_t *units) {
    if (s == FLEET_GPU8) {
        int f[4], c[4];
        *claims = gpu8_groups(j, f, c);
        *held = *units = 0;
        for (size_t k = 0; k < *claims; k++) *held += (size_t)c[k] * 2, *units += (size_t)c[k];   /* GPUs and NICs */
    } else {
        char h[12][40];
        *claims = *held = mig8_held(j, h);
        *units = j % 2 ? 6 * 8 + 4 + 2 : 6 * 8 + 7 + 6;   /* memory slices, fleet_gen.h */
    }
}

static void claims_of(fleet_shape s, size_t j, fleet_emit_fn emit, void *arg) {
    char node[32], name[80];
    fleet_gen_node_name(s, j, node, sizeof node);
    if (s == FLEET_GPU8) {
        int f[4], c[4];
        size_t n = gpu8_groups(j, f, c);
        for (size_t k = 0; k < n; k++) {
            creq r[2] = {{"gpu", GPU_CLASS, GPU_DRIVER, f[k], c[k], "gpu"}, {"nic", NIC_CLASS, NIC_DRIVER, f[k], c[k], "nic"}};
            snprintf(name, sizeof name, "job-%s-%zu", node, k);
            emit(arg, claim_obj(name, node, r, 2, c[k] <= 2));
        }
        return;
    }
    char held[12][40];
    size_t n = mig8_held(j, held);
    for (size_t k = 0; k < n; k++) {
        /* one device by name: the claim's request is one device of the class */
        const char *dash = strrchr(held[k], '-');
        char prefix[40];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(dash - held[k]), held[k]);
        creq r = {"mig", BENCH_MX_MIG_CLASS, BENCH_MX_MIG_DRIVER, atoi(dash + 1), 1, prefix};
        snprintf(name, sizeof name, "inf-%s-%zu", node, k);
        emit(arg, claim_obj(name, node, &r, 1, false));
    }
}

void fleet_gen_node(fleet_shape s, size_t j, fleet_kind k, fleet_emit_fn emit, void *arg) {
    if (k == FLEET_NODES) {
        emit(arg, node_obj(s, j));
    } else if (k == FLEET_CLAIMS) {
        claims_of(s, j, emit, arg);
    } else if (s == FLEET_GPU8) {
        emit(arg, gpu_slice(j, "560.35.3"));
        emit(arg, nic_slice(j));
    } else {
        char node[32];
        fleet_gen_node_name(s, j, node, sizeof node);
        json_t *sl = bench_mx_mig_node_slices(node, (int)j, 8);
        size_t i;
        json_t *o;
        json_array_foreach(sl, i, o) emit(arg, json_incref(o));
        json_decref(sl);
    }
}

json_t *fleet_gen_slice_update(fleet_shape s, size_t j, int gen) {
    char v[32];
    if (s == FLEET_GPU8) {
        snprintf(v, sizeof v, "560.35.%d", 3 + gen);
        return gpu_slice(j, v);
    }
    char node[32];
    fleet_gen_node_name(s, j, node, sizeof node);
    json_t *sl = bench_mx_mig_node_slices(node, (int)j, 8);
    json_t *one = json_incref(json_array_get(sl, 1));   /* the first device slice */
    json_decref(sl);
    snprintf(v, sizeof v, "550.54.%d", 15 + gen);
    json_t *d0 = json_array_get(json_object_get(json_object_get(one, "spec"), "devices"), 0);
    json_object_set_new(json_object_get(d0, "attributes"), "driverVersion", json_pack("{s:s}", "version", v));
    return one;
}

json_t *fleet_gen_claim_on_free(fleet_shape s, size_t j, const char *name) {
    char node[32];
    if (s == FLEET_GPU8) {
        j = j / 10 * 10 + 9;   /* GPU 3 and NIC 3 are free there */
        fleet_gen_node_name(s, j, node, sizeof node);
        creq r[2] = {{"gpu", GPU_CLASS, GPU_DRIVER, 3, 1, "gpu"}, {"nic", NIC_CLASS, NIC_DRIVER, 3, 1, "nic"}};
        return claim_obj(name, node, r, 2, true);
    }
    j |= 1;   /* odd: GPU 7's memory slices 2-7 are free */
    fleet_gen_node_name(s, j, node, sizeof node);
    creq r = {"mig", BENCH_MX_MIG_CLASS, BENCH_MX_MIG_DRIVER, 2, 1, "gpu-7-mig-1g5gb"};
    return claim_obj(name, node, &r, 1, false);
}

json_t *fleet_gen_template(fleet_shape s) {
    json_t *spec;
    if (s == FLEET_GPU8)
        spec = json_pack("{s:[{s:s, s:{s:s, s:i}}, {s:s, s:{s:s, s:i}}], s:[{s:[s, s], s:s}]}", "requests", "name", "gpu",
                         "exactly", "deviceClassName", GPU_CLASS, "count", 1, "name", "nic", "exactly",
                         "deviceClassName", NIC_CLASS, "count", 1, "constraints", "requests", "gpu", "nic",
                         "matchAttribute", PCIE_ROOT);
    else
        spec = json_pack("{s:[{s:s, s:{s:s, s:[{s:{s:s}}]}}]}", "requests", "name", "mig", "exactly", "deviceClassName",
                         BENCH_MX_MIG_CLASS, "selectors", "cel", "expression",
                         "device.attributes['" BENCH_MX_MIG_DRIVER "'].profile == '1g.5gb'");
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:o}}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "ResourceClaimTemplate", "metadata", "name", "unit", "namespace", NS, "spec", "spec", "devices", spec);
}

static json_t *pod_spec(void) {
    return json_pack("{s:[{s:s, s:s, s:{s:{s:s, s:s}, s:[{s:s}]}}], s:[{s:s, s:s}]}", "containers", "name", "main",
                     "image", "registry.example.com/job:1", "resources", "requests", "cpu", "1", "memory", "4Gi",
                     "claims", "name", "dev", "resourceClaims", "name", "dev", "resourceClaimTemplateName", "unit");
}

json_t *fleet_gen_pod(fleet_shape s, const char *name) {
    (void)s;
    char uid[96];
    snprintf(uid, sizeof uid, "uid-%s", name);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
                     "namespace", NS, "uid", uid, "spec", pod_spec());
}

json_t *fleet_gen_workloads(fleet_shape s, size_t replicas) {
    json_t *w = json_pack("{s:s, s:I, s:{s:{s:s}, s:o}}", "name", s == FLEET_GPU8 ? "aligned-gpu-nic" : "mig-1g",
                          "replicas", (json_int_t)replicas, "template", "metadata", "namespace", NS, "spec", pod_spec());
    return json_pack("{s:[o], s:[o]}", "workloads", w, "objects", fleet_gen_template(s));
}
