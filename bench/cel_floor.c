/* cel_floor.c — E1..E5 written by hand in C over the same `cel_device` views the
 * CEL evaluator reads: the floor of a selector evaluation on the engine's device
 * representation. Names are interned ids resolved once (as compiling does), the
 * constants parsed once (quantity("40Gi"), semver("8.0.0"), ...), each attribute
 * found by scanning the device's attribute keys from the first (the view's
 * contract, cel/cel.h), values compared with base/'s quantity_cmp and semver_cmp.
 * A missing attribute counts as no match (CEL's error, absorbed by a false operand
 * of && in this workload); the match counts must equal the reference predicates'.
 *
 * Beside it, cel_exprs.c's reference predicates read the canonical devices (table
 * indexes; quantities and versions parsed from their text on every call, as
 * bench.js's plain-JS references do): what the answer costs when the device is not
 * a set of named attributes at all. */
#include "bench/cel_exprs.h"

#include <stdlib.h>
#include <string.h>

struct bench_cel_floor {
    uint32_t gpu, std;                        /* domains (driver names) */
    uint32_t type, cuda_cc, driver_version, product_name, index, mig_enabled, pcie_root, architecture;
    uint32_t memory, multiprocessors;
    quantity q40gi, q100;
    semver v800, v550;
};

static const cel_attr *attr(const cel_device *d, uint32_t dom, uint32_t name) {
    for (uint32_t i = 0; i < d->nattrs; i++)
        if (d->attrs[i].domain == dom && d->attrs[i].name == name) return &d->attrs[i];
    return NULL;
}

static const quantity *cap(const cel_device *d, uint32_t dom, uint32_t name) {
    for (uint32_t i = 0; i < d->ncaps; i++)
        if (d->caps[i].domain == dom && d->caps[i].name == name) return d->caps[i].value;
    return NULL;
}

/* The first n (<= 16, a constant at every call) bytes of s against a literal, compared
 * whole rather than byte by byte: a compare that leaves at the first difference
 * branches on the selector's outcome, as good as random from device to device (the
 * same reason cel/'s string compare has no such branch). */
static inline bool eq16(const char *s, const char *lit, uint32_t n) {
    unsigned char x[16] = {0}, y[16] = {0};
    memcpy(x, s, n);
    memcpy(y, lit, n);
    return !memcmp(x, y, sizeof x);
}

static inline bool str_eq(const cel_attr *a, const char *s, uint32_t n) {
    return a && a->kind == CEL_ATTR_STRING && a->u.s->len == n && eq16(a->u.s->s, s, n);
}

#define LIT(s) (s), (uint32_t)(sizeof(s) - 1)

static bool floor_e1(const bench_cel_floor *f, const cel_device *d) {
    return d->driver_id == f->gpu && str_eq(attr(d, f->gpu, f->type), LIT("gpu"));
}

static bool floor_e2(const bench_cel_floor *f, const cel_device *d) {
    if (d->driver_id != f->gpu) return false;
    const quantity *m = cap(d, f->gpu, f->memory);
    return m && quantity_cmp(m, &f->q40gi) >= 0;
}

static bool floor_e3(const bench_cel_floor *f, const cel_device *d) {
    if (d->driver_id != f->gpu) return false;
    const cel_attr *cc = attr(d, f->gpu, f->cuda_cc);
    if (!cc || cc->kind != CEL_ATTR_VERSION || semver_cmp(cc->u.v, &f->v800) <= 0) return false;
    const cel_attr *dv = attr(d, f->gpu, f->driver_version);
    return dv && dv->kind == CEL_ATTR_VERSION && semver_cmp(dv->u.v, &f->v550) >= 0;
}

static bool floor_e4(const bench_cel_floor *f, const cel_device *d) {
    if (d->driver_id != f->gpu) return false;
    const cel_attr *p = attr(d, f->gpu, f->product_name);
    if (!p || p->kind != CEL_ATTR_STRING || p->u.s->len < 8 || !eq16(p->u.s->s, "NVIDIA H", 8)) return false;
    const cel_attr *i = attr(d, f->gpu, f->index);
    if (!i || i->kind != CEL_ATTR_INT || i->u.i >= 4) return false;
    const cel_attr *m = attr(d, f->gpu, f->mig_enabled);
    return m && m->kind == CEL_ATTR_BOOL && !m->u.b;
}

static bool floor_e5(const bench_cel_floor *f, const cel_device *d) {
    if (d->driver_id != f->gpu) return false;
    bool has_std = false;   /* "resource.kubernetes.io" in device.attributes */
    for (uint32_t i = 0; i < d->nattrs && !has_std; i++) has_std = d->attrs[i].domain == f->std;
    if (!has_std || !str_eq(attr(d, f->std, f->pcie_root), LIT("pci0000:40"))) return false;
    const cel_attr *a = attr(d, f->gpu, f->architecture);
    if (!str_eq(a, LIT("Hopper")) && !str_eq(a, LIT("Blackwell"))) return false;
    const quantity *sm = cap(d, f->gpu, f->multiprocessors);
    return sm && quantity_cmp(sm, &f->q100) > 0;
}

static bool (*const floors[BENCH_CEL_NEXPRS])(const bench_cel_floor *, const cel_device *) = {
    floor_e1, floor_e2, floor_e3, floor_e4, floor_e5,
};

bench_cel_floor *bench_cel_floor_new(intern_table *names) {
    bench_cel_floor *f = xcalloc(1, sizeof *f);
    f->gpu = intern_cstr(names, BENCH_GPU_DRIVER);
    f->std = intern_cstr(names, BENCH_STD_DOMAIN);
    f->type = intern_cstr(names, "type");
    f->cuda_cc = intern_cstr(names, "cudaComputeCapability");
    f->driver_version = intern_cstr(names, "driverVersion");
    f->product_name = intern_cstr(names, "productName");
    f->index = intern_cstr(names, "index");
    f->mig_enabled = intern_cstr(names, "migEnabled");
    f->pcie_root = intern_cstr(names, "pcieRoot");
    f->architecture = intern_cstr(names, "architecture");
    f->memory = intern_cstr(names, "memory");
    f->multiprocessors = intern_cstr(names, "multiprocessors");
    f->q40gi = quantity_must("40Gi");
    f->q100 = quantity_must("100");
    err e;
    if (!semver_parse("8.0.0", 5, &f->v800, &e) || !semver_parse("550.0.0", 7, &f->v550, &e)) abort();
    return f;
}

void bench_cel_floor_free(bench_cel_floor *f) { free(f); }

uint64_t bench_cel_floor_count(const bench_cel_floor *f, size_t i, const cel_device *views, size_t n) {
    uint64_t c = 0;
    bool (*fn)(const bench_cel_floor *, const cel_device *) = floors[i];
    for (size_t k = 0; k < n; k++) c += fn(f, &views[k]);
    return c;
}
