/* hold.c — the holds table and the annotation that records a hold on its pod (hold.h).
 *
 * Invariants (under mu): at most one entry per preemptor UID; an entry's strings and
 * JSON are its own (copies), so a caller's copy outlives a drop; `through` of an entry
 * holds at most HOLD__THROUGH_MAX UIDs (the oldest forgotten first: such a pod's /bind
 * is then refused and kube-scheduler tries it again, which asks /filter again). */
#include "extender/hold.h"

#include "base/base.h"
#include "base/clock.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOLD__THROUGH_MAX 32

typedef struct hold__entry {
    ext_hold h;
    char *through[HOLD__THROUGH_MAX];   /* higher-priority pods /filter let through (UIDs) */
    size_t nthrough, next;
} hold__entry;

struct ext_holds {
    pthread_mutex_t mu;
    hold__entry *v;
    size_t n, cap;
};

static char *dup_or_empty(const char *s) { return xstrdup(s ? s : ""); }

void ext_hold_clear(ext_hold *h) {
    if (!h) return;
    free(h->ns), free(h->name), free(h->uid), free(h->node);
    json_decref(h->victims);
    json_decref(h->devices);
    *h = (ext_hold){0};
}

static void hold__copy(ext_hold *dst, const ext_hold *src) {
    *dst = (ext_hold){.ns = dup_or_empty(src->ns), .name = dup_or_empty(src->name), .uid = dup_or_empty(src->uid),
                      .node = dup_or_empty(src->node), .priority = src->priority, .expires_ns = src->expires_ns,
                      .since_ns = src->since_ns,
                      .victims = src->victims ? json_deep_copy(src->victims) : json_array(),
                      .devices = src->devices ? json_deep_copy(src->devices) : json_array()};
}

/* RFC 3339 in UTC, seconds (metav1.Time's form). */
static void rfc3339(int64_t unix_ns, char *buf, size_t n) {
    time_t t = (time_t)(unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static bool parse_rfc3339(const char *s, int64_t *out) {
    struct tm tm = {0};
    const char *rest = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest || (*rest && *rest != 'Z')) return false;
    *out = (int64_t)timegm(&tm) * 1000000000;
    return true;
}

char *ext_hold_annotation(const ext_hold *h) {
    char exp[40];
    rfc3339(h->expires_ns, exp, sizeof exp);
    json_t *o = json_pack("{s:s, s:I, s:s, s:O, s:O}", "node", h->node ? h->node : "", "priority",
                          (json_int_t)h->priority, "expires", exp, "victims", h->victims ? h->victims : json_null(),
                          "devices", h->devices ? h->devices : json_null());
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s ? s : xstrdup("{}");
}

bool ext_hold_from_pod(const json_t *pod, ext_hold *out) {
    const json_t *md = json_object_get(pod, "metadata");
    const char *v = json_string_value(json_object_get(json_object_get(md, "annotations"), EXT_HOLD_ANNOTATION));
    json_t *a = v ? json_loads(v, 0, NULL) : NULL;
    const char *node = json_string_value(json_object_get(a, "node"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    int64_t exp;
    if (!node || !*node || !uid || !json_is_integer(json_object_get(a, "priority")) ||
        !parse_rfc3339(json_string_value(json_object_get(a, "expires")), &exp)) {
        json_decref(a);
        return false;
    }
    const json_t *victims = json_object_get(a, "victims"), *devices = json_object_get(a, "devices");
    *out = (ext_hold){.ns = dup_or_empty(json_string_value(json_object_get(md, "namespace"))),
                      .name = dup_or_empty(json_string_value(json_object_get(md, "name"))),
                      .uid = xstrdup(uid), .node = xstrdup(node),
                      .priority = (int32_t)json_integer_value(json_object_get(a, "priority")),
                      .expires_ns = exp, .since_ns = realtime_ns(),
                      .victims = json_is_array(victims) ? json_incref((json_t *)victims) : json_array(),
                      .devices = json_is_array(devices) ? json_incref((json_t *)devices) : json_array()};
    json_decref(a);
    return true;
}

ext_holds *ext_holds_new(void) {
    ext_holds *t = xcalloc(1, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

static void entry_free(hold__entry *e) {
    ext_hold_clear(&e->h);
    for (size_t i = 0; i < e->nthrough; i++) free(e->through[i]);
}

void ext_holds_free(ext_holds *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) entry_free(&t->v[i]);
    free(t->v);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

/* Index of uid's entry, or t->n; under mu. */
static size_t find_locked(const ext_holds *t, const char *uid) {
    size_t i = 0;
    while (i < t->n && (!uid || strcmp(t->v[i].h.uid, uid))) i++;
    return i;
}

void ext_holds_put(ext_holds *t, const ext_hold *h) {
    assert(h && h->uid && *h->uid && h->node && *h->node);
    pthread_mutex_lock(&t->mu);
    size_t i = find_locked(t, h->uid);
    if (i < t->n) {
        ext_hold_clear(&t->v[i].h);   /* the pods let through stay: the same preemptor */
    } else {
        if (t->n == t->cap) t->v = xrealloc(t->v, (t->cap = t->cap ? 2 * t->cap : 8) * sizeof *t->v);
        t->v[t->n++] = (hold__entry){0};
    }
    hold__copy(&t->v[i].h, h);
    pthread_mutex_unlock(&t->mu);
}

bool ext_holds_drop(ext_holds *t, const char *uid) {
    pthread_mutex_lock(&t->mu);
    size_t i = find_locked(t, uid);
    bool found = i < t->n;
    if (found) {
        entry_free(&t->v[i]);
        t->v[i] = t->v[--t->n];
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

bool ext_holds_has(ext_holds *t, const char *uid) {
    if (!t || !uid) return false;
    pthread_mutex_lock(&t->mu);
    bool found = find_locked(t, uid) < t->n;
    pthread_mutex_unlock(&t->mu);
    return found;
}

bool ext_holds_get(ext_holds *t, const char *uid, ext_hold *out) {
    pthread_mutex_lock(&t->mu);
    size_t i = find_locked(t, uid);
    bool found = i < t->n;
    if (found) hold__copy(out, &t->v[i].h);
    pthread_mutex_unlock(&t->mu);
    return found;
}

static bool let_through(hold__entry *e, const char *uid) {
    for (size_t i = 0; i < e->nthrough; i++)
        if (!strcmp(e->through[i], uid)) return true;
    return false;
}

bool ext_holds_blocks(ext_holds *t, const char *node, const char *uid, const int32_t *priority, char *who, size_t n) {
    if (!t || !node) return false;
    bool blocked = false;
    pthread_mutex_lock(&t->mu);
    /* a preemptor holding this node passes the other holds on it: each was made with
     * victims of its own (a room never picks a pod already terminating), so they wait
     * for different devices, and none preempts again */
    for (size_t i = 0; uid && i < t->n; i++)
        if (!strcmp(t->v[i].h.node, node) && !strcmp(t->v[i].h.uid, uid)) {
            pthread_mutex_unlock(&t->mu);
            return false;
        }
    for (size_t i = 0; i < t->n && !blocked; i++) {
        hold__entry *e = &t->v[i];
        if (strcmp(e->h.node, node) || (uid && !strcmp(e->h.uid, uid))) continue;
        if (priority && *priority > e->h.priority) {
            if (uid && !let_through(e, uid)) {
                if (e->nthrough == HOLD__THROUGH_MAX) free(e->through[e->next]);
                else e->nthrough++;
                e->through[e->next] = xstrdup(uid);
                e->next = (e->next + 1) % HOLD__THROUGH_MAX;
            }
            continue;
        }
        if (!priority && uid && let_through(e, uid)) continue;
        blocked = true;
        if (who && n) snprintf(who, n, "%s/%s", e->h.ns, e->h.name);
    }
    pthread_mutex_unlock(&t->mu);
    return blocked;
}

size_t ext_holds_list(ext_holds *t, ext_hold **out) {
    pthread_mutex_lock(&t->mu);
    size_t n = t->n;
    *out = xcalloc(n + 1, sizeof **out);
    for (size_t i = 0; i < n; i++) hold__copy(&(*out)[i], &t->v[i].h);
    pthread_mutex_unlock(&t->mu);
    return n;
}

size_t ext_holds_count(ext_holds *t) {
    if (!t) return 0;
    pthread_mutex_lock(&t->mu);
    size_t n = t->n;
    pthread_mutex_unlock(&t->mu);
    return n;
}

json_t *ext_holds_json(ext_holds *t) {
    json_t *a = json_array();
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++) {
        const ext_hold *h = &t->v[i].h;
        char pod[600], exp[40];
        snprintf(pod, sizeof pod, "%s/%s", h->ns, h->name);
        rfc3339(h->expires_ns, exp, sizeof exp);
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I, s:s, s:O}", "pod", pod, "uid", h->uid, "node", h->node,
                                           "priority", (json_int_t)h->priority, "expires", exp, "victims", h->victims));
    }
    pthread_mutex_unlock(&t->mu);
    return a;
}
