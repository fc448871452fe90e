/* snapshot.h — the long-running core: a store of Kubernetes objects that publishes
 * immutable, reference-counted snapshots, and scheduling one Pod against a snapshot
 * as kube-scheduler's DynamicResources plugin would (the extender's /filter and
 * /prioritize, `dralloc plan`).
 *
 * Life cycle (one writer, any number of readers):
 *   dra_store        the writer side: the objects by kind/namespace/name and the
 *                    catalog (intern table, compiled CEL programs) every snapshot
 *                    shares. dra_store_apply(upserts, deletes) decodes each object
 *                    once — validation, defaults, its CEL selectors compiled —
 *                    builds the next snapshot from the current one and swaps it in
 *                    atomically. Request threads never intern or compile.
 *
 * Memory follows the live objects, not their history. Each store entry holds a
 * reference to every name it interned and every program it compiled (catalog.h) and
 * gives them back when the last snapshot holding the entry is released; a name or
 * program nothing holds is freed at once and its id reused. So what the store keeps
 * is a function of the objects in the snapshots still held: a cluster that creates
 * and deletes 100k claims a day, each with a selector no other claim had, keeps the
 * catalog it had (tests/extender/churn_test.c: 20,000 such rounds through serve).
 * The fit memo keeps answers only for nodes with a Node object, dropped with them.
 *   dra_snapshot     immutable; readers pin it with dra_store_acquire and let go with
 *                    dra_snapshot_release. The last release frees what only it held.
 *                    Consecutive snapshots share structure (persistent maps, store.c):
 *                    an update costs what it changed, and node views carry over to
 *                    the next snapshot while their inputs stay.
 *   dra_pod_request  one Pod resolved against one snapshot, per request: its claims
 *                    (templates instantiated in the request's memory, never in the
 *                    snapshot), its implicit extended-resource claim, its PodGroup.
 *                    Read-only once built: dra_pod_fit may run on many threads at once,
 *                    each with its own dra_alloc_ctx.
 *
 *   dra_store *st = dra_store_new(&features);
 *   dra_store_load_paths(st, (const char *[]){"cluster/"}, 1, &e);   // or dra_store_apply
 *   dra_snapshot *s = dra_store_acquire(st);
 *   dra_pod_request *pr = dra_pod_request_new(s, pod_json, &e);
 *   dra_fit fit;  dra_pod_fit(pr, ctx, "node-1", NULL, DRA_SCORE_BINPACK, deadline_ns, &fit);
 *   dra_pod_request_free(pr); dra_snapshot_release(s); */
#ifndef DRA_ENGINE_SNAPSHOT_H
#define DRA_ENGINE_SNAPSHOT_H

#include <jansson.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/context.h"
#include "engine/json.h"

typedef struct dra_store dra_store;
typedef struct dra_snapshot dra_snapshot;
typedef struct dra_pod_request dra_pod_request;

/* ---- store and snapshots --------------------------------------------------------- */

dra_store *dra_store_new(const dra_features *f);
/* How a store reads objects; dra_store_new's are all false/NULL, the service's. A
 * one-shot world (the CLI, a conformance case, a benchmark, a test) is a store of its
 * own fed the objects at once, read through the snapshot it publishes. */
struct dra_input;
typedef struct dra_store_opts {
    /* objects exactly as given, as conformance cases are: no API defaults
     * (allocationMode, count), and every object kept even when its kind/namespace/name
     * was given before (lookups by name find the first) */
    bool as_given;
    /* keep each object's JSON text: claims printed back (`dralloc allocate`); the
     * opaque config parameters allocation results carry are kept by every store */
    bool keep_text;
    /* files read as the CLI reads them: errors in the order they are met, the first
     * ending the load (else a load's order: syntax, then an object given twice, then
     * one that does not decode), and an object known only by metadata.generateName
     * kept as an object of its own (as_given stores keep those too) */
    bool one_shot;
    /* where decoding warns and whether warnings are errors (copied; NULL: dropped) */
    const struct dra_input *input;
} dra_store_opts;
dra_store *dra_store_new_with(const dra_features *f, const dra_store_opts *o);
/* A store over another store's catalog (intern table, compiled CEL programs), so the
 * CEL environments are built once for stores kept side by side in one process (tests,
 * the fuzzers: building them is most of an empty store's cost). The catalog is
 * reference-counted: either store may be freed first; each store's objects give back
 * what they hold in it when they go. */
dra_store *dra_store_new_sharing(const dra_features *f, const dra_store *like);
void dra_store_free(dra_store *st);   /* after every snapshot it published is released */

/* One change: an object to add or replace (kind/namespace/name taken from it), or a
 * deletion by kind ("ResourceSlice", ...), namespace (NULL or "" when cluster-scoped)
 * and name. */
typedef struct dra_change {
    const json_t *upsert;    /* one object; Lists and arrays are expanded by the caller */
    const char *kind, *ns, *name;   /* deletion, when upsert is NULL */
    const char *source;      /* where the object came from (a file), for error texts; may be NULL */
    /* The object as the API server served it (a watch event, a LIST item): every
     * write gives it a new metadata.resourceVersion, so one the store holds under the
     * same resourceVersion (and uid) is the same object, known without walking its
     * value (dra__object_identity). false: the value's hash tells — an object from a
     * file or a request body may carry a resourceVersion its edits did not change. */
    bool served;
} dra_change;

/* Applies the changes in order and publishes the next snapshot. All or nothing: an
 * invalid object leaves the current snapshot in place and names the object in e.
 * Returns the new generation (≥ 1), 0 on error. Deleting what is not there is an
 * error ("ResourceSlice x not found"). One writer at a time (internally locked). */
uint64_t dra_store_apply(dra_store *st, const dra_change *changes, size_t n, err *e);
/* A watch's batch: the changes in order (the same object may change more than once:
 * no duplicate check), each one the engine refuses — an invalid object, a deletion of
 * what is not there — handed to skipped with the reason and left out, the rest
 * published as one snapshot. Returns the new generation (the current one when every
 * change was refused), 0 when the snapshot could not be built (e says why). */
typedef void (*dra_skip_fn)(void *arg, const dra_change *c, const err *why);
uint64_t dra_store_apply_batch(dra_store *st, const dra_change *changes, size_t n, dra_skip_fn skipped, void *arg,
                               err *e);
/* Objects of a file or directory (as `dralloc allocate -f`), Lists expanded; one
 * object per kind/namespace/name (the same object twice is fine; a different one
 * under the same key is an error naming both sources). */
uint64_t dra_store_load_paths(dra_store *st, const char *const *paths, size_t n, err *e);
/* Any JSON the HTTP API accepts: one object, an array of objects, a `kind: List`. */
uint64_t dra_store_apply_json(dra_store *st, const json_t *doc, err *e);

/* A kind's whole state given over many reads — a paged list, a streaming list's
 * initial events — made the kind's objects at once: each object given is decoded as it
 * comes (its JSON may be freed right after), and commit publishes one snapshot in which
 * the kind holds exactly the objects given (the rest deleted). Holding every item's
 * JSON until the list ends instead would hold the whole kind's trees at once, ~15× its
 * text (gigabytes for a 5,000-node MIG cluster's slices). An object the store holds
 * unchanged costs nothing (its entry is shared). A keyed store's (not as_given, not
 * one-shot). Only commit takes the store's write lock: other writers go on meanwhile,
 * and what they write to the kind's objects before commit is replaced by the relist's. */
typedef struct dra_relist dra_relist;
dra_relist *dra_store_relist_begin(dra_store *st, const char *kind);   /* NULL: no such kind */
/* Objects of the list, in order. One the engine refuses (invalid, another kind, no
 * name) is handed to skipped (may be NULL) with the reason; under its key the store
 * keeps what it has. A key given again replaces what it was given before. */
void dra_relist_put(dra_relist *r, const json_t *const *objs, size_t n, dra_skip_fn skipped, void *arg);
/* Whether n objects collected from a list (text_bytes of their JSON) make a batch to
 * put: at most DRA_RELIST_BATCH_MAX (a caller's batch array holds that many), fewer
 * once they are 4 MiB of text (their trees are ~15 times that: 64 MIG-carved slices
 * are 4 MiB), but not fewer than 64 while more come — a batch of 64 or more is decoded
 * on two threads. The watch's LIST pages and streaming lists, and
 * `dralloc bench relist`, batch by it. */
enum { DRA_RELIST_BATCH_MAX = 256 };
bool dra_relist_batch_full(size_t n, size_t text_bytes);
/* A streaming list's DELETED event: as if the object had not been given. */
void dra_relist_drop(dra_relist *r, const char *ns, const char *name);
/* Publishes the kind's state (no new snapshot when it is the store's already) and
 * frees r; false with e set when the snapshot cannot be built (the current one stays). */
bool dra_relist_commit(dra_relist *r, err *e);
void dra_relist_abort(dra_relist *r);   /* frees r, the store untouched; NULL: nothing */

/* The current snapshot, pinned (NULL before the first apply). */
dra_snapshot *dra_store_acquire(dra_store *st);
dra_snapshot *dra_snapshot_retain(dra_snapshot *s);
void dra_snapshot_release(dra_snapshot *s);

uint64_t dra_snapshot_generation(const dra_snapshot *s);
/* Wall-clock time it was published (Unix nanoseconds) and how long building took. */
int64_t dra_snapshot_built_unix_ns(const dra_snapshot *s);
uint64_t dra_snapshot_build_ns(const dra_snapshot *s);
/* Object counts by kind; the JSON is {"DeviceClass": n, "ResourceSlice": n, ...}. */
size_t dra_snapshot_count(const dra_snapshot *s, const char *kind);
json_t *dra_snapshot_counts_json(const dra_snapshot *s);
/* The [namespace, name] pairs of one kind's objects (namespace "" when cluster-scoped),
 * as a JSON array: what a relist compares with to find deletions. */
json_t *dra_snapshot_keys(const dra_snapshot *s, const char *kind);
/* The catalog the store's snapshots share: the names interned and the CEL programs
 * compiled for the objects alive in any snapshot still held. It follows the live
 * objects (catalog.h): after everything is deleted it is back to the size it started
 * at. For /debug/cache and /metrics. */
typedef struct dra_catalog_sizes {
    size_t names, name_bytes;        /* interned names, the bytes the table holds */
    size_t programs, program_bytes;  /* compiled CEL programs, their bytes */
} dra_catalog_sizes;
void dra_snapshot_catalog_sizes(const dra_snapshot *s, dra_catalog_sizes *out);
json_t *dra_catalog_sizes_json(const dra_catalog_sizes *c);
/* Names of the nodes the snapshot knows (Node objects), in name order. */
size_t dra_snapshot_nnodes(const dra_snapshot *s);
/* Node views this snapshot holds (built here or handed on), and in *bare how many of
 * them are of nodes without a Node object (at most 4,096: past that they are built per
 * request and not kept). For /debug/cache and tests. */
size_t dra_snapshot_cached_views(dra_snapshot *s, size_t *bare);
const char *dra_snapshot_node_name(const dra_snapshot *s, size_t i);
/* Builds the views of the snapshot's nodes that have none yet (made here or handed on
 * from an earlier snapshot): the nodes i with i % nlanes == lane, so that nlanes
 * threads can share the work; the views are handed on to later snapshots as those a
 * request builds. Returns how many were built. */
size_t dra_snapshot_warm_views(dra_snapshot *s, size_t lane, size_t nlanes);
/* How many of the snapshot's Node objects have no view yet; O(views made here). */
size_t dra_snapshot_views_missing(dra_snapshot *s);
/* True when every ResourceSlice names its node (spec.nodeName): no device is visible
 * from two nodes, so an allocation on one node changes no other node's answer
 * (engine/pod/allocatable.c; `dralloc plan` fits only the node that changed). */
bool dra_snapshot_slices_node_local(dra_snapshot *s);

/* ---- one pod ------------------------------------------------------------------------ */

/* Decodes the Pod (v1.Pod JSON as kube-scheduler sends it) and resolves its claims
 * against the snapshot. NULL with e set when the Pod itself is malformed (a 400 for
 * the extender). A pod whose claims are missing is not an error here: dra_pod_fit
 * reports it per node (unresolvable). */
dra_pod_request *dra_pod_request_new(dra_snapshot *s, const json_t *pod, err *e);
void dra_pod_request_free(dra_pod_request *pr);
/* When a claim of the pod exists only as its template (the resourceclaim controller
 * has not created it yet): a text naming it, else NULL. Bind mode cannot allocate a
 * claim that has no object; kube-scheduler retries the pod. */
const char *dra_pod_request_uncreated_claim(const dra_pod_request *pr);
/* False when the pod has no claims and no DRA-backed extended resources: every node
 * passes and nothing needs to be computed. */
bool dra_pod_request_needs_dra(const dra_pod_request *pr);
/* When the whole pod cannot be scheduled anywhere, whatever the node (a claim is
 * missing and no template exists, a DeviceClass is missing, a CEL error): the text,
 * else NULL. The extender answers it as `Error`. */
const char *dra_pod_request_error(const dra_pod_request *pr);
/* The DeviceClasses the pod's requests name — every request and firstAvailable
 * subrequest of its claims, and the classes its DRA extended resources map to — as a
 * JSON object {"<class>": true} (`dralloc plan`: which free devices a workload could
 * use at all). */
json_t *dra_pod_request_classes(const dra_pod_request *pr);

typedef enum dra_fit_status {
    DRA_FIT_OK = 0,
    DRA_FIT_UNSCHEDULABLE = 1,    /* not now; could fit when usage changes */
    DRA_FIT_UNRESOLVABLE = 2,     /* no change in usage helps (no such node, selector mismatch, no matching device) */
    DRA_FIT_TIMEOUT = 3,          /* the deadline passed before the node was decided */
    DRA_FIT_ERROR = 4,            /* fatal for the pod (CEL runtime error, ...) */
} dra_fit_status;

typedef enum dra_score_mode { DRA_SCORE_NONE = 0, DRA_SCORE_BINPACK, DRA_SCORE_SPREAD } dra_score_mode;

typedef struct dra_fit {
    /* what a scheduling cycle reads of every node first, and the reason's first bytes
     * (empty when it fits), on one cache line: a fit another thread wrote costs its
     * reader one line, not two */
    dra_fit_status status;
    bool memo_hit;                /* answered from the fit memo (no search) */
    int64_t score;                /* 0..10 (MaxExtenderPriority) under the request's mode */
    uint64_t steps;               /* allocator search steps spent */
    char reason[512];             /* why not (status != OK), for FailedNodes */
} dra_fit;

/* The fit memo. dra_pod_fit keeps each node's answer (status, score, reason) under the
 * pod's signature, and answers a later pod with the same signature on that node from
 * it, the reason written in that pod's own names. Entries live per node and are handed
 * on to the next snapshot while the node's inputs stay (store.c, memo_carry).
 *
 * An answer reads two things. From the snapshot: the node's view (its Node, the
 * slices it sees, the taint rules, the features), the in-use set of the pools the
 * view holds, the DeviceClasses, and the pods bound to the node (device-plugin
 * counts). memo_carry drops a node's entries whenever one of those changes. From the
 * pod, its signature (podfit.c, signature()) holds:
 *   - each spec.resourceClaims entry, in order. An entry that names the same claim as
 *     an earlier one is the index of that entry: a claim named twice is allocated
 *     once. An allocated claim is its store entry, which no later object reuses. An
 *     unallocated claim is its spec, and whether it is still only a template. Nothing
 *     else of an unallocated claim is read: its name appears only in reasons, and
 *     those are templated;
 *   - the containers' resources, when the pod asks for extended resources;
 *   - the pod's namespace/name and UID, when a pod of that namespace/name is bound in
 *     the snapshot. The device-plugin count leaves out a bound pod that is the pod
 *     being decided, by UID, or by name where either has no UID (dra__pod_same). The
 *     answer then depends on who asks.
 * Pods with a PodGroup, with whole-pod checks (dra_pod_request_check_node), or decided
 * against a Node carried in the request are never kept in the memo or answered from
 * it. tests/engine/test_memo.c compares a long-lived store's answers with a fresh
 * store's over random sequences of changes and pods. */

/* Decides one node. `node_obj`, when not NULL, is the Node as the request carried it
 * (nodeCacheCapable: false) and is used instead of the snapshot's. deadline_ns is
 * CLOCK_MONOTONIC nanoseconds (0: none). Thread-safe for distinct ctx. */
void dra_pod_fit(const dra_pod_request *pr, dra_alloc_ctx *x, const char *node, const json_t *node_obj,
                 dra_score_mode mode, uint64_t deadline_ns, dra_fit *out);

/* ---- planning: a private in-use overlay ----------------------------------------------- */

/* What `dralloc plan` commits as it places replicas: the snapshot's in-use set plus
 * the allocations committed so far, and pods placed per node. One thread at a time
 * (plan's loop); the snapshot stays untouched. */
typedef struct dra_overlay dra_overlay;

dra_overlay *dra_overlay_new(dra_snapshot *s);
void dra_overlay_free(dra_overlay *ov);
/* A second overlay holding what ov holds (its commits, pods per node, shared claims),
 * to go on from without changing ov: what replaying ov's commits on a new overlay
 * would give, at the cost of a copy. */
dra_overlay *dra_overlay_copy(const dra_overlay *ov);
/* As dra_pod_fit, against the overlay; with commit and a fit, the allocation (and the
 * pod, for the node's pods capacity and CPU/memory) is recorded in the overlay and
 * later fits see it. Shared claims already committed are reused, not allocated
 * again. */
void dra_pod_fit_overlay(const dra_pod_request *pr, dra_overlay *ov, dra_alloc_ctx *x, const char *node,
                         dra_score_mode mode, uint64_t deadline_ns, bool commit, dra_fit *out);
/* The overlay's fit memo (on by default): a node's answer for a pod with the same
 * needs (template claims) is reused while nothing was committed to that node and no
 * commit could reach other nodes. Off: every fit is decided (benchmarks of the
 * allocator itself). */
void dra_overlay_memo(dra_overlay *ov, bool on);
/* Moves the memo answers of `from`, a copy of ov (dra_overlay_copy) that another
 * thread decided nodes on, into ov: what ov's memo would hold had ov decided them.
 * Nothing may have been committed to either since the copy. */
void dra_overlay_memo_adopt(dra_overlay *ov, dra_overlay *from);

/* Whole-pod checks beside devices, as kube-scheduler's other Filter plugins make them
 * (NodeName, NodeAffinity: spec.nodeSelector and required node affinity,
 * TaintToleration: NoSchedule/NoExecute taints, NodeResourcesFit: cpu, memory and
 * pods against status.allocatable minus the pods bound or committed there). Off by
 * default (kube-scheduler runs them before the extender); `allocate --pod` and
 * `plan` turn them on. */
void dra_pod_request_check_node(dra_pod_request *pr, bool on);

/* ---- capacity view --------------------------------------------------------------------- */

/* What is allocated and what is allocatable now (ov: the overlay's view; NULL: the
 * snapshot's), as JSON (engine/pod/allocatable.h says how each device is decided):
 *   {"nodes": [{"name", "shape", "unavailable"?, TALLY, "pools": ["driver/pool"],
 *               "classes": [{"name", TALLY}], "carve"?: [CARVE]}],
 *    "pools": [{"driver", "pool", TALLY, "node"?, "incomplete"?,
 *               "counterSets": [{"name", "counters": {"<name>": {"capacity", "allocated", "free"}},
 *                                "carve"?: [{"profile", "devices", "allocated", "fit", "fitEmpty"}]}]}],
 *    "classes": [{"name", TALLY}],
 *    "shapes": [{"name", "instanceType"?, "nodes", TALLY, "classes", "carve"?}],
 *    "counters": [{"driver", "pool", "counterSet", "counter", "capacity", "allocated", "free"}]}
 * TALLY is "devices", "allocated" (held by a claim, exclusively or with a share), "free"
 * (allocatable now by a request without tolerations), "blocked": {"counters", "taints", "nodes"}
 * (not allocated, not allocatable now: a shared counter used up, an untolerated
 * NoSchedule/NoExecute taint of the device or a DeviceTaintRule), "nodes": free devices
 * on a node no pod can be scheduled to now — cordoned (spec.unschedulable), NotReady,
 * or a NoSchedule/NoExecute node taint, each node row saying which in "unavailable"
 * (DRA_CAPACITY_COUNT_UNAVAILABLE_NODES counts them free instead), then "unusable" (an
 * incomplete pool, a feature gate off) and "shared" (allocated multi-allocatable devices
 * with room for another share) when not zero. Every row with TALLY (but a counter row)
 * also has "util": by capacity where its devices draw on shared counters — the highest
 * of "capacityUtil": {"<counter family>": percent}, counters summed by name without a
 * trailing number (memorySlice0..7 → "memorySlice") over the row's counter sets (a
 * class: the sets its devices draw on) — else allocated / devices, in percent to 0.1.
 * CARVE sums a profile over counter sets: {"profile", "counterSets", "devices",
 * "allocated", "fit", "fitEmpty", "free"} — how many of its devices could be allocated
 * now together, and with nothing allocated; free: allocatable now each on its own.
 * Quantities print in Kubernetes' canonical form. */
json_t *dra_capacity_json(dra_snapshot *s, const dra_overlay *ov);
/* The same with parts left out (DRA_CAPACITY_*): without DRA_CAPACITY_COUNTERS, no
 * "counters" list and no per-counter values in the pools' counterSets (their "carve"
 * stays) — a 10,000-node fleet has hundreds of thousands of counters that a table or a
 * report never shows. dra_capacity_json is DRA_CAPACITY_ALL. */
enum { DRA_CAPACITY_COUNTERS = 1, DRA_CAPACITY_ALL = 1 };
/* Not a part: count the devices of unavailable nodes (cordoned, NotReady, or with a
 * NoSchedule/NoExecute taint) as allocatable now, as `capacity
 * --count-unavailable-nodes` asks; without it they are blocked "nodes". */
enum { DRA_CAPACITY_COUNT_UNAVAILABLE_NODES = 2 };
json_t *dra_capacity_json_parts(dra_snapshot *s, const dra_overlay *ov, unsigned parts);

/* As dra_pod_fit, and on a fit the allocation itself, for bind mode: a JSON array
 * with one entry per claim the pod needs allocated, in the pod's order,
 *   [{"namespace", "name", "allocation": AllocationResult}]
 * claims already allocated (shared) are listed as {"namespace", "name", "reuse": true};
 * a PodGroup's claim also has "podGroup": its group's name. NULL when the pod does
 * not fit (out says why). The implicit extended-resource claim is listed last with
 * "implicit": true, its "spec" (the requests to create it with) and
 * "requestMappings" (for the pod's status.extendedResourceClaimStatus); it has no
 * object yet. */
json_t *dra_pod_fit_allocation(const dra_pod_request *pr, dra_alloc_ctx *x, const char *node, uint64_t deadline_ns,
                               dra_fit *out);

const char *dra_fit_status_name(dra_fit_status s);   /* "fit", "unschedulable", ... */
bool dra_score_mode_parse(const char *s, dra_score_mode *out);   /* binpack|spread|none */

/* ---- kube-scheduler's PreBind on a claim (out/result_encode.c) ------------------------ */

/* What bindClaim writes into a ResourceClaim's JSON, in its two updates: first the
 * delete-protection finalizer (metadata.finalizers; false when it was there), then the
 * status: alloc as status.allocation when the claim has none (alloc NULL: none to set)
 * and consumer ({apiGroup?, resource, name, uid}; NULL: none) appended to
 * status.reservedFor. The one writer of those changes: the engine's claim output
 * (dra_pod_binding_reserve) writes them, extender/bind.c sends what they write. */
#define DRA_CLAIM_FINALIZER "resource.kubernetes.io/delete-protection"
bool dra_claim_prebind_finalizer(json_t *claim);
void dra_claim_prebind_status(json_t *claim, const json_t *alloc, const json_t *consumer);

#endif
