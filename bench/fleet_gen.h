/* fleet_gen.h — the fleets of issue 43 as generated objects: `dralloc bench fleet
 * --shape gpu8|mig8`. Every object is a pure function of (shape, node index), so a
 * fleet is reproducible node by node and can be written or ingested a kind at a time
 * without holding it whole.
 *
 *   gpu8  per node (gpu-NNNNNN, p5-like): a slice of 8 whole GPUs (gpu.nvidia.com, H100
 *         80GB, uuid, index, driverVersion, cudaComputeCapability) and a slice of 8
 *         RDMA NICs (dra.net, 400G), GPU i and NIC i under PCIe root i/2
 *         (resource.kubernetes.io/pcieRoot: two GPUs and two NICs per switch, as on a
 *         DGX H100). Fill by node index mod 10 — 90 % of the GPUs held: 0-5 one
 *         8 GPU + 8 NIC training claim; 6-7 a 4+4 and a 2+2 claim (GPUs 6-7 free);
 *         8 a 4+4, a 2+2 and two 1+1 claims (full); 9 a 2+2 and two 1+1 claims
 *         (GPUs 3, 5, 6, 7 free). Claims of up to 2 GPUs carry matchAttribute pcieRoot
 *         over both requests, as an aligned job asks.
 *   mig8  per node (mig-NNNNNN): 8 A100-40GB GPUs carved as bench_mx_mig_node_slices
 *         carves them (19 devices a GPU on 8 memory-slice counters: 152 a node, 3.04 M
 *         at 20,000 nodes). Fill, one claim per MIG device held: GPUs 0-5 a 7g.40gb
 *         each; on even nodes GPU 6 a 3g.20gb, a 2g.10gb and a 1g.5gb (7 of 8 memory
 *         slices) and GPU 7 a 4g.20gb and a 1g.10gb (6 of 8); on odd nodes GPU 6 a
 *         3g.20gb (4 of 8) and GPU 7 two 1g.5gb (2 of 8): 89.8 % of the memory slices.
 *
 * The workload file beside it (plan's): one pod per node, each asking the smallest
 * unit the shape has — a GPU and a NIC on one PCIe root (gpu8), a 1g.5gb (mig8) — so
 * that a 100,000-node fleet plans a 100,000-pod workload. */
#ifndef DRA_BENCH_FLEET_GEN_H
#define DRA_BENCH_FLEET_GEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum { FLEET_GPU8, FLEET_MIG8 } fleet_shape;
typedef enum { FLEET_NODES, FLEET_SLICES, FLEET_CLAIMS } fleet_kind;

/* "gpu8" | "mig8"; false for anything else. */
bool fleet_shape_parse(const char *s, fleet_shape *out);
const char *fleet_shape_name(fleet_shape s);

typedef void (*fleet_emit_fn)(void *arg, json_t *obj);   /* obj: a new reference, given away */

/* The DeviceClasses of the shape. */
void fleet_gen_classes(fleet_shape s, fleet_emit_fn emit, void *arg);
/* Node j's objects of one kind: its Node, its ResourceSlices, or its allocated claims. */
void fleet_gen_node(fleet_shape s, size_t j, fleet_kind k, fleet_emit_fn emit, void *arg);
/* Devices per node; claims, held devices and held units (GPUs for gpu8, memory slices
 * of 64 for mig8) on node j. */
size_t fleet_gen_devices_per_node(fleet_shape s);
void fleet_gen_fill(fleet_shape s, size_t j, size_t *claims, size_t *held, size_t *units);
/* Node j's name. */
void fleet_gen_node_name(fleet_shape s, size_t j, char *buf, size_t n);
/* Node j's first slice again at generation gen (a driver's republish: the one-slice
 * update), a new reference. */
json_t *fleet_gen_slice_update(fleet_shape s, size_t j, int gen);
/* A new claim `name` allocated one device node j keeps free (the one-claim update). */
json_t *fleet_gen_claim_on_free(fleet_shape s, size_t j, const char *name);
/* plan's workload file: {"workloads": [...], "objects": [the template]}, `replicas` pods. */
json_t *fleet_gen_workloads(fleet_shape s, size_t replicas);
/* A pod of the workload's shape (resourceClaimTemplateName), for filter timings. */
json_t *fleet_gen_pod(fleet_shape s, const char *name);
json_t *fleet_gen_template(fleet_shape s);

#endif
