/* cel_devices.c — makeDevices(n, seed) from bench.js, draw for draw. Only table
 * indices are stored; the strings live in the constant tables below, which are
 * bench.js's tables verbatim. */
#include "bench/cel_devices.h"
#include "bench/rng.h"

#include <stdio.h>

const bench_gpu_product bench_gpu_products[7] = {
    {"NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "80Gi", "132"},
    {"NVIDIA H200 141GB HBM3e", "Hopper", "9.0.0", "141Gi", "132"},
    {"NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", "40Gi", "108"},
    {"NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "80Gi", "108"},
    {"NVIDIA L4", "Ada Lovelace", "8.9.0", "24Gi", "58"},
    {"NVIDIA B200", "Blackwell", "10.0.0", "180Gi", "148"},
    {"Tesla T4", "Turing", "7.5.0", "16Gi", "40"},
};
const char *const bench_driver_versions[5] = {"535.104.5", "550.54.15", "560.35.3", "570.86.10", "525.147.5"};
const char *const bench_pcie_roots[4] = {"pci0000:00", "pci0000:40", "pci0000:80", "pci0000:c0"};
const char *const bench_nic_link_types[2] = {"infiniband", "ethernet"};
const int64_t bench_nic_speeds[3] = {100, 200, 400};

bench_celdev *bench_celdevs_make(size_t n, uint32_t seed) {
    bench_celdev *out = xcalloc(n ? n : 1, sizeof *out);
    bench_rng r;
    bench_rng_init(&r, seed);
    for (size_t i = 0; i < n; i++) {
        bench_celdev *d = &out[i];
        d->ordinal = (uint32_t)i;
        d->pcie_root = -1;
        d->nic = bench_rng_next(&r) < 0.1;
        if (d->nic) {
            d->link_type = (uint8_t)bench_rng_pick(&r, ARRAY_SIZE(bench_nic_link_types));
            d->speed = (uint8_t)bench_rng_pick(&r, ARRAY_SIZE(bench_nic_speeds));
            d->rdma = bench_rng_next(&r) < 0.5;
            continue;
        }
        /* The object literal in bench.js evaluates its fields in source order:
         * index, then driverVersion, then numaNode. */
        d->product = (uint8_t)bench_rng_pick(&r, ARRAY_SIZE(bench_gpu_products));
        d->mig = bench_rng_next(&r) < 0.3;
        d->index = (uint8_t)(bench_rng_next(&r) * 8);
        d->driver_version = (uint8_t)bench_rng_pick(&r, ARRAY_SIZE(bench_driver_versions));
        d->numa = (uint8_t)(bench_rng_next(&r) * 2);
        if (bench_rng_next(&r) < 0.6) d->pcie_root = (int8_t)bench_rng_pick(&r, ARRAY_SIZE(bench_pcie_roots));
    }
    return out;
}

size_t bench_celdev_uuid(const bench_celdev *d, char *buf, size_t n) {
    /* "GPU-" + (0x10000000 + i).toString(16) + suffix: lower-case hex, no padding. */
    int len = snprintf(buf, n, "GPU-%llx-7715-3560-dcea-7238b9611a45",
                       (unsigned long long)(0x10000000ull + d->ordinal));
    return len < 0 ? 0 : (size_t)len;
}

uint32_t bench_celdev_nattrs(const bench_celdev *d) {
    if (d->nic) return 3;
    return 10 + (d->pcie_root >= 0);
}

void bench_celdevs_dump(const bench_celdev *devs, size_t n, FILE *f) {
    for (size_t i = 0; i < n; i++) {
        const bench_celdev *d = &devs[i];
        if (d->nic) {
            fprintf(f, "nic %s %lld %s 400G 16\n", bench_nic_link_types[d->link_type],
                    (long long)bench_nic_speeds[d->speed], d->rdma ? "true" : "false");
            continue;
        }
        const bench_gpu_product *p = &bench_gpu_products[d->product];
        char uuid[64];
        bench_celdev_uuid(d, uuid, sizeof uuid);
        fprintf(f, "gpu %s %s %d %s|NVIDIA|%s|%s %s %d %s %s %s %s\n", d->mig ? "mig" : "gpu", uuid, d->index, p->name,
                p->arch, p->cc, bench_driver_versions[d->driver_version], d->numa, d->mig ? "true" : "false",
                d->pcie_root >= 0 ? bench_pcie_roots[d->pcie_root] : "-", p->memory, p->sms);
    }
}
