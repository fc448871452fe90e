/* server.c — libmicrohttpd around an ext_service (extender.h): a pool of HTTP threads
 * with their own poll loops, HTTP/1.1 keep-alive, bodies buffered per request up to the
 * service's max_body (larger ones answered 413 without reading them when a
 * Content-Length announces them), idle connections closed after conn_timeout_s, and a
 * graceful stop that lets the requests in flight finish before the daemon goes away. */
#include "extender/extender.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"

struct ext_server {
    struct MHD_Daemon *d;
    ext_service *svc;
    size_t max_body;
    _Atomic long inflight;   /* requests between their first callback and their completion */
};

/* One request's state (MHD's con_cls), freed when the request completes. */
typedef struct request {
    strbuf body;
    bool too_large;
    bool answered;   /* a reply was queued before the body was read */
} request;

static enum MHD_Result send_reply(struct MHD_Connection *c, ext_reply *r) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    r->body = NULL;   /* MHD owns it now */
    if (!resp) return MHD_NO;
    if (r->content_type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    (void)version;
    ext_server *srv = cls;
    request *rq = *con_cls;
    if (!rq) {
        rq = xcalloc(1, sizeof *rq);
        sbuf_init(&rq->body);
        *con_cls = rq;
        atomic_fetch_add(&srv->inflight, 1);
        /* refuse an announced oversized body before reading it (and before MHD sends
         * "100 Continue" to a client that asked) */
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > srv->max_body) {
            rq->too_large = rq->answered = true;
            too_large(srv, c, url);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->too_large && rq->body.len + *upload_size > srv->max_body) {
            rq->too_large = true;   /* chunked or lying: stop buffering, answer at the end */
            sbuf_free(&rq->body);
            sbuf_init(&rq->body);
        }
        if (!rq->too_large) sbuf_add(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->answered) return MHD_YES;
    rq->answered = true;
    if (rq->too_large) {
        too_large(srv, c, url);
        return MHD_YES;
    }
    ext_reply r;
    ext_service_handle(srv->svc, method, url, rq->body.buf, rq->body.len, &r);
    return send_reply(c, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
    (void)c;
    (void)why;
    ext_server *srv = cls;
    request *rq = *con_cls;
    if (!rq) return;
    sbuf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->inflight, 1);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    fputs("dralloc serve: http: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* "HOST:PORT" or "[V6]:PORT" → an address. */
static bool resolve(const char *listen, struct sockaddr_storage *sa, socklen_t *len, err *e) {
    char host[256], port[16];
    const char *colon = strrchr(listen, ':');
    if (!colon || !colon[1] || strlen(colon + 1) >= sizeof port || (size_t)(colon - listen) >= sizeof host)
        return err_set(e, "--listen %s: expected HOST:PORT", listen);
    size_t hl = (size_t)(colon - listen);
    const char *h = listen;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') h++, hl -= 2;
    memcpy(host, h, hl);
    host[hl] = '\0';
    strcpy(port, colon + 1);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9') return err_set(e, "--listen %s: port must be a number", listen);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    int rc = getaddrinfo(hl ? host : NULL, port, &hints, &res);
    if (rc) return err_set(e, "--listen %s: %s", listen, gai_strerror(rc));
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return true;
}

ext_server *ext_server_start(ext_service *svc, const ext_server_opts *o, char *bound, size_t nbound, err *e) {
    struct sockaddr_storage sa;
    socklen_t salen = 0;
    if (!resolve(o->listen, &sa, &salen, e)) return NULL;
    ext_server *srv = xcalloc(1, sizeof *srv);
    srv->svc = svc;
    srv->max_body = ext_service_config(svc)->max_body;
    unsigned threads = o->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (sa.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* the logger first: MHD logs through the default one until it sees this option */
    srv->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,   //
                              MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                              MHD_OPTION_THREAD_POOL_SIZE, threads,
                              MHD_OPTION_CONNECTION_TIMEOUT, o->conn_timeout_s,
                              MHD_OPTION_CONNECTION_LIMIT, o->conn_limit,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                              MHD_OPTION_END);
    if (!srv->d) {
        err_set(e, "--listen %s: cannot start the HTTP server (address in use?)", o->listen);
        free(srv);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : 0;
    char host[128] = "";
    if (sa.ss_family == AF_INET6) {
        getnameinfo((struct sockaddr *)&sa, salen, host, sizeof host, NULL, 0, NI_NUMERICHOST);
        snprintf(bound, nbound, "[%s]:%u", host, port);
    } else {
        getnameinfo((struct sockaddr *)&sa, salen, host, sizeof host, NULL, 0, NI_NUMERICHOST);
        snprintf(bound, nbound, "%s:%u", host, port);
    }
    return srv;
}

void ext_server_stop(ext_server *srv, unsigned grace_ms) {
    if (!srv) return;
    /* no new connections; the ones open finish what they are doing */
    MHD_socket ls = MHD_quiesce_daemon(srv->d);
    if (ls != MHD_INVALID_SOCKET) close(ls);
    struct timespec tick = {0, 5 * 1000 * 1000};
    for (unsigned waited = 0; atomic_load(&srv->inflight) > 0 && waited < grace_ms; waited += 5)
        nanosleep(&tick, NULL);
    MHD_stop_daemon(srv->d);
    free(srv);
}
