/* podgroup.c — PodGroup decoding and the group-claim rule of podgroup.h. */
#include "engine/world/podgroup.h"

#include "engine/decode/decode_util.h"
#include "engine/world/world.h"

#include <stdio.h>
#include <string.h>

typedef struct dra_podgroup {
    const char *ns, *name;
    const char *uid;         /* metadata.uid, or NULL */
    dra_pod_claim *claims;   /* spec.resourceClaims; generated_name from status */
    uint32_t nclaims;
} dra_podgroup;

static bool str_eq0(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* One entry of a PodGroup's spec.resourceClaims, with the rules the API server
 * checks on it. */
static bool group_claim(dctx *c, const json_t *pc, void *elem, void *ud) {
    dra_pod_claim *x = elem;
    if (!dra__ddecode_claim_ref(c, pc, elem, ud)) return false;
    if (!x->name || !*x->name) return dra__dfail(c, "name: Required value");
    if (!x->claim_name == !x->template_name)
        return dra__dfail(c, "exactly one of resourceClaimName and resourceClaimTemplateName must be set");
    return true;
}

bool dra__podgroup_add(dra_rules *w, const json_t *obj, err *e) {
    dctx c;
    dra__dctx_init(&c, &w->dec, e, "PodGroup", obj);
    dra_podgroup *g = ARENA_NEW(&w->mem, dra_podgroup);
    const json_t *meta, *spec, *status;
    if (!dra__dget_obj(&c, obj, "metadata", &meta)) return false;
    if (meta && (!dra__dget_str(&c, meta, "namespace", &g->ns) || !dra__dget_str(&c, meta, "name", &g->name))) return false;
    if (!g->name) g->name = "";
    if (meta && !dra__dget_str(&c, meta, "uid", &g->uid)) return false;
    if (!dra__dget_obj(&c, obj, "spec", &spec) || !dra__dget_obj(&c, obj, "status", &status)) return false;
    if (spec) {
        size_t m = dra__dpush_key(&c, "spec");
        if (!DRA_DGET_OBJS(&c, spec, "resourceClaims", &g->claims, &g->nclaims, group_claim, NULL)) return false;
        dpop(&c, m);
    }
    if (status && !dra__ddecode_claim_statuses(&c, status, g->claims, g->nclaims)) return false;
    DRA_VEC_PUSH(w->podgroups, g);
    return true;
}

const char *dra__podgroup_uid(const dra_podgroup *g) { return g->uid; }

const dra_podgroup *dra__podgroup_find(const dra_world *w, const char *ns, const char *name) {
    for (size_t i = 0; w->rules && i < w->rules->podgroups.n; i++) {
        const dra_podgroup *g = w->rules->podgroups.v[i];
        const char *gns = dra_ns(g->ns), *pns = dra_ns(ns);
        if (!strcmp(g->name, name) && !strcmp(gns, pns)) return g;
    }
    return NULL;
}

/* The group's entry that the pod's claim entry is, or NULL. */
static const dra_pod_claim *group_entry(const dra_podgroup *g, const dra_pod_claim *pc) {
    for (uint32_t i = 0; i < g->nclaims; i++) {
        const dra_pod_claim *gc = &g->claims[i];
        if (str_eq0(gc->name, pc->name) && str_eq0(gc->claim_name, pc->claim_name) &&
            str_eq0(gc->template_name, pc->template_name))
            return gc;
    }
    return NULL;
}

const char *dra__podgroup_missing_claim(const dra_world *w, arena *a, const dra_podgroup *g, const dra_pod_claim *pc) {
    const dra_pod_claim *gc = group_entry(g, pc);
    if (!gc) gc = pc;
    if (gc->claim_name) return dra__world_not_found(w, a, DRA_KIND_CLAIM, g->ns, gc->claim_name);
    if (gc->generated_name) return dra__world_not_found(w, a, DRA_KIND_CLAIM, g->ns, gc->generated_name);
    return dra__world_not_found(w, a, DRA_KIND_TEMPLATE, g->ns, gc->template_name ? gc->template_name : "");
}

bool dra__podgroup_claim(const dra_world *w, arena *a, const dra_podgroup *g, const dra_pod_claim *pc,
                        const dra_claim **claim) {
    *claim = NULL;
    const dra_pod_claim *gc = group_entry(g, pc);
    if (!gc) return false;
    if (gc->claim_name) {
        *claim = dra_world_find_claim(w, g->ns, gc->claim_name);
        return true;
    }
    char nm[512];
    snprintf(nm, sizeof nm, "%s-%s", g->name, gc->name);
    *claim = dra_world_find_claim(w, g->ns, gc->generated_name ? gc->generated_name : nm);
    if (*claim || gc->generated_name) return true;   /* named in status but missing: not found */
    const dra_claim_template *t = dra_world_find_template(w, g->ns, gc->template_name);
    if (t) *claim = dra__claim_instantiate(a, t, g->ns, nm);
    return true;
}
