/* server.c — libmicrohttpd around an ext_service (extender.h).
 *
 * Threads: a pool of MHD threads (--threads), each with its own epoll loop over its
 * share of the connections. Sockets are non-blocking, so a slow or idle client costs a
 * connection slot and its 32 KiB buffer, never a thread: a request reaches the service
 * (and its worker pool) only once its whole body is in, and the thread that hands it
 * over waits for the answer (--filter-budget bounds that wait) — except a request that
 * waits on another server (bind mode's /bind, ext_service_waits): its connection is
 * suspended and the request runs on the offload pool (offload.h), which resumes the
 * connection with the answer, so that the thread goes on serving /filter and
 * /prioritize meanwhile.
 *
 * Bodies are buffered per request up to the service's max_body (larger ones answered
 * 413 without reading them when a Content-Length announces them), and across requests
 * up to the byte budget (budget.h): a body that does not fit is answered 503 with
 * Retry-After — before it is read when its Content-Length already does not fit, else
 * once it is in, its bytes not kept. Connections are bounded three ways:
 *   - conn_limit connections at once: past it a new connection is accepted and closed
 *     at once (the accept policy), so a client learns it now rather than waiting in the
 *     listen queue; the soft RLIMIT_NOFILE is raised to the hard one for them;
 *   - conn_timeout_s without a byte either way closes a connection (MHD's idle timeout);
 *   - request_timeout_ms for a whole request (headers and body) and for the client to
 *     take its answer, which MHD has not: a byte every few seconds defeats an idle
 *     timeout. Each connection is on a list with its phase and when the phase began
 *     (MHD's socket context); a watchdog thread scans the list every 100 ms and cuts
 *     what is late: headers still arriving → the connection is closed; a body still
 *     arriving → "408 Request Timeout" written on the socket (MHD 0.9.75 cannot queue a
 *     response in the middle of an upload), its sending side shut, the rest closed a
 *     second later (a lingering close, so the 408 is not lost to a reset); an answer not
 *     taken → closed. A request being decided is never cut. The clock of a request
 *     starts when the connection opens or its previous answer went out, so it includes
 *     the keep-alive wait before it (at most conn_timeout_s). Over TLS the 408 cannot
 *     be written past MHD (it would be plaintext in a TLS stream): a late body is
 *     closed like late headers.
 *   - per_ip_limit connections from one address (MHD's per-IP limit, checked before
 *     the accept policy): one peer flooding the port leaves the others their slots.
 * TLS (tls.h): each connection's session gets the current credentials before its
 * handshake (so certificate files that rotate take effect), and with a client CA the
 * handshake itself refuses a client without a certificate that CA signed (or whose
 * name is not allowed); the versions offered are --tls-min-version and up, and a
 * refused handshake is logged with its cause and the peer's address.
 * A server may serve only some routes (the health listener): others are 404 at once.
 * A graceful stop lets the requests in flight finish before the daemon goes away. */
#include "extender/extender.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/strbuf.h"
#include "extender/budget.h"
#include "extender/listen.h"
#include "extender/offload.h"
#include "extender/tls.h"

/* A connection's phase, for the request deadline. The MHD thread moves it along
 * HEADERS → BODY → HANDLING → SENDING → HEADERS (keep-alive); the watchdog moves a late
 * one to LINGER (408 sent) or CUT, from which it never comes back. Both move it by
 * compare-and-swap, so exactly one of them acts on a late request. */
enum { PH_HEADERS, PH_BODY, PH_HANDLING, PH_SENDING, PH_LINGER, PH_CUT };

#define WATCH_TICK_NS (100 * 1000000ull)
#define LINGER_NS (1000 * 1000000ull)   /* between the 408 and the hard close */
#define LOG_EVERY_NS (10 * 1000000000ull)
#define PREALLOC_MAX (1u << 20)  /* bodies announced up to this are allocated at once */
#define BUDGET_RETRY_AFTER_S 1   /* a request refused for want of room: bodies drain in about that */

typedef struct conn {
    struct conn *prev, *next;   /* the server's list, under its lock */
    int fd;
    _Atomic int phase;
    _Atomic uint64_t since;     /* monotonic ns when the phase began (BODY keeps HEADERS') */
    char *path;                 /* URL of the request in BODY, for the 408 (MHD thread
                                 * writes it in HEADERS; the watchdog reads it after
                                 * winning BODY → LINGER; freed when the connection closes) */
    void *tls_ref;              /* the credentials its TLS session uses (tls.h) */
    void *tls_session;          /* gnutls_session_t, NULL over plain HTTP */
} conn;

struct ext_server {
    struct MHD_Daemon *d;
    ext_service *svc;
    size_t max_body;
    ext_tls *tls;                  /* borrowed; NULL: plain HTTP */
    ext_budget *budget;            /* borrowed; NULL: no budget */
    ext_offload *offload;          /* requests that wait on another server; NULL: none (no bind mode) */
    const char *const *routes;     /* NULL: every route */
    const char *name;              /* "--listen", "--health-listen" */
    unsigned conn_limit;
    uint64_t request_timeout_ns;   /* 0: none */
    _Atomic long inflight;         /* requests between their first callback and their completion */
    _Atomic unsigned open;         /* connections between NOTIFY_STARTED and NOTIFY_CLOSED */
    _Atomic uint64_t refused;      /* connections closed at once past conn_limit */

    pthread_mutex_t lock;          /* the connection list; held while the watchdog acts on an fd */
    conn *conns;
    pthread_t watchdog;
    pthread_cond_t wake;
    bool stop, watchdog_started;
    uint64_t cut[PH_SENDING + 1];  /* late requests cut, by the phase they were in (watchdog only) */
};

/* One request's state (MHD's con_cls), freed when the request completes. */
typedef struct request {
    strbuf body;
    conn *cn;        /* NULL when MHD gave no socket context */
    size_t held;     /* bytes taken from the budget for body */
    bool too_large;
    bool over_budget;   /* the budget had no room: body dropped, 503 at the end */
    bool answered;   /* a reply was queued before the body was read */
    /* offloaded (offload.h): the connection is suspended while a pool thread answers */
    bool offloaded;
    _Atomic bool done;              /* the pool thread's answer is in `reply` */
    ext_server *srv;
    struct MHD_Connection *c;
    char *method, *url;
    ext_deferred *later;            /* the part of the request left to the pool thread */
    ext_reply reply;
} request;

static uint64_t now_ns(void) { return monotonic_ns(); }

static bool phase_move(conn *cn, int from, int to) {
    return !cn || atomic_compare_exchange_strong(&cn->phase, &from, to);
}

/* The MHD thread's own moves: into SENDING (an answer queued) and back to HEADERS (a
 * request over), whatever the phase before, unless the watchdog has cut the connection. */
static void phase_restart(conn *cn, int to) {
    if (!cn) return;
    atomic_store(&cn->since, now_ns());
    int ph = atomic_load(&cn->phase);
    while (ph != PH_LINGER && ph != PH_CUT && !atomic_compare_exchange_weak(&cn->phase, &ph, to)) {
    }
}

/* ---- logging: MHD's messages at most 20 per 10 s, the watchdog's counts -------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    const char *who = cls;   /* "http", "health" */
    /* a failed TLS handshake: tls.c logs it with its cause and peer, this says neither */
    if (strstr(fmt, "handshake message out of context")) return;
    /* a flood of clients that hang up mid-request would otherwise be a flood of lines:
     * 20 per 10 s, then a count of the ones left out */
    static uint64_t window;
    static unsigned lines, dropped;
    pthread_mutex_lock(&log_lock);
    uint64_t now = now_ns();
    if (now - window > LOG_EVERY_NS) {
        if (dropped) fprintf(stderr, "dralloc serve: http: %u more messages not shown\n", dropped);
        window = now, lines = dropped = 0;
    }
    if (lines++ < 20) {
        fprintf(stderr, "dralloc serve: %s: ", who);
        vfprintf(stderr, fmt, ap);
    } else {
        dropped++;
    }
    pthread_mutex_unlock(&log_lock);
}

/* ---- the connection list and the watchdog --------------------------------------------- */

/* "ADDR:PORT" ([V6]:PORT) of a peer, for the TLS log. */
static void peer_name(const struct sockaddr *a, char *buf, size_t n) {
    char host[64] = "?", port[8] = "?";
    socklen_t len = a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    getnameinfo(a, len, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(buf, n, a->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    ext_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn *cn = xcalloc(1, sizeof *cn);
        cn->fd = ci ? ci->connect_fd : -1;
        if (srv->tls) {
            const union MHD_ConnectionInfo *ti = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
            cn->tls_session = ti ? ti->tls_session : NULL;
            /* before the handshake: this connection's credentials and client check */
            if (cn->tls_session) {
                char peer[80] = "?";
                const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
                if (ai && ai->client_addr) peer_name(ai->client_addr, peer, sizeof peer);
                cn->tls_ref = ext_tls_session_begin(srv->tls, cn->tls_session, peer);
            }
        }
        atomic_init(&cn->phase, PH_HEADERS);
        atomic_init(&cn->since, now_ns());
        pthread_mutex_lock(&srv->lock);
        cn->next = srv->conns;
        if (cn->next) cn->next->prev = cn;
        srv->conns = cn;
        pthread_mutex_unlock(&srv->lock);
        *socket_context = cn;
        atomic_fetch_add(&srv->open, 1);
    } else if (*socket_context) {
        /* MHD closes the socket after this: while the lock is held here, the watchdog
         * cannot be shutting down an fd that is about to be reused */
        conn *cn = *socket_context;
        pthread_mutex_lock(&srv->lock);
        if (cn->prev) cn->prev->next = cn->next;
        else srv->conns = cn->next;
        if (cn->next) cn->next->prev = cn->prev;
        pthread_mutex_unlock(&srv->lock);
        if (cn->tls_ref) ext_tls_session_end(srv->tls, cn->tls_ref);
        free(cn->path);
        free(cn);
        *socket_context = NULL;
        atomic_fetch_sub(&srv->open, 1);
    }
}

/* Past conn_limit, a new connection is closed as soon as it is accepted. A few threads
 * accepting at once may each let one more in: MHD's own limit sits above this one. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len) {
    (void)addr;
    (void)len;
    ext_server *srv = cls;
    if (atomic_load(&srv->open) < srv->conn_limit) return MHD_YES;
    atomic_fetch_add(&srv->refused, 1);
    return MHD_NO;
}

/* The late body's answer, written past MHD: its status line, headers and the service's
 * error text (counted in the metrics like the 413). Best effort: the socket is
 * non-blocking and its send buffer empty while a body is arriving. */
static void send_408(ext_server *srv, conn *cn) {
    char msg[160];
    snprintf(msg, sizeof msg, "request not received within %.3gs (--request-timeout)",
             (double)srv->request_timeout_ns / 1e9);
    ext_reply r;
    ext_service_refuse(srv->svc, cn->path, 408, msg, &r);
    strbuf b;
    sbuf_init(&b);
    sbuf_addf(&b,
              "HTTP/1.1 408 Request Timeout\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
              r.content_type ? r.content_type : "application/json", r.len);
    sbuf_add(&b, r.body, r.len);
    ext_reply_free(&r);
    ssize_t n = send(cn->fd, b.buf, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)n;
    sbuf_free(&b);
}

static void watch_once(ext_server *srv, uint64_t now) {
    uint64_t limit = srv->request_timeout_ns;
    for (conn *cn = srv->conns; cn; cn = cn->next) {
        int ph = atomic_load(&cn->phase);
        uint64_t since = atomic_load(&cn->since);
        if (cn->fd < 0 || now < since) continue;
        if (ph == PH_LINGER) {
            if (now - since >= LINGER_NS && phase_move(cn, PH_LINGER, PH_CUT)) shutdown(cn->fd, SHUT_RDWR);
        } else if (limit && (ph == PH_HEADERS || ph == PH_BODY || ph == PH_SENDING) && now - since > limit) {
            if (ph == PH_BODY && !srv->tls) {
                if (!phase_move(cn, PH_BODY, PH_LINGER)) continue;
                atomic_store(&cn->since, now);
                send_408(srv, cn);
                shutdown(cn->fd, SHUT_WR);
            } else {
                if (!phase_move(cn, ph, PH_CUT)) continue;
                shutdown(cn->fd, SHUT_RDWR);
            }
            srv->cut[ph]++;
        }
    }
}

/* What the watchdog has logged so far: the first cut or refusal is logged at once, the
 * next ones at most every LOG_EVERY_NS, the rest when the server stops. */
typedef struct log_state {
    uint64_t at, cut[PH_SENDING + 1], refused;
} log_state;

static void log_counts(ext_server *srv, log_state *l, uint64_t now, bool force) {
    uint64_t refused = atomic_load(&srv->refused);
    uint64_t h = srv->cut[PH_HEADERS] - l->cut[PH_HEADERS], b = srv->cut[PH_BODY] - l->cut[PH_BODY],
             s = srv->cut[PH_SENDING] - l->cut[PH_SENDING], r = refused - l->refused;
    if (!(h || b || s || r) || (!force && l->at && now - l->at < LOG_EVERY_NS)) return;
    if (h || b || s)
        fprintf(stderr,
                "dralloc serve: http: closed %llu connections slower than --request-timeout %.3gs (%llu sending "
                "headers, %llu sending a body: 408, %llu not reading the answer)\n",
                (unsigned long long)(h + b + s), (double)srv->request_timeout_ns / 1e9, (unsigned long long)h,
                (unsigned long long)b, (unsigned long long)s);
    if (r)
        fprintf(stderr, "dralloc serve: http: refused %llu connections past --max-connections %u\n",
                (unsigned long long)r, srv->conn_limit);
    memcpy(l->cut, srv->cut, sizeof l->cut);
    l->refused = refused;
    l->at = now;
}

static void *watchdog_main(void *arg) {
    ext_server *srv = arg;
    log_state l = {0};
    pthread_mutex_lock(&srv->lock);
    while (!srv->stop) {
        uint64_t now = now_ns();
        watch_once(srv, now);
        log_counts(srv, &l, now, false);
        uint64_t at = now_ns() + WATCH_TICK_NS;   /* the condition waits on CLOCK_MONOTONIC */
        struct timespec ts = {.tv_sec = (time_t)(at / 1000000000ull), .tv_nsec = (long)(at % 1000000000ull)};
        pthread_cond_timedwait(&srv->wake, &srv->lock, &ts);
    }
    log_counts(srv, &l, now_ns(), true);
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

/* ---- requests --------------------------------------------------------------------------- */

static enum MHD_Result send_reply(struct MHD_Connection *c, ext_reply *r) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    r->body = NULL;   /* MHD owns it now */
    if (!resp) return MHD_NO;
    if (r->content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->retry_after) {
        char ra[16];
        snprintf(ra, sizeof ra, "%u", r->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static void too_large(ext_server *srv, struct MHD_Connection *c, const char *url) {
    char msg[160];
    snprintf(msg, sizeof msg, "request body larger than the limit of %zu bytes (--max-body)", srv->max_body);
    ext_reply r;
    ext_service_refuse(srv->svc, url, 413, msg, &r);
    send_reply(c, &r);
}

static void over_budget(ext_server *srv, struct MHD_Connection *c, const char *url) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "the server holds as many request bytes as it may (--max-inflight-bytes %zu): retry in %us",
             ext_budget_limit(srv->budget), BUDGET_RETRY_AFTER_S);
    ext_budget_refused(srv->budget);
    ext_reply r;
    ext_service_refuse(srv->svc, url, 503, msg, &r);
    r.retry_after = BUDGET_RETRY_AFTER_S;
    send_reply(c, &r);
}

/* Another request's answer, queued before its body is read (413, 503, 404, 403). */
static void answer_now(request *rq) {
    rq->answered = true;
    phase_restart(rq->cn, PH_SENDING);
}

static bool served_here(const ext_server *srv, const char *url) {
    if (!srv->routes) return true;
    for (const char *const *r = srv->routes; *r; r++)
        if (!strcmp(*r, url)) return true;
    return false;
}

/* Bytes of a body arrive: kept when the budget has room for them. */
static void keep_body(ext_server *srv, request *rq, const char *p, size_t n) {
    if (srv->budget) {
        if (!ext_budget_take(srv->budget, n)) {
            /* no room: what this request holds goes back at once, the rest is read
             * and dropped, and the answer is a 503 */
            rq->over_budget = true;
            ext_budget_give(srv->budget, rq->held);
            rq->held = 0;
            sbuf_free(&rq->body);
            sbuf_init(&rq->body);
            return;
        }
        rq->held += n;
    }
    sbuf_add(&rq->body, p, n);
}

static void drop_body(ext_server *srv, request *rq) {
    if (srv->budget && rq->held) ext_budget_give(srv->budget, rq->held);
    rq->held = 0;
    sbuf_free(&rq->body);
    sbuf_init(&rq->body);
}

/* A pool thread: the request answered, then its connection resumed (MHD calls
 * on_request again, which sends the answer). */
static void offloaded(void *arg) {
    request *rq = arg;
    ext_service_finish(rq->srv->svc, rq->later, &rq->reply);
    rq->later = NULL;
    atomic_store(&rq->done, true);
    MHD_resume_connection(rq->c);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    (void)version;
    ext_server *srv = cls;
    request *rq = *con_cls;
    if (!rq) {
        /* the headers are in */
        rq = xcalloc(1, sizeof *rq);
        sbuf_init(&rq->body);
        *con_cls = rq;
        atomic_fetch_add(&srv->inflight, 1);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        rq->cn = ci ? ci->socket_context : NULL;
        if (rq->cn) {
            free(rq->cn->path);   /* the previous request's; the watchdog is not reading it in HEADERS */
            rq->cn->path = xstrdup(url);
        }
        if (!phase_move(rq->cn, PH_HEADERS, PH_BODY)) return MHD_NO;   /* cut meanwhile */
        if (srv->tls && !ext_tls_session_verified(srv->tls, rq->cn ? rq->cn->tls_ref : NULL)) {
            /* the handshake already refuses these: a second lock on the same door */
            ext_reply r;
            ext_service_refuse(srv->svc, url, 403, "forbidden: no verified client certificate (--client-ca-file)", &r);
            send_reply(c, &r);
            rq->too_large = true;   /* the body, if any, is not kept */
            answer_now(rq);
            return MHD_YES;
        }
        if (!served_here(srv, url)) {
            ext_reply r;
            strbuf msg;
            sbuf_init(&msg);
            sbuf_addf(&msg, "no route for %s on %s (it serves", url, srv->name);
            for (const char *const *p = srv->routes; *p; p++) sbuf_addf(&msg, " %s", *p);
            sbuf_addc(&msg, ')');
            ext_service_refuse(srv->svc, url, 404, msg.buf, &r);
            sbuf_free(&msg);
            send_reply(c, &r);
            rq->too_large = true;
            answer_now(rq);
            return MHD_YES;
        }
        /* refuse an announced oversized body before reading it (and before MHD sends
         * "100 Continue" to a client that asked); one that cannot fit in the budget now,
         * too */
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        unsigned long long announced = cl ? strtoull(cl, NULL, 10) : 0;
        if (announced > srv->max_body) {
            rq->too_large = true;
            too_large(srv, c, url);
            answer_now(rq);
        } else if (srv->budget && !ext_budget_fits(srv->budget, announced)) {
            rq->too_large = true;
            over_budget(srv, c, url);
            answer_now(rq);
        } else if (announced > 0 && announced <= PREALLOC_MAX) {
            /* a usual body's whole size at once, no growth by doubling; a larger one
             * grows as its bytes arrive, so that a thousand clients announcing large
             * bodies they never send cost no address space */
            rq->body.buf = xmalloc(announced + 1);
            rq->body.cap = announced + 1;
        }
        return MHD_YES;
    }
    if (*upload_size) {
        int ph = rq->cn ? atomic_load(&rq->cn->phase) : PH_BODY;
        if (ph == PH_LINGER || ph == PH_CUT) rq->too_large = true;   /* late: 408 sent, drop the rest */
        if (!rq->too_large && !rq->over_budget && rq->body.len + *upload_size > srv->max_body) {
            rq->too_large = true;   /* chunked or lying: stop buffering, answer at the end */
            drop_body(srv, rq);
        }
        if (!rq->too_large && !rq->over_budget) keep_body(srv, rq, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->offloaded) {
        /* resumed: the pool thread has answered (MHD calls again only after the resume) */
        if (!atomic_load(&rq->done)) return MHD_YES;
        rq->offloaded = false;
        enum MHD_Result ok = send_reply(c, &rq->reply);
        phase_restart(rq->cn, PH_SENDING);
        return ok;
    }
    if (rq->answered) return MHD_YES;
    /* the whole body is in: no deadline while it is decided */
    if (!phase_move(rq->cn, PH_BODY, PH_HANDLING)) return MHD_NO;   /* too late: 408 already sent */
    rq->answered = true;
    if (rq->too_large || rq->over_budget) {
        if (rq->too_large) too_large(srv, c, url);
        else over_budget(srv, c, url);
        phase_restart(rq->cn, PH_SENDING);
        return MHD_YES;
    }
    if (srv->offload && ext_service_waits(srv->svc, url)) {
        /* what needs no other server is done here, at once (a bind's decision and holds,
         * which the next /filter must see), the rest on the pool */
        ext_reply r;
        if (ext_service_begin(srv->svc, method, url, rq->body.buf, rq->body.len, &r, &rq->later)) {
            enum MHD_Result ok = send_reply(c, &r);
            phase_restart(rq->cn, PH_SENDING);
            return ok;
        }
        rq->srv = srv;
        rq->c = c;
        rq->method = xstrdup(method);
        rq->url = xstrdup(url);
        rq->offloaded = true;
        /* suspended before it is handed over: the pool thread may resume it at once */
        MHD_suspend_connection(c);
        if (ext_offload_run(srv->offload, offloaded, rq)) return MHD_YES;
        /* closing down: answered here */
        MHD_resume_connection(c);
        rq->offloaded = false;
        ext_service_finish(srv->svc, rq->later, &r);
        rq->later = NULL;
        enum MHD_Result ok = send_reply(c, &r);
        phase_restart(rq->cn, PH_SENDING);
        return ok;
    }
    ext_reply r;
    ext_service_handle(srv->svc, method, url, rq->body.buf, rq->body.len, &r);
    enum MHD_Result ok = send_reply(c, &r);
    phase_restart(rq->cn, PH_SENDING);   /* the client has request_timeout to take it */
    return ok;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
    (void)c;
    (void)why;
    ext_server *srv = cls;
    request *rq = *con_cls;
    if (!rq) return;
    phase_restart(rq->cn, PH_HEADERS);   /* the next request's clock starts now */
    drop_body(srv, rq);
    if (atomic_load(&rq->done) && rq->offloaded) ext_reply_free(&rq->reply);   /* answered, never sent */
    free(rq->method);
    free(rq->url);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->inflight, 1);
}

/* Threads for requests that wait on another server (offload.h): bind mode's writes
 * (the decision is made on the HTTP thread, bind.h). Each holds its thread for a few
 * API round trips, ~1 s apiece on a loaded kube-apiserver (issue #39: 0.6 s of claim
 * writes and 0.3 s of binding per pod at 500 nodes, 1000 pods, 2 busy cores), so the
 * pool bounds the bind rate near threads / 1 s: 16 gave 16.8 pods/s with 842 binds
 * queued past kube-scheduler's 5 s; 64 gave 28 pods/s (the pods' creation rate), none
 * queued past it. The API server's own limit (max-requests-inflight, API priority and
 * fairness) is the real bound: past it requests wait there instead of here. */
#define OFFLOAD_THREADS 64u

/* Descriptors needed besides the connections: the listening socket, each MHD thread's
 * epoll and wake-up fds, the kube-apiserver clients, files, the log. */
#define FD_RESERVE 64u

/* Raises the soft RLIMIT_NOFILE to the hard one (often 1024 against 524288: the soft one
 * is for select()-era programs; MHD polls with epoll) and returns how many connections
 * the result leaves room for, at most `want`. */
static unsigned fd_room(unsigned want, unsigned threads) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl)) return want;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max) {
        struct rlimit up = rl;
        up.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 1u << 20 : rl.rlim_max;
        if (!setrlimit(RLIMIT_NOFILE, &up)) rl = up;
    }
    if (rl.rlim_cur == RLIM_INFINITY) return want;
    unsigned long long reserve = FD_RESERVE + 4ull * threads;
    unsigned long long room = rl.rlim_cur > reserve + 16 ? rl.rlim_cur - reserve : 16;
    return room < want ? (unsigned)room : want;
}

ext_server *ext_server_start(ext_service *svc, const ext_server_opts *o, char *bound, size_t nbound, err *e) {
    const char *flag = o->name ? o->name : "--listen";
    ext_addr addr;
    if (!ext_listen_parse(flag, o->listen, &addr, e)) return NULL;
    struct sockaddr_storage sa = addr.sa;
    socklen_t salen = addr.len;
    unsigned threads = o->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    unsigned want = o->conn_limit ? o->conn_limit : EXT_DEFAULT_MAX_CONNECTIONS;
    /* MHD's own limit: above ours by the connections several threads may accept at once */
    unsigned margin = threads + 8;
    unsigned room = fd_room(want + margin, threads);
    if (room < want + margin) {
        unsigned lowered = room > margin + 1 ? room - margin : 1;
        fprintf(stderr,
                "dralloc serve: only room for %u connections in the file descriptor limit (ulimit -n): "
                "--max-connections lowered from %u\n",
                lowered, want);
        want = lowered;
    }
    ext_server *srv = xcalloc(1, sizeof *srv);
    srv->svc = svc;
    srv->max_body = o->max_body ? o->max_body : ext_service_config(svc)->max_body;
    srv->tls = o->tls;
    srv->budget = o->budget;
    srv->routes = o->routes;
    srv->name = flag;
    srv->conn_limit = want;
    srv->request_timeout_ns = (uint64_t)o->request_timeout_ms * 1000000ull;
    if (ext_service_config(svc)->binder && !o->routes) srv->offload = ext_offload_new(o->offload_threads ? o->offload_threads : OFFLOAD_THREADS);
    pthread_mutex_init(&srv->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->wake, &ca);
    pthread_condattr_destroy(&ca);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (srv->offload) flags |= MHD_ALLOW_SUSPEND_RESUME;
    if (sa.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    if (o->tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            err_set(e, "%s %s: this libmicrohttpd was built without TLS", flag, o->listen);
            goto fail;
        }
        flags |= MHD_USE_TLS;
    }
    /* one thread: MHD's own polling thread, no pool (a pool size of 0 or 1 is warned about) */
    struct MHD_OptionItem pool_opts[] = {
        {threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t)threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    struct MHD_OptionItem tls_opts[] = {
        {o->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, o->tls ? (void *)ext_tls_key_pem(o->tls) : NULL},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, o->tls ? (void *)ext_tls_cert_pem(o->tls) : NULL},
        /* the versions offered: --tls-min-version and up (tls.h) */
        {MHD_OPTION_HTTPS_PRIORITIES, 0, o->tls ? (void *)ext_tls_priorities(o->tls) : NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    /* the logger first: MHD logs through the default one until it sees this option;
     * over TLS, MHD's own credentials are only used until on_connection gives each
     * session the current ones (tls.c) */
    srv->d = MHD_start_daemon(flags, 0, on_accept, srv, on_request, srv,   //
                              MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, (void *)(o->routes ? "health" : "http"),
                              MHD_OPTION_ARRAY, tls_opts,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                              MHD_OPTION_ARRAY, pool_opts,
                              MHD_OPTION_CONNECTION_TIMEOUT, o->conn_timeout_s,
                              MHD_OPTION_CONNECTION_LIMIT, want + margin,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_limit,
                              MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                              MHD_OPTION_END);
    if (!srv->d) {
        err_set(e, "%s %s: cannot start the HTTP server (address in use?)", flag, o->listen);
    fail:
        ext_offload_free(srv->offload);
        pthread_cond_destroy(&srv->wake);
        pthread_mutex_destroy(&srv->lock);
        free(srv);
        return NULL;
    }
    srv->watchdog_started = !pthread_create(&srv->watchdog, NULL, watchdog_main, srv);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : 0;
    char host[128] = "";
    getnameinfo((struct sockaddr *)&sa, salen, host, sizeof host, NULL, 0, NI_NUMERICHOST);
    if (sa.ss_family == AF_INET6) snprintf(bound, nbound, "[%s]:%u", host, port);
    else snprintf(bound, nbound, "%s:%u", host, port);
    return srv;
}

void ext_server_stop(ext_server *srv, unsigned grace_ms) {
    if (!srv) return;
    /* no new connections; the ones open finish what they are doing (the watchdog keeps
     * cutting the late ones meanwhile). The listening socket stops listening at once (a
     * new client is refused) but is closed only after the daemon: MHD's threads may still
     * be taking it out of their epoll sets, and a closed fd there is an MHD_PANIC. */
    MHD_socket ls = MHD_quiesce_daemon(srv->d);
    if (ls != MHD_INVALID_SOCKET) shutdown(ls, SHUT_RDWR);
    struct timespec tick = {0, 5 * 1000 * 1000};
    for (unsigned waited = 0; atomic_load(&srv->inflight) > 0 && waited < grace_ms; waited += 5)
        nanosleep(&tick, NULL);
    /* every offloaded request ends (and resumes its connection) before the daemon goes:
     * MHD must not stop with connections suspended */
    if (srv->offload) ext_offload_close(srv->offload);
    MHD_stop_daemon(srv->d);
    ext_offload_free(srv->offload);
    if (ls != MHD_INVALID_SOCKET) close(ls);
    if (srv->watchdog_started) {
        pthread_mutex_lock(&srv->lock);
        srv->stop = true;
        pthread_cond_signal(&srv->wake);
        pthread_mutex_unlock(&srv->lock);
        pthread_join(srv->watchdog, NULL);
    }
    pthread_cond_destroy(&srv->wake);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}
