/* alloc_resources.c — what a device uses up besides itself: shared counters of
 * partitionable devices, consumable capacity of multi-allocatable devices, and the
 * taint check. All per-call bookkeeping lives in the dra_alloc_ctx arena.
 *
 * Counters: available = counter-set values minus what allocated devices of the pool
 * consume (computed once per call and pool); each candidate adds its consumption and
 * must leave every counter of the pool non-negative, and backtracking gives the
 * consumption back exactly (the upstream bug kubernetes#140436 leaked reservations).
 *
 * Capacity (Kubernetes' CmpRequestOverCapacity): every capacity of the device is
 * consumed by the request's amount rounded up by the capacity's requestPolicy, or by
 * the policy default / the full value when the request does not name it; allocated
 * plus allocating plus this must stay within the value. */
#include "engine/alloc/alloc_internal.h"

#include <string.h>

static bool is_device_allocated(const dra_allocated *st, uint64_t key) {
    uint64_t v;
    if (!st) return false;
    return cmap_get(&st->devices, key, &v) || cmap_get(&st->shared, key, &v) || cmap_get(&st->capacity, key, &v);
}

bool dra__rs_device_in_use(const dra_alloc_ctx *x, uint32_t cand) {
    if (x->allocating[cand]) return true;
    if (!x->st) return false;
    uint8_t m = x->st_use[cand];
    if (!(m & DRA_USE_DEV_KNOWN)) {
        uint64_t v;
        m |= DRA_USE_DEV_KNOWN | (cmap_get(&x->st->devices, x->v->cands[cand].key, &v) ? DRA_USE_DEV : 0);
        x->st_use[cand] = m;
    }
    return m & DRA_USE_DEV;
}

bool dra__rs_capacity_in_use(const dra_alloc_ctx *x, uint32_t cand) {
    if (x->cap_shares && x->cap_shares[cand]) return true;
    if (!x->st) return false;
    uint8_t m = x->st_use[cand];
    if (!(m & DRA_USE_CAP_KNOWN)) {
        uint64_t v;
        m |= DRA_USE_CAP_KNOWN | (cmap_get(&x->st->capacity, x->v->cands[cand].key, &v) ? DRA_USE_CAP : 0);
        x->st_use[cand] = m;
    }
    return m & DRA_USE_CAP;
}

static void counters_init(dra_alloc_ctx *x, uint32_t pi) {
    const dra_pool *p = &x->v->pools[pi];
    quantity *avail = ARENA_NEWN(&x->a, quantity, p->ncounters ? p->ncounters : 1);
    quantity *used = ARENA_NEWN(&x->a, quantity, p->ncounters ? p->ncounters : 1);
    for (uint32_t i = 0; i < p->ncounters; i++) {
        avail[i] = p->counters[i].value;
        used[i] = quantity_from_int(0, QTY_DECIMAL_SI);
    }
    for (uint32_t d = 0; d < p->nall_devs; d++) {
        const dra_pool_device *pd = &p->all_devs[d];
        if (!pd->ncons || !is_device_allocated(x->st, pd->key)) continue;
        for (uint32_t k = 0; k < pd->ncons; k++)
            quantity_sub(&avail[pd->cons[k].counter], &pd->cons[k].value, &avail[pd->cons[k].counter]);
    }
    x->cnt_avail[pi] = avail;
    x->cnt_used[pi] = used;
}

bool dra__rs_counters_take(dra_alloc_ctx *x, uint32_t cand) {
    const dra_cand *c = &x->v->cands[cand];
    if (!x->cnt_avail[c->pool]) counters_init(x, c->pool);
    quantity *avail = x->cnt_avail[c->pool], *used = x->cnt_used[c->pool];
    for (uint32_t k = 0; k < c->ncons; k++)
        quantity_add(&used[c->cons[k].counter], &c->cons[k].value, &used[c->cons[k].counter]);
    const dra_pool *p = &x->v->pools[c->pool];
    for (uint32_t i = 0; i < p->ncounters; i++)
        if (quantity_cmp(&avail[i], &used[i]) < 0) {
            dra__rs_counters_give(x, cand);
            return false;
        }
    return true;
}

void dra__rs_counters_give(dra_alloc_ctx *x, uint32_t cand) {
    const dra_cand *c = &x->v->cands[cand];
    quantity *used = x->cnt_used[c->pool];
    for (uint32_t k = 0; k < c->ncons; k++)
        quantity_sub(&used[c->cons[k].counter], &c->cons[k].value, &used[c->cons[k].counter]);
}

/* ---- consumable capacity --------------------------------------------------------- */

/* The request's amount for device capacity k, or NULL. */
static const quantity *requested_for(const dra_request_spec *spec, const dra_device *d, uint32_t k,
                                     const intern_table *names) {
    const cel_capacity *cc = &d->cel.caps[k];
    for (uint32_t i = 0; i < spec->ncaps; i++) {
        const char *key = spec->caps[i].key;
        const char *sl = strchr(key, '/');
        uint32_t dom, id;
        if (sl) {
            dom = intern_get(names, key, (size_t)(sl - key));
            id = intern_get(names, sl + 1, strlen(sl + 1));
        } else {
            dom = d->cel.driver_id;
            id = intern_get(names, key, strlen(key));
        }
        if (dom == cc->domain && id == cc->name) return &spec->caps[i].value;
    }
    return NULL;
}

static quantity consumed_for(const quantity *req, const dra_capacity *cap) {
    const dra_cap_policy *pol = cap->policy;
    if (!req) return pol && pol->has_default ? pol->dflt : cap->value;
    if (!pol) return *req;
    if (pol->has_range && pol->has_min) {
        if (quantity_cmp(req, &pol->rmin) < 0) return pol->rmin;
        if (!pol->has_step) return *req;
        quantity added, out, mul;
        int64_t n;
        if (!quantity_sub(req, &pol->rmin, &added) || !quantity_div_ceil(&added, &pol->step, &n) ||
            !quantity_mul_int(&pol->step, n, &mul) || !quantity_add(&pol->rmin, &mul, &out))
            return *req;
        out.format = pol->step.format;
        return out;
    }
    if (pol->nvalid) {
        for (uint32_t i = 0; i < pol->nvalid; i++)
            if (quantity_cmp(req, &pol->valid_values[i]) <= 0) return pol->valid_values[i];
        return *req;
    }
    return *req;
}

static bool violates_policy(const quantity *v, const dra_capacity *cap) {
    const dra_cap_policy *pol = cap->policy;
    if (!pol) return false;
    if (pol->has_default && quantity_cmp(v, &pol->dflt) == 0) return false;
    if (pol->has_range) {
        if (pol->has_max && quantity_cmp(v, &pol->rmax) > 0) return true;
        if (pol->has_step) {
            quantity d;
            quantity zero = quantity_from_int(0, QTY_DECIMAL_SI);
            const quantity *min = pol->has_min ? &pol->rmin : &zero;
            if (!quantity_sub(v, min, &d) || quantity_is_zero(&pol->step)) return true;
            if (!quantity_is_multiple(&d, &pol->step)) return true;
        }
        return false;
    }
    if (pol->nvalid) {
        for (uint32_t i = 0; i < pol->nvalid; i++)
            if (quantity_cmp(v, &pol->valid_values[i]) == 0) return false;
        return true;
    }
    return false;
}

static const quantity *allocated_cap(const dra_alloc_ctx *x, uint64_t key, const char *capkey) {
    uint64_t p;
    if (!x->st || !cmap_get(&x->st->capacity, key, &p)) return NULL;
    const dra_alloc_caps *c = (const dra_alloc_caps *)(uintptr_t)p;
    uint32_t id = intern_get(x->w->names, capkey, strlen(capkey));
    for (uint32_t i = 0; id && i < c->n; i++)
        if (c->id[i] == id) return &c->value[i];
    return NULL;
}

int dra__rs_capacity_check(const dra_alloc_ctx *x, const dra_req_data *rd, uint32_t cand, bool static_only,
                          dra_cap_verdict *why) {
    const dra_cand *c = &x->v->cands[cand];
    const dra_device *d = c->dev;
    const dra_request_spec *spec = rd->spec;
    /* a request for a capacity the device does not have */
    for (uint32_t i = 0; i < spec->ncaps; i++) {
        bool found = false;
        for (uint32_t k = 0; k < d->cel.ncaps && !found; k++) {
            const dra_request_spec one = {.caps = &spec->caps[i], .ncaps = 1};
            found = requested_for(&one, d, k, x->w->names) != NULL;
        }
        if (!found) {
            if (why) *why = (dra_cap_verdict){.cap = spec->caps[i].key, .want = spec->caps[i].value};
            return DRA_CAP_MISSING;
        }
    }
    for (uint32_t k = 0; k < d->cel.ncaps; k++) {
        const dra_capacity *cap = &d->caps[k];
        quantity v = consumed_for(requested_for(spec, d, k, x->w->names), cap);
        if (violates_policy(&v, cap)) {
            if (why) *why = (dra_cap_verdict){.cap = cap->key, .want = v, .left = cap->value};
            return DRA_CAP_POLICY;
        }
        quantity want = v;
        const quantity *al = static_only ? NULL : allocated_cap(x, c->key, cap->key);
        if (al) quantity_add(&v, al, &v);
        if (!static_only && x->cap_alloc[cand]) quantity_add(&v, &x->cap_alloc[cand][k], &v);
        if (quantity_cmp(&v, &cap->value) > 0) {
            bool small = quantity_cmp(&want, &cap->value) > 0;
            if (why) {
                *why = (dra_cap_verdict){.cap = cap->key, .want = want, .left = cap->value};
                if (!small && al) quantity_sub(&why->left, al, &why->left);
                if (!small && !static_only && x->cap_alloc[cand])
                    quantity_sub(&why->left, &x->cap_alloc[cand][k], &why->left);
            }
            return small ? DRA_CAP_TOO_SMALL : DRA_CAP_USED_UP;
        }
    }
    return DRA_CAP_FITS;
}

void dra__rs_capacity_consumed(const dra_alloc_ctx *x, const dra_req_data *rd, uint32_t cand, quantity *out) {
    const dra_device *d = x->v->cands[cand].dev;
    for (uint32_t k = 0; k < d->cel.ncaps; k++)
        out[k] = consumed_for(requested_for(rd->spec, d, k, x->w->names), &d->caps[k]);
}

void dra__rs_capacity_add(dra_alloc_ctx *x, uint32_t cand, const quantity *consumed) {
    const dra_device *d = x->v->cands[cand].dev;
    if (!x->cap_alloc[cand]) {
        x->cap_alloc[cand] = ARENA_NEWN(&x->a, quantity, d->cel.ncaps ? d->cel.ncaps : 1);
        for (uint32_t k = 0; k < d->cel.ncaps; k++) x->cap_alloc[cand][k] = quantity_from_int(0, QTY_DECIMAL_SI);
    }
    for (uint32_t k = 0; k < d->cel.ncaps; k++) quantity_add(&x->cap_alloc[cand][k], &consumed[k], &x->cap_alloc[cand][k]);
    x->cap_shares[cand]++;
}

void dra__rs_capacity_sub(dra_alloc_ctx *x, uint32_t cand, const quantity *consumed) {
    const dra_device *d = x->v->cands[cand].dev;
    for (uint32_t k = 0; k < d->cel.ncaps; k++) quantity_sub(&x->cap_alloc[cand][k], &consumed[k], &x->cap_alloc[cand][k]);
    x->cap_shares[cand]--;
}

/* ---- taints ------------------------------------------------------------------------ */

static bool streq0(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }
static bool empty(const char *s) { return !s || !*s; }

static bool tolerates(const dra_toleration *t, const dra_taint *taint) {
    if (!empty(t->effect) && !streq0(t->effect, taint->effect)) return false;
    if (!empty(t->key) && !streq0(t->key, taint->key)) return false;
    if (empty(t->op) || !strcmp(t->op, "Equal")) return streq0(t->value, taint->value);
    if (!strcmp(t->op, "Exists")) return true;
    return false;
}

const dra_taint *dra__rs_taint_blocking(const dra_device *d, const dra_request_spec *spec) {
    for (uint32_t i = 0; i < d->ntaints; i++) {
        const dra_taint *tt = &d->taints[i];
        if (!tt->effect || (strcmp(tt->effect, "NoSchedule") && strcmp(tt->effect, "NoExecute"))) continue;
        bool ok = false;
        for (uint32_t j = 0; j < spec->ntols && !ok; j++) ok = tolerates(&spec->tols[j], tt);
        if (!ok) return tt;
    }
    return NULL;
}

/* ---- for the search bound (alloc.c) ------------------------------------------------ */

void dra__rs_counters_left(dra_alloc_ctx *x, uint32_t pi, quantity *out) {
    if (!x->cnt_avail[pi]) counters_init(x, pi);
    const dra_pool *p = &x->v->pools[pi];
    for (uint32_t i = 0; i < p->ncounters; i++) quantity_sub(&x->cnt_avail[pi][i], &x->cnt_used[pi][i], &out[i]);
}

void dra__rs_capacity_left(const dra_alloc_ctx *x, uint32_t cand, quantity *out) {
    const dra_cand *c = &x->v->cands[cand];
    const dra_device *d = c->dev;
    for (uint32_t k = 0; k < d->cel.ncaps; k++) {
        out[k] = d->caps[k].value;
        const quantity *al = allocated_cap(x, c->key, d->caps[k].key);
        if (al) quantity_sub(&out[k], al, &out[k]);
        if (x->cap_alloc[cand]) quantity_sub(&out[k], &x->cap_alloc[cand][k], &out[k]);
    }
}
