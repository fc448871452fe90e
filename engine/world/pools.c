/* pools.c — the node view: Kubernetes' GatherPools for one node and feature set.
 *
 * Slices relevant to the node are grouped by pool (driver + pool name); inside a pool
 * only the highest generation among relevant slices counts. A pool is complete when
 * the relevant slices of that generation number resourceSliceCount; otherwise all
 * slices of the pool are consulted: a newer generation anywhere makes the pool
 * obsolete (dropped), the full set of slices of the kept generation makes it complete
 * (non-relevant slices then contribute counter sets and counter consumers only), and
 * anything less leaves it incomplete. Validation (duplicate device names, counter sets
 * and counters that do not resolve) marks a pool invalid. Pools are sorted by
 * (driver, pool) with pools holding binding-condition devices last; slices by name;
 * the result is one flat candidate array in search order. */
#include "engine/world/world.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpool {
    uint32_t pool_key;
    int64_t gen;
    DRA_VEC(const dra_slice *) rel;   /* relevant slices of generation gen */
} gpool;

static int cmp_slice_name(const void *a, const void *b) {
    const dra_slice *x = *(const dra_slice *const *)a, *y = *(const dra_slice *const *)b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;   /* stable */
}

static int cmp_pool(const void *a, const void *b) {
    const dra_pool *x = a, *y = b;
    if (x->has_binding != y->has_binding) return x->has_binding ? 1 : -1;
    int c = strcmp(x->driver, y->driver);
    if (c) return c;
    return strcmp(x->pool, y->pool);
}

static bool is_counter_slice(const dra_nodeview *v, const dra_slice *s) {
    return v->f.partitionable && s->nshared > 0;
}

/* Maps a device's consumesCounters onto the pool's flat counters; false with a reason
 * when a set or counter does not exist. */
static bool map_consumption(dra_nodeview *v, dra_pool *p, const dra_device *d, const dra_consumption **out,
                            uint32_t *nout) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < d->nconsumes; i++) total += d->consumes[i].ncounters;
    enum { ON_STACK = 32 };
    dra_consumption stack[ON_STACK];
    dra_consumption *c = total <= ON_STACK ? stack : ARENA_NEWN(&v->mem, dra_consumption, total);
    memset(c, 0, sizeof *c * (total ? total : 1));   /* compared by content: the padding too */
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->nconsumes; i++) {
        const dra_counter_set *cs = &d->consumes[i];
        bool set_found = false;
        for (uint32_t k = 0; k < p->nsets; k++)
            if (p->set_ids[k] == cs->name_id) set_found = true;
        if (!set_found) {
            p->invalid = true;
            p->invalid_reason = arena_printf(&v->mem, "counter set %s not found", cs->name);
            return false;
        }
        for (uint32_t j = 0; j < cs->ncounters; j++) {
            uint32_t k;
            for (k = 0; k < p->ncounters; k++)
                if (p->counters[k].set_id == cs->name_id && p->counters[k].name_id == cs->counters[j].name_id) break;
            if (k == p->ncounters) {
                p->invalid = true;
                p->invalid_reason =
                    arena_printf(&v->mem, "counter %s not found in counter set %s", cs->counters[j].name, cs->name);
                return false;
            }
            c[n].counter = k;
            c[n].value = cs->counters[j].value;
            n++;
        }
    }
    /* the nodes of a fleet carve their devices alike: one copy of each array for all
     * their views (catalog_share.c), else the view's own */
    const dra_consumption *shared = c == stack ? dra__catalog_share(v->w->cat, c, sizeof *c * n) : NULL;
    *out = shared ? shared : c == stack ? arena_memdup(&v->mem, c, sizeof *c * (n ? n : 1)) : c;
    *nout = n;
    return true;
}

static bool slice_relevant(const dra_nodeview *v, const dra_slice *s, bool *rel, err *e) {
    *rel = false;
    err ne;
    err_clear(&ne);
    if ((s->node_name && *s->node_name) || s->all_nodes || s->node_selector) {
        if (!dra__node_matches(v->node, s->node_name, s->all_nodes, s->node_selector, rel, &ne))
            return err_set(e, "gather pool information: failed to perform node selection for slice %s: %s", s->name,
                           ne.msg);
        return true;
    }
    if (s->per_device_node_selection == 1) {
        for (uint32_t i = 0; i < s->ndevices; i++) {
            const dra_device *d = &s->devices[i];
            bool m;
            if (!dra__node_matches(v->node, d->node_name, d->all_nodes, d->node_selector, &m, &ne))
                return err_set(e,
                               "gather pool information: failed to perform node selection for device %s in slice %s: %s",
                               d->name, s->name, ne.msg);
            if (m) {
                *rel = true;
                return true;
            }
        }
    }
    return true;
}

static void build_pool(dra_nodeview *v, dra_pool *p, const dra_slice **rel, size_t nrel, const dra_slice **all,
                       size_t nall) {
    const dra_world *w = v->w;
    const dra_slice *first = rel[0];
    p->pool_key = first->pool_key;
    p->driver = first->driver;
    p->pool = first->pool;
    p->id_text = intern_str(w->names, first->pool_key);
    p->generation = first->generation;
    /* device slices targeting the node */
    const dra_slice **ds = ARENA_NEWN(&v->mem, const dra_slice *, nrel);
    uint32_t nds = 0;
    for (size_t i = 0; i < nrel; i++)
        if (!is_counter_slice(v, rel[i])) ds[nds++] = rel[i];
    qsort(ds, nds, sizeof *ds, cmp_slice_name);
    p->slices = ds;
    p->nslices = nds;
    /* counters from counter-set slices (relevant or not) */
    uint32_t ncount = 0;
    for (size_t i = 0; i < nall; i++)
        if (is_counter_slice(v, all[i]))
            for (uint32_t j = 0; j < all[i]->nshared; j++) ncount += all[i]->shared_counters[j].ncounters;
    p->counters = ARENA_NEWN(&v->mem, dra_pool_counter, ncount ? ncount : 1);
    hmap sets;
    hmap_init(&sets);
    for (size_t i = 0; i < nall; i++) {
        if (!is_counter_slice(v, all[i])) continue;
        for (uint32_t j = 0; j < all[i]->nshared; j++) {
            const dra_counter_set *cs = &all[i]->shared_counters[j];
            if (!hmap_put(&sets, cs->name_id, 1) && !p->invalid) {
                p->invalid = true;
                p->invalid_reason = arena_printf(&v->mem, "duplicate counter set name %s", cs->name);
            }
            for (uint32_t k = 0; k < cs->ncounters; k++)
                p->counters[p->ncounters++] =
                    (dra_pool_counter){cs->name_id, cs->counters[k].name_id, cs->counters[k].value};
        }
    }
    p->set_ids = ARENA_NEWN(&v->mem, uint32_t, hmap_len(&sets) ? hmap_len(&sets) : 1);
    {
        uint64_t k, val;
        for (size_t it = 0; hmap_next(&sets, &it, &k, &val);) p->set_ids[p->nsets++] = (uint32_t)k;
    }
    hmap_free(&sets);
    /* duplicate device names among targeting device slices */
    hmap seen;
    hmap_init(&seen);
    for (uint32_t i = 0; i < nds && !p->invalid; i++)
        for (uint32_t j = 0; j < ds[i]->ndevices; j++)
            if (!hmap_put(&seen, ds[i]->devices[j].name_id, 1)) {
                p->invalid = true;
                p->invalid_reason = arena_printf(&v->mem, "duplicate device name %s", ds[i]->devices[j].name);
                break;
            }
    hmap_free(&seen);
    /* counter consumers: every device slice of the pool, targeting or not */
    if (v->f.partitionable) {
        uint32_t ndev = 0;
        for (size_t i = 0; i < nall; i++)
            if (!is_counter_slice(v, all[i])) ndev += all[i]->ndevices;
        p->all_devs = ARENA_NEWN(&v->mem, dra_pool_device, ndev ? ndev : 1);
        for (size_t i = 0; i < nall; i++) {
            if (is_counter_slice(v, all[i])) continue;
            for (uint32_t j = 0; j < all[i]->ndevices; j++) {
                const dra_device *d = &all[i]->devices[j];
                dra_pool_device *pd = &p->all_devs[p->nall_devs++];
                pd->key = dra_device_key(p->pool_key, d->name_id);
                if (d->nconsumes && !p->invalid) map_consumption(v, p, d, &pd->cons, &pd->ncons);
            }
        }
    }
    /* an invalid pool carries no devices upstream (pools_incubating.go buildPool), so
     * poolHasBindingConditions never moves it last */
    for (uint32_t i = 0; i < nds && !p->invalid; i++)
        for (uint32_t j = 0; j < ds[i]->ndevices; j++)
            if (ds[i]->devices[j].binding_conditions.n) p->has_binding = true;
}

typedef DRA_VEC(gpool) gpools;

/* The pools of the slices relevant to v's node, each with the slices of its newest
 * generation: the node's own slices (by nodeName) and all slices without a node name,
 * merged in arrival order; slices naming another node are never relevant here. False
 * with e set when a slice's node selection cannot be read. */
static bool gather_pools(dra_nodeview *v, gpools *gp, err *e) {
    const dra_world *w = v->w;
    const dra_node *node = v->node;
    hmap idx;
    hmap_init(&idx);
    bool ok = true;
    const dra_slice_list *own = NULL, *un = dra__world_unnamed(w);
    {
        uint32_t nid = node ? intern_get(w->names, node->name, strlen(node->name)) : 0;
        if (nid) own = dra__world_node_slices(w, nid);
    }
    uint32_t nown = own ? own->n : 0, nun = un ? un->n : 0;
    for (uint32_t io = 0, iu = 0; (io < nown || iu < nun) && ok;) {
        const dra_slice *s;
        if (iu == nun || (io < nown && own->v[io]->index < un->v[iu]->index)) s = own->v[io++];
        else s = un->v[iu++];
        if (!v->f.partitionable && (s->per_device_node_selection != -1 || s->nshared > 0)) continue;
        bool rel;
        if (!slice_relevant(v, s, &rel, e)) {
            ok = false;
            break;
        }
        if (!rel) continue;
        uint64_t pi;
        if (!hmap_get(&idx, s->pool_key, &pi)) {
            gpool g = {.pool_key = s->pool_key, .gen = s->generation};
            DRA_VEC_PUSH(*gp, g);
            pi = gp->n;
            hmap_put(&idx, s->pool_key, pi);
        }
        gpool *g = &gp->v[pi - 1];
        if (s->generation > g->gen) {
            g->gen = s->generation;
            g->rel.n = 0;
        }
        if (s->generation == g->gen) DRA_VEC_PUSH(g->rel, s);
    }
    hmap_free(&idx);
    return ok;
}

/* v's pools from the gathered ones (each gpool's slices freed), complete or
 * incomplete as GatherPools finds them, sorted as the allocator walks them. */
static void build_pools(dra_nodeview *v, gpools *gp) {
    v->pools = ARENA_NEWN(&v->mem, dra_pool, gp->n ? gp->n : 1);
    DRA_VEC(const dra_slice *) all = {0};
    for (size_t i = 0; i < gp->n; i++) {
        gpool *g = &gp->v[i];
        dra_pool *p = &v->pools[v->npools];
        memset(p, 0, sizeof *p);
        /* upstream takes slicesForPool[0]'s resourceSliceCount, the first in the
         * informer's (map) order; when the slices of one generation disagree on it,
         * the one first by name decides here, so that a view does not depend on the
         * order the slices arrived in */
        int64_t want = g->rel.v[0]->slice_count;
        for (size_t k = 1, first = 0; k < g->rel.n; k++)
            if (strcmp(g->rel.v[k]->name, g->rel.v[first]->name) < 0) first = k, want = g->rel.v[k]->slice_count;
        if ((int64_t)g->rel.n == want) {
            build_pool(v, p, g->rel.v, g->rel.n, g->rel.v, g->rel.n);
            v->npools++;
        } else {
            bool obsolete = false;
            all.n = 0;
            const dra_slice_list *pl = dra__world_pool_slices(v->w, g->pool_key);
            for (uint32_t si = 0; pl && si < pl->n; si++) {
                const dra_slice *s = pl->v[si];
                if (s->generation > g->gen) obsolete = true;
                else if (s->generation == g->gen) DRA_VEC_PUSH(all, s);
            }
            if (obsolete) {
                free(g->rel.v);
                continue;
            }
            build_pool(v, p, g->rel.v, g->rel.n, all.v, all.n);
            if ((int64_t)all.n != want) {
                /* pools_incubating.go GatherPools: an incomplete pool is neither
                 * validated nor looked at for binding conditions (it sorts among the
                 * ordinary pools); its slices stay for the explanations only */
                p->incomplete = true;
                p->invalid = false;
                p->invalid_reason = NULL;
                p->has_binding = false;
            }
            v->npools++;
        }
        free(g->rel.v);
    }
    free(all.v);
    qsort(v->pools, v->npools, sizeof *v->pools, cmp_pool);
}

/* One flat array of candidate devices in search order: pool by pool, slice by slice. */
static void lay_out_cands(dra_nodeview *v) {
    const dra_features *f = &v->f;
    uint32_t nc = 0;
    for (uint32_t i = 0; i < v->npools; i++)
        for (uint32_t j = 0; j < v->pools[i].nslices; j++) nc += v->pools[i].slices[j]->ndevices;
    v->cands = ARENA_NEWN(&v->mem, dra_cand, nc ? nc : 1);
    for (uint32_t i = 0; i < v->npools; i++) {
        dra_pool *p = &v->pools[i];
        p->first_cand = v->ncands;
        /* a candidate's consumption is its pool device's, mapped once in build_pool:
         * mapped again per candidate it was half of a MIG node's view (bench
         * mig_5000nodes: +80 KB per node) */
        hmap mapped;
        hmap_init(&mapped);
        for (uint32_t d = 0; d < p->nall_devs; d++)
            if (p->all_devs[d].cons) hmap_put(&mapped, p->all_devs[d].key, d + 1);
        for (uint32_t j = 0; j < p->nslices; j++) {
            const dra_slice *s = p->slices[j];
            for (uint32_t k = 0; k < s->ndevices; k++) {
                dra_cand *c = &v->cands[v->ncands++];
                c->dev = &s->devices[k];
                c->slice = s;
                c->pool = i;
                c->key = dra_device_key(p->pool_key, c->dev->name_id);
                c->per_device_node = s->per_device_node_selection == 1;
                if (!f->partitionable || !c->dev->nconsumes || p->invalid) continue;
                uint64_t at;
                uint32_t nc = 0;
                if (hmap_get(&mapped, c->key, &at)) c->cons = p->all_devs[at - 1].cons, nc = p->all_devs[at - 1].ncons;
                else map_consumption(v, p, c->dev, &c->cons, &nc);
                assert(nc < (1u << 31));
                c->ncons = nc & 0x7fffffffu;
            }
        }
        hmap_free(&mapped);
        p->ncands = v->ncands - p->first_cand;
    }
}

/* The slices relevant to v's node that the view leaves out (a slice with sharedCounters
 * or perDeviceNodeSelection while DRAPartitionableDevices is off; with it on, one that
 * holds devices and sharedCounters both), the node's own slices first, then those
 * without a node name: explain.c counts their matching devices. A slice whose node
 * selection cannot be read is not counted. */
static void find_lost(dra_nodeview *v) {
    const dra_world *w = v->w;
    const dra_node *node = v->node;
    const bool gate = v->f.partitionable;
    if (!node) return;
    uint32_t cap = 0;
    uint32_t nid = intern_get(w->names, node->name, strlen(node->name));
    const dra_slice_list *own = nid ? dra__world_node_slices(w, nid) : NULL, *un = dra__world_unnamed(w);
    uint32_t nown = own ? own->n : 0, nun = un ? un->n : 0;
    for (uint32_t si = 0; si < nown + nun; si++) {
        const dra_slice *s = si < nown ? own->v[si] : un->v[si - nown];
        if (!s->ndevices) continue;
        uint8_t why;
        if (!gate && s->nshared) why = DRA_LOST_COUNTERS_GATE;
        else if (!gate && s->per_device_node_selection != -1) why = DRA_LOST_PER_DEVICE_GATE;
        else if (gate && s->nshared) why = DRA_LOST_MIXED;
        else continue;
        /* does the slice target the node at all? */
        bool rel = false;
        err e;
        err_clear(&e);
        if ((s->node_name && *s->node_name) || s->all_nodes || s->node_selector) {
            if (!dra__node_matches(node, s->node_name, s->all_nodes, s->node_selector, &rel, &e)) rel = false;
        } else if (s->per_device_node_selection == 1) {
            for (uint32_t j = 0; j < s->ndevices && !rel; j++) {
                const dra_device *d = &s->devices[j];
                bool m = false;
                if (dra__node_matches(node, d->node_name, d->all_nodes, d->node_selector, &m, &e) && m) rel = true;
            }
        }
        if (!rel) continue;
        if (v->nlost == cap) {
            cap = cap ? cap * 2 : 4;
            const dra_slice **nl = ARENA_NEWN(&v->mem, const dra_slice *, cap);
            uint8_t *nw = ARENA_NEWN(&v->mem, uint8_t, cap);
            if (v->nlost) memcpy(nl, v->lost, sizeof *nl * v->nlost), memcpy(nw, v->lost_why, v->nlost);
            v->lost = nl, v->lost_why = nw;
        }
        v->lost[v->nlost] = s;
        v->lost_why[v->nlost++] = why;
    }
}

/* A view's arena: the first block before any view was built, the blocks after a
 * first one sized from the last view, and the largest view whose size the next one's
 * first block follows. */
enum { VIEW_BLOCK_FIRST = 4096, VIEW_BLOCK_MORE = 1024, VIEW_EXPECT_MAX = 1 << 20 };

dra_nodeview *dra_nodeview_new(const dra_world *w, const dra_node *node, const dra_features *f, err *e) {
    dra_nodeview *v = xcalloc(1, sizeof *v);
    v->w = w;
    v->node = node;
    v->f = *f;
    /* a view lives as long as its node's inputs do, one per node, and the nodes of a
     * fleet look alike: the first block is sized as the last view took (a fixed 4 KiB
     * held 1.5 KB of a node of 16 devices; the 64 KiB default, resident once the
     * allocator hands out pages it used before, cost 3.8 KB more a node: bench/README.md,
     * "Fleet scale"); what does not fit goes to small blocks, or blocks of their own
     * size for the large arrays (arena_alloc) */
    uint32_t expect = atomic_load_explicit(&w->cat->view_bytes, memory_order_relaxed);
    if (expect) arena_init_like(&v->mem, expect, VIEW_BLOCK_MORE);
    else arena_init(&v->mem, VIEW_BLOCK_FIRST);
    gpools gp = {0};
    if (!gather_pools(v, &gp, e)) {
        for (size_t i = 0; i < gp.n; i++) free(gp.v[i].rel.v);
        free(gp.v);
        dra_nodeview_free(v);
        return NULL;
    }
    build_pools(v, &gp);
    free(gp.v);
    lay_out_cands(v);
    find_lost(v);
    if (v->mem.total < VIEW_EXPECT_MAX)
        atomic_store_explicit(&w->cat->view_bytes, (uint32_t)v->mem.total, memory_order_relaxed);
    return v;
}

void dra_nodeview_free(dra_nodeview *v) {
    /* a header over another view (store.c) lives in its snapshot's memory */
    if (!v || v->base) return;
    arena_free(&v->mem);
    free(v);
}
