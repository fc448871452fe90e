/* alloc.c — the allocator: Kubernetes' structured allocation (incubating and
 * experimental variants of k8s.io/dynamic-resource-allocation) for a set of claims
 * on one node.
 *
 * dra_allocate validates every request first (feature gates, classes, counts, the
 * 32-device claim limit, All-mode device lists, constraint kinds — errors in claim
 * and request order, with Kubernetes' texts), then runs a depth-first search over
 * (claim, request, [subrequest], device slot) exactly in Kubernetes' order: the first
 * complete solution wins. Inside one request the next slot starts after the device
 * chosen for the previous slot (combinations, not permutations).
 *
 * Pruning that never changes the answer: before trying candidates for a slot, the
 * free, selectable candidates left from the start position are counted; when they
 * are fewer than the slots still to fill, the subtree has no solution. Candidates
 * whose selectors would raise a CEL error disable this shortcut (Kubernetes would
 * reach them and abort), so errors surface exactly as upstream. Selector results are
 * cached per (request, candidate) for the call. */
#include "engine/alloc_internal.h"
#include "engine/derived.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { R_FAIL = 0, R_OK = 1, R_ERR = -1, R_MAX = -2 };

dra_alloc_ctx *dra_alloc_ctx_new(void) {
    dra_alloc_ctx *x = xcalloc(1, sizeof *x);
    arena_init(&x->a, 256 * 1024);
    x->cel = cel_eval_ctx_new();
    x->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)x ^ 0x9E3779B97F4A7C15ull;
    return x;
}

void dra_alloc_ctx_free(dra_alloc_ctx *x) {
    if (!x) return;
    cel_eval_ctx_free(x->cel);
    arena_free(&x->a);
    free(x);
}

uint64_t dra_alloc_ctx_steps(const dra_alloc_ctx *x) { return x->steps; }

uint64_t dra_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dra_alloc_ctx_set_deadline(dra_alloc_ctx *x, uint64_t deadline_ns, const _Atomic bool *cancel) {
    x->deadline_ns = deadline_ns;
    x->cancel = cancel;
}

/* Go's allocator checks ctx.Err() per allocateOne; a clock read costs ~20 ns, so
 * it is read every DRA_DEADLINE_EVERY steps instead. */
static bool past_deadline(dra_alloc_ctx *x) {
    if (x->timed_out) return true;
    /* the first step too: a call that starts past its deadline does no work */
    if (x->steps % DRA_DEADLINE_EVERY != 1) return false;
    if ((x->cancel && atomic_load_explicit(x->cancel, memory_order_relaxed)) ||
        (x->deadline_ns && dra_monotonic_ns() >= x->deadline_ns))
        x->timed_out = true;
    return x->timed_out;
}

/* Fills the call's error (message only: allocation errors name the claim in the text,
 * as Kubernetes' do) and returns false. Shared with derived.c. */
bool dra_alloc_fail(dra_alloc_ctx *x, const char *fmt, ...) {
    if (!x->e) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->e->msg, sizeof x->e->msg, fmt, ap);
    va_end(ap);
    x->e->object[0] = x->e->path[0] = '\0';
    x->e->set = true;
    return false;
}

static const char *device_id(dra_alloc_ctx *x, uint32_t cand, char *buf, size_t n) {
    const dra_cand *c = &x->v->cands[cand];
    snprintf(buf, n, "%s/%s/%s", c->slice->driver, c->slice->pool, c->dev->name);
    (void)x;
    return buf;
}

/* ---- selectors ------------------------------------------------------------------ */

static const char *enhance(dra_alloc_ctx *x, const char *msg) {
    if (strstr(msg, "no such key:"))
        return arena_printf(&x->a, "%s. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
                                   "check with has() for optional fields",
                            msg);
    return msg;
}

/* Evaluates one selector list. Returns 1/0, or -1 with *errmsg set. */
static int eval_selectors(dra_alloc_ctx *x, const dra_claim_state *cs, const dra_class *cls, const dra_selector *sels,
                          uint32_t n, const cel_program ***progs, uint32_t cand, const char **errmsg) {
    const dra_device *d = x->v->cands[cand].dev;
    if (n && !*progs) *progs = ARENA_NEWN(&x->a, const cel_program *, n);
    for (uint32_t i = 0; i < n; i++) {
        err e;
        err_clear(&e);
        const cel_program *p = (*progs)[i];
        if (!p) {
            const char *expr = sels[i].cel ? sels[i].cel : "";
            p = (*progs)[i] = cel_cache_get(x->w->cel, expr, strlen(expr), &e);
        }
        if (!p) {
            if (cls) *errmsg = arena_printf(&x->a, "class %s: selector #%u: CEL compile error: %s", cls->name, i, e.msg);
            else *errmsg = arena_printf(&x->a, "claim %s: selector #%u: CEL compile error: %s", dra_claim_obj(x, cs), i, e.msg);
            return -1;
        }
        cel_result r = cel_eval_bool(p, &d->cel, x->cel, &e);
        if (r == CEL_ERROR) {
            char id[512];
            device_id(x, cand, id, sizeof id);
            const char *m = enhance(x, e.msg);
            if (cls)
                *errmsg = arena_printf(&x->a, "class %s: selector #%u on device %s: CEL runtime error: %s", cls->name, i,
                                       id, m);
            else
                *errmsg = arena_printf(&x->a, "claim %s: selector #%u on device %s: CEL runtime error: %s", dra_claim_obj(x, cs), i,
                                       id, m);
            return -1;
        }
        if (r == CEL_FALSE) return 0;
    }
    return 1;
}

/* isSelectable with caching. quiet: do not report an error (the pruning pass). */
static int selectable(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand, bool quiet) {
    const dra_cand *c = &x->v->cands[cand];
    if (!x->f->binding_conditions && c->dev->binding_conditions.n) return 0;
    uint8_t s = rd->sel[cand];
    if (s == 0) {
        const char *msg = NULL;
        int r = 1;
        if (rd->cls) r = eval_selectors(x, cs, rd->cls, rd->cls->selectors, rd->cls->nselectors, &rd->cls_progs, cand, &msg);
        if (r == 1)
            r = eval_selectors(x, cs, NULL, rd->spec->selectors, rd->spec->nselectors, &rd->req_progs, cand, &msg);
        if (r == 1 && c->per_device_node) {
            bool m;
            err e;
            err_clear(&e);
            if (!dra_node_matches(x->v->node, c->dev->node_name, c->dev->all_nodes, c->dev->node_selector, &m, &e)) {
                msg = arena_strdup(&x->a, e.msg);
                r = -1;
            } else if (!m) {
                r = 0;
            }
        }
        if (r == 1 && rd->derived) r = dra_derived_eval(x, cs, rd, cand, &msg);
        if (r < 0) {
            if (!rd->sel_err) rd->sel_err = ARENA_NEWN(&x->a, const char *, x->v->ncands);
            rd->sel_err[cand] = msg;
            s = 3;
        } else {
            s = r ? 2 : 1;
        }
        rd->sel[cand] = s;
    }
    if (s == 3) {
        if (!quiet) dra_alloc_fail(x, "%s", rd->sel_err[cand]);
        return -1;
    }
    return s == 2;
}

/* ---- validation ------------------------------------------------------------------ */

static bool validate(dra_alloc_ctx *x, dra_claim_state *cs, const dra_request_spec *spec, const dra_request *parent,
                     dra_req_data *rd) {
    const dra_features *f = x->f;
    rd->spec = spec;
    rd->parent = parent;
    rd->name = parent ? arena_printf(&x->a, "%s/%s", parent->name, spec->name) : spec->name;
    rd->sel = ARENA_NEWN(&x->a, uint8_t, x->v->ncands ? x->v->ncands : 1);
    rd->applies = ARENA_NEWN(&x->a, bool, cs->claim->nconstraints ? cs->claim->nconstraints : 1);
    for (uint32_t i = 0; i < spec->nselectors; i++)
        if (!spec->selectors[i].cel)
            return dra_alloc_fail(x, "claim %s, request %s, selector #%u: CEL expression empty (unsupported selector type?)", dra_claim_obj(x, cs),
                        spec->name, i);
    if (!f->admin_access && spec->admin_access != -1)
        return dra_alloc_fail(x, "claim %s, request %s: admin access is requested, but the feature is disabled", dra_claim_obj(x, cs), spec->name);
    rd->admin = spec->admin_access == 1;
    if (!spec->class_name || !*spec->class_name)
        return dra_alloc_fail(x, "claim %s, request %s: missing device class name (unsupported request type?)", dra_claim_obj(x, cs), spec->name);
    rd->cls = dra_world_find_class(x->w, spec->class_name);
    if (!rd->cls)
        return dra_alloc_fail(x, "claim %s, request %s: could not retrieve device class %s: deviceclass.resource.k8s.io \"%s\" not found",
                    dra_claim_obj(x, cs), spec->name, spec->class_name, spec->class_name);
    if (!dra_derived_prepare(x, cs, rd)) return false;
    if (!strcmp(spec->mode, "ExactCount")) {
        rd->num_devices = spec->count;
    } else if (!strcmp(spec->mode, "All")) {
        rd->all_mode = true;
        rd->all = ARENA_NEWN(&x->a, uint32_t, x->v->ncands ? x->v->ncands : 1);
        for (uint32_t pi = 0; pi < x->v->npools; pi++) {
            const dra_pool *p = &x->v->pools[pi];
            if (p->incomplete)
                return dra_alloc_fail(x, "claim %s, request %s: asks for all devices, but resource pool %s is currently being updated",
                            dra_claim_obj(x, cs), spec->name, p->id_text);
            if (p->invalid)
                return dra_alloc_fail(x, "claim %s, request %s: asks for all devices, but resource pool %s is currently invalid",
                            dra_claim_obj(x, cs), spec->name, p->id_text);
            for (uint32_t c = p->first_cand; c < p->first_cand + p->ncands; c++) {
                int s = selectable(x, cs, rd, c, false);
                if (s < 0) return false;
                if (!s) continue;
                if (f->consumable_capacity && !dra_rs_capacity_fits(x, rd, c, true)) continue;
                rd->all[rd->nall++] = c;
            }
        }
        rd->num_devices = rd->nall;
    } else {
        return dra_alloc_fail(x, "claim %s, request %s: unsupported count mode %s", dra_claim_obj(x, cs), spec->name, spec->mode);
    }
    return true;
}

static bool constraint_applies(const dra_constraint *k, const dra_req_data *rd) {
    if (k->requests.n == 0) return true;
    const char *base = rd->parent ? rd->parent->name : rd->spec->name;
    for (uint32_t i = 0; i < k->requests.n; i++) {
        if (!strcmp(k->requests.v[i], base)) return true;
        if (rd->parent && !strcmp(k->requests.v[i], rd->name)) return true;
    }
    return false;
}

static bool prepare(dra_alloc_ctx *x, const dra_claim *const *claims, size_t n) {
    const dra_features *f = x->f;
    /* not zeroed as a whole: see dra_claim_state.res */
    x->cs = arena_alloc(&x->a, sizeof(dra_claim_state) * (n ? n : 1));
    x->ncs = n;
    for (size_t ci = 0; ci < n; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        memset(cs, 0, offsetof(dra_claim_state, res));
        const dra_claim *cl = claims[ci];
        cs->claim = cl;
        cs->reqs = ARENA_NEWN(&x->a, dra_req_data *, cl->nreqs ? cl->nreqs : 1);
        cs->nvar = ARENA_NEWN(&x->a, uint32_t, cl->nreqs ? cl->nreqs : 1);
        cs->selected = ARENA_NEWN(&x->a, uint32_t, cl->nreqs ? cl->nreqs : 1);
        int64_t min_claim = 0;
        for (uint32_t ri = 0; ri < cl->nreqs; ri++) {
            const dra_request *r = &cl->reqs[ri];
            bool subs = r->nsubs > 0;
            if (!f->prioritized_list && subs)
                return dra_alloc_fail(x, "claim %s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled",
                            dra_claim_obj(x, cs), r->name);
            if (!f->consumable_capacity) {
                if (r->has_exactly && r->exactly.has_capacity)
                    return dra_alloc_fail(x, "claim %s, request %s: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                                dra_claim_obj(x, cs), r->name);
                for (uint32_t s = 0; s < r->nsubs; s++)
                    if (r->subs[s].has_capacity)
                        return dra_alloc_fail(x,
                                    "claim %s, subrequest %s: has capacity requests, but the DRAConsumableCapacity feature is "
                                    "disabled",
                                    dra_claim_obj(x, cs), r->subs[s].name);
            }
            cs->nvar[ri] = subs ? r->nsubs : 1;
            cs->reqs[ri] = ARENA_NEWN(&x->a, dra_req_data, cs->nvar[ri]);
            if (subs) {
                int64_t mn = INT64_MAX;
                for (uint32_t s = 0; s < r->nsubs; s++) {
                    if (!validate(x, cs, &r->subs[s], r, &cs->reqs[ri][s])) return false;
                    if (cs->reqs[ri][s].num_devices < mn) mn = cs->reqs[ri][s].num_devices;
                }
                min_claim += mn;
            } else {
                if (!validate(x, cs, &r->exactly, NULL, &cs->reqs[ri][0])) return false;
                min_claim += cs->reqs[ri][0].num_devices;
            }
        }
        if (min_claim > DRA_RESULTS_MAX)
            return dra_alloc_fail(x, "claim %s: number of requested devices %lld exceeds the claim limit of %d", dra_claim_obj(x, cs),
                        (long long)min_claim, DRA_RESULTS_MAX);
        cs->ncons = cl->nconstraints;
        cs->cons = cs->ncons ? ARENA_NEWN(&x->a, dra_cstate, cs->ncons) : NULL;
        for (uint32_t k = 0; k < cl->nconstraints; k++) {
            const dra_constraint *c = &cl->constraints[k];
            if (!c->match_attr && !c->distinct_attr)
                return dra_alloc_fail(x, "claim %s, constraint #%u: empty constraint (unsupported constraint type?)", dra_claim_obj(x, cs), k);
            dra_cons_init(&cs->cons[k], c, x->w->names, f->list_type_attributes);
            for (uint32_t ri = 0; ri < cl->nreqs; ri++)
                for (uint32_t s = 0; s < cs->nvar[ri]; s++) cs->reqs[ri][s].applies[k] = constraint_applies(c, &cs->reqs[ri][s]);
        }
    }
    return true;
}

/* ---- the search ---------------------------------------------------------------------- */

static bool allocating_for_claim(const dra_claim_state *cs, uint32_t cand) {
    for (uint32_t i = 0; i < cs->nres; i++)
        if (cs->res[i].cand == cand && cs->res[i].marked) return true;
    return false;
}

static void new_share_id(dra_alloc_ctx *x, char *buf) {
    uint64_t a = x->rng = x->rng * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t b = x->rng = x->rng * 6364136223846793005ull + 1442695040888963407ull;
    snprintf(buf, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
             (unsigned)a & 0xfff, (unsigned)((b >> 48) & 0x3fff) | 0x8000, (unsigned long long)(b & 0xffffffffffffull));
}

static void undo_constraints(dra_claim_state *cs, const dra_req_data *rd, uint32_t upto) {
    for (uint32_t k = upto; k-- > 0;)
        if (rd->applies[k]) dra_cons_remove(&cs->cons[k]);
}

/* Kubernetes' allocateDevice: 1 allocated, 0 not usable, -1 error. */
static int allocate_device(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t cand, bool must) {
    const dra_features *f = x->f;
    const dra_device *d = x->v->cands[cand].dev;
    bool multi = f->consumable_capacity && d->allow_multi;
    if (!multi && rd->admin && allocating_for_claim(cs, cand)) return 0;
    if (!rd->admin && dra_rs_device_in_use(x, cand)) return 0;
    if (!f->partitionable && d->nconsumes) return 0;
    bool skip_counters = multi && dra_rs_capacity_in_use(x, cand);
    bool counters = false;
    if (!skip_counters && d->nconsumes) {
        if (!dra_rs_counters_take(x, cand)) return 0;
        counters = true;
    }
    if (f->device_taints && dra_rs_taint_blocks(d, rd->spec)) {
        if (counters) dra_rs_counters_give(x, cand);
        return 0;
    }
    for (uint32_t k = 0; k < cs->ncons; k++) {
        if (!rd->applies[k]) continue;
        if (x->f->derived_attributes) dra_derived_bind(x, rd, k, cand, &cs->cons[k]);
        if (!dra_cons_add(&cs->cons[k], &x->a, &x->v->cands[cand])) {
            undo_constraints(cs, rd, k);
            if (counters) dra_rs_counters_give(x, cand);
            if (must) {
                char id[512];
                dra_alloc_fail(x, "claim %s, request %s: cannot add device %s because a claim constraint would not be satisfied",
                     dra_claim_obj(x, cs), rd->spec->name, device_id(x, cand, id, sizeof id));
                return -1;
            }
            return 0;
        }
    }
    dra_res_entry *re = &cs->res[cs->nres];
    memset(re, 0, sizeof *re);
    re->cand = cand;
    re->rd = rd;
    re->counters = counters;
    if (!multi) {
        x->allocating[cand]++;
        re->marked = true;
    }
    if (f->consumable_capacity) {
        if (!dra_rs_capacity_fits(x, rd, cand, false)) {
            if (re->marked) x->allocating[cand]--;
            undo_constraints(cs, rd, cs->ncons);
            if (counters) dra_rs_counters_give(x, cand);
            return 0;
        }
        if (multi) {
            re->consumed = ARENA_NEWN(&x->a, quantity, d->cel.ncaps ? d->cel.ncaps : 1);
            dra_rs_capacity_consumed(x, rd, cand, re->consumed);
            dra_rs_capacity_add(x, cand, re->consumed);
            re->cap_inserted = true;
            char *sid = arena_alloc(&x->a, 40);
            new_share_id(x, sid);
            re->share_id = sid;
        }
    }
    cs->nres++;
    return 1;
}

static void deallocate_last(dra_alloc_ctx *x, dra_claim_state *cs) {
    dra_res_entry *re = &cs->res[--cs->nres];
    if (re->cap_inserted) dra_rs_capacity_sub(x, re->cand, re->consumed);
    if (re->marked) x->allocating[re->cand]--;
    undo_constraints(cs, re->rd, cs->ncons);
    if (re->counters) dra_rs_counters_give(x, re->cand);
}

/* Upper bound on the devices still obtainable for this slot; -1 when unknown (some
 * candidate would raise a CEL error, which Kubernetes would report). */
static int64_t count_free(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t start, int64_t need) {
    int64_t n = 0;
    const dra_nodeview *v = x->v;
    for (uint32_t c = start; c < v->ncands; c++) {
        const dra_pool *p = &v->pools[v->cands[c].pool];
        if (p->incomplete || p->invalid) {
            c = p->first_cand + p->ncands - 1;
            continue;
        }
        if (rd->admin ? allocating_for_claim(cs, c) : dra_rs_device_in_use(x, c)) continue;
        int s = selectable(x, cs, rd, c, true);
        if (s < 0) return -1;
        if (s && ++n >= need) return n;
    }
    return n;
}

/* Adds the free candidates a request variant could take to the union in x->mark;
 * false when one of them would raise a CEL error (then nothing may be pruned). */
static bool mark_candidates(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t start, uint32_t *n) {
    const dra_nodeview *v = x->v;
    if (rd->all_mode) {
        for (uint32_t i = 0; i < rd->nall; i++) {
            uint32_t c = rd->all[i];
            if (!dra_rs_device_in_use(x, c) && !x->mark[c]) x->mark[c] = 1, (*n)++;
        }
        return true;
    }
    for (uint32_t c = start; c < v->ncands; c++) {
        const dra_pool *p = &v->pools[v->cands[c].pool];
        if (p->incomplete || p->invalid) {
            c = p->first_cand + p->ncands - 1;
            continue;
        }
        if (x->mark[c] || dra_rs_device_in_use(x, c)) continue;
        int s = selectable(x, cs, rd, c, true);
        if (s < 0) return false;
        if (s) x->mark[c] = 1, (*n)++;
    }
    return true;
}

/* Whole-claim feasibility: every device serves one slot of one non-admin request, so
 * the slots still to fill in this claim cannot outnumber the free devices any of the
 * remaining requests could take. Without this, two requests that together want more
 * devices than are free would enumerate every combination of the first. Skipped with
 * consumable capacity (a multi-allocatable device serves many slots). */
static bool claim_infeasible(dra_alloc_ctx *x, dra_claim_state *cs, uint32_t ri, dra_req_data *rd, int64_t need,
                             uint32_t start) {
    const dra_claim *cl = cs->claim;
    if (x->f->consumable_capacity || rd->admin || ri + 1 >= cl->nreqs) return false;
    int64_t total = need;
    for (uint32_t r = ri + 1; r < cl->nreqs; r++) {
        int64_t mn = INT64_MAX;
        for (uint32_t s = 0; s < cs->nvar[r]; s++) {
            const dra_req_data *o = &cs->reqs[r][s];
            int64_t k = o->admin ? 0 : o->num_devices;
            if (k < mn) mn = k;
        }
        if (mn > 0) total += mn;
    }
    if (total <= need) return false;
    memset(x->mark, 0, x->v->ncands);
    uint32_t n = 0;
    if (!mark_candidates(x, cs, rd, start, &n)) return false;
    for (uint32_t r = ri + 1; r < cl->nreqs; r++)
        for (uint32_t s = 0; s < cs->nvar[r]; s++) {
            dra_req_data *o = &cs->reqs[r][s];
            if (o->admin) continue;
            if (!mark_candidates(x, cs, o, 0, &n)) return false;
        }
    return (int64_t)n < total;
}

static int alloc_one(dra_alloc_ctx *x, uint32_t ci, uint32_t ri, uint32_t si, int64_t di, bool in_sub, uint32_t start) {
    x->steps++;
    if ((x->deadline_ns || x->cancel) && past_deadline(x)) return R_ERR;
    if (ci >= x->ncs) return R_OK;
    dra_claim_state *cs = &x->cs[ci];
    const dra_claim *cl = cs->claim;
    if (ri >= cl->nreqs) {
        int r = alloc_one(x, ci + 1, 0, 0, 0, false, 0);
        return r == R_MAX ? R_FAIL : r;
    }
    if (!in_sub && cl->reqs[ri].nsubs > 0) {
        bool all_exceeded = true;
        for (uint32_t s = 0; s < cs->nvar[ri]; s++) {
            int r = alloc_one(x, ci, ri, s, 0, true, 0);
            if (r == R_MAX) continue;
            all_exceeded = false;
            if (r == R_ERR) return r;
            if (r == R_OK) {
                cs->selected[ri] = s;
                return R_OK;
            }
        }
        return all_exceeded ? R_MAX : R_FAIL;
    }
    dra_req_data *rd = &cs->reqs[ri][si];
    if (rd->all_mode && rd->nall == 0) return R_FAIL;
    if (di >= rd->num_devices) return alloc_one(x, ci, ri + 1, 0, 0, false, 0);
    if ((int64_t)cs->nres + rd->num_devices - di > DRA_RESULTS_MAX) return R_MAX;
    if (rd->all_mode) {
        int ok = allocate_device(x, cs, rd, rd->all[di], true);
        if (ok < 0) return R_ERR;
        if (!ok) return R_FAIL;
        int r = alloc_one(x, ci, ri, si, di + 1, in_sub, 0);
        if (r != R_OK) deallocate_last(x, cs);
        return r;
    }
    int64_t need = rd->num_devices - di;
    int64_t avail = count_free(x, cs, rd, start, need);
    if (avail >= 0 && avail < need) return R_FAIL;
    if (claim_infeasible(x, cs, ri, rd, need, start)) return R_FAIL;
    const dra_nodeview *v = x->v;
    for (uint32_t c = start; c < v->ncands; c++) {
        const dra_pool *p = &v->pools[v->cands[c].pool];
        if (p->incomplete || p->invalid) {
            c = p->first_cand + p->ncands - 1;
            continue;
        }
        if (rd->admin && allocating_for_claim(cs, c)) continue;
        if (!rd->admin && dra_rs_device_in_use(x, c)) continue;
        int s = selectable(x, cs, rd, c, false);
        if (s < 0) return R_ERR;
        if (!s) continue;
        if (x->f->consumable_capacity && !dra_rs_capacity_fits(x, rd, c, false)) continue;
        int ok = allocate_device(x, cs, rd, c, false);
        if (ok < 0) return R_ERR;
        if (!ok) continue;
        int r = alloc_one(x, ci, ri, si, di + 1, in_sub, c + 1);
        if (r == R_OK) return R_OK;
        deallocate_last(x, cs);
        if (r != R_FAIL) return r;
    }
    return R_FAIL;
}

/* ---- results ----------------------------------------------------------------------------- */

static bool strs_has(const dra_strs *s, const char *v) {
    for (uint32_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], v)) return true;
    return false;
}

static void build_configs(dra_alloc_ctx *x, dra_claim_state *cs, dra_alloc_result *out) {
    const dra_claim *cl = cs->claim;
    uint32_t total = 0;
    for (uint32_t ri = 0; ri < cl->nreqs; ri++) {
        const dra_req_data *rd = &cs->reqs[ri][cl->reqs[ri].nsubs ? cs->selected[ri] : 0];
        if (rd->cls) total += rd->cls->nconfigs;
    }
    total += cl->nconfigs;
    if (!total) return;
    dra_config *cfg = ARENA_NEWN(&x->a, dra_config, total);
    uint32_t n = 0;
    /* class configs: once per class, later requests of the class append their name */
    const dra_class **seen = ARENA_NEWN(&x->a, const dra_class *, cl->nreqs ? cl->nreqs : 1);
    uint32_t *start = ARENA_NEWN(&x->a, uint32_t, cl->nreqs ? cl->nreqs : 1);
    uint32_t *end = ARENA_NEWN(&x->a, uint32_t, cl->nreqs ? cl->nreqs : 1);
    uint32_t nseen = 0;
    const char ***reqnames = ARENA_NEWN(&x->a, const char **, total);
    for (uint32_t ri = 0; ri < cl->nreqs; ri++) {
        const dra_req_data *rd = &cs->reqs[ri][cl->reqs[ri].nsubs ? cs->selected[ri] : 0];
        if (!rd->cls) continue;
        uint32_t j;
        for (j = 0; j < nseen; j++)
            if (seen[j] == rd->cls) break;
        if (j < nseen) {
            for (uint32_t k = start[j]; k < end[j]; k++) cfg[k].requests.v[cfg[k].requests.n++] = rd->name;
            continue;
        }
        seen[nseen] = rd->cls;
        start[nseen] = n;
        for (uint32_t k = 0; k < rd->cls->nconfigs; k++) {
            cfg[n] = rd->cls->configs[k];
            cfg[n].source = "FromClass";
            reqnames[n] = ARENA_NEWN(&x->a, const char *, cl->nreqs);
            cfg[n].requests.v = reqnames[n];
            cfg[n].requests.n = 0;
            cfg[n].requests.v[cfg[n].requests.n++] = rd->name;
            n++;
        }
        end[nseen++] = n;
    }
    for (uint32_t k = 0; k < cl->nconfigs; k++) {
        const dra_config *c = &cl->configs[k];
        bool include = c->requests.n == 0;
        for (uint32_t ri = 0; ri < cl->nreqs && !include; ri++) {
            if (strs_has(&c->requests, cl->reqs[ri].name)) include = true;
            else if (cl->reqs[ri].nsubs && strs_has(&c->requests, cs->reqs[ri][cs->selected[ri]].name)) include = true;
        }
        if (!include) continue;
        cfg[n] = *c;
        cfg[n].source = "FromClaim";
        n++;
    }
    /* a config naming every request applies to all: clear its list */
    for (uint32_t k = 0; k < n; k++) {
        if (!cfg[k].requests.n) continue;
        bool all = true;
        for (uint32_t ri = 0; ri < cl->nreqs && all; ri++) {
            if (strs_has(&cfg[k].requests, cl->reqs[ri].name)) continue;
            if (cl->reqs[ri].nsubs && strs_has(&cfg[k].requests, cs->reqs[ri][cs->selected[ri]].name)) continue;
            all = false;
        }
        if (all) cfg[k].requests = (dra_strs){0};
    }
    out->configs = cfg;
    out->nconfigs = n;
}

static bool same_req(const dra_ns_req *a, const dra_ns_req *b) {
    if (strcmp(a->key, b->key) || strcmp(a->op_text ? a->op_text : "", b->op_text ? b->op_text : "")) return false;
    for (uint32_t i = 0; i < a->values.n; i++)
        if (!strs_has(&b->values, a->values.v[i])) return false;
    for (uint32_t i = 0; i < b->values.n; i++)
        if (!strs_has(&a->values, b->values.v[i])) return false;
    return true;
}

static void merge_reqs(const dra_ns_req *from, uint32_t n, dra_ns_req *to, uint32_t *nto) {
    for (uint32_t i = 0; i < n; i++) {
        bool dup = false;
        for (uint32_t j = 0; j < *nto && !dup; j++) dup = same_req(&to[j], &from[i]);
        if (!dup) to[(*nto)++] = from[i];
    }
}

static bool build_node_selector(dra_alloc_ctx *x, dra_claim_state *cs, dra_alloc_result *out) {
    uint32_t nf = 0, ne = 0;
    for (uint32_t i = 0; i < cs->nres; i++) {
        const dra_cand *c = &x->v->cands[cs->res[i].cand];
        const dra_node_selector *s = c->per_device_node ? c->dev->node_selector : c->slice->node_selector;
        if (s && s->nterms == 1) nf += s->terms[0].nfields, ne += s->terms[0].nexprs;
    }
    dra_ns_term *t = ARENA_NEW(&x->a, dra_ns_term);
    t->fields = ARENA_NEWN(&x->a, dra_ns_req, nf ? nf : 1);
    t->exprs = ARENA_NEWN(&x->a, dra_ns_req, ne ? ne : 1);
    for (uint32_t i = 0; i < cs->nres; i++) {
        const dra_cand *c = &x->v->cands[cs->res[i].cand];
        const char *nn = c->per_device_node ? c->dev->node_name : c->slice->node_name;
        const dra_node_selector *s = c->per_device_node ? c->dev->node_selector : c->slice->node_selector;
        if (nn || c->dev->binds_to_node) {
            dra_node_selector *ns = ARENA_NEW(&x->a, dra_node_selector);
            ns->terms = ARENA_NEW(&x->a, dra_ns_term);
            ns->nterms = 1;
            ns->terms[0].fields = ARENA_NEW(&x->a, dra_ns_req);
            ns->terms[0].nfields = 1;
            dra_ns_req *r = &ns->terms[0].fields[0];
            r->key = "metadata.name";
            r->op_text = "In";
            r->op = DRA_NS_IN;
            r->values.v = ARENA_NEW(&x->a, const char *);
            r->values.v[0] = x->v->node->name;
            r->values.n = 1;
            out->node_selector = ns;
            return true;
        }
        if (!s || s->nterms == 0) continue;
        if (s->nterms > 1)
            return dra_alloc_fail(x, "create NodeSelector for claim %s: unsupported ResourceSlice.NodeSelector with %u terms",
                        cs->claim->name, s->nterms);
        merge_reqs(s->terms[0].fields, s->terms[0].nfields, t->fields, &t->nfields);
        merge_reqs(s->terms[0].exprs, s->terms[0].nexprs, t->exprs, &t->nexprs);
    }
    if (t->nfields || t->nexprs) {
        dra_node_selector *ns = ARENA_NEW(&x->a, dra_node_selector);
        ns->terms = t;
        ns->nterms = 1;
        out->node_selector = ns;
    }
    return true;
}

static bool build_results(dra_alloc_ctx *x) {
    x->out = ARENA_NEWN(&x->a, dra_alloc_result, x->ncs ? x->ncs : 1);
    for (size_t ci = 0; ci < x->ncs; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        dra_alloc_result *o = &x->out[ci];
        o->results = ARENA_NEWN(&x->a, dra_device_result, cs->nres ? cs->nres : 1);
        o->nresults = cs->nres;
        for (uint32_t i = 0; i < cs->nres; i++) {
            const dra_res_entry *re = &cs->res[i];
            const dra_cand *c = &x->v->cands[re->cand];
            dra_device_result *r = &o->results[i];
            r->request = re->rd->name;
            r->driver = c->slice->driver;
            r->pool = c->slice->pool;
            r->device = c->dev->name;
            r->admin_access = re->rd->admin ? 1 : -1;
            r->tols = re->rd->spec->tols;
            r->ntols = re->rd->spec->ntols;
            r->share_id = re->share_id;
            if (re->consumed && c->dev->cel.ncaps) {
                r->consumed = ARENA_NEWN(&x->a, dra_cap_value, c->dev->cel.ncaps);
                for (uint32_t k = 0; k < c->dev->cel.ncaps; k++)
                    r->consumed[k] = (dra_cap_value){c->dev->caps[k].key, re->consumed[k]};
                r->nconsumed = c->dev->cel.ncaps;
            }
            if (x->f->binding_conditions) {
                r->binding_conditions = c->dev->binding_conditions;
                r->binding_failure_conditions = c->dev->binding_failure_conditions;
            }
        }
        build_configs(x, cs, o);
        if (!build_node_selector(x, cs, o)) return false;
    }
    return true;
}

dra_alloc_status dra_allocate(dra_alloc_ctx *x, const dra_nodeview *v, const dra_allocated *state,
                              const dra_claim *const *claims, size_t nclaims, dra_alloc_result **out, err *e) {
    arena_clear(&x->a);
    x->steps = 0;
    x->timed_out = false;
    x->v = v;
    x->w = v->w;
    x->st = state;
    x->f = &v->f;
    x->e = e;
    x->out = NULL;
    uint32_t nc = v->ncands ? v->ncands : 1;
    x->allocating = ARENA_NEWN(&x->a, uint16_t, nc);
    /* capacity bookkeeping only exists with DRAConsumableCapacity */
    x->cap_alloc = v->f.consumable_capacity ? ARENA_NEWN(&x->a, quantity *, nc) : NULL;
    x->cap_shares = v->f.consumable_capacity ? ARENA_NEWN(&x->a, uint16_t, nc) : NULL;
    x->mark = ARENA_NEWN(&x->a, uint8_t, nc);
    x->st_use = state ? ARENA_NEWN(&x->a, uint8_t, nc) : NULL;
    x->cnt_avail = ARENA_NEWN(&x->a, quantity *, v->npools ? v->npools : 1);
    x->cnt_used = ARENA_NEWN(&x->a, quantity *, v->npools ? v->npools : 1);
    if (out) *out = NULL;
    if (!prepare(x, claims, nclaims)) return DRA_ALLOC_ERROR;
    int r = alloc_one(x, 0, 0, 0, 0, false, 0);
    if (x->timed_out) {
        err_set(e, "timed out trying to allocate devices");
        return DRA_ALLOC_TIMEOUT;
    }
    if (r == R_ERR) return DRA_ALLOC_ERROR;
    if (r != R_OK) {
        for (uint32_t i = 0; i < v->npools; i++)
            if (v->pools[i].invalid) {
                dra_alloc_fail(x, "invalid resource pools were encountered");
                return DRA_ALLOC_NODE_ERROR;
            }
        return DRA_ALLOC_UNSAT;
    }
    if (!build_results(x)) return DRA_ALLOC_ERROR;
    if (out) *out = x->out;
    return DRA_ALLOC_OK;
}

/* ---- diagnostics ------------------------------------------------------------------------ */

size_t dra_alloc_explain(dra_alloc_ctx *x, char *buf, size_t n) {
    size_t off = 0;
    if (!n) return 0;
    buf[0] = '\0';
    if (!x->v || !x->cs) return 0;
    const dra_nodeview *v = x->v;
    uint32_t usable = 0, incomplete = 0, invalid = 0;
    for (uint32_t p = 0; p < v->npools; p++) {
        if (v->pools[p].incomplete) incomplete++;
        else if (v->pools[p].invalid) invalid++;
        else usable += v->pools[p].ncands;
    }
#define OUT(...)                                                                       \
    do {                                                                               \
        if (off < n) off += (size_t)snprintf(buf + off, n - off, __VA_ARGS__);        \
    } while (0)
    OUT("node %s: %u pool(s), %u device(s) in complete and valid pools", v->node ? v->node->name : "?", v->npools,
        usable);
    if (incomplete) OUT(", %u pool(s) incomplete (being updated)", incomplete);
    if (invalid) OUT(", %u pool(s) invalid", invalid);
    OUT("\n");
    for (size_t ci = 0; ci < x->ncs; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        for (uint32_t ri = 0; ri < cs->claim->nreqs; ri++)
            for (uint32_t s = 0; s < cs->nvar[ri]; s++) {
                dra_req_data *rd = &cs->reqs[ri][s];
                uint32_t match = 0, fr = 0;
                bool errs = false;
                for (uint32_t c = 0; c < v->ncands; c++) {
                    const dra_pool *p = &v->pools[v->cands[c].pool];
                    if (p->incomplete || p->invalid) continue;
                    int sel = selectable(x, cs, rd, c, true);
                    if (sel < 0) errs = true;
                    if (sel <= 0) continue;
                    match++;
                    uint64_t val;
                    if (rd->admin || !x->st || !hmap_get(&x->st->devices, v->cands[c].key, &val)) fr++;
                }
                OUT("  claim %s, request %s: wants %s%lld, %u device(s) match class %s and the selectors, %u of them "
                    "not allocated yet%s\n",
                    dra_claim_obj(x, cs), rd->name, rd->all_mode ? "all, i.e. " : "", (long long)rd->num_devices, match,
                    rd->cls ? rd->cls->name : "?", fr, errs ? " (some selectors fail to evaluate)" : "");
            }
        if (cs->claim->nconstraints) OUT("  claim %s has %u constraint(s) that must hold as well\n", dra_claim_obj(x, cs), cs->claim->nconstraints);
    }
#undef OUT
    return off < n ? off : n - 1;
}
