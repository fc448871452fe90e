/* plan_copies.c — copies of node shapes on one store (plan_copies.h). */
#include "planner/plan_copies.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct copy_rec {
    char *node;
    long idx;                /* the whatif index in its name */
    char **slices;           /* its node-local ResourceSlices, deleted with it */
    size_t nslices;
} copy_rec;

typedef struct shape_copies {
    const plan_objects *shape;
    const char *node;        /* the shape's Node: the shape's name */
    copy_rec *made;          /* every copy ever made, in order; the first `cur` are in the store */
    size_t nmade, cap;
    long cur;
    long next_idx;           /* the next whatif index to try */
} shape_copies;

struct plan_copies {
    dra_store *st;
    shape_copies *v;
    size_t n;
    char **base_nodes;       /* the base's node names, sorted: names a copy may not take */
    size_t nbase;
    json_t *owner;           /* copy name -> shape index */
};

static const char *kind_of(const json_t *o) { return json_string_value(json_object_get(o, "kind")); }
static const char *name_of(const json_t *o) { return json_string_value(json_object_get(json_object_get(o, "metadata"), "name")); }
static const char *node_of_slice(const json_t *o) {
    return json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool base_has_node(const plan_copies *c, const char *name) {
    return bsearch(&name, c->base_nodes, c->nbase, sizeof *c->base_nodes, cmp_str) != NULL;
}

/* The shape's one Node, or NULL with e set. */
static const char *shape_node(const plan_objects *shape, err *e) {
    const char *node = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(shape->items, i, x) {
        if (!kind_of(x) || strcmp(kind_of(x), "Node")) continue;
        if (node) return err_set(e, "the node shape has more than one Node (%s, %s)", node, name_of(x) ? name_of(x) : "?"), NULL;
        node = name_of(x);
        if (!node) return err_set(e, "the node shape's Node has no metadata.name"), NULL;
    }
    if (!node) err_set(e, "the node shape has no Node");
    return node;
}

/* The shape's objects that are not its node's own (DeviceClasses, ...), applied when
 * the store does not hold one of that kind and name. */
static bool apply_extras(plan_copies *c, const shape_copies *sc, err *e) {
    dra_snapshot *s = dra_store_acquire(c->st);
    json_t *add = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(sc->shape->items, i, x) {
        const char *k = kind_of(x);
        if (!k || !strcmp(k, "Node")) continue;
        if (!strcmp(k, "ResourceSlice") && node_of_slice(x) && !strcmp(node_of_slice(x), sc->node)) continue;
        const char *ns = json_string_value(json_object_get(json_object_get(x, "metadata"), "namespace"));
        json_t *keys = s ? dra_snapshot_keys(s, k) : NULL;
        bool have = false;
        size_t j;
        json_t *kv;
        json_array_foreach(keys, j, kv) {
            const char *kns = json_string_value(json_array_get(kv, 0)), *kn = json_string_value(json_array_get(kv, 1));
            if (kn && name_of(x) && !strcmp(kn, name_of(x)) && !strcmp(kns ? kns : "", ns ? ns : "")) have = true;
        }
        json_decref(keys);
        if (!have) json_array_append(add, x);
    }
    if (s) dra_snapshot_release(s);
    bool ok = !json_array_size(add) || dra_store_apply_json(c->st, add, e);
    json_decref(add);
    return ok;
}

plan_copies *plan_copies_new(dra_store *st, const plan_objects *shapes, size_t nshapes, err *e) {
    plan_copies *c = xcalloc(1, sizeof *c);
    c->st = st;
    c->n = nshapes;
    c->v = xcalloc(nshapes ? nshapes : 1, sizeof *c->v);
    c->owner = json_object();
    dra_snapshot *s = dra_store_acquire(st);
    c->nbase = s ? dra_snapshot_nnodes(s) : 0;
    c->base_nodes = xcalloc(c->nbase ? c->nbase : 1, sizeof *c->base_nodes);
    for (size_t i = 0; i < c->nbase; i++) c->base_nodes[i] = xstrdup(dra_snapshot_node_name(s, i));
    if (s) dra_snapshot_release(s);
    /* the snapshot's order is name order already; sorting again costs nothing and
     * makes bsearch independent of how the engine orders them */
    qsort(c->base_nodes, c->nbase, sizeof *c->base_nodes, cmp_str);
    for (size_t i = 0; i < nshapes; i++) {
        c->v[i].shape = &shapes[i];
        if (!(c->v[i].node = shape_node(&shapes[i], e))) goto fail;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->v[j].node, c->v[i].node)) {
                err_set(e, "two node shapes are named %s (a shape is named by its Node)", c->v[i].node);
                goto fail;
            }
        if (!apply_extras(c, &c->v[i], e)) goto fail;
    }
    return c;
fail:
    plan_copies_free(c);
    return NULL;
}

void plan_copies_free(plan_copies *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        for (size_t k = 0; k < c->v[i].nmade; k++) {
            copy_rec *r = &c->v[i].made[k];
            free(r->node);
            for (size_t j = 0; j < r->nslices; j++) free(r->slices[j]);
            free(r->slices);
        }
        free(c->v[i].made);
    }
    for (size_t i = 0; i < c->nbase; i++) free(c->base_nodes[i]);
    free(c->base_nodes);
    json_decref(c->owner);
    free(c->v);
    free(c);
}

size_t plan_copies_nshapes(const plan_copies *c) { return c->n; }
const char *plan_copies_shape_name(const plan_copies *c, size_t s) { return c->v[s].node; }
long plan_copies_count(const plan_copies *c, size_t s) { return c->v[s].cur; }

const char *plan_copies_node(const plan_copies *c, size_t s, long i) {
    return i >= 0 && (size_t)i < c->v[s].nmade ? c->v[s].made[i].node : NULL;
}

long plan_copies_shape_of(const plan_copies *c, const char *node) {
    const json_t *v = json_object_get(c->owner, node);
    return v ? (long)json_integer_value(v) : -1;
}

/* Copy `k` of shape s as objects (a new array): its Node and node-local slices. Made
 * (named, recorded) the first time it is asked for. */
static json_t *copy_objects(plan_copies *c, size_t s, size_t k, err *e) {
    shape_copies *sc = &c->v[s];
    assert(k <= sc->nmade);
    long idx;
    if (k < sc->nmade) {
        idx = sc->made[k].idx;
    } else {
        char name[512];
        for (;; sc->next_idx++) {
            snprintf(name, sizeof name, "%s-whatif-%ld", sc->node, sc->next_idx);
            if (!base_has_node(c, name) && !json_object_get(c->owner, name)) break;
        }
        idx = sc->next_idx++;
    }
    plan_objects tmp;
    plan_objects_init(&tmp);
    if (!plan_add_nodes(&tmp, sc->shape, 1, idx, e)) {
        plan_objects_free(&tmp);
        return NULL;
    }
    char name[512];
    snprintf(name, sizeof name, "%s-whatif-%ld", sc->node, idx);
    json_t *out = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(tmp.items, i, x) {
        const char *kd = kind_of(x);
        if (!kd) continue;
        if ((!strcmp(kd, "Node") && name_of(x) && !strcmp(name_of(x), name)) ||
            (!strcmp(kd, "ResourceSlice") && node_of_slice(x) && !strcmp(node_of_slice(x), name)))
            json_array_append(out, x);
    }
    plan_objects_free(&tmp);
    if (k == sc->nmade) {
        if (sc->nmade == sc->cap) sc->made = xrealloc(sc->made, (sc->cap = sc->cap ? sc->cap * 2 : 16) * sizeof *sc->made);
        copy_rec *r = &sc->made[sc->nmade++];
        memset(r, 0, sizeof *r);
        r->node = xstrdup(name);
        r->idx = idx;
        r->slices = xcalloc(json_array_size(out) + 1, sizeof *r->slices);
        json_array_foreach(out, i, x) if (!strcmp(kind_of(x), "ResourceSlice") && name_of(x)) r->slices[r->nslices++] = xstrdup(name_of(x));
        json_object_set_new(c->owner, name, json_integer((json_int_t)s));
    }
    return out;
}

bool plan_copies_set(plan_copies *c, const long *counts, err *e) {
    json_t *ups = json_array();
    size_t ndel = 0, capdel = 16;
    dra_change *del = xcalloc(capdel, sizeof *del);
    bool ok = true;
    for (size_t s = 0; s < c->n && ok; s++) {
        shape_copies *sc = &c->v[s];
        assert(counts[s] >= 0);
        for (long k = sc->cur; k < counts[s] && ok; k++) {
            json_t *objs = copy_objects(c, s, (size_t)k, e);
            if (!objs) ok = false;
            else json_array_extend(ups, objs);
            json_decref(objs);
        }
        for (long k = counts[s]; k < sc->cur; k++) {
            const copy_rec *r = &sc->made[k];
            if (ndel + r->nslices + 1 > capdel) del = xrealloc(del, (capdel = (ndel + r->nslices + 1) * 2) * sizeof *del);
            for (size_t j = 0; j < r->nslices; j++) del[ndel++] = (dra_change){.kind = "ResourceSlice", .name = r->slices[j]};
            del[ndel++] = (dra_change){.kind = "Node", .name = r->node};
        }
    }
    if (ok && (ndel || json_array_size(ups))) {
        size_t nup = json_array_size(ups), n = ndel + nup;
        dra_change *ch = xcalloc(n, sizeof *ch);
        memcpy(ch, del, ndel * sizeof *ch);
        for (size_t i = 0; i < nup; i++) ch[ndel + i] = (dra_change){.upsert = json_array_get(ups, i), .source = "node shape"};
        ok = dra_store_apply(c->st, ch, n, e) != 0;
        free(ch);
    }
    if (ok)
        for (size_t s = 0; s < c->n; s++) c->v[s].cur = counts[s];
    free(del);
    json_decref(ups);
    return ok;
}

bool plan_copies_node_local(plan_copies *c) {
    dra_snapshot *s = dra_store_acquire(c->st);
    if (!s) return true;
    bool local = dra_snapshot_slices_node_local(s);
    dra_snapshot_release(s);
    return local;
}
