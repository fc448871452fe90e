/* bind.h — bind mode (`dralloc serve --bind`): the extender owns allocation, for a
 * scheduler profile that disables the DynamicResources plugin (extender.md §5). On
 * kube-scheduler's /bind for a pod and a node it does what the plugin's Reserve and
 * PreBind would, then the DefaultBinder's work:
 *   1. takes the Pod /filter saw (ext_binder_saw_pod; else reads it from the API
 *      server) and decides it on the node against the current snapshot, holding the
 *      devices at once (Two phases, below);
 *   2. for each claim: adds the `resource.kubernetes.io/delete-protection` finalizer,
 *      then writes status.allocation (not for a shared claim already allocated) and
 *      adds the consumer to status.reservedFor through the /status subresource, each
 *      write carrying the resourceVersion it read (409: re-read and retry, a bounded
 *      number of times). The consumer is the pod, or for a PodGroup's claim
 *      (KEP-5729) the PodGroup {apiGroup: scheduling.k8s.io, resource: podgroups,
 *      name, uid} — nothing is written when the group already holds it;
 *   3. DRA extended resources (KEP-5004): the claim the plugin would create is
 *      POSTed (generateName "<pod>-extended-resources-", the pod as controlling
 *      owner, annotation resource.kubernetes.io/extended-resource-claim: "true", the
 *      plan's requests), written as in 2, and the pod's
 *      status.extendedResourceClaimStatus (requestMappings, resourceClaimName) set by
 *      a strategic-merge patch of pods/status;
 *   4. creates the pods/binding;
 *   5. on any failure rolls back what it wrote (its reservedFor entry, an allocation
 *      it made, a claim it created: finalizer removed, deleted) and answers the
 *      error, so kube-scheduler retries the pod.
 * Every claim written goes into the store as the API server answered it, before the
 * watch brings it: an allocation in flight (written, binding not yet created) counts
 * as in use for every later /filter and /bind. With a pending-writes table shared
 * with the watch (pending.h), no older version the watch delivers afterwards undoes
 * it. Nothing else does — /filter records
 * nothing, so a gang sibling kube-scheduler only placed tentatively takes no device
 * until its /bind writes it. Binds run concurrently, but their decisions are
 * serialized: each one decides against the snapshot that shows every allocation
 * decided before it — written, or held in the pending table while its writes are in
 * flight (pending.h, Holds) — so two binds never choose the same free device, and a
 * failed write gives its devices back. Claims not created yet (template claims before
 * the resourceclaim controller ran) are an error naming them. */
#ifndef DRA_EXTENDER_BIND_H
#define DRA_EXTENDER_BIND_H

#include "engine/snapshot.h"
#include "extender/kube.h"

typedef struct ext_binder ext_binder;
struct ext_pending;
struct ext_objcache;

/* pending: the table the watch of st uses (borrowed; NULL: none, the watch may then
 * undo a write for a moment). */
ext_binder *ext_binder_new(ext_kube *k, dra_store *st, struct ext_pending *pending);
/* Which devices a bind picks among those that fit (`--device-choice`; first-fit
 * unless set): the allocation written is the only one kept, so it is where best-fit
 * applies; /filter's answers do not depend on it. */
void ext_binder_set_device_choice(ext_binder *b, dra_device_choice c);
/* The watch's JSON of the ResourceClaims (borrowed; NULL, the default: each claim is
 * read from the API server before it is written). */
void ext_binder_set_claims(ext_binder *b, struct ext_objcache *claims);
void ext_binder_free(ext_binder *b);
/* A pod /filter was asked about: kept (a copy, by namespace/name, at most
 * EXT_BIND_PODS_MAX of them) so that its /bind decides on it instead of reading it
 * from the API server — under load that GET was the largest part of a bind (a quorum
 * read, queued by API priority and fairness). Used only when its UID is the one
 * /bind names; dropped when the bind succeeds. */
#define EXT_BIND_PODS_MAX 20000
void ext_binder_saw_pod(ext_binder *b, const json_t *pod);
/* How long kube-scheduler waits for a /bind (its extender httpTimeout; deploy/bind:
 * 5 s): a bind that has not begun writing by then, counted from the request's arrival,
 * releases its holds and answers an error instead. Set before serving. */
#define EXT_BIND_TIMEOUT_DEFAULT_S 5.0
void ext_binder_set_timeout(ext_binder *b, double seconds);
/* Told when a bind gives devices back (its writes failed, or it expired): kube-scheduler
 * may have parked pods on answers given while they were held (requeue.h). Borrowed; set
 * before serving; NULL: nobody. */
struct ext_requeue;
void ext_binder_set_requeue(ext_binder *b, struct ext_requeue *rq);

/* Two phases. kube-scheduler assumes a pod on its node when it sends the /bind and goes
 * on to /filter and /prioritize the next pod at once: the bind's devices must be in
 * use for those calls already, even while its writes wait for a pool thread. So:
 *   - ext_bind_prepare runs on the HTTP thread when the request arrives and only uses
 *     what is at hand (the pod /filter saw, the watch's claims, the snapshot): it
 *     decides and takes the holds (microseconds, under the decision lock). It may
 *     answer at once (the pod is bound already, the pod does not fit);
 *   - ext_bind_finish, on an offload thread, writes (or, when prepare needed a read —
 *     the pod not cached, a claim not in the watch's JSON — or has to wait for an
 *     earlier /bind of the same pod UID, does the whole bind there).
 * Past the deadline (ext_binder_set_timeout) and before its first write a job gives
 * its holds back and answers an error. A /bind of a pod UID whose earlier /bind is in
 * flight waits for it and answers from its outcome (bound to this node: success;
 * elsewhere or failed: an error); one of a pod already bound answers at once. */
typedef struct ext_bind_job ext_bind_job;
/* received_ns: when the request arrived (dra_monotonic_ns; 0: now). */
ext_bind_job *ext_bind_job_new(const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node,
                               uint64_t received_ns);
/* True: answered, *errmsg the answer (NULL: bound), j freed. False: j goes to
 * ext_bind_finish. */
bool ext_bind_prepare(ext_binder *b, ext_bind_job *j, char **errmsg);
/* The rest of the bind; frees j. NULL on success, else the error. */
char *ext_bind_finish(ext_binder *b, ext_bind_job *j);
/* Both phases on the calling thread. NULL on success, else the error for
 * ExtenderBindingResult.Error (caller frees). */
char *ext_bind(ext_binder *b, const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node);
/* Counters for metrics. */
uint64_t ext_binder_binds(const ext_binder *b);
uint64_t ext_binder_failures(const ext_binder *b);
uint64_t ext_binder_conflicts(const ext_binder *b);
/* Binds that reached their deadline before writing (answered an error, nothing written). */
uint64_t ext_binder_expired(const ext_binder *b);
/* Binds answered from an earlier bind of the same pod UID (in flight, or bound). */
uint64_t ext_binder_retried(const ext_binder *b);
/* Claims read from the API server (not found in the claims cache, or after a 409). */
uint64_t ext_binder_claim_gets(const ext_binder *b);
/* Binds in progress now. */
int ext_binder_inflight(const ext_binder *b);
/* Where a bind's time goes, summed over binds (seconds): reading the pod, waiting for
 * the decision lock, deciding and holding (under the lock), the claims' writes, the
 * pods/binding, rolling back after a failure, waiting for a thread to write. */
typedef enum ext_bind_phase {
    EXT_BIND_POD_GET = 0,
    EXT_BIND_LOCK_WAIT,
    EXT_BIND_DECIDE,
    EXT_BIND_CLAIM_WRITES,
    EXT_BIND_BINDING,
    EXT_BIND_ROLLBACK,
    EXT_BIND_QUEUE,              /* prepared, waiting for an offload thread */
    EXT_BIND_NPHASES
} ext_bind_phase;
const char *ext_bind_phase_name(ext_bind_phase p);
double ext_binder_phase_seconds(const ext_binder *b, ext_bind_phase p);

#endif
