/* matrix_objects.h — the resource.k8s.io/v1 objects of the matrix workloads beyond
 * createResourceDriver's shape (which is alloc_objects.h's), each written after the
 * scheduler_perf template it reproduces (test/integration/scheduler_perf/dra/templates,
 * ../shared/reference/realdata), or, for the MIG scale point, after what a GPU driver
 * with dynamic MIG publishes:
 *
 *   - partitionable pools (resourceslice-partitionable-countersets.yaml +
 *     resourceslice-partitionable-devices.yaml): pool resourceslice-I, two slices
 *     visible from every node labelled node-with-dra=true, one counter set of four
 *     counters of 1 and six devices (two consume two counters, four one), with
 *     attributes preallocate and dra.example.com/slice = I; the init claims of
 *     resourceclaim-with-selector.yaml allocated (device-2-counters-1 of a pool) and
 *     resourceclaimtemplate-for-two-devices.yaml (count 2, matchAttribute
 *     dra.example.com/slice);
 *   - resourceclaimtemplate-first-available.yaml: firstAvailable [sub-0 of a class
 *     without devices (deviceclass-no-devices.yaml), sub-1 of test-class];
 *   - consumable capacity (consumablecapacity/, PR kubernetes#139511): per node one
 *     slice of N allowMultipleAllocations devices with memory 80Gi (requestPolicy
 *     default 1Gi, validRange min 1Gi), the class that asks for
 *     allowMultipleAllocations, a template of two requests of 40Gi each;
 *   - MIG: per node G GPUs, each a counter set gpu-K (memory 40Gi, multiprocessors
 *     98, memory-slice-0..7 = 1) and 19 devices consuming it: the whole GPU, and the
 *     A100-40GB MIG placements 1g.5gb x7, 1g.10gb x4, 2g.10gb x3, 3g.20gb x2,
 *     4g.20gb x1, 7g.40gb x1, each consuming the memory slices it covers; one
 *     counter-set slice and ceil(19 G / 57) device slices (3 GPUs per slice: the v1
 *     limit is 64 devices per slice with counters) in the node-local pool.
 * Every function returns a new reference the caller owns. */
#ifndef DRA_BENCH_MATRIX_OBJECTS_H
#define DRA_BENCH_MATRIX_OBJECTS_H

#include "bench/alloc_objects.h"

#define BENCH_MX_NO_DEVICES_CLASS "no-devices-class"
#define BENCH_MX_TEMPLATE "tmpl"

/* A ResourceClaimTemplate BENCH_MX_TEMPLATE in BENCH_ALLOC_NS whose claim spec is
 * `devices` (stolen). */
json_t *bench_mx_template(json_t *devices);

/* Partitionable pool resourceslice-<i>: [counter-set slice, device slice]. */
json_t *bench_mx_partitionable_pool(int i);
/* Init claim c (resourceclaim-with-selector.yaml) allocated to device-2-counters-1 of
 * pool resourceslice-<pool>, with the slices' node selector. */
json_t *bench_mx_partitionable_init_claim(int c, int pool);
/* count 2 of test-class, matchAttribute dra.example.com/slice */
json_t *bench_mx_two_devices_template(void);

/* firstAvailable [sub-0: no-devices-class, sub-1: test-class] */
json_t *bench_mx_first_available_template(void);

/* Consumable capacity: the node-local slice with n shareable devices, the class, the
 * template. */
json_t *bench_mx_consumable_slice(const char *node, int n);
json_t *bench_mx_consumable_class(void);
json_t *bench_mx_consumable_template(void);

/* MIG: the devices per GPU, the node's slices (a JSON array) for `gpus` GPUs
 * (node_index makes the uuids, the slices' uids and resourceVersions unique), the
 * class and a one-device template of `profile` ("1g.5gb", ...). */
#define BENCH_MX_MIG_PER_GPU 19
#define BENCH_MX_MIG_DRIVER "gpu.example.com"
#define BENCH_MX_MIG_CLASS "mig.example.com"
json_t *bench_mx_mig_node_slices(const char *node, int node_index, int gpus);
json_t *bench_mx_mig_class(void);
json_t *bench_mx_mig_template(const char *profile);

#endif
