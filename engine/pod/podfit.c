/* podfit.c — one Pod against a snapshot (snapshot.h): the pod decoded and its claims
 * resolved once per request (dra_pod_request_new), then each node decided on its
 * own (dra_pod_fit) with the snapshot's shared node view and in-use set, and scored.
 *
 * Scores (0..10, kube-scheduler's MaxExtenderPriority) use the allocation the node
 * would get under first-fit (a best-fit context chooses devices only for the
 * allocations that are kept: /bind, plan's commits). A node's utilisation after
 * placing the pod is the device-weighted mean over its complete, valid pools of
 *   - for a pool with shared counters (partitionable devices: MIG, GPU slices):
 *     counters consumed / counters available, summed over every counter of every
 *     counter set — a GPU partly carved counts as partly used;
 *   - otherwise: devices in use / devices.
 * binpack = round(10 × utilisation): nodes already partly used first, so whole GPUs,
 * whole counter sets and whole nodes stay free for large claims; spread =
 * round(10 × (1 − utilisation)). A node where the pod needs no device scores by its
 * utilisation as it is. */
#include "engine/snapshot.h"

#include "engine/pod/podplan.h"
#include "engine/pod/nodefit.h"
#include "engine/world/podgroup.h"
#include "engine/store/store_internal.h"
#include "engine/world/world.h"

#include "base/hash.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dra_pod_request {
    dra_snapshot *s;
    arena a;
    dra_pod pod;
    dra_podplan pp;
    bool check_node;         /* dra_pod_request_check_node */
    /* the fit memo: what the pod needs, without names; names[0] is the pod, then its
     * claims in entry order (the reason texts' names) */
    bool memo;
    uint64_t sig;
    const char **names;
    size_t nnames;
    dra_holds holds;         /* what decoding the pod interned, given back with it */
};

/* The pod's needs as a hash, when its answers can be shared (snapshot.h, "The fit
 * memo", says what an answer reads and why this is all of it):
 *   - the number of entries, then each entry in order: an entry naming the same claim
 *     as an earlier one by that entry's index (one claim is allocated once, however
 *     many entries name it); an allocated claim by its store identity (its devices are
 *     its own); an unallocated claim by its spec, and whether it is still a template;
 *   - the containers' resources, when extended resources are involved;
 *   - the pod's identity (namespace/name and UID), when a pod of its namespace/name
 *     is bound in the snapshot: the device-plugin count leaves that pod out only when
 *     it is this pod (dra__pod_same).
 * Not for pods with a PodGroup, an unresolved claim or a claim whose spec is unknown. */
static void signature(dra_pod_request *pr, const json_t *pod) {
    const dra_podplan *pp = &pr->pp;
    if (pp->error || pp->unresolvable || pp->group || !pp->needs_dra) return;
    uint64_t h = hash_u64(pr->pod.nclaims + 0x9E3779B97F4A7C15ull);
    pr->names = ARENA_NEWN(&pr->a, const char *, pr->pod.nclaims + 2);
    pr->names[pr->nnames++] = arena_printf(&pr->a, "%s/%s", pp->pns, pr->pod.name);
    /* the implicit claim of extended resources is the pod's too (podplan.c names it) */
    if (pr->pod.res) pr->names[pr->nnames++] = arena_printf(&pr->a, "%s/%s-extended-resources", pp->pns, pr->pod.name);
    for (uint32_t k = 0; k < pr->pod.nclaims; k++) {
        const dra_claim *c = pp->claims[k];
        uint32_t first = 0;   /* claims resolve to the world's objects: one claim, one address */
        while (first < k && pp->claims[first] != c) first++;
        uint64_t part;
        if (first < k) part = hash_u64(first + 0xA11A5ull);
        else if (c->allocated) part = c->store_seq ? hash_u64(c->store_seq) ^ 0xB : hash_u64((uint64_t)(uintptr_t)c) ^ 0xA;
        else if (!c->spec_hash) return;
        else part = c->spec_hash ^ (c->from_template ? 0x7 : 0xC);
        h = hash_u64(h ^ part);
        pr->names[pr->nnames++] = arena_printf(&pr->a, "%s/%s", dra_ns(c->ns), c->name);
    }
    if (pr->pod.res) {
        const json_t *spec = json_object_get(pod, "spec");
        json_t *conts = json_pack("[O?, O?]", json_object_get(spec, "initContainers"), json_object_get(spec, "containers"));
        char *t = json_dumps(conts, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(conts);
        h = hash_u64(h ^ (t ? hash_bytes(t, strlen(t)) : 0));
        free(t);
    }
    /* the pod's identity: namespace/name and UID (names[0] is "ns/name") */
    const dra_pod *twin = dra__world_find_pod(pp->w, pp->pns, pr->pod.name);
    if (twin && twin->node_name && !twin->terminated) {
        h = hash_u64(h ^ hash_bytes(pr->names[0], strlen(pr->names[0])) ^ 0x7331ull);
        h = hash_u64(h ^ (pr->pod.uid ? hash_bytes(pr->pod.uid, strlen(pr->pod.uid)) : 0x0DDull));
    }
    pr->sig = h;
    pr->memo = true;
}

dra_pod_request *dra_pod_request_new(dra_snapshot *s, const json_t *pod, err *e) {
    if (!json_is_object(pod)) {
        err_set(e, "Pod: expected an object");
        return NULL;
    }
    dra_pod_request *pr = xcalloc(1, sizeof *pr);
    arena_init(&pr->a, 8192);
    dra_decoder d = {.a = &pr->a, .cat = dra__snapshot_catalog(s), .holds = &pr->holds, .apply_defaults = true};
    if (!dra__decode_pod(&d, pod, &pr->pod, e)) {
        dra__holds_release(&pr->holds, d.cat);
        arena_free(&pr->a);
        free(pr);
        return NULL;
    }
    pr->s = dra_snapshot_retain(s);
    dra__podplan_init(&pr->pp, dra__snapshot_world(s), dra__snapshot_features(s), &pr->pod, &pr->a);
    signature(pr, pod);
    return pr;
}

void dra_pod_request_free(dra_pod_request *pr) {
    if (!pr) return;
    dra__holds_release(&pr->holds, dra__snapshot_catalog(pr->s));
    dra_snapshot_release(pr->s);
    arena_free(&pr->a);
    free(pr);
}

bool dra_pod_request_needs_dra(const dra_pod_request *pr) { return pr->pp.error || pr->pp.needs_dra; }
void dra_pod_request_check_node(dra_pod_request *pr, bool on) { pr->check_node = on; }

const char *dra_pod_request_uncreated_claim(const dra_pod_request *pr) {
    for (uint32_t k = 0; pr->pp.claims && !pr->pp.unresolvable && !pr->pp.error && k < pr->pod.nclaims; k++) {
        const dra_claim *c = pr->pp.claims[k];
        if (c && c->from_template)
            return arena_printf((arena *)&pr->a, "ResourceClaim for entry %s of Pod %s/%s (template %s) is not created yet",
                                pr->pod.claims[k].name ? pr->pod.claims[k].name : "?", pr->pp.pns, pr->pod.name,
                                pr->pod.claims[k].template_name ? pr->pod.claims[k].template_name : "?");
    }
    return NULL;
}
const char *dra_pod_request_error(const dra_pod_request *pr) { return pr->pp.error; }

json_t *dra_pod_request_classes(const dra_pod_request *pr) {
    json_t *out = json_object();
    const dra_podplan *pp = &pr->pp;
    for (uint32_t k = 0; pp->claims && !pp->error && !pp->unresolvable && k < pr->pod.nclaims; k++) {
        const dra_claim *c = pp->claims[k];
        for (uint32_t r = 0; c && r < c->nreqs; r++) {
            const dra_request *q = &c->reqs[r];
            if (q->has_exactly && q->exactly.class_name) json_object_set_new(out, q->exactly.class_name, json_true());
            for (uint32_t i = 0; i < q->nsubs; i++)
                if (q->subs[i].class_name) json_object_set_new(out, q->subs[i].class_name, json_true());
        }
    }
    for (uint32_t r = 0; pp->res && pp->cls && r < pp->res->n; r++)
        if (pp->cls[r]) json_object_set_new(out, pp->cls[r]->name, json_true());
    return out;
}

const char *dra_fit_status_name(dra_fit_status s) {
    switch (s) {
    case DRA_FIT_OK: return "fit";
    case DRA_FIT_UNSCHEDULABLE: return "unschedulable";
    case DRA_FIT_UNRESOLVABLE: return "unresolvable";
    case DRA_FIT_TIMEOUT: return "timeout";
    case DRA_FIT_ERROR: return "error";
    }
    return "?";
}

bool dra_score_mode_parse(const char *s, dra_score_mode *out) {
    if (!strcmp(s, "binpack")) *out = DRA_SCORE_BINPACK;
    else if (!strcmp(s, "spread")) *out = DRA_SCORE_SPREAD;
    else if (!strcmp(s, "none")) *out = DRA_SCORE_NONE;
    else return false;
    return true;
}

/* ---- scoring ------------------------------------------------------------------------------ */

static bool dev_in_use(const dra_allocated *st, uint64_t key) {
    uint64_t v;
    return st && (cmap_get(&st->devices, key, &v) || (cmap_get(&st->shared, key, &v) && v > 0));
}

static bool dev_new(const dra_pool *p, const dra_alloc_result *res, size_t nres, uint64_t key, const dra_nodeview *v) {
    for (size_t r = 0; r < nres; r++)
        for (uint32_t i = 0; i < res[r].nresults; i++) {
            const dra_device_result *d = &res[r].results[i];
            /* the allocator's results carry their device key (pool and name ids): no
             * lookup of the name, which takes the intern table's lock */
            if (d->key) {
                if (d->key == key) return true;
                continue;
            }
            if (strcmp(d->driver, p->driver) || strcmp(d->pool, p->pool)) continue;
            if (dra_device_key(p->pool_key, intern_get(v->w->names, d->device, strlen(d->device))) == key) return true;
        }
    return false;
}

/* Utilisation in [0, 1] after the results are placed. */
static double node_utilisation(const dra_nodeview *v, const dra_allocated *st, const dra_alloc_result *res, size_t nres) {
    double sum = 0, weight = 0;
    for (uint32_t pi = 0; pi < v->npools; pi++) {
        const dra_pool *p = &v->pools[pi];
        if (p->incomplete || p->invalid || !p->ncands) continue;
        double u;
        if (p->ncounters) {
            double *used = xcalloc(p->ncounters, sizeof *used);
            for (uint32_t d = 0; d < p->nall_devs; d++) {
                const dra_pool_device *pd = &p->all_devs[d];
                if (!dev_in_use(st, pd->key) && !dev_new(p, res, nres, pd->key, v)) continue;
                for (uint32_t k = 0; k < pd->ncons; k++) used[pd->cons[k].counter] += quantity_to_double(&pd->cons[k].value);
            }
            double tot = 0, use = 0;
            for (uint32_t k = 0; k < p->ncounters; k++) {
                double cap = quantity_to_double(&p->counters[k].value);
                if (cap <= 0) continue;
                tot += 1;
                use += used[k] > cap ? 1 : used[k] / cap;
            }
            free(used);
            u = tot > 0 ? use / tot : 0;
        } else {
            uint32_t busy = 0;
            for (uint32_t c = p->first_cand; c < p->first_cand + p->ncands; c++)
                busy += dev_in_use(st, v->cands[c].key) || dev_new(p, res, nres, v->cands[c].key, v);
            u = (double)busy / p->ncands;
        }
        sum += u * p->ncands;
        weight += p->ncands;
    }
    return weight > 0 ? sum / weight : 0;
}

static int64_t score_of(dra_score_mode mode, double u) {
    if (mode == DRA_SCORE_NONE) return 0;
    double x = mode == DRA_SCORE_BINPACK ? u : 1 - u;
    int64_t s = (int64_t)llround(10 * x);
    return s < 0 ? 0 : s > 10 ? 10 : s;
}

/* ---- one node -------------------------------------------------------------------------------- */

/* A node's view as the snapshot gave it, kept by a planning overlay (one thread's):
 * the snapshot keeps a view it handed out for its life, so asking it again per
 * decision (a mutex every thread takes, per node) is needed only the first time. */
typedef struct ov_view {
    const dra_nodeview *view;
    const dra_node *node;
    const char *verr;
    bool known;              /* the fields hold the snapshot's answer */
} ov_view;

/* One node against in-use state st; `extra`: usage committed beside the world's pods
 * (plan's overlay). With a fit and `keep`, *kept receives the allocation (valid
 * until x or a are reset). vc (may be NULL): the node's view when known, else filled
 * in with the snapshot's answer when that one lasts as long as the snapshot. */
static void fit_core(const dra_pod_request *pr, const dra_allocated *st, const dra_node_usage *extra, dra_alloc_ctx *x,
                     arena *a, const char *name, const json_t *node_obj, dra_score_mode mode, uint64_t deadline_ns,
                     dra_fit *out, dra_podnode *kept, ov_view *vc) {
    memset(out, 0, sizeof *out);
    dra_snapshot *s = pr->s;
    const dra_world *w = dra__snapshot_world(s);
    const dra_node *node = NULL;
    const char *verr = NULL;
    const dra_nodeview *view = NULL;
    dra_nodeview *own_view = NULL;
    dra_holds node_holds = {0};   /* what decoding a Node carried in the request interned */
    if (kept) memset(kept, 0, sizeof *kept);
    if (node_obj && !dra_world_find_node(w, name)) {
        /* a node the snapshot does not know, as the request carries it: its labels
         * matter for slices selected by node selector; its view is this call's */
        dra_decoder d = {.a = a, .cat = dra__snapshot_catalog(s), .holds = &node_holds, .apply_defaults = true};
        dra_node *n = ARENA_NEW(a, dra_node);
        err e;
        err_clear(&e);
        if (!dra__decode_node(&d, node_obj, n, &e)) {
            out->status = DRA_FIT_UNRESOLVABLE;
            snprintf(out->reason, sizeof out->reason, "%.500s", e.msg);
            goto done;
        }
        n->name = name;
        node = n;
        if (pr->pp.needs_dra) {
            own_view = dra_nodeview_new(w, node, dra__snapshot_features(s), &e);
            if (!own_view) verr = arena_strdup(a, e.msg);
            view = own_view;
        }
    } else if (vc && vc->known) {
        view = vc->view, node = vc->node, verr = vc->verr;
    } else {
        view = dra__snapshot_view(s, name, &node, &verr, a, &own_view);
        /* a view of the call's own (the snapshot's table full) is not kept */
        if (vc && !own_view) *vc = (ov_view){view, node, verr, true};
    }
    if (pr->check_node) {
        if (pr->pod.fit_error) {
            out->status = DRA_FIT_ERROR;
            snprintf(out->reason, sizeof out->reason, "%.500s", pr->pod.fit_error);
            goto done;
        }
        dra_node_usage u;
        dra__node_usage(w, node, &pr->pod, NULL, &u);
        if (extra) u.pods += extra->pods, u.cpu_milli += extra->cpu_milli, u.memory += extra->memory;
        bool unres;
        if (!dra__nodefit_check(&pr->pod, node, &u, out->reason, sizeof out->reason, &unres)) {
            out->status = unres ? DRA_FIT_UNRESOLVABLE : DRA_FIT_UNSCHEDULABLE;
            goto done;
        }
    }
    if (!pr->pp.needs_dra) {
        out->status = DRA_FIT_OK;
        out->score = view && mode != DRA_SCORE_NONE ? score_of(mode, node_utilisation(view, st, NULL, 0)) : 0;
        goto done;
    }
    if (!view && verr && !pr->pp.error && !pr->pp.unresolvable) {
        out->status = DRA_FIT_UNSCHEDULABLE;
        snprintf(out->reason, sizeof out->reason, "%.500s", verr);
        goto done;
    }
    dra_alloc_ctx_set_deadline(x, deadline_ns, NULL);
    /* The device choice matters only where the allocation is kept (/bind, plan's
     * commits): a fit that answers and scores takes the first solution, the same
     * answer at first-fit's cost (best-fit enumerates). */
    dra_device_choice choice = dra_alloc_ctx_device_choice(x);
    if (!kept) dra_alloc_ctx_set_device_choice(x, DRA_CHOICE_FIRST_FIT);
    dra_podnode pn;
    dra__podplan_try(&pr->pp, node, view, st, x, a, &pn);
    dra_alloc_ctx_set_device_choice(x, choice);
    out->steps = dra_alloc_ctx_steps(x);
    dra_alloc_ctx_set_deadline(x, 0, NULL);
    memcpy(out->reason, pn.reason, strnlen(pn.reason, sizeof out->reason - 1) + 1);   /* both 512 bytes, NUL-ended */
    out->reason[sizeof out->reason - 1] = '\0';
    switch (pn.status) {
    case DRA_ALLOC_OK:
        out->status = DRA_FIT_OK;
        out->reason[0] = '\0';
        out->score = view && mode != DRA_SCORE_NONE ? score_of(mode, node_utilisation(view, st, pn.res, pn.ntodo)) : 0;
        break;
    case DRA_ALLOC_UNSAT:
        out->status = pn.unresolvable ? DRA_FIT_UNRESOLVABLE : DRA_FIT_UNSCHEDULABLE;
        break;
    case DRA_ALLOC_NODE_ERROR:
        out->status = DRA_FIT_UNSCHEDULABLE;
        break;
    case DRA_ALLOC_ERROR:
        out->status = DRA_FIT_ERROR;
        break;
    case DRA_ALLOC_TIMEOUT:
        out->status = DRA_FIT_TIMEOUT;
        break;
    }
    if (kept && out->status == DRA_FIT_OK) {
        *kept = pn;
        pn.device_plugin = NULL;
        pn.request_mappings = NULL;
    }
    json_decref(pn.device_plugin);
    json_decref(pn.request_mappings);
done:
    dra_nodeview_free(own_view);
    dra__holds_release(&node_holds, dra__snapshot_catalog(s));
}

void dra_pod_fit(const dra_pod_request *pr, dra_alloc_ctx *x, const char *name, const json_t *node_obj,
                 dra_score_mode mode, uint64_t deadline_ns, dra_fit *out) {
    /* the same needs on the same node in the same snapshot: the same answer */
    bool memo = pr->memo && !pr->check_node && !node_obj;
    uint64_t sig = pr->sig ^ (uint64_t)mode;
    if (memo) {
        int st;
        memset(out, 0, sizeof *out);
        if (dra__memo_get(pr->s, name, sig, &st, &out->score, out->reason, sizeof out->reason, pr->names, pr->nnames)) {
            out->status = (dra_fit_status)st;
            out->memo_hit = true;
            return;
        }
    }
    arena a;
    arena_init(&a, 4096);
    fit_core(pr, dra__snapshot_allocated(pr->s), NULL, x, &a, name, node_obj, mode, deadline_ns, out, NULL, NULL);
    arena_free(&a);
    /* a failure decided without its reason (dra_alloc_ctx_set_reasons) is not kept:
     * the memo answers callers that read reasons */
    if (memo && (out->status == DRA_FIT_OK ||
                 ((out->status == DRA_FIT_UNSCHEDULABLE || out->status == DRA_FIT_UNRESOLVABLE) && dra_alloc_ctx_reasons(x))))
        dra__memo_put(pr->s, name, sig, (int)out->status, out->score, out->reason, pr->names, pr->nnames);
}

json_t *dra_pod_fit_allocation(const dra_pod_request *pr, dra_alloc_ctx *x, const char *node, uint64_t deadline_ns,
                               dra_fit *out) {
    arena a;
    arena_init(&a, 4096);
    dra_podnode kept;
    fit_core(pr, dra__snapshot_allocated(pr->s), NULL, x, &a, node, NULL, DRA_SCORE_NONE, deadline_ns, out, &kept, NULL);
    json_t *res = NULL;
    if (out->status == DRA_FIT_OK) {
        res = json_array();
        const dra_world *w = dra__snapshot_world(pr->s);
        for (uint32_t k = 0; k < pr->pod.nclaims; k++) {
            const dra_claim *c = pr->pp.claims ? pr->pp.claims[k] : NULL;
            if (!c) continue;
            const char *ns = dra_ns(c->ns);
            bool listed = false;
            for (size_t i = 0; i < json_array_size(res); i++) {
                const json_t *o = json_array_get(res, i);
                listed |= !strcmp(json_string_value(json_object_get(o, "namespace")), ns) &&
                          !strcmp(json_string_value(json_object_get(o, "name")), c->name);
            }
            if (listed) continue;
            json_t *e = NULL;
            if (c->allocated) {
                e = json_pack("{s:s, s:s, s:b}", "namespace", ns, "name", c->name, "reuse", 1);
            } else {
                for (size_t i = 0; i < kept.ntodo && !e; i++)
                    if (kept.todo[i] == c)
                        e = json_pack("{s:s, s:s, s:o}", "namespace", ns, "name", c->name, "allocation",
                                      dra_alloc_result_to_json(&kept.res[i]));
            }
            if (!e) continue;
            /* a PodGroup's claim is reserved for the group, not the pod (KEP-5729) */
            const dra_claim *gc;
            if (pr->pp.group && dra__podgroup_claim(w, &a, pr->pp.group, &pr->pod.claims[k], &gc))
                json_object_set_new(e, "podGroup", json_string(pr->pod.group_name));
            json_array_append_new(res, e);
        }
        for (size_t i = kept.nown; i < kept.ntodo; i++)
            json_array_append_new(res, json_pack("{s:s, s:s, s:b, s:o, s:o, s:O?}", "namespace",
                                                 dra_ns(kept.todo[i]->ns),
                                                 "name", kept.todo[i]->name, "implicit", 1, "allocation",
                                                 dra_alloc_result_to_json(&kept.res[i]), "spec",
                                                 dra__claim_spec_json(kept.todo[i]), "requestMappings",
                                                 kept.request_mappings));
        json_decref(kept.device_plugin);
        json_decref(kept.request_mappings);
    }
    arena_free(&a);
    return res;
}

/* ---- the planning overlay -------------------------------------------------------------------- */

typedef struct committed_claim {
    char *key;               /* "ns/name" of a claim allocated by a committed pod */
    char *node;              /* the node it was allocated on, NULL when usable everywhere */
} committed_claim;

typedef struct ov_memo {
    char *node;
    uint64_t sig, ver, gver;
    dra_fit fit;             /* reason as a name template (dra__reason_template) */
} ov_memo;

struct dra_overlay {
    dra_snapshot *s;
    dra_allocated *st;
    hmap usage;              /* node name hash → index+1 into nodes */
    DRA_VEC(struct ov_node { char *name; dra_node_usage u; uint64_t ver; }) nodes;
    /* the overlay's fit memo: a node's answer for a pod signature holds while nothing
     * is committed to that node (its ver) and no commit could reach other nodes (gver:
     * bumped by an allocation not pinned to exactly its node, or a shared claim) */
    uint64_t gver;
    bool no_memo;
    hmap memo;               /* key → index+1 into memos */
    DRA_VEC(ov_memo) memos;
    DRA_VEC(committed_claim) claims;
    hmap claim_idx;          /* claim key hash → index+1 */
    /* the nodes' views as the snapshot handed them out (ov_view), by the view's node
     * name: a copy of the overlay starts without them */
    hmap vmap;               /* node name hash → index+1 into views (probe chain as usage) */
    DRA_VEC(ov_view) views;
};

dra_overlay *dra_overlay_new(dra_snapshot *s) {
    dra_overlay *ov = xcalloc(1, sizeof *ov);
    ov->s = dra_snapshot_retain(s);
    ov->st = dra__allocated_clone(dra__snapshot_allocated(s), (dra_world *)dra__snapshot_world(s));
    hmap_init(&ov->usage);
    hmap_init(&ov->claim_idx);
    return ov;
}

void dra_overlay_free(dra_overlay *ov) {
    if (!ov) return;
    dra_allocated_free(ov->st);
    for (size_t i = 0; i < ov->memos.n; i++) free(ov->memos.v[i].node);
    free(ov->memos.v);
    hmap_free(&ov->memo);
    for (size_t i = 0; i < ov->nodes.n; i++) free(ov->nodes.v[i].name);
    for (size_t i = 0; i < ov->claims.n; i++) {
        free(ov->claims.v[i].key);
        free(ov->claims.v[i].node);
    }
    free(ov->nodes.v);
    free(ov->claims.v);
    hmap_free(&ov->usage);
    hmap_free(&ov->claim_idx);
    hmap_free(&ov->vmap);
    free(ov->views.v);
    dra_snapshot_release(ov->s);
    free(ov);
}

dra_overlay *dra_overlay_copy(const dra_overlay *src) {
    dra_overlay *ov = xcalloc(1, sizeof *ov);
    ov->s = dra_snapshot_retain(src->s);
    ov->st = dra__allocated_clone(src->st, (dra_world *)dra__snapshot_world(src->s));
    /* the vectors in the same order, so the maps' index+1 values hold as they are */
    hmap_copy(&ov->usage, &src->usage);
    hmap_copy(&ov->claim_idx, &src->claim_idx);
    for (size_t i = 0; i < src->nodes.n; i++) {
        struct ov_node nn = src->nodes.v[i];
        nn.name = xstrdup(nn.name);
        DRA_VEC_PUSH(ov->nodes, nn);
    }
    for (size_t i = 0; i < src->claims.n; i++) {
        committed_claim c = {xstrdup(src->claims.v[i].key),
                             src->claims.v[i].node ? xstrdup(src->claims.v[i].node) : NULL};
        DRA_VEC_PUSH(ov->claims, c);
    }
    /* the memo starts empty: copying it (half a KiB an answer, 40 MB at 10,000 nodes)
     * bought nothing measurable for plan's copies */
    hmap_init(&ov->memo);
    ov->gver = src->gver;
    ov->no_memo = src->no_memo;
    return ov;
}

void dra_overlay_memo(dra_overlay *ov, bool on) { ov->no_memo = !on; }

const dra_allocated *dra__overlay_allocated(const dra_overlay *ov) { return ov ? ov->st : NULL; }

/* usage and claim_idx map a name's hash to index+1; names whose hashes collide take
 * the next slot of a probe chain (hash_u64 of the previous key), so a lookup walks the
 * chain until a free slot. (A linear scan on every miss — a node nothing was committed
 * to — was 45 % of 5000pods_500nodes.) */
static struct ov_node *ov_usage(dra_overlay *ov, const char *name, bool create) {
    uint64_t probe = hash_bytes(name, strlen(name)), i;
    for (; hmap_get(&ov->usage, probe, &i); probe = hash_u64(probe))
        if (!strcmp(ov->nodes.v[i - 1].name, name)) return &ov->nodes.v[i - 1];
    if (!create) return NULL;
    struct ov_node nn = {.name = xstrdup(name)};
    DRA_VEC_PUSH(ov->nodes, nn);
    hmap_put(&ov->usage, probe, ov->nodes.n);
    return &ov->nodes.v[ov->nodes.n - 1];
}

/* The kept view of node `name` (hash h), or NULL. */
static const ov_view *ov_view_get(const dra_overlay *ov, const char *name, uint64_t h) {
    uint64_t i;
    for (uint64_t probe = h; hmap_get(&ov->vmap, probe, &i); probe = hash_u64(probe))
        if (!strcmp(ov->views.v[i - 1].node->name, name)) return &ov->views.v[i - 1];
    return NULL;
}

/* Keeps v (the snapshot's answer for node `name`, hash h) when it names its node. */
static void ov_view_put(dra_overlay *ov, const char *name, uint64_t h, const ov_view *v) {
    if (!v->known || !v->node || !v->node->name || strcmp(v->node->name, name)) return;
    uint64_t probe = h, i;
    while (hmap_get(&ov->vmap, probe, &i)) probe = hash_u64(probe);
    DRA_VEC_PUSH(ov->views, *v);
    hmap_put(&ov->vmap, probe, ov->views.n);
}

static const committed_claim *ov_claim(const dra_overlay *ov, const char *key) {
    uint64_t i;
    for (uint64_t probe = hash_bytes(key, strlen(key)); hmap_get(&ov->claim_idx, probe, &i); probe = hash_u64(probe))
        if (!strcmp(ov->claims.v[i - 1].key, key)) return &ov->claims.v[i - 1];
    return NULL;
}

static char *claim_key(const dra_claim *c) {
    size_t n = strlen(dra_ns(c->ns)) + strlen(c->name) + 2;
    char *k = xmalloc(n);
    snprintf(k, n, "%s/%s", dra_ns(c->ns), c->name);
    return k;
}

/* An allocation result pinned to exactly this node (metadata.name In [node]): a
 * commit of it cannot change another node's answer. */
static bool pinned_to(const dra_alloc_result *r, const char *node) {
    const dra_node_selector *ns = r->node_selector;
    if (!ns || ns->nterms != 1) return false;
    const dra_ns_term *t = &ns->terms[0];
    return !t->nexprs && t->nfields == 1 && t->fields[0].op == DRA_NS_IN && t->fields[0].values.n == 1 &&
           !strcmp(t->fields[0].key, "metadata.name") && !strcmp(t->fields[0].values.v[0], node);
}

/* Template claims only (a named claim may be committed by a sibling) and the request's
 * signature: answers shareable across this overlay's unchanged states. */
static bool overlay_memo_ok(const dra_pod_request *pr) {
    if (!pr->memo) return false;
    for (uint32_t k = 0; k < pr->pod.nclaims; k++)
        if (!pr->pp.claims[k]->from_template) return false;
    return true;
}

static uint64_t ov_memo_key(const char *node, uint64_t sig, uint64_t ver, uint64_t gver) {
    return hash_bytes(node, strlen(node)) ^ hash_u64(sig) ^ hash_u64(ver * 0x9E3779B97F4A7C15ull + gver);
}
void dra_overlay_memo_adopt(dra_overlay *ov, dra_overlay *from) {
    assert(from->s == ov->s && from->gver == ov->gver && "adopted from a copy nothing was committed to since");
    for (size_t i = 0; i < from->memos.n; i++) {
        const ov_memo *m = &from->memos.v[i];
        /* the same answer twice under one key is harmless, but ov never asked both */
        uint64_t probe = ov_memo_key(m->node, m->sig, m->ver, m->gver), idx;
        while (hmap_get(&ov->memo, probe, &idx)) probe = hash_u64(probe);
        DRA_VEC_PUSH(ov->memos, *m);
        hmap_put(&ov->memo, probe, ov->memos.n);
    }
    from->memos.n = 0;   /* the node names are ov's now */
    hmap_free(&from->memo);
    hmap_init(&from->memo);
}

void dra_pod_fit_overlay(const dra_pod_request *pr, dra_overlay *ov, dra_alloc_ctx *x, const char *node,
                         dra_score_mode mode, uint64_t deadline_ns, bool commit, dra_fit *out) {
    bool memo = !commit && !ov->no_memo && overlay_memo_ok(pr);
    /* answers made without reasons (dra_alloc_ctx_set_reasons) only for such callers */
    uint64_t sig = pr->sig ^ (uint64_t)mode ^ (pr->check_node ? 0x5A5A : 0) ^ (dra_alloc_ctx_reasons(x) ? 0 : 0xE1A5ull << 32);
    uint64_t ver = 0, mkey = 0;
    if (memo) {
        struct ov_node *u0 = ov_usage(ov, node, false);
        ver = u0 ? u0->ver : 0;
        mkey = ov_memo_key(node, sig, ver, ov->gver);
        uint64_t idx;
        for (uint64_t probe = mkey; hmap_get(&ov->memo, probe, &idx); probe = hash_u64(probe)) {
            const ov_memo *m = &ov->memos.v[idx - 1];
            if (m->sig != sig || m->ver != ver || m->gver != ov->gver || strcmp(m->node, node)) continue;
            /* the answer's fields, not the whole struct: a hit writes the line the
             * cycle reads (and the reason's bytes), not 512 bytes it overwrites */
            out->status = m->fit.status;
            out->score = m->fit.score;
            out->steps = 0;
            out->memo_hit = true;
            /* the reason named the first pod that got it: say it in this pod's names */
            dra__reason_expand(m->fit.reason, out->reason, sizeof out->reason, pr->names, pr->nnames);
            return;
        }
    }
    arena a;
    arena_init(&a, 4096);
    /* claims an earlier committed pod allocated are allocated now: reused, and only
     * on the node they were allocated for */
    dra_pod_request view = *pr;
    view.pp.classify = false;   /* planning places pods; it does not report unresolvable nodes */
    uint32_t nc = pr->pod.nclaims;
    if (nc && !pr->pp.error && !pr->pp.unresolvable && ov->claims.n) {
        const dra_claim **cl = ARENA_NEWN(&a, const dra_claim *, nc);
        for (uint32_t k = 0; k < nc; k++) {
            cl[k] = pr->pp.claims[k];
            if (cl[k]->allocated || cl[k]->from_template) continue;
            char *key = claim_key(cl[k]);
            const committed_claim *cc = ov_claim(ov, key);
            free(key);
            if (!cc) continue;
            if (cc->node && strcmp(cc->node, node)) {
                memset(out, 0, sizeof *out);
                out->status = DRA_FIT_UNRESOLVABLE;
                snprintf(out->reason, sizeof out->reason, "ResourceClaim %s/%s is allocated for other nodes than %s",
                         dra_ns(cl[k]->ns), cl[k]->name, node);
                arena_free(&a);
                return;
            }
            dra_claim *copy = ARENA_NEW(&a, dra_claim);
            *copy = *cl[k];
            copy->allocated = true;
            copy->alloc_node_selector = NULL;
            cl[k] = copy;
        }
        view.pp.claims = cl;
    }
    struct ov_node *u = ov_usage(ov, node, false);
    dra_podnode kept;
    uint64_t nh = hash_bytes(node, strlen(node));
    const ov_view *kv = ov_view_get(ov, node, nh);
    ov_view vc = kv ? *kv : (ov_view){0};
    fit_core(&view, ov->st, u ? &u->u : NULL, x, &a, node, NULL, mode, deadline_ns, out, commit ? &kept : NULL, &vc);
    if (!kv) ov_view_put(ov, node, nh, &vc);
    if (memo && (out->status == DRA_FIT_OK || out->status == DRA_FIT_UNSCHEDULABLE ||
                 out->status == DRA_FIT_UNRESOLVABLE)) {
        uint64_t probe = mkey, idx;
        while (hmap_get(&ov->memo, probe, &idx)) probe = hash_u64(probe);
        ov_memo m = {.node = xstrdup(node), .sig = sig, .ver = ver, .gver = ov->gver, .fit = *out};
        char *t = dra__reason_template(out->reason, pr->names, pr->nnames);
        snprintf(m.fit.reason, sizeof m.fit.reason, "%s", t);
        free(t);
        DRA_VEC_PUSH(ov->memos, m);
        hmap_put(&ov->memo, probe, ov->memos.n);
    }
    if (commit && out->status == DRA_FIT_OK) {
        bool cc = dra__snapshot_features(pr->s)->consumable_capacity;
        struct ov_node *un = ov_usage(ov, node, true);
        un->ver++;
        if (view.pp.claims != pr->pp.claims) ov->gver++;   /* a shared claim was reused */
        for (size_t i = 0; i < kept.ntodo; i++) {
            if (!pinned_to(&kept.res[i], node) || (i < kept.nown && !kept.todo[i]->from_template)) ov->gver++;
            dra_allocated_add_result(ov->st, &kept.res[i], cc);
            const dra_claim *c = kept.todo[i];
            if (i >= kept.nown || c->from_template) continue;
            committed_claim k = {.key = claim_key(c), .node = kept.res[i].node_selector ? xstrdup(node) : NULL};
            DRA_VEC_PUSH(ov->claims, k);
            uint64_t probe = hash_bytes(k.key, strlen(k.key)), j;
            while (hmap_get(&ov->claim_idx, probe, &j)) probe = hash_u64(probe);
            hmap_put(&ov->claim_idx, probe, ov->claims.n);
        }
        json_decref(kept.device_plugin);
        json_decref(kept.request_mappings);
        u = ov_usage(ov, node, true);
        u->u.pods++;
        u->u.cpu_milli += pr->pod.req_cpu_milli;
        u->u.memory += pr->pod.req_memory;
    }
    arena_free(&a);
}

/* ---- making room (preempt_search.c) ----------------------------------------------------------- */

void dra__pod_fit_state(const dra_pod_request *pr, const dra_allocated *st, const dra_node_usage *base,
                        const dra_node_usage *delta, dra_alloc_ctx *x, arena *a, const char *node, bool reallocate,
                        dra_fit *out, dra_podnode *kept) {
    /* a victim search asks "fits or not" many times: no second search to tell
     * unresolvable from unschedulable (plan's overlay skips it too) */
    dra_pod_request view = *pr;
    view.pp.classify = false;
    uint32_t nc = pr->pod.nclaims;
    if (reallocate && nc && pr->pp.claims && !pr->pp.error && !pr->pp.unresolvable) {
        /* a pod moved elsewhere: its claims deallocated with it, decided again */
        const dra_claim **cl = ARENA_NEWN(a, const dra_claim *, nc);
        for (uint32_t k = 0; k < nc; k++) {
            cl[k] = pr->pp.claims[k];
            if (!cl[k]->allocated) continue;
            dra_claim *copy = ARENA_NEW(a, dra_claim);
            *copy = *cl[k];
            copy->allocated = false;
            copy->alloc_results = NULL;
            copy->nalloc_results = 0;
            copy->alloc_node_selector = NULL;
            copy->alloc_node_selector_error = NULL;
            for (uint32_t j = 0; j < k; j++)   /* one claim named twice stays one claim */
                if (pr->pp.claims[j] == pr->pp.claims[k]) copy = (dra_claim *)cl[j];
            cl[k] = copy;
        }
        view.pp.claims = cl;
    }
    if (base && pr->check_node) {
        /* the whole-pod checks against the node's usage the caller counted once (a scan
         * of every pod per call is most of a victim search on a large cluster) */
        const dra_node *n = NULL;
        const char *verr = NULL;
        dra_nodeview *own = NULL;
        dra__snapshot_view(pr->s, node, &n, &verr, a, &own);
        dra_nodeview_free(own);
        memset(out, 0, sizeof *out);
        if (pr->pod.fit_error) {
            out->status = DRA_FIT_ERROR;
            snprintf(out->reason, sizeof out->reason, "%.500s", pr->pod.fit_error);
            return;
        }
        dra_node_usage u = *base;
        if (delta) u.pods += delta->pods, u.cpu_milli += delta->cpu_milli, u.memory += delta->memory;
        bool unres;
        if (n && !dra__nodefit_check(&pr->pod, n, &u, out->reason, sizeof out->reason, &unres)) {
            out->status = unres ? DRA_FIT_UNRESOLVABLE : DRA_FIT_UNSCHEDULABLE;
            return;
        }
        view.check_node = false;
    }
    fit_core(&view, st, delta, x, a, node, NULL, DRA_SCORE_NONE, 0, out, kept, NULL);
}
