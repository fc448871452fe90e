/* bind.h — bind mode (`dralloc serve --bind`): the extender owns allocation, for a
 * scheduler profile that disables the DynamicResources plugin (extender.md §5). On
 * kube-scheduler's /bind for a pod and a node it does what the plugin's Reserve and
 * PreBind would, then the DefaultBinder's work:
 *   1. reads the Pod from the API server and decides it on the node against the
 *      current snapshot — which already holds every allocation this process wrote,
 *      so allocations in flight count as in use for every later /filter and /bind;
 *   2. for each claim: adds the `resource.kubernetes.io/delete-protection` finalizer,
 *      then writes status.allocation (not for a shared claim already allocated) and
 *      appends the pod to status.reservedFor through the /status subresource, each
 *      write carrying the resourceVersion it read (409: re-read and retry, a bounded
 *      number of times);
 *   3. creates the pods/binding;
 *   4. on any failure rolls back what it wrote (reservedFor entry, allocation it
 *      made) and answers the error, so kube-scheduler retries the pod.
 * Binds are serialized: two binds never choose from the same free devices. Claims
 * not created yet (template claims before the resourceclaim controller ran) are an
 * error naming them. */
#ifndef DRA_EXTENDER_BIND_H
#define DRA_EXTENDER_BIND_H

#include "engine/snapshot.h"
#include "extender/kube.h"

typedef struct ext_binder ext_binder;

ext_binder *ext_binder_new(ext_kube *k, dra_store *st);
void ext_binder_free(ext_binder *b);
/* NULL on success, else the error for ExtenderBindingResult.Error (caller frees). */
char *ext_bind(ext_binder *b, const char *pod_ns, const char *pod_name, const char *pod_uid, const char *node);
/* Counters for metrics. */
uint64_t ext_binder_binds(const ext_binder *b);
uint64_t ext_binder_failures(const ext_binder *b);
uint64_t ext_binder_conflicts(const ext_binder *b);

#endif
