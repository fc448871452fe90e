/* objcache.c — the JSON of one kind's objects (objcache.h): a jansson object from
 * "namespace/name" to the object, under one mutex. */
#include "extender/objcache.h"

#include "base/base.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct ext_objcache {
    pthread_mutex_t mu;
    json_t *objs;                /* "ns/name" → object (a reference of ours) */
};

ext_objcache *ext_objcache_new(void) {
    ext_objcache *c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->objs = json_object();
    return c;
}

void ext_objcache_free(ext_objcache *c) {
    if (!c) return;
    json_decref(c->objs);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void key_of(const char *ns, const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", ns ? ns : "", name ? name : "");
}

void ext_objcache_put(ext_objcache *c, json_t *obj) {
    const json_t *m = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(m, "name"));
    if (!name) return;   /* nothing to find it by */
    char key[600];
    key_of(json_string_value(json_object_get(m, "namespace")), name, key, sizeof key);
    pthread_mutex_lock(&c->mu);
    json_object_set(c->objs, key, obj);
    pthread_mutex_unlock(&c->mu);
}

void ext_objcache_del(ext_objcache *c, const char *ns, const char *name) {
    char key[600];
    key_of(ns, name, key, sizeof key);
    pthread_mutex_lock(&c->mu);
    json_object_del(c->objs, key);
    pthread_mutex_unlock(&c->mu);
}

json_t *ext_objcache_copy(ext_objcache *c, const char *ns, const char *name) {
    char key[600];
    key_of(ns, name, key, sizeof key);
    /* the copy under the lock, no reference taken: the watch drops its own reference to
     * a value it put at any time, and jansson's json_incref reads the count without an
     * atomic load before its atomic increment — a data race ThreadSanitizer reports
     * (seen with the evictor, extender/evict.c, copying claims beside the watch).
     * Values never change once put, so reading one needs only that it stay alive. */
    pthread_mutex_lock(&c->mu);
    const json_t *o = json_object_get(c->objs, key);
    json_t *copy = o ? json_deep_copy(o) : NULL;
    pthread_mutex_unlock(&c->mu);
    return copy;
}

size_t ext_objcache_size(ext_objcache *c) {
    pthread_mutex_lock(&c->mu);
    size_t n = json_object_size(c->objs);
    pthread_mutex_unlock(&c->mu);
    return n;
}

void ext_objcache_clear(ext_objcache *c) {
    pthread_mutex_lock(&c->mu);
    json_object_clear(c->objs);
    pthread_mutex_unlock(&c->mu);
}
