/* watch.h — the live cache: list+watch of the DRA objects from a kube-apiserver into
 * a dra_store, one thread per kind (DeviceClasses, ResourceSlices, ResourceClaims,
 * Nodes, DeviceTaintRules, and PodGroups when asked), as client-go's reflector does it:
 *   - the initial state as a streaming list where the server offers it (KEP-3157
 *     WatchList: a watch with sendInitialEvents=true whose ADDED events end with a
 *     BOOKMARK annotated k8s.io/initial-events-end), else — the server answers the
 *     request with a 4xx, sends a plain bookmark first (it ignores the parameter),
 *     or never ends the initial events — in pages
 *     (limit/continue; an expired continue token restarts the list); either way it
 *     replaces that kind's objects in the store at once (objects gone are deleted),
 *     one snapshot, never a partial state — decoded as it comes, so a list holds no
 *     more than one page's JSON (the store's dra_relist);
 *   - watch from the list's resourceVersion with bookmarks; the events of each chunk
 *     received become one snapshot (a burst of changes is one swap, not thousands);
 *   - a watch answered `410 Gone` / an ERROR event with code 410 (the version was
 *     compacted away) relists; a cut or stalled stream reconnects from the last
 *     resourceVersion; failures back off exponentially with full jitter, and 429/5xx
 *     answers wait for their Retry-After;
 *   - a kind the server does not serve (404) counts as listed and empty, and is
 *     tried again every few minutes.
 * Bind mode shares a pending-writes table (pending.h) with the binder: a version of an
 * object this process wrote that arrives after our write is not applied (nor, from a
 * relist, one that may predate it), so the store never goes back to before a write.
 * resourceVersions are opaque strings. Readiness: every kind listed once (a streaming
 * list counts when its initial-events-end bookmark arrives) and none unable to list
 * or watch for longer than max_staleness. */
#ifndef DRA_EXTENDER_WATCH_H
#define DRA_EXTENDER_WATCH_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/snapshot.h"
#include "extender/kube.h"

typedef struct ext_watch ext_watch;

typedef struct ext_watch_opts {
    double max_staleness_s;      /* default 60 */
    long page_limit;             /* list page size, default 500 */
    long idle_s;                 /* a stream silent this long is stalled: reconnect (default 90) */
    long watch_timeout_s;        /* server-side timeoutSeconds of a watch (default 300) */
    double backoff_max_s;        /* default 30 */
    bool quiet;                  /* no log lines (tests) */
    bool no_watch_list;          /* paged lists only, never sendInitialEvents (--watch-list=false) */
    bool podgroups;              /* watch scheduling.k8s.io/v1alpha2 PodGroups (gate DRAWorkloadResourceClaims) */
    bool verbose;                /* a log line per stale version skipped */
    struct ext_pending *pending; /* bind mode's pending writes (borrowed; NULL: every version applies) */
    struct ext_objcache *claims; /* bind mode: the JSON of every ResourceClaim version applied (borrowed; NULL: none) */
    struct ext_requeue *requeue; /* bind mode: told of applied changes that may free devices (borrowed; NULL: none) */
} ext_watch_opts;

/* Starts the threads; they run until ext_watch_stop. */
ext_watch *ext_watch_start(ext_kube *k, dra_store *st, const ext_watch_opts *o);
void ext_watch_stop(ext_watch *w);
bool ext_watch_ready(ext_watch *w);
/* Per kind: resourceVersion (of the last event applied or skipped, once the store
 * reflects it), listed, served, initial state (streaming or paged list), events,
 * relists, errors, failing for (s), the last error while failing; with a pending-writes
 * table also pendingWrites (marks now), staleSkipped, pendingExpired and
 * writesSeenFirst (writes whose event came before their answer); a kind not
 * watched (PodGroup without the gate) is {"watched": false}. */
json_t *ext_watch_status_json(ext_watch *w);
/* The watch-stream decoder on its own, for the fuzzer and tests: chunks[0..nchunks)
 * of one watch stream of `kind` (JSON lines {type, object}; a line may be split
 * across chunks, a trailing partial line is left unparsed, as after a cut), applied
 * to the store exactly as a live watch applies them. *relist tells whether an ERROR
 * 410 asked for a relist (the rest of the stream is then dropped, as the watch does).
 * False for a kind the cache does not watch. */
bool ext_watch_feed(dra_store *st, const char *kind, const char *const *chunks, const size_t *lens, size_t nchunks,
                    bool *relist);

/* Totals for metrics. */
uint64_t ext_watch_events(ext_watch *w);
uint64_t ext_watch_relists(ext_watch *w);
/* Events of objects bind mode wrote, older than the write, not applied (pending.h). */
uint64_t ext_watch_stale_skipped(ext_watch *w);

#endif
