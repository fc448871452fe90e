/* taintrule.c — DeviceTaintRule decoding and merging (see taintrule.h).
 *
 * Matching follows kube-scheduler's slice tracker (k8s.io/dynamic-resource-allocation
 * v0.37.2 resourceslice/tracker/tracker.go, applyPatches): a rule without
 * spec.deviceSelector (absent or null) taints no device ("No selector matches no
 * devices"), while the empty selector {} taints every device. Within a selector every
 * set field must match — driver (slice.spec.driver), pool (slice.spec.pool.name),
 * device (device name). An earlier tracker filtered only `if deviceSelector != nil`,
 * so that a missing selector tainted everything; the oracle (tests/upstream) showed
 * the change.
 *
 * deviceClassName and selectors (CEL), fields of v1alpha3 in Kubernetes 1.33/1.34,
 * were removed from DeviceTaintSelector in 1.35 (v1alpha3 and v1beta2 alike): the API
 * server drops them as unknown fields, so the tracker of the 1.37 scheduler never sees
 * them. They are reported as unknown fields here (a warning, an error with --strict)
 * and do not narrow the rule. */
#include "engine/decode/taintrule.h"

#include "engine/decode/decode_util.h"
#include "engine/decode/validate.h"
#include "engine/decode/kinds.h"

#include <string.h>

typedef struct dra_taint_rule {
    const char *name;
    const char *driver, *pool, *device;   /* NULL: not set */
    bool has_selector;                    /* spec.deviceSelector present and not null */
    dra_taint taint;
} dra_taint_rule;

static bool add_v1(dra_rules *w, const json_t *obj, err *e) {
    dctx c;
    dra__dctx_init(&c, &w->dec, e, "DeviceTaintRule", obj);
    dra_taint_rule *r = ARENA_NEW(&w->mem, dra_taint_rule);
    const json_t *meta, *spec, *sel, *taint;
    if (!dra__dget_obj(&c, obj, "metadata", &meta)) return false;
    if (meta && !dra__dget_str(&c, meta, "name", &r->name)) return false;
    if (!dra__dget_obj(&c, obj, "spec", &spec)) return false;
    if (!spec) return dra__dfail(&c, "spec: Required value");
    dra__dpush_key(&c, "spec");
    if (!dra__dget_obj(&c, spec, "deviceSelector", &sel) || !dra__dget_obj(&c, spec, "taint", &taint)) return false;
    r->has_selector = sel != NULL;
    if (sel) {
        size_t m = dra__dpush_key(&c, "deviceSelector");
        if (!dra__dget_str(&c, sel, "driver", &r->driver) || !dra__dget_str(&c, sel, "pool", &r->pool) ||
            !dra__dget_str(&c, sel, "device", &r->device))
            return false;
        dpop(&c, m);
    }
    if (!taint) return dra__dfail(&c, "taint: Required value");
    dra__dpush_key(&c, "taint");
    if (!dra__dget_str(&c, taint, "key", &r->taint.key) || !dra__dget_str(&c, taint, "value", &r->taint.value) ||
        !dra__dget_str(&c, taint, "effect", &r->taint.effect) ||
        !dra__dget_str(&c, taint, "timeAdded", &r->taint.time_added))
        return false;
    if (!r->taint.key || !*r->taint.key) return dra__dfail(&c, "key: Required value");
    if (!r->taint.effect || !*r->taint.effect) return dra__dfail(&c, "effect: Required value");
    VEC_PUSH(w->taint_rules, r);
    return true;
}

bool dra__taintrule_add(dra_rules *w, const json_t *obj, err *e) {
    dctx c;
    dra__dctx_init(&c, &w->dec, e, "DeviceTaintRule", obj);
    json_t *owned;
    if (!dra__input_prepare(&c, "DeviceTaintRule", &obj, &owned)) return false;
    bool ok = add_v1(w, obj, e);
    json_decref(owned);
    return ok;
}

/* tracker.go applyPatches: a nil selector matches no device; a set field that differs
 * rules the device out. */
static bool matches(const dra_taint_rule *r, const dra_slice *s, const dra_device *d) {
    if (!r->has_selector) return false;
    if (r->driver && strcmp(r->driver, s->driver)) return false;
    if (r->pool && strcmp(r->pool, s->pool)) return false;
    if (r->device && strcmp(r->device, d->name)) return false;
    return true;
}

const dra_slice *dra__taintrule_slice(const dra_rules *rules, const dra_slice *s, arena *a) {
    size_t nr = rules->taint_rules.n;
    bool any = false;
    for (uint32_t di = 0; di < s->ndevices && !any; di++)
        for (size_t ri = 0; ri < nr && !any; ri++) any = matches(rules->taint_rules.v[ri], s, &s->devices[di]);
    if (!any) return s;
    dra_slice *c = arena_memdup(a, s, sizeof *c);
    c->devices = arena_memdup(a, s->devices, s->ndevices * sizeof *c->devices);
    for (uint32_t di = 0; di < c->ndevices; di++) {
        dra_device *d = &c->devices[di];
        uint32_t add = 0;
        for (size_t ri = 0; ri < nr; ri++) add += matches(rules->taint_rules.v[ri], c, d);
        if (!add) continue;
        dra_taint *t = ARENA_NEWN(a, dra_taint, d->ntaints + add);
        if (d->ntaints) memcpy(t, d->taints, d->ntaints * sizeof *t);
        uint32_t n = d->ntaints;
        for (size_t ri = 0; ri < nr; ri++)
            if (matches(rules->taint_rules.v[ri], c, d)) t[n++] = rules->taint_rules.v[ri]->taint;
        d->taints = t;
        d->ntaints = n;
    }
    return c;
}
