/* lease.c — leader election on a Lease (lease.h): one candidate thread that tries to
 * acquire or renew every retry period. */
#include "extender/lease.h"

#include "base/base.h"
#include "base/clock.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ext_lease {
    ext_kube *k;
    ext_lease_opts o;
    char *ns, *name, *identity;
    pthread_t th;
    _Atomic bool stop, leader;
    double last_renew;           /* when this process last renewed successfully (monotonic s) */
    /* what we last saw of the Lease, and when it last changed on our clock; seen_holder
     * is also read by /bind on a standby (under mu) */
    pthread_mutex_t mu;
    char *seen_holder, *seen_renew;
    double seen_at;
};

static double now_s(void) { return (double)monotonic_ns() / 1e9; }

static void llog(const ext_lease *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void llog(const ext_lease *l, const char *fmt, ...) {
    if (l->o.quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "leader-election: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* MicroTime: RFC 3339 with microseconds, UTC. */
static void micro_time(char *buf, size_t n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%06ldZ", base, ts.tv_nsec / 1000);
}

static json_t *lease_obj(const ext_lease *l, const char *rv, const char *holder, const char *acquire, int transitions) {
    char t[64];
    micro_time(t, sizeof t);
    json_t *spec = json_pack("{s:s, s:i, s:s, s:s, s:i}", "holderIdentity", holder, "leaseDurationSeconds",
                             (int)(l->o.duration_s + 0.5), "acquireTime", acquire ? acquire : t, "renewTime", t,
                             "leaseTransitions", transitions);
    json_t *meta = json_pack("{s:s, s:s}", "name", l->name, "namespace", l->ns);
    if (rv) json_object_set_new(meta, "resourceVersion", json_string(rv));
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "coordination.k8s.io/v1", "kind", "Lease", "metadata", meta,
                     "spec", spec);
}

static bool write_lease(ext_lease *l, const char *method, json_t *obj) {
    char path[512];
    if (!strcmp(method, "POST")) snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
    else snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    char *body = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    ext_kube_resp r;
    err e;
    err_clear(&e);
    bool ok = ext_kube_request(l->k, method, path, body, "application/json", &r, &e);
    free(body);
    if (!ok) {
        llog(l, "%s lease: %s", method, e.msg);
        return false;
    }
    free(r.body);
    if (r.status == 409) return false;   /* somebody else wrote first: stay as we are */
    if (r.status != 200 && r.status != 201) {
        llog(l, "%s lease: HTTP %ld", method, r.status);
        return false;
    }
    return true;
}

static void set_str(char **dst, const char *s) {
    free(*dst);
    *dst = s ? xstrdup(s) : NULL;
}

static bool str_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* One round: acquire or renew. True when we hold the Lease afterwards. */
static bool try_acquire(ext_lease *l) {
    char path[512];
    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    ext_kube_resp r;
    err e;
    err_clear(&e);
    if (!ext_kube_request(l->k, "GET", path, NULL, NULL, &r, &e)) {
        llog(l, "get lease: %s", e.msg);
        return false;
    }
    if (r.status == 404) {
        free(r.body);
        return write_lease(l, "POST", lease_obj(l, NULL, l->identity, NULL, 0));
    }
    json_t *doc = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    free(r.body);
    if (!doc) {
        llog(l, "get lease: HTTP %ld", r.status);
        return false;
    }
    const json_t *spec = json_object_get(doc, "spec");
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    const char *renew = json_string_value(json_object_get(spec, "renewTime"));
    const char *acquire = json_string_value(json_object_get(spec, "acquireTime"));
    const char *rv = json_string_value(json_object_get(json_object_get(doc, "metadata"), "resourceVersion"));
    int transitions = (int)json_integer_value(json_object_get(spec, "leaseTransitions"));
    json_int_t dur = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    double now = now_s();
    if (!str_eq(holder, l->seen_holder) || !str_eq(renew, l->seen_renew)) {
        pthread_mutex_lock(&l->mu);
        set_str(&l->seen_holder, holder);
        pthread_mutex_unlock(&l->mu);
        set_str(&l->seen_renew, renew);
        l->seen_at = now;
    }
    bool ok;
    if (holder && !strcmp(holder, l->identity)) {
        ok = write_lease(l, "PUT", lease_obj(l, rv, l->identity, acquire, transitions));
    } else if (!holder || !*holder || now - l->seen_at > (double)(dur > 0 ? dur : (json_int_t)l->o.duration_s)) {
        ok = write_lease(l, "PUT", lease_obj(l, rv, l->identity, NULL, transitions + 1));
        if (ok) llog(l, "took over the lease from %s", holder && *holder ? holder : "nobody");
    } else {
        ok = false;
    }
    json_decref(doc);
    return ok;
}

static void *run(void *arg) {
    ext_lease *l = arg;
    while (!atomic_load(&l->stop)) {
        bool held = try_acquire(l);
        double now = now_s();
        if (held) l->last_renew = now;
        bool was = atomic_load(&l->leader);
        /* a leader keeps leading through failed renewals until the renew deadline */
        bool lead = held || (was && now - l->last_renew < l->o.renew_deadline_s);
        if (lead != was) llog(l, "%s %s/%s", lead ? "leading on" : "lost", l->ns, l->name);
        atomic_store(&l->leader, lead);
        for (double t = 0; t < l->o.retry_s && !atomic_load(&l->stop); t += 0.05)
            nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    return NULL;
}

ext_lease *ext_lease_start(ext_kube *k, const ext_lease_opts *o) {
    ext_lease *l = xcalloc(1, sizeof *l);
    l->k = k;
    l->o = *o;
    if (l->o.duration_s <= 0) l->o.duration_s = 15;
    if (l->o.renew_deadline_s <= 0) l->o.renew_deadline_s = 10;
    if (l->o.retry_s <= 0) l->o.retry_s = 2;
    pthread_mutex_init(&l->mu, NULL);
    l->ns = xstrdup(o->ns ? o->ns : "kube-system");
    l->name = xstrdup(o->name ? o->name : "dralloc-extender");
    if (o->identity) {
        l->identity = xstrdup(o->identity);
    } else {
        char host[256] = "dralloc";
        gethostname(host, sizeof host - 1);
        char id[300];
        snprintf(id, sizeof id, "%s_%d", host, (int)getpid());
        l->identity = xstrdup(id);
    }
    pthread_create(&l->th, NULL, run, l);
    return l;
}

bool ext_lease_is_leader(ext_lease *l) { return l && atomic_load(&l->leader); }
const char *ext_lease_identity(const ext_lease *l) { return l->identity; }

char *ext_lease_holder(ext_lease *l) {
    pthread_mutex_lock(&l->mu);
    char *h = l->seen_holder && *l->seen_holder ? xstrdup(l->seen_holder) : NULL;
    pthread_mutex_unlock(&l->mu);
    return h;
}

void ext_lease_name(const ext_lease *l, char *buf, size_t n) { snprintf(buf, n, "%s/%s", l->ns, l->name); }

void ext_lease_stop(ext_lease *l, bool release) {
    if (!l) return;
    atomic_store(&l->stop, true);
    pthread_join(l->th, NULL);
    if (release && atomic_load(&l->leader)) {
        /* hand over now: an empty holder is free to take */
        char path[512];
        snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
        ext_kube_resp r;
        err e;
        err_clear(&e);
        if (ext_kube_request(l->k, "GET", path, NULL, NULL, &r, &e) && r.status == 200) {
            json_t *doc = json_loadb(r.body, r.len, 0, NULL);
            const char *rv = json_string_value(json_object_get(json_object_get(doc, "metadata"), "resourceVersion"));
            const char *holder = json_string_value(json_object_get(json_object_get(doc, "spec"), "holderIdentity"));
            if (holder && !strcmp(holder, l->identity))
                write_lease(l, "PUT", lease_obj(l, rv, "", NULL,
                                                (int)json_integer_value(json_object_get(json_object_get(doc, "spec"),
                                                                                        "leaseTransitions"))));
            json_decref(doc);
        }
        if (r.body) free(r.body);
    }
    atomic_store(&l->leader, false);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l->seen_holder);
    free(l->seen_renew);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
