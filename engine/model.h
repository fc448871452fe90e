/* model.h — the compact in-memory form of the resource.k8s.io/v1 objects (and the
 * few core/v1 fields of Node and Pod) the allocator reads. Objects are decoded
 * once (decode_*.c) into these structs, all memory in the owning world's arena:
 * names that are compared often are interned ids, quantities parsed, versions
 * pre-parsed, and every device carries the `cel_device` view CEL evaluates on.
 * Strings are NUL-terminated copies; optional scalars carry a has_/tri-state flag
 * because Kubernetes distinguishes "unset" from "false" in several places
 * (adminAccess: false still counts as requested when the feature is off;
 * perDeviceNodeSelection: false still hides a slice without partitionable devices).
 * Private to engine/. */
#ifndef DRA_ENGINE_MODEL_H
#define DRA_ENGINE_MODEL_H

#include <string.h>

#include "base/arena.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/quantity.h"
#include "cel/cel.h"
#include "engine/context.h"

#define DRA_RESULTS_MAX 32   /* AllocationResultsMaxSize */

typedef struct dra_strs {
    const char **v;
    uint32_t n;
} dra_strs;

/* ---- node selectors (core/v1 NodeSelector) ----------------------------------- */

typedef enum dra_ns_op {
    DRA_NS_IN, DRA_NS_NOT_IN, DRA_NS_EXISTS, DRA_NS_DOES_NOT_EXIST, DRA_NS_GT, DRA_NS_LT,
    DRA_NS_INVALID,
} dra_ns_op;

typedef struct dra_ns_req {
    const char *key;
    const char *op_text;     /* as written, for output and error text */
    uint8_t op;              /* dra_ns_op */
    dra_strs values;
} dra_ns_req;

typedef struct dra_ns_term {
    dra_ns_req *exprs;       /* matchExpressions: node labels */
    uint32_t nexprs;
    dra_ns_req *fields;      /* matchFields: only metadata.name is supported */
    uint32_t nfields;
} dra_ns_term;

typedef struct dra_node_selector {
    dra_ns_term *terms;
    uint32_t nterms;
} dra_node_selector;

/* ---- ResourceSlice ------------------------------------------------------------ */

typedef struct dra_counter {
    const char *name;
    uint32_t name_id;
    quantity value;
} dra_counter;

typedef struct dra_counter_set {
    const char *name;        /* counter set name (sharedCounters) or referenced set (consumesCounters) */
    uint32_t name_id;
    dra_counter *counters;
    uint32_t ncounters;
} dra_counter_set;

/* requestPolicy (DRAConsumableCapacity) */
typedef struct dra_cap_policy {
    bool has_default;
    quantity dflt;
    quantity *valid_values;
    uint32_t nvalid;
    bool has_range;
    bool has_min, has_max, has_step;
    quantity rmin, rmax, step;
} dra_cap_policy;

/* 48 bytes: every device has a few, few have a request policy (which is 160 bytes:
 * held inline it made up a fifth of a large cluster's store, bench mig_5000nodes). */
typedef struct dra_capacity {
    const char *key;         /* the map key as written ("memory", "example.com/bw") */
    uint32_t key_id;         /* key interned: what the in-use capacity is keyed by */
    quantity value;
    const dra_cap_policy *policy;   /* NULL: no requestPolicy */
} dra_capacity;

typedef struct dra_taint {
    const char *key, *value, *effect;
    const char *time_added;
} dra_taint;

/* What constraints need beyond the CEL view: versions compare as the text written. */
typedef struct dra_attr_text {
    const char *key;         /* the attribute's map key as written */
    const char *ver;         /* version text (CEL_ATTR_VERSION) */
    const char **vers;       /* version texts (CEL_ATTR_VERSIONS) */
} dra_attr_text;

typedef struct dra_device {   /* 760,000 of them in a MIG-carved fleet: fields ordered to leave no padding */
    const char *name;
    cel_device cel;          /* attributes and capacity as CEL sees them */
    dra_attr_text *attr_text;   /* parallel to cel.attrs */
    dra_capacity *caps;      /* parallel to cel.caps */
    dra_counter_set *consumes;
    /* per-device node access (only with perDeviceNodeSelection) */
    const char *node_name;
    dra_node_selector *node_selector;
    dra_taint *taints;
    dra_strs binding_conditions, binding_failure_conditions;
    uint32_t name_id;
    uint32_t nconsumes;
    uint32_t ntaints;
    bool all_nodes;
    bool allow_multi;
    bool binds_to_node;
} dra_device;

typedef struct dra_slice {
    const char *name;
    const char *driver;
    uint32_t driver_id;
    const char *pool;
    uint32_t pool_id;        /* interned pool name */
    uint32_t pool_key;       /* interned "driver/pool": the pool's identity */
    int64_t generation;
    int64_t slice_count;
    const char *node_name;   /* NULL or "" when unset */
    bool all_nodes;
    dra_node_selector *node_selector;
    int8_t per_device_node_selection;   /* -1 unset, 0 false, 1 true */
    dra_device *devices;
    uint32_t ndevices;
    dra_counter_set *shared_counters;
    uint32_t nshared;
    uint32_t index;          /* position in the input order */
    uint32_t node_id;        /* interned node_name, set when decoded; 0: no node name */
} dra_slice;

/* ---- DeviceClass ---------------------------------------------------------------- */

typedef struct dra_config {
    const char *source;      /* status only: FromClass / FromClaim */
    dra_strs requests;
    bool has_opaque;
    const char *driver;
    const char *params_json; /* opaque.parameters, compact JSON text (re-emitted verbatim) */
} dra_config;

typedef struct dra_selector {
    const char *cel;         /* NULL when the selector has no `cel` (unsupported type) */
    /* compiled when the object is decoded, held by it (catalog.h); NULL with
     * compile_error when it does not compile (reported where Kubernetes reports it) */
    const cel_program *prog;
    const char *compile_error;
} dra_selector;

typedef struct dra_class {
    const char *name;
    uint32_t name_id;
    dra_selector *selectors;
    uint32_t nselectors;
    dra_config *configs;
    uint32_t nconfigs;
    const char *extended_resource_name;
    const char *creation_timestamp;   /* metadata.creationTimestamp (RFC 3339), may be NULL */
} dra_class;

/* ---- ResourceClaim ------------------------------------------------------------- */

typedef struct dra_toleration {
    const char *key, *op, *value, *effect;
    bool has_seconds;
    int64_t seconds;
} dra_toleration;

typedef struct dra_cap_request {
    const char *key;
    uint32_t domain, id;     /* resolved like device capacity names (driver-relative unqualified) */
    quantity value;
} dra_cap_request;

/* derivedAttributes[] entry (DRADerivedAttributes): a virtual attribute computed
 * per candidate device, seen only by matchAttribute / distinctAttribute. */
typedef struct dra_derived_attr {
    const char *name;        /* "domain/id" as written */
    uint32_t domain, id;     /* interned parts (0 when the name has no '/') */
    const char *expression;
    /* compiled at decode (catalog.h); NULL with compile_error when it does not compile */
    const cel_program *prog;
    const char *compile_error;
} dra_derived_attr;

/* What ExactDeviceRequest and DeviceSubRequest have in common. */
typedef struct dra_request_spec {
    const char *name;
    const char *class_name;
    dra_selector *selectors;
    uint32_t nselectors;
    const char *mode;        /* "ExactCount", "All", or anything else (rejected at allocation) */
    int64_t count;
    bool has_count;
    int8_t admin_access;     /* -1 unset, 0 false, 1 true */
    dra_toleration *tols;
    uint32_t ntols;
    dra_cap_request *caps;
    uint32_t ncaps;
    bool has_capacity;       /* capacity field present (even empty) */
    dra_derived_attr *derived;   /* derivedAttributes (engine/alloc/derived.c) */
    uint32_t nderived;
} dra_request_spec;

typedef struct dra_request {
    const char *name;
    bool has_exactly;
    dra_request_spec exactly;
    dra_request_spec *subs;  /* firstAvailable */
    uint32_t nsubs;
} dra_request;

typedef struct dra_constraint {
    dra_strs requests;
    const char *match_attr;
    const char *distinct_attr;
    /* the attribute name interned at decode: (domain, id), or only id when the name
     * is unqualified (the domain is each device's driver) */
    uint32_t attr_domain, attr_id;
} dra_constraint;

typedef struct dra_cap_value {
    const char *key;
    uint32_t key_id;         /* key interned (0: unknown, looked up by key) */
    quantity value;
} dra_cap_value;

/* One status.allocation.devices.results[] entry (also what the allocator produces). */
typedef struct dra_device_result {
    const char *request;
    const char *driver, *pool, *device;
    /* dra_device_key of (driver/pool, device), set where the names are interned (a
     * decoded claim holds them; the allocator's results come from a view); 0: unknown */
    uint64_t key;
    int8_t admin_access;     /* -1 unset */
    const char *share_id;
    dra_cap_value *consumed;
    uint32_t nconsumed;
    /* produced by the allocator only (copied from request and device) */
    const dra_toleration *tols;
    uint32_t ntols;
    dra_strs binding_conditions, binding_failure_conditions;
} dra_device_result;

/* One device of a claim's status.allocation as decoded (decode_claim.c) and kept by the
 * store for every allocated claim: what the in-use set and the memo read, in 64 bytes.
 * dra_device_result above is the allocator's, with the fields only it produces
 * (tolerations, binding conditions: 120 bytes); at 100,000 nodes the store keeps
 * ~2.9 M of these (bench/README.md, "Fleet scale"). */
typedef struct dra_claim_result {
    const char *request;
    const char *driver, *pool, *device;
    uint64_t key;            /* dra_device_key of (driver/pool, device), interned at decode */
    const char *share_id;
    dra_cap_value *consumed;
    uint32_t nconsumed;
    int8_t admin_access;     /* -1 unset */
} dra_claim_result;

typedef struct dra_claim {
    const char *ns;          /* may be NULL */
    const char *name;
    const char *uid;
    bool has_spec;
    dra_request *reqs;
    uint32_t nreqs;
    dra_constraint *constraints;
    uint32_t nconstraints;
    dra_config *configs;
    uint32_t nconfigs;
    bool allocated;          /* status.allocation present */
    dra_claim_result *alloc_results;
    uint32_t nalloc_results;
    const char *raw_json;    /* the object as read, for printing it back with a status
                              * (for a template's claim: its spec only); read it with
                              * dra_claim_object (engine.h) */
    bool raw_results_elided; /* raw_json holds null for status.allocation.devices.results:
                              * alloc_results give them back (decode_claim.c) */
    bool from_template;      /* generated from a ResourceClaimTemplate */
    /* hash of the spec (keys sorted), set at ingest: claims with the same needs share
     * fit answers (podfit.c); 0 when unknown */
    uint64_t spec_hash;
    /* status.allocation.nodeSelector, decoded at ingest (ingest.c); NULL: anywhere */
    dra_node_selector *alloc_node_selector;
    const char *alloc_node_selector_error;   /* a selector that does not parse */
    /* 1 + the store entry's arrival number (store.c): an identity that no later object
     * reuses, unlike the address, so fit answers keyed by it may outlive the snapshot
     * (the memo handed on). 0 outside a store. */
    uint64_t store_seq;
} dra_claim;

typedef struct dra_claim_template {
    const char *ns, *name;
    dra_claim spec;          /* spec.spec, decoded as a claim without metadata */
    const char *meta_json;   /* spec.metadata (labels, annotations) as text, or NULL */
} dra_claim_template;

/* ---- core/v1 --------------------------------------------------------------------- */

typedef struct dra_label {
    const char *key, *value;
} dra_label;

/* A resource name and an integer amount (status.allocatable, a pod's extended
 * resources): extended resources are whole numbers. */
typedef struct dra_res_count {
    const char *name;
    int64_t value;
} dra_res_count;

/* A Node as the API server stores it (decode_core.c): status.allocatable defaulted
 * from status.capacity when absent (SetDefaults_NodeStatus). */
typedef struct dra_node {
    const char *name;
    dra_label *labels;
    uint32_t nlabels;
    const char *raw_json;    /* the object as read */
    /* status.allocatable entries that are whole numbers, sorted by name */
    dra_res_count *allocatable;
    uint32_t nallocatable;
    /* for the whole-pod checks (nodefit.c) */
    dra_taint *taints;       /* spec.taints */
    uint32_t ntaints;
    bool unschedulable;      /* spec.unschedulable */
    bool not_ready;          /* a Ready condition whose status is not "True" (False, Unknown);
                              * a Node without one (a hand-written fixture) is not NotReady */
    bool has_allocatable;    /* status.allocatable present (or defaulted) */
    int64_t alloc_cpu_milli, alloc_memory, alloc_pods;   /* -1: not listed */
} dra_node;

typedef struct dra_pod_claim {
    const char *name;
    const char *claim_name;      /* resourceClaimName */
    const char *template_name;   /* resourceClaimTemplateName */
    const char *generated_name;  /* status.resourceClaimStatuses[].resourceClaimName */
} dra_pod_claim;

/* One container's resources. */
typedef struct dra_podres_cont {
    const char *name;
    bool init, sidecar;
    const char **keys;       /* every resource key of requests ∪ limits, sorted */
    uint32_t nkeys;
    const char **res;        /* its extended resources and their counts */
    int64_t *count;
    uint32_t nres;
} dra_podres_cont;

/* A container's count of one extended resource (0: none). */
static inline int64_t dra_podres_cont_count(const dra_podres_cont *k, const char *r) {
    for (uint32_t i = 0; i < k->nres; i++)
        if (!strcmp(k->res[i], r)) return k->count[i];
    return 0;
}

/* A pod's extended resources (podplan.h says how they are served). */
typedef struct dra_podres {
    dra_podres_cont *c;      /* init containers first, then containers */
    uint32_t nc;
    const char **names;      /* every extended resource of the pod, sorted */
    int64_t *total;          /* effective pod request */
    int64_t *steady;         /* containers + sidecars */
    int64_t *peak;           /* init peak */
    uint32_t *peak_at;       /* container index of the init peak */
    uint32_t n;
} dra_podres;

typedef struct dra_node_toleration {
    const char *key, *value, *effect;   /* "" when unset */
    bool exists;                        /* operator Exists (else Equal) */
} dra_node_toleration;

/* A pod's node requirements (kube-scheduler's NodeName, NodeAffinity and
 * TaintToleration plugins read them; nodefit.c). */
typedef struct dra_nodefit {
    const char *node_name;              /* spec.nodeName, NULL when unset */
    dra_label *selector;                /* spec.nodeSelector */
    uint32_t nselector;
    dra_node_selector *affinity;        /* required node affinity, NULL when none */
    dra_node_toleration *tols;
    uint32_t ntols;
} dra_nodefit;

/* A Pod, decoded once (decode_core.c) with everything requests read. Problems that
 * do not stop the pod from loading (a resource that is not a whole number, an
 * affinity that does not parse) are kept and reported when the pod is decided. */
typedef struct dra_pod {
    const char *ns, *name, *node_name;
    const char *uid;         /* metadata.uid, or NULL: a pod's identity (dra__pod_same) */
    dra_pod_claim *claims;
    uint32_t nclaims;
    const char *raw_json;    /* the object as read */
    const char *group_name;  /* spec.schedulingGroup.podGroupName */
    bool terminated;         /* status.phase Succeeded or Failed */
    const dra_podres *res;   /* NULL when the pod asks for no extended resource */
    const char *res_error;   /* why its resources could not be read, else NULL */
    int64_t req_cpu_milli, req_memory;   /* effective requests (init/sidecar rule) */
    dra_nodefit fit;         /* its node requirements */
    const char *fit_error;   /* why they could not be read (the affinity), else NULL */
} dra_pod;

/* "driver/pool", the text a pool is interned as (pool_key), in stack when it fits (else
 * malloc'd: the caller frees it when it is not stack). *len is its length. */
static inline char *dra_pool_id(const char *driver, const char *pool, char *stack, size_t n, size_t *len) {
    size_t a = strlen(driver), b = strlen(pool);
    char *buf = a + b + 1 <= n ? stack : xmalloc(a + b + 1);
    memcpy(buf, driver, a);
    buf[a] = '/';
    memcpy(buf + a + 1, pool, b);
    *len = a + b + 1;
    return buf;
}

/* Interned key of a device: pool_key (interned "driver/pool") and device name. */
static inline uint64_t dra_device_key(uint32_t pool_key, uint32_t name_id) { return hmap_pair(pool_key, name_id); }

#endif
