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

static cel_str cstr(const char *s) { return cel_str_of(s, (uint32_t)strlen(s)); }

/* Strings, versions and quantities are made once per distinct text and shared by
 * every device that has it, as the engine's decoder shares them (cel/cel.h: the view
 * refers to values, it does not hold them): the workload's texts are a few
 * constants, told apart by their address. The per-device GPU uuid gets its own. */
#define SHARED_MAX 64
typedef struct shared_vals {
    const char *text[SHARED_MAX];
    const void *val[SHARED_MAX];
    size_t n;
} shared_vals;

static const void *shared_find(const shared_vals *sv, const char *s) {
    for (size_t i = 0; i < sv->n; i++)
        if (sv->text[i] == s) return sv->val[i];
    return NULL;
}
static void shared_add(shared_vals *sv, const char *s, const void *v) {
    if (sv->n == SHARED_MAX) abort();   /* the workload has a dozen distinct texts */
    sv->text[sv->n] = s;
    sv->val[sv->n++] = v;
}

static cel_attr a_str(shared_vals *sv, arena *a, uint32_t dom, uint32_t name, const char *s) {
    cel_attr at = {.domain = dom, .name = name, .kind = CEL_ATTR_STRING};
    if (!(at.u.s = shared_find(sv, s))) {
        cel_str *n = ARENA_NEW(a, cel_str);
        *n = cstr(s);
        shared_add(sv, s, n);
        at.u.s = n;
    }
    return at;
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
static bool a_version(shared_vals *sv, arena *a, uint32_t dom, uint32_t name, const char *s, cel_attr *out, err *e) {
    *out = (cel_attr){.domain = dom, .name = name, .kind = CEL_ATTR_VERSION};
    if ((out->u.v = shared_find(sv, s))) return true;
    semver *v = ARENA_NEW(a, semver);
    if (!semver_parse(s, strlen(s), v, e)) {
        err_wrap(e, "bench device version %s", s);
        return false;
    }
    shared_add(sv, s, v);
    out->u.v = v;
    return true;
}
static bool cap(shared_vals *sv, arena *a, uint32_t dom, uint32_t name, const char *s, cel_capacity *out, err *e) {
    *out = (cel_capacity){.domain = dom, .name = name};
    if ((out->value = shared_find(sv, s))) return true;
    quantity *q = ARENA_NEW(a, quantity);
    if (!quantity_parse(s, strlen(s), q, e)) {
        err_wrap(e, "bench device capacity %s", s);
        return false;
    }
    shared_add(sv, s, q);
    out->value = q;
    return true;
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
    static const char bench_gpu_brand[] = "NVIDIA";
    cel_device *views = ARENA_NEWN(a, cel_device, n ? n : 1);
    shared_vals strs = {0}, vers = {0}, qtys = {0};
    size_t total_attrs = 0;
    for (size_t i = 0; i < n; i++) total_attrs += bench_celdev_nattrs(&devs[i]);
    cel_attr *all_attrs = ARENA_NEWN(a, cel_attr, total_attrs ? total_attrs : 1);
    cel_capacity *all_caps = ARENA_NEWN(a, cel_capacity, 2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        const bench_celdev *d = &devs[i];
        cel_device *v = &views[i];
        cel_attr *at = all_attrs;
        all_attrs += bench_celdev_nattrs(d);
        cel_capacity *cp = all_caps;
        all_caps += 2;
        uint32_t na = 0;
        if (d->nic) {
            v->driver = cstr(BENCH_NIC_DRIVER);
            v->driver_id = id.nic;
            const char *lt = bench_nic_link_types[d->link_type];
            at[na++] = a_str(&strs, a, id.nic, id.link_type, lt);
            at[na++] = a_int(id.nic, id.speed_gbps, bench_nic_speeds[d->speed]);
            at[na++] = a_bool(id.nic, id.rdma, d->rdma);
            if (!cap(&qtys, a, id.nic, id.bandwidth, "400G", &cp[0], e) || !cap(&qtys, a, id.nic, id.vfs, "16", &cp[1], e))
                return NULL;
        } else {
            const bench_gpu_product *p = &bench_gpu_products[d->product];
            v->driver = cstr(BENCH_GPU_DRIVER);
            v->driver_id = id.gpu;
            const char *type = d->mig ? "mig" : "gpu";
            char uuid[64];
            size_t ulen = bench_celdev_uuid(d, uuid, sizeof uuid);
            at[na++] = a_str(&strs, a, id.gpu, id.type, type);
            cel_str *us = ARENA_NEW(a, cel_str);
            *us = cel_str_of(arena_strndup(a, uuid, ulen), (uint32_t)ulen);
            at[na] = (cel_attr){.domain = id.gpu, .name = id.uuid, .kind = CEL_ATTR_STRING};
            at[na++].u.s = us;
            at[na++] = a_int(id.gpu, id.index, d->index);
            at[na++] = a_str(&strs, a, id.gpu, id.product_name, p->name);
            at[na++] = a_str(&strs, a, id.gpu, id.brand, bench_gpu_brand);
            at[na++] = a_str(&strs, a, id.gpu, id.architecture, p->arch);
            if (!a_version(&vers, a, id.gpu, id.cuda_cc, p->cc, &at[na++], e)) return NULL;
            if (!a_version(&vers, a, id.gpu, id.driver_version, bench_driver_versions[d->driver_version], &at[na++], e))
                return NULL;
            at[na++] = a_int(id.gpu, id.numa_node, d->numa);
            at[na++] = a_bool(id.gpu, id.mig_enabled, d->mig);
            if (d->pcie_root >= 0) {
                const char *root = bench_pcie_roots[d->pcie_root];
                at[na++] = a_str(&strs, a, id.std, id.pcie_root, root);
            }
            if (!cap(&qtys, a, id.gpu, id.memory, p->memory, &cp[0], e) ||
                !cap(&qtys, a, id.gpu, id.multiprocessors, p->sms, &cp[1], e))
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
