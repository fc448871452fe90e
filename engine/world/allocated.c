/* allocated.c — the in-use state allocation reads (world.h, struct dra_allocated):
 * devices held exclusively, shared IDs, consumed capacity and who holds each device,
 * built from claims' status.allocation or results given directly, and cloned
 * copy-on-write from one snapshot's state to the next. */
#include "engine/world/world.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static void caps_retain(void *p) { atomic_fetch_add_explicit(&((dra_alloc_caps *)p)->refs, 1, memory_order_relaxed); }

static void caps_release(void *p) {
    dra_alloc_caps *c = p;
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    free(c->id);
    free(c->value);
    free(c);
}

static const pmap_ops caps_ops = {caps_retain, caps_release};

dra_allocated *dra__allocated_clone(const dra_allocated *src, const dra_world *w) {
    dra_allocated *s = xcalloc(1, sizeof *s);
    s->w = w;
    cmap_share(&s->devices, &src->devices);
    cmap_share(&s->shared, &src->shared);
    cmap_share(&s->capacity, &src->capacity);
    cmap_share(&s->holders, &src->holders);
    return s;
}

/* The capacity entry in *slot, made private to s before it is written (the chunk it
 * is in is s's already: cmap_upsert made it so). */
static dra_alloc_caps *caps_own(uint64_t *slot) {
    dra_alloc_caps *c = (dra_alloc_caps *)(uintptr_t)*slot;
    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1) return c;
    dra_alloc_caps *o = xcalloc(1, sizeof *o);
    atomic_init(&o->refs, 1);
    o->n = o->cap = c->n;
    o->id = xmalloc((c->n ? c->n : 1) * sizeof *o->id);
    o->value = xmalloc((c->n ? c->n : 1) * sizeof *o->value);
    memcpy(o->id, c->id, c->n * sizeof *o->id);
    memcpy(o->value, c->value, c->n * sizeof *o->value);
    caps_release(c);
    *slot = (uint64_t)(uintptr_t)o;
    return o;
}

dra_allocated *dra_allocated_new(const dra_world *w) {
    dra_allocated *s = xcalloc(1, sizeof *s);
    s->w = w;
    cmap_init(&s->devices, NULL);
    cmap_init(&s->shared, NULL);
    cmap_init(&s->capacity, &caps_ops);
    cmap_init(&s->holders, NULL);
    return s;
}

void dra_allocated_free(dra_allocated *s) {
    if (!s) return;
    cmap_free(&s->devices);
    cmap_free(&s->shared);
    cmap_free(&s->capacity);
    cmap_free(&s->holders);
    free(s);
}

/* "driver/pool/device[/shareID]": the driver has no '/', a device name has none, the
 * pool may contain '/'. With share, the last component is the share ID. */
static bool device_key_of(dra_allocated *s, const char *id, bool with_share, uint64_t *key, err *e) {
    const char *end = id + strlen(id);
    if (with_share) {
        const char *sl = strrchr(id, '/');
        if (!sl) return err_set(e, "invalid shared device ID %s", id);
        end = sl;
    }
    const char *first = strchr(id, '/');
    const char *last = NULL;
    for (const char *p = id; p < end; p++)
        if (*p == '/') last = p;
    if (!first || !last || first == last) return err_set(e, "invalid device ID %s: want driver/pool/device", id);
    uint32_t pk = intern_put(s->w->names, id, (size_t)(last - id));
    uint32_t dn = intern_put(s->w->names, last + 1, (size_t)(end - last - 1));
    *key = dra_device_key(pk, dn);
    return true;
}

bool dra_allocated_add_device(dra_allocated *s, const char *id, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, false, &k, e)) return false;
    cmap_put(&s->devices, k, 1);
    return true;
}

bool dra_allocated_add_shared(dra_allocated *s, const char *id, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, true, &k, e)) return false;
    bool ins;
    uint64_t *v = cmap_upsert(&s->shared, k, 0, &ins);
    (*v)++;
    return true;
}

static bool add_capacity_key(dra_allocated *s, uint64_t k, uint32_t id, const quantity *q) {
    /* false only when the sum overflows Quantity's range */
    bool ins;
    uint64_t *slot = cmap_upsert(&s->capacity, k, 0, &ins);
    dra_alloc_caps *c;
    if (ins) {
        c = xcalloc(1, sizeof *c);
        atomic_init(&c->refs, 1);
        *slot = (uint64_t)(uintptr_t)c;
    } else {
        c = caps_own(slot);
    }
    /* keyed by the capacity name as the device's capacity map writes it */
    for (uint32_t i = 0; i < c->n; i++)
        if (c->id[i] == id) return quantity_add(&c->value[i], q, &c->value[i]);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4;
        c->id = xrealloc(c->id, c->cap * sizeof *c->id);
        c->value = xrealloc(c->value, c->cap * sizeof *c->value);
    }
    c->id[c->n] = id;
    c->value[c->n] = *q;
    c->n++;
    return true;
}

bool dra_allocated_add_capacity(dra_allocated *s, const char *id, const char *cap, const quantity *q, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, false, &k, e)) return false;
    if (!add_capacity_key(s, k, intern_cstr(s->w->names, cap), q)) return err_set(e, "too many capacities for device %s", id);
    return true;
}

/* A device a claim holds, from either kind of result (a decoded claim's
 * dra_claim_result, the allocator's dra_device_result): what the in-use set reads. */
typedef struct held_dev {
    const char *driver, *pool, *device;
    uint64_t key;
    int8_t admin_access;
    const char *share_id;
    const dra_cap_value *consumed;
    uint32_t nconsumed;
} held_dev;

static held_dev held_of_claim(const dra_claim_result *r) {
    return (held_dev){r->driver, r->pool, r->device, r->key, r->admin_access, r->share_id, r->consumed, r->nconsumed};
}

static held_dev held_of_alloc(const dra_device_result *r) {
    return (held_dev){r->driver, r->pool, r->device, r->key, r->admin_access, r->share_id, r->consumed, r->nconsumed};
}

/* The device key of a result: set where its names were interned (a decoded claim, the
 * allocator's view); else looked up — a name nothing interned is no device anyone
 * holds or sees (the key matches no candidate). */
static uint64_t result_key(intern_table *names, const held_dev *r) {
    if (r->key) return r->key;
    char stack[512];
    size_t len;
    char *buf = dra_pool_id(r->driver, r->pool, stack, sizeof stack, &len);
    uint32_t pk = intern_get(names, buf, len);
    if (buf != stack) free(buf);
    return dra_device_key(pk, intern_get(names, r->device, strlen(r->device)));
}

/* A consumed capacity's key id (as result_key: set at decode, else looked up). */
static uint32_t cap_key_id(intern_table *names, const dra_cap_value *v) {
    return v->key_id ? v->key_id : intern_get(names, v->key, strlen(v->key));
}

/* One device held by `holder` (NULL: not recorded). */
static void add_held(dra_allocated *s, const held_dev *r, const dra_claim *holder, bool consumable_capacity) {
    if (r->admin_access == 1) return;
    /* keys come from the intern table only: the world's arena stays untouched, so
     * allocated states can be built while other threads read the world */
    uint64_t k = result_key(s->w->names, r);
    bool ins;
    if (consumable_capacity && r->share_id) {
        (*cmap_upsert(&s->shared, k, 0, &ins))++;
        for (uint32_t j = 0; j < r->nconsumed; j++)
            add_capacity_key(s, k, cap_key_id(s->w->names, &r->consumed[j]), &r->consumed[j].value);
    } else {
        (*cmap_upsert(&s->devices, k, 0, &ins))++;
    }
    if (holder) cmap_put(&s->holders, k, (uint64_t)(uintptr_t)holder);
}

/* The results of c, held by `holder` (NULL: not recorded). */
static void add_results(dra_allocated *s, const dra_claim *c, const dra_claim *holder, bool consumable_capacity) {
    if (!c->allocated) return;
    for (uint32_t i = 0; i < c->nalloc_results; i++) {
        held_dev h = held_of_claim(&c->alloc_results[i]);
        add_held(s, &h, holder, consumable_capacity);
    }
}

void dra_allocated_add_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity) {
    add_results(s, c, c, consumable_capacity);
}

static void count_down(cmap *m, uint64_t k) {
    uint64_t v;
    if (!cmap_get(m, k, &v)) return;
    if (v <= 1) cmap_del(m, k);
    else cmap_put(m, k, v - 1);
}

/* The inverse of dra_allocated_add_claim for the same claim object. */
void dra__allocated_remove_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity) {
    if (!c->allocated) return;
    for (uint32_t i = 0; i < c->nalloc_results; i++) {
        held_dev hd = held_of_claim(&c->alloc_results[i]);
        const held_dev *r = &hd;
        if (r->admin_access == 1) continue;
        uint64_t k = result_key(s->w->names, r);
        uint64_t h;
        if (cmap_get(&s->holders, k, &h) && h == (uint64_t)(uintptr_t)c) cmap_del(&s->holders, k);
        if (!(consumable_capacity && r->share_id)) {
            count_down(&s->devices, k);
            continue;
        }
        count_down(&s->shared, k);
        if (!cmap_get(&s->capacity, k, NULL)) continue;
        if (!cmap_get(&s->shared, k, NULL)) {
            /* the last share of the device: nothing of its capacity is in use */
            cmap_del(&s->capacity, k);
            continue;
        }
        bool ins;
        dra_alloc_caps *cp = caps_own(cmap_upsert(&s->capacity, k, 0, &ins));
        for (uint32_t j = 0; j < r->nconsumed; j++) {
            uint32_t id = cap_key_id(s->w->names, &r->consumed[j]);
            for (uint32_t m = 0; m < cp->n; m++)
                if (cp->id[m] == id) quantity_sub(&cp->value[m], &r->consumed[j].value, &cp->value[m]);
        }
    }
}

void dra_allocated_add_result(dra_allocated *s, const dra_alloc_result *r, bool consumable_capacity) {
    dra_allocated_add_result_of(s, r, NULL, consumable_capacity);
}

void dra_allocated_add_result_of(dra_allocated *s, const dra_alloc_result *r, const dra_claim *holder,
                                 bool consumable_capacity) {
    for (uint32_t i = 0; i < r->nresults; i++) {
        held_dev h = held_of_alloc(&r->results[i]);
        add_held(s, &h, holder, consumable_capacity);
    }
}
