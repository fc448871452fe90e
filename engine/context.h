/* context.h — what a service needs to run the engine, and all extender/ and planner/
 * take from beside the store (snapshot.h) and the causes (causes.h): the feature
 * gates, the per-thread allocation context with its deadline, seed and device
 * choice, the clock deadlines are measured on, the namespace rule and the YAML
 * reader. engine.h (a snapshot's world read directly and the allocator, for the CLI,
 * the fixtures and the benches) includes it; a service never needs engine.h.
 *
 *   dra_features f;  dra_features_default(&f);  dra_features_parse(&f, gates, &e);
 *   dra_alloc_ctx *x = dra_alloc_ctx_new();      // one per thread, reused
 *   dra_alloc_ctx_set_deadline(x, dra_monotonic_ns() + timeout_ns, &cancelled);
 *   ... dra_pod_fit(pr, x, node, ...) (snapshot.h) ...
 *   dra_alloc_ctx_free(x); */
#ifndef DRA_CONTEXT_H
#define DRA_CONTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/clock.h"
#include "base/error.h"

/* ---- features ------------------------------------------------------------------ */

typedef struct dra_features {
    bool admin_access;          /* DRAAdminAccess */
    bool prioritized_list;      /* DRAPrioritizedList */
    bool partitionable;         /* DRAPartitionableDevices */
    bool device_taints;         /* DRADeviceTaints */
    bool binding_conditions;    /* DRADeviceBindingConditions + DRAResourceClaimDeviceStatus */
    bool consumable_capacity;   /* DRAConsumableCapacity */
    bool list_type_attributes;  /* DRAListTypeAttributes */
    bool derived_attributes;    /* DRADerivedAttributes (engine/alloc/derived.c) */
    bool extended_resource;     /* DRAExtendedResource (engine/pod/podplan.c) */
    bool workload_claims;       /* DRAWorkloadResourceClaims (engine/world/podgroup.c) */
    bool filter_timeout;        /* DRASchedulerFilterTimeout: a node's allocation gives up after
                                 * DynamicResourcesArgs.filterTimeout (10 s unless set; the
                                 * caller applies it, see DRA_FILTER_TIMEOUT_DEFAULT_NS) */
    /* The two gates binding_conditions stands for, each as set (so setting one of them
     * later does not lose the other). */
    bool gate_binding_conditions;   /* DRADeviceBindingConditions */
    bool gate_device_status;        /* DRAResourceClaimDeviceStatus */
    /* DRA gates of Kubernetes 1.37 that do not change what this engine computes: accepted
     * by name and recorded, nothing reads them (features.c says why for each). */
    bool dynamic_resource_allocation;    /* DynamicResourceAllocation */
    bool device_taint_rules;             /* DRADeviceTaintRules */
    bool device_compatibility_groups;    /* DRADeviceCompatibilityGroups */
    bool fractional_capacity_range;      /* DRAFractionalCapacityRange */
    bool node_allocatable_resources;     /* DRANodeAllocatableResources */
    bool optional_node_operations;       /* DRAOptionalNodeOperations */
    bool granular_status_authorization;  /* DRAResourceClaimGranularStatusAuthorization */
    bool pod_resources_dra;              /* KubeletPodResourcesDynamicResources */
    bool resource_health_status;         /* ResourceHealthStatus */
} dra_features;

/* kube-scheduler's DynamicResourcesFilterTimeoutDefault: 10 s per node and pod. */
#define DRA_FILTER_TIMEOUT_DEFAULT_NS (10 * 1000000000ll)

/* Kubernetes 1.37 defaults. */
void dra_features_default(dra_features *f);
/* "DRAPrioritizedList=true,DRADeviceTaints=false": every DRA feature gate of Kubernetes
 * 1.37 by name; any other name is an error ("unknown feature gate X"). */
bool dra_features_parse(dra_features *f, const char *spec, err *e);
/* The value of gate `name` in f (for the two binding gates, each one's own setting);
 * false when the name is not a DRA gate of Kubernetes 1.37. */
bool dra_features_get(const dra_features *f, const char *name, bool *on);

/* ---- the allocation context ----------------------------------------------------- */

/* Per-thread scratch for the allocator (an arena, CEL scratch): reuse it call after
 * call; the search itself never mallocs. */
typedef struct dra_alloc_ctx dra_alloc_ctx;

dra_alloc_ctx *dra_alloc_ctx_new(void);
void dra_alloc_ctx_free(dra_alloc_ctx *x);

/* Bounds the search of every later dra_allocate call on x: it stops with
 * DRA_ALLOC_TIMEOUT once CLOCK_MONOTONIC passes deadline_ns (0: no deadline) or
 * *cancel (may be NULL) turns true — checked every few search steps, as Go's
 * allocator checks its context. */
void dra_alloc_ctx_set_deadline(dra_alloc_ctx *x, uint64_t deadline_ns, const _Atomic bool *cancel);
/* Makes the shareIDs of later dra_allocate calls on x a reproducible function of
 * seed (by default they come from getrandom(2)); never an ID already in use. */
void dra_alloc_ctx_set_seed(dra_alloc_ctx *x, uint64_t seed);
/* The same source for what else the CLI makes up as the API server would (names
 * from GenerateName, a pod's missing UID): 64 random bits, and a version-4 UUID
 * text, each a draw that advances x as a shareID does. */
uint64_t dra_alloc_ctx_random(dra_alloc_ctx *x);
void dra_alloc_ctx_uuid(dra_alloc_ctx *x, char buf[37]);

/* Which of the satisfying allocations dra_allocate returns (engine/alloc/bestfit.c).
 *   first-fit  the first one in Kubernetes' search order: exactly the devices the
 *              DynamicResources plugin picks (the default).
 *   best-fit   among the allocations the same search finds on the node (a branch
 *              and bound over Kubernetes' search order), up to a
 *              bound (DRA_BESTFIT_MAX_SOLUTIONS solutions, DRA_BESTFIT_MAX_STEPS
 *              search steps and DRA_BESTFIT_MAX_TICKS candidate visits after the
 *              first one, and never more than DRA_BESTFIT_MAX_NS of CPU time or past
 *              the context's deadline), the one that leaves the node least
 *              fragmented. Lexicographic objective, each tier deciding only ties of
 *              the ones before it (ties after the last: the earliest, i.e. the
 *              first-fit answer):
 *                0. firstAvailable: the subrequests chosen, compared request by
 *                   request in claim order, no later than the earliest solution's;
 *                1. fewest shared-counter sets (whole physical GPUs under MIG-like
 *                   partitions) taken from wholly free to partly used;
 *                2. fewest multi-allocatable devices (consumable capacity) taken
 *                   from unused to partly used;
 *                3. fewest pcieRoot groups (attribute resource.kubernetes.io/pcieRoot)
 *                   and then 4. NUMA groups (an attribute named numaNode or numa, any
 *                   domain) taken from wholly free to partly used;
 *                5. fewest units (counter sets, multi-allocatable devices, groups)
 *                   left partly used — neither free nor full — afterwards;
 *                6. most concentrated use: the largest sum over touched units of
 *                   fill² (fill: the unit's used share, in [0, 1]), which puts a
 *                   small request into the fullest unit it fits (classic best fit).
 *              Satisfiability never changes: best-fit only picks among solutions
 *              the exact search finds, and returns the same status as first-fit
 *              (a deadline that passes after the first solution ends the
 *              enumeration with the best one so far). */
typedef enum dra_device_choice { DRA_CHOICE_FIRST_FIT = 0, DRA_CHOICE_BEST_FIT = 1 } dra_device_choice;

enum {
    DRA_BESTFIT_MAX_SOLUTIONS = 256,   /* solutions scored */
    DRA_BESTFIT_MAX_STEPS = 8192,      /* allocateOne calls after the first solution */
    DRA_BESTFIT_MAX_TICKS = 1 << 17,   /* candidate-loop iterations after the first solution */
};
#define DRA_BESTFIT_MAX_NS 2000000ull   /* 2 ms of CPU after the first solution: the safety net */

/* For later dra_allocate calls on x; a new context starts first-fit. */
void dra_alloc_ctx_set_device_choice(dra_alloc_ctx *x, dra_device_choice c);
dra_device_choice dra_alloc_ctx_device_choice(const dra_alloc_ctx *x);
/* "first-fit" | "best-fit" */
bool dra_device_choice_parse(const char *s, dra_device_choice *out);
const char *dra_device_choice_name(dra_device_choice c);

/* Whether fits decided with x explain a failure (dra_fit.reason; on for a new
 * context). A caller that reads only a fit's status and score (the scaling matrix's
 * filter) turns it off: the explanation, a second pass over every candidate and its
 * text, is most of what a node that does not fit costs, and nobody would read it.
 * Off, a failed fit's reason is empty, and the fit memos neither keep such an answer
 * nor give it to a caller with reasons on. */
void dra_alloc_ctx_set_reasons(dra_alloc_ctx *x, bool on);
bool dra_alloc_ctx_reasons(const dra_alloc_ctx *x);

/* The clock deadlines are measured on (base/clock.h's CLOCK_MONOTONIC), named here
 * because it is part of the contract of every deadline_ns the engine takes. */
static inline uint64_t dra_monotonic_ns(void) { return monotonic_ns(); }

/* ---- the namespace rule ----------------------------------------------------------- */

/* A namespaced object's namespace as the API server defaults it: "default" when unset. */
static inline const char *dra_ns(const char *ns) { return ns && *ns ? ns : "default"; }

#endif
