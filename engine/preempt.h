/* preempt.h — making room for a pending pod: which lower-priority pods to evict so
 * that it fits (`dralloc why --make-room`, the extender's preempt verb, `plan`).
 *
 * kube-scheduler's DefaultPreemption decides victims without DRA: its DynamicResources
 * plugin has no AddPod/RemovePod, so evicting a pod never frees a device in its dry
 * run. A room decides the same question with what a victim frees made exact: the
 * devices, counters and consumed capacity of its allocated claims, a claim reserved by
 * several pods only when every one of them is a victim (a claim held by a pod that
 * stays is not freed), and its pod count, cpu and memory on the node.
 *
 * The search follows kube-scheduler 1.37 (pkg/scheduler/framework/preemption and
 * plugins/defaultpreemption):
 *   - the preemptor's priority and preemptionPolicy as the Priority admission plugin
 *     sets them (spec.priority, else the PriorityClass of spec.priorityClassName, else
 *     the globalDefault class with the lowest value, else 0); preemptionPolicy Never:
 *     no candidate;
 *   - nodes where it fails as Unschedulable (not UnschedulableAndUnresolvable) are
 *     tried in the snapshot's node order, until max(100, 10 % of the nodes)
 *     candidates are found and one violates no PDB (DryRunPreemption; kube-scheduler
 *     starts at a random offset, a room at 0 so the answer is reproducible);
 *   - on a node (SelectVictimsOnNode): every pod of lower priority removed, the
 *     preemptor must fit; the pods sorted by MoreImportantVictim (priority, then the
 *     earlier start), split by FilterVictimsWithPDBViolation (status.disruptionsAllowed
 *     of each matching PDB spent in that order) and reprieved, PDB-violating ones
 *     first, from the most important down. kube-scheduler keeps the first reprieve that
 *     fits (greedy); a room takes that as its first answer and then searches the
 *     other choices, branch and bound, for the set that is best under the order
 *     below (the greedy set can evict three small pods where one larger one would
 *     do), so its victims are never worse than kube-scheduler's under kube-scheduler's
 *     own order. Without allow_pdb_violations a pod that would violate a PDB is never
 *     a victim;
 *   - candidates ordered as pickOneNodeForPreemption orders them: fewest PDB
 *     violations, lowest highest-victim priority, smallest sum of (priority + 2^31),
 *     fewest victims, latest earliest start of the highest-priority victims, then the
 *     node order.
 * A pod with a PodGroup (spec.schedulingGroup) makes room for every pending member of
 * its group: members one after another (the named pod first, then input order), each
 * on its best candidate with the earlier members' victims gone and their devices
 * taken; none if one member has none.
 *
 * Victims are individual pods (kube-scheduler 1.37 also preempts whole PodGroups as one
 * victim; a room does not). */
#ifndef DRA_ENGINE_PREEMPT_H
#define DRA_ENGINE_PREEMPT_H

#include "engine/engine.h"

typedef struct dra_room dra_room;

/* A room over snapshot s whose objects are items (the JSON array the snapshot was
 * built from: Pods, ResourceClaims, PriorityClasses and PodDisruptionBudgets are read
 * from it; other kinds are skipped). NULL with e set on bad input: a pod naming a
 * PriorityClass that does not exist (the admission plugin's text, "no PriorityClass
 * with name X was found"), a PriorityClass or PDB without a name, a value that is not
 * an integer. */
dra_room *dra_room_new(dra_snapshot *s, const json_t *items, err *e);
void dra_room_free(dra_room *r);
/* A room over the pods bound to the given nodes and the claims they name, read from
 * the snapshot's objects as they were read (a store with keep_text: NULL with e saying
 * so otherwise), with pod (a Pod as kube-scheduler sends it) added: what the extender's
 * preempt verb needs, without reading the whole cluster per request. Priorities come
 * from spec.priority (the API server sets it on every pod); no PriorityClass or PDB is
 * read. */
dra_room *dra_room_new_nodes(dra_snapshot *s, const json_t *pod, const char *const *nodes, size_t n, err *e);
/* What is promised to another pod (the extender's holds, extender/hold.h) is no room
 * for this one: devices ([{"driver", "pool", "device"}], may be NULL) counted in use
 * from the start of every query, beside the snapshot's allocations (the device itself,
 * not the counters it consumes); and node (may be NULL), where a pod that fits as
 * things are does not count as fitting — the free devices there may be the promised
 * ones under other names (the binder's first fit picks its own) — though victims may
 * still be searched there. */
void dra_room_take(dra_room *r, const char *node, const json_t *devices);
/* Whether snapshot s holds ResourceClaim ns/name allocated; *uid its UID (borrowed from
 * s, NULL when unknown) and *obj (new, or NULL) the object as the store read it when it
 * keeps the objects' text: what a caller gathering a room's objects from elsewhere (a
 * cache, the API server) checks its copies against. */
bool dra_room_claim_allocated(dra_snapshot *s, const char *ns, const char *name, const char **uid, json_t **obj);
/* Appends to names (an array) the claim names pod's object holds: its entries'
 * resourceClaimName, the generated names of its status, and its extended-resource
 * claim — what evicting it could free. */
void dra_room_pod_claim_names(const json_t *pod, json_t *names);
/* The kinds only a room reads (PriorityClass, PodDisruptionBudget): a store refuses
 * them, so a caller keeps them out of its store. */
bool dra_room_reads_only(const char *kind);

typedef struct dra_room_opts {
    bool allow_pdb_violations;   /* consider victims that violate a PDB (kube-scheduler does) */
    uint32_t list;               /* candidates listed (0: 3; UINT32_MAX: all) */
    uint32_t max_steps;          /* fit checks per node before its search keeps its best so far (0: 4096) */
    bool all_nodes;              /* try every node, not only until kube-scheduler's number of candidates */
} dra_room_opts;

typedef enum dra_room_status {
    DRA_ROOM_FOUND = 0,          /* some candidate (or the pod fits as things are) */
    DRA_ROOM_NONE = 1,           /* no set of victims on any node lets it fit */
    DRA_ROOM_ERROR = 2,          /* e says why */
} dra_room_status;

/* Room for the pending pod ns/name (its whole group when it has one):
 *   {"pod": "ns/name", "priority": N, "fits": bool, "candidates": [
 *      {"node", "victims": [{"namespace", "name", "priority"}], "pdbViolations": N,
 *       "devices": [{"request", "driver", "pool", "device"}], "exact": bool}]}
 * best candidate first ("fits": true: the pod fits as things are, and candidates are
 * nodes where it does, with no victims). A group adds "podGroup" and each candidate
 * "pod": one candidate per member, in the order they were placed. "exact": false when
 * the node's search stopped at max_steps (its victims are then kube-scheduler's or
 * better, not proven best). Errors (status DRA_ROOM_ERROR, NULL): the pod not found,
 * not pending (bound to a node, finished, being deleted). */
json_t *dra_room_make(dra_room *r, const char *ns, const char *name, const dra_room_opts *o, dra_room_status *status,
                      err *e);

/* Defragmentation advice (`dralloc plan --defrag`): the pending pods (higher priority
 * first, then input order) placed one by one; one that fits nowhere as things are gets
 * room by moves — running pods evicted and placed again on another node, each of them
 * fitting there (its claims decided again), chosen as a preemption's victims would be
 * on each node but among pods that can move (running, in no PodGroup, holding only
 * claims of their own) and never against a PDB (each move spends the disruption
 * budget), fewest moves first; no pod is evicted without a new place. At most
 * max_moves moves in all (< 0: no limit).
 *   {"pods": [{"pod", "node", "moves": n} | {"pod", "unplaced": "why"}],
 *    "moves": [{"pod": "ns/name", "from", "to"}], "strandedBefore": n, "strandedAfter": n}
 * stranded: free devices (allocatable now, as `dralloc capacity` counts them) on nodes
 * where none of the pods still unplaced fits — before the moves, and after them with
 * the pods placed. Status FOUND when every pending pod is placed, NONE when one is
 * not; NULL with e on an error (a pod that does not decode). */
json_t *dra_room_defrag(dra_room *r, long max_moves, dra_room_status *status, err *e);

/* `dralloc plan --preempt`: the pending pods (higher priority first, as kube-scheduler's
 * queue takes them, then input order) placed one by one: on the first node where one
 * fits, else on its best preemption candidate (dra_room_make's order) with the
 * victims evicted; the evictions listed. Pods placed earlier by this call are never
 * victims: they come in priority order, so none placed before has a lower priority.
 *   {"pods": [{"pod", "node", "evictions": n} | {"pod", "unplaced"}],
 *    "evictions": [{"pod": "ns/name", "node", "by": "ns/name"}], "strandedBefore", "strandedAfter"} */
json_t *dra_room_preempt_all(dra_room *r, bool allow_pdb, dra_room_status *status, err *e);

/* The extender's preempt verb (ExtenderPreemptionArgs.NodeNameToMetaVictims in,
 * ExtenderPreemptionResult.NodeNameToMetaVictims out): for pod ns/name on each node of
 * victims ({"<node>": {"Pods": [{"UID"}], "NumPDBViolations": n}}), kube-scheduler's
 * victims there and, where they do not free the devices the pod needs, the fewest more
 * pods of lower priority that do (the room's search, its order); a node where no set
 * works is left out. A node sent with no victims (kube-scheduler sends those since
 * kubernetes#135486) is answered with the victims DRA needs. */
json_t *dra_room_extend(dra_room *r, const char *ns, const char *name, const json_t *victims, err *e);

/* Whether pod ns/name fits node with the pods of victims ([{"namespace", "name"}])
 * removed, decided afresh (a new in-use state, not the search's): what a checker
 * compares the search with. */
bool dra_room_fits_without(dra_room *r, const char *ns, const char *name, const char *node, const json_t *victims,
                           err *e);

#endif
