/* taintrule.c — DeviceTaintRule decoding and merging (see taintrule.h).
 *
 * spec.deviceSelector: every set field must match — driver (slice.spec.driver), pool
 * (slice.spec.pool.name), device (device name); the v1alpha3 fields of Kubernetes
 * 1.33/1.34, deviceClassName (the class's CEL selectors must accept the device) and
 * selectors (CEL), are honoured too. An empty selector matches every device; a rule
 * without a selector matches none. A CEL error while matching means "not matched"
 * (the rule controller would report it in the rule's status, not taint the device). */
#include "engine/taintrule.h"

#include "engine/decode_util.h"
#include "engine/world.h"

#include <string.h>

typedef struct dra_taint_rule {
    const char *name;
    bool has_selector;
    const char *driver, *pool, *device, *class_name;
    dra_selector *selectors;
    uint32_t nselectors;
    dra_taint taint;
} dra_taint_rule;

bool dra_taintrule_add(dra_world *w, const json_t *obj, err *e) {
    dctx c;
    dra_dctx_init(&c, &w->dec, e, "DeviceTaintRule", obj);
    dra_taint_rule *r = ARENA_NEW(&w->mem, dra_taint_rule);
    const json_t *meta, *spec, *sel, *taint;
    if (!dra_dget_obj(&c, obj, "metadata", &meta)) return false;
    if (meta && !dra_dget_str(&c, meta, "name", &r->name)) return false;
    if (!dra_dget_obj(&c, obj, "spec", &spec)) return false;
    if (!spec) return dra_dfail(&c, "spec: Required value");
    dra_dpush_key(&c, "spec");
    if (!dra_dget_obj(&c, spec, "deviceSelector", &sel) || !dra_dget_obj(&c, spec, "taint", &taint)) return false;
    if (sel) {
        size_t m = dra_dpush_key(&c, "deviceSelector");
        r->has_selector = true;
        if (!dra_dget_str(&c, sel, "driver", &r->driver) || !dra_dget_str(&c, sel, "pool", &r->pool) ||
            !dra_dget_str(&c, sel, "device", &r->device) || !dra_dget_str(&c, sel, "deviceClassName", &r->class_name))
            return false;
        const json_t *arr;
        if (!dra_dget_arr(&c, sel, "selectors", &arr)) return false;
        if (arr) {
            size_t n = json_array_size(arr);
            r->selectors = ARENA_NEWN(&w->mem, dra_selector, n ? n : 1);
            size_t m2 = dra_dpush_key(&c, "selectors");
            for (size_t i = 0; i < n; i++) {
                const json_t *s = json_array_get(arr, i), *cel;
                size_t m3 = dra_dpush_idx(&c, i);
                if (!json_is_object(s)) return dra_dfail(&c, "expected object");
                if (!dra_dget_obj(&c, s, "cel", &cel)) return false;
                if (!cel) return dra_dfail(&c, "cel: Required value");
                dra_dpush_key(&c, "cel");
                if (!dra_dget_str(&c, cel, "expression", &r->selectors[i].cel)) return false;
                if (!r->selectors[i].cel) r->selectors[i].cel = "";
                dpop(&c, m3);
            }
            r->nselectors = (uint32_t)n;
            dpop(&c, m2);
        }
        dpop(&c, m);
    }
    if (!taint) return dra_dfail(&c, "taint: Required value");
    dra_dpush_key(&c, "taint");
    if (!dra_dget_str(&c, taint, "key", &r->taint.key) || !dra_dget_str(&c, taint, "value", &r->taint.value) ||
        !dra_dget_str(&c, taint, "effect", &r->taint.effect) ||
        !dra_dget_str(&c, taint, "timeAdded", &r->taint.time_added))
        return false;
    if (!r->taint.key || !*r->taint.key) return dra_dfail(&c, "key: Required value");
    if (!r->taint.effect || !*r->taint.effect) return dra_dfail(&c, "effect: Required value");
    DRA_VEC_PUSH(w->taint_rules, r);
    return true;
}

static bool cel_all(dra_world *w, cel_eval_ctx *x, const dra_selector *sels, uint32_t n, const dra_device *d) {
    for (uint32_t i = 0; i < n; i++) {
        const char *expr = sels[i].cel ? sels[i].cel : "";
        err e;
        err_clear(&e);
        const cel_program *p = cel_cache_get(w->cel, expr, strlen(expr), &e);
        if (!p || cel_eval_bool(p, &d->cel, x, &e) != CEL_TRUE) return false;
    }
    return true;
}

static bool matches(dra_world *w, cel_eval_ctx *x, const dra_taint_rule *r, const dra_slice *s, const dra_device *d) {
    if (!r->has_selector) return false;
    if (r->driver && *r->driver && strcmp(r->driver, s->driver)) return false;
    if (r->pool && *r->pool && strcmp(r->pool, s->pool)) return false;
    if (r->device && *r->device && strcmp(r->device, d->name)) return false;
    if (r->class_name && *r->class_name) {
        const dra_class *cls = NULL;
        for (size_t i = 0; i < w->classes.n && !cls; i++)
            if (!strcmp(w->classes.v[i]->name, r->class_name)) cls = w->classes.v[i];
        if (!cls || !cel_all(w, x, cls->selectors, cls->nselectors, d)) return false;
    }
    return cel_all(w, x, r->selectors, r->nselectors, d);
}

/* Appends the taints of rules [r0, r1) to the devices of slices [s0, s1). */
static void apply_range(dra_world *w, cel_eval_ctx *x, size_t s0, size_t s1, size_t r0, size_t r1) {
    for (size_t si = s0; si < s1; si++) {
        dra_slice *s = w->slices.v[si];
        for (uint32_t di = 0; di < s->ndevices; di++) {
            dra_device *d = &s->devices[di];
            uint32_t add = 0;
            for (size_t ri = r0; ri < r1; ri++) add += matches(w, x, w->taint_rules.v[ri], s, d);
            if (!add) continue;
            dra_taint *t = ARENA_NEWN(&w->mem, dra_taint, d->ntaints + add);
            if (d->ntaints) memcpy(t, d->taints, d->ntaints * sizeof *t);
            uint32_t n = d->ntaints;
            for (size_t ri = r0; ri < r1; ri++)
                if (matches(w, x, w->taint_rules.v[ri], s, d)) t[n++] = w->taint_rules.v[ri]->taint;
            d->taints = t;
            d->ntaints = n;
        }
    }
}

/* Idempotent across freezes: slices and rules added since the last freeze are merged
 * (old slices × new rules, new slices × all rules), nothing twice. */
void dra_taintrule_apply(dra_world *w) {
    size_t ns = w->slices.n, nr = w->taint_rules.n;
    if (nr && (ns > w->taint_slices_done || nr > w->taint_rules_done)) {
        cel_eval_ctx *x = cel_eval_ctx_new();
        apply_range(w, x, 0, w->taint_slices_done, w->taint_rules_done, nr);
        apply_range(w, x, w->taint_slices_done, ns, 0, nr);
        cel_eval_ctx_free(x);
    }
    w->taint_slices_done = ns;
    w->taint_rules_done = nr;
}
