/* fakeapi.c — the fake kube-apiserver of fakeapi.h. */
#include "tests/live/fakeapi.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NRES 6
static const char *const RES[NRES] = {"deviceclasses", "resourceslices", "resourceclaims", "nodes", "devicetaintrules",
                                      "podgroups"};
static const char *const KIND[NRES] = {"DeviceClass", "ResourceSlice", "ResourceClaim", "Node", "DeviceTaintRule",
                                       "PodGroup"};
static const char *const API[NRES] = {"resource.k8s.io/v1", "resource.k8s.io/v1", "resource.k8s.io/v1", "v1",
                                      "resource.k8s.io/v1", "scheduling.k8s.io/v1alpha2"};
/* where each is listed and watched */
static const char *const COLLECTION[NRES] = {
    "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceslices",
    "/apis/resource.k8s.io/v1/resourceclaims", "/api/v1/nodes", "/apis/resource.k8s.io/v1/devicetaintrules",
    "/apis/scheduling.k8s.io/v1alpha2/podgroups"};

typedef struct event {
    long rv;
    int res;
    const char *type;
    json_t *obj;
} event;

struct fake_api {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long rv, compacted;          /* watches from before `compacted` get 410 */
    json_t *objs[NRES];          /* "ns/name" → object */
    event *ev;
    size_t nev, capev;
    char *token;
    int fail_n, fail_status, fail_retry;
    int expire_n;
    bool unserved[NRES];
    char dtr_version[16];        /* where devicetaintrules are served ("v1" by default) */
    long cut_gen, stall_gen;     /* streams opened before a bump are cut / stalled */
    bool stopping;
    long requests;
    json_t *log;                 /* "METHOD /path" of each request, "?watch" appended for watches */
    /* lists being paged: each continue token names the snapshot its first page was
     * cut from, as etcd serves every page at the list's revision */
    json_t *lists;               /* token id → [items...] */
    json_t *leases;              /* "ns/name" → Lease */
    json_t *pods;                /* "ns/name" → Pod (not watched: bind mode reads them one by one) */
    json_t *events;              /* core/v1 Events POSTed, in order */
    long next_list;
    int watch_list;              /* FAKE_WATCH_LIST_* */
    int initial_delay_ms;        /* between initial events of a streaming list */
    long streaming_lists, paged_lists, held, created;
    bool hold_bindings;
    char fail_method[16], fail_path[128];   /* fake_fail_request */
    int fail_match_status;
    bool tls_client_certs;       /* a client certificate signed by the trusted CA is required */
    /* fake_hold_watch: a resource's watch events after release_rv wait; its lists are
     * served from held_view, the state as of release_rv (a lagging watch cache) */
    bool held_watch[NRES];
    long release_rv[NRES];
    json_t *held_view[NRES];     /* "ns/name" → object */
    long gone_gen[NRES];         /* open streams of the resource opened before a bump get ERROR 410 */
    int slow_claim_answers_ms;   /* a claim write is answered this long after it is stored (and watched) */
};

static int res_index(const char *r) {
    for (int i = 0; i < NRES; i++)
        if (!strcmp(RES[i], r)) return i;
    return -1;
}

static char *key_of(const json_t *o) {
    const json_t *m = json_object_get(o, "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace")), *n = json_string_value(json_object_get(m, "name"));
    char *k = malloc(600);
    snprintf(k, 600, "%s/%s", ns ? ns : "", n ? n : "");
    return k;
}

static void record(fake_api *f, int res, const char *type, json_t *obj) {
    if (f->nev == f->capev) {
        f->capev = f->capev ? f->capev * 2 : 64;
        f->ev = realloc(f->ev, f->capev * sizeof *f->ev);
    }
    f->ev[f->nev++] = (event){f->rv, res, type, json_incref(obj)};
    pthread_cond_broadcast(&f->cv);
}

void fake_put(fake_api *f, const char *resource, json_t *obj) {
    int r = res_index(resource);
    pthread_mutex_lock(&f->mu);
    char *k = key_of(obj);
    bool exists = json_object_get(f->objs[r], k) != NULL;
    f->rv++;
    char rv[32];
    snprintf(rv, sizeof rv, "%ld", f->rv);
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(rv));
    json_object_set_new(obj, "kind", json_string(KIND[r]));
    json_object_set_new(obj, "apiVersion", json_string(API[r]));
    json_object_set(f->objs[r], k, obj);
    record(f, r, exists ? "MODIFIED" : "ADDED", obj);
    json_decref(obj);
    free(k);
    pthread_mutex_unlock(&f->mu);
}

void fake_delete(fake_api *f, const char *resource, const char *ns, const char *name) {
    int r = res_index(resource);
    char k[600];
    snprintf(k, sizeof k, "%s/%s", ns ? ns : "", name);
    pthread_mutex_lock(&f->mu);
    json_t *o = json_object_get(f->objs[r], k);
    if (o) {
        json_incref(o);
        json_object_del(f->objs[r], k);
        f->rv++;
        char rv[32];
        snprintf(rv, sizeof rv, "%ld", f->rv);
        json_t *copy = json_deep_copy(o);
        json_object_set_new(json_object_get(copy, "metadata"), "resourceVersion", json_string(rv));
        record(f, r, "DELETED", copy);
        json_decref(copy);
        json_decref(o);
    }
    pthread_mutex_unlock(&f->mu);
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The objects of a "ns/name" → object map sorted by key. */
static json_t *sorted_map(json_t *objs) {
    size_t n = json_object_size(objs);
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(objs, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_cstr);
    json_t *a = json_array();
    for (i = 0; i < n; i++) json_array_append(a, json_object_get(objs, keys[i]));
    free(keys);
    return a;
}

/* Objects of resource r sorted by key; caller holds mu. */
static json_t *sorted(fake_api *f, int r) { return sorted_map(f->objs[r]); }

/* What lists and streaming lists of r serve, and at which resourceVersion: the
 * current state, or while r's watch is held the state as of its last released event;
 * caller holds mu. */
static json_t *listed_state(fake_api *f, int r, long *rv) {
    *rv = f->held_watch[r] ? f->release_rv[r] : f->rv;
    return f->held_watch[r] ? sorted_map(f->held_view[r]) : sorted(f, r);
}

json_t *fake_objects(fake_api *f, const char *resource) {
    pthread_mutex_lock(&f->mu);
    json_t *a = sorted(f, res_index(resource));
    json_t *copy = json_deep_copy(a);
    json_decref(a);
    pthread_mutex_unlock(&f->mu);
    return copy;
}

#define LOCKED(stmt)                 \
    do {                             \
        pthread_mutex_lock(&f->mu);  \
        stmt;                        \
        pthread_cond_broadcast(&f->cv); \
        pthread_mutex_unlock(&f->mu); \
    } while (0)

void fake_set_token(fake_api *f, const char *t) { LOCKED(free(f->token); f->token = t ? strdup(t) : NULL); }
void fake_compact(fake_api *f) { LOCKED(f->compacted = f->rv + 1); }
void fake_cut_watches(fake_api *f) { LOCKED(f->cut_gen++); }
void fake_stall_watches(fake_api *f) { LOCKED(f->stall_gen++); }
void fake_fail_next(fake_api *f, int n, int status, int ra) { LOCKED(f->fail_n = n; f->fail_status = status; f->fail_retry = ra); }
void fake_expire_next_continue(fake_api *f, int n) { LOCKED(f->expire_n = n); }
void fake_unserve(fake_api *f, const char *resource) { LOCKED(f->unserved[res_index(resource)] = true); }
void fake_serve_taint_rules_at(fake_api *f, const char *version) {
    LOCKED(snprintf(f->dtr_version, sizeof f->dtr_version, "%s", version));
}

/* Discovery as kube-apiserver serves it for resource.k8s.io: the APIGroup with every
 * version something is served at, and each version's APIResourceList. Caller holds mu. */
static json_t *discovery(fake_api *f, const char *url) {
    const char *dtr = f->dtr_version[0] ? f->dtr_version : "v1";
    int dtr_res = res_index("devicetaintrules");
    if (!strcmp(url, "/apis/resource.k8s.io")) {
        json_t *versions = json_array();
        json_array_append_new(versions, json_pack("{s:s, s:s}", "groupVersion", "resource.k8s.io/v1", "version", "v1"));
        if (strcmp(dtr, "v1") && !f->unserved[dtr_res])
            json_array_append_new(versions, json_pack("{s:s+, s:s}", "groupVersion", "resource.k8s.io/", dtr, "version", dtr));
        return json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:s}}", "kind", "APIGroup", "apiVersion", "v1", "name",
                         "resource.k8s.io", "versions", versions, "preferredVersion", "groupVersion", "resource.k8s.io/v1",
                         "version", "v1");
    }
    const char *prefix = "/apis/resource.k8s.io/";
    if (strncmp(url, prefix, strlen(prefix)) || strchr(url + strlen(prefix), '/')) return NULL;
    const char *version = url + strlen(prefix);
    json_t *res = json_array();
    for (int i = 0; i < NRES; i++) {
        if (strncmp(API[i], "resource.k8s.io/", 16) || f->unserved[i]) continue;
        const char *at = i == dtr_res ? dtr : "v1";
        if (strcmp(at, version)) continue;
        json_array_append_new(res, json_pack("{s:s, s:s, s:b}", "name", RES[i], "kind", KIND[i], "namespaced",
                                             !strcmp(RES[i], "resourceclaims")));
    }
    if (!json_array_size(res) && strcmp(version, "v1")) {
        json_decref(res);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s+, s:o}", "kind", "APIResourceList", "apiVersion", "v1", "groupVersion",
                     "resource.k8s.io/", version, "resources", res);
}
json_t *fake_request_log(fake_api *f, bool clear) {
    pthread_mutex_lock(&f->mu);
    json_t *copy = json_copy(f->log);
    if (clear) json_array_clear(f->log);
    pthread_mutex_unlock(&f->mu);
    return copy;
}

long fake_requests(fake_api *f) {
    pthread_mutex_lock(&f->mu);
    long n = f->requests;
    pthread_mutex_unlock(&f->mu);
    return n;
}

/* ---- HTTP --------------------------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, json_t *body, int retry_after) {
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry_after >= 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", retry_after);
        MHD_add_response_header(r, "Retry-After", ra);
    }
    enum MHD_Result rc = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return rc;
}

static json_t *status_obj(int code, const char *reason, const char *msg) {
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1", "status", "Failure",
                     "reason", reason, "message", msg, "code", code);
}

typedef struct stream {
    fake_api *f;
    int res;
    long since;                  /* events with rv > since are due */
    time_t deadline, next_bookmark;
    long cut_gen, stall_gen;
    bool bookmarks, gone, ended, abort_after;
    char *pending;               /* bytes not sent yet */
    size_t plen, poff;
    json_t *initial;             /* streaming list: the objects still to send as ADDED, then the end bookmark */
    size_t ninitial;
    long initial_rv;
    long gone_gen;
} stream;

static void set_pending(stream *s, char *text) {
    free(s->pending);
    s->pending = text;
    s->plen = strlen(text);
    s->poff = 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    stream *s = cls;
    fake_api *f = s->f;
    if (s->poff < s->plen) {
        size_t n = s->plen - s->poff < max ? s->plen - s->poff : max;
        memcpy(buf, s->pending + s->poff, n);
        s->poff += n;
        return (ssize_t)n;
    }
    if (s->abort_after) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (s->ended) return MHD_CONTENT_READER_END_OF_STREAM;
    if (s->initial) {
        /* the state at the request's resourceVersion as ADDED events, one per read, then
         * the bookmark that ends them */
        char *line;
        if (s->ninitial < json_array_size(s->initial)) {
            pthread_mutex_lock(&f->mu);
            long delay_ms = f->initial_delay_ms;
            pthread_mutex_unlock(&f->mu);
            if (delay_ms && s->ninitial) nanosleep(&(struct timespec){0, delay_ms * 1000000L}, NULL);
            json_t *ev = json_pack("{s:s, s:O}", "type", "ADDED", "object", json_array_get(s->initial, s->ninitial++));
            line = json_dumps(ev, JSON_COMPACT);
            json_decref(ev);
        } else {
            json_t *ev = json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:{s:s}}}}", "type", "BOOKMARK", "object", "kind", KIND[s->res],
                                   "apiVersion", API[s->res], "metadata", "resourceVersion", "", "annotations",
                                   "k8s.io/initial-events-end", "true");
            char rv[32];
            snprintf(rv, sizeof rv, "%ld", s->initial_rv);
            json_object_set_new(json_object_get(json_object_get(ev, "object"), "metadata"), "resourceVersion",
                                json_string(rv));
            line = json_dumps(ev, JSON_COMPACT);
            json_decref(ev);
            json_decref(s->initial);
            s->initial = NULL;
        }
        size_t n = strlen(line);
        char *withnl = malloc(n + 2);
        memcpy(withnl, line, n);
        memcpy(withnl + n, "\n", 2);
        free(line);
        set_pending(s, withnl);
        return 0;
    }
    pthread_mutex_lock(&f->mu);
    for (;;) {
        if (f->stopping || time(NULL) >= s->deadline) {
            pthread_mutex_unlock(&f->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (f->cut_gen != s->cut_gen) {
            /* half an event, then the connection drops */
            pthread_mutex_unlock(&f->mu);
            s->abort_after = true;
            set_pending(s, strdup("{\"type\":\"MODIFIED\",\"object\":{\"kind\":"));
            return 0;
        }
        if (f->stall_gen != s->stall_gen) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100000000;
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&f->cv, &f->mu, &ts);
            continue;
        }
        if (s->gone || s->since < f->compacted - 1 || s->gone_gen != f->gone_gen[s->res]) {
            pthread_mutex_unlock(&f->mu);
            json_t *ev = json_pack("{s:s, s:o}", "type", "ERROR", "object",
                                   status_obj(410, "Expired", "too old resource version"));
            char *line = json_dumps(ev, JSON_COMPACT);
            json_decref(ev);
            size_t n = strlen(line);
            char *withnl = malloc(n + 2);
            memcpy(withnl, line, n);
            withnl[n] = '\n';
            withnl[n + 1] = '\0';
            free(line);
            set_pending(s, withnl);
            s->ended = true;
            return 0;
        }
        for (size_t i = 0; i < f->nev; i++) {
            event *e = &f->ev[i];
            if (e->rv <= s->since || e->res != s->res || e->rv < f->compacted) continue;
            if (f->held_watch[s->res] && e->rv > f->release_rv[s->res]) break;   /* held: this and all after */
            json_t *ev = json_pack("{s:s, s:O}", "type", e->type, "object", e->obj);
            s->since = e->rv;
            pthread_mutex_unlock(&f->mu);
            char *line = json_dumps(ev, JSON_COMPACT);
            json_decref(ev);
            size_t n = strlen(line);
            char *withnl = malloc(n + 2);
            memcpy(withnl, line, n);
            memcpy(withnl + n, "\n", 2);
            free(line);
            set_pending(s, withnl);
            return 0;
        }
        if (s->bookmarks && time(NULL) >= s->next_bookmark) {
            s->next_bookmark = time(NULL) + 1;
            /* held: no further than the released events */
            long brv = f->held_watch[s->res] ? f->release_rv[s->res] : f->rv;
            char line[256];
            snprintf(line, sizeof line,
                     "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
                     "{\"resourceVersion\":\"%ld\"}}}\n",
                     KIND[s->res], API[s->res], brv);
            s->since = brv > s->since ? brv : s->since;
            pthread_mutex_unlock(&f->mu);
            set_pending(s, strdup(line));
            return 0;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&f->cv, &f->mu, &ts);
    }
}

static void stream_free(void *cls) {
    stream *s = cls;
    free(s->pending);
    json_decref(s->initial);
    free(s);
}

static const char *arg(struct MHD_Connection *c, const char *k) {
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
}

typedef struct conn {
    char *body;
    size_t len;
} conn;

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t) {
    (void)cls, (void)c, (void)t;
    conn *cn = *con_cls;
    if (cn) free(cn->body);
    free(cn);
    *con_cls = NULL;
}

static enum MHD_Result handle_lease(fake_api *f, struct MHD_Connection *c, const char *url, const char *method,
                                    const conn *cn);

static enum MHD_Result handle_pod_list(fake_api *f, struct MHD_Connection *c);
static enum MHD_Result handle_event(fake_api *f, struct MHD_Connection *c, const char *method, const conn *cn);
static enum MHD_Result handle_pod(fake_api *f, struct MHD_Connection *c, const char *url, const char *method,
                                  const conn *cn);
static enum MHD_Result handle_claim(fake_api *f, struct MHD_Connection *c, const char *url, const char *method,
                                    const conn *cn);
static enum MHD_Result handle_podgroup(fake_api *f, struct MHD_Connection *c, const char *url, const char *method);

/* TLS with a trusted CA: the client's certificate must verify against it, as the
 * kube-apiserver's x509 authenticator checks it (no certificate, no other credential:
 * 401). */
static bool client_cert_ok(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session) return false;
    unsigned status = 0;
    return gnutls_certificate_verify_peers2((gnutls_session_t)ci->tls_session, &status) == 0 && status == 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    (void)version;
    fake_api *f = cls;
    if (!*con_cls) {   /* first call: headers only */
        *con_cls = calloc(1, sizeof(conn));
        return MHD_YES;
    }
    conn *cn = *con_cls;
    if (*upload_size) {
        cn->body = realloc(cn->body, cn->len + *upload_size + 1);
        memcpy(cn->body + cn->len, upload, *upload_size);
        cn->len += *upload_size;
        cn->body[cn->len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }
    if (f->tls_client_certs && !client_cert_ok(c))
        return reply(c, 401, status_obj(401, "Unauthorized", "Unauthorized: no valid client certificate"), -1);
    pthread_mutex_lock(&f->mu);
    f->requests++;
    {
        const char *w = arg(c, "watch");
        json_array_append_new(f->log, json_sprintf("%s %s%s", method, url, w && strcmp(w, "0") && strcmp(w, "false") ? "?watch" : ""));
    }
    if (f->fail_n > 0) {
        f->fail_n--;
        int st = f->fail_status, ra = f->fail_retry;
        pthread_mutex_unlock(&f->mu);
        return reply(c, (unsigned)st, status_obj(st, st == 429 ? "TooManyRequests" : "InternalError", "injected"), ra);
    }
    if (f->fail_match_status && !strcmp(method, f->fail_method) && strstr(url, f->fail_path)) {
        int st = f->fail_match_status;
        f->fail_match_status = 0;
        pthread_mutex_unlock(&f->mu);
        return reply(c, (unsigned)st, status_obj(st, "InternalError", "injected for this request"), -1);
    }
    if (f->token) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        char want[300];
        snprintf(want, sizeof want, "Bearer %s", f->token);
        if (!auth || strcmp(auth, want)) {
            pthread_mutex_unlock(&f->mu);
            return reply(c, 401, status_obj(401, "Unauthorized", "Unauthorized"), -1);
        }
    }
    pthread_mutex_unlock(&f->mu);
    if (!strncmp(url, "/apis/coordination.k8s.io/v1/namespaces/", 40)) return handle_lease(f, c, url, method, cn);
    if (!strcmp(url, "/api/v1/pods") && !strcmp(method, "GET")) return handle_pod_list(f, c);
    {
        size_t ul = strlen(url);
        if (!strncmp(url, "/api/v1/namespaces/", 19) && ul > 26 && strchr(url + 19, '/') == url + ul - 7 &&
            !strcmp(url + ul - 7, "/events"))
            return handle_event(f, c, method, cn);
    }
    if (!strncmp(url, "/api/v1/namespaces/", 19)) return handle_pod(f, c, url, method, cn);
    if (!strncmp(url, "/apis/resource.k8s.io/v1/namespaces/", 36)) return handle_claim(f, c, url, method, cn);
    if (!strncmp(url, "/apis/scheduling.k8s.io/v1alpha2/namespaces/", 44)) return handle_podgroup(f, c, url, method);
    if (strcmp(method, "GET")) return reply(c, 405, status_obj(405, "MethodNotAllowed", method), -1);
    pthread_mutex_lock(&f->mu);
    json_t *disc = discovery(f, url);
    char dtr_path[96];
    snprintf(dtr_path, sizeof dtr_path, "/apis/resource.k8s.io/%s/devicetaintrules", f->dtr_version[0] ? f->dtr_version : "v1");
    pthread_mutex_unlock(&f->mu);
    if (disc) return reply(c, 200, disc, -1);
    int r = -1;
    for (int i = 0; i < NRES && r < 0; i++)
        if (!strcmp(url, i == res_index("devicetaintrules") ? dtr_path : COLLECTION[i])) r = i;
    if (r < 0 || f->unserved[r]) return reply(c, 404, status_obj(404, "NotFound", "the server could not find the requested resource"), -1);
    const char *watch = arg(c, "watch");
    if (watch && (!strcmp(watch, "1") || !strcmp(watch, "true"))) {
        const char *sie = arg(c, "sendInitialEvents");
        bool initial = sie && !strcmp(sie, "true") && f->watch_list != FAKE_WATCH_LIST_IGNORED;
        if (initial && f->watch_list == FAKE_WATCH_LIST_REFUSED)
            /* what a kube-apiserver without the WatchList feature answers */
            return reply(c, 422, status_obj(422, "Invalid",
                                            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
                                            "sendInitialEvents is forbidden for watch unless the WatchList feature gate "
                                            "is enabled"),
                         -1);
        stream *s = calloc(1, sizeof *s);
        s->f = f;
        s->res = r;
        const char *rv = arg(c, "resourceVersion"), *to = arg(c, "timeoutSeconds"), *bm = arg(c, "allowWatchBookmarks");
        pthread_mutex_lock(&f->mu);
        if (initial) {
            /* a streaming list: the current state, then the events after it */
            s->initial = listed_state(f, r, &s->initial_rv);
            s->since = s->initial_rv;
            f->streaming_lists++;
        } else {
            s->since = rv && *rv ? strtol(rv, NULL, 10) : f->held_watch[r] ? f->release_rv[r] : f->rv;
        }
        s->gone_gen = f->gone_gen[r];
        s->gone = s->since + 1 < f->compacted;
        s->cut_gen = f->cut_gen;
        s->stall_gen = f->stall_gen;
        pthread_mutex_unlock(&f->mu);
        s->deadline = time(NULL) + (to ? strtol(to, NULL, 10) : 300);
        s->bookmarks = bm && !strcmp(bm, "true");
        s->next_bookmark = time(NULL) + 1;
        struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
        MHD_add_response_header(resp, "Content-Type", "application/json");
        enum MHD_Result rc = MHD_queue_response(c, 200, resp);
        MHD_destroy_response(resp);
        return rc;
    }
    /* list with paging: the continue token is "<list id>:<offset>:<rv>" */
    const char *lim = arg(c, "limit"), *cont = arg(c, "continue");
    long limit = lim ? strtol(lim, NULL, 10) : 0, off = 0, id = 0, lrv = 0;
    pthread_mutex_lock(&f->mu);
    if (cont && f->expire_n > 0) {
        f->expire_n--;
        pthread_mutex_unlock(&f->mu);
        return reply(c, 410, status_obj(410, "Expired", "The provided continue parameter is too old"), -1);
    }
    if (!cont) f->paged_lists++;
    json_t *all;
    char idk[32];
    if (cont && sscanf(cont, "%ld:%ld:%ld", &id, &off, &lrv) == 3 &&
        (snprintf(idk, sizeof idk, "%ld", id), json_object_get(f->lists, idk))) {
        all = json_incref(json_object_get(f->lists, idk));
    } else {
        all = listed_state(f, r, &lrv);
        id = ++f->next_list;
        snprintf(idk, sizeof idk, "%ld", id);
        json_object_set(f->lists, idk, all);
        off = 0;
    }
    char rv[32];
    snprintf(rv, sizeof rv, "%ld", lrv);
    pthread_mutex_unlock(&f->mu);
    json_t *items = json_array();
    size_t n = json_array_size(all);
    size_t end = limit > 0 && (size_t)(off + limit) < n ? (size_t)(off + limit) : n;
    for (size_t i = (size_t)off; i < end; i++) {
        json_t *it = json_deep_copy(json_array_get(all, i));
        json_object_del(it, "kind");   /* list items carry no kind */
        json_object_del(it, "apiVersion");
        json_array_append_new(items, it);
    }
    json_decref(all);
    if (end >= n) {   /* the last page: the list's snapshot is done with */
        pthread_mutex_lock(&f->mu);
        json_object_del(f->lists, idk);
        pthread_mutex_unlock(&f->mu);
    }
    json_t *meta = json_pack("{s:s}", "resourceVersion", rv);
    if (end < n) {
        char tok[64];
        snprintf(tok, sizeof tok, "%ld:%zu:%ld", id, end, lrv);
        json_object_set_new(meta, "continue", json_string(tok));
    }
    char lk[64];
    snprintf(lk, sizeof lk, "%sList", KIND[r]);
    return reply(c, 200, json_pack("{s:s, s:s, s:o, s:o}", "kind", lk, "apiVersion", API[r], "metadata", meta, "items", items),
                 -1);
}

/* Leases: GET, POST (create; 409 when it exists), PUT (409 unless
 * metadata.resourceVersion is the current one). Kept beside the DRA objects. */
static enum MHD_Result handle_lease(fake_api *f, struct MHD_Connection *c, const char *url, const char *method,
                                    const conn *cn) {
    char ns[128] = "", name[128] = "";
    const char *rest = url + 40;
    if (sscanf(rest, "%127[^/]/leases/%127[^/]", ns, name) < 1)
        return reply(c, 404, status_obj(404, "NotFound", "no such path"), -1);
    json_t *body = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
    if (!strcmp(method, "POST")) {
        const char *n = json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
        snprintf(name, sizeof name, "%s", n ? n : "");
    }
    char key[300];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    json_t *cur = json_object_get(f->leases, key);
    unsigned code = 200;
    json_t *out;
    if (!strcmp(method, "GET")) {
        out = cur ? json_deep_copy(cur) : status_obj(404, "NotFound", "leases not found");
        code = cur ? 200 : 404;
    } else if (!body || !*name) {
        out = status_obj(400, "BadRequest", "a Lease object is required");
        code = 400;
    } else {
        const char *rv = json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
        const char *crv = cur ? json_string_value(json_object_get(json_object_get(cur, "metadata"), "resourceVersion")) : NULL;
        if (!strcmp(method, "POST") && cur) {
            out = status_obj(409, "AlreadyExists", "leases already exists");
            code = 409;
        } else if (!strcmp(method, "PUT") && (!cur || !rv || strcmp(rv, crv))) {
            out = status_obj(cur ? 409 : 404, cur ? "Conflict" : "NotFound",
                             "the object has been modified; please apply your changes to the latest version");
            code = cur ? 409 : 404;
        } else {
            char nrv[32];
            snprintf(nrv, sizeof nrv, "%ld", ++f->rv);
            json_object_set_new(json_object_get(body, "metadata"), "resourceVersion", json_string(nrv));
            json_object_set(f->leases, key, body);
            out = json_deep_copy(body);
            code = !strcmp(method, "POST") ? 201 : 200;
        }
    }
    pthread_mutex_unlock(&f->mu);
    json_decref(body);
    return reply(c, code, out, -1);
}

/* RFC 7386 on dst: an object member merges, null removes, anything else replaces. */
static void merge_patch(json_t *dst, const json_t *patch) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)patch, k, v) {
        json_t *d = json_object_get(dst, k);
        if (json_is_null(v)) json_object_del(dst, k);
        else if (json_is_object(v) && json_is_object(d)) merge_patch(d, v);
        else if (json_is_object(v)) {
            json_t *fresh = json_object();
            merge_patch(fresh, v);
            json_object_set_new(dst, k, fresh);
        } else json_object_set(dst, k, v);
    }
}

/* GET /api/v1/pods: every pod, with fieldSelector spec.nodeName=N or labelSelector KEY
 * (the key present) when given — the two selectors `serve --preemption=evict` sends. */
static enum MHD_Result handle_pod_list(fake_api *f, struct MHD_Connection *c) {
    const char *fs = arg(c, "fieldSelector"), *ls = arg(c, "labelSelector");
    const char *node = fs && !strncmp(fs, "spec.nodeName=", 14) ? fs + 14 : NULL;
    if ((fs && !node) || (ls && strchr(ls, '=')))
        return reply(c, 400, status_obj(400, "BadRequest", "fake: unsupported selector"), -1);
    json_t *items = json_array();
    pthread_mutex_lock(&f->mu);
    const char *k;
    json_t *p;
    json_object_foreach(f->pods, k, p) {
        const char *nn = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        if (node && (!nn || strcmp(nn, node))) continue;
        if (ls && !json_object_get(json_object_get(json_object_get(p, "metadata"), "labels"), ls)) continue;
        json_array_append_new(items, json_deep_copy(p));
    }
    char rv[32];
    snprintf(rv, sizeof rv, "%ld", f->rv);
    pthread_mutex_unlock(&f->mu);
    return reply(c, 200, json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", "PodList", "apiVersion", "v1", "metadata",
                                   "resourceVersion", rv, "items", items), -1);
}

/* POST /api/v1/namespaces/NS/events: kept (fake_events). */
static enum MHD_Result handle_event(fake_api *f, struct MHD_Connection *c, const char *method, const conn *cn) {
    json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
    if (strcmp(method, "POST") || !json_is_object(b)) {
        json_decref(b);
        return reply(c, 400, status_obj(400, "BadRequest", "fake: POST an Event"), -1);
    }
    pthread_mutex_lock(&f->mu);
    json_array_append(f->events, b);
    pthread_mutex_unlock(&f->mu);
    return reply(c, 201, b, -1);
}

/* Pods: GET one, PATCH it (a merge patch of metadata; metadata.uid a precondition),
 * POST its eviction (metadata.deletionTimestamp set: the pod terminates until
 * fake_delete_pod), PATCH its status (a strategic-merge patch of status fields, merged
 * key by key: what the scheduler's PatchPodStatus sends), POST its binding
 * (spec.nodeName set once; 409 when bound; held while fake_hold_bindings says so). */
static enum MHD_Result handle_pod(fake_api *f, struct MHD_Connection *c, const char *url, const char *method,
                                  const conn *cn) {
    char ns[128] = "", name[256] = "", sub[32] = "";
    if (sscanf(url + 19, "%127[^/]/pods/%255[^/]/%31s", ns, name, sub) < 2)
        return reply(c, 404, status_obj(404, "NotFound", "no such path"), -1);
    char key[400];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    if (!strcmp(sub, "binding") && !strcmp(method, "POST") && f->hold_bindings) {
        f->held++;
        pthread_cond_broadcast(&f->cv);
        while (f->hold_bindings && !f->stopping) pthread_cond_wait(&f->cv, &f->mu);
        f->held--;
    }
    json_t *pod = json_object_get(f->pods, key);
    unsigned code;
    json_t *out;
    if (!pod) {
        code = 404;
        out = status_obj(404, "NotFound", "pods not found");
    } else if (!*sub && !strcmp(method, "GET")) {
        code = 200;
        out = json_deep_copy(pod);
    } else if (!*sub && !strcmp(method, "PATCH")) {
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        const char *puid = json_string_value(json_object_get(json_object_get(b, "metadata"), "uid"));
        const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
        if (!json_is_object(b)) {
            code = 400;
            out = status_obj(400, "BadRequest", "a merge patch is expected");
        } else if (puid && (!uid || strcmp(puid, uid))) {
            code = 409;
            out = status_obj(409, "Conflict", "Precondition failed: UID in precondition does not match");
        } else {
            merge_patch(pod, b);
            code = 200;
            out = json_deep_copy(pod);
        }
        json_decref(b);
    } else if (!strcmp(sub, "eviction") && !strcmp(method, "POST")) {
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        const char *puid = json_string_value(json_object_get(json_object_get(json_object_get(b, "deleteOptions"),
                                                                             "preconditions"), "uid"));
        const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
        if (puid && (!uid || strcmp(puid, uid))) {
            code = 409;
            out = status_obj(409, "Conflict", "Precondition failed: UID in precondition does not match");
        } else {
            json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
            code = 201;
            out = json_pack("{s:s, s:s}", "kind", "Status", "status", "Success");
        }
        json_decref(b);
    } else if (!strcmp(sub, "status") && !strcmp(method, "PATCH")) {
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        if (!ct || (strcmp(ct, "application/strategic-merge-patch+json") && strcmp(ct, "application/merge-patch+json"))) {
            code = 415;
            out = status_obj(415, "UnsupportedMediaType", ct ? ct : "no Content-Type");
        } else if (!json_is_object(json_object_get(b, "status"))) {
            code = 400;
            out = status_obj(400, "BadRequest", "a patch of status is expected");
        } else {
            json_t *st = json_object_get(pod, "status");
            if (!json_is_object(st)) json_object_set_new(pod, "status", st = json_object());
            json_object_update(st, json_object_get(b, "status"));
            code = 200;
            out = json_deep_copy(pod);
        }
        json_decref(b);
    } else if (!strcmp(sub, "binding") && !strcmp(method, "POST")) {
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        const char *node = json_string_value(json_object_get(json_object_get(b, "target"), "name"));
        json_t *spec = json_object_get(pod, "spec");
        if (!node) {
            code = 400;
            out = status_obj(400, "BadRequest", "target.name is required");
        } else if (json_string_value(json_object_get(spec, "nodeName"))) {
            code = 409;
            out = status_obj(409, "Conflict", "pod is already assigned to a node");
        } else {
            json_object_set_new(spec, "nodeName", json_string(node));
            code = 201;
            out = json_pack("{s:s, s:s}", "kind", "Status", "status", "Success");
        }
        json_decref(b);
    } else {
        code = 405;
        out = status_obj(405, "MethodNotAllowed", method);
    }
    pthread_mutex_unlock(&f->mu);
    return reply(c, code, out, -1);
}

/* A new version of an object: stored, resourceVersion bumped, event recorded; caller
 * holds mu. */
static void store_version(fake_api *f, int r, const char *key, json_t *obj, const char *type) {
    f->rv++;
    char nrv[32];
    snprintf(nrv, sizeof nrv, "%ld", f->rv);
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(nrv));
    if (strcmp(type, "DELETED")) json_object_set(f->objs[r], key, obj);
    else json_object_del(f->objs[r], key);
    record(f, r, type, obj);
}

/* ResourceClaims: POST (create, generateName honoured, uid given), GET, PUT (metadata
 * and spec), PUT status, DELETE (with finalizers left: deletionTimestamp set, as the
 * API server does). Each PUT needs the current resourceVersion (409 otherwise); every
 * change is an event for watchers. */
static enum MHD_Result handle_claim(fake_api *f, struct MHD_Connection *c, const char *url, const char *method,
                                    const conn *cn) {
    char ns[128] = "", name[256] = "", sub[32] = "";
    int parts = sscanf(url + 36, "%127[^/]/resourceclaims/%255[^/]/%31s", ns, name, sub);
    int r = res_index("resourceclaims");
    if (parts < 1 || !strstr(url + 36, "/resourceclaims")) return reply(c, 404, status_obj(404, "NotFound", "no such path"), -1);
    unsigned code;
    json_t *out;
    if (parts == 1 && !strcmp(method, "POST")) {
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        json_t *meta = json_object_get(b, "metadata");
        const char *n = json_string_value(json_object_get(meta, "name")), *gen = json_string_value(json_object_get(meta, "generateName"));
        pthread_mutex_lock(&f->mu);
        char nm[300];
        if (n) snprintf(nm, sizeof nm, "%s", n);
        else if (gen) snprintf(nm, sizeof nm, "%s%05ld", gen, ++f->created);
        char key[450];
        snprintf(key, sizeof key, "%s/%s", ns, json_is_object(meta) && (n || gen) ? nm : "");
        if (!json_is_object(meta) || (!n && !gen)) {
            code = 422;
            out = status_obj(422, "Invalid", "metadata.name or metadata.generateName is required");
        } else if (json_object_get(json_object_get(b, "status"), "allocation")) {
            code = 422;
            out = status_obj(422, "Invalid", "status cannot be set on create");
        } else if (json_object_get(f->objs[r], key)) {
            code = 409;
            out = status_obj(409, "AlreadyExists", "resourceclaims already exists");
        } else {
            json_t *obj = json_deep_copy(b);
            json_t *m = json_object_get(obj, "metadata");
            json_object_set_new(m, "name", json_string(nm));
            json_object_set_new(m, "namespace", json_string(ns));
            json_object_del(m, "generateName");
            char uid[64];
            snprintf(uid, sizeof uid, "claim-uid-%ld", f->rv + 1);
            json_object_set_new(m, "uid", json_string(uid));
            json_object_set_new(obj, "kind", json_string("ResourceClaim"));
            json_object_set_new(obj, "apiVersion", json_string("resource.k8s.io/v1"));
            store_version(f, r, key, obj, "ADDED");
            out = json_deep_copy(obj);
            json_decref(obj);
            code = 201;
        }
        int slow = f->slow_claim_answers_ms;
        pthread_mutex_unlock(&f->mu);
        json_decref(b);
        if (slow) nanosleep(&(struct timespec){slow / 1000, (slow % 1000) * 1000000L}, NULL);
        return reply(c, code, out, -1);
    }
    if (parts < 2) return reply(c, 405, status_obj(405, "MethodNotAllowed", method), -1);
    char key[400];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    json_t *cur = json_object_get(f->objs[r], key);
    if (!cur) {
        code = 404;
        out = status_obj(404, "NotFound", "resourceclaims not found");
    } else if (!strcmp(method, "GET") && !*sub) {
        code = 200;
        out = json_deep_copy(cur);
    } else if (!strcmp(method, "DELETE") && !*sub) {
        json_t *next = json_deep_copy(cur);
        if (json_array_size(json_object_get(json_object_get(cur, "metadata"), "finalizers"))) {
            json_object_set_new(json_object_get(next, "metadata"), "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
            store_version(f, r, key, next, "MODIFIED");
        } else {
            store_version(f, r, key, next, "DELETED");
        }
        out = json_deep_copy(next);
        json_decref(next);
        code = 200;
    } else if (!strcmp(method, "PUT") && (!*sub || !strcmp(sub, "status"))) {
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        const char *rv = json_string_value(json_object_get(json_object_get(b, "metadata"), "resourceVersion"));
        const char *crv = json_string_value(json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
        if (!b || !rv || strcmp(rv, crv)) {
            code = 409;
            out = status_obj(409, "Conflict", "the object has been modified; please apply your changes to the latest version");
        } else {
            json_t *next = json_deep_copy(cur);
            if (*sub) json_object_set(next, "status", json_object_get(b, "status") ?: json_object());
            else json_object_set(next, "metadata", json_object_get(b, "metadata")), json_object_set(next, "spec", json_object_get(b, "spec"));
            /* a deleted claim whose last finalizer goes is gone */
            const json_t *m = json_object_get(next, "metadata");
            bool gone = !*sub && json_object_get(m, "deletionTimestamp") && !json_array_size(json_object_get(m, "finalizers"));
            store_version(f, r, key, next, gone ? "DELETED" : "MODIFIED");
            out = json_deep_copy(next);
            json_decref(next);
            code = 200;
        }
        json_decref(b);
    } else if (!strcmp(method, "PATCH") && !*sub) {
        /* a JSON merge patch (RFC 7386), as extender/requeue.c sends for its annotation */
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        json_t *b = cn->body ? json_loads(cn->body, 0, NULL) : NULL;
        if (!ct || strcmp(ct, "application/merge-patch+json") || !json_is_object(b)) {
            code = 415;
            out = status_obj(415, "UnsupportedMediaType", "a merge patch (application/merge-patch+json) is expected");
        } else {
            json_t *next = json_deep_copy(cur);
            merge_patch(next, b);
            store_version(f, r, key, next, "MODIFIED");
            out = json_deep_copy(next);
            json_decref(next);
            code = 200;
        }
        json_decref(b);
    } else {
        code = 405;
        out = status_obj(405, "MethodNotAllowed", method);
    }
    int slow = strcmp(method, "GET") ? f->slow_claim_answers_ms : 0;
    pthread_mutex_unlock(&f->mu);
    if (slow) nanosleep(&(struct timespec){slow / 1000, (slow % 1000) * 1000000L}, NULL);
    return reply(c, code, out, -1);
}

/* PodGroups: GET one (bind mode reads its uid for a claim's reservedFor). */
static enum MHD_Result handle_podgroup(fake_api *f, struct MHD_Connection *c, const char *url, const char *method) {
    char ns[128] = "", name[256] = "";
    if (sscanf(url + 44, "%127[^/]/podgroups/%255[^/]", ns, name) < 2 || strcmp(method, "GET"))
        return reply(c, 404, status_obj(404, "NotFound", "no such path"), -1);
    int r = res_index("podgroups");
    char key[400];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    json_t *cur = f->unserved[r] ? NULL : json_object_get(f->objs[r], key);
    json_t *out = cur ? json_deep_copy(cur) : status_obj(404, "NotFound", "podgroups not found");
    pthread_mutex_unlock(&f->mu);
    return reply(c, cur ? 200 : 404, out, -1);
}

void fake_put_pod(fake_api *f, json_t *pod) {
    const json_t *m = json_object_get(pod, "metadata");
    char key[400];
    snprintf(key, sizeof key, "%s/%s", json_string_value(json_object_get(m, "namespace")) ?: "default",
             json_string_value(json_object_get(m, "name")) ?: "");
    pthread_mutex_lock(&f->mu);
    json_object_set_new(f->pods, key, pod);
    pthread_mutex_unlock(&f->mu);
}

void fake_delete_pod(fake_api *f, const char *ns, const char *name) {
    char key[400];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    json_object_del(f->pods, key);
    pthread_mutex_unlock(&f->mu);
}

json_t *fake_events(fake_api *f) {
    pthread_mutex_lock(&f->mu);
    json_t *e = json_deep_copy(f->events);
    pthread_mutex_unlock(&f->mu);
    return e;
}

json_t *fake_pod(fake_api *f, const char *ns, const char *name) {
    char key[400];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    json_t *p = json_deep_copy(json_object_get(f->pods, key));
    pthread_mutex_unlock(&f->mu);
    return p;
}

json_t *fake_lease(fake_api *f, const char *ns, const char *name) {
    char key[300];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    json_t *l = json_deep_copy(json_object_get(f->leases, key));
    pthread_mutex_unlock(&f->mu);
    return l;
}

fake_api *fake_start(void) { return fake_start_tls(NULL); }

fake_api *fake_start_tls(const fake_tls *tls) {
    fake_api *f = calloc(1, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    for (int i = 0; i < NRES; i++) f->objs[i] = json_object();
    f->lists = json_object();
    f->leases = json_object();
    f->log = json_array();
    f->pods = json_object();
    f->events = json_array();
    f->rv = 100;
    f->tls_client_certs = tls && tls->trust_pem;
    /* loopback only, a free port */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
    if (tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            fprintf(stderr, "fakeapi: this libmicrohttpd has no TLS\n");
            exit(1);
        }
        flags |= MHD_USE_TLS;
        f->d = tls->trust_pem
                   ? MHD_start_daemon(flags, 0, NULL, NULL, handle, f, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                      MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_HTTPS_MEM_KEY,
                                      tls->key_pem, MHD_OPTION_HTTPS_MEM_CERT, tls->cert_pem,
                                      MHD_OPTION_HTTPS_MEM_TRUST, tls->trust_pem, MHD_OPTION_END)
                   : MHD_start_daemon(flags, 0, NULL, NULL, handle, f, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                      MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_HTTPS_MEM_KEY,
                                      tls->key_pem, MHD_OPTION_HTTPS_MEM_CERT, tls->cert_pem, MHD_OPTION_END);
    } else {
        f->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, f, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    }
    if (!f->d) {
        fprintf(stderr, "fakeapi: cannot start\n");
        exit(1);
    }
    f->port = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return f;
}

void fake_set_watch_list(fake_api *f, int mode) { LOCKED(f->watch_list = mode); }
void fake_slow_initial_events(fake_api *f, int ms) { LOCKED(f->initial_delay_ms = ms); }
void fake_hold_bindings(fake_api *f, bool hold) { LOCKED(f->hold_bindings = hold); }
void fake_fail_request(fake_api *f, const char *method, const char *path_part, int status) {
    LOCKED(snprintf(f->fail_method, sizeof f->fail_method, "%s", method);
           snprintf(f->fail_path, sizeof f->fail_path, "%s", path_part); f->fail_match_status = status);
}

void fake_hold_watch(fake_api *f, const char *resource, bool hold) {
    int r = res_index(resource);
    pthread_mutex_lock(&f->mu);
    if (hold && !f->held_watch[r]) {
        f->release_rv[r] = f->rv;
        f->held_view[r] = json_deep_copy(f->objs[r]);
    } else if (!hold) {
        json_decref(f->held_view[r]);
        f->held_view[r] = NULL;
    }
    f->held_watch[r] = hold;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* The first held event of r; caller holds mu. */
static event *first_held(fake_api *f, int r) {
    for (size_t i = 0; i < f->nev; i++)
        if (f->ev[i].res == r && f->ev[i].rv > f->release_rv[r]) return &f->ev[i];
    return NULL;
}

long fake_release_watch_event(fake_api *f, const char *resource, json_t **obj, const char **type) {
    int r = res_index(resource);
    pthread_mutex_lock(&f->mu);
    event *e = f->held_watch[r] ? first_held(f, r) : NULL;
    long rv = 0;
    if (e) {
        rv = f->release_rv[r] = e->rv;
        char *k = key_of(e->obj);
        if (!strcmp(e->type, "DELETED")) json_object_del(f->held_view[r], k);
        else json_object_set_new(f->held_view[r], k, json_deep_copy(e->obj));
        free(k);
        if (obj) *obj = json_deep_copy(e->obj);
        if (type) *type = e->type;
        pthread_cond_broadcast(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return rv;
}

int fake_held_events(fake_api *f, const char *resource) {
    int r = res_index(resource), n = 0;
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; f->held_watch[r] && i < f->nev; i++)
        if (f->ev[i].res == r && f->ev[i].rv > f->release_rv[r]) n++;
    pthread_mutex_unlock(&f->mu);
    return n;
}

void fake_slow_claim_answers(fake_api *f, int ms) { LOCKED(f->slow_claim_answers_ms = ms); }

void fake_gone_watches(fake_api *f, const char *resource) { LOCKED(f->gone_gen[res_index(resource)]++); }

void fake_release_by_relist(fake_api *f, const char *resource) {
    int r = res_index(resource);
    LOCKED(f->held_watch[r] = false; json_decref(f->held_view[r]); f->held_view[r] = NULL; f->gone_gen[r]++);
}

int fake_held_bindings(fake_api *f) {
    pthread_mutex_lock(&f->mu);
    int n = (int)f->held;
    pthread_mutex_unlock(&f->mu);
    return n;
}

void fake_list_counts(fake_api *f, long *streaming, long *paged) {
    pthread_mutex_lock(&f->mu);
    *streaming = f->streaming_lists;
    *paged = f->paged_lists;
    pthread_mutex_unlock(&f->mu);
}

int fake_port(const fake_api *f) { return f->port; }

void fake_stop(fake_api *f) {
    pthread_mutex_lock(&f->mu);
    f->stopping = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    MHD_stop_daemon(f->d);
    for (size_t i = 0; i < f->nev; i++) json_decref(f->ev[i].obj);
    free(f->ev);
    for (int i = 0; i < NRES; i++) json_decref(f->objs[i]), json_decref(f->held_view[i]);
    json_decref(f->lists);
    json_decref(f->leases);
    json_decref(f->pods);
    json_decref(f->events);
    json_decref(f->log);
    free(f->token);
    free(f);
}
