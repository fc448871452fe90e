/* bind.h — bind mode (`dralloc serve --bind`): the extender owns allocation, for a
 * scheduler profile that disables the DynamicResources plugin (extender.md §5). On
 * kube-scheduler's /bind for a pod and a node it does what the plugin's Reserve and
 * PreBind would, then the DefaultBinder's work:
 *   1. reads the Pod from the API server and decides it on the node against the
 *      current snapshot;
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
/* NULL on success, else the error for ExtenderBindingResult.Error (caller frees). */
char *ext_bind(ext_binder *b, const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node);
/* Counters for metrics. */
uint64_t ext_binder_binds(const ext_binder *b);
uint64_t ext_binder_failures(const ext_binder *b);
uint64_t ext_binder_conflicts(const ext_binder *b);
/* Claims read from the API server (not found in the claims cache, or after a 409). */
uint64_t ext_binder_claim_gets(const ext_binder *b);
/* Binds in progress now. */
int ext_binder_inflight(const ext_binder *b);
/* Where a bind's time goes, summed over binds (seconds): reading the pod, waiting for
 * the decision lock, deciding and holding (under the lock), the claims' writes, the
 * pods/binding, rolling back after a failure. */
typedef enum ext_bind_phase {
    EXT_BIND_POD_GET = 0,
    EXT_BIND_LOCK_WAIT,
    EXT_BIND_DECIDE,
    EXT_BIND_CLAIM_WRITES,
    EXT_BIND_BINDING,
    EXT_BIND_ROLLBACK,
    EXT_BIND_NPHASES
} ext_bind_phase;
const char *ext_bind_phase_name(ext_bind_phase p);
double ext_binder_phase_seconds(const ext_binder *b, ext_bind_phase p);

#endif
