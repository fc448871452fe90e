/* extender.h — the kube-scheduler HTTP extender (`dralloc serve`), in two layers:
 *
 *   ext_service  every route as a plain function of (method, path, body) → reply, over a
 *                dra_store: /filter, /prioritize, /bind, /healthz, /readyz, /metrics,
 *                /debug/cache, POST /objects, DELETE /objects/KIND/NS/NAME. Holds the
 *                worker pool that decides nodes and the metrics. No sockets: the fuzz
 *                harness and unit tests call it directly.
 *   ext_server   libmicrohttpd around a service: thread pool, keep-alive, body and
 *                connection limits, idle and whole-request timeouts, graceful stop.
 *
 * Wire format and behaviour: ../shared/reference/extender.md; README "Serving". */
#ifndef DRA_EXTENDER_H
#define DRA_EXTENDER_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/snapshot.h"

typedef struct ext_config {
    unsigned workers;            /* threads deciding nodes (0: one per core) */
    size_t max_body;             /* bytes; larger bodies are refused with 413 */
    unsigned max_depth;          /* JSON nesting limit (400 beyond) */
    size_t max_nodes;            /* nodes per request (400 beyond) */
    uint64_t filter_budget_ns;   /* per-request deadline for deciding nodes (0: none) */
    dra_score_mode score;        /* /prioritize */
    bool verbose;                /* one log line per request on stderr */
    /* build the node views ahead of the requests (--warm-views): a thread of the
     * service builds the views a new snapshot lacks, at most every WARM_PERIOD (service.c) */
    bool warm_views;
    /* live mode (watch.h, lease.h, bind.h), all borrowed; NULL in static mode */
    struct ext_watch *watch;     /* readiness: listed and not stale; /objects refused */
    struct ext_lease *lease;     /* --leader-elect: only the leader binds; a standby is ready too */
    struct ext_binder *binder;   /* --bind */
    struct ext_requeue *requeue; /* --bind: told of every /filter with no node (requeue.h) */
    struct ext_holds *holds;     /* --preemption=evict: nodes held for preemptors (hold.h); /filter
                                  * and /bind keep other pods off them */
    struct ext_evictor *evictor; /* --preemption=evict: told of every /filter with no node (evict.h) */
    /* serving (borrowed, may be NULL) */
    const char *write_guard;     /* why /bind and /objects are refused (auth.h): 403 with it; NULL: open */
    struct ext_budget *budget;   /* buffered request bytes (budget.h), for the metrics */
    struct ext_tls *tls;         /* the server's TLS (tls.h), for the metrics */
    const dra_features *features;   /* the gates in effect (borrowed), for the metrics; may be NULL */
} ext_config;

#define EXT_DEFAULT_MAX_BODY (16u << 20)
#define EXT_DEFAULT_MAX_DEPTH 128
#define EXT_DEFAULT_MAX_NODES 20000
#define EXT_DEFAULT_FILTER_BUDGET_NS 2000000000ull

void ext_config_default(ext_config *c);

typedef struct ext_service ext_service;

/* st is borrowed and must outlive the service. */
ext_service *ext_service_new(dra_store *st, const ext_config *c);
void ext_service_free(ext_service *s);
const ext_config *ext_service_config(const ext_service *s);
/* Builds the current snapshot's missing node views on the service's worker count of
 * threads and waits for them (serve --snapshot, before it listens); the count built. */
size_t ext_service_warm_views(ext_service *s);

typedef struct ext_reply {
    int status;
    const char *content_type;
    const char *allow;        /* the Allow header of a 405, else NULL */
    unsigned retry_after;     /* seconds, the Retry-After header of a 503; 0: none */
    char *body;               /* malloc'd */
    size_t len;
} ext_reply;

/* Answers one request. Never fails: every problem with the input is a 4xx reply whose
 * body is {"error": "..."}. `path` is the URL path without the query. */
void ext_service_handle(ext_service *s, const char *method, const char *path, const char *body, size_t len,
                        ext_reply *out);
/* Whether a request to path waits on another server (bind mode's /bind: kube-apiserver
 * round trips) and should run off the HTTP threads (offload.h). */
bool ext_service_waits(const ext_service *s, const char *path);
/* Such a request in two steps (bind.h, Two phases): ext_service_begin on the HTTP
 * thread does what needs no other server — true: answered in out; false: *later is
 * the rest, for ext_service_finish off the HTTP thread (it frees later). Any other
 * request is answered whole by begin. */
typedef struct ext_deferred ext_deferred;
bool ext_service_begin(ext_service *s, const char *method, const char *path, const char *body, size_t len,
                       ext_reply *out, ext_deferred **later);
void ext_service_finish(ext_service *s, ext_deferred *d, ext_reply *out);
/* A request refused before it reached a route (the server's 413): an error reply,
 * counted in the metrics under the path's verb. */
void ext_service_refuse(ext_service *s, const char *path, int status, const char *msg, ext_reply *out);
/* {"error": ...} with the status. */
void ext_reply_error(ext_reply *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ext_reply_free(ext_reply *r);

/* ---- HTTP server ---------------------------------------------------------------------- */

typedef struct ext_server ext_server;

typedef struct ext_server_opts {
    const char *listen;          /* HOST:PORT, [V6]:PORT, :PORT (listen.h); port 0 picks a free one */
    unsigned threads;            /* HTTP threads (0: one per core) */
    unsigned conn_timeout_s;     /* idle connection timeout (0: none) */
    unsigned conn_limit;         /* simultaneous connections; past it new ones are closed at
                                  * once (0: EXT_DEFAULT_MAX_CONNECTIONS; lowered, with a
                                  * warning, when RLIMIT_NOFILE has no room for them) */
    unsigned request_timeout_ms; /* a whole request must arrive, and its answer be taken,
                                  * within this, counted from the connection's opening or
                                  * its previous answer (so above conn_timeout_s); late
                                  * headers or answers: closed; a late body: 408 over
                                  * plain HTTP, closed over TLS (0: none) */
    struct ext_tls *tls;         /* HTTPS with these credentials (tls.h, borrowed); NULL: HTTP */
    struct ext_budget *budget;   /* request bytes held across connections (budget.h,
                                  * borrowed): past it 503 + Retry-After; NULL: none */
    unsigned per_ip_limit;       /* connections from one IP address at once, past it new ones
                                  * from that address are closed at accept (0: no limit):
                                  * one peer cannot take every slot of conn_limit */
    const char *const *routes;   /* NULL-terminated paths served; others 404 (NULL: all) */
    size_t max_body;             /* 0: the service's max_body */
    const char *name;            /* in log lines and errors: "--listen" (default), "--health-listen" */
    unsigned offload_threads;    /* bind mode: threads writing binds (offload.h; 0: 64) */
} ext_server_opts;

#define EXT_DEFAULT_MAX_CONNECTIONS 1000
#define EXT_DEFAULT_CONN_TIMEOUT_S 10
#define EXT_DEFAULT_REQUEST_TIMEOUT_MS 30000

/* Binds and starts serving; *bound receives "HOST:PORT" as actually bound. NULL with
 * e set when the address cannot be used. Raises the process's soft RLIMIT_NOFILE to
 * the hard limit (the connections need descriptors). */
ext_server *ext_server_start(ext_service *svc, const ext_server_opts *o, char *bound, size_t nbound, err *e);
/* Stops accepting connections, lets requests in flight finish (up to grace_ms), closes
 * the rest and frees the server. */
void ext_server_stop(ext_server *srv, unsigned grace_ms);

/* The health listener (--health-listen, health.c): /healthz, /readyz and /metrics of
 * svc on their own address, thread and connections, plain HTTP for the kubelet's
 * probes, so that whatever the main listener carries (a flood, slow clients, its
 * connection limit reached) cannot delay a probe; a few connections per peer address,
 * so that neither can another pod that opens many. */
ext_server *ext_health_start(ext_service *svc, const char *listen, char *bound, size_t nbound, err *e);

#endif
