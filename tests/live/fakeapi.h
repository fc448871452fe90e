/* fakeapi.h — the project's own fake kube-apiserver for the live-cache tests: the
 * DRA resources and Nodes served as the real one serves them (list with
 * limit/continue and a list resourceVersion; watch as a chunked stream of JSON
 * lines with bookmarks and timeoutSeconds; resourceVersions counting up) plus the
 * faults a watch meets in production: compaction (a watch from an old version gets
 * an ERROR event with code 410), streams cut in the middle of a line, stalled
 * streams, expired continue tokens, 429/500 answers with Retry-After, bearer tokens
 * that rotate (401). In-process, on 127.0.0.1 and a free port, one thread per
 * connection (libmicrohttpd). */
#ifndef DRA_TESTS_FAKEAPI_H
#define DRA_TESTS_FAKEAPI_H

#include <jansson.h>
#include <stdbool.h>

typedef struct fake_api fake_api;

fake_api *fake_start(void);
void fake_stop(fake_api *f);
int fake_port(const fake_api *f);

/* resource: "deviceclasses", "resourceslices", "resourceclaims", "nodes",
 * "devicetaintrules". The object is stolen; ADDED or MODIFIED by its key. */
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
void fake_unserve(fake_api *f, const char *resource);       /* 404 for it */
long fake_requests(fake_api *f);
/* The Lease ns/name as stored (coordination.k8s.io/v1 GET/POST/PUT are served), or NULL. */
json_t *fake_lease(fake_api *f, const char *ns, const char *name);

#endif
