/* evict.h — bind mode's opt-in preemption (`serve --preemption=evict`): when dralloc's
 * own /filter leaves a pod with no node, dralloc evicts the lower-priority pods whose
 * devices it needs, through the Eviction API, and holds the node for it (hold.h).
 *
 * Why dralloc does it and not kube-scheduler: in bind mode the DynamicResources plugin
 * is disabled except PreEnqueue, so kube-scheduler's DefaultPreemption dry run finds
 * that the pod fits every node without victims, and kube-scheduler 1.37 drops a
 * candidate node with no victims (k8s.io/kubernetes v1.37.2,
 * pkg/scheduler/framework/preemption/preemption.go, findCandidates and
 * DryRunPreemption: "expected at least one victim pod on node %q") — the extender's
 * preempt verb is never asked about those nodes.
 *
 * The work runs on a thread of its own, never on /filter's: ext_evictor_rejected only
 * queues the pod. For each one the thread
 *   1. skips it unless it may preempt: priority > 0, preemptionPolicy not Never, no
 *      hold yet (in the table or in its own annotation: a hold means its victims are
 *      terminating, so no second preemption cascades), not tried within retry_s;
 *   2. reads the pod again (GET): bound, deleted or held since /filter asked — it waited
 *      in the queue — it is left alone;
 *   3. lists the pods bound to up to max_nodes of the nodes /filter failed as
 *      Unschedulable (GET /api/v1/pods?fieldSelector=spec.nodeName=N:
 *      dralloc watches no pods, and their priorities and start times are what
 *      preemption orders victims by), and takes their claims from the watch's JSON;
 *   4. asks a room (engine/preempt.h, dra_room_new) for the best candidate in
 *      kube-scheduler's order (pickOneNodeForPreemption) that has a victim, over the
 *      nodes listed only, with what other holds wait for counted as taken (their
 *      victims going, their devices and nodes promised: dra_room_take); a pod that
 *      fits as things are is left alone and asked again after retry_s. No
 *      PodDisruptionBudget is read (dralloc watches none): the Eviction API refuses
 *      what would violate one, and the pod is tried again after retry_s;
 *   5. records the hold on the preemptor (label + annotation, a merge patch) and in the
 *      table, then POSTs a policy/v1 Eviction for each victim with its UID as a
 *      precondition. The API server enforces PodDisruptionBudgets: a 429 stops the
 *      preemption there — with no victim evicted yet the hold is released; after some,
 *      the hold is released too and the Event names who was evicted and who not (an
 *      eviction cannot be undone, and the evicted pods' devices then go to whoever
 *      fits, as after any pod's exit);
 *   6. posts Events (core/v1): "Preempted" on each victim, "Preempting" (or
 *      "FailedPreemption") on the preemptor.
 * Every sync_s it lists the pods labelled EXT_HOLD_LABEL (all namespaces): holds made
 * by another replica are restored (a new leader keeps them); a held pod that is bound
 * or being deleted, or whose hold expired, is released (label and annotation removed,
 * an Event "PreemptionHoldReleased"); one gone from the list is dropped. A /bind of the
 * preemptor releases its hold at once (ext_evictor_bound). While holds exist, each sync
 * also asks the requeue (requeue.h) to wake the pods kube-scheduler parked: a held pod
 * rejected before its victims' devices came free may hear no other event (seen on
 * kube-scheduler 1.37.2: a held pod waited out a 60 s hold).
 *
 * Every API failure is logged and counted; the pod is tried again after retry_s. */
#ifndef DRA_EXTENDER_EVICT_H
#define DRA_EXTENDER_EVICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/snapshot.h"
#include "extender/hold.h"
#include "extender/kube.h"

struct ext_objcache;
struct ext_lease;

typedef struct ext_evictor_opts {
    double hold_s;               /* a hold's lifetime (--preemption-hold), default 300 */
    double sync_s;               /* the holds LIST period, default 5 */
    double retry_s;              /* a pod is not tried again sooner, default 10 */
    unsigned max_nodes;          /* nodes whose pods are listed per preemption, default 16 */
    struct ext_lease *lease;     /* --leader-elect: a standby restores holds but writes nothing */
    struct ext_requeue *requeue; /* woken retry_s after a refused preemption: kube-scheduler parked
                                  * the pod, and nothing else may ask for it again (requeue.h) */
    bool quiet;                  /* no log lines (tests) */
} ext_evictor_opts;

typedef struct ext_evictor ext_evictor;

/* claims: the watch's ResourceClaim JSON (objcache.h), the holds table: both borrowed,
 * outliving the evictor. Starts the thread. */
ext_evictor *ext_evictor_start(ext_kube *k, dra_store *st, struct ext_objcache *claims, ext_holds *holds,
                               const ext_evictor_opts *o);
void ext_evictor_stop(ext_evictor *ev);   /* NULL: nothing */

/* /filter answered no node for pod: nodes are those it failed as Unschedulable (the
 * candidates). Cheap: checks and queues (at most a few hundred pods queued). */
void ext_evictor_rejected(ext_evictor *ev, const json_t *pod, const char *const *nodes, size_t n);
/* The pod uid was bound by /bind: its hold (if any) is released. */
void ext_evictor_bound(ext_evictor *ev, const char *uid);

typedef struct ext_evictor_stats {
    uint64_t preemptions;        /* holds made and every victim evicted */
    uint64_t evictions;          /* Evictions the API server accepted */
    uint64_t refused;            /* preemptions stopped by a 429 (PodDisruptionBudget) or another error */
    uint64_t released;           /* holds released (bound, deleted, expired) */
    uint64_t restored;           /* holds read back from the API (made elsewhere) */
    uint64_t api_errors;         /* requests that failed */
} ext_evictor_stats;
void ext_evictor_stats_of(ext_evictor *ev, ext_evictor_stats *out);
/* {"holds": [...], "preemptions", "evictions", "refused", "released", "restored", "apiErrors"} */
json_t *ext_evictor_status_json(ext_evictor *ev);

#endif
