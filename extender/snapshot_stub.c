/* snapshot_stub.c — TEMPORARY stand-in for engine/snapshot.c (being written on main) so
 * the extender links and its HTTP layer can be tested early. Objects are kept as JSON;
 * a node fits unless its Node has label stub/full=true; unknown nodes are
 * unresolvable. Delete when main's engine/snapshot.c is merged. */
#include "engine/engine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dra_snapshot {
    _Atomic long refs;
    json_t *objs;   /* object: "kind/ns/name" -> object */
    uint64_t gen;
    int64_t built;
    uint64_t build_ns;
};

struct dra_store {
    pthread_mutex_t mu;
    dra_snapshot *cur;
    json_t *objs;
    uint64_t gen;
};

struct dra_pod_request {
    dra_snapshot *s;
    bool needs;
    char error[256];
};

dra_store *dra_store_new(const dra_features *f) {
    (void)f;
    dra_store *st = calloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    st->objs = json_object();
    return st;
}

void dra_store_free(dra_store *st) {
    if (st->cur) dra_snapshot_release(st->cur);
    json_decref(st->objs);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

static const char *str_at(const json_t *o, const char *a, const char *b) {
    const json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : "";
}

static void key_of(char *k, size_t n, const char *kind, const char *ns, const char *name) {
    snprintf(k, n, "%s/%s/%s", kind, ns ? ns : "", name);
}

static uint64_t publish(dra_store *st) {
    dra_snapshot *s = calloc(1, sizeof *s);
    s->refs = 1;
    s->objs = json_deep_copy(st->objs);
    s->gen = ++st->gen;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->built = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    s->build_ns = 1000;
    dra_snapshot *old = st->cur;
    st->cur = s;
    if (old) dra_snapshot_release(old);
    return s->gen;
}

uint64_t dra_store_apply(dra_store *st, const dra_change *c, size_t n, err *e) {
    pthread_mutex_lock(&st->mu);
    json_t *next = json_deep_copy(st->objs);
    for (size_t i = 0; i < n; i++) {
        char k[1024];
        if (c[i].upsert) {
            if (!json_is_object(c[i].upsert) || !*str_at(c[i].upsert, "kind", NULL) ||
                !*str_at(c[i].upsert, "metadata", "name")) {
                err_set(e, "object without kind or metadata.name");
                json_decref(next);
                pthread_mutex_unlock(&st->mu);
                return 0;
            }
            key_of(k, sizeof k, str_at(c[i].upsert, "kind", NULL), str_at(c[i].upsert, "metadata", "namespace"),
                   str_at(c[i].upsert, "metadata", "name"));
            json_object_set_new(next, k, json_deep_copy(c[i].upsert));
        } else {
            key_of(k, sizeof k, c[i].kind, c[i].ns, c[i].name);
            if (json_object_del(next, k)) {
                err_set(e, "%s %s not found", c[i].kind, c[i].name);
                json_decref(next);
                pthread_mutex_unlock(&st->mu);
                return 0;
            }
        }
    }
    json_decref(st->objs);
    st->objs = next;
    uint64_t g = publish(st);
    pthread_mutex_unlock(&st->mu);
    return g;
}

uint64_t dra_store_apply_json(dra_store *st, const json_t *doc, err *e) {
    const json_t *items = json_is_array(doc) ? doc : json_object_get(doc, "items");
    if (!json_is_array(items)) {
        dra_change c = {.upsert = doc};
        return dra_store_apply(st, &c, 1, e);
    }
    size_t n = json_array_size(items);
    dra_change *cs = calloc(n + 1, sizeof *cs);
    for (size_t i = 0; i < n; i++) cs[i].upsert = json_array_get(items, i);
    uint64_t g = dra_store_apply(st, cs, n, e);
    free(cs);
    return g;
}

uint64_t dra_store_load_paths(dra_store *st, const char *const *paths, size_t n, err *e) {
    uint64_t g = 0;
    for (size_t i = 0; i < n; i++) {
        json_error_t je;
        json_t *d = json_load_file(paths[i], 0, &je);
        if (!d) {
            err_set(e, "%s: %s", paths[i], je.text);
            return 0;
        }
        g = dra_store_apply_json(st, d, e);
        json_decref(d);
        if (!g) return 0;
    }
    return g;
}

dra_snapshot *dra_store_acquire(dra_store *st) {
    pthread_mutex_lock(&st->mu);
    dra_snapshot *s = st->cur ? dra_snapshot_retain(st->cur) : NULL;
    pthread_mutex_unlock(&st->mu);
    return s;
}

dra_snapshot *dra_snapshot_retain(dra_snapshot *s) {
    atomic_fetch_add(&s->refs, 1);
    return s;
}

void dra_snapshot_release(dra_snapshot *s) {
    if (atomic_fetch_sub(&s->refs, 1) == 1) {
        json_decref(s->objs);
        free(s);
    }
}

uint64_t dra_snapshot_generation(const dra_snapshot *s) { return s->gen; }
int64_t dra_snapshot_built_unix_ns(const dra_snapshot *s) { return s->built; }
uint64_t dra_snapshot_build_ns(const dra_snapshot *s) { return s->build_ns; }

size_t dra_snapshot_count(const dra_snapshot *s, const char *kind) {
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(s->objs, k, v) if (!strcmp(str_at(v, "kind", NULL), kind)) n++;
    return n;
}

json_t *dra_snapshot_counts_json(const dra_snapshot *s) {
    json_t *r = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(s->objs, k, v) {
        const char *kind = str_at(v, "kind", NULL);
        json_object_set_new(r, kind, json_integer(json_integer_value(json_object_get(r, kind)) + 1));
    }
    return r;
}

size_t dra_snapshot_nnodes(const dra_snapshot *s) { return dra_snapshot_count(s, "Node"); }
const char *dra_snapshot_node_name(const dra_snapshot *s, size_t i) {
    (void)s;
    (void)i;
    return NULL;
}

dra_pod_request *dra_pod_request_new(dra_snapshot *s, const json_t *pod, err *e) {
    const json_t *spec = json_object_get(pod, "spec");
    if (spec && !json_is_object(spec)) {
        err_set(e, "spec: expected an object");
        return NULL;
    }
    dra_pod_request *pr = calloc(1, sizeof *pr);
    pr->s = dra_snapshot_retain(s);
    const json_t *rc = json_object_get(spec, "resourceClaims");
    pr->needs = json_array_size(rc) > 0;
    size_t i;
    const json_t *c;
    json_array_foreach(rc, i, c) {
        const char *name = str_at(c, "resourceClaimName", NULL);
        char k[1024];
        key_of(k, sizeof k, "ResourceClaim", str_at(pod, "metadata", "namespace"), name);
        if (*name && !json_object_get(s->objs, k)) snprintf(pr->error, sizeof pr->error, "claim %s not found", name);
    }
    return pr;
}

void dra_pod_request_free(dra_pod_request *pr) {
    dra_snapshot_release(pr->s);
    free(pr);
}

bool dra_pod_request_needs_dra(const dra_pod_request *pr) { return pr->needs; }
const char *dra_pod_request_error(const dra_pod_request *pr) { return pr->error[0] ? pr->error : NULL; }

void dra_pod_fit(const dra_pod_request *pr, dra_alloc_ctx *x, const char *node, const json_t *node_obj,
                 dra_score_mode mode, uint64_t deadline_ns, dra_fit *out) {
    (void)x;
    (void)deadline_ns;
    memset(out, 0, sizeof *out);
    char k[1024];
    key_of(k, sizeof k, "Node", NULL, node);
    const json_t *n = node_obj ? node_obj : json_object_get(pr->s->objs, k);
    out->steps = 1;
    if (!n) {
        out->status = DRA_FIT_UNRESOLVABLE;
        snprintf(out->reason, sizeof out->reason, "node %s not found", node);
    } else if (!strcmp(str_at(json_object_get(n, "metadata"), "labels", NULL), "") &&
               !strcmp(str_at(json_object_get(json_object_get(n, "metadata"), "labels"), "stub/full", NULL), "true")) {
        out->status = DRA_FIT_UNSCHEDULABLE;
        snprintf(out->reason, sizeof out->reason, "all devices in use");
    } else {
        out->score = mode == DRA_SCORE_NONE ? 0 : 7;
    }
}

const char *dra_fit_status_name(dra_fit_status s) {
    static const char *const n[] = {"fit", "unschedulable", "unresolvable", "timeout", "error"};
    return (unsigned)s < 5 ? n[s] : "?";
}

bool dra_score_mode_parse(const char *s, dra_score_mode *out) {
    if (!strcmp(s, "binpack")) *out = DRA_SCORE_BINPACK;
    else if (!strcmp(s, "spread")) *out = DRA_SCORE_SPREAD;
    else if (!strcmp(s, "none")) *out = DRA_SCORE_NONE;
    else return false;
    return true;
}
