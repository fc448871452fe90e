/* preempt_defrag.c — defragmentation advice (preempt.h, dra_room_defrag): pending pods
 * placed one by one, and where one fits nowhere, the fewest moves of running pods to
 * other nodes that make room for it. A move is tried on a copy of the in-use state and
 * kept only when every moved pod fits again elsewhere. */
#include "engine/room/preempt_internal.h"

#include "engine/pod/allocatable.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct defrag {
    dra_room *r;
    dra__usage_map use;
    arena a;
    json_t *moves;
    long budget;             /* moves left (< 0: no limit) */
    bool preempt;            /* plan --preempt: victims evicted, not moved */
    bool allow_pdb;
} defrag;

/* What a trial changes, to put back when it fails. */
typedef struct saved {
    dra_allocated *st;
    dra__qnode *use;
    size_t nuse;
} saved;

static saved save(defrag *d) {
    saved s = {.st = dra__allocated_clone(d->r->st, d->r->w), .nuse = d->use.nodes.n};
    s.use = xmalloc((s.nuse ? s.nuse : 1) * sizeof *s.use);
    memcpy(s.use, d->use.nodes.v, s.nuse * sizeof *s.use);
    return s;
}

static void restore(defrag *d, saved *s) {
    dra_allocated_free(d->r->st);
    d->r->st = s->st;
    /* entries made since are of nodes nothing was left on: back to zero */
    for (size_t i = 0; i < d->use.nodes.n; i++)
        d->use.nodes.v[i].d = i < s->nuse ? s->use[i].d : (dra_node_usage){0};
    free(s->use);
}

static void drop(saved *s) {
    dra_allocated_free(s->st);
    free(s->use);
}

/* The pod's request as a pending pod (moved pods leave their node). */
static dra_pod_request *request(dra_room *r, uint32_t pi, err *e) {
    json_t *p = json_deep_copy(r->pods.v[pi].obj);
    json_object_del(json_object_get(p, "spec"), "nodeName");
    dra_pod_request *pr = dra_pod_request_new(r->s, p, e);
    json_decref(p);
    if (pr) dra_pod_request_check_node(pr, true);
    return pr;
}

/* Puts the pod on node when it fits there now; its devices taken, its requests counted. */
static bool place_on(defrag *d, const dra_pod_request *pr, uint32_t pi, const char *node, bool reallocate) {
    dra_room *r = d->r;
    dra_node_usage *u = dra__usage_at(&d->use, node);
    arena fa;
    arena_init(&fa, 4096);
    dra_fit f;
    dra_podnode kept;
    dra__pod_fit_state(pr, r->st, dra__room_base(r, node), u, r->x, &fa, node, reallocate, &f, &kept);
    bool ok = f.status == DRA_FIT_OK;
    if (ok) {
        for (size_t i = 0; i < kept.ntodo; i++) dra_allocated_add_result(r->st, &kept.res[i], r->cc);
        json_decref(kept.device_plugin);
        json_decref(kept.request_mappings);
        const dra_pod *wp = r->pods.v[pi].wpod;
        u->pods++;
        if (wp) u->cpu_milli += wp->req_cpu_milli, u->memory += wp->req_memory;
    }
    arena_free(&fa);
    return ok;
}

/* Each matching PDB's budget spent by one eviction (the Eviction API's rule). */
static void spend(dra_room *r, uint32_t pi) {
    for (size_t j = 0; j < r->pdbs.n; j++)
        if (dra__pdb_selects(&r->pdbs.v[j], &r->pods.v[pi]) && !json_object_get(r->pdbs.v[j].disrupted, r->pods.v[pi].name))
            r->pdbs.v[j].allowed--;
}

/* The candidate's victims moved (each to the first other node where it fits) and the
 * pod placed on its node; false, nothing changed, when one of them fits nowhere. */
static bool try_moves(defrag *d, const dra_pod_request *pr, uint32_t pi, const dra__cand *c, err *e) {
    dra_room *r = d->r;
    saved s = save(d);
    dra_node_usage *u = dra__usage_at(&d->use, c->node);
    for (size_t k = 0; k < c->n; k++) {
        dra__room_remove(r, c->victims[k], u);
        r->pods.v[c->victims[k]].evicted = true;
    }
    bool ok = place_on(d, pr, pi, c->node, false);
    const char **to = xcalloc(c->n + 1, sizeof *to);
    size_t nn = dra_snapshot_nnodes(r->s);
    for (size_t k = 0; ok && k < c->n; k++) {
        dra_pod_request *vr = request(r, c->victims[k], e);
        ok = vr != NULL;
        for (size_t i = 0; ok && !to[k] && i < nn; i++) {
            const char *node = dra_snapshot_node_name(r->s, i);
            if (strcmp(node, c->node) && place_on(d, vr, c->victims[k], node, true)) to[k] = node;
        }
        ok = ok && to[k];
        dra_pod_request_free(vr);
    }
    if (ok) {
        drop(&s);
        for (size_t k = 0; k < c->n; k++) {
            const dra__rpod *v = &r->pods.v[c->victims[k]];
            json_array_append_new(d->moves, json_pack("{s:s+++, s:s, s:s}", "pod", v->ns, "/", v->name, "", "from",
                                                      v->node, "to", to[k]));
            spend(r, c->victims[k]);
        }
    } else {
        restore(d, &s);
        for (size_t k = 0; k < c->n; k++) {   /* the counts only: the state is the saved one */
            const dra__rpod *v = &r->pods.v[c->victims[k]];
            for (uint32_t j = 0; j < v->nclaims; j++) r->claims.v[v->claims[j]].removed--;
            r->pods.v[c->victims[k]].evicted = false;
        }
    }
    free(to);
    return ok;
}

/* plan --preempt: the candidate's victims evicted (PDB budgets spent) and the pod placed. */
static void evict(defrag *d, const dra_pod_request *pr, uint32_t pi, const dra__cand *c) {
    dra_room *r = d->r;
    dra_node_usage *u = dra__usage_at(&d->use, c->node);
    for (size_t k = 0; k < c->n; k++) {
        const dra__rpod *v = &r->pods.v[c->victims[k]];
        dra__room_remove(r, c->victims[k], u);
        r->pods.v[c->victims[k]].evicted = true;
        spend(r, c->victims[k]);
        json_array_append_new(d->moves, json_pack("{s:s+++, s:s, s:s+++}", "pod", v->ns, "/", v->name, "", "node", v->node,
                                                  "by", r->pods.v[pi].ns, "/", r->pods.v[pi].name, ""));
    }
    bool ok = place_on(d, pr, pi, c->node, false);
    (void)ok;
}

/* Fewest moves first, then the preemption order. */
static int by_moves(const void *a, const void *b) {
    const dra__cand *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    int c = dra__cand_cmp(x, y);
    return c ? c : strcmp(x->node, y->node);
}

/* One pending pod: a node where it fits, else the fewest moves that make room. */
static json_t *settle(defrag *d, uint32_t pi, err *e) {
    dra_room *r = d->r;
    const dra__rpod *p = &r->pods.v[pi];
    json_t *row = json_pack("{s:s+++}", "pod", p->ns, "/", p->name, "");
    dra_pod_request *pr = request(r, pi, e);
    if (!pr) {
        json_decref(row);
        return NULL;
    }
    size_t nn = dra_snapshot_nnodes(r->s), nc = 0;
    bool *potential = xcalloc(nn + 1, sizeof *potential);
    for (size_t i = 0; i < nn; i++) {
        const char *node = dra_snapshot_node_name(r->s, i);
        arena fa;
        arena_init(&fa, 4096);
        dra_fit f;
        dra__pod_fit_state(pr, r->st, dra__room_base(r, node), dra__usage_at(&d->use, node), r->x, &fa, node, false, &f, NULL);
        arena_free(&fa);
        potential[i] = f.status == DRA_FIT_UNSCHEDULABLE;
        if (f.status == DRA_FIT_OK && place_on(d, pr, pi, node, false)) {
            json_object_set_new(row, "node", json_string(node));
            json_object_set_new(row, "moves", json_integer(0));
            goto done;
        }
    }
    dra__cand *c = ARENA_NEWN(&d->a, dra__cand, nn + 1);
    dra_room_opts o = {.allow_pdb_violations = d->preempt && d->allow_pdb};
    r->movable_only = !d->preempt;
    /* as DryRunPreemption: enough candidates (max(100, 10 % of the nodes)) and stop */
    size_t want = nn / 10 < 100 ? 100 : nn / 10;
    for (size_t i = 0; i < nn && nc < want; i++)
        if (potential[i] && !(d->preempt && p->never) &&
            dra__room_node_search(r, pr, d->preempt ? p->priority : INT32_MAX, dra_snapshot_node_name(r->s, i),
                                  dra__usage_at(&d->use, dra_snapshot_node_name(r->s, i)), &o, &d->a, &c[nc]))
            nc++;
    r->movable_only = false;
    if (d->preempt) {
        if (nc) {   /* the best candidate (pickOneNodeForPreemption), its victims evicted */
            size_t best = 0;
            for (size_t i = 1; i < nc; i++)
                if (dra__cand_cmp(&c[i], &c[best]) < 0) best = i;
            evict(d, pr, pi, &c[best]);
            json_object_set_new(row, "node", json_string(c[best].node));
            json_object_set_new(row, "evictions", json_integer((json_int_t)c[best].n));
            goto done;
        }
        json_object_set_new(row, "unplaced", json_string(p->never ? "not eligible due to preemptionPolicy=Never."
                                                                  : "no node where evicting pods of lower priority lets it fit"));
        goto done;
    }
    qsort(c, nc, sizeof *c, by_moves);
    bool over = false;
    for (size_t i = 0; i < nc; i++) {
        if (d->budget >= 0 && (long)c[i].n > d->budget) {
            over = true;
            continue;
        }
        if (!try_moves(d, pr, pi, &c[i], e)) continue;
        if (d->budget >= 0) d->budget -= (long)c[i].n;
        json_object_set_new(row, "node", json_string(c[i].node));
        json_object_set_new(row, "moves", json_integer((json_int_t)c[i].n));
        goto done;
    }
    json_object_set_new(row, "unplaced", json_string(over ? "the moves it needs are more than --max-moves allows"
                                                          : "no moves of running pods to other nodes make room for it"));
done:
    for (size_t i = 0; i < nc; i++) json_decref(c[i].devices);
    free(potential);
    dra_pod_request_free(pr);
    return row;
}

typedef struct free_count {
    const char *const *nodes;   /* nodes where some unplaced pod fits: not stranded */
    size_t n;
    json_int_t total;
} free_count;

static void count_pool(void *arg, const dra_av_pool *p) {
    free_count *fc = arg;
    if (!p->node || p->incomplete) return;
    for (size_t i = 0; i < fc->n; i++)
        if (!strcmp(fc->nodes[i], p->node)) return;
    for (uint32_t i = 0; i < p->ndevs; i++) fc->total += p->devs[i].state == DRA_AV_FREE;
}

/* What a pending pod asks of a node, as text: its spec without the claims' names, and
 * each claim's spec (a template's name: its objects are alike). Pods alike fit alike. */
static char *needs_text(const dra_room *r, uint32_t pi) {
    const json_t *obj = r->pods.v[pi].obj;
    json_t *spec = json_deep_copy(json_object_get(obj, "spec"));
    json_t *claims = json_array();
    size_t i;
    const json_t *rc;
    json_array_foreach(json_object_get(spec, "resourceClaims"), i, rc) {
        const char *cn = json_string_value(json_object_get(rc, "resourceClaimName"));
        const dra_claim *c = cn ? dra_world_find_claim(r->w, r->pods.v[pi].ns, cn) : NULL;
        if (c && !c->allocated && c->spec_hash) json_array_append_new(claims, json_integer((json_int_t)c->spec_hash));
        else json_array_append_new(claims, json_pack("{s:s?, s:s?}", "claim", cn, "template",
                                                      json_string_value(json_object_get(rc, "resourceClaimTemplateName"))));
    }
    json_object_del(spec, "resourceClaims");
    json_object_del(spec, "containers");   /* their claims' names; requests below */
    json_t *reqs = json_array();
    const json_t *ct;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "containers"), i, ct)
        json_array_append(reqs, json_object_get(json_object_get(ct, "resources"), "requests") ?: json_null());
    json_t *all = json_pack("{s:o, s:o, s:o, s:s}", "spec", spec, "claims", claims, "requests", reqs, "ns", r->pods.v[pi].ns);
    char *t = json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(all);
    return t;
}

/* Free devices on nodes where none of the unplaced pods fits (one pod of each kind of
 * needs is tried: pods alike fit alike). */
static json_int_t stranded(defrag *d, const uint32_t *pend, size_t np, const bool *placed, err *e) {
    dra_room *r = d->r;
    size_t nn = dra_snapshot_nnodes(r->s), nu = 0;
    const char **useful = xcalloc(nn + 1, sizeof *useful);
    bool *rep = xcalloc(np + 1, sizeof *rep);
    json_t *kinds = json_object();
    for (size_t k = 0; k < np; k++) {
        if (placed[k]) continue;
        char *t = needs_text(r, pend[k]);
        rep[k] = !t || !json_object_get(kinds, t);
        if (t) json_object_set_new(kinds, t, json_true());
        free(t);
    }
    json_decref(kinds);
    for (size_t i = 0; i < nn; i++) {
        const char *node = dra_snapshot_node_name(r->s, i);
        for (size_t k = 0; k < np && (!nu || useful[nu - 1] != node); k++) {
            if (placed[k] || !rep[k]) continue;
            dra_pod_request *pr = request(r, pend[k], e);
            if (!pr) continue;
            arena fa;
            arena_init(&fa, 4096);
            dra_fit f;
            dra__pod_fit_state(pr, r->st, dra__room_base(r, node), dra__usage_at(&d->use, node), r->x, &fa, node, false, &f, NULL);
            arena_free(&fa);
            dra_pod_request_free(pr);
            if (f.status == DRA_FIT_OK) useful[nu++] = node;
        }
    }
    free_count fc = {.nodes = useful, .n = nu};
    dra__av_each_pool(r->s, r->st, count_pool, &fc);
    free(useful);
    free(rep);
    return fc.total;
}

static json_t *settle_all(dra_room *r, long max_moves, bool preempt, bool allow_pdb, dra_room_status *status, err *e) {
    *status = DRA_ROOM_ERROR;
    err_clear(e);
    dra__room_fresh(r);
    defrag d = {.r = r, .moves = json_array(), .budget = max_moves, .preempt = preempt, .allow_pdb = allow_pdb};
    arena_init(&d.a, 8192);
    int32_t *allowed = xcalloc(r->pdbs.n + 1, sizeof *allowed);
    for (size_t j = 0; j < r->pdbs.n; j++) allowed[j] = r->pdbs.v[j].allowed;
    /* the pending pods, higher priority first (the scheduling queue's order), then input order */
    uint32_t *pend = xcalloc(r->pods.n + 1, sizeof *pend);
    size_t np = 0;
    for (size_t i = 0; i < r->pods.n; i++)
        if (!r->pods.v[i].node && !r->pods.v[i].gone) pend[np++] = (uint32_t)i;
    for (size_t i = 1; i < np; i++)
        for (size_t j = i; j > 0 && r->pods.v[pend[j]].priority > r->pods.v[pend[j - 1]].priority; j--) {
            uint32_t t = pend[j];
            pend[j] = pend[j - 1];
            pend[j - 1] = t;
        }
    bool *placed = xcalloc(np + 1, sizeof *placed);
    json_t *out = json_object(), *rows = json_array();
    json_object_set_new(out, "strandedBefore", json_integer(stranded(&d, pend, np, placed, e)));
    bool all = true, ok = !e->msg[0];
    for (size_t k = 0; ok && k < np; k++) {
        json_t *row = settle(&d, pend[k], e);
        if (!row) {
            ok = false;
            break;
        }
        placed[k] = json_object_get(row, "node") != NULL;
        all &= placed[k];
        json_array_append_new(rows, row);
    }
    json_object_set_new(out, "strandedAfter", json_integer(ok ? stranded(&d, pend, np, placed, e) : 0));
    json_object_set_new(out, "pods", rows);
    json_object_set_new(out, preempt ? "evictions" : "moves", d.moves);
    for (size_t j = 0; j < r->pdbs.n; j++) r->pdbs.v[j].allowed = allowed[j];
    free(allowed);
    free(pend);
    free(placed);
    dra__usage_free(&d.use);
    arena_free(&d.a);
    if (!ok || e->msg[0]) {
        json_decref(out);
        return NULL;
    }
    *status = all ? DRA_ROOM_FOUND : DRA_ROOM_NONE;
    return out;
}

json_t *dra_room_defrag(dra_room *r, long max_moves, dra_room_status *status, err *e) {
    return settle_all(r, max_moves, false, false, status, e);
}

json_t *dra_room_preempt_all(dra_room *r, bool allow_pdb, dra_room_status *status, err *e) {
    return settle_all(r, -1, true, allow_pdb, status, e);
}
