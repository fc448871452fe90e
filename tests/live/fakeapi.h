/* fakeapi.h — the project's own fake kube-apiserver for the live-cache tests: the
 * DRA resources, Nodes and scheduling.k8s.io/v1alpha2 PodGroups served as the real
 * one serves them (list with limit/continue and a list resourceVersion; watch as a
 * chunked stream of JSON lines with bookmarks and timeoutSeconds; the streaming list
 * of KEP-3157 — sendInitialEvents=true: ADDED events, then a BOOKMARK annotated
 * k8s.io/initial-events-end — or, as a server without the WatchList feature, a 422
 * for it; resourceVersions counting up) plus the faults a watch meets in production:
 * compaction (a watch from an old version gets an ERROR event with code 410), streams
 * cut in the middle of a line, stalled streams, expired continue tokens, 429/500
 * answers with Retry-After, bearer tokens that rotate (401), and a lagging watch
 * cache (a resource's events held back and released one by one). Bind mode's writes are
 * served too: pods (GET, PATCH status, POST binding), ResourceClaims (POST with
 * generateName, PUT, PUT status, DELETE), PodGroups (GET), Leases. Over http, or
 * https with a server certificate and, optionally, required client certificates
 * (libmicrohttpd with GnuTLS). In-process, on 127.0.0.1 and a free port, one thread
 * per connection. */
#ifndef DRA_TESTS_FAKEAPI_H
#define DRA_TESTS_FAKEAPI_H

#include <jansson.h>
#include <stdbool.h>

typedef struct fake_api fake_api;

fake_api *fake_start(void);
/* https: PEM key and certificate of the server; with trust_pem (a CA), every request
 * must come with a client certificate that CA signed, else 401. */
typedef struct fake_tls {
    const char *key_pem, *cert_pem, *trust_pem;
} fake_tls;
fake_api *fake_start_tls(const fake_tls *tls);
void fake_stop(fake_api *f);
int fake_port(const fake_api *f);

/* resource: "deviceclasses", "resourceslices", "resourceclaims", "nodes",
 * "devicetaintrules", "podgroups". The object is stolen; ADDED or MODIFIED by its key. */
void fake_put(fake_api *f, const char *resource, json_t *obj);
void fake_delete(fake_api *f, const char *resource, const char *ns, const char *name);
/* Every object of a resource (new references), sorted by namespace/name. */
json_t *fake_objects(fake_api *f, const char *resource);

/* faults */
void fake_set_token(fake_api *f, const char *token);        /* NULL: no authentication */
void fake_compact(fake_api *f);                             /* forget every event so far */
void fake_cut_watches(fake_api *f);                         /* open streams end mid-line */
void fake_stall_watches(fake_api *f);                       /* open streams go silent */
void fake_fail_next(fake_api *f, int n, int status, int retry_after_s);
void fake_expire_next_continue(fake_api *f, int n);         /* list pages with continue → 410 */
void fake_unserve(fake_api *f, const char *resource);       /* 404 for it, and left out of discovery */
/* DeviceTaintRules served at resource.k8s.io/VERSION (v1beta2, v1alpha3: an older
 * cluster's) instead of v1: listed there and in that version's discovery. Discovery
 * (GET /apis/resource.k8s.io and /apis/resource.k8s.io/VERSION) lists what is served. */
void fake_serve_taint_rules_at(fake_api *f, const char *version);
long fake_requests(fake_api *f);
/* Every request served so far as "METHOD /path" ("?watch" appended for a watch), in
 * order (a new reference); clear: start the log anew. */
json_t *fake_request_log(fake_api *f, bool clear);
/* The Lease ns/name as stored (coordination.k8s.io/v1 GET/POST/PUT are served), or NULL. */
json_t *fake_lease(fake_api *f, const char *ns, const char *name);
/* Pods for bind mode: GET one and POST pods/binding are served (the pod is stolen). */
void fake_put_pod(fake_api *f, json_t *pod);
json_t *fake_pod(fake_api *f, const char *ns, const char *name);
/* `serve --preemption=evict`'s requests are served too: GET /api/v1/pods with
 * fieldSelector spec.nodeName=N or labelSelector KEY, a merge PATCH of a pod
 * (metadata.uid a precondition), POST pods/NAME/eviction (the pod gets a
 * deletionTimestamp and stays until fake_delete_pod), POST namespaces/NS/events. */
void fake_delete_pod(fake_api *f, const char *ns, const char *name);
json_t *fake_events(fake_api *f);   /* every Event POSTed, in order (a new reference) */

/* Streaming lists (sendInitialEvents): served (default), refused with 422, or ignored
 * (a plain watch from now, with bookmarks, as a server that does not know the
 * parameter). */
enum { FAKE_WATCH_LIST_SERVED = 0, FAKE_WATCH_LIST_REFUSED = 1, FAKE_WATCH_LIST_IGNORED = 2 };
void fake_set_watch_list(fake_api *f, int mode);
void fake_slow_initial_events(fake_api *f, int ms);        /* a pause between initial events */
/* How many streaming lists and paged lists (first pages) were served. */
void fake_list_counts(fake_api *f, long *streaming, long *paged);
/* Bindings wait while held (fake_held_bindings: how many wait now). */
void fake_hold_bindings(fake_api *f, bool hold);
int fake_held_bindings(fake_api *f);
/* The next request with this method and a path containing path_part fails with status. */
void fake_fail_request(fake_api *f, const char *method, const char *path_part, int status);

/* Watch events of a resource held back, as a lagging watch cache holds them: while
 * held, its streams send no event after the last released one (bookmarks go no
 * further either) and its lists and streaming lists serve the state as of that event.
 * Writes go on as usual. Unholding releases everything at once. */
void fake_hold_watch(fake_api *f, const char *resource, bool hold);
/* Releases the next held event of the resource: its resourceVersion (0: none held);
 * *obj (a copy, may be NULL) and *type tell what it is. */
long fake_release_watch_event(fake_api *f, const char *resource, json_t **obj, const char **type);
int fake_held_events(fake_api *f, const char *resource);
/* ResourceClaim writes (POST, PUT, DELETE) answered ms after they are stored: their
 * watch events come before the answer. */
void fake_slow_claim_answers(fake_api *f, int ms);
/* The resource's open watch streams get an ERROR event with code 410 (a relist). */
void fake_gone_watches(fake_api *f, const char *resource);
/* At once: everything released and the open streams 410, so the relist sees the
 * current state while the held events never come on a stream. */
void fake_release_by_relist(fake_api *f, const char *resource);

#endif
