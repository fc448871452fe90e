/* podfit.c — one Pod against a snapshot (snapshot.h): the pod decoded and its claims
 * resolved once per request (dra_pod_request_new), then each node decided on its
 * own (dra_pod_fit) with the snapshot's shared node view and in-use set, and scored.
 *
 * Scores (0..10, kube-scheduler's MaxExtenderPriority) use the allocation the node
 * would get. A node's utilisation after placing the pod is the device-weighted mean
 * over its complete, valid pools of
 *   - for a pool with shared counters (partitionable devices: MIG, GPU slices):
 *     counters consumed / counters available, summed over every counter of every
 *     counter set — a GPU partly carved counts as partly used;
 *   - otherwise: devices in use / devices.
 * binpack = round(10 × utilisation): nodes already partly used first, so whole GPUs,
 * whole counter sets and whole nodes stay free for large claims; spread =
 * round(10 × (1 − utilisation)). A node where the pod needs no device scores by its
 * utilisation as it is. */
#include "engine/snapshot.h"

#include "engine/extres.h"
#include "engine/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dra_pod_request {
    dra_snapshot *s;
    arena a;
    dra_pod pod;
    dra_podplan pp;
};

dra_pod_request *dra_pod_request_new(dra_snapshot *s, const json_t *pod, err *e) {
    if (!json_is_object(pod)) {
        err_set(e, "Pod: expected an object");
        return NULL;
    }
    dra_pod_request *pr = xcalloc(1, sizeof *pr);
    arena_init(&pr->a, 8192);
    dra_decoder d = {.a = &pr->a, .names = dra__snapshot_catalog(s)->names, .apply_defaults = true};
    if (!dra_decode_pod(&d, pod, &pr->pod, e)) {
        arena_free(&pr->a);
        free(pr);
        return NULL;
    }
    dra_ingest_pod(&d, pod, &pr->pod);
    pr->s = dra_snapshot_retain(s);
    dra_podplan_init(&pr->pp, dra__snapshot_world(s), dra__snapshot_features(s), &pr->pod, &pr->a);
    return pr;
}

void dra_pod_request_free(dra_pod_request *pr) {
    if (!pr) return;
    dra_snapshot_release(pr->s);
    arena_free(&pr->a);
    free(pr);
}

bool dra_pod_request_needs_dra(const dra_pod_request *pr) { return pr->pp.error || pr->pp.needs_dra; }
const char *dra_pod_request_error(const dra_pod_request *pr) { return pr->pp.error; }

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
    return st && (hmap_get(&st->devices, key, &v) || (hmap_get(&st->shared, key, &v) && v > 0));
}

static bool dev_new(const dra_pool *p, const dra_alloc_result *res, size_t nres, uint64_t key, const dra_nodeview *v) {
    (void)v;
    for (size_t r = 0; r < nres; r++)
        for (uint32_t i = 0; i < res[r].nresults; i++) {
            const dra_device_result *d = &res[r].results[i];
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
            double *used = calloc(p->ncounters, sizeof *used);
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

void dra_pod_fit(const dra_pod_request *pr, dra_alloc_ctx *x, const char *name, const json_t *node_obj,
                 dra_score_mode mode, uint64_t deadline_ns, dra_fit *out) {
    memset(out, 0, sizeof *out);
    dra_snapshot *s = pr->s;
    const dra_world *w = dra__snapshot_world(s);
    arena a;
    arena_init(&a, 4096);
    const dra_node *node = NULL;
    const char *verr = NULL;
    const dra_nodeview *view = NULL;
    dra_nodeview *own_view = NULL;
    if (node_obj && !dra_world_find_node(w, name)) {
        /* a node the snapshot does not know, as the request carries it: its labels
         * matter for slices selected by node selector; its view is this call's */
        dra_decoder d = {.a = &a, .names = dra__snapshot_catalog(s)->names, .apply_defaults = true};
        dra_node *n = ARENA_NEW(&a, dra_node);
        err e;
        err_clear(&e);
        if (!dra_decode_node(&d, node_obj, n, &e)) {
            out->status = DRA_FIT_UNRESOLVABLE;
            snprintf(out->reason, sizeof out->reason, "%.500s", e.msg);
            goto done;
        }
        dra_ingest_node(&d, node_obj, n);
        n->name = name;
        node = n;
        if (pr->pp.needs_dra) {
            own_view = dra_nodeview_new(w, node, dra__snapshot_features(s), &e);
            if (!own_view) verr = arena_strdup(&a, e.msg);
            view = own_view;
        }
    } else {
        view = dra__snapshot_view(s, name, &node, &verr);
    }
    if (!pr->pp.needs_dra) {
        out->status = DRA_FIT_OK;
        out->score = view ? score_of(mode, node_utilisation(view, dra__snapshot_allocated(s), NULL, 0)) : 0;
        goto done;
    }
    if (!view && verr && !pr->pp.error && !pr->pp.unresolvable) {
        out->status = DRA_FIT_UNSCHEDULABLE;
        snprintf(out->reason, sizeof out->reason, "%.500s", verr);
        goto done;
    }
    dra_alloc_ctx_set_deadline(x, deadline_ns, NULL);
    dra_podnode pn;
    const dra_allocated *st = dra__snapshot_allocated(s);
    dra_podplan_try(&pr->pp, node, view, st, x, &a, &pn);
    out->steps = dra_alloc_ctx_steps(x);
    dra_alloc_ctx_set_deadline(x, 0, NULL);
    snprintf(out->reason, sizeof out->reason, "%s", pn.reason);
    switch (pn.status) {
    case DRA_ALLOC_OK:
        out->status = DRA_FIT_OK;
        out->reason[0] = '\0';
        out->score = view ? score_of(mode, node_utilisation(view, st, pn.res, pn.ntodo)) : 0;
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
    json_decref(pn.device_plugin);
done:
    dra_nodeview_free(own_view);
    arena_free(&a);
}
