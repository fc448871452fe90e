/* cel_views.c — builds the `cel_device` views of the benchmark devices the way
 * the engine builds them at ingest: driver and attribute names interned, version
 * attributes parsed once with semver_parse, capacities parsed with quantity_parse,
 * each device's attributes and capacities sorted by (domain, name) id. Strings
 * point into the constant tables (which outlive the views) except the per-device
 * GPU uuid, which is copied into the arena. */
#include "bench/cel_devices.h"

#include <stdlib.h>
#include <string.h>

/* The interned ids of every name the workload uses. */
typedef struct names_ids {
    uint32_t gpu, nic, std;
    uint32_t type, uuid, index, product_name, brand, architecture, cuda_cc, driver_version, numa_node,
        mig_enabled, pcie_root, link_type, speed_gbps, rdma;
    uint32_t memory, multiprocessors, bandwidth, vfs;
} names_ids;

static void names_init(names_ids *ids, intern_table *t) {
    ids->gpu = intern_cstr(t, BENCH_GPU_DRIVER);
    ids->nic = intern_cstr(t, BENCH_NIC_DRIVER);
    ids->std = intern_cstr(t, BENCH_STD_DOMAIN);
    ids->type = intern_cstr(t, "type");
    ids->uuid = intern_cstr(t, "uuid");
    ids->index = intern_cstr(t, "index");
    ids->product_name = intern_cstr(t, "productName");
    ids->brand = intern_cstr(t, "brand");
    ids->architecture = intern_cstr(t, "architecture");
    ids->cuda_cc = intern_cstr(t, "cudaComputeCapability");
    ids->driver_version = intern_cstr(t, "driverVersion");
    ids->numa_node = intern_cstr(t, "numaNode");
    ids->mig_enabled = intern_cstr(t, "migEnabled");
    ids->pcie_root = intern_cstr(t, "pcieRoot");
    ids->link_type = intern_cstr(t, "linkType");
    ids->speed_gbps = intern_cstr(t, "speedGbps");
    ids->rdma = intern_cstr(t, "rdma");
    ids->memory = intern_cstr(t, "memory");
    ids->multiprocessors = intern_cstr(t, "multiprocessors");
    ids->bandwidth = intern_cstr(t, "bandwidth");
    ids->vfs = intern_cstr(t, "vfs");
}

static cel_str cstr(const char *s) { return (cel_str){s, (uint32_t)strlen(s)}; }

static cel_attr a_str(uint32_t dom, uint32_t name, const char *s, size_t len) {
    cel_attr a = {.domain = dom, .name = name, .kind = CEL_ATTR_STRING};
    a.u.s = (cel_str){s, (uint32_t)len};
    return a;
}
static cel_attr a_int(uint32_t dom, uint32_t name, int64_t v) {
    cel_attr a = {.domain = dom, .name = name, .kind = CEL_ATTR_INT};
    a.u.i = v;
    return a;
}
static cel_attr a_bool(uint32_t dom, uint32_t name, bool v) {
    cel_attr a = {.domain = dom, .name = name, .kind = CEL_ATTR_BOOL};
    a.u.b = v;
    return a;
}
static bool a_version(uint32_t dom, uint32_t name, const char *s, cel_attr *out, err *e) {
    *out = (cel_attr){.domain = dom, .name = name, .kind = CEL_ATTR_VERSION};
    if (semver_parse(s, strlen(s), &out->u.v, e)) return true;
    err_wrap(e, "bench device version %s", s);
    return false;
}
static bool cap(uint32_t dom, uint32_t name, const char *s, cel_capacity *out, err *e) {
    *out = (cel_capacity){.domain = dom, .name = name};
    if (quantity_parse(s, strlen(s), &out->value, e)) return true;
    err_wrap(e, "bench device capacity %s", s);
    return false;
}

static int attr_order(const void *pa, const void *pb) {
    const cel_attr *a = pa, *b = pb;
    if (a->domain != b->domain) return a->domain < b->domain ? -1 : 1;
    return (a->name > b->name) - (a->name < b->name);
}
static int cap_order(const void *pa, const void *pb) {
    const cel_capacity *a = pa, *b = pb;
    if (a->domain != b->domain) return a->domain < b->domain ? -1 : 1;
    return (a->name > b->name) - (a->name < b->name);
}

cel_device *bench_celdevs_views(const bench_celdev *devs, size_t n, intern_table *names, arena *a, err *e) {
    names_ids id;
    names_init(&id, names);
    cel_device *views = ARENA_NEWN(a, cel_device, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        const bench_celdev *d = &devs[i];
        cel_device *v = &views[i];
        cel_attr *at = ARENA_NEWN(a, cel_attr, bench_celdev_nattrs(d));
        cel_capacity *cp = ARENA_NEWN(a, cel_capacity, 2);
        uint32_t na = 0;
        if (d->nic) {
            v->driver = cstr(BENCH_NIC_DRIVER);
            v->driver_id = id.nic;
            const char *lt = bench_nic_link_types[d->link_type];
            at[na++] = a_str(id.nic, id.link_type, lt, strlen(lt));
            at[na++] = a_int(id.nic, id.speed_gbps, bench_nic_speeds[d->speed]);
            at[na++] = a_bool(id.nic, id.rdma, d->rdma);
            if (!cap(id.nic, id.bandwidth, "400G", &cp[0], e) || !cap(id.nic, id.vfs, "16", &cp[1], e))
                return NULL;
        } else {
            const bench_gpu_product *p = &bench_gpu_products[d->product];
            v->driver = cstr(BENCH_GPU_DRIVER);
            v->driver_id = id.gpu;
            const char *type = d->mig ? "mig" : "gpu";
            char uuid[64];
            size_t ulen = bench_celdev_uuid(d, uuid, sizeof uuid);
            at[na++] = a_str(id.gpu, id.type, type, strlen(type));
            at[na++] = a_str(id.gpu, id.uuid, arena_strndup(a, uuid, ulen), ulen);
            at[na++] = a_int(id.gpu, id.index, d->index);
            at[na++] = a_str(id.gpu, id.product_name, p->name, strlen(p->name));
            at[na++] = a_str(id.gpu, id.brand, "NVIDIA", 6);
            at[na++] = a_str(id.gpu, id.architecture, p->arch, strlen(p->arch));
            if (!a_version(id.gpu, id.cuda_cc, p->cc, &at[na++], e)) return NULL;
            if (!a_version(id.gpu, id.driver_version, bench_driver_versions[d->driver_version], &at[na++], e))
                return NULL;
            at[na++] = a_int(id.gpu, id.numa_node, d->numa);
            at[na++] = a_bool(id.gpu, id.mig_enabled, d->mig);
            if (d->pcie_root >= 0) {
                const char *root = bench_pcie_roots[d->pcie_root];
                at[na++] = a_str(id.std, id.pcie_root, root, strlen(root));
            }
            if (!cap(id.gpu, id.memory, p->memory, &cp[0], e) ||
                !cap(id.gpu, id.multiprocessors, p->sms, &cp[1], e))
                return NULL;
        }
        qsort(at, na, sizeof *at, attr_order);
        qsort(cp, 2, sizeof *cp, cap_order);
        v->attrs = at;
        v->nattrs = na;
        v->caps = cp;
        v->ncaps = 2;
        v->allow_multiple_allocations = false;
        v->conv_error = NULL;
    }
    return views;
}
