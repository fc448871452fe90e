/* preempt_search.c — the victims on one node (preempt.h says what is searched and
 * why): kube-scheduler's SelectVictimsOnNode as the first answer, then the other
 * choices of which pods to reprieve, branch and bound, for the best set under
 * pickOneNodeForPreemption's order. */
#include "engine/room/preempt_internal.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void dra__room_remove(dra_room *r, uint32_t pi, dra_node_usage *delta) {
    const dra__rpod *p = &r->pods.v[pi];
    for (uint32_t k = 0; k < p->nclaims; k++) {
        dra__rclaim *c = &r->claims.v[p->claims[k]];
        assert(c->removed < c->nreservers);
        /* a claim is freed only when the last pod reserving it goes */
        if (++c->removed == c->nreservers && !c->pinned) dra__allocated_remove_claim(r->st, c->c, r->cc);
    }
    if (p->wpod) delta->pods--, delta->cpu_milli -= p->wpod->req_cpu_milli, delta->memory -= p->wpod->req_memory;
}

void dra__room_restore(dra_room *r, uint32_t pi, dra_node_usage *delta) {
    const dra__rpod *p = &r->pods.v[pi];
    for (uint32_t k = p->nclaims; k-- > 0;) {
        dra__rclaim *c = &r->claims.v[p->claims[k]];
        assert(c->removed > 0);
        if (c->removed-- == c->nreservers && !c->pinned) dra_allocated_add_claim(r->st, c->c, r->cc);
    }
    if (p->wpod) delta->pods++, delta->cpu_milli += p->wpod->req_cpu_milli, delta->memory += p->wpod->req_memory;
}

int dra__cand_cmp(const dra__cand *a, const dra__cand *b) {
    if (a->pdb != b->pdb) return a->pdb < b->pdb ? -1 : 1;
    if (a->maxprio != b->maxprio) return a->maxprio < b->maxprio ? -1 : 1;
    if (a->sum != b->sum) return a->sum < b->sum ? -1 : 1;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    if (a->start != b->start) return a->start > b->start ? -1 : 1;   /* the latest start wins */
    return 0;
}

/* The first four numbers only: what a partial set already costs (they only grow). */
static int cmp4(const dra__cand *a, const dra__cand *b) {
    dra__cand x = *a, y = *b;
    x.start = y.start = 0;
    return dra__cand_cmp(&x, &y);
}

typedef struct search {
    dra_room *r;
    const dra_pod_request *pr;
    const char *node;
    dra_node_usage delta;
    const uint32_t *order;   /* the pods that may go, in reprieve order */
    const bool *violating;
    size_t n;
    uint32_t *cur;           /* the victims so far (order indexes) */
    dra__cand ck;            /* their numbers (cur, n in ck.n) */
    uint32_t *best;
    dra__cand bk;
    bool found, cut;
    uint64_t steps, max_steps;
} search;

static bool fits(search *s) {
    s->steps++;
    arena a;
    arena_init(&a, 4096);
    dra_fit f;
    dra__pod_fit_state(s->pr, s->r->st, dra__room_base(s->r, s->node), &s->delta, s->r->x, &a, s->node, false, &f, NULL);
    arena_free(&a);
    return f.status == DRA_FIT_OK;
}

static void leaf(search *s) {
    /* GetEarliestPodStartTime: the earliest start among the highest-priority victims */
    s->ck.start = INT64_MAX;
    for (size_t i = 0; i < s->ck.n; i++) {
        const dra__rpod *p = &s->r->pods.v[s->order[s->cur[i]]];
        if (p->priority == s->ck.maxprio && p->start_ns < s->ck.start) s->ck.start = p->start_ns;
    }
    if (s->found && dra__cand_cmp(&s->ck, &s->bk) >= 0) return;
    s->found = true;
    s->bk = s->ck;
    memcpy(s->best, s->cur, s->ck.n * sizeof *s->cur);
}

/* Invariant: the preemptor fits with order[i..n) removed and the choices before i
 * made. Reprieving first makes the first leaf kube-scheduler's answer. */
static void dfs(search *s, size_t i) {
    if (i == s->n) {
        leaf(s);
        return;
    }
    if (s->found && s->steps >= s->max_steps) {
        s->cut = true;
        return;
    }
    uint32_t pi = s->order[i];
    dra__room_restore(s->r, pi, &s->delta);
    if (fits(s)) dfs(s, i + 1);
    dra__room_remove(s->r, pi, &s->delta);
    /* i is a victim: its numbers join the set's */
    dra__cand saved = s->ck;
    const dra__rpod *p = &s->r->pods.v[pi];
    s->cur[s->ck.n++] = (uint32_t)i;
    s->ck.pdb += s->violating[i];
    if (p->priority > s->ck.maxprio) s->ck.maxprio = p->priority;
    s->ck.sum += (int64_t)p->priority + ((int64_t)INT32_MAX + 1);
    if (!s->found || cmp4(&s->ck, &s->bk) <= 0) dfs(s, i + 1);
    s->ck = saved;
}

/* MoreImportantVictim for single pods: higher priority, then the earlier start; the
 * input order last (Go's sort.Slice leaves it unspecified). */
static bool more_important(const dra_room *r, uint32_t a, uint32_t b) {
    const dra__rpod *x = &r->pods.v[a], *y = &r->pods.v[b];
    if (x->priority != y->priority) return x->priority > y->priority;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns;
    return a < b;
}

static void sort_by_importance(const dra_room *r, uint32_t *v, size_t n) {
    for (size_t i = 1; i < n; i++)   /* a node runs tens of pods: insertion sort */
        for (size_t j = i; j > 0 && more_important(r, v[j], v[j - 1]); j--) {
            uint32_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* FilterVictimsWithPDBViolation: each matching PDB's disruptionsAllowed spent in the
 * pods' order (a pod in status.disruptedPods spends nothing); a pod that takes one
 * below zero violates it (and spends no more). */
static void classify(const dra_room *r, const uint32_t *pot, size_t n, bool *viol, arena *a) {
    int32_t *allowed = ARENA_NEWN(a, int32_t, r->pdbs.n + 1);
    for (size_t j = 0; j < r->pdbs.n; j++) allowed[j] = r->pdbs.v[j].allowed;
    for (size_t i = 0; i < n; i++) {
        const dra__rpod *p = &r->pods.v[pot[i]];
        viol[i] = false;
        for (size_t j = 0; j < r->pdbs.n && !viol[i]; j++) {
            const dra__pdb *b = &r->pdbs.v[j];
            if (!dra__pdb_selects(b, p) || json_object_get(b->disrupted, p->name)) continue;
            viol[i] = --allowed[j] < 0;
        }
    }
}

static json_t *devices_of(const dra_podnode *kept) {
    json_t *out = json_array();
    for (size_t i = 0; i < kept->ntodo; i++)
        for (uint32_t j = 0; j < kept->res[i].nresults; j++) {
            const dra_device_result *d = &kept->res[i].results[j];
            json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s}", "request", d->request ? d->request : "",
                                                 "driver", d->driver, "pool", d->pool, "device", d->device));
        }
    return out;
}

/* The search's answer as a candidate: the victims most important first, and the
 * devices the preemptor gets with them gone (order[] all removed on entry and exit). */
static void answer(search *s, const dra_room_opts *o, arena *a, dra__cand *out) {
    *out = s->bk;
    out->node = s->node;
    out->exact = !s->cut;
    out->victims = ARENA_NEWN(a, uint32_t, s->bk.n + 1);
    bool *victim = ARENA_NEWN(a, bool, s->n + 1);
    for (size_t k = 0; k < s->bk.n; k++) victim[s->best[k]] = true, out->victims[k] = s->order[s->best[k]];
    sort_by_importance(s->r, out->victims, out->n);
    for (size_t i = 0; i < s->n; i++)
        if (!victim[i]) dra__room_restore(s->r, s->order[i], &s->delta);
    arena fa;
    arena_init(&fa, 4096);
    dra_fit f;
    dra_podnode kept;
    dra__pod_fit_state(s->pr, s->r->st, dra__room_base(s->r, s->node), &s->delta, s->r->x, &fa, s->node, false, &f, &kept);
    assert(f.status == DRA_FIT_OK && "the set found fits");
    out->devices = f.status == DRA_FIT_OK ? devices_of(&kept) : json_array();
    if (f.status == DRA_FIT_OK) json_decref(kept.device_plugin), json_decref(kept.request_mappings);
    arena_free(&fa);
    for (size_t i = 0; i < s->n; i++)
        if (!victim[i]) dra__room_remove(s->r, s->order[i], &s->delta);
    (void)o;
}

bool dra__room_node_search(dra_room *r, const dra_pod_request *pr, int32_t prio, const char *node,
                           const dra_node_usage *base, const dra_room_opts *o, arena *a, dra__cand *out) {
    size_t np;
    const uint32_t *pods = dra__room_node_pods(r, node, &np);
    uint32_t *pot = ARENA_NEWN(a, uint32_t, np + 1);
    size_t n = 0;
    for (size_t i = 0; i < np; i++)
        if (r->pods.v[pods[i]].priority < prio && !r->pods.v[pods[i]].evicted &&
            (!r->movable_only || dra__room_movable(r, pods[i])))
            pot[n++] = pods[i];
    if (!n) return false;   /* "No preemption victims found for incoming pod" */
    sort_by_importance(r, pot, n);
    bool *viol = ARENA_NEWN(a, bool, n);
    classify(r, pot, n, viol, a);
    /* the reprieve order: PDB-violating pods first, each part most important first;
     * without allow_pdb_violations a violating pod stays */
    search s = {.r = r, .pr = pr, .node = node, .delta = *base, .max_steps = o->max_steps ? o->max_steps : 4096};
    uint32_t *order = ARENA_NEWN(a, uint32_t, n);
    bool *violating = ARENA_NEWN(a, bool, n);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if (viol[i] == (pass == 0) && (!viol[i] || o->allow_pdb_violations)) {
                violating[s.n] = viol[i];
                order[s.n++] = pot[i];
            }
    if (!s.n) return false;
    s.order = order;
    s.violating = violating;
    s.cur = ARENA_NEWN(a, uint32_t, s.n);
    s.best = ARENA_NEWN(a, uint32_t, s.n);
    s.ck.maxprio = INT64_MIN;
    if (s.max_steps < s.n + 2) s.max_steps = s.n + 2;   /* room for kube-scheduler's answer */
    for (size_t i = 0; i < s.n; i++) dra__room_remove(r, order[i], &s.delta);
    if (fits(&s)) dfs(&s, 0);
    if (s.found) answer(&s, o, a, out);
    for (size_t i = s.n; i-- > 0;) dra__room_restore(r, order[i], &s.delta);
    return s.found;
}
