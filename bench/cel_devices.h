/* cel_devices.h — the synthetic devices of the CEL selector benchmark, ported
 * exactly from makeDevices(n, seed) in ../shared/bench/cel-peers/bench.js so that
 * our evaluator and the JavaScript peers see the same N devices: ~10% NICs
 * (driver nic.example.com), the rest GPUs (driver gpu.example.com) drawn from a
 * fixed product table, 30% of them MIG, 60% with resource.kubernetes.io/pcieRoot.
 *
 * Two representations:
 *  - `bench_celdev`, the canonical device: which table entry each field took.
 *    It is what the RNG decides, with no parsing, and what the plain-C reference
 *    predicates read (cel_exprs.h);
 *  - `cel_device`, the view the CEL evaluator reads, built from the canonical
 *    devices as the engine would at ingest: names interned, versions parsed with
 *    semver_parse, quantities parsed with quantity_parse.
 *
 * The draw order is bench.js's: isNic; NIC: linkType, speedGbps, rdma; GPU:
 * product, mig, index, driverVersion, numaNode, has-pcieRoot, pcieRoot. */
#ifndef DRA_BENCH_CEL_DEVICES_H
#define DRA_BENCH_CEL_DEVICES_H

#include "base/arena.h"
#include "base/base.h"
#include "base/error.h"
#include "base/intern.h"
#include "cel/cel.h"

#include <stdio.h>

#define BENCH_GPU_DRIVER "gpu.example.com"
#define BENCH_NIC_DRIVER "nic.example.com"
#define BENCH_STD_DOMAIN "resource.kubernetes.io"

/* bench.js PRODUCTS: [productName, architecture, cudaComputeCapability, memory, multiprocessors]. */
typedef struct bench_gpu_product {
    const char *name, *arch, *cc, *memory, *sms;
} bench_gpu_product;

extern const bench_gpu_product bench_gpu_products[7];
extern const char *const bench_driver_versions[5];
extern const char *const bench_pcie_roots[4];
extern const char *const bench_nic_link_types[2];
extern const int64_t bench_nic_speeds[3];

typedef struct bench_celdev {
    uint32_t ordinal;       /* i in makeDevices: the GPU uuid is derived from it */
    bool nic;
    /* NIC fields (nic == true) */
    uint8_t link_type;      /* index into bench_nic_link_types */
    uint8_t speed;          /* index into bench_nic_speeds */
    bool rdma;
    /* GPU fields (nic == false) */
    uint8_t product;        /* index into bench_gpu_products */
    bool mig;               /* type "mig" and migEnabled */
    uint8_t index;          /* 0..7 */
    uint8_t driver_version; /* index into bench_driver_versions */
    uint8_t numa;           /* 0..1 */
    int8_t pcie_root;       /* index into bench_pcie_roots, -1 without the attribute */
} bench_celdev;

/* makeDevices(n, seed): n canonical devices (caller frees with free()). */
bench_celdev *bench_celdevs_make(size_t n, uint32_t seed);
/* The GPU uuid text ("GPU-1000002a-7715-3560-dcea-7238b9611a45"); returns its length. */
size_t bench_celdev_uuid(const bench_celdev *d, char *buf, size_t n);
/* Number of attributes of a device (bench.js prints the average). */
uint32_t bench_celdev_nattrs(const bench_celdev *d);

/* One line per device with every field's value, in the format of
 * bench/cel-devices-check.sh's JavaScript twin, to diff the port against bench.js. */
void bench_celdevs_dump(const bench_celdev *devs, size_t n, FILE *f);

/* The CEL views of n canonical devices, all memory in arena `a`, names interned in
 * `names`. Returns NULL with e->msg when a quantity or version does not parse. */
cel_device *bench_celdevs_views(const bench_celdev *devs, size_t n, intern_table *names, arena *a, err *e);

#endif
