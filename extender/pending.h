/* pending.h — the pending writes of bind mode: which objects this process wrote and
 * the resourceVersion the API server answered, until the watch delivers that version.
 *
 * Why. Bind mode puts each claim it writes into the store at once, as the server
 * answered it, so that the allocation counts as in use for every later /filter and
 * /bind. The watch, however, can still deliver OLDER versions of that claim (the
 * event of our own finalizer update, anybody's earlier update): applied blindly, one
 * would overwrite ours and make the allocated devices look free until the event of
 * our write arrives — long enough for a concurrent /bind to give them away again.
 *
 * How, without ordering resourceVersions (they are opaque strings: only equality
 * means anything). A watch stream delivers an object's events in order, so once our
 * write returned resourceVersion R for key K, every event for K that arrives before
 * the one carrying R is older than what the store holds. A mark K → R is kept
 * ("pending"); for an ADDED or MODIFIED event of K:
 *   - resourceVersion R: applied, the mark cleared;
 *   - another: skipped (counted as stale); it is remembered as the watch's latest word
 *     on K (the "view");
 *   - DELETED: applied, the mark cleared (nothing older can follow a deletion).
 * A relist (a list after 410, the initial list, a streaming list) replaces a kind's
 * objects; its items say less, because the list request may have been answered from
 * a state before our write:
 *   - K listed with R: the mark is cleared (applied; it is ours anyway);
 *   - K listed with another version: the list may predate our write — the store keeps
 *     ours, the mark stays, the listed object becomes the view;
 *   - K absent from the list: the list may predate the create — the store keeps ours,
 *     the mark stays, the view is "gone".
 * Every mark is bounded by a timeout (2 × --max-staleness in `dralloc serve`): after it
 * the mark is dropped and the watch's view wins (the view is applied; with no view,
 * nothing the watch delivered contradicts ours and the next event applies as usual),
 * so an event that never comes — the list postdated our write and somebody changed K
 * since — cannot pin a stale object for ever.
 * Deleting is a write too: after our DELETE, K is marked gone; ADDED/MODIFIED events
 * for it are skipped until its DELETED event comes.
 *
 * The race with the watch. The event of R may be delivered while our request is still
 * in flight, before we know R. So the writer announces each write (ext_pending_begin)
 * and while any write of a kind is in flight every version the watch delivers of that
 * kind is journaled per key; when the answer comes and R (or K's deletion) is already
 * in the journal, no mark is made: the store already has that version, or a newer one
 * (if the watch had been skipping, its view — which is R or newer — is applied).
 *
 * Holds: a reservation in flight. Bind mode decides an allocation under its lock and
 * writes it after letting go of the lock, so that binds run side by side; meanwhile the
 * devices must count as in use for every other /bind and /filter. ext_pending_hold puts
 * the claim as it is about to be written (the "tentative": allocation and reservedFor
 * set) into the store at once and holds its key: every version the watch delivers of
 * it is skipped (kept as the view) while the hold lasts, whatever its resourceVersion.
 * The hold keeps the version it was taken over (the "base") and, as the writes go
 * through (ext_pending_wrote_held: a finalizer added), the server's latest answer.
 * It ends one of two ways:
 *   - the write of the allocation came back (ext_pending_wrote): that answer goes into
 *     the store and is marked as any write is (above);
 *   - it failed (ext_pending_release): the store goes back to what the server holds —
 *     the watch's view when it delivered something newer than our own writes, else
 *     the base — so the devices are allocatable again.
 * A hold has no timeout: it lives as long as one bind's requests, and each of those
 * has one. A key is held by one bind at a time.
 *
 * Atomicity. The writer's store update plus mark (ext_pending_wrote/deleted) and the
 * watch's decision plus store update (ext_pending_lock … the *_locked calls …
 * dra_store_apply … ext_pending_unlock) run under one mutex, so a version decided
 * stale can never be applied after ours, nor ours after a newer one. Lock order: this
 * mutex, then the store's writer lock. */
#ifndef DRA_EXTENDER_PENDING_H
#define DRA_EXTENDER_PENDING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/snapshot.h"

typedef struct ext_pending ext_pending;

/* timeout_s: the longest a mark lives (≤ 0: 60 s). */
ext_pending *ext_pending_new(double timeout_s);
void ext_pending_free(ext_pending *p);
double ext_pending_timeout(const ext_pending *p);

/* ---- the writer (bind.c) -------------------------------------------------------------------- */

/* A write of `kind` is about to be sent (from now the watch journals what it delivers). */
void ext_pending_begin(ext_pending *p, const char *kind);
/* It came back without an object (failed, 409, no answer): the journal may be dropped. */
void ext_pending_abandon(ext_pending *p, const char *kind);
/* It came back: obj is the object as the server stored it (kind, metadata.namespace,
 * name and resourceVersion set). Goes into st and is marked, unless the watch already
 * delivered it (then st keeps what the watch gave it). Ends the write, and the hold
 * of the key if there is one. */
void ext_pending_wrote(ext_pending *p, dra_store *st, const json_t *obj);
/* A reservation (see Holds above): tentative goes into st and its key is held; base is
 * the version it was decided over (NULL: the object does not exist yet — a release
 * then removes it from st). No write begins here. False, nothing changed, when the
 * key is held already (another bind is writing it). */
bool ext_pending_hold(ext_pending *p, dra_store *st, const json_t *base, const json_t *tentative);
/* A write of a held object came back (obj: the answer, e.g. the finalizer added) and
 * the hold goes on: obj is its base from now, the store keeps the tentative. Ends the
 * write. */
void ext_pending_wrote_held(ext_pending *p, const json_t *obj);
/* The hold of kind/ns/name ends without its write: st gets the server's version back
 * (the watch's view, else the base). Nothing when the key is not held. */
void ext_pending_release(ext_pending *p, dra_store *st, const char *kind, const char *ns, const char *name);
/* Whether kind/ns/name is held (tests). */
bool ext_pending_held(ext_pending *p, const char *kind, const char *ns, const char *name);
/* A DELETE of kind/ns/name succeeded and the object is gone: removed from st (when it
 * is there) and marked gone, unless the watch delivered the deletion. Ends the write. */
void ext_pending_deleted(ext_pending *p, dra_store *st, const char *kind, const char *ns, const char *name);

/* ---- the watch (watch.c), between ext_pending_lock and ext_pending_unlock ------------------- */

void ext_pending_lock(ext_pending *p);
void ext_pending_unlock(ext_pending *p);

typedef enum ext_pending_verdict {
    EXT_PENDING_APPLY = 0,       /* not pending, or the version of our write: apply */
    EXT_PENDING_SKIP,            /* older than the store's (ours): do not apply */
    EXT_PENDING_EXPIRED,         /* the mark timed out just now: apply, the watch's view wins */
} ext_pending_verdict;

/* A watch event of `obj` (deleted: a DELETED event, obj its last state). When
 * `ours` is not NULL it receives the resourceVersion of our write (for a log line). */
ext_pending_verdict ext_pending_event_locked(ext_pending *p, const char *kind, const json_t *obj, bool deleted,
                                             char *ours, size_t ours_n);
/* A relist: `obj` is one of its items. SKIP: the store keeps ours. */
ext_pending_verdict ext_pending_listed_locked(ext_pending *p, const char *kind, const json_t *obj);
/* A relist without kind/ns/name, which the store has. SKIP: the store keeps ours. */
ext_pending_verdict ext_pending_unlisted_locked(ext_pending *p, const char *kind, const char *ns, const char *name);

/* The marks of `kind` older than the timeout are dropped; fn gets each one (ns "" when
 * cluster-scoped) with the watch's view when it has one (has_view): the object to
 * apply, or NULL when the watch says it is gone. Returns how many marks expired. */
size_t ext_pending_expire_locked(ext_pending *p, const char *kind,
                                 void (*fn)(void *arg, const char *ns, const char *name, bool has_view,
                                            const json_t *view),
                                 void *arg);

/* ---- counters --------------------------------------------------------------------------------- */

typedef struct ext_pending_stats {
    size_t marks;                /* pending now */
    uint64_t skipped;            /* stale versions not applied (events and list items) */
    uint64_t expired;            /* marks dropped by the timeout */
    uint64_t seen_first;         /* writes whose version the watch delivered before the answer came */
    size_t holds;                /* reservations in flight now */
    uint64_t released;           /* holds ended by a failed write */
} ext_pending_stats;

/* Of one kind (NULL: all). */
void ext_pending_stats_of(ext_pending *p, const char *kind, ext_pending_stats *out);

#endif
