/* world.c — a snapshot's world (world.h): its slice indexes (node → slices, pool →
 * slices, slices without a node name), kept as persistent maps so that consecutive
 * snapshots share them; lookups by namespace/name, answered by the snapshot's object
 * maps; the lists of every object of a kind in arrival order, collected at first use;
 * and the things a caller makes beside a world in its own memory (a claim from a
 * template, a node without a Node object). */
#include "engine/world/world.h"

#include "base/hash.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

dra_world *dra__world_new_in(dra_catalog *cat, const dra_world_source *src, const void *arg) {
    dra_world *w = xcalloc(1, sizeof *w);
    w->src = src;
    w->src_arg = arg;
    w->cat = dra__catalog_retain(cat);
    w->names = cat->names;
    w->env = cat->env;
    w->cel = cat->cel;
    w->env_any = cat->env_any;
    w->cel_any = cat->cel_any;
    pmap_init(&w->slices_by_pool, &dra__slice_list_ops);
    pmap_init(&w->slices_by_node, &dra__slice_list_ops);
    pthread_mutex_init(&w->lists_lock, NULL);
    return w;
}

void dra__world_free(dra_world *w) {
    if (!w) return;
    pmap_free(&w->slices_by_node);
    pmap_free(&w->slices_by_pool);
    dra__slice_list_ops.release(w->unnamed);
    for (int k = 0; k < DRA_KIND_COUNT; k++) free(w->lists[k].v);
    pthread_mutex_destroy(&w->lists_lock);
    dra__catalog_release(w->cat);
    free(w);
}

/* ---- slice indexes ------------------------------------------------------------------ */

static dra_slice_list *slist_new(uint32_t n) {
    dra_slice_list *l = xmalloc(sizeof *l + (n ? n : 1) * sizeof *l->v);
    atomic_init(&l->refs, 1);
    l->n = 0;
    return l;
}

static void slist_retain(void *p) {
    if (p) atomic_fetch_add_explicit(&((dra_slice_list *)p)->refs, 1, memory_order_relaxed);
}

static void slist_release(void *p) {
    dra_slice_list *l = p;
    if (l && atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1) free(l);
}

const pmap_ops dra__slice_list_ops = {slist_retain, slist_release};

/* l with s in its place by index (NULL l: empty). */
static dra_slice_list *slist_with(const dra_slice_list *l, const dra_slice *s) {
    uint32_t n = l ? l->n : 0, i = n;
    while (i > 0 && l->v[i - 1]->index > s->index) i--;
    dra_slice_list *o = slist_new(n + 1);
    if (i) memcpy(o->v, l->v, i * sizeof *o->v);
    o->v[i] = s;
    if (n > i) memcpy(o->v + i + 1, l->v + i, (n - i) * sizeof *o->v);
    o->n = n + 1;
    return o;
}

/* l without the slice of s's index; NULL when nothing is left. */
static dra_slice_list *slist_without(const dra_slice_list *l, const dra_slice *s) {
    dra_slice_list *o = slist_new(l->n);
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i]->index != s->index) o->v[o->n++] = l->v[i];
    if (!o->n) {
        free(o);
        return NULL;
    }
    return o;
}

static uint32_t slice_node_id(const dra_slice *s) {
    if (!s->node_name || !*s->node_name) return 0;
    return s->node_id;   /* interned when the slice was decoded */
}

const dra_slice_list *dra__world_node_slices(const dra_world *w, uint32_t node_id) {
    return node_id ? pmap_get(&w->slices_by_node, hash_u64(node_id), NULL, NULL) : NULL;
}

const dra_slice_list *dra__world_pool_slices(const dra_world *w, uint32_t pool_key) {
    return pmap_get(&w->slices_by_pool, hash_u64(pool_key), NULL, NULL);
}

/* One index's list for key h, with s added (add) or removed. */
static void index_edit(pmap *m, uint64_t h, const dra_slice *s, bool add) {
    const dra_slice_list *l = pmap_get(m, h, NULL, NULL);
    dra_slice_list *o = add ? slist_with(l, s) : l ? slist_without(l, s) : NULL;
    if (o) pmap_put(m, h, o, NULL, NULL);
    else if (l) pmap_del(m, h, NULL, NULL);
}

static void slice_edit(dra_world *w, const dra_slice *s, bool add) {
    index_edit(&w->slices_by_pool, hash_u64(s->pool_key), s, add);
    uint32_t nid = slice_node_id(s);
    if (nid) {
        index_edit(&w->slices_by_node, hash_u64(nid), s, add);
        return;
    }
    dra_slice_list *o = add ? slist_with(w->unnamed, s) : w->unnamed ? slist_without(w->unnamed, s) : NULL;
    slist_release(w->unnamed);
    w->unnamed = o;
}

void dra__world_slice_add(dra_world *w, const dra_slice *s) { slice_edit(w, s, true); }
void dra__world_slice_remove(dra_world *w, const dra_slice *s) { slice_edit(w, s, false); }

/* Groups v[0..n) (arrival order) by a 64-bit key into lists put into m; key 0 is
 * left out. */
static void index_group(pmap *m, const dra_slice *const *v, size_t n, const uint64_t *keys) {
    hmap at;                 /* key → index+1 into lists */
    hmap_init(&at);
    DRA_VEC(dra_slice_list *) lists = {0};
    uint32_t *count = xcalloc(n + 1, sizeof *count);
    uint32_t *which = xmalloc((n + 1) * sizeof *which);
    for (size_t i = 0; i < n; i++) {
        if (!keys[i]) continue;
        bool ins;
        uint64_t *slot = hmap_upsert(&at, keys[i], 0, &ins);
        if (ins) {
            *slot = lists.n + 1;
            DRA_VEC_PUSH(lists, NULL);
        }
        which[i] = (uint32_t)(*slot - 1);
        count[which[i]]++;
    }
    for (size_t g = 0; g < lists.n; g++) lists.v[g] = slist_new(count[g]);
    for (size_t i = 0; i < n; i++)
        if (keys[i]) lists.v[which[i]]->v[lists.v[which[i]]->n++] = v[i];
    uint64_t k, g;
    for (size_t it = 0; hmap_next(&at, &it, &k, &g);) pmap_put(m, hash_u64(k), lists.v[g - 1], NULL, NULL);
    free(lists.v);
    free(count);
    free(which);
    hmap_free(&at);
}

void dra__world_index_slices(dra_world *w, const dra_slice *const *v, size_t n) {
    pmap_free(&w->slices_by_node);
    pmap_free(&w->slices_by_pool);
    slist_release(w->unnamed);
    w->unnamed = NULL;
    uint64_t *keys = xmalloc((n + 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i] = v[i]->pool_key;
    index_group(&w->slices_by_pool, v, n, keys);
    size_t nun = 0;
    for (size_t i = 0; i < n; i++) {
        keys[i] = slice_node_id(v[i]);
        nun += !keys[i];
    }
    index_group(&w->slices_by_node, v, n, keys);
    if (nun) {
        w->unnamed = slist_new((uint32_t)nun);
        for (size_t i = 0; i < n; i++)
            if (!keys[i]) w->unnamed->v[w->unnamed->n++] = v[i];
    }
    free(keys);
}

static int cmp_slice_index(const void *a, const void *b) {
    uint32_t x = (*(const dra_slice *const *)a)->index, y = (*(const dra_slice *const *)b)->index;
    return x < y ? -1 : x > y;
}

/* ---- every object of a kind ----------------------------------------------------------- */

/* Every slice as this world sees it (each is in exactly one pool's list, the copy a
 * taint rule made where one did), in arrival order. */
static const void **collect_slices(const dra_world *w, size_t *n) {
    DRA_VEC(const dra_slice *) all = {0};
    pmap_iter it;
    pmap_iter_init(&it, &w->slices_by_pool);
    void *p;
    while (pmap_next(&it, NULL, &p)) {
        const dra_slice_list *l = p;
        for (uint32_t i = 0; i < l->n; i++) DRA_VEC_PUSH(all, l->v[i]);
    }
    if (all.n) qsort(all.v, all.n, sizeof *all.v, cmp_slice_index);
    *n = all.n;
    return (const void **)all.v;
}

/* The objects of kind k in arrival order, collected at the first call: a request
 * never walks every object, so a snapshot that only serves requests never pays for
 * the lists. Classes and pods are the snapshot's lists already. */
static const void *const *list_of(const dra_world *w, dra_kind k, size_t *n) {
    if (k == DRA_KIND_CLASS) return *n = w->classes.n, (const void *const *)w->classes.v;
    if (k == DRA_KIND_POD) return *n = w->pods.n, (const void *const *)w->pods.v;
    dra_world *mw = (dra_world *)w;   /* the cache only: what a reader sees never changes */
    struct dra_world_list *l = &mw->lists[k];
    pthread_mutex_lock(&mw->lists_lock);
    if (!l->done) {
        l->v = k == DRA_KIND_SLICE ? collect_slices(w, &l->n) : w->src->objects(w->src_arg, k, &l->n);
        l->done = true;
    }
    pthread_mutex_unlock(&mw->lists_lock);
    *n = l->n;
    return l->v;
}

const dra_slice *const *dra__world_all_slices(const dra_world *w, size_t *n) {
    return (const dra_slice *const *)list_of(w, DRA_KIND_SLICE, n);
}

static const void *nth(const dra_world *w, dra_kind k, size_t i) {
    size_t n;
    const void *const *v = list_of(w, k, &n);
    assert(i < n);
    return v[i];
}

static size_t count(const dra_world *w, dra_kind k) {
    size_t n;
    list_of(w, k, &n);
    return n;
}

size_t dra_world_nclaims(const dra_world *w) { return count(w, DRA_KIND_CLAIM); }
const dra_claim *dra_world_claim(const dra_world *w, size_t i) { return nth(w, DRA_KIND_CLAIM, i); }
size_t dra_world_nnodes(const dra_world *w) { return count(w, DRA_KIND_NODE); }
const dra_node *dra_world_node(const dra_world *w, size_t i) { return nth(w, DRA_KIND_NODE, i); }
size_t dra_world_ntemplates(const dra_world *w) { return count(w, DRA_KIND_TEMPLATE); }
const dra_claim_template *dra_world_template(const dra_world *w, size_t i) { return nth(w, DRA_KIND_TEMPLATE, i); }
size_t dra_world_npods(const dra_world *w) { return w->pods.n; }
const dra_pod *dra_world_pod(const dra_world *w, size_t i) { return w->pods.v[i]; }

/* ---- lookups ------------------------------------------------------------------------------ */

const dra_class *dra__world_find_class(const dra_world *w, const char *name) {
    uint32_t id = intern_get(w->names, name, strlen(name));
    uint64_t v;
    if (!id || !hmap_get(&w->class_by_name, id, &v)) return NULL;
    return w->classes.v[v - 1];
}

const dra_claim *dra_world_find_claim(const dra_world *w, const char *ns, const char *name) {
    return w->src->find(w->src_arg, DRA_KIND_CLAIM, ns, name);
}

const dra_node *dra_world_find_node(const dra_world *w, const char *name) {
    return w->src->find(w->src_arg, DRA_KIND_NODE, NULL, name);
}

const dra_pod *dra__world_find_pod(const dra_world *w, const char *ns, const char *name) {
    return w->src->find(w->src_arg, DRA_KIND_POD, ns, name);
}

const dra_claim_template *dra_world_find_template(const dra_world *w, const char *ns, const char *name) {
    return w->src->find(w->src_arg, DRA_KIND_TEMPLATE, ns, name);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct ns_walk {
    const char *name, *skip;
    DRA_VEC(const char *) found;
} ns_walk;

static void ns_walk_one(void *ctx, const char *ns, const char *name) {
    ns_walk *nw = ctx;
    if (name && !strcmp(name, nw->name) && strcmp(dra_ns(ns), nw->skip)) DRA_VEC_PUSH(nw->found, dra_ns(ns));
}

static void ns_walk_claim(void *ctx, const void *obj) {
    const dra_claim *c = obj;
    ns_walk_one(ctx, c->ns, c->name);
}

static void ns_walk_template(void *ctx, const void *obj) {
    const dra_claim_template *t = obj;
    ns_walk_one(ctx, t->ns, t->name);
}

/* The namespaces other than ns (defaulted) holding a ResourceClaim or template named
 * name: how many, the first max of them in name order in out[]. A walk over every
 * object of the kind: for the text of a failure only. */
static size_t namespaces_with(const dra_world *w, dra_kind kind, const char *name, const char *ns, const char **out,
                              size_t max) {
    if (kind != DRA_KIND_CLAIM && kind != DRA_KIND_TEMPLATE) return 0;
    ns_walk nw = {.name = name ? name : "", .skip = dra_ns(ns)};
    void (*fn)(void *, const void *) = kind == DRA_KIND_CLAIM ? ns_walk_claim : ns_walk_template;
    size_t n;
    const void *const *all = list_of(w, kind, &n);
    for (size_t i = 0; i < n; i++) fn(&nw, all[i]);
    if (nw.found.n) qsort(nw.found.v, nw.found.n, sizeof *nw.found.v, cmp_str);
    for (size_t i = 0; i < nw.found.n && i < max; i++) out[i] = nw.found.v[i];
    n = nw.found.n;
    free(nw.found.v);
    return n;
}

/* Kubernetes' NotFound text for the object looked up, then the namespace searched and
 * where one of that name does exist — the usual mistake being a template created in
 * another namespace than the pod's:
 *   resourceclaimtemplate.resource.k8s.io "gpu" not found in namespace ml; a
 *   ResourceClaimTemplate named gpu exists in namespace team-a */
const char *dra__world_not_found(const dra_world *w, arena *a, dra_kind k, const char *ns, const char *name) {
    enum { SHOW = 3 };
    const char *where[SHOW];
    size_t n = namespaces_with(w, k, name, ns, where, SHOW);
    const bool tmpl = k == DRA_KIND_TEMPLATE;
    const char *t = arena_printf(a, "%s.resource.k8s.io \"%s\" not found in namespace %s",
                                 tmpl ? "resourceclaimtemplate" : "resourceclaim", name, dra_ns(ns));
    if (!n) return t;
    t = arena_printf(a, "%s; a %s named %s exists in namespace%s ", t, tmpl ? "ResourceClaimTemplate" : "ResourceClaim",
                     name, n > 1 ? "s" : "");
    for (size_t i = 0; i < n && i < SHOW; i++)
        t = arena_printf(a, "%s%s%s", t, i == 0 ? "" : (i + 1 == n && n <= SHOW) ? " and " : ", ", where[i]);
    return n > SHOW ? arena_printf(a, "%s and %zu more", t, n - SHOW) : t;
}

dra_claim *dra__claim_instantiate(arena *a, const dra_claim_template *t, const char *ns, const char *name) {
    dra_claim *c = ARENA_NEW(a, dra_claim);
    *c = t->spec;
    c->ns = ns ? arena_strdup(a, ns) : NULL;
    c->name = arena_strdup(a, name);
    c->allocated = false;
    c->from_template = true;
    return c;
}

/* ---- beside a world, in the caller's memory ------------------------------------------ */

const dra_claim *dra_claim_from_template(arena *a, const dra_claim_template *t, const char *ns, const char *name) {
    return dra__claim_instantiate(a, t, ns, name);
}

const dra_node *dra_node_named(arena *a, const char *name) {
    dra_node *nd = ARENA_NEW(a, dra_node);
    nd->name = arena_strdup(a, name);
    return nd;
}
