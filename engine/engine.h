/* engine.h — the DRA allocator layer: the resource.k8s.io/v1 object model, the
 * JSON/YAML decoder and encoder, the immutable world snapshot and the allocator that
 * reproduces Kubernetes' structured allocation (k8s.io/dynamic-resource-allocation,
 * incubating/experimental variants).
 *
 * Life cycle:
 *   dra_store        the objects (DeviceClasses, ResourceSlices, ResourceClaims,
 *                    templates, Nodes, Pods, ...), each decoded once; every change
 *                    publishes an immutable snapshot (snapshot.h). A service keeps one
 *                    store for its life; the CLI, a conformance case or a benchmark
 *                    fills one from files or JSON at once.
 *   dra_world        a snapshot's objects as the allocator reads them
 *                    (dra_snapshot_world): lives as long as the snapshot, never written,
 *                    read by any number of threads. What a caller makes beside it (a
 *                    claim from a template, a node without a Node object) goes in the
 *                    caller's arena.
 *   dra_allocated    what is already in use (devices, shared IDs, consumed capacity),
 *                    from claims' status.allocation or given directly. Read-only once
 *                    built; shareable.
 *   dra_nodeview     the world as seen from one node under one feature set: pools
 *                    gathered, completeness and validity decided, devices in Kubernetes'
 *                    search order. Immutable; build once per (node, features) and reuse.
 *   dra_alloc_ctx    per-thread scratch for dra_allocate (an arena, CEL scratch); reuse
 *                    it call after call — the search itself never mallocs.
 *
 * Typical use (what `dralloc allocate` and a benchmark do):
 *   dra_store *store = dra_store_new_with(&features, &(dra_store_opts){.keep_text = true});
 *   dra_store_load_paths(store, (const char *[]){"cluster.yaml"}, 1, &e);  // or dra_store_apply_json
 *   dra_snapshot *s = dra_store_acquire(store);
 *   const dra_world *w = dra_snapshot_world(s);
 *   dra_allocated *st = dra_allocated_new(w);            // + dra_allocated_add_claim per allocated claim
 *   dra_nodeview *v = dra_nodeview_new(w, dra_world_find_node(w, "node-1"), &features, &e);
 *   dra_alloc_ctx *x = dra_alloc_ctx_new();
 *   dra_alloc_result *res;
 *   if (dra_allocate(x, v, st, &claim, 1, &res, &e) == DRA_ALLOC_OK) {
 *       json_t *j = dra_alloc_result_to_json(&res[0]);  // status.allocation
 *       ...
 *   }
 *
 * Outcomes follow Kubernetes: success (one AllocationResult per claim), unsatisfiable
 * on this node (no error), a per-node error (invalid pools), or a fatal error (CEL
 * error, missing class, ...) whose text matches Kubernetes'. */
#ifndef DRA_ENGINE_H
#define DRA_ENGINE_H

#include <jansson.h>

#include "base/error.h"
#include "engine/model.h"
#include "engine/context.h"
#include "engine/snapshot.h"

/* ---- world --------------------------------------------------------------------- */

typedef struct dra_world dra_world;

/* The world of a snapshot (lives as long as s). */
const dra_world *dra_snapshot_world(const dra_snapshot *s);

/* A one-shot world (the CLI, a benchmark): a store of its own, the snapshot it
 * published once the objects were given, that snapshot's world, and an arena for
 * what the caller makes beside the world (claims from templates, a node without a
 * Node object). dra_oneshot_init starts the store and the arena; the caller feeds
 * ->st (dra_store_load_paths, dra_store_apply_json), then dra_oneshot_publish pins
 * the snapshot and gives its world (NULL when nothing was published). Free it once,
 * whether or not it was published. */
typedef struct dra_oneshot {
    dra_store *st;
    dra_snapshot *snap;
    const dra_world *w;
    arena mem;
} dra_oneshot;
void dra_oneshot_init(dra_oneshot *o, const dra_features *f, const dra_store_opts *opts);
const dra_world *dra_oneshot_publish(dra_oneshot *o);
void dra_oneshot_free(dra_oneshot *o);

/* Objects of one kind in arrival order (the first call collects them), and by name. */
size_t dra_world_nclaims(const dra_world *w);
const dra_claim *dra_world_claim(const dra_world *w, size_t i);
const dra_claim *dra_world_find_claim(const dra_world *w, const char *ns, const char *name);
size_t dra_world_nnodes(const dra_world *w);
const dra_node *dra_world_node(const dra_world *w, size_t i);
const dra_node *dra_world_find_node(const dra_world *w, const char *name);
size_t dra_world_npods(const dra_world *w);
const dra_pod *dra_world_pod(const dra_world *w, size_t i);
size_t dra_world_ntemplates(const dra_world *w);
const dra_claim_template *dra_world_template(const dra_world *w, size_t i);
const dra_claim_template *dra_world_find_template(const dra_world *w, const char *ns, const char *name);
/* A claim instantiated from a template for a pod, in a (the caller's memory). */
const dra_claim *dra_claim_from_template(arena *a, const dra_claim_template *t, const char *ns, const char *name);
/* A node with just a name, in a (for callers that have no Node object). */
const dra_node *dra_node_named(arena *a, const char *name);

/* The CEL view of the device named `device` — in the ResourceSlice named `slice`, or
 * in any slice when `slice` is NULL (the first in input order) — and its driver and
 * pool; NULL when there is none. */
const cel_device *dra_world_find_device(const dra_world *w, const char *slice, const char *device,
                                        const char **driver, const char **pool);
/* The DRA CEL environment of the world, without the bool-result rule (any result
 * type prints), over the world's intern table. */
const cel_env *dra_world_cel_env(const dra_world *w);

/* ---- allocated state ------------------------------------------------------------ */

typedef struct dra_allocated dra_allocated;

dra_allocated *dra_allocated_new(const dra_world *w);
void dra_allocated_free(dra_allocated *s);
/* "driver/pool/device" */
bool dra_allocated_add_device(dra_allocated *s, const char *id, err *e);
/* "driver/pool/device/shareID" */
bool dra_allocated_add_shared(dra_allocated *s, const char *id, err *e);
bool dra_allocated_add_capacity(dra_allocated *s, const char *id, const char *cap, const quantity *q, err *e);
/* Adds the results of an allocated claim as the scheduler does: adminAccess results
 * skipped; with consumable capacity, shared results add a shared ID and capacity. */
void dra_allocated_add_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity);

/* ---- node view and allocation ---------------------------------------------------- */

typedef struct dra_nodeview dra_nodeview;

/* Fails with Kubernetes' "gather pool information: ..." error. */
dra_nodeview *dra_nodeview_new(const dra_world *w, const dra_node *node, const dra_features *f, err *e);
void dra_nodeview_free(dra_nodeview *v);

typedef enum dra_alloc_status {
    DRA_ALLOC_OK = 0,
    DRA_ALLOC_UNSAT = 1,       /* no allocation on this node */
    DRA_ALLOC_NODE_ERROR = 2,  /* per-node error: "invalid resource pools were encountered" */
    DRA_ALLOC_ERROR = 3,       /* fatal: the claims cannot be allocated anywhere */
    DRA_ALLOC_TIMEOUT = 4,     /* the deadline passed or the call was cancelled: e says
                                * "timed out trying to allocate devices" (Kubernetes' text) */
} dra_alloc_status;

typedef struct dra_alloc_result {
    dra_device_result *results;
    uint32_t nresults;
    dra_config *configs;
    uint32_t nconfigs;
    /* result node selector: NULL = usable everywhere */
    dra_node_selector *node_selector;
} dra_alloc_result;

/* Allocates all claims together on the view's node. On DRA_ALLOC_OK, out[i] (valid
 * until the next call with this ctx) holds claim i's result. `state` may be NULL. */
dra_alloc_status dra_allocate(dra_alloc_ctx *x, const dra_nodeview *v, const dra_allocated *state,
                              const dra_claim *const *claims, size_t nclaims, dra_alloc_result **out, err *e);
/* After DRA_ALLOC_UNSAT (or DRA_ALLOC_NODE_ERROR): why, as text for a user
 * (engine/alloc/explain.c) — the node's pools and any it cannot use, then per request the
 * devices on the node, how many match the class and selectors, how many of those are
 * free, and a line per cause for the rest (held by claim ns/name, a taint not
 * tolerated, shared counters or capacity used up, a feature gate off, ...); then a
 * constraint the free devices cannot meet, or why the requests fail together. */
size_t dra_alloc_explain(dra_alloc_ctx *x, char *buf, size_t n);
/* allocateOne invocations of the last call (search effort, as Go counts it). */
uint64_t dra_alloc_ctx_steps(const dra_alloc_ctx *x);

/* Records a fresh allocation result as allocated (for allocating claim after claim). */
void dra_allocated_add_result(dra_allocated *s, const dra_alloc_result *r, bool consumable_capacity);
/* The same, remembering `holder` as the claim that holds the devices, so a later
 * explanation can name it ("held by claim ns/name"); holder must live as long as s. */
void dra_allocated_add_result_of(dra_allocated *s, const dra_alloc_result *r, const dra_claim *holder,
                                 bool consumable_capacity);

/* ---- encoding --------------------------------------------------------------------- */

/* status.allocation JSON (resource.k8s.io/v1 AllocationResult). */
json_t *dra_alloc_result_to_json(const dra_alloc_result *r);
json_t *dra_node_selector_to_json(const dra_node_selector *ns);
/* For printing allocated ResourceClaims (`dralloc allocate`, dra_pod_allocate) alike:
 * a new {apiVersion, kind, metadata: {name, namespace}} object for a claim that has
 * no object of its own (*meta, unless NULL: the metadata, for more fields; spec is
 * the caller's), and status.allocation set on a claim object (status created when
 * missing). */
json_t *dra_claim_json_new(const dra_claim *c, json_t **meta);
/* A stored claim's object as it was read (raw_json parsed), NULL when no text was kept
 * (or for a template's claim, whose raw_json is its spec): its results put back where
 * the store left them out (dra_claim.raw_results_elided), the same JSON value. */
json_t *dra_claim_object(const dra_claim *c);
void dra_claim_json_set_allocation(json_t *claim, const dra_alloc_result *r);

/* ---- what the control plane writes around an allocation (result_encode.c) ------------ */

/* DRA_CLAIM_FINALIZER: snapshot.h, beside the PreBind writer. */
#define DRA_POD_CLAIM_NAME_ANNOTATION "resource.kubernetes.io/pod-claim-name"

/* The GenerateName the ResourceClaim controller gives the claim it makes from a
 * template for a pod's claim entry: "<pod>-<entry>-", or both cut in proportion to
 * fit 57 bytes (then without the trailing hyphen, as the controller does it). */
void dra_pod_claim_generate_name(const char *pod, const char *entry, char *out, size_t n);

/* One pod bound to a node, for printing its claims as `kubectl get -o yaml` shows
 * them afterwards: the names the API server generates (random characters from x, the
 * shareIDs' source, never a claim of the world's or one generated earlier with the
 * same `names` set), the pod's UID (from its metadata, else drawn from x as the API
 * server would assign one), the pod's status.resourceClaimStatuses. */
typedef struct dra_pod_binding {
    const dra_world *w;
    dra_alloc_ctx *x;
    const dra_pod *pod;
    const char *ns;          /* the pod's namespace, defaulted */
    const char *now;         /* allocationTimestamp to set (RFC 3339), NULL: the gates are off */
    char uid[64];
    bool uid_made;           /* the pod had no metadata.uid */
    json_t *names;           /* {"ns/name": true} of generated names (may be shared across pods) */
    json_t *claim_statuses;  /* the pod's status.resourceClaimStatuses: its own, then generated ones */
    bool generated;          /* a claim was generated: the controller wrote the pod's status */
} dra_pod_binding;

/* `names` may be NULL (a set of its own) or a set shared by several pods' bindings. */
void dra_pod_binding_init(dra_pod_binding *b, const dra_world *w, const dra_pod *pod, dra_alloc_ctx *x, const char *now,
                          json_t *names);
void dra_pod_binding_free(dra_pod_binding *b);
/* Makes `claim` the claim the ResourceClaim controller creates from template t for the
 * pod's entry: generated name, generateName, the template's labels and annotations,
 * the pod-claim-name annotation, the pod as controlling owner (blockOwnerDeletion);
 * records the name in the pod's claim statuses. Returns the name (owned by claim). */
const char *dra_pod_binding_generated(dra_pod_binding *b, json_t *claim, const char *entry,
                                      const dra_claim_template *t);
/* Makes `claim` the extended-resource claim kube-scheduler creates for the pod
 * (GenerateName "<pod>-extended-resources-", the pod as controller). */
const char *dra_pod_binding_implicit(dra_pod_binding *b, json_t *claim);
/* kube-scheduler's PreBind on one claim of the pod: unless already reserved for the
 * pod (same UID), the finalizer when it allocated the claim now, the pod appended to
 * status.reservedFor, allocationTimestamp when b->now and unset. False: untouched. */
bool dra_pod_binding_reserve(dra_pod_binding *b, json_t *claim, bool allocated_now);
/* The same for another consumer ({apiGroup?, resource, name, uid}): a PodGroup's claim
 * is reserved for the group (KEP-5729). */
bool dra_pod_binding_reserve_for(dra_pod_binding *b, json_t *claim, bool allocated_now, const json_t *consumer);
/* {apiVersion: v1, kind: Pod, metadata: {name, namespace, uid}, status: {...}}: the
 * claim statuses and, when given, status.extendedResourceClaimStatus. */
json_t *dra_pod_binding_pod(const dra_pod_binding *b, const json_t *extended_status);

/* A ResourceClaim as the API server returns it (Go's encoding/json of the v1 types
 * after defaulting and a trip through etcd): allocationMode ExactCount and count 1
 * and a toleration's operator Equal when unset, empty omitempty fields removed, empty
 * non-omitempty slices and maps null, struct fields ({} when absent) always present.
 * Fields the types do not know are left as they are. */
void dra_claim_json_normalize(json_t *claim);
/* metav1.Time's text of a Unix time (negative: now): "2006-01-02T15:04:05Z". */
const char *dra_rfc3339_utc(int64_t unix_seconds, char buf[32]);

/* ---- one pod on one node, for `dralloc allocate --pod` ------------------------------- */

const dra_pod *dra_extres_find_pod(const dra_world *w, const char *ns, const char *name);
/* The ResourceClaim a pod's claim entry stands for (by name, generated, or made from
 * its template in a); NULL when none exists. */
const dra_claim *dra_extres_pod_claim(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc);
/* Why dra_extres_pod_claim found none (in a): Kubernetes'
 * NotFound text, the namespace searched and where one of that name exists:
 *   resourceclaimtemplate.resource.k8s.io "gpu" not found in namespace ml; a
 *   ResourceClaimTemplate named gpu exists in namespace team-a */
const char *dra_extres_pod_claim_missing(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc);
/* Allocates what the pod needs on the node (engine/pod/podplan.h describes the outcome
 * object: claims, allocations, reused, reusedClaims, pod, devicePlugin | unsatisfiable
 * + reason | error). x (NULL: a fresh one) allocates and draws generated names; `now`
 * (NULL: the clock) is the allocationTimestamp. */
json_t *dra_pod_allocate(const dra_world *w, const dra_pod *pod, const dra_node *node, const dra_features *f,
                         dra_allocated *st, dra_alloc_ctx *x, const char *now);

/* ---- conformance fixtures ----------------------------------------------------------- */

/* Runs one allocator conformance case (../shared/conformance/allocator format) and
 * returns the outcome object: {"allocations": [...]}, {"unsatisfiable": true} or
 * {"error": "..."}. NULL with e set when the case itself is malformed. */
json_t *dra_fixture_run(const json_t *test_case, err *e);
/* The same, allocating with the given device choice (dra_fixture_run: first-fit). */
json_t *dra_fixture_run_choice(const json_t *test_case, dra_device_choice choice, err *e);

#endif
