/* requeue.h — bind mode's wake-up for the pods kube-scheduler parked on dralloc's word.
 *
 * A pod that an extender leaves with no node goes to kube-scheduler's unschedulable pods
 * with "Extender" as its rejector, and leaves them only on a cluster event registered
 * for extenders (pkg/scheduler/framework/types.go, UnrollWildCardResource: pods, Nodes,
 * storage, ResourceClaims, DeviceClasses — no ResourceSlice, no DeviceTaintRule) or after
 * podMaxInUnschedulablePodsDuration, 5 minutes. Capacity can appear to dralloc without
 * such an event reaching kube-scheduler after dralloc has seen it:
 *   - a ResourceSlice published (a new node's driver, a driver restarting) or a
 *     DeviceTaintRule lifted: kube-scheduler hears nothing at all;
 *   - a claim deallocated or deleted: kube-scheduler hears it, but may ask dralloc again
 *     before dralloc's own watch has applied it, get "no" once more, and park the pod
 *     with nothing left to wake it;
 *   - a /bind that gave its devices back after kube-scheduler stopped waiting for it.
 * Measured on kube-scheduler 1.37.2 (tests/e2e, slice_wake): a pod that fit nowhere
 * was still pending 60 s after a ResourceSlice with a device for it was created.
 *
 * So, when such a change reaches dralloc's store and this process has answered a
 * /filter with no node since its last wake-up (within the 5 minutes a pod stays
 * parked), it updates an annotation of a ResourceClaim of its own (NS/NAME, created
 * when missing, allocating nothing): a ResourceClaim event, which moves every pod an
 * extender rejected back to kube-scheduler's queue (after its backoff). Writes are
 * coalesced to one per interval; a standby, asked nothing, never writes. A failed write
 * is logged once per status and counted; nothing else depends on it.
 *
 * Thread-safe: ext_requeue_rejected and ext_requeue_changed are called from the
 * server's and the watch's threads; one thread of its own writes. */
#ifndef DRA_EXTENDER_REQUEUE_H
#define DRA_EXTENDER_REQUEUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "extender/kube.h"

typedef struct ext_requeue ext_requeue;

typedef struct ext_requeue_opts {
    const char *ns;              /* the claim's namespace: dralloc's own (required) */
    const char *name;            /* default "dralloc-requeue" */
    double interval_s;           /* at most one write per interval, default 1 */
    double parked_s;             /* how long a rejected pod may stay parked, default 300 */
    bool quiet;                  /* no log lines (tests) */
} ext_requeue_opts;

/* Starts the writer thread; NULL k: a requeue that never writes (tests). */
ext_requeue *ext_requeue_start(ext_kube *k, const ext_requeue_opts *o);
void ext_requeue_stop(ext_requeue *r);   /* NULL: nothing */

/* A /filter answered with no node: the pod is parked on dralloc's word. since_ns: when
 * the answer began (CLOCK_MONOTONIC, before its snapshot was acquired). A change told
 * (ext_requeue_changed) at or after since_ns may be missing from the answer, and no
 * later change may come to wake the pod: such a rejection asks for a write itself.
 * NULL r: nothing. */
void ext_requeue_rejected(ext_requeue *r, uint64_t since_ns);
/* Capacity may have appeared (why: a few words, for the annotation and the log). A write
 * follows when some pod was rejected since the last one. NULL r: nothing. */
void ext_requeue_changed(ext_requeue *r, const char *why);
/* Whether an applied watch change of `kind` may free capacity (above): a ResourceSlice
 * added or changed, a DeviceTaintRule changed or deleted, a ResourceClaim deleted or left
 * without an allocation — other than the requeue's own claim. obj: the object (NULL for
 * a deletion); ns/name: the deleted object's. */
bool ext_requeue_frees(const ext_requeue *r, const char *kind, const json_t *obj, const char *ns, const char *name);

/* {"claim": "ns/name", "writes": N, "failures": N, "lastWhy": "..."} */
json_t *ext_requeue_status_json(ext_requeue *r);
uint64_t ext_requeue_writes(ext_requeue *r);

#endif
