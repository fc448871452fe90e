/* podplan.c — the pod plan: one Pod on one node (podplan.h): ingest of the Pod, Node and claim
 * fields scheduling reads, the pod's claims and PodGroup claims resolved once per
 * pod (dra__podplan_init), then per node the device-plugin count check, the implicit
 * extended-resource claim and one allocation of everything still unallocated
 * (dra__podplan_try). Nothing here writes the world. */
#include "engine/pod/podplan.h"

#include "base/hash.h"
#include "engine/decode/decode_util.h"
#include "engine/alloc/classes.h"
#include "engine/alloc/explain.h"
#include "engine/pod/nodefit.h"
#include "engine/world/podgroup.h"
#include "engine/world/world.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- pod resources ------------------------------------------------------------------ */

static int find_name(const char *const *v, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(v[i], name)) return (int)i;
    return -1;
}

static int cmp_res_count(const void *a, const void *b) {
    return strcmp(((const dra_res_count *)a)->name, ((const dra_res_count *)b)->name);
}

bool dra__node_allocatable(const dra_node *n, const char *res, int64_t *out) {
    if (!n || !n->nallocatable) return false;
    dra_res_count key = {.name = res};
    const dra_res_count *r = bsearch(&key, n->allocatable, n->nallocatable, sizeof key, cmp_res_count);
    if (!r) return false;
    *out = r->value;
    return true;
}

/* ---- lookups ---------------------------------------------------------------------------- */

const dra_pod *dra_extres_find_pod(const dra_world *w, const char *ns, const char *name) {
    return dra__world_find_pod(w, ns, name);
}

/* The DeviceClass backing an extended resource: the class named by the
 * deviceclass.resource.kubernetes.io/ form, else the class whose extendedResourceName
 * is the name. Several such classes: as Kubernetes documents the field, the one
 * created later wins, and among classes created at the same time the name sorted
 * first (RFC 3339 UTC timestamps compare as text; a class without one counts as
 * oldest). */
static const dra_class *class_for(const dra_world *w, const char *res) {
    if (!strncmp(res, DRA_DC_PREFIX, strlen(DRA_DC_PREFIX))) return dra__world_find_class(w, res + strlen(DRA_DC_PREFIX));
    const dra_class *best = NULL;
    for (size_t i = 0; i < w->classes.n; i++) {
        const dra_class *c = w->classes.v[i];
        if (!c->extended_resource_name || strcmp(c->extended_resource_name, res)) continue;
        int t = best ? strcmp(c->creation_timestamp ? c->creation_timestamp : "",
                              best->creation_timestamp ? best->creation_timestamp : "")
                     : 1;
        if (t > 0 || (t == 0 && strcmp(c->name, best->name) < 0)) best = c;
    }
    return best;
}

const dra_claim *dra__extres_resolve_claim(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc) {
    const dra_claim *c = NULL;
    if (pc->claim_name) c = dra_world_find_claim(w, pod->ns, pc->claim_name);
    else if (pc->generated_name) c = dra_world_find_claim(w, pod->ns, pc->generated_name);
    if (!c && pc->template_name) {
        const dra_claim_template *t = dra_world_find_template(w, pod->ns, pc->template_name);
        if (t) c = dra__claim_instantiate(a, t, pod->ns, arena_printf(a, "%s-%s", pod->name, pc->name ? pc->name : "claim"));
    }
    return c;
}

const char *dra__extres_missing_claim(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc) {
    /* a template entry resolves to its generated claim, else a claim made from the
     * template: only a missing template leaves it unresolved */
    if (!pc->claim_name && pc->template_name)
        return dra__world_not_found(w, a, DRA_KIND_TEMPLATE, pod->ns, pc->template_name);
    return dra__world_not_found(w, a, DRA_KIND_CLAIM, pod->ns, pc->claim_name ? pc->claim_name : "");
}

const char *dra_extres_pod_claim_missing(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc) {
    return dra__extres_missing_claim(w, a, pod, pc);
}

const dra_claim *dra_extres_pod_claim(const dra_world *w, arena *a, const dra_pod *pod, const dra_pod_claim *pc) {
    return dra__extres_resolve_claim(w, a, pod, pc);
}

/* ---- the plan ----------------------------------------------------------------------------- */

void dra__podplan_init(dra_podplan *pp, const dra_world *w, const dra_features *f, const dra_pod *pod, arena *a) {
    memset(pp, 0, sizeof *pp);
    pp->w = w;
    pp->f = f;
    pp->pod = pod;
    pp->pns = dra_ns(pod->ns);
    pp->classify = true;
    if (pod->res_error) {
        pp->error = arena_printf(a, "Pod %s/%s: %s", pp->pns, pod->name, pod->res_error);
        return;
    }
    pp->res = pod->res;
    uint32_t nres = pp->res ? pp->res->n : 0;
    pp->cls = ARENA_NEWN(a, const dra_class *, nres ? nres : 1);
    for (uint32_t r = 0; r < nres; r++) {
        pp->cls[r] = f->extended_resource ? class_for(w, pp->res->names[r]) : NULL;
        if (pp->cls[r] && pp->res->total[r] > 0) pp->needs_dra = true;
    }
    if (pod->nclaims) pp->needs_dra = true;
    pp->claims = ARENA_NEWN(a, const dra_claim *, pod->nclaims ? pod->nclaims : 1);
    const char *gname = f->workload_claims ? pod->group_name : NULL;
    pp->group = gname ? dra__podgroup_find(w, pod->ns, gname) : NULL;
    if (gname && !pp->group) {
        pp->unresolvable = arena_printf(a, "Pod %s/%s: PodGroup %s/%s not found", pp->pns, pod->name, pp->pns, gname);
        return;
    }
    for (uint32_t k = 0; k < pod->nclaims; k++) {
        const dra_pod_claim *pc = &pod->claims[k];
        const dra_claim *c = NULL;
        if (pp->group && dra__podgroup_claim(w, a, pp->group, pc, &c)) {
            if (!c) {
                pp->unresolvable = arena_printf(a, "Pod %s/%s: claim %s of PodGroup %s/%s: %s", pp->pns, pod->name,
                                                pc->name ? pc->name : "?", pp->pns, gname,
                                                dra__podgroup_missing_claim(w, a, pp->group, pc));
                return;
            }
        } else if (!(c = dra__extres_resolve_claim(w, a, pod, pc))) {
            pp->unresolvable = arena_printf(a, "Pod %s/%s: claim %s: %s", pp->pns, pod->name, pc->name ? pc->name : "?",
                                            dra__extres_missing_claim(w, a, pod, pc));
            return;
        }
        pp->claims[k] = c;
    }
    /* the classes of the requests, once for every node the pod is tried on */
    uint32_t n = 0;
    for (uint32_t k = 0; k < pod->nclaims; k++)
        for (uint32_t r = 0; r < pp->claims[k]->nreqs; r++) n += 1 + pp->claims[k]->reqs[r].nsubs;
    pp->hint_specs = ARENA_NEWN(a, const dra_request_spec *, n ? n : 1);
    pp->hint_cls = ARENA_NEWN(a, const dra_class *, n ? n : 1);
    for (uint32_t k = 0; k < pod->nclaims; k++)
        for (uint32_t r = 0; r < pp->claims[k]->nreqs; r++) {
            const dra_request *q = &pp->claims[k]->reqs[r];
            for (uint32_t i = 0; i <= q->nsubs; i++) {
                const dra_request_spec *sp = i < q->nsubs ? &q->subs[i] : &q->exactly;
                if (i == q->nsubs && !q->has_exactly) continue;
                if (!sp->class_name || !*sp->class_name) continue;
                pp->hint_specs[pp->nhint] = sp;
                pp->hint_cls[pp->nhint++] = dra__world_find_class(w, sp->class_name);
            }
        }
}

static void reason(dra_podnode *out, bool unresolvable, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reason(dra_podnode *out, bool unresolvable, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    out->status = DRA_ALLOC_UNSAT;
    out->unresolvable = unresolvable;
}

typedef struct implicit_req {
    const char *name;
    const dra_class *cls;
    int64_t count;
    const char *container, *resource;
} implicit_req;

static int cmp_implicit(const void *a, const void *b) {
    return strcmp(((const implicit_req *)a)->name, ((const implicit_req *)b)->name);
}

/* The implicit claim with one ExactCount request per container and resource served
 * by DRA on this node (dra[r]); NULL when there is none. */
static dra_claim *implicit_claim(const dra_podplan *pp, const bool *dra, arena *a, json_t **mappings) {
    const dra_podres *p = pp->res;
    uint32_t cap = p->n;   /* init excess requests */
    for (uint32_t i = 0; i < p->nc; i++) cap += p->c[i].nres;
    implicit_req *rq = ARENA_NEWN(a, implicit_req, cap ? cap : 1);
    uint32_t nr = 0;
    for (uint32_t i = 0; i < p->nc; i++) {
        const dra_podres_cont *k = &p->c[i];
        for (uint32_t j = 0; j < k->nkeys; j++) {
            int r = find_name(p->names, p->n, k->keys[j]);
            if (r < 0 || !dra[r]) continue;
            int64_t count = k->init && !k->sidecar ? (p->peak_at[r] == i ? p->peak[r] - p->steady[r] : 0)
                                                   : dra_podres_cont_count(k, k->keys[j]);
            if (count <= 0) continue;
            rq[nr++] = (implicit_req){arena_printf(a, "container-%u-request-%u", i, j), pp->cls[r], count,
                                      k->name ? k->name : "", k->keys[j]};
        }
    }
    if (!nr) return NULL;
    qsort(rq, nr, sizeof *rq, cmp_implicit);
    /* status.extendedResourceClaimStatus.requestMappings, in request order */
    *mappings = json_array();
    for (uint32_t i = 0; i < nr; i++)
        json_array_append_new(*mappings, json_pack("{s:s, s:s, s:s}", "containerName", rq[i].container, "resourceName",
                                                   rq[i].resource, "requestName", rq[i].name));
    dra_request *reqs = ARENA_NEWN(a, dra_request, nr);
    for (uint32_t i = 0; i < nr; i++) {
        dra_request *q = &reqs[i];
        q->name = rq[i].name;
        q->has_exactly = true;
        q->exactly.name = q->name;
        q->exactly.class_name = rq[i].cls->name;
        q->exactly.mode = "ExactCount";
        q->exactly.count = rq[i].count;
        q->exactly.has_count = true;
        q->exactly.admin_access = -1;
    }
    dra_claim *c = ARENA_NEW(a, dra_claim);
    c->ns = pp->pod->ns;
    c->name = arena_printf(a, "%s-extended-resources", pp->pod->name);
    c->has_spec = true;
    c->reqs = reqs;
    c->nreqs = nr;
    return c;
}

void dra__podplan_try(const dra_podplan *pp, const dra_node *node, const dra_nodeview *view, const dra_allocated *st,
                     dra_alloc_ctx *x, arena *a, dra_podnode *out) {
    memset(out, 0, sizeof *out);
    const dra_pod *pod = pp->pod;
    if (pp->error) {
        snprintf(out->reason, sizeof out->reason, "%s", pp->error);
        out->status = DRA_ALLOC_ERROR;
        return;
    }
    if (pp->unresolvable) return reason(out, true, "%s", pp->unresolvable);
    /* extended resources: a device plugin on this node (allocatable > 0), else DRA */
    uint32_t nres = pp->res ? pp->res->n : 0;
    bool *dra = ARENA_NEWN(a, bool, nres ? nres : 1);
    for (uint32_t r = 0; r < nres; r++) {
        const char *res = pp->res->names[r];
        int64_t total = pp->res->total[r], alloc = 0;
        if (total == 0) continue;
        bool has = dra__node_allocatable(node, res, &alloc);
        if (has && alloc > 0) {
            dra_node_usage u;
            dra__node_usage(pp->w, node, pod, res, &u);
            int64_t used = u.ext;
            if (!out->device_plugin) out->device_plugin = json_object();
            json_t *o = json_object();
            json_object_set_new(o, "allocatable", json_integer(alloc));
            json_object_set_new(o, "inUse", json_integer(used));
            json_object_set_new(o, "requested", json_integer(total));
            json_object_set_new(out->device_plugin, res, o);
            if (alloc - used < total)
                return reason(out, total > alloc, "Insufficient %s: node %s has %lld allocatable, %lld in use, pod requests %lld",
                              res, node->name, (long long)alloc, (long long)used, (long long)total);
            continue;
        }
        if (pp->cls[r]) {
            dra[r] = true;
            continue;
        }
        if (!strncmp(res, DRA_DC_PREFIX, strlen(DRA_DC_PREFIX)))
            return reason(out, true, "Insufficient %s: no DeviceClass %s and no device plugin on node %s", res,
                          res + strlen(DRA_DC_PREFIX), node->name);
        return reason(out, true,
                      "Insufficient %s: no device plugin on node %s and no DeviceClass with extendedResourceName %s%s",
                      res, node->name, res, pp->f->extended_resource ? "" : " (DRAExtendedResource is disabled)");
    }
    /* the pod's claims: allocated ones restrict the node, the others are allocated here */
    out->todo = ARENA_NEWN(a, const dra_claim *, pod->nclaims + 1);
    for (uint32_t k = 0; k < pod->nclaims; k++) {
        const dra_claim *c = pp->claims[k];
        if (c->allocated) {
            bool m = true;
            err e;
            err_clear(&e);
            if (c->alloc_node_selector_error)
                return reason(out, true, "ResourceClaim %s/%s: status.allocation.nodeSelector: %s",
                              dra_ns(c->ns), c->name, c->alloc_node_selector_error);
            if (c->alloc_node_selector && (!dra__node_matches(node, NULL, false, c->alloc_node_selector, &m, &e) || !m))
                return reason(out, true, "ResourceClaim %s/%s is allocated for other nodes than %s",
                              dra_ns(c->ns), c->name, node->name);
            continue;
        }
        bool dup = false;
        for (size_t i = 0; i < out->ntodo; i++) dup |= out->todo[i] == c;
        if (!dup) out->todo[out->ntodo++] = c;
    }
    out->nown = out->ntodo;
    const dra_claim *imp = nres ? implicit_claim(pp, dra, a, &out->request_mappings) : NULL;
    if (imp) out->todo[out->ntodo++] = imp;
    if (!out->ntodo) return;   /* DRA_ALLOC_OK: nothing to allocate */
    if (!view) return reason(out, false, "no node view for %s", node->name);
    err ae;
    err_clear(&ae);
    /* the hint is the pod request's memory: set for this call only */
    dra__alloc_class_hint(x, pp->w, pp->hint_specs, pp->hint_cls, pp->nhint);
    dra_alloc_status s = dra_allocate(x, view, st, out->todo, out->ntodo, &out->res, &ae);
    dra__alloc_class_hint(x, NULL, NULL, NULL, 0);
    out->status = s;
    switch (s) {
    case DRA_ALLOC_OK:
        return;
    case DRA_ALLOC_UNSAT: {
        /* the explanation only where someone reads it (dra_alloc_ctx_set_reasons) */
        if (dra_alloc_ctx_reasons(x)) {
            /* "cannot allocate all claims: %.480s", without the formatter (every node
             * that does not fit writes it) */
            static const char pre[] = "cannot allocate all claims: ";
            char why[sizeof out->reason];
            size_t n = dra__explain_short(x, why, sizeof why);
            if (n > 480) n = 480;
            memcpy(out->reason, pre, sizeof pre - 1);
            memcpy(out->reason + sizeof pre - 1, why, n);
            out->reason[sizeof pre - 1 + n] = '\0';
        }
        if (pp->explain) {
            char *text = arena_alloc(a, 16384);
            dra_alloc_explain(x, text, 16384);
            out->explanation = text;
        }
        /* Unresolvable when no change in usage could help: it fails with nothing in use. */
        if (st && pp->classify) {
            err e2;
            err_clear(&e2);
            dra__alloc_carry_selectors(x);   /* the same node and claims: the selectors answered already */
            dra__alloc_class_hint(x, pp->w, pp->hint_specs, pp->hint_cls, pp->nhint);
            dra_alloc_status s2 = dra_allocate(x, view, NULL, out->todo, out->ntodo, NULL, &e2);
            dra__alloc_class_hint(x, NULL, NULL, NULL, 0);
            out->unresolvable = s2 == DRA_ALLOC_UNSAT;
        } else {
            out->unresolvable = !st;
        }
        out->res = NULL;
        return;
    }
    case DRA_ALLOC_NODE_ERROR: {
        /* which pools and why, after Kubernetes' text */
        char why[sizeof out->reason];
        dra__explain_pools(x, why, sizeof why);
        snprintf(out->reason, sizeof out->reason, "%.100s%s%.400s", ae.msg, why[0] ? ": " : "", why);
        return;
    }
    case DRA_ALLOC_ERROR:
    case DRA_ALLOC_TIMEOUT:
        snprintf(out->reason, sizeof out->reason, "%.500s", ae.msg);
        return;
    }
}

/* ---- the CLI's and the pod cases' entry --------------------------------------------------- */

static json_t *outcome_unsat(const char *msg) {
    json_t *o = json_object();
    json_object_set_new(o, "unsatisfiable", json_true());
    json_object_set_new(o, "reason", json_string(msg));
    return o;
}

static json_t *outcome_error(const char *msg) {
    json_t *o = json_object();
    json_object_set_new(o, "error", json_string(msg));
    return o;
}

json_t *dra__claim_spec_json(const dra_claim *c) {
    json_t *reqs = json_array();
    for (uint32_t i = 0; i < c->nreqs; i++) {
        const dra_request_spec *s = &c->reqs[i].exactly;
        json_array_append_new(reqs, json_pack("{s:s, s:{s:s, s:s, s:I}}", "name", c->reqs[i].name, "exactly",
                                              "deviceClassName", s->class_name, "allocationMode", s->mode, "count",
                                              (json_int_t)s->count));
    }
    return json_pack("{s:{s:o}}", "devices", "requests", reqs);
}

static json_t *claim_object(const dra_claim *c, bool implicit, const dra_alloc_result *r) {
    json_t *o = NULL;
    if (!implicit) o = dra_claim_object(c);
    if (!o) {
        json_t *m;
        o = dra_claim_json_new(c, &m);
        if (implicit) {
            json_t *an = json_object();
            json_object_set_new(an, "resource.kubernetes.io/extended-resource-claim", json_string("true"));
            json_object_set_new(m, "annotations", an);
        }
        json_t *spec = NULL;
        if (c->raw_json && !implicit) spec = json_loads(c->raw_json, 0, NULL);
        if (!spec) spec = dra__claim_spec_json(c);
        json_object_set_new(o, "spec", spec);
    }
    dra_claim_json_set_allocation(o, r);
    return o;
}

/* The entry of the pod a claim to allocate stands for (the first, when several name it). */
static uint32_t entry_of(const dra_podplan *pp, const dra_claim *c) {
    uint32_t k = 0;
    while (k < pp->pod->nclaims && pp->claims[k] != c) k++;
    return k;
}

/* The pod's claims allocated already (shared, or a PodGroup's): each named once in
 * reused, and as the API server would return it with the pod added to its reservedFor
 * in reused_claims. */
static void reused_claims_of(const dra_podplan *pp, const dra_world *w, const dra_pod *pod, dra_pod_binding *b,
                             const json_t *group, arena *a, json_t *reused, json_t *reused_claims) {
    for (uint32_t k = 0; k < pod->nclaims; k++) {
        const dra_claim *c = pp->claims[k];
        if (!c->allocated) continue;
        char ref[600];
        snprintf(ref, sizeof ref, "%s/%s", dra_ns(c->ns), c->name);
        bool seen = false;
        for (size_t i = 0; i < json_array_size(reused); i++)
            seen |= !strcmp(json_string_value(json_array_get(reused, i)), ref);
        if (seen) continue;
        json_array_append_new(reused, json_string(ref));
        /* an allocated claim gets the pod appended to its reservedFor */
        json_t *o = dra_claim_object(c);
        if (!o) continue;
        json_t *m = json_object_get(o, "metadata");
        if (json_is_object(m) && !json_string_length(json_object_get(m, "namespace")))
            json_object_set_new(m, "namespace", json_string(pp->pns));
        const dra_claim *gc;
        if (pp->group && dra__podgroup_claim(w, a, pp->group, &pod->claims[k], &gc))
            dra_pod_binding_reserve_for(b, o, false, group);
        else dra_pod_binding_reserve(b, o, false);
        dra_claim_json_normalize(o);
        json_array_append_new(reused_claims, o);
    }
}

json_t *dra_pod_allocate(const dra_world *w, const dra_pod *pod, const dra_node *node, const dra_features *f,
                         dra_allocated *st, dra_alloc_ctx *xin, const char *now) {
    arena a;
    arena_init(&a, 0);
    dra_podplan pp;
    dra__podplan_init(&pp, w, f, pod, &a);
    pp.explain = true;
    err e;
    err_clear(&e);
    dra_nodeview *v = NULL;
    json_t *out = NULL;
    if (!pp.error && !pp.unresolvable) {
        v = dra_nodeview_new(w, node, f, &e);
        if (!v) {
            out = outcome_unsat(e.msg);
            goto done;
        }
    }
    /* the whole pod, as kube-scheduler's other Filter plugins see it */
    {
        if (pod->fit_error) {
            out = outcome_error(pod->fit_error);
            goto done;
        }
        dra_node_usage u;
        dra__node_usage(w, node, pod, NULL, &u);
        char why[512];
        bool unres;
        if (!dra__nodefit_check(pod, node, &u, why, sizeof why, &unres)) {
            char msg[700];
            snprintf(msg, sizeof msg, "Pod %s/%s on node %s: %s", pp.pns, pod->name, node->name, why);
            out = outcome_unsat(msg);
            goto done;
        }
    }
    dra_alloc_ctx *x = xin ? xin : dra_alloc_ctx_new();
    dra_podnode pn;
    dra__podplan_try(&pp, node, v, st, x, &a, &pn);
    if (pn.status == DRA_ALLOC_OK) {
        /* the claims as the control plane leaves them once the pod is bound
         * (result_encode.c): generated names, owner, finalizer, reservedFor */
        char clock[32];
        dra_pod_binding b;
        dra_pod_binding_init(&b, w, pod, x, f->binding_conditions ? (now ? now : dra_rfc3339_utc(-1, clock)) : NULL,
                             NULL);
        json_t *claims = json_array(), *allocs = json_array(), *reused = json_array(), *reused_claims = json_array();
        json_t *ers = NULL, *group = NULL;
        if (pp.group) {
            /* KEP-5729: a PodGroup's claim is reserved for the group as a whole */
            char guid[37];
            const char *u = dra__podgroup_uid(pp.group);
            if (!u || !*u) dra_alloc_ctx_uuid(x, guid), u = guid;   /* as the API server would give it */
            group = json_pack("{s:s, s:s, s:s, s:s}", "apiGroup", "scheduling.k8s.io", "resource", "podgroups", "name",
                              pod->group_name, "uid", u);
        }
        for (size_t i = 0; i < pn.ntodo; i++) {
            const dra_claim *c = pn.todo[i];
            json_t *o = claim_object(c, i >= pn.nown, &pn.res[i]);
            bool of_group = false;
            if (i >= pn.nown) {
                const char *name = dra_pod_binding_implicit(&b, o);
                /* what the scheduler writes into the pod for the implicit claim (KEP-5004) */
                if (pn.request_mappings)
                    ers = json_pack("{s:O, s:s}", "requestMappings", pn.request_mappings, "resourceClaimName", name);
            } else {
                const dra_pod_claim *pc = &pod->claims[entry_of(&pp, c)];
                const dra_claim *gc;
                /* a PodGroup's claim is the PodGroup's, named by its controller */
                of_group = pp.group && dra__podgroup_claim(w, &a, pp.group, pc, &gc);
                if (c->from_template && !of_group)
                    dra_pod_binding_generated(&b, o, pc->name ? pc->name : "",
                                              pc->template_name ? dra_world_find_template(w, pod->ns, pc->template_name)
                                                                : NULL);
            }
            if (of_group) dra_pod_binding_reserve_for(&b, o, true, group);
            else dra_pod_binding_reserve(&b, o, true);
            dra_claim_json_normalize(o);
            json_array_append_new(claims, o);
            json_array_append_new(allocs, dra_alloc_result_to_json(&pn.res[i]));
            /* the world's claims outlive st and are named in later explanations; claims
             * made here (templates, the implicit one) die with this call */
            const dra_claim *held = i < pn.nown && !pn.todo[i]->from_template ? pn.todo[i] : NULL;
            if (st) dra_allocated_add_result_of(st, &pn.res[i], held, f->consumable_capacity);
        }
        reused_claims_of(&pp, w, pod, &b, group, &a, reused, reused_claims);
        json_decref(group);
        out = json_object();
        if (ers) json_object_set_new(out, "podStatus", json_pack("{s:O}", "extendedResourceClaimStatus", ers));
        /* the pod itself when the control plane wrote into its status */
        if (ers || b.generated) json_object_set_new(out, "pod", dra_pod_binding_pod(&b, ers));
        json_decref(ers);
        json_object_set_new(out, "claims", claims);
        json_object_set_new(out, "allocations", allocs);
        json_object_set_new(out, "reused", reused);
        json_object_set_new(out, "reusedClaims", reused_claims);
        json_object_set_new(out, "devicePlugin", pn.device_plugin ? pn.device_plugin : json_object());
        pn.device_plugin = NULL;
        dra_pod_binding_free(&b);
    } else if (pn.status == DRA_ALLOC_ERROR || pn.status == DRA_ALLOC_TIMEOUT) {
        /* a timeout is an Error, so the pod is retried (kubernetes#137607) */
        out = outcome_error(pn.reason);
    } else {
        out = outcome_unsat(pn.reason);
        if (pn.explanation) json_object_set_new(out, "explanation", json_string(pn.explanation));
    }
    json_decref(pn.device_plugin);
    json_decref(pn.request_mappings);
    if (x != xin) dra_alloc_ctx_free(x);
done:
    dra_nodeview_free(v);
    arena_free(&a);
    return out;
}
