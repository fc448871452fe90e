/* podplan.h — private to engine/: the pod plan, scheduling one Pod on one node as the scheduler's
 * DynamicResources and NodeResourcesFit plugins see it: the Pod's ResourceClaims (by
 * name, generated from templates, or its PodGroup's claims) plus extended resources
 * (KEP-5004, gate DRAExtendedResource, on by default in 1.37).
 *
 * Extended resources. A container asking for `example.com/gpu: 2` is served
 *   - on a node whose status.allocatable for the resource is > 0 (a device plugin):
 *     by count — allocatable minus what the Pods bound to the node request must
 *     cover the Pod's request;
 *   - elsewhere (allocatable absent or 0, as on a node moved from the device plugin
 *     to a DRA driver) by DRA when a DeviceClass maps the name: spec.extendedResourceName
 *     equal to it, or `deviceclass.resource.kubernetes.io/<class>`. The requests
 *     become one implicit claim "<pod>-extended-resources" with one ExactCount
 *     request per container and resource, "container-<i>-request-<j>": i the
 *     container's position (init containers first), j the resource's position among
 *     ALL the container's resource keys in name order (cpu and memory count; limits
 *     default requests), requests ordered by name as Kubernetes sorts them.
 * The Pod's total per resource follows the sidecar rule (KEP-753): the larger of
 * (containers + sidecar init containers) and, for each ordinary init container, its
 * request plus the sidecars started before it; the excess of the init peak over the
 * steady total becomes one request of the init container at the peak.
 *
 * Everything a Pod needs that is not in the world — claims instantiated from
 * templates, the implicit claim — is made in the caller's arena: the world is never
 * written (a snapshot's world is
 * immutable). Pods and Nodes are decoded once (decode_core.c), never
 * re-parsed per request. */
#ifndef DRA_ENGINE_PODPLAN_H
#define DRA_ENGINE_PODPLAN_H

#include "base/arena.h"
#include "engine/decode/decode.h"
#include "engine/engine.h"

typedef struct dra_podgroup dra_podgroup;

/* status.allocatable[res] as a whole number. */
bool dra__node_allocatable(const dra_node *n, const char *res, int64_t *out);

const dra_pod *dra_extres_find_pod(const dra_world *w, const char *ns, const char *name);

/* spec ({"devices": {"requests": [...]}}) of a claim made of ExactCount requests (the
 * implicit claim), as the object to create would carry it. */
json_t *dra__claim_spec_json(const dra_claim *c);

/* The ResourceClaim one of the pod's claim entries stands for, outside a PodGroup:
 * the claim it names, else the claim generated for it (status), else a claim made
 * from its template named "<pod>-<entry>" in arena a. NULL when none exists. */
const dra_claim *dra__extres_resolve_claim(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc);
/* Why dra__extres_resolve_claim found nothing, in arena a: Kubernetes' NotFound text
 * for the claim or template the entry names, the namespace searched, and the
 * namespaces where one of that name exists:
 *   resourceclaimtemplate.resource.k8s.io "gpu" not found in namespace ml; a
 *   ResourceClaimTemplate named gpu exists in namespace team-a */
const char *dra__extres_missing_claim(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc);

/* ---- one pod, resolved once, tried on many nodes --------------------------------------- */

typedef struct dra_podplan {
    const dra_world *w;
    const dra_features *f;
    const dra_pod *pod;
    const char *pns;                 /* namespace, defaulted */
    const dra_podres *res;
    const dra_podgroup *group;
    const dra_claim **claims;        /* per pod claim entry: resolved (NULL never after success) */
    bool *shared_alloc;              /* per entry: already allocated (reused) */
    const dra_class **cls;           /* per extended resource: the DeviceClass mapping it, or NULL */
    const char *error;               /* the pod cannot be scheduled anywhere: why */
    const char *unresolvable;        /* a claim or template is missing: why (every node fails) */
    bool needs_dra;                  /* claims or extended resources */
    /* tell unschedulable from unresolvable after a failed allocation (a second search
     * with nothing in use); planning does not need it and skips the cost */
    bool classify;
    /* keep the long explanation of a failed allocation (dra_podnode.explanation): the
     * CLI prints it; the extender and planning need only the short reason */
    bool explain;
    /* the class of each request spec of the claims (podplan_init), for the allocator
     * (engine/alloc/classes.h): looked up once, not per node */
    const dra_request_spec **hint_specs;
    const dra_class **hint_cls;
    uint32_t nhint;
} dra_podplan;

/* Resolves the pod's claims against the world; memory from a. */
void dra__podplan_init(dra_podplan *pp, const dra_world *w, const dra_features *f, const dra_pod *pod, arena *a);

typedef struct dra_podnode {
    dra_alloc_status status;         /* DRA_ALLOC_* of the whole pod on the node */
    bool unresolvable;               /* fails whatever the usage (selector mismatch, missing device) */
    char reason[512];
    const char *explanation;         /* after a failed allocation, with pp->explain: dra_alloc_explain's text */
    /* on success: the claims allocated (todo[i] → res[i]), the implicit claim last */
    const dra_claim **todo;
    size_t ntodo, nown;
    dra_alloc_result *res;
    json_t *device_plugin;           /* {"<res>": {"allocatable", "inUse", "requested"}} or NULL */
    /* the implicit claim's requests: which container and resource each serves, for the
     * pod's status.extendedResourceClaimStatus.requestMappings (NULL when none) */
    json_t *request_mappings;
} dra_podnode;

/* Tries the pod on one node: device-plugin counts, reused claims' node selectors,
 * then one allocation of every unallocated claim (the implicit one included) in
 * ctx x. `view` is the node's view (the caller caches it); `st` the in-use state.
 * Memory from a and x: out is valid until either is reset. */
void dra__podplan_try(const dra_podplan *pp, const dra_node *node, const dra_nodeview *view, const dra_allocated *st,
                     dra_alloc_ctx *x, arena *a, dra_podnode *out);

/* Allocates what the pod needs on the node (the CLI's and the pod cases' entry). Returns
 *   {"claims": [ResourceClaim...], "allocations": [AllocationResult...],
 *    "reused": ["ns/name"...], "reusedClaims": [ResourceClaim...], "devicePlugin": {...},
 *    "pod": Pod, "podStatus": {...}}                   on success (lists may be empty);
 *   {"unsatisfiable": true, "reason": "..."}            when the pod does not fit the node;
 *   {"error": "..."}                                    when it cannot be scheduled anywhere.
 * The claims are as the control plane leaves them once the pod is bound
 * (dra_pod_binding): the new ones allocated, named (template and implicit claims:
 * generated names from x) and reserved for the pod; reusedClaims the already
 * allocated ones the pod uses, the pod appended to their reservedFor. "pod" (the pod
 * with its status.resourceClaimStatuses and extendedResourceClaimStatus) and
 * "podStatus" (the latter) only when the control plane wrote into the pod's status.
 * x (may be NULL: a fresh one) is the allocation context and the random source;
 * `now` (NULL: the clock) is the allocationTimestamp, set when both binding gates
 * are on. `st` (may be NULL) receives the new allocations. */
json_t *dra_pod_allocate(const dra_world *w, const dra_pod *pod, const dra_node *node, const dra_features *f,
                         dra_allocated *st, dra_alloc_ctx *x, const char *now);

/* An allocator case with a "pod" (testdata/README.md). */
json_t *dra__podcase_run(const json_t *test_case, const dra_features *f, dra_device_choice choice, err *e);

#endif
