/* preempt.c — a room's query (preempt.h): the preemptor and its group, the nodes
 * where it fails as Unschedulable, each node's victims (preempt_search.c), the
 * candidates in pickOneNodeForPreemption's order, and the answer as JSON. */
#include "engine/room/preempt_internal.h"

#include "base/hash.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dra_room *dra_room_new(dra_snapshot *s, const json_t *items, err *e) {
    dra_room *r = xcalloc(1, sizeof *r);
    r->s = dra_snapshot_retain(s);
    r->w = dra__snapshot_world(s);
    r->cc = dra__snapshot_features(s)->consumable_capacity;
    arena_init(&r->a, 8192);
    r->items = json_incref((json_t *)items);
    hmap_init(&r->pods_by_node);
    hmap_init(&r->usage_idx);
    r->x = dra_alloc_ctx_new();
    if (!json_is_array(items)) {
        err_set(e, "the objects: expected an array");
        dra_room_free(r);
        return NULL;
    }
    if (!dra__room_read(r, e)) {
        dra_room_free(r);
        return NULL;
    }
    return r;
}

bool dra_room_reads_only(const char *kind) {
    return kind && (!strcmp(kind, "PriorityClass") || !strcmp(kind, "PodDisruptionBudget"));
}

void dra_room_take(dra_room *r, const char *node, const json_t *devices) {
    if (node) {
        if (!r->held) r->held = json_object();
        json_object_set_new(r->held, node, json_true());
    }
    if (!json_is_array(devices)) return;
    if (!r->taken) r->taken = json_array();
    json_array_extend(r->taken, (json_t *)devices);
}

void dra_room_free(dra_room *r) {
    if (!r) return;
    json_decref(r->taken);
    json_decref(r->held);
    for (size_t i = 0; i < r->node_pods.n; i++) free(r->node_pods.v[i].v.v);
    free(r->node_pods.v);
    free(r->pods.v);
    free(r->claims.v);
    free(r->pdbs.v);
    hmap_free(&r->pods_by_node);
    hmap_free(&r->usage_idx);
    free(r->usage.v);
    dra_allocated_free(r->st);
    dra_alloc_ctx_free(r->x);
    json_decref(r->items);
    arena_free(&r->a);
    dra_snapshot_release(r->s);
    free(r);
}

static long find(const dra_room *r, const char *ns, const char *name) {
    for (size_t i = 0; i < r->pods.n; i++)
        if (!strcmp(r->pods.v[i].ns, ns) && !strcmp(r->pods.v[i].name, name)) return (long)i;
    return -1;
}

void dra__room_fresh(dra_room *r) {
    dra_allocated_free(r->st);
    r->st = dra__allocated_clone(dra__snapshot_allocated(r->s), r->w);
    size_t i;
    const json_t *d;
    json_array_foreach(r->taken, i, d) {
        char id[800];
        snprintf(id, sizeof id, "%s/%s/%s", json_string_value(json_object_get(d, "driver")) ?: "",
                 json_string_value(json_object_get(d, "pool")) ?: "", json_string_value(json_object_get(d, "device")) ?: "");
        err e;
        err_clear(&e);
        dra_allocated_add_device(r->st, id, &e);   /* a device gone from the slices: nothing to take */
    }
    for (size_t i = 0; i < r->claims.n; i++) r->claims.v[i].removed = 0;
    for (size_t i = 0; i < r->pods.n; i++) r->pods.v[i].evicted = false;
}

/* One query's memory and the usage its group's members changed per node. */
typedef struct query {
    dra_room *r;
    const dra_room_opts *o;
    arena a;
    dra__usage_map nodes;
} query;

dra_node_usage *dra__usage_at(dra__usage_map *m, const char *node) {
    uint64_t probe = hash_bytes(node, strlen(node)), i;
    for (; hmap_get(&m->idx, probe, &i); probe = hash_u64(probe))
        if (!strcmp(m->nodes.v[i - 1].node, node)) return &m->nodes.v[i - 1].d;
    dra__qnode n = {.node = node};
    DRA_VEC_PUSH(m->nodes, n);
    hmap_put(&m->idx, probe, m->nodes.n);
    return &m->nodes.v[m->nodes.n - 1].d;
}

void dra__usage_free(dra__usage_map *m) {
    free(m->nodes.v);
    hmap_free(&m->idx);
}

static dra_node_usage *usage(query *q, const char *node) { return dra__usage_at(&q->nodes, node); }

static json_t *cand_json(const query *q, const dra__cand *c, const dra__rpod *member) {
    json_t *v = json_array();
    for (size_t k = 0; k < c->n; k++) {
        const dra__rpod *p = &q->r->pods.v[c->victims[k]];
        json_array_append_new(v, json_pack("{s:s, s:s, s:i}", "namespace", p->ns, "name", p->name, "priority",
                                           (json_int_t)p->priority));
    }
    json_t *j = json_object();
    if (member) json_object_set_new(j, "pod", json_sprintf("%s/%s", member->ns, member->name));
    json_object_set_new(j, "node", json_string(c->node));
    json_object_set_new(j, "victims", v);
    json_object_set_new(j, "pdbViolations", json_integer(c->pdb));
    json_object_set_new(j, "devices", c->devices ? json_incref(c->devices) : json_array());
    json_object_set_new(j, "exact", json_boolean(c->exact));
    return j;
}

/* kube-scheduler's calculateNumCandidates with the default arguments
 * (minCandidateNodesPercentage 10, minCandidateNodesAbsolute 100). */
static size_t num_candidates(size_t nodes) {
    size_t n = nodes * 10 / 100;
    if (n < 100) n = 100;
    return n > nodes ? nodes : n;
}

/* pickOneNodeForPreemption's order, then the node order (the array's: a stable sort). */
static void sort_candidates(dra__cand *v, size_t n) {
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && dra__cand_cmp(&v[j], &v[j - 1]) < 0; j--) {
            dra__cand t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* The candidates for one pod against the current state, best first (*n of them);
 * nodes where it fits as things are come back with no victims, alone. */
static dra__cand *candidates(query *q, const dra_pod_request *pr, int32_t prio, size_t *n, bool *fits_now) {
    dra_room *r = q->r;
    size_t nn = dra_snapshot_nnodes(r->s), want = num_candidates(nn), nonviolating = 0;
    dra__cand *out = ARENA_NEWN(&q->a, dra__cand, nn + 1);
    bool *potential = ARENA_NEWN(&q->a, bool, nn + 1);
    *n = 0;
    *fits_now = false;
    for (size_t i = 0; i < nn; i++) {
        const char *node = dra_snapshot_node_name(r->s, i);
        arena fa;
        arena_init(&fa, 4096);
        dra_fit f;
        dra__pod_fit_state(pr, r->st, dra__room_base(r, node), usage(q, node), r->x, &fa, node, false, &f, NULL);
        arena_free(&fa);
        /* a node held for another pod (dra_room_take): its free devices are promised, so
         * fitting there now is no fit; victims may still be found there */
        bool held = f.status == DRA_FIT_OK && json_object_get(r->held, node);
        if (f.status == DRA_FIT_OK && !held) out[(*n)++] = (dra__cand){.node = node, .maxprio = INT64_MIN, .exact = true};
        /* nodesWherePreemptionMightHelp: Unschedulable, not UnschedulableAndUnresolvable */
        potential[i] = f.status == DRA_FIT_UNSCHEDULABLE || held;
    }
    if (*n) {
        *fits_now = true;
        return out;
    }
    for (size_t i = 0; i < nn; i++) {
        if (!potential[i]) continue;
        const char *node = dra_snapshot_node_name(r->s, i);
        if (!dra__room_node_search(r, pr, prio, node, usage(q, node), q->o, &q->a, &out[*n])) continue;
        nonviolating += out[*n].pdb == 0;
        (*n)++;
        /* DryRunPreemption stops once it has numCandidates and one violates no PDB */
        if (!q->o->all_nodes && nonviolating && *n >= want) break;
    }
    sort_candidates(out, *n);
    return out;
}

/* The members of p's group that are still to place (p first, then input order), or p. */
static size_t members(const dra_room *r, size_t p, arena *a, uint32_t **out) {
    const dra__rpod *me = &r->pods.v[p];
    *out = ARENA_NEWN(a, uint32_t, r->pods.n + 1);
    size_t n = 0;
    (*out)[n++] = (uint32_t)p;
    for (size_t i = 0; me->group && i < r->pods.n; i++) {
        const dra__rpod *o = &r->pods.v[i];
        if (i != p && o->group && !o->node && !o->gone && !strcmp(o->group, me->group) && !strcmp(o->ns, me->ns))
            (*out)[n++] = (uint32_t)i;
    }
    return n;
}

/* Places a member on c: its victims gone for good, its devices taken, its requests on
 * the node (the next member sees all three). */
static void commit(query *q, const dra_pod_request *pr, const dra__rpod *m, const dra__cand *c) {
    dra_room *r = q->r;
    dra_node_usage *u = usage(q, c->node);
    for (size_t k = 0; k < c->n; k++) {
        dra__room_remove(r, c->victims[k], u);
        r->pods.v[c->victims[k]].evicted = true;
    }
    arena fa;
    arena_init(&fa, 4096);
    dra_fit f;
    dra_podnode kept;
    dra__pod_fit_state(pr, r->st, dra__room_base(r, c->node), u, r->x, &fa, c->node, false, &f, &kept);
    if (f.status == DRA_FIT_OK) {
        for (size_t i = 0; i < kept.ntodo; i++) dra_allocated_add_result(r->st, &kept.res[i], r->cc);
        json_decref(kept.device_plugin);
        json_decref(kept.request_mappings);
    }
    arena_free(&fa);
    if (m->wpod) u->pods++, u->cpu_milli += m->wpod->req_cpu_milli, u->memory += m->wpod->req_memory;
    else u->pods++;
}

/* "not pending" texts for a pod the query cannot make room for; NULL when pending. */
static const char *not_pending(const dra__rpod *p, char *buf, size_t n) {
    const char *phase = json_string_value(json_object_get(json_object_get(p->obj, "status"), "phase"));
    if (p->node) snprintf(buf, n, "pod %s/%s is not pending: it is bound to node %s (spec.nodeName)", p->ns, p->name, p->node);
    else if (json_object_get(json_object_get(p->obj, "metadata"), "deletionTimestamp"))
        snprintf(buf, n, "pod %s/%s is not pending: it is being deleted (metadata.deletionTimestamp)", p->ns, p->name);
    else if (p->gone) snprintf(buf, n, "pod %s/%s is not pending: it has finished (status.phase %s)", p->ns, p->name, phase);
    else return NULL;
    return buf;
}

/* One member: its candidates, listed (the first member alone) or the best committed. */
static bool place(query *q, uint32_t mi, bool group, json_t *out, json_t *cands, err *e) {
    dra_room *r = q->r;
    const dra__rpod *m = &r->pods.v[mi];
    dra_pod_request *pr = dra_pod_request_new(r->s, m->obj, e);
    if (!pr) return false;
    dra_pod_request_check_node(pr, true);
    bool placed = false;
    const char *fatal = dra_pod_request_error(pr);
    if (fatal) {
        json_object_set_new(out, "reason", json_sprintf("%s%s%s%s", group ? "pod " : "", group ? m->name : "", group ? ": " : "", fatal));
    } else if (m->never) {
        /* PodEligibleToPreemptOthers */
        json_object_set_new(out, "reason", json_sprintf("%s%s%snot eligible due to preemptionPolicy=Never.", group ? "pod " : "",
                                                        group ? m->name : "", group ? ": " : ""));
    } else {
        size_t n;
        bool now;
        dra__cand *c = candidates(q, pr, m->priority, &n, &now);
        if (!group) json_object_set_new(out, "fits", json_boolean(now));
        size_t list = q->o->list ? q->o->list : 3;
        for (size_t i = 0; i < n && i < (group ? 1 : list); i++) json_array_append_new(cands, cand_json(q, &c[i], group ? m : NULL));
        if (n && group) commit(q, pr, m, &c[0]);
        for (size_t i = 0; i < n; i++) json_decref(c[i].devices);
        placed = n > 0;
        if (!n)
            json_object_set_new(out, "reason",
                                json_sprintf("%s%s%sno node where evicting pods of priority lower than %d lets it fit%s",
                                             group ? "pod " : "", group ? m->name : "", group ? ": " : "", m->priority,
                                             q->o->allow_pdb_violations ? "" : " without violating a PodDisruptionBudget"));
    }
    dra_pod_request_free(pr);
    return placed;
}

json_t *dra_room_make(dra_room *r, const char *ns, const char *name, const dra_room_opts *o, dra_room_status *status,
                      err *e) {
    *status = DRA_ROOM_ERROR;
    long p = find(r, dra_ns(ns), name);
    if (p < 0) {
        err_set(e, "pod %s/%s not found", dra_ns(ns), name);
        return NULL;
    }
    char buf[1024];
    if (not_pending(&r->pods.v[p], buf, sizeof buf)) {
        err_set(e, "%s", buf);
        return NULL;
    }
    dra_room_opts dflt = {0};
    query q = {.r = r, .o = o ? o : &dflt};
    arena_init(&q.a, 8192);
    dra__room_fresh(r);
    uint32_t *mem;
    size_t nm = members(r, (size_t)p, &q.a, &mem);
    const dra__rpod *me = &r->pods.v[p];
    json_t *out = json_object(), *cands = json_array();
    json_object_set_new(out, "pod", json_sprintf("%s/%s", me->ns, me->name));
    json_object_set_new(out, "priority", json_integer(me->priority));
    json_object_set_new(out, "fits", json_false());
    if (me->group) json_object_set_new(out, "podGroup", json_string(me->group));
    bool ok = true, all = true;
    for (size_t i = 0; ok && all && i < nm; i++) {
        err_clear(e);
        all = place(&q, mem[i], me->group != NULL, out, cands, e);
        ok = !e->msg[0];
    }
    if (me->group && !all) json_array_clear(cands);   /* a group fits whole or not at all */
    if (me->group && all) {
        /* the group fits as things are when no member needed a victim */
        bool none = true;
        for (size_t i = 0; i < json_array_size(cands); i++)
            none &= !json_array_size(json_object_get(json_array_get(cands, i), "victims"));
        json_object_set_new(out, "fits", json_boolean(none));
    }
    json_object_set_new(out, "candidates", cands);
    dra__usage_free(&q.nodes);
    arena_free(&q.a);
    if (!ok) {
        json_decref(out);
        return NULL;
    }
    *status = json_array_size(cands) ? DRA_ROOM_FOUND : DRA_ROOM_NONE;
    return out;
}

bool dra_room_fits_without(dra_room *r, const char *ns, const char *name, const char *node, const json_t *victims,
                           err *e) {
    long p = find(r, dra_ns(ns), name);
    if (p < 0) {
        err_set(e, "pod %s/%s not found", dra_ns(ns), name);
        return false;
    }
    dra_pod_request *pr = dra_pod_request_new(r->s, r->pods.v[p].obj, e);
    if (!pr) return false;
    dra_pod_request_check_node(pr, true);
    /* decided afresh: the claims whose every reserving pod is a victim, counted here */
    dra_allocated *st = dra__allocated_clone(dra__snapshot_allocated(r->s), r->w);
    uint32_t *count = xcalloc(r->claims.n + 1, sizeof *count);
    dra_node_usage d = {0};
    size_t i;
    const json_t *v;
    json_array_foreach(victims, i, v) {
        long vi = find(r, dra_ns(json_string_value(json_object_get(v, "namespace"))),
                       json_string_value(json_object_get(v, "name")) ?: "");
        if (vi < 0) continue;
        const dra__rpod *vp = &r->pods.v[vi];
        for (uint32_t k = 0; k < vp->nclaims; k++) count[vp->claims[k]]++;
        if (vp->wpod && vp->node && !strcmp(vp->node, node))
            d.pods--, d.cpu_milli -= vp->wpod->req_cpu_milli, d.memory -= vp->wpod->req_memory;
    }
    for (size_t c = 0; c < r->claims.n; c++)
        if (count[c] && count[c] == r->claims.v[c].nreservers && !r->claims.v[c].pinned)
            dra__allocated_remove_claim(st, r->claims.v[c].c, r->cc);
    arena fa;
    arena_init(&fa, 4096);
    dra_fit f;
    dra__pod_fit_state(pr, st, dra__room_base(r, node), &d, r->x, &fa, node, false, &f, NULL);
    arena_free(&fa);
    free(count);
    dra_allocated_free(st);
    dra_pod_request_free(pr);
    return f.status == DRA_FIT_OK;
}
