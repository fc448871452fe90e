/* alloc_objects.h — the resource.k8s.io/v1 (and core/v1 Node) objects of the
 * `alloc` workload, built as JSON with jansson the way Kubernetes' scheduler_perf
 * creates them (test/integration/scheduler_perf/dra.go and dra/templates), so the
 * benchmark feeds the allocator real API objects through dra_store_apply_json:
 *
 *   - the per-node ResourceSlice of createResourceDriver: name = pool = node name,
 *     nodeName set, resourceSliceCount 1, devices instance-0..N-1 with model=A100,
 *     family=GPU, driverVersion=1.2.3 (version), dra.example.com/numa=<int>,
 *     capacity memory=1Gi;
 *   - DeviceClass test-class (`device.driver == "test-driver.cdi.k8s.io"`);
 *   - pending ResourceClaims (requests req-0, req-1, ... of test-class, optional
 *     CEL selector, optional matchAttribute constraint over all requests);
 *   - allocated ResourceClaims (status.allocation with one device result and the
 *     node selector the allocator would have written) for pre-filled states;
 *   - the PartitionableBacktracking pool and claim template of
 *     realdata/k8s__scheduler_perf-dra-templates__resourceslice-partitionable-backtracking.yaml,
 *     in the v1 shape: that file keeps sharedCounters and devices in one slice (the
 *     pre-v1 layout), which v1 forbids ("devices XOR sharedCounters") and the engine
 *     reads as a counter-set slice without devices; so, as upstream did for the other
 *     partitionable templates (...-split-countersets-and-devices.yaml), the same
 *     counters and devices go into two slices of one pool (resourceSliceCount 2).
 * Every function returns a new reference the caller owns. */
#ifndef DRA_BENCH_ALLOC_OBJECTS_H
#define DRA_BENCH_ALLOC_OBJECTS_H

#include "base/base.h"

#include <jansson.h>

#define BENCH_ALLOC_DRIVER "test-driver.cdi.k8s.io"
#define BENCH_ALLOC_CLASS "test-class"
#define BENCH_ALLOC_NS "default"

/* One request of a pending claim: `exactly` with test-class, `count` devices, and
 * (when set) one CEL selector. */
typedef struct bench_alloc_req {
    const char *name;
    int64_t count;
    const char *selector;
} bench_alloc_req;

json_t *bench_alloc_class(const char *name, const char *cel);
/* A Node with one label (label_key NULL: no labels). */
json_t *bench_alloc_node(const char *name, const char *label_key, const char *label_value);
/* createResourceDriver's slice for `node` with n devices; device i has
 * dra.example.com/numa = numa[i] (numa NULL: i, as upstream). */
json_t *bench_alloc_node_slice(const char *node, size_t n, const int64_t *numa);
/* A pending claim; match_attr (may be NULL) becomes one matchAttribute constraint
 * over all requests. */
json_t *bench_alloc_claim(const char *name, const bench_alloc_req *reqs, size_t nreqs, const char *match_attr);
/* A claim with one request req-0 whose status.allocation holds `device` of the
 * node-local pool `node` (node selector: metadata.name In [node]). */
json_t *bench_alloc_allocated_claim(const char *name, const char *node, const char *device);
/* PartitionableBacktracking: a JSON array of the counter-set slice (cpu1..cpu8 = 1,
 * mem = 70Gi) and the device slice (device-1 consumes cpu1 + 20Gi, device-k cpuk +
 * 10Gi), both with nodeSelector node-with-dra=true; and the count-7 claim template. */
json_t *bench_alloc_backtracking_slices(void);
json_t *bench_alloc_backtracking_template(void);

#endif
