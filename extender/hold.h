/* hold.h — bind mode's holds (`serve --preemption=evict`): a node kept for a pod that
 * dralloc evicted victims for, while the victims terminate and their claims are
 * deallocated, so that no pod of the same or a lower priority takes what they free and
 * no second preemption starts for the same pod (a cascade).
 *
 * A hold is one preemptor (pod namespace/name/UID and priority), the node, the
 * victims evicted for it and the devices the room expects it to get, and an expiry
 * (wall clock, so that a replica that restores it from the API keeps the same one).
 * It is recorded on the preemptor itself — the label EXT_HOLD_LABEL (a new replica
 * finds every hold with one labelSelector LIST) and the annotation EXT_HOLD_ANNOTATION
 * (its JSON, ext_hold_annotation) — and kept here in memory, where /filter and /bind
 * read it.
 *
 * The hold covers the whole node, not only the victims' devices: bind mode decides
 * every pod against one shared snapshot, with no per-request way to treat some free
 * devices as taken for one pod and free for another, and a node-wide hold cannot be
 * wrong about which devices the preemptor will be given (the binder chooses them at
 * /bind). It is coarse by design: a hold lasts until the preemptor binds (seconds
 * after its victims' claims are freed), it is deleted, or the timeout.
 *
 * Who it blocks: at /filter, a pod other than the preemptor (nor another preemptor
 * holding the same node: each waits for its own victims' devices) whose priority is not
 * higher than the hold's (a higher one may take the node, as kube-scheduler lets a
 * higher-priority pod take a nominated node's room); at /bind (no priority known
 * there), any pod other than the preemptor that the hold's /filter did not let
 * through.
 *
 * Thread-safe (one mutex); holds are few (one per preemption in flight), so the table
 * is a small array scanned in full. */
#ifndef DRA_EXTENDER_HOLD_H
#define DRA_EXTENDER_HOLD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXT_HOLD_LABEL "dralloc.dev/hold"
#define EXT_HOLD_ANNOTATION "dralloc.dev/hold"

typedef struct ext_hold {
    char *ns, *name, *uid;       /* the preemptor */
    char *node;
    int32_t priority;            /* the preemptor's */
    int64_t expires_ns;          /* Unix time (CLOCK_REALTIME) */
    int64_t since_ns;            /* Unix time it was made or restored (sync grace) */
    json_t *victims;             /* [{"namespace", "name", "uid"}] */
    json_t *devices;             /* [{"request", "driver", "pool", "device"}] as the room chose them */
} ext_hold;

/* Frees what h points to (not h). */
void ext_hold_clear(ext_hold *h);
/* The annotation's value: {"node", "priority", "expires" (RFC 3339), "victims", "devices"}. */
char *ext_hold_annotation(const ext_hold *h);
/* A Pod carrying EXT_HOLD_ANNOTATION: *out filled (the caller clears it). False when
 * the pod has none or it does not read (then nothing to clear). */
bool ext_hold_from_pod(const json_t *pod, ext_hold *out);

typedef struct ext_holds ext_holds;

ext_holds *ext_holds_new(void);
void ext_holds_free(ext_holds *t);   /* NULL: nothing */
/* h copied in; an existing hold of the same UID is replaced. */
void ext_holds_put(ext_holds *t, const ext_hold *h);
/* False when uid holds nothing. */
bool ext_holds_drop(ext_holds *t, const char *uid);
bool ext_holds_has(ext_holds *t, const char *uid);
/* A copy of uid's hold (the caller clears it); false when none. */
bool ext_holds_get(ext_holds *t, const char *uid, ext_hold *out);
/* Whether node is held for another pod than uid. priority: the asking pod's (/filter),
 * NULL when not known (/bind). A pod of higher priority passes at /filter and is then
 * remembered as let through, so that its /bind passes too. who receives "ns/name" of
 * the preemptor when blocked. */
bool ext_holds_blocks(ext_holds *t, const char *node, const char *uid, const int32_t *priority, char *who, size_t n);
/* Copies of every hold (*out malloc'd; each cleared and out freed by the caller). */
size_t ext_holds_list(ext_holds *t, ext_hold **out);
size_t ext_holds_count(ext_holds *t);
/* [{"pod", "uid", "node", "priority", "expires", "victims"}] for the status page. */
json_t *ext_holds_json(ext_holds *t);

#endif
