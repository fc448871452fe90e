/* allocatable.c — devices classified as allocatable now or not, and why (allocatable.h):
 * pools gathered at their newest generation, each pool's shared counters flattened, the
 * consumption of its allocated devices subtracted, then every device put in one state,
 * and each counter set read as the profiles it can still carve. One pool is held at a
 * time, in an arena reset between pools. */
#include "engine/store/store_internal.h"
#include "engine/pod/allocatable.h"

#include <stdlib.h>
#include <string.h>

typedef struct pool_acc {
    const dra_slice **slices;
    uint32_t n, cap;
    int64_t gen;
} pool_acc;

static int cmp_pool(const void *a, const void *b) {
    const dra_slice *x = ((const pool_acc *)a)->slices[0], *y = ((const pool_acc *)b)->slices[0];
    int c = strcmp(x->driver, y->driver);
    return c ? c : strcmp(x->pool, y->pool);
}

static bool held(const dra_allocated *st, uint64_t key, bool *exclusive) {
    uint64_t v;
    *exclusive = st && cmap_get(&st->devices, key, &v);
    return *exclusive || (st && (cmap_get(&st->shared, key, &v) || cmap_get(&st->capacity, key, &v)));
}

/* A multi-allocatable device held by shares: could a request that names no amount take
 * one more share (its requestPolicy's default, else the whole capacity, of each)? */
static bool share_left(const dra_allocated *st, uint64_t key, const dra_device *d, const intern_table *names) {
    uint64_t p = 0;
    const dra_alloc_caps *used = cmap_get(&st->capacity, key, &p) ? (const dra_alloc_caps *)(uintptr_t)p : NULL;
    for (uint32_t k = 0; k < d->cel.ncaps; k++) {
        const dra_capacity *c = &d->caps[k];
        quantity want = c->policy && c->policy->has_default ? c->policy->dflt : c->value;
        uint32_t id = used ? intern_get(names, c->key, strlen(c->key)) : 0;
        for (uint32_t i = 0; id && i < used->n; i++)
            if (used->id[i] == id) quantity_add(&want, &used->value[i], &want);
        if (quantity_cmp(&want, &c->value) > 0) return false;
    }
    return true;
}

/* The taint check of a request without tolerations (alloc_resources.c
 * dra__rs_taint_blocking with none): any NoSchedule or NoExecute taint blocks. */
static bool taint_blocks(const dra_device *d) {
    for (uint32_t i = 0; i < d->ntaints; i++) {
        const char *e = d->taints[i].effect;
        if (e && (!strcmp(e, "NoSchedule") || !strcmp(e, "NoExecute"))) return true;
    }
    return false;
}

/* Would taking device dv leave every counter of the pool covered, from avail? */
static bool counters_fit(const dra_av_pool *p, const dra_av_device *dv, const quantity *avail, quantity *scratch) {
    memcpy(scratch, avail, p->ncounters * sizeof *scratch);
    for (uint32_t k = 0; k < dv->ncons; k++)
        quantity_sub(&scratch[dv->cons_idx[k]], dv->cons_val[k], &scratch[dv->cons_idx[k]]);
    for (uint32_t i = 0; i < p->ncounters; i++)
        if (quantity_sign(&scratch[i]) < 0) return false;
    return true;
}

/* ---- carving: the profiles of one counter set ---------------------------------------------- */

static size_t lcp(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

static bool sep(char c) { return c == '-' || c == '_' || c == '.'; }

/* s[0..n) without leading separators and trailing digits and separators. */
static const char *trimmed(arena *a, const char *s, size_t n) {
    while (n && sep(*s)) s++, n--;
    while (n && (sep(s[n - 1]) || (s[n - 1] >= '0' && s[n - 1] <= '9'))) n--;
    return n ? arena_strndup(a, s, n) : NULL;
}

static bool has_cap(const dra_device *d, const cel_capacity *c) {
    for (uint32_t k = 0; k < d->cel.ncaps; k++)
        if (d->cel.caps[k].domain == c->domain && d->cel.caps[k].name == c->name) return true;
    return false;
}

/* Equal capacity on every key of keys (indexes into d0's capacities, which every
 * device of the set has). */
static bool same_caps(const dra_device *d0, const uint32_t *keys, uint32_t nkeys, const dra_device *r,
                      const dra_device *d) {
    for (uint32_t k = 0; k < nkeys; k++) {
        const cel_capacity *kc = &d0->cel.caps[keys[k]];
        const quantity *qa = NULL, *qb = NULL;
        for (uint32_t j = 0; j < r->cel.ncaps; j++)
            if (r->cel.caps[j].domain == kc->domain && r->cel.caps[j].name == kc->name) qa = &r->caps[j].value;
        for (uint32_t j = 0; j < d->cel.ncaps; j++)
            if (d->cel.caps[j].domain == kc->domain && d->cel.caps[j].name == kc->name) qb = &d->caps[j].value;
        if (!qa || !qb || quantity_cmp(qa, qb)) return false;
    }
    return true;
}

static int cmp_profile(const void *x, const void *y) {
    const dra_av_profile *a = x, *b = y;
    if (a->fit_empty != b->fit_empty) return a->fit_empty < b->fit_empty ? -1 : 1;
    return strcmp(a->label, b->label);
}

static void carve_set(arena *a, dra_av_pool *p, uint32_t set_id, dra_av_set *out, const quantity *avail) {
    /* the set's devices */
    uint32_t *idx = ARENA_NEWN(a, uint32_t, p->ndevs ? p->ndevs : 1), n = 0;
    for (uint32_t i = 0; i < p->ndevs; i++) {
        const dra_device *d = p->devs[i].dev;
        for (uint32_t c = 0; c < d->nconsumes; c++)
            if (d->consumes[c].name_id == set_id) {
                idx[n++] = i;
                break;
            }
    }
    out->profiles = ARENA_NEWN(a, dra_av_profile, n ? n : 1);
    out->nprofiles = 0;
    if (!n) return;
    /* the capacity keys every device of the set has, as indexes into the first one's */
    const dra_device *d0 = p->devs[idx[0]].dev;
    uint32_t *keys = ARENA_NEWN(a, uint32_t, d0->cel.ncaps ? d0->cel.ncaps : 1), nkeys = 0;
    for (uint32_t k = 0; k < d0->cel.ncaps; k++) {
        bool all = true;
        for (uint32_t i = 1; i < n && all; i++) all = has_cap(p->devs[idx[i]].dev, &d0->cel.caps[k]);
        if (all) keys[nkeys++] = k;
    }
    size_t set_lcp = strlen(d0->name);
    for (uint32_t i = 1; i < n; i++) {
        size_t l = lcp(d0->name, p->devs[idx[i]].dev->name);
        if (l < set_lcp) set_lcp = l;
    }
    /* capacity groups: devices with the same capacity on every common key */
    uint32_t *cg = ARENA_NEWN(a, uint32_t, n), *cgrep = ARENA_NEWN(a, uint32_t, n), ncg = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = 0;
        while (g < ncg && !same_caps(d0, keys, nkeys, p->devs[idx[cgrep[g]]].dev, p->devs[idx[i]].dev)) g++;
        if (g == ncg) cgrep[ncg++] = i;
        cg[i] = g;
    }
    /* Devices of equal capacity named apart are apart: a profile's placements differ in
     * a trailing number only (gpu-0-mig-1g.10gb-3), while gpu-0 and gpu-0-mig-7g.80gb-0
     * consume the same but are a whole GPU and a partition. A capacity group splits by
     * name stem (the name without trailing digits) when its stems are two, or repeat;
     * stems all distinct (devices named by UUID) keep it one profile. */
    const char **stem = ARENA_NEWN(a, const char *, n);
    for (uint32_t i = 0; i < n; i++) {
        const char *nm = p->devs[idx[i]].dev->name;
        stem[i] = trimmed(a, nm, strlen(nm));
        if (!stem[i]) stem[i] = "";
    }
    bool *split = ARENA_NEWN(a, bool, ncg ? ncg : 1);
    for (uint32_t g = 0; g < ncg; g++) {
        uint32_t size = 0, distinct = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (cg[i] != g) continue;
            size++;
            bool seen = false;
            for (uint32_t j = 0; j < i && !seen; j++) seen = cg[j] == g && !strcmp(stem[j], stem[i]);
            distinct += !seen;
        }
        split[g] = distinct >= 2 && (distinct == 2 || distinct < size);
    }
    /* profiles: a representative device each; per device its profile */
    uint32_t *rep = ARENA_NEWN(a, uint32_t, n), *prof = ARENA_NEWN(a, uint32_t, n), np = 0;
    size_t *plcp = ARENA_NEWN(a, size_t, n);
    for (uint32_t i = 0; i < n; i++) {
        const dra_device *d = p->devs[idx[i]].dev;
        /* the first profile of the device's capacity group (and stem, where it splits) */
        uint32_t g = 0;
        while (g < np && (cg[rep[g]] != cg[i] || (split[cg[i]] && strcmp(stem[rep[g]], stem[i])))) g++;
        if (g == np) {
            rep[np] = i;
            plcp[np] = strlen(d->name);
            out->profiles[np] = (dra_av_profile){0};
            np++;
        } else {
            size_t l = lcp(p->devs[idx[rep[g]]].dev->name, d->name);
            if (l < plcp[g]) plcp[g] = l;
        }
        prof[i] = g;
        out->profiles[g].devices++;
        out->profiles[g].allocated += p->devs[idx[i]].state == DRA_AV_ALLOCATED;
        out->profiles[g].free += p->devs[idx[i]].state == DRA_AV_FREE;
    }
    /* how many of each profile fit, one after another, now and with nothing allocated */
    quantity *now = ARENA_NEWN(a, quantity, p->ncounters ? p->ncounters : 1);
    quantity *scratch = ARENA_NEWN(a, quantity, p->ncounters ? p->ncounters : 1);
    for (uint32_t g = 0; g < np; g++) {
        for (int pass = 0; pass < 2; pass++) {
            for (uint32_t c = 0; c < p->ncounters; c++) now[c] = pass ? p->counters[c].cap : avail[c];
            uint32_t fit = 0;
            for (uint32_t i = 0; i < n; i++) {
                const dra_av_device *dv = &p->devs[idx[i]];
                if (prof[i] != g || dv->state == DRA_AV_UNUSABLE) continue;
                if (!pass && dv->state != DRA_AV_FREE) continue;
                if (!counters_fit(p, dv, now, scratch)) continue;
                memcpy(now, scratch, p->ncounters * sizeof *now);
                fit++;
            }
            if (pass) out->profiles[g].fit_empty = fit;
            else out->profiles[g].fit = fit;
        }
        const char *rn = p->devs[idx[rep[g]]].dev->name;
        const char *l = plcp[g] > set_lcp ? trimmed(a, rn + set_lcp, plcp[g] - set_lcp) : NULL;
        if (!l) l = trimmed(a, rn, set_lcp);
        out->profiles[g].label = l ? l : arena_strdup(a, rn);
    }
    out->nprofiles = np;
    qsort(out->profiles, np, sizeof *out->profiles, cmp_profile);
}

/* ---- one pool ------------------------------------------------------------------------------ */

static void classify_pool(arena *a, const pool_acc *pa, const dra_allocated *st, const dra_features *f,
                          const intern_table *names, dra_av_pool *p) {
    memset(p, 0, sizeof *p);
    p->first = pa->slices[0];
    p->incomplete = pa->n < (uint64_t)(pa->slices[0]->slice_count > 0 ? pa->slices[0]->slice_count : 1);
    for (uint32_t k = 0; k < pa->n; k++) {
        const char *nn = pa->slices[k]->node_name && *pa->slices[k]->node_name ? pa->slices[k]->node_name : NULL;
        if (k == 0) p->node = nn;
        else if (!nn || !p->node || strcmp(nn, p->node)) {
            p->node = NULL;
            break;
        }
    }
    /* counters, flattened: (set, counter) → index */
    uint32_t nc = 0, nd = 0, nsets = 0;
    for (uint32_t k = 0; k < pa->n; k++) {
        nd += pa->slices[k]->ndevices;
        nsets += pa->slices[k]->nshared;
        for (uint32_t c = 0; c < pa->slices[k]->nshared; c++) nc += pa->slices[k]->shared_counters[c].ncounters;
    }
    p->counters = ARENA_NEWN(a, dra_av_counter, nc ? nc : 1);
    p->sets = ARENA_NEWN(a, dra_av_set, nsets ? nsets : 1);
    hmap at;
    hmap_init(&at);
    for (uint32_t k = 0; k < pa->n; k++)
        for (uint32_t c = 0; c < pa->slices[k]->nshared; c++) {
            const dra_counter_set *cs = &pa->slices[k]->shared_counters[c];
            p->sets[p->nsets++].name = cs->name;
            for (uint32_t m = 0; m < cs->ncounters; m++) {
                dra_av_counter *ac = &p->counters[p->ncounters];
                *ac = (dra_av_counter){.set = cs->name, .name = cs->counters[m].name, .set_id = cs->name_id,
                                       .name_id = cs->counters[m].name_id, .cap = cs->counters[m].value,
                                       .used = quantity_from_int(0, QTY_DECIMAL_SI)};
                ac->used.format = ac->cap.format;
                hmap_put(&at, hmap_pair(cs->name_id, cs->counters[m].name_id), ++p->ncounters);
            }
        }
    /* devices: held or not, their consumption mapped onto the counters */
    p->devs = ARENA_NEWN(a, dra_av_device, nd ? nd : 1);
    bool cc = f->consumable_capacity;
    for (uint32_t k = 0; k < pa->n; k++) {
        const dra_slice *sl = pa->slices[k];
        for (uint32_t di = 0; di < sl->ndevices; di++) {
            const dra_device *d = &sl->devices[di];
            dra_av_device *dv = &p->devs[p->ndevs++];
            memset(dv, 0, sizeof *dv);
            dv->slice = sl, dv->dev = d;
            uint32_t ncons = 0;
            for (uint32_t c = 0; c < d->nconsumes; c++) ncons += d->consumes[c].ncounters;
            dv->cons_idx = ARENA_NEWN(a, uint32_t, ncons ? ncons : 1);
            dv->cons_val = ARENA_NEWN(a, const quantity *, ncons ? ncons : 1);
            bool unknown = false;
            for (uint32_t c = 0; c < d->nconsumes; c++)
                for (uint32_t m = 0; m < d->consumes[c].ncounters; m++) {
                    uint64_t i;
                    if (!hmap_get(&at, hmap_pair(d->consumes[c].name_id, d->consumes[c].counters[m].name_id), &i)) {
                        unknown = true;   /* validation refuses it; the allocator cannot use it */
                        continue;
                    }
                    dv->cons_idx[dv->ncons] = (uint32_t)(i - 1);
                    dv->cons_val[dv->ncons++] = &d->consumes[c].counters[m].value;
                }
            bool excl;
            if (held(st, dra_device_key(sl->pool_key, d->name_id), &excl)) {
                dv->state = DRA_AV_ALLOCATED;
                dv->shared_left = cc && d->allow_multi && !excl && share_left(st, dra_device_key(sl->pool_key, d->name_id), d, names);
                for (uint32_t j = 0; j < dv->ncons; j++)
                    quantity_add(&p->counters[dv->cons_idx[j]].used, dv->cons_val[j], &p->counters[dv->cons_idx[j]].used);
            } else if (p->incomplete || unknown || (!f->partitionable && d->nconsumes) ||
                       (!f->binding_conditions && d->binding_conditions.n)) {
                dv->state = DRA_AV_UNUSABLE;
            } else if (f->device_taints && taint_blocks(d)) {
                dv->state = DRA_AV_TAINTS;
            }
        }
    }
    hmap_free(&at);
    /* what is left of each counter, then the devices that would overdraw it */
    quantity *avail = ARENA_NEWN(a, quantity, p->ncounters ? p->ncounters : 1);
    quantity *scratch = ARENA_NEWN(a, quantity, p->ncounters ? p->ncounters : 1);
    for (uint32_t i = 0; i < p->ncounters; i++) quantity_sub(&p->counters[i].cap, &p->counters[i].used, &avail[i]);
    for (uint32_t i = 0; i < p->ndevs; i++) {
        dra_av_device *dv = &p->devs[i];
        if (dv->state == DRA_AV_FREE && dv->dev->nconsumes && !counters_fit(p, dv, avail, scratch))
            dv->state = DRA_AV_COUNTERS;
    }
    for (uint32_t s = 0; s < p->nsets; s++) {
        uint32_t set_id = 0;
        for (uint32_t i = 0; i < p->ncounters && !set_id; i++)
            if (!strcmp(p->counters[i].set, p->sets[s].name)) set_id = p->counters[i].set_id;
        if (!set_id) {   /* a set without counters: nothing consumes from it */
            p->sets[s].profiles = NULL;
            p->sets[s].nprofiles = 0;
            continue;
        }
        carve_set(a, p, set_id, &p->sets[s], avail);
    }
}

void dra__av_each_pool(dra_snapshot *s, const dra_allocated *st, void (*fn)(void *arg, const dra_av_pool *p),
                       void *arg) {
    dra_world *w = (dra_world *)dra__snapshot_world(s);
    const dra_features *f = dra__snapshot_features(s);
    size_t nsl;
    const dra_slice *const *sls = dra__world_all_slices(w, &nsl);
    /* slices grouped by pool, newest generation only (older ones are being replaced) */
    hmap by_pool;
    hmap_init(&by_pool);
    DRA_VEC(pool_acc) pools = {0};
    for (size_t i = 0; i < nsl; i++) {
        const dra_slice *sl = sls[i];
        uint64_t idx;
        if (!hmap_get(&by_pool, sl->pool_key, &idx)) {
            pool_acc pa = {.gen = sl->generation};
            DRA_VEC_PUSH(pools, pa);
            idx = pools.n;
            hmap_put(&by_pool, sl->pool_key, idx);
        }
        pool_acc *pa = &pools.v[idx - 1];
        if (sl->generation > pa->gen) pa->gen = sl->generation, pa->n = 0;
        if (sl->generation < pa->gen) continue;
        if (pa->n == pa->cap) pa->slices = xrealloc(pa->slices, (pa->cap = pa->cap ? pa->cap * 2 : 2) * sizeof *pa->slices);
        pa->slices[pa->n++] = sl;
    }
    hmap_free(&by_pool);
    if (pools.n) qsort(pools.v, pools.n, sizeof *pools.v, cmp_pool);
    arena a;
    arena_init(&a, 1 << 16);
    for (size_t i = 0; i < pools.n; i++) {
        dra_av_pool p;
        classify_pool(&a, &pools.v[i], st, f, w->names, &p);
        fn(arg, &p);
        arena_clear(&a);
        free(pools.v[i].slices);
    }
    arena_free(&a);
    free(pools.v);
}

bool dra_snapshot_slices_node_local(dra_snapshot *s) {
    size_t n;
    const dra_slice *const *sls = dra__world_all_slices((dra_world *)dra__snapshot_world(s), &n);
    for (size_t i = 0; i < n; i++)
        if (!sls[i]->node_name || !*sls[i]->node_name) return false;
    return true;
}
