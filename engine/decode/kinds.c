/* kinds.c — the kinds of objects the engine reads (DeviceClass, ResourceSlice,
 * ResourceClaim, ResourceClaimTemplate, Node, Pod, DeviceTaintRule, PodGroup): their
 * names, scope, the "Kind/namespace/name" key an object is stored under, and one
 * object decoded by its kind into the model of model.h. */
#include "engine/decode/kinds.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[DRA_KIND_COUNT] = {
    [DRA_KIND_CLASS] = "DeviceClass",     [DRA_KIND_SLICE] = "ResourceSlice",
    [DRA_KIND_CLAIM] = "ResourceClaim",   [DRA_KIND_TEMPLATE] = "ResourceClaimTemplate",
    [DRA_KIND_NODE] = "Node",             [DRA_KIND_POD] = "Pod",
    [DRA_KIND_TAINT_RULE] = "DeviceTaintRule", [DRA_KIND_POD_GROUP] = "PodGroup",
};

dra_kind dra__kind_of(const char *kind) {
    for (int k = 1; kind && k < DRA_KIND_COUNT; k++)
        if (!strcmp(kind, kind_names[k])) return (dra_kind)k;
    return DRA_KIND_NONE;
}

const char *dra__kind_name(dra_kind k) { return k > 0 && k < DRA_KIND_COUNT ? kind_names[k] : "?"; }

bool dra__kind_cluster_scoped(dra_kind k) {
    return k == DRA_KIND_CLASS || k == DRA_KIND_SLICE || k == DRA_KIND_NODE || k == DRA_KIND_TAINT_RULE;
}

char *dra__object_key(dra_kind k, const char *ns, const char *name) {
    ns = dra__kind_cluster_scoped(k) ? "" : dra_ns(ns);
    size_t n = strlen(dra__kind_name(k)) + strlen(ns) + strlen(name) + 3;
    char *key = xmalloc(n);
    snprintf(key, n, "%s/%s/%s", dra__kind_name(k), ns, name);
    return key;
}

bool dra__decode_object(const dra_decoder *d, dra_kind k, const json_t *obj, void **out, err *e) {
    *out = NULL;
    switch (k) {
    case DRA_KIND_CLASS: {
        dra_class *c = ARENA_NEW(d->a, dra_class);
        if (!dra__decode_class(d, obj, c, e)) return false;
        *out = c;
        return true;
    }
    case DRA_KIND_SLICE: {
        dra_slice *s = ARENA_NEW(d->a, dra_slice);
        if (!dra__decode_slice(d, obj, s, e)) return false;
        *out = s;
        return true;
    }
    case DRA_KIND_CLAIM: {
        dra_claim *c = ARENA_NEW(d->a, dra_claim);
        if (!dra__decode_claim(d, obj, c, e)) return false;
        *out = c;
        return true;
    }
    case DRA_KIND_TEMPLATE: {
        dra_claim_template *t = ARENA_NEW(d->a, dra_claim_template);
        if (!dra__decode_claim_template(d, obj, t, e)) return false;
        *out = t;
        return true;
    }
    case DRA_KIND_NODE: {
        dra_node *n = ARENA_NEW(d->a, dra_node);
        if (!dra__decode_node(d, obj, n, e)) return false;
        *out = n;
        return true;
    }
    case DRA_KIND_POD: {
        dra_pod *p = ARENA_NEW(d->a, dra_pod);
        if (!dra__decode_pod(d, obj, p, e)) return false;
        *out = p;
        return true;
    }
    default:
        return true;
    }
}

