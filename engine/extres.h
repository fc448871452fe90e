/* extres.h — scheduling one Pod on one node as the scheduler's DynamicResources
 * and NodeResourcesFit plugins see it: the Pod's ResourceClaims (by name, generated
 * from templates, or its PodGroup's claims) plus extended resources (KEP-5004, gate
 * DRAExtendedResource, on by default in 1.37).
 *
 * Extended resources. A container asking for `example.com/gpu: 2` is served
 *   - on a node whose status.allocatable lists the resource (a device plugin): by
 *     count — allocatable minus what the Pods bound to the node request must cover
 *     the Pod's request (unhealthy devices are already missing from allocatable);
 *   - elsewhere by DRA: a DeviceClass with spec.extendedResourceName equal to the
 *     name, or any class by `deviceclass.resource.kubernetes.io/<class>`, turns the
 *     request into one implicit claim "<pod>-extended-resources" with an ExactCount
 *     request per container and resource, "container-<i>-request-<j>" (i: position of
 *     the container in the pod, init containers first; j: position of the resource
 *     among the container's DRA-backed resources in name order). A node can use one
 *     mechanism per resource, and both kinds of node may exist in a cluster.
 * The Pod's total per resource follows the sidecar rule (KEP-753): the larger of
 * (containers + sidecar init containers) and, for each ordinary init container, its
 * request plus the sidecars started before it; the excess of the init peak over the
 * steady total becomes one request of the init container at the peak.
 *
 * All claims the Pod still needs are allocated together in one dra_allocate call;
 * claims already allocated (shared by name, or the PodGroup's claim allocated by an
 * earlier member) are reused, not allocated again. */
#ifndef DRA_ENGINE_EXTRES_H
#define DRA_ENGINE_EXTRES_H

#include "engine/engine.h"

const dra_pod *dra_extres_find_pod(const dra_world *w, const char *ns, const char *name);

/* The ResourceClaim one of the pod's claim entries stands for, outside a PodGroup:
 * the claim it names, else the claim generated for it (status), else a claim made
 * from its template named "<pod>-<entry>". NULL when none of them is in the world.
 * Shared by dra_pod_allocate and `dralloc allocate`, which must resolve alike. */
const dra_claim *dra_extres_pod_claim(dra_world *w, const dra_pod *pod, const dra_pod_claim *pc);

/* Allocates what the pod needs on the node. Returns
 *   {"claims": [ResourceClaim with status.allocation...], "allocations": [AllocationResult...],
 *    "reused": ["ns/name"...], "devicePlugin": {"<resource>": {"allocatable": N, "inUse": M,
 *    "requested": K}}}                      on success (lists may be empty);
 *   {"unsatisfiable": true, "reason": "..."}  when the pod does not fit the node;
 *   {"error": "..."}                          when it cannot be scheduled anywhere.
 * `st` (may be NULL) receives the new allocations. */
json_t *dra_pod_allocate(dra_world *w, const dra_pod *pod, const dra_node *node, const dra_features *f,
                         dra_allocated *st);

/* An allocator case with a "pod" (testdata/README.md): the shared case format plus
 * "pod", "pods", "templates", "podGroups" and a node with status.allocatable. */
json_t *dra_podcase_run(const json_t *test_case, const dra_features *f, err *e);

#endif
