/* preempt_internal.h — private to engine/preempt*.c: the state a search for room works
 * on. A room (dra_room, preempt.h) reads the objects once: every Pod with its priority
 * (spec.priority, else its PriorityClass, else the globalDefault class, else 0), its
 * labels, start time and node; every PodDisruptionBudget; every allocated
 * ResourceClaim with the pods reserving it. A search then removes pods from one
 * in-use state (a clone of the snapshot's) and puts them back, freeing a claim only
 * while every pod reserving it is removed, and asks the allocator whether the
 * preemptor fits (dra__pod_fit_state, podfit.c). */
#ifndef DRA_ENGINE_PREEMPT_INTERNAL_H
#define DRA_ENGINE_PREEMPT_INTERNAL_H

#include "engine/preempt.h"
#include "engine/pod/podplan.h"
#include "engine/pod/nodefit.h"
#include "engine/store/store_internal.h"
#include "engine/world/world.h"

/* podfit.c: one node against in-use state st (not the snapshot's), the node's pods,
 * cpu and memory changed by delta (pods removed: negative) from base (the pods bound
 * there, counted by the caller; NULL: counted here, a scan of every pod); reallocate: the pod's
 * allocated claims decided again as if unallocated (a pod moved: the caller has taken
 * their devices out of st); with kept and a fit, the allocation (memory of a and x). */
void dra__pod_fit_state(const dra_pod_request *pr, const dra_allocated *st, const dra_node_usage *base,
                        const dra_node_usage *delta, dra_alloc_ctx *x, arena *a, const char *node, bool reallocate,
                        dra_fit *out, dra_podnode *kept);

typedef struct dra__rpod {
    const char *ns, *name, *uid, *node;   /* node: spec.nodeName, NULL when pending */
    const char *group;                    /* spec.schedulingGroup.podGroupName */
    int32_t priority;
    bool never;                           /* preemptionPolicy Never */
    bool gone;                            /* terminated or being deleted */
    int64_t start_ns;                     /* status.startTime; INT64_MAX when unset (kube: now) */
    const json_t *obj;                    /* the Pod as read */
    const dra_pod *wpod;                  /* the world's (cpu, memory), NULL when absent */
    uint32_t *claims;                     /* indexes into room->claims it reserves */
    uint32_t nclaims;
    bool evicted;                         /* a victim of an earlier member of the group (one query) */
} dra__rpod;

typedef struct dra__rclaim {
    const dra_claim *c;                   /* the world's */
    uint32_t nreservers;                  /* pods in status.reservedFor that are not gone */
    bool pinned;                          /* reserved for something else than a pod: never freed */
    uint32_t removed;                     /* reservers removed by the current search */
} dra__rclaim;

typedef struct dra__pdb {
    const char *ns, *name;
    const json_t *selector;               /* spec.selector (NULL: matches nothing) */
    const json_t *disrupted;              /* status.disruptedPods */
    int32_t allowed;                      /* status.disruptionsAllowed */
} dra__pdb;

typedef struct dra__qnode {
    const char *node;
    dra_node_usage d;
} dra__qnode;
typedef DRA_VEC(dra__qnode) dra__usage_vec;
typedef struct dra__usage_map {
    dra__usage_vec nodes;                 /* entries are added, never taken away */
    hmap idx;                             /* node name hash → index+1 (zero-initialised: empty) */
} dra__usage_map;
typedef DRA_VEC(uint32_t) dra__idx_vec;
typedef struct dra__node_pods {
    const char *node;
    dra__idx_vec v;
} dra__node_pods;

struct dra_room {
    dra_snapshot *s;
    const dra_world *w;
    arena a;
    json_t *items;                        /* held */
    DRA_VEC(dra__rpod) pods;
    DRA_VEC(dra__rclaim) claims;
    DRA_VEC(dra__pdb) pdbs;
    hmap pods_by_node;                    /* hash of node name → index+1 into node_pods */
    DRA_VEC(dra__node_pods) node_pods;
    dra_allocated *st;                    /* the search's in-use state */
    bool cc;                              /* DRAConsumableCapacity */
    dra_alloc_ctx *x;
    bool movable_only;                    /* defrag: only pods that can be placed again are searched */
    hmap usage_idx;                       /* node name hash → index+1 into usage */
    dra__usage_vec usage;                 /* per node: the world's pods bound there (dra__node_usage) */
    json_t *taken;                        /* devices in use from the start of every query (dra_room_take) */
    json_t *held;                         /* node names where fitting as things are does not count (dra_room_take) */
};

/* preempt.c: the usage a query changed per node (members placed, pods moved), and the
 * state back to the snapshot's, nothing removed, evicted or spent */
dra_node_usage *dra__usage_at(dra__usage_map *m, const char *node);
void dra__usage_free(dra__usage_map *m);
void dra__room_fresh(dra_room *r);

/* preempt_objects.c */
bool dra__room_read(dra_room *r, err *e);
/* The pods bound to a node (indexes into r->pods), NULL when none. */
const uint32_t *dra__room_node_pods(const dra_room *r, const char *node, size_t *n);
/* The usage of the world's pods bound to node (never NULL: zero when none). */
const dra_node_usage *dra__room_base(const dra_room *r, const char *node);
/* Whether a pod can be moved: running, in no PodGroup (a gang moves whole or not at
 * all; a room never splits one), every claim its own. */
bool dra__room_movable(const dra_room *r, uint32_t pod);
/* Whether the PDB's selector selects the pod (an invalid or empty one selects none). */
bool dra__pdb_selects(const dra__pdb *b, const dra__rpod *p);

/* preempt_search.c: removing a pod from the state and putting it back */
void dra__room_remove(dra_room *r, uint32_t pod, dra_node_usage *delta);
void dra__room_restore(dra_room *r, uint32_t pod, dra_node_usage *delta);

/* A node where the preemptor fits once its victims are gone, and the numbers
 * pickOneNodeForPreemption orders candidates by. */
typedef struct dra__cand {
    const char *node;
    uint32_t *victims;                    /* pod indexes, most important first */
    size_t n;
    int64_t pdb;                          /* victims that violate a PDB */
    int64_t maxprio;                      /* highest victim priority (INT64_MIN: none) */
    int64_t sum;                          /* sum of (priority + 2^31) */
    int64_t start;                        /* earliest start among the highest-priority victims */
    bool exact;                           /* the search was not cut short */
    json_t *devices;                      /* [{"request", "driver", "pool", "device"}] (owned) */
} dra__cand;

/* pickOneNodeForPreemption's order without its last rule (the node order): < 0 when
 * a is the better candidate. */
int dra__cand_cmp(const dra__cand *a, const dra__cand *b);
/* The best victims on node for pr (priority prio), the node's usage changed by base
 * (earlier members of a group placed there); the state is as it was after. False
 * when no set of victims lets it fit. Memory from a. */
bool dra__room_node_search(dra_room *r, const dra_pod_request *pr, int32_t prio, const char *node,
                           const dra_node_usage *base, const dra_room_opts *o, arena *a, dra__cand *out);

#endif
