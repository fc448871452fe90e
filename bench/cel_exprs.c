/* cel_exprs.c — E1..E5 and their reference predicates (bench.js `EXPRS`). */
#include "bench/cel_exprs.h"

#include <stdlib.h>
#include <string.h>

/* bench.js qtyBig: /^(\d+)([a-zA-Z]*)$/ with the suffix table below; the
 * workload's values are far below 2^64. Aborts on anything else, as bench.js throws. */
static uint64_t ref_qty(const char *s) {
    static const struct { const char *sfx; uint64_t mul; } sfx[] = {
        {"", 1},           {"k", 1000},       {"M", 1000000},     {"G", 1000000000},
        {"T", 1000000000000ull}, {"Ki", 1ull << 10}, {"Mi", 1ull << 20}, {"Gi", 1ull << 30},
        {"Ti", 1ull << 40},
    };
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9') abort();
    for (; *p >= '0' && *p <= '9'; p++) v = v * 10 + (uint64_t)(*p - '0');
    for (size_t i = 0; i < ARRAY_SIZE(sfx); i++)
        if (!strcmp(p, sfx[i].sfx)) return v * sfx[i].mul;
    abort();
}

/* bench.js semverParts + cmp: /^(\d+)\.(\d+)\.(\d+)$/, compared part by part. */
static int ref_semver_cmp(const char *a, const char *b) {
    for (int part = 0; part < 3; part++) {
        char *ea, *eb;
        unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
        if (ea == a || eb == b) abort();
        if (x != y) return x < y ? -1 : 1;
        a = ea + (*ea == '.');
        b = eb + (*eb == '.');
    }
    return 0;
}

static bool is_gpu(const bench_celdev *d) { return !d->nic; }   /* d.driver === GPU */

static bool ref_e1(const bench_celdev *d) { return is_gpu(d) && !d->mig; }   /* type === "gpu" */

static bool ref_e2(const bench_celdev *d) {
    return is_gpu(d) && ref_qty(bench_gpu_products[d->product].memory) >= ref_qty("40Gi");
}

static bool ref_e3(const bench_celdev *d) {
    return is_gpu(d) && ref_semver_cmp(bench_gpu_products[d->product].cc, "8.0.0") > 0 &&
           ref_semver_cmp(bench_driver_versions[d->driver_version], "550.0.0") >= 0;
}

static bool ref_e4(const bench_celdev *d) {
    return is_gpu(d) && !strncmp(bench_gpu_products[d->product].name, "NVIDIA H", 8) && d->index < 4 && !d->mig;
}

static bool ref_e5(const bench_celdev *d) {
    if (!is_gpu(d) || d->pcie_root < 0) return false;
    const char *arch = bench_gpu_products[d->product].arch;
    return !strcmp(bench_pcie_roots[d->pcie_root], "pci0000:40") &&
           (!strcmp(arch, "Hopper") || !strcmp(arch, "Blackwell")) &&
           ref_qty(bench_gpu_products[d->product].sms) > 100;
}

const bench_cel_expr bench_cel_exprs[BENCH_CEL_NEXPRS] = {
    {"E1 class",
     "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].type == \"gpu\"",
     ref_e1, 62547},
    {"E2 quantity",
     "device.driver == \"gpu.example.com\" && "
     "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0",
     ref_e2, 64248},
    {"E3 semver",
     "device.driver == \"gpu.example.com\" && "
     "device.attributes[\"gpu.example.com\"].cudaComputeCapability.isGreaterThan(semver(\"8.0.0\")) && "
     "device.attributes[\"gpu.example.com\"].driverVersion.compareTo(semver(\"550.0.0\")) >= 0",
     ref_e3, 30768},
    {"E4 string+int",
     "device.driver == \"gpu.example.com\" && "
     "device.attributes[\"gpu.example.com\"].productName.startsWith(\"NVIDIA H\") && "
     "device.attributes[\"gpu.example.com\"].index < 4 && !device.attributes[\"gpu.example.com\"].migEnabled",
     ref_e4, 8945},
    {"E5 multi-domain",
     "device.driver == \"gpu.example.com\" && \"resource.kubernetes.io\" in device.attributes && "
     "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci0000:40\" && "
     "device.attributes[\"gpu.example.com\"].architecture in [\"Hopper\", \"Blackwell\"] && "
     "device.capacity[\"gpu.example.com\"].multiprocessors.isGreaterThan(quantity(\"100\"))",
     ref_e5, 5806},
};

uint64_t bench_cel_ref_count(size_t i, const bench_celdev *devs, size_t n) {
    uint64_t c = 0;
    for (size_t k = 0; k < n; k++) c += bench_cel_exprs[i].ref(&devs[k]);
    return c;
}
