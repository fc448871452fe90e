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
 * Pruning that never changes the answer (a subtree is skipped only when it provably
 * holds no solution and Kubernetes would leave it with a plain failure, not an
 * error or the 32-results signal): count_free — the free, selectable candidates
 * left for a slot — and the claim bound (claim_bound_fails: per-request candidates
 * under the constraints' current state, distinct values, a flow through devices,
 * shared counters and consumable capacity; branching on an unfixed matchAttribute
 * value; running on into later claims; static_pass for claims no state satisfies).
 * Candidates whose selectors would raise a CEL error stop every bound before them,
 * so errors surface exactly as upstream. dra_alloc_ctx.no_prune turns all of it off
 * (tests compare both searches). Selector results are cached per (request,
 * candidate) for the call. The search keeps its pending calls on an explicit stack
 * (search), so any number of claims fits. */
#include "engine/alloc/alloc_internal.h"
#include "engine/alloc/classes.h"
#include "engine/alloc/derived.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

enum { R_FAIL = 0, R_OK = 1, R_ERR = -1, R_MAX = -2 };

dra_alloc_ctx *dra_alloc_ctx_new(void) {
    dra_alloc_ctx *x = xcalloc(1, sizeof *x);
    arena_init(&x->a, 256 * 1024);
    x->cel = cel_eval_ctx_new();
    /* shareIDs must not be guessable or repeat across schedulers: seed from the
     * kernel; the clock and an address only if getrandom is unavailable */
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)x ^ 0x9E3779B97F4A7C15ull;
    x->rng = seed;
    x->choice = DRA_CHOICE_FIRST_FIT;
    return x;
}

void dra_alloc_ctx_set_seed(dra_alloc_ctx *x, uint64_t seed) {
    x->rng = seed;
}

void dra_alloc_ctx_free(dra_alloc_ctx *x) {
    if (!x) return;
    free(x->sel_keep);
    cel_eval_ctx_free(x->cel);
    arena_free(&x->a);
    free(x);
}

uint64_t dra_alloc_ctx_steps(const dra_alloc_ctx *x) { return x->steps; }

void dra_alloc_ctx_set_reasons(dra_alloc_ctx *x, bool on) { x->no_reasons = !on; }
bool dra_alloc_ctx_reasons(const dra_alloc_ctx *x) { return !x->no_reasons; }

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
        (x->deadline_ns && monotonic_ns() >= x->deadline_ns) || (x->bf && dra__bestfit_spent(x)))
        x->timed_out = true;
    return x->timed_out;
}

bool dra__alloc_tick(dra_alloc_ctx *x) {
    if (x->timed_out) return true;
    if (!x->deadline_ns && !x->cancel) return false;
    if (++x->ticks % 256) return false;
    if ((x->cancel && atomic_load_explicit(x->cancel, memory_order_relaxed)) ||
        (x->deadline_ns && monotonic_ns() >= x->deadline_ns) || (x->bf && dra__bestfit_spent(x)))
        x->timed_out = true;
    return x->timed_out;
}

/* Fills the call's error (message only: allocation errors name the claim in the text,
 * as Kubernetes' do) and returns false. Shared with derived.c. */
bool dra__alloc_fail(dra_alloc_ctx *x, const char *fmt, ...) {
    if (!x->e) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->e->msg, sizeof x->e->msg, fmt, ap);
    va_end(ap);
    x->e->object[0] = x->e->path[0] = '\0';
    x->e->set = true;
    return false;
}

static const char *cand_id(const dra_cand *c, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s/%s", c->slice->driver, c->slice->pool, c->dev->name);
    return buf;
}

static const char *device_id(dra_alloc_ctx *x, uint32_t cand, char *buf, size_t n) {
    return cand_id(&x->v->cands[cand], buf, n);
}

/* ---- selectors ------------------------------------------------------------------ */

static const char *enhance(dra_alloc_ctx *x, const char *msg) {
    if (strstr(msg, "no such key:"))
        return arena_printf(&x->a, "%s. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
                                   "check with has() for optional fields",
                            msg);
    return msg;
}

/* Evaluates one selector list (compiled when its object was decoded). Returns 1/0, or
 * -1 with *errmsg set: a compile error surfaces when a device reaches the selector, as
 * Kubernetes' lazy compilation reports it. */
static int eval_selectors(dra_alloc_ctx *x, const dra_claim_state *cs, const dra_class *cls, const dra_selector *sels,
                          uint32_t n, const dra_cand *c, const char **errmsg) {
    const dra_device *d = c->dev;
    for (uint32_t i = 0; i < n; i++) {
        err e;
        err_clear(&e);
        const cel_program *p = sels[i].prog;
        if (!p) {
            const char *ce = sels[i].compile_error ? sels[i].compile_error : "";
            /* upstream's CompilationResult.Error: "compilation failed: " before cel-go's
             * issues ("ERROR: <input>:..."), nothing before its own type checks */
            const char *pre = strncmp(ce, "ERROR:", 6) ? "" : "compilation failed: ";
            if (cls) *errmsg = arena_printf(&x->a, "class %s: selector #%u: CEL compile error: %s%s", cls->name, i, pre, ce);
            else *errmsg = arena_printf(&x->a, "claim %s: selector #%u: CEL compile error: %s%s", dra_claim_obj(x, cs), i, pre, ce);
            return -1;
        }
        cel_result r = cel_eval_bool(p, &d->cel, x->cel, &e);
        if (r == CEL_ERROR) {
            char id[512];
            cand_id(c, id, sizeof id);
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

/* The first candidate at or after c whose pool may be allocated from (complete and
 * valid; a pool's candidates are contiguous from first_cand), v->ncands when none is:
 * the walks over candidates skip an incomplete or invalid pool whole, as Kubernetes
 * skips the pool. */
static inline uint32_t next_usable_cand(const dra_nodeview *v, uint32_t c) {
    while (c < v->ncands) {
        const dra_pool *p = &v->pools[v->cands[c].pool];
        if (!p->incomplete && !p->invalid) return c;
        c = p->first_cand + p->ncands;
    }
    return c;
}

/* isSelectable's selectors and per-device node selection (and derived attributes),
 * cached per (request, candidate, dra_sel_state): 1 yes, 0 no, -1 error (reported
 * unless quiet). */
static int matches(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand, bool quiet) {
    const dra_cand *c = &x->v->cands[cand];
    dra_sel_state s = rd->sel[cand];
    if (s == SEL_UNKNOWN) {
        const char *msg = NULL;
        int r = 1;
        if (rd->cls) r = eval_selectors(x, cs, rd->cls, rd->cls->selectors, rd->cls->nselectors, c, &msg);
        if (r == 1)
            r = eval_selectors(x, cs, NULL, rd->spec->selectors, rd->spec->nselectors, c, &msg);
        if (r == 1 && c->per_device_node) {
            bool m;
            err e;
            err_clear(&e);
            if (!dra__node_matches(x->v->node, c->dev->node_name, c->dev->all_nodes, c->dev->node_selector, &m, &e)) {
                msg = arena_strdup(&x->a, e.msg);
                r = -1;
            } else if (!m) {
                r = 0;
            }
        }
        if (r == 1 && rd->derived) r = dra__derived_eval(x, cs, rd, cand, &msg);   /* 2: an error pending */
        if (r < 0) {
            if (!rd->sel_err) rd->sel_err = ARENA_NEWN(&x->a, const char *, x->v->ncands);
            rd->sel_err[cand] = msg;
            s = SEL_ERROR;
        } else {
            s = r == 2 ? SEL_YES_DERIVED_ERROR : r ? SEL_YES : SEL_NO;
        }
        rd->sel[cand] = (uint8_t)s;
    }
    /* selected, but a derived attribute failed to evaluate: reported by allocate_device
     * at the constraint that looks it up; the pruning passes see "may raise an error" */
    if (s == SEL_YES_DERIVED_ERROR) return quiet ? -1 : 1;
    if (s == SEL_ERROR) {
        if (!quiet) dra__alloc_fail(x, "%s", rd->sel_err[cand]);
        return -1;
    }
    return s == SEL_YES;
}

/* isSelectable with caching. quiet: do not report an error (the pruning pass). */
static inline int selectable(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand, bool quiet) {
    if (!x->f->binding_conditions && x->v->cands[cand].dev->binding_conditions.n) return 0;
    return matches(x, cs, rd, cand, quiet);
}

int dra__alloc_matches(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand) {
    return matches(x, cs, rd, cand, true);
}

int dra__alloc_selectors_match(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, const dra_cand *c) {
    const char *msg = NULL;
    int r = 1;
    if (rd->cls) r = eval_selectors(x, cs, rd->cls, rd->cls->selectors, rd->cls->nselectors, c, &msg);
    if (r == 1) r = eval_selectors(x, cs, NULL, rd->spec->selectors, rd->spec->nselectors, c, &msg);
    return r;
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
    if (!dra__derived_prepare(x, cs, rd)) return false;   /* first, as validateDeviceRequest */
    for (uint32_t i = 0; i < spec->nselectors; i++)
        if (!spec->selectors[i].cel)
            return dra__alloc_fail(x, "claim %s, request %s, selector #%u: CEL expression empty (unsupported selector type?)", dra_claim_obj(x, cs),
                        spec->name, i);
    if (!f->admin_access && spec->admin_access != -1)
        return dra__alloc_fail(x, "claim %s, request %s: admin access is requested, but the feature is disabled", dra_claim_obj(x, cs), spec->name);
    rd->admin = spec->admin_access == 1;
    if (!spec->class_name || !*spec->class_name)
        return dra__alloc_fail(x, "claim %s, request %s: missing device class name (unsupported request type?)", dra_claim_obj(x, cs), spec->name);
    rd->cls = NULL;
    for (uint32_t i = 0; x->hint_w == x->w && i < x->nhint && !rd->cls; i++)
        if (x->hint_specs[i] == spec) rd->cls = x->hint_cls[i];
    if (!rd->cls) rd->cls = dra__world_find_class(x->w, spec->class_name);
    if (!rd->cls)
        return dra__alloc_fail(x, "claim %s, request %s: could not retrieve device class %s: deviceclass.resource.k8s.io \"%s\" not found",
                    dra_claim_obj(x, cs), spec->name, spec->class_name, spec->class_name);
    if (!strcmp(spec->mode, "ExactCount")) {
        rd->num_devices = spec->count;
    } else if (!strcmp(spec->mode, "All")) {
        rd->all_mode = true;
        rd->all = ARENA_NEWN(&x->a, uint32_t, x->v->ncands ? x->v->ncands : 1);
        for (uint32_t pi = 0; pi < x->v->npools; pi++) {
            const dra_pool *p = &x->v->pools[pi];
            if (p->incomplete)
                return dra__alloc_fail(x, "claim %s, request %s: asks for all devices, but resource pool %s is currently being updated",
                            dra_claim_obj(x, cs), spec->name, p->id_text);
            if (p->invalid)
                return dra__alloc_fail(x, "claim %s, request %s: asks for all devices, but resource pool %s is currently invalid",
                            dra_claim_obj(x, cs), spec->name, p->id_text);
            for (uint32_t c = p->first_cand; c < p->first_cand + p->ncands; c++) {
                if (dra__alloc_tick(x)) return false;
                int s = selectable(x, cs, rd, c, false);
                if (s < 0) return false;
                if (!s) continue;
                if (f->consumable_capacity && !dra_rs_capacity_fits(x, rd, c, true)) continue;
                rd->all[rd->nall++] = c;
            }
        }
        rd->num_devices = rd->nall;
    } else {
        return dra__alloc_fail(x, "claim %s, request %s: unsupported count mode %s", dra_claim_obj(x, cs), spec->name, spec->mode);
    }
    return true;
}

bool dra__constraint_applies(const dra_constraint *k, const dra_req_data *rd) {
    if (k->requests.n == 0) return true;
    const char *base = rd->parent ? rd->parent->name : rd->spec->name;
    for (uint32_t i = 0; i < k->requests.n; i++) {
        if (!strcmp(k->requests.v[i], base)) return true;
        if (rd->parent && !strcmp(k->requests.v[i], rd->name)) return true;
    }
    return false;
}

/* Do a and b (plain requests of one claim) see exactly the same devices the same
 * way? Then the bound's relaxation treats them as one request of both counts. */
static bool same_devices(const dra_claim_state *cs, const dra_req_data *a, const dra_req_data *b) {
    const dra_request_spec *p = a->spec, *q = b->spec;
    if (a->parent || b->parent || a->all_mode || b->all_mode || a->admin != b->admin || a->cls != b->cls) return false;
    if (a->derived || b->derived || p->ntols || q->ntols || p->ncaps || q->ncaps) return false;
    if (p->nselectors != q->nselectors) return false;
    for (uint32_t i = 0; i < p->nselectors; i++)
        if (strcmp(p->selectors[i].cel, q->selectors[i].cel)) return false;
    for (uint32_t k = 0; k < cs->ncons; k++)
        if (a->applies[k] != b->applies[k]) return false;
    return true;
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
                return dra__alloc_fail(x, "claim %s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled",
                            dra_claim_obj(x, cs), r->name);
            if (!f->consumable_capacity) {
                if (r->has_exactly && r->exactly.has_capacity)
                    return dra__alloc_fail(x, "claim %s, request %s: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                                dra_claim_obj(x, cs), r->name);
                for (uint32_t s = 0; s < r->nsubs; s++)
                    if (r->subs[s].has_capacity)
                        return dra__alloc_fail(x,
                                    "claim %s, subrequest %s: has capacity requests, but the DRAConsumableCapacity feature is "
                                    "disabled",
                                    dra_claim_obj(x, cs), r->subs[s].name);
            }
            cs->nvar[ri] = subs ? r->nsubs : 1;
            cs->reqs[ri] = ARENA_NEWN(&x->a, dra_req_data, cs->nvar[ri]);
            int64_t mn = INT64_MAX;
            if (subs) {
                for (uint32_t s = 0; s < r->nsubs; s++) {
                    if (!validate(x, cs, &r->subs[s], r, &cs->reqs[ri][s])) return false;
                    if (cs->reqs[ri][s].num_devices < mn) mn = cs->reqs[ri][s].num_devices;
                }
            } else {
                if (!validate(x, cs, &r->exactly, NULL, &cs->reqs[ri][0])) return false;
                mn = cs->reqs[ri][0].num_devices;
            }
            /* per request, before the next one is validated, against what is left
             * (allocator_incubating.go: no overflow, and the first request past the
             * limit is the one named) */
            if (mn > DRA_RESULTS_MAX - min_claim)
                return dra__alloc_fail(x,
                            "claim %s, request %s: adding %lld devices exceeds the claim limit of %d, with %lld already "
                            "accounted for",
                            dra_claim_obj(x, cs), r->name, (long long)mn, DRA_RESULTS_MAX, (long long)min_claim);
            min_claim += mn;
        }
        /* The claim-entry bound before any backtracking: worth its cost (a pass over
         * the candidates of every request) from three devices or with alternatives;
         * smaller claims are searched faster than bounded, and arm the bound when
         * they fail. */
        int64_t max_claim = 0;
        bool subs_any = false;
        for (uint32_t ri = 0; ri < cl->nreqs; ri++) {
            int64_t mx = 0;
            for (uint32_t s = 0; s < cs->nvar[ri]; s++)
                if (cs->reqs[ri][s].num_devices > mx) mx = cs->reqs[ri][s].num_devices;
            max_claim += mx;
            subs_any |= cl->reqs[ri].nsubs > 0;
        }
        cs->eager_bound = subs_any || max_claim >= 3;
        cs->ncons = cl->nconstraints;
        cs->cons = cs->ncons ? ARENA_NEWN(&x->a, dra_cstate, cs->ncons) : NULL;
        for (uint32_t k = 0; k < cl->nconstraints; k++) {
            const dra_constraint *c = &cl->constraints[k];
            if (!c->match_attr && !c->distinct_attr)
                return dra__alloc_fail(x, "claim %s, constraint #%u: empty constraint (unsupported constraint type?)", dra_claim_obj(x, cs), k);
            dra__cons_init(&cs->cons[k], c, f->list_type_attributes);
            for (uint32_t ri = 0; ri < cl->nreqs; ri++)
                for (uint32_t s = 0; s < cs->nvar[ri]; s++) cs->reqs[ri][s].applies[k] = dra__constraint_applies(c, &cs->reqs[ri][s]);
        }
        for (uint32_t ri = 0; ri < cl->nreqs; ri++) {
            dra_req_data *rd = &cs->reqs[ri][0];
            rd->twin = -1;
            for (uint32_t t = ri; t-- > 0 && rd->twin < 0 && !cl->reqs[ri].nsubs;)   /* the nearest: a chain */
                if (!cl->reqs[t].nsubs && same_devices(cs, &cs->reqs[t][0], rd)) rd->twin = (int32_t)t;
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

static uint64_t splitmix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A version-4 UUID. x->rng is a counter (seeded at random, or by
 * dra_alloc_ctx_set_seed) and splitmix64 is a bijection, so the 64 bits of `a`, all
 * written into the text, differ for every ID a context ever makes: an ID made here
 * never repeats one made earlier on this context, in this call or another. */
static void new_share_id(dra_alloc_ctx *x, char *buf) {
    uint64_t n = x->rng++;
    uint64_t a = splitmix64(n), b = splitmix64(n ^ 0xD1B54A32D192ED03ull);
    snprintf(buf, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
             (unsigned)a & 0xfff, (unsigned)(0x8000 | (((a >> 12) & 0xf) << 10) | (b & 0x3ff)),
             (unsigned long long)((b >> 16) & 0xffffffffffffull));
}

uint64_t dra_alloc_ctx_random(dra_alloc_ctx *x) {
    return splitmix64(x->rng++);
}

void dra_alloc_ctx_uuid(dra_alloc_ctx *x, char buf[37]) {
    new_share_id(x, buf);
}

static void undo_constraints(dra_claim_state *cs, const dra_req_data *rd, uint32_t upto) {
    for (uint32_t k = upto; k-- > 0;)
        if (rd->applies[k]) dra__cons_remove(&cs->cons[k]);
}

/* Kubernetes' allocateDevice: 1 allocated, 0 not usable, -1 error. */
static int allocate_device(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t cand, bool must) {
    const dra_features *f = x->f;
    const dra_device *d = x->v->cands[cand].dev;
    bool multi = f->consumable_capacity && d->allow_multi;
    if (!multi && rd->admin && allocating_for_claim(cs, cand)) return 0;
    if (!rd->admin && dra__rs_device_in_use(x, cand)) return 0;
    if (!f->partitionable && d->nconsumes) return 0;
    bool skip_counters = multi && dra__rs_capacity_in_use(x, cand);
    bool counters = false;
    if (!skip_counters && d->nconsumes) {
        if (!dra__rs_counters_take(x, cand)) return 0;
        counters = true;
    }
    if (f->device_taints && dra_rs_taint_blocks(d, rd->spec)) {
        if (counters) dra__rs_counters_give(x, cand);
        return 0;
    }
    for (uint32_t k = 0; k < cs->ncons; k++) {
        if (!rd->applies[k]) continue;
        if (x->f->derived_attributes && !dra__derived_bind(x, rd, k, cand, &cs->cons[k])) {
            undo_constraints(cs, rd, k);
            if (counters) dra__rs_counters_give(x, cand);
            return -1;
        }
        if (!dra__cons_add(&cs->cons[k], &x->a, &x->v->cands[cand])) {
            undo_constraints(cs, rd, k);
            if (counters) dra__rs_counters_give(x, cand);
            if (must) {
                char id[512];
                dra__alloc_fail(x, "claim %s, request %s: cannot add device %s because a claim constraint would not be satisfied",
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
            if (counters) dra__rs_counters_give(x, cand);
            return 0;
        }
        if (multi) {
            re->consumed = ARENA_NEWN(&x->a, quantity, d->cel.ncaps ? d->cel.ncaps : 1);
            dra__rs_capacity_consumed(x, rd, cand, re->consumed);
            dra__rs_capacity_add(x, cand, re->consumed);
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
    if (re->cap_inserted) dra__rs_capacity_sub(x, re->cand, re->consumed);
    if (re->marked) x->allocating[re->cand]--;
    undo_constraints(cs, re->rd, cs->ncons);
    if (re->counters) dra__rs_counters_give(x, re->cand);
}

/* Upper bound on the devices still obtainable for this slot; -1 when unknown (some
 * candidate would raise a CEL error, which Kubernetes would report). */
static int64_t count_free(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t start, int64_t need) {
    int64_t n = 0;
    const dra_nodeview *v = x->v;
    for (uint32_t c = next_usable_cand(v, start); c < v->ncands; c = next_usable_cand(v, c + 1)) {
        if (rd->admin ? allocating_for_claim(cs, c) : dra__rs_device_in_use(x, c)) continue;
        if (dra__alloc_tick(x)) return -1;
        int s = selectable(x, cs, rd, c, true);
        if (s < 0) return -1;
        if (s && ++n >= need) return n;
    }
    return n;
}

/* ---- exact pruning: the claim bound ------------------------------------------------
 *
 * Kubernetes' answer is the first solution of its depth-first order, so the search
 * may skip a subtree only when it is proven to hold no solution AND Kubernetes would
 * come out of it with a plain failure: not an error (a CEL error on a candidate it
 * would reach, a constraint failing on an All request) and not the 32-results
 * "max size" signal, which stops the enclosing loops early instead of trying the
 * next device. claim_bound_fails therefore looks at a range of the claim's remaining
 * requests, [current, R), cut before the first request that could raise either:
 *   - a request whose largest variant could exceed the 32-results limit once the
 *     requests before it are filled (sizes are known per variant, so this is exact);
 *   - a request with an All-mode variant some constraint applies to (a constraint
 *     failure there is fatal);
 *   - a request with a candidate whose selectors raise a CEL error (evaluated here
 *     quietly and cached; the error still surfaces when the search reaches it).
 * Kubernetes only reaches request R after filling all requests of the range, so
 * "the range cannot be filled" means the subtree fails, and fails plainly.
 *
 * The range cannot be filled when a relaxation of it cannot:
 *   1. per request variant: the devices it could take now (free, selectable,
 *      capacity fits, taints tolerated, counters fit on their own, accepted by every
 *      constraint in its current state) are fewer than it wants; a request fails when
 *      all its variants do. Everything in that list only gets stricter deeper in the
 *      subtree (more devices in use, counters and capacity consumed, constraint
 *      values fixed, intersections narrowed, distinct values taken).
 *   2. distinctAttribute: the slots under the constraint outnumber the distinct
 *      values the candidates can still bring (dra__cons_distinct_values).
 *   3. all requests together: a flow from requests (demand: their smallest variant)
 *      through candidate devices (one slot each in a claim; a multi-allocatable device
 *      as many as its free capacity admits for the smallest consumptions of the
 *      requests) and, for a pool with shared counters, through the pool (at most as
 *      many of its devices as the smallest consumptions fit in every counter) cannot
 *      carry the demand. Any real solution is such a flow, so none exists.
 * matchAttribute needs no rule of its own: once the first device fixed the value,
 * rule 1 keeps only devices with that value (or intersecting the running set).
 *
 * The bound is armed after the first failed slot of a call (x->bound_on): a search
 * that never backtracks does not pay for it, and one that does pays a bounded cost
 * per step instead of the exponential subtree. */

enum { BND_MAXREQ = DRA_RESULTS_MAX + 1, BND_MAXCONS = 64 };

struct dra_bound {
    uint32_t *dev_gen, *dev_idx;     /* per candidate: compact device index, valid when dev_gen == gen */
    uint32_t *req_gen;               /* per candidate: already an edge of the request being gathered */
    uint32_t *pool_gen;              /* per pool: looked at in this check */
    uint32_t *pool_node;             /* per pool: flow node of its cap, 0 when uncapped */
    int32_t *pool_capv;              /* per pool: the cap */
    uint32_t gen, rgen;
    uint32_t *devs;                  /* compact index → candidate */
    uint32_t ndev;
    uint32_t *edge;                  /* request edges: compact devices, request j at [eoff[j], eoff[j+1]) */
    uint32_t edge_cap;
    uint32_t eoff[BND_MAXREQ + 1];
    int64_t demand[BND_MAXREQ];
    int32_t mult[BND_MAXREQ];        /* requests merged into node j (twins) */
    uint32_t rindex[BND_MAXREQ];     /* request index in its claim */
    dra_claim_state *rcs[BND_MAXREQ];   /* its claim */
    dra_req_data *rvar0[BND_MAXREQ]; /* the variant being filled, NULL: all variants of the request */
    /* flow network */
    uint32_t *head, *nxt, *to, *par, *queue, *vis;
    int32_t *cap;
    uint32_t ne, nn, ecap, ncap, visgen;
    /* scratch */
    const cel_attr **vals;
    const dra_attr_text **texts;
    quantity *q, *q2, *left;
    uint32_t qcap;
};

static void *grow(arena *a, void *old, size_t used, size_t newsz) {
    void *p = arena_alloc(a, newsz);
    if (used) memcpy(p, old, used);
    return p;
}

static struct dra_bound *bound_scratch(dra_alloc_ctx *x) {
    if (!x->bnd) {
        uint32_t nc = x->v->ncands ? x->v->ncands : 1;
        struct dra_bound *b = ARENA_NEW(&x->a, struct dra_bound);
        b->dev_gen = ARENA_NEWN(&x->a, uint32_t, nc);
        b->dev_idx = ARENA_NEWN(&x->a, uint32_t, nc);
        b->req_gen = ARENA_NEWN(&x->a, uint32_t, nc);
        b->pool_gen = ARENA_NEWN(&x->a, uint32_t, x->v->npools ? x->v->npools : 1);
        b->pool_node = ARENA_NEWN(&x->a, uint32_t, x->v->npools ? x->v->npools : 1);
        b->pool_capv = ARENA_NEWN(&x->a, int32_t, x->v->npools ? x->v->npools : 1);
        b->devs = ARENA_NEWN(&x->a, uint32_t, nc);
        b->vals = ARENA_NEWN(&x->a, const cel_attr *, nc);
        b->texts = ARENA_NEWN(&x->a, const dra_attr_text *, nc);
        x->bnd = b;
    }
    return x->bnd;
}

static void edge_push(dra_alloc_ctx *x, struct dra_bound *b, uint32_t *n, uint32_t dev) {
    if (*n == b->edge_cap) {
        uint32_t cap = b->edge_cap ? b->edge_cap * 2 : 1024;
        b->edge = grow(&x->a, b->edge, sizeof *b->edge * b->edge_cap, sizeof *b->edge * cap);
        b->edge_cap = cap;
    }
    b->edge[(*n)++] = dev;
}

static uint32_t dev_of(struct dra_bound *b, uint32_t cand) {
    if (b->dev_gen[cand] != b->gen) {
        b->dev_gen[cand] = b->gen;
        b->dev_idx[cand] = b->ndev;
        b->devs[b->ndev++] = cand;
    }
    return b->dev_idx[cand];
}

/* Would every constraint applying to rd accept the device in its current state? */
static bool constraints_accept(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t cand) {
    for (uint32_t k = 0; k < cs->ncons; k++) {
        if (!rd->applies[k]) continue;
        /* no pending derived error here: bound_usable asked selectable first */
        if (x->f->derived_attributes && !dra__derived_bind(x, rd, k, cand, &cs->cons[k])) return false;
        if (!dra__cons_add(&cs->cons[k], &x->a, &x->v->cands[cand])) return false;
        dra__cons_remove(&cs->cons[k]);
    }
    return true;
}

/* Could rd take the device now (rule 1)? 1 yes, 0 no, -1 its selectors raise an error. */
static int bound_usable(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd, uint32_t c) {
    const dra_features *f = x->f;
    const dra_device *d = x->v->cands[c].dev;
    bool multi = f->consumable_capacity && d->allow_multi;
    if (rd->admin ? allocating_for_claim(cs, c) : dra__rs_device_in_use(x, c)) return 0;
    int s = selectable(x, cs, rd, c, true);
    if (s <= 0) return s;
    if (f->consumable_capacity && !dra_rs_capacity_fits(x, rd, c, false)) return 0;
    if (!f->partitionable && d->nconsumes) return 0;
    if (d->nconsumes && !multi) {
        if (!dra__rs_counters_take(x, c)) return 0;
        dra__rs_counters_give(x, c);
    }
    if (f->device_taints && dra_rs_taint_blocks(d, rd->spec)) return 0;
    return constraints_accept(x, cs, rd, c) ? 1 : 0;
}

static bool any_applies(const dra_claim_state *cs, const dra_req_data *rd) {
    for (uint32_t k = 0; k < cs->ncons; k++)
        if (rd->applies[k]) return true;
    return false;
}

/* ---- max flow (Edmonds-Karp, unit augmentations: the demand is at most 32) ---- */

static void flow_reset(dra_alloc_ctx *x, struct dra_bound *b, uint32_t nn, uint32_t ne_max) {
    if (nn > b->ncap) {
        uint32_t cap = nn * 2;
        b->head = ARENA_NEWN(&x->a, uint32_t, cap);
        b->par = ARENA_NEWN(&x->a, uint32_t, cap);
        b->queue = ARENA_NEWN(&x->a, uint32_t, cap);
        b->vis = ARENA_NEWN(&x->a, uint32_t, cap);
        b->visgen = 0;
        b->ncap = cap;
    }
    if (ne_max * 2 > b->ecap) {
        uint32_t cap = ne_max * 4;
        b->nxt = ARENA_NEWN(&x->a, uint32_t, cap);
        b->to = ARENA_NEWN(&x->a, uint32_t, cap);
        b->cap = ARENA_NEWN(&x->a, int32_t, cap);
        b->ecap = cap;
    }
    b->nn = nn;
    b->ne = 0;
    for (uint32_t i = 0; i < nn; i++) b->head[i] = UINT32_MAX;
}

static void flow_edge(struct dra_bound *b, uint32_t u, uint32_t v, int32_t cap) {
    assert(b->ne + 2 <= b->ecap);
    b->to[b->ne] = v, b->cap[b->ne] = cap, b->nxt[b->ne] = b->head[u], b->head[u] = b->ne++;
    b->to[b->ne] = u, b->cap[b->ne] = 0, b->nxt[b->ne] = b->head[v], b->head[v] = b->ne++;
}

/* Max flow from node 0 to node nn-1, stopping once `want` is reached. */
static int64_t flow_max(dra_alloc_ctx *x, struct dra_bound *b, int64_t want) {
    int64_t flow = 0;
    uint32_t sink = b->nn - 1;
    while (flow < want) {
        if (++b->visgen == 0) {
            memset(b->vis, 0, sizeof *b->vis * b->ncap);
            b->visgen = 1;
        }
        uint32_t qh = 0, qt = 0;
        b->queue[qt++] = 0;
        b->vis[0] = b->visgen;
        while (qh < qt && b->vis[sink] != b->visgen) {
            uint32_t u = b->queue[qh++];
            for (uint32_t e = b->head[u]; e != UINT32_MAX; e = b->nxt[e]) {
                uint32_t v = b->to[e];
                if (b->cap[e] <= 0 || b->vis[v] == b->visgen) continue;
                b->vis[v] = b->visgen;
                b->par[v] = e;
                b->queue[qt++] = v;
            }
        }
        if (b->vis[sink] != b->visgen) break;
        for (uint32_t v = sink; v != 0; v = b->to[b->par[v] ^ 1]) {
            b->cap[b->par[v]]--;
            b->cap[b->par[v] ^ 1]++;
        }
        flow++;
        if (dra__alloc_tick(x)) break;
    }
    return flow;
}

static int cmp_qty(const void *a, const void *b) { return quantity_cmp(a, b); }

/* How many of the n amounts (sorted here), smallest first, fit into `left`. */
static uint32_t greedy_fit(quantity *amounts, uint32_t n, const quantity *left) {
    qsort(amounts, n, sizeof *amounts, cmp_qty);
    quantity sum = quantity_from_int(0, QTY_DECIMAL_SI);
    uint32_t k = 0;
    for (; k < n; k++) {
        quantity t;
        quantity_add(&sum, &amounts[k], &t);
        if (quantity_cmp(&t, left) > 0) break;
        sum = t;
    }
    return k;
}

static void ensure_q(dra_alloc_ctx *x, struct dra_bound *b, uint32_t n) {
    if (n <= b->qcap) return;
    uint32_t cap = n < 64 ? 64 : n * 2;
    b->q = ARENA_NEWN(&x->a, quantity, cap);
    b->q2 = ARENA_NEWN(&x->a, quantity, cap);
    b->left = ARENA_NEWN(&x->a, quantity, cap);
    b->qcap = cap;
}

/* Slots a multi-allocatable device can still give the requests of the range: for
 * each capacity, how many of the requests' smallest consumptions fit into what is
 * left (each request takes a device at most once). */
static int32_t multi_shares(dra_alloc_ctx *x, struct dra_bound *b, uint32_t nreq, uint32_t cand) {
    const dra_device *d = x->v->cands[cand].dev;
    uint32_t ncaps = d->cel.ncaps, nslots = 0;
    for (uint32_t j = 0; j < nreq; j++) nslots += (uint32_t)b->mult[j];
    if (!ncaps) return (int32_t)nslots;
    ensure_q(x, b, ncaps * (nreq + 1) + ncaps + nslots);
    quantity *left = b->left, *per = b->q2;   /* per[j * ncaps + k]: smallest consumption of request j */
    dra__rs_capacity_left(x, cand, left);
    for (uint32_t j = 0; j < nreq; j++) {
        const dra_claim_state *cs = b->rcs[j];
        uint32_t nv = b->rvar0[j] ? 1 : cs->nvar[b->rindex[j]];
        for (uint32_t v = 0; v < nv; v++) {
            dra_req_data *o = b->rvar0[j] ? b->rvar0[j] : &cs->reqs[b->rindex[j]][v];
            quantity *tmp = b->q + ncaps * nreq;
            dra__rs_capacity_consumed(x, o, cand, tmp);
            for (uint32_t k = 0; k < ncaps; k++)
                if (v == 0 || quantity_cmp(&tmp[k], &per[j * ncaps + k]) < 0) per[j * ncaps + k] = tmp[k];
        }
    }
    int32_t best = (int32_t)nslots;
    for (uint32_t k = 0; k < ncaps; k++) {
        quantity *am = b->q;
        uint32_t m = 0;
        for (uint32_t j = 0; j < nreq; j++)
            for (int32_t t = 0; t < b->mult[j]; t++) am[m++] = per[j * ncaps + k];
        int32_t n = (int32_t)greedy_fit(am, m, &left[k]);
        if (n < best) best = n;
    }
    return best;
}

/* The most devices of a pool with shared counters the range can take: for every
 * counter, the devices not consuming it plus as many consumers as fit smallest
 * first. *counted: devices of the pool routed through the cap. */
static uint32_t pool_cap(dra_alloc_ctx *x, struct dra_bound *b, uint32_t pi, uint32_t *counted) {
    const dra_pool *p = &x->v->pools[pi];
    const bool cc = x->f->consumable_capacity;
    ensure_q(x, b, p->ncands + p->ncounters + 1);
    quantity *left = b->left;
    dra__rs_counters_left(x, pi, left);
    uint32_t best = UINT32_MAX;
    *counted = 0;
    for (uint32_t i = 0; i < p->ncounters; i++) {
        uint32_t free_n = 0, n = 0;
        for (uint32_t c = p->first_cand; c < p->first_cand + p->ncands; c++) {
            const dra_cand *cd = &x->v->cands[c];
            if (b->dev_gen[c] != b->gen || !cd->dev->nconsumes || (cc && cd->dev->allow_multi)) continue;
            if (i == 0) (*counted)++;
            quantity sum = quantity_from_int(0, QTY_DECIMAL_SI);
            for (uint32_t k = 0; k < cd->ncons; k++)
                if (cd->cons[k].counter == i) quantity_add(&sum, &cd->cons[k].value, &sum);
            if (quantity_sign(&sum) <= 0) free_n++;
            else b->q[n++] = sum;
        }
        uint32_t m = free_n + greedy_fit(b->q, n, &left[i]);
        if (m < best) best = m;
    }
    return best;
}

/* What claim_bound_fails gathers over its range of requests (rule 1 decided on the
 * way): the requests kept (b->demand, mult, rindex, rcs, rvar0, nreq of them) and
 * their edges to devices (b->eoff, edge, ne of them); per constraint of the claim,
 * how many devices the range's requests it applies to take at the least (under);
 * whether a derived attribute is read (rule 2 then does not apply). */
typedef struct bound_range {
    uint32_t nreq, ne;
    int64_t under[BND_MAXCONS];
    bool derived;
} bound_range;

/* One request of the range, for gather_request: variant rd of the request being
 * filled (cur), from candidate start, need devices; else every variant of request r
 * of claim ocs. first: ocs is the claim being bounded (cs). */
typedef struct bound_req {
    dra_claim_state *cs, *ocs;
    uint32_t r, nv, start;
    dra_req_data *rd;
    int64_t need;
    bool cur, first;
} bound_req;

/* The variants of one request: each usable candidate of a variant that can be filled
 * becomes an edge of the request (marked with b->req_gen), *mink the fewest devices a
 * fillable variant takes (INT64_MAX: none can be filled; 0: one takes nothing),
 * under_r[q] the fewest of those constraint q applies to. -1: the clock ran out;
 * 1: a CEL error may be reached from a variant (nothing may be pruned on); else 0. */
static int gather_request(dra_alloc_ctx *x, struct dra_bound *b, const bound_req *q, uint32_t *ne, int64_t *mink,
                          int64_t *under_r, bool *derived) {
    const dra_nodeview *v = x->v;
    const dra_claim_state *cs = q->cs;
    const uint32_t rstamp = b->rgen;
    *mink = INT64_MAX;
    bool cel_err = false;
    for (uint32_t s = 0; s < q->nv && !cel_err; s++) {
        dra_req_data *o = q->cur ? q->rd : &q->ocs->reqs[q->r][s];
        int64_t k = q->cur ? q->need : o->num_devices;
        if (k > DRA_RESULTS_MAX) continue;   /* can only hit the limit */
        if (o->all_mode && o->nall == 0) continue;   /* Kubernetes fails this variant at once */
        if (k <= 0) {   /* takes nothing: the request may be skipped */
            *mink = 0;
            continue;
        }
        if (o->derived) *derived = true;
        int64_t got = 0;
        if (o->all_mode) {
            bool all_ok = true;
            for (uint32_t i = 0; i < o->nall && all_ok; i++) {
                int u = bound_usable(x, q->ocs, o, o->all[i]);
                if (u < 0) cel_err = true;
                all_ok = u > 0;
            }
            if (!all_ok) continue;
            for (uint32_t i = 0; i < o->nall; i++) {
                uint32_t c = o->all[i];
                if (b->req_gen[c] != rstamp) b->req_gen[c] = rstamp, edge_push(x, b, ne, dev_of(b, c));
            }
            got = o->nall;
        } else {
            uint32_t c0 = q->cur ? q->start : 0;
            for (uint32_t c = next_usable_cand(v, c0); c < v->ncands; c = next_usable_cand(v, c + 1)) {
                if (dra__alloc_tick(x)) return -1;
                int u = bound_usable(x, q->ocs, o, c);
                if (u < 0) {
                    cel_err = true;
                    break;
                }
                if (!u) continue;
                got++;
                if (b->req_gen[c] != rstamp) b->req_gen[c] = rstamp, edge_push(x, b, ne, dev_of(b, c));
            }
        }
        if (cel_err || got < k) continue;
        if (k < *mink) *mink = k;
        for (uint32_t i = 0; q->first && i < cs->ncons && i < BND_MAXCONS; i++) {
            int64_t u = o->applies[i] ? k : 0;
            if (u < under_r[i]) under_r[i] = u;
        }
    }
    return cel_err;
}

enum { RANGE_FAILS, RANGE_PASSES, RANGE_GATHERED };

/* The requests of the range from request ri of cs into g (rd NULL: the claim's
 * entry): RANGE_FAILS when rule 1 decides the range cannot be filled, RANGE_PASSES
 * when nothing can be pruned on (nothing gathered, a CEL error ahead, the clock ran
 * out), else RANGE_GATHERED for rules 2 and 3. */
static int bound_gather(dra_alloc_ctx *x, dra_claim_state *cs, uint32_t ri, dra_req_data *rd, int64_t need,
                        uint32_t start, bound_range *g) {
    const bool entry = rd == NULL;
    assert(!entry || (ri == 0 && cs->nres == 0));
    const dra_nodeview *v = x->v;
    struct dra_bound *b = bound_scratch(x);
    if (++b->gen == 0) {   /* stamps wrapped: start over */
        memset(b->dev_gen, 0, sizeof *b->dev_gen * v->ncands);
        memset(b->pool_gen, 0, sizeof *b->pool_gen * v->npools);
        b->gen = 1;
    }
    b->ndev = 0;
    *g = (bound_range){0};
    uint32_t nreq = 0, ne = 0;
    b->eoff[0] = 0;
    int64_t cum = (int64_t)cs->nres + need;
    int8_t jof[64];   /* request index → its node, for twins (within one claim) */
    memset(jof, -1, sizeof jof);
    /* The range runs on into the later claims once this one is complete (when the
     * bound is armed): a 32-results signal there stops at their own boundary. There,
     * an admin request ends the range (it may share devices other claims use). */
    size_t cidx = (size_t)(cs - x->cs);
    dra_claim_state *ocs = cs;
    for (uint32_t r = ri;; r++) {
        const bool first = ocs == cs;
        if (r >= ocs->claim->nreqs) {
            if (!x->bound_on || ++cidx >= x->ncs) break;
            ocs = &x->cs[cidx];
            assert(ocs->nres == 0);
            memset(jof, -1, sizeof jof);
            r = UINT32_MAX;   /* wraps to 0 */
            continue;
        }
        const bool cur = first && r == ri && !entry;   /* the request being filled, from `start` */
        uint32_t nv = cur ? 1 : ocs->nvar[r];
        if (!cur) {
            int64_t maxk = 0;
            bool stop = false;
            for (uint32_t s = 0; s < nv; s++) {
                const dra_req_data *o = &ocs->reqs[r][s];
                if (o->num_devices > maxk) maxk = o->num_devices;
                if (o->all_mode && any_applies(ocs, o)) stop = true;
                if (!first && o->admin) stop = true;
            }
            if (stop || (first && !entry && cum + maxk > DRA_RESULTS_MAX)) break;
            cum += maxk;
        }
        const dra_req_data *tw = &ocs->reqs[r][0];
        int32_t t = cur ? -1 : tw->twin;
        while (t >= 0 && (t >= 64 || jof[t] < 0)) t = ocs->reqs[t][0].twin;
        if (t >= 0) {
            /* the same devices as an earlier request of the range: one node, both counts */
            int j = jof[t];
            if (tw->num_devices <= 0) continue;
            b->demand[j] += tw->num_devices;
            b->mult[j]++;
            for (uint32_t q = 0; first && q < cs->ncons && q < BND_MAXCONS; q++)
                if (tw->applies[q]) g->under[q] += tw->num_devices;
            continue;
        }
        if (++b->rgen == 0) {   /* b->rgen marks this request's edges */
            memset(b->req_gen, 0, sizeof *b->req_gen * v->ncands);
            b->rgen = 1;
        }
        uint32_t e0 = ne;
        int64_t mink;
        int64_t under_r[BND_MAXCONS];
        for (uint32_t k = 0; k < cs->ncons && k < BND_MAXCONS; k++) under_r[k] = INT64_MAX;
        const bound_req q = {cs, ocs, r, nv, start, rd, need, cur, first};
        int cel_err = gather_request(x, b, &q, &ne, &mink, under_r, &g->derived);
        if (cel_err < 0) return RANGE_PASSES;
        if (cel_err) {
            /* Kubernetes may reach that error: nothing from here on may be pruned on */
            if (first && r == ri) return RANGE_PASSES;
            ne = e0;
            break;
        }
        if (mink == INT64_MAX) return RANGE_FAILS;   /* rule 1: no variant of request r can be filled */
        if (mink == 0) {
            ne = e0;
            continue;
        }
        if (nreq == BND_MAXREQ) break;
        b->demand[nreq] = mink;
        b->mult[nreq] = 1;
        if (!cur && r < 64) jof[r] = (int8_t)nreq;
        b->rindex[nreq] = r;
        b->rcs[nreq] = ocs;
        b->rvar0[nreq] = cur ? rd : NULL;
        for (uint32_t k = 0; first && k < cs->ncons && k < BND_MAXCONS; k++) g->under[k] += under_r[k];
        nreq++;
        b->eoff[nreq] = ne;
    }
    g->nreq = nreq, g->ne = ne;
    return nreq ? RANGE_GATHERED : RANGE_PASSES;
}

/* Rule 2: a matchAttribute or distinctAttribute constraint the range's requests need
 * more devices under than the gathered devices have values for. */
static bool bound_distinct_fails(dra_alloc_ctx *x, dra_claim_state *cs, const bound_range *g) {
    const dra_nodeview *v = x->v;
    struct dra_bound *b = bound_scratch(x);
    for (uint32_t q = 0; q < cs->ncons; q++) {
        dra_cstate *st = &cs->cons[q];
        if (st->is_match || g->under[q] <= 0) continue;
        const cel_attr *save = st->dv;
        const dra_attr_text *save_t = st->dv_text;
        st->dv = NULL, st->dv_text = NULL;
        uint32_t n = 0;
        for (uint32_t d = 0; d < b->ndev; d++) {
            const dra_attr_text *t;
            const cel_attr *a = dra__cons_value(st, &v->cands[b->devs[d]], &t);
            if (!a) continue;
            b->vals[n] = a, b->texts[n] = t, n++;
        }
        st->dv = save, st->dv_text = save_t;
        uint32_t got = dra__cons_distinct_values(st, b->vals, b->texts, n, (uint32_t)g->under[q]);
        if (got != UINT32_MAX && (int64_t)got < g->under[q]) return true;
    }
    return false;
}

/* Rule 3: the flow from the range's requests through their devices (and the shared
 * counters of capped pools) cannot carry their demand. */
static bool bound_flow_fails(dra_alloc_ctx *x, const bound_range *g) {
    const dra_nodeview *v = x->v;
    struct dra_bound *b = bound_scratch(x);
    const uint32_t nreq = g->nreq, ne = g->ne;
    int64_t total = 0;
    for (uint32_t j = 0; j < nreq; j++) total += b->demand[j];
    bool need_flow = nreq > 1;
    /* pools with shared counters whose cap binds get a node: 1 + nreq + ndev + i */
    uint32_t npool_nodes = 0;
    for (uint32_t d = 0; d < b->ndev; d++) {
        uint32_t pi = v->cands[b->devs[d]].pool;
        if (!v->pools[pi].ncounters || b->pool_gen[pi] == b->gen) continue;
        b->pool_gen[pi] = b->gen;
        b->pool_node[pi] = 0;
        uint32_t counted;
        uint32_t capn = pool_cap(x, b, pi, &counted);
        if (capn < counted) {
            b->pool_capv[pi] = (int32_t)capn;
            b->pool_node[pi] = 1 + nreq + b->ndev + npool_nodes++;
            need_flow = true;
        }
    }
    bool any_multi = false;
    if (x->f->consumable_capacity)
        for (uint32_t d = 0; d < b->ndev && !any_multi; d++) any_multi = v->cands[b->devs[d]].dev->allow_multi;
    if (any_multi) need_flow = true;
    if (!need_flow && (int64_t)b->ndev >= total) return false;   /* one request: rule 1 decided it */
    uint32_t nn = 1 + nreq + b->ndev + npool_nodes + 1;
    flow_reset(x, b, nn, nreq + ne + b->ndev + npool_nodes);
    uint32_t sink = nn - 1;
    for (uint32_t j = 0; j < nreq; j++) {
        flow_edge(b, 0, 1 + j, (int32_t)b->demand[j]);
        for (uint32_t e = b->eoff[j]; e < b->eoff[j + 1]; e++) flow_edge(b, 1 + j, 1 + nreq + b->edge[e], b->mult[j]);
    }
    for (uint32_t d = 0; d < b->ndev; d++) {
        uint32_t c = b->devs[d];
        const dra_cand *cd = &v->cands[c];
        bool multi = x->f->consumable_capacity && cd->dev->allow_multi;
        uint32_t pn = cd->dev->nconsumes && !multi ? b->pool_node[cd->pool] : 0;
        if (pn) {   /* counted device of a capped pool */
            flow_edge(b, 1 + nreq + d, pn, 1);
            continue;
        }
        int32_t capd = multi ? multi_shares(x, b, nreq, c) : 1;
        if (capd > 0) flow_edge(b, 1 + nreq + d, sink, capd);
    }
    for (uint32_t pi = 0; pi < v->npools; pi++)
        if (b->pool_gen[pi] == b->gen && b->pool_node[pi]) flow_edge(b, b->pool_node[pi], sink, b->pool_capv[pi]);
    int64_t f = flow_max(x, b, total);
    if (x->timed_out) return false;
    return f < total;
}

/* Whether the requests from request ri of cs on (rd: its variant being filled, need
 * devices more from candidate start) cannot all be filled, by the three bounds in
 * turn: a request no variant of which has enough usable candidates (rule 1), a
 * constraint with too few distinct values (rule 2), a flow too small (rule 3).
 * rd NULL: the claim's entry (first request, no device yet, any variant), where the
 * 32-results signal needs no care — the claim boundary turns it into a plain
 * failure — so the range runs to the end of the claim (firstAvailable requests whose
 * larger variants would exceed the limit stay in). */
static bool claim_bound_fails(dra_alloc_ctx *x, dra_claim_state *cs, uint32_t ri, dra_req_data *rd, int64_t need,
                              uint32_t start) {
    if (x->no_prune) return false;
    bound_range g;
    int r = bound_gather(x, cs, ri, rd, need, start, &g);
    if (r != RANGE_GATHERED) return r == RANGE_FAILS;
    bool track_distinct = cs->ncons && cs->ncons <= BND_MAXCONS;
    if (track_distinct && !g.derived && bound_distinct_fails(x, cs, &g)) return true;
    return bound_flow_fails(x, &g);
}

/* claim_bound_fails, branching on the value of a scalar matchAttribute constraint
 * that no device fixed yet: every solution fixes it to the value of its first
 * affected device, so when the range is infeasible with the constraint fixed to
 * each value some candidate has, it is infeasible. The value is fixed by making the
 * constraint look as if one device with it had been added (num 1, first = it),
 * which is all dra__cons_add reads for a scalar match; restored after each try.
 * Only for a few values (BND_MAXVALUES): each try costs one bound. */
enum { BND_MAXVALUES = 16 };

static bool bound_fails(dra_alloc_ctx *x, dra_claim_state *cs, uint32_t ri, dra_req_data *rd, int64_t need,
                        uint32_t start) {
    if (claim_bound_fails(x, cs, ri, rd, need, start)) return true;
    if (x->no_prune || x->timed_out || !x->bound_on) return false;   /* branching: once the search backtracks */
    for (uint32_t k = 0; k < cs->ncons; k++) {
        dra_cstate *st = &cs->cons[k];
        if (!st->is_match || st->list_mode || st->num || x->f->derived_attributes) continue;
        const cel_attr *vals[BND_MAXVALUES];
        const dra_attr_text *texts[BND_MAXVALUES];
        uint32_t nvals = 0;
        bool many = false;
        const dra_nodeview *v = x->v;
        for (uint32_t c = 0; c < v->ncands && !many; c++) {
            const dra_attr_text *t;
            const cel_attr *a = dra__cons_value(st, &v->cands[c], &t);
            if (!a) continue;
            bool seen = false;
            for (uint32_t i = 0; i < nvals && !seen; i++) {
                st->first = vals[i], st->first_text = texts[i], st->num = 1;
                seen = dra__cons_add(st, &x->a, &v->cands[c]);
                if (seen) dra__cons_remove(st);
                st->num = 0;
            }
            if (seen) continue;
            if (nvals == BND_MAXVALUES) many = true;
            else vals[nvals] = a, texts[nvals++] = t;
        }
        /* no value at all: nothing to branch on (the plain bound already saw the
         * affected requests without candidates, if its range holds any) */
        if (many || !nvals) continue;
        bool all_fail = true;
        for (uint32_t i = 0; i < nvals && all_fail; i++) {
            st->first = vals[i], st->first_text = texts[i], st->num = 1;
            all_fail = claim_bound_fails(x, cs, ri, rd, need, start);
            st->num = 0;
        }
        if (all_fail && !x->timed_out) return true;
    }
    return false;
}

/* Could Kubernetes' search of this claim raise an error somewhere, whatever the
 * state: a candidate whose selectors fail (for any request variant that takes
 * devices one by one), or an All request some constraint applies to? */
static bool claim_may_err(dra_alloc_ctx *x, dra_claim_state *cs) {
    const dra_nodeview *v = x->v;
    for (uint32_t r = 0; r < cs->claim->nreqs; r++)
        for (uint32_t s = 0; s < cs->nvar[r]; s++) {
            dra_req_data *o = &cs->reqs[r][s];
            if (o->all_mode) {
                if (any_applies(cs, o)) return true;
                continue;
            }
            if (o->num_devices <= 0) continue;
            for (uint32_t c = next_usable_cand(v, 0); c < v->ncands; c = next_usable_cand(v, c + 1)) {
                if (dra__alloc_tick(x) || selectable(x, cs, o, c, true) < 0) return true;
            }
        }
    return false;
}

/* Run once, when the search first backtracks (in claim `cur`): the claims after it
 * are bounded against an empty attempt (nothing allocating, no counter or capacity
 * used by this call). Each allocation only takes options away, so a claim that
 * fails there fails in every state the search can reach. Kubernetes would still
 * enumerate every combination of the claims before it — the failure memo this
 * spares — and comes out with a plain failure unless one of those claims can raise
 * an error, which claim_may_err rules out (search checks err_after). The doomed
 * claim's own errors are the bound's business (its range stops before them). */
static void static_pass(dra_alloc_ctx *x, size_t cur) {
    x->doomed = x->ncs;
    if (x->no_prune || cur + 1 >= x->ncs) return;
    const dra_nodeview *v = x->v;
    uint32_t nc = v->ncands ? v->ncands : 1, np = v->npools ? v->npools : 1;
    uint32_t *allocating = x->allocating, *shares = x->cap_shares;
    quantity **cap_alloc = x->cap_alloc, **avail = x->cnt_avail, **used = x->cnt_used;
    x->allocating = ARENA_NEWN(&x->a, uint32_t, nc);
    if (shares) x->cap_shares = ARENA_NEWN(&x->a, uint32_t, nc);
    if (cap_alloc) x->cap_alloc = ARENA_NEWN(&x->a, quantity *, nc);
    x->cnt_avail = ARENA_NEWN(&x->a, quantity *, np);
    x->cnt_used = ARENA_NEWN(&x->a, quantity *, np);
    size_t doomed = x->ncs;
    for (size_t ci = cur + 1; ci < x->ncs && doomed == x->ncs && !x->timed_out; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        assert(cs->nres == 0);
        if (cs->claim->nreqs && bound_fails(x, cs, 0, NULL, 0, 0)) doomed = ci;
    }
    x->allocating = allocating, x->cap_shares = shares, x->cap_alloc = cap_alloc;
    x->cnt_avail = avail, x->cnt_used = used;
    if (doomed == x->ncs || x->timed_out) return;
    x->err_after = ARENA_NEWN(&x->a, size_t, doomed + 1);
    x->err_after[doomed] = doomed;
    for (size_t ci = doomed; ci-- > 0;) x->err_after[ci] = claim_may_err(x, &x->cs[ci]) ? ci : x->err_after[ci + 1];
    if (!x->timed_out) x->doomed = doomed;
}

static void arm_bound(dra_alloc_ctx *x, size_t ci) {
    /* best-fit's enumeration (x->bf) backtracks by design: it is bounded by its own
     * budget and pays less without the bound than with it */
    if (x->bound_on || x->bf) return;
    x->bound_on = true;
    static_pass(x, ci);
}

/* ---- interchangeable devices -----------------------------------------------------
 *
 * When candidate a failed in a slot (its subtree held no solution and raised
 * nothing), a later candidate b of the same slot that is interchangeable with a
 * fails too: swapping a and b maps every state below b onto a state below a — the
 * later slots of this request start after b, hence after a as well, and every other
 * request or claim sees the two devices alike — so a solution or an error below b
 * would be one below a. "Alike" is decided conservatively: same driver, attributes
 * (type, value, order), capacities (none when consumable capacity is on), taints,
 * shared-counter consumption within the same pool, no binding conditions,
 * per-device node selection or multiple allocations, and both entirely free (not
 * allocated, not being allocated). One exception breaks the mapping: an All request
 * with a constraint fails with an error at its first device that the constraint
 * rejects, and the order of a and b in its list decides whether it reaches that
 * device before the one in use — so calls with such a request skip nothing here. */

static bool attr_same(const cel_attr *a, const dra_attr_text *ta, const cel_attr *b, const dra_attr_text *tb) {
    if (a->domain != b->domain || a->name != b->name || a->kind != b->kind) return false;
    const cel_attr_list *la = a->u.list, *lb = b->u.list;   /* the list kinds only */
    switch (a->kind) {
    case CEL_ATTR_INT: return a->u.i == b->u.i;
    case CEL_ATTR_BOOL: return a->u.b == b->u.b;
    case CEL_ATTR_STRING: return a->u.s->len == b->u.s->len && !memcmp(a->u.s->s, b->u.s->s, a->u.s->len);
    case CEL_ATTR_VERSION: return ta && tb && ta->ver && tb->ver && !strcmp(ta->ver, tb->ver);
    case CEL_ATTR_INTS: return la->count == lb->count && !memcmp(la->ints, lb->ints, sizeof *la->ints * la->count);
    case CEL_ATTR_BOOLS: return la->count == lb->count && !memcmp(la->bools, lb->bools, sizeof *la->bools * la->count);
    case CEL_ATTR_STRINGS:
        if (la->count != lb->count) return false;
        for (uint32_t i = 0; i < la->count; i++)
            if (la->strs[i].len != lb->strs[i].len || memcmp(la->strs[i].s, lb->strs[i].s, la->strs[i].len))
                return false;
        return true;
    default: return false;   /* versions lists, values without a type: not compared */
    }
}

static bool str0_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static bool interchangeable(dra_alloc_ctx *x, uint32_t a, uint32_t b) {
    const dra_cand *ca = &x->v->cands[a], *cb = &x->v->cands[b];
    const dra_device *da = ca->dev, *db = cb->dev;
    const dra_features *f = x->f;
    if (da->cel.driver_id != db->cel.driver_id || da->cel.conv_error || db->cel.conv_error) return false;
    if (ca->per_device_node || cb->per_device_node || da->allow_multi || db->allow_multi) return false;
    if (da->binding_conditions.n || db->binding_conditions.n || da->binding_failure_conditions.n ||
        db->binding_failure_conditions.n)
        return false;
    if (x->allocating[a] || x->allocating[b] || dra__rs_device_in_use(x, a) || dra__rs_device_in_use(x, b)) return false;
    if (da->cel.nattrs != db->cel.nattrs || da->cel.ncaps != db->cel.ncaps) return false;
    if (f->consumable_capacity && da->cel.ncaps) return false;
    for (uint32_t i = 0; i < da->cel.nattrs; i++)
        if (!attr_same(&da->cel.attrs[i], da->attr_text ? &da->attr_text[i] : NULL, &db->cel.attrs[i],
                       db->attr_text ? &db->attr_text[i] : NULL))
            return false;
    for (uint32_t i = 0; i < da->cel.ncaps; i++)
        if (da->cel.caps[i].domain != db->cel.caps[i].domain || da->cel.caps[i].name != db->cel.caps[i].name ||
            quantity_cmp(da->cel.caps[i].value, db->cel.caps[i].value))
            return false;
    if (da->ntaints != db->ntaints) return false;
    for (uint32_t i = 0; i < da->ntaints; i++)
        if (!str0_eq(da->taints[i].key, db->taints[i].key) || !str0_eq(da->taints[i].value, db->taints[i].value) ||
            !str0_eq(da->taints[i].effect, db->taints[i].effect))
            return false;
    if (!da->nconsumes != !db->nconsumes) return false;
    if (da->nconsumes) {
        if (ca->pool != cb->pool || ca->ncons != cb->ncons) return false;
        for (uint32_t k = 0; k < ca->ncons; k++)
            if (ca->cons[k].counter != cb->cons[k].counter || quantity_cmp(&ca->cons[k].value, &cb->cons[k].value))
                return false;
    }
    return true;
}

/* Are symmetric skips sound in this call (no All request with a constraint)? */
static bool symmetry_ok(const dra_alloc_ctx *x) {
    if (x->no_prune) return false;
    for (size_t ci = 0; ci < x->ncs; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        for (uint32_t r = 0; r < cs->claim->nreqs; r++)
            for (uint32_t s = 0; s < cs->nvar[r]; s++)
                if (cs->reqs[r][s].all_mode && any_applies(cs, &cs->reqs[r][s])) return false;
    }
    return true;
}

/* Kubernetes' allocateOne, with an explicit stack instead of recursion: a call's
 * depth grows with every device slot, request and claim of the call (30,000 claims
 * overflowed the C stack), so each pending call is a frame in the arena. A "call"
 * (ci, ri, si, di, in_sub, start) runs allocateOne's prologue; what would recurse
 * pushes a frame saying how to resume (F_CLAIM: map the 32-results signal at the
 * claim boundary; F_SUBS: next subrequest; F_ALL: undo an All-mode device; F_SLOT:
 * next candidate of an ExactCount slot) and makes the child call; a result pops
 * frames until one resumes. Calls that would return the child's result unchanged
 * (the next request) reuse the caller's place, as the recursion's tail calls did.
 * Steps are counted per call, as Go counts allocateOne invocations. */
enum { F_CLAIM, F_SUBS, F_ALL, F_SLOT };

typedef struct dra_frame {
    uint32_t ci, ri, si, start;
    int64_t di;
    uint32_t pos;                /* F_SUBS: subrequest tried; F_SLOT: next candidate */
    uint8_t kind;
    bool in_sub, all_exceeded;
    uint8_t nfailed;             /* F_SLOT: candidates whose subtree failed (symmetry) */
    uint32_t failed[4];
    uint32_t nres;               /* F_ALL, F_SLOT: the claim's results when pushed (undo asserts) */
    uint32_t allocating;         /* F_SLOT: x->allocating[] of the device taken, before (undo asserts) */
} dra_frame;

typedef struct {
    dra_frame *v;
    size_t n, cap;
} dra_fstack;

static dra_frame *fpush(dra_alloc_ctx *x, dra_fstack *st, uint8_t kind, uint32_t ci, uint32_t ri, uint32_t si,
                        int64_t di, bool in_sub, uint32_t start) {
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 256;
        dra_frame *nv = arena_alloc(&x->a, cap * sizeof *nv);
        if (st->n) memcpy(nv, st->v, st->n * sizeof *nv);
        st->v = nv;
        st->cap = cap;
    }
    dra_frame *f = &st->v[st->n++];
    *f = (dra_frame){.ci = ci, .ri = ri, .si = si, .di = di, .in_sub = in_sub, .start = start, .kind = kind};
    return f;
}

/* The search's state between its three parts: the frames, the place of the call being
 * made (ci, ri, si, di, in_sub, start) and the result being handed up. */
typedef struct search_state {
    dra_fstack st;
    bool sym;                    /* symmetry_ok: failed twins may be skipped */
    uint32_t ci, ri, si, start;
    int64_t di;
    bool in_sub;
    int ret;
} search_state;

/* What the search does next: make the call at the place (push), try the top F_SLOT
 * frame's next candidate (step), or hand ret to the top frame (undo). */
enum { S_PUSH, S_STEP, S_UNDO };

static void search_at(search_state *s, const dra_frame *f, uint32_t si, int64_t di, bool in_sub, uint32_t start) {
    s->ci = f->ci, s->ri = f->ri, s->si = si, s->di = di, s->in_sub = in_sub, s->start = start;
}

/* The call at s's place, as allocateOne enters: the bounds first, then the next claim,
 * request, subrequest or device; frames pushed for the places that resume (the next
 * request reuses the caller's). S_STEP once an F_SLOT frame is pushed for a device to
 * choose, S_UNDO with s->ret when the call has its result. */
static int search_push(dra_alloc_ctx *x, search_state *s) {
    for (;;) {
        x->steps++;
        if ((x->deadline_ns || x->cancel) && past_deadline(x)) return s->ret = R_ERR, S_UNDO;
        if (x->bf && dra__bestfit_bound(x)) return s->ret = R_FAIL, S_UNDO;   /* best-fit: no completion beats the best */
        if (s->ci >= x->ncs) {
            s->ret = R_OK;
            if (x->choice == DRA_CHOICE_BEST_FIT && !x->status_only) {   /* bestfit.c: keep the best, search on */
                for (size_t i = 0; i < s->st.n; i++)
                    if (s->st.v[i].kind == F_SUBS) x->cs[s->st.v[i].ci].selected[s->st.v[i].ri] = s->st.v[i].pos;
                s->ret = dra__bestfit_leaf(x) ? R_OK : R_FAIL;
            }
            return S_UNDO;
        }
        dra_claim_state *cs = &x->cs[s->ci];
        const dra_claim *cl = cs->claim;
        const bool claim_entry = s->ri == 0 && !s->in_sub && s->di == 0;
        /* The claim's entry: one bound over all its requests. Its caller turns a
         * 32-results signal into a plain failure, so a claim that cannot be completed
         * from here fails plainly. Before the search first backtracked, only for
         * claims worth it (cs->eager_bound); once armed for every claim, the range
         * running on into later claims. */
        if (claim_entry && s->ci <= x->doomed && x->doomed < x->ncs && x->err_after[s->ci] >= x->doomed)
            return s->ret = R_FAIL, S_UNDO;   /* a later claim fails in any state: static_pass */
        if (claim_entry && cl->nreqs && (x->bound_on || cs->eager_bound) && bound_fails(x, cs, 0, NULL, 0, 0))
            return s->ret = x->timed_out ? R_ERR : R_FAIL, S_UNDO;
        if (s->ri >= cl->nreqs) {
            fpush(x, &s->st, F_CLAIM, s->ci, s->ri, s->si, s->di, s->in_sub, s->start);
            s->ci++, s->ri = 0, s->si = 0, s->di = 0, s->in_sub = false, s->start = 0;
            continue;
        }
        if (!s->in_sub && cl->reqs[s->ri].nsubs > 0) {
            dra_frame *f = fpush(x, &s->st, F_SUBS, s->ci, s->ri, s->si, s->di, s->in_sub, s->start);
            f->pos = 0;
            f->all_exceeded = true;
            s->si = 0, s->di = 0, s->in_sub = true, s->start = 0;
            continue;
        }
        dra_req_data *rd = &cs->reqs[s->ri][s->si];
        if (rd->all_mode && rd->nall == 0) return s->ret = R_FAIL, S_UNDO;
        if (s->di >= rd->num_devices) {   /* the next request: the caller's place */
            s->ri++, s->si = 0, s->di = 0, s->in_sub = false, s->start = 0;
            continue;
        }
        if ((int64_t)cs->nres + rd->num_devices - s->di > DRA_RESULTS_MAX) return s->ret = R_MAX, S_UNDO;
        if (rd->all_mode) {
            uint32_t nres = cs->nres;
            int ok = allocate_device(x, cs, rd, rd->all[s->di], true);
            if (ok <= 0) {
                if (!ok) arm_bound(x, s->ci);
                return s->ret = ok < 0 ? R_ERR : R_FAIL, S_UNDO;
            }
            dra_frame *f = fpush(x, &s->st, F_ALL, s->ci, s->ri, s->si, s->di, s->in_sub, s->start);
            f->nres = nres;
            s->di++, s->start = 0;
            continue;
        }
        int64_t need = rd->num_devices - s->di;
        int64_t avail = x->no_prune ? -1 : count_free(x, cs, rd, s->start, need);
        if (avail >= 0 && avail < need) {
            arm_bound(x, s->ci);
            return s->ret = R_FAIL, S_UNDO;
        }
        if (x->bound_on && bound_fails(x, cs, s->ri, rd, need, s->start)) return s->ret = R_FAIL, S_UNDO;
        dra_frame *f = fpush(x, &s->st, F_SLOT, s->ci, s->ri, s->si, s->di, s->in_sub, s->start);
        f->pos = s->start;
        f->nfailed = 0;
        f->nres = cs->nres;
        return S_STEP;
    }
}

/* The top F_SLOT frame's next candidate, from f->pos: the first that is free,
 * selectable, not a twin of one that failed, and allocated, then the call for the
 * slot's next device (S_PUSH). None (the frame popped, s->ret R_FAIL) or an error
 * (R_ERR): S_UNDO. */
static int search_step(dra_alloc_ctx *x, search_state *s) {
    const dra_nodeview *v = x->v;
    dra_frame *f = &s->st.v[s->st.n - 1];
    assert(f->kind == F_SLOT);
    dra_claim_state *cs = &x->cs[f->ci];
    dra_req_data *rd = &cs->reqs[f->ri][f->si];
    assert(cs->nres == f->nres && "a step starts from the state its frame was pushed in");
    for (uint32_t c = next_usable_cand(v, f->pos); c < v->ncands; c = next_usable_cand(v, c + 1)) {
        if (rd->admin && allocating_for_claim(cs, c)) continue;
        if (!rd->admin && dra__rs_device_in_use(x, c)) continue;
        s->ret = R_ERR;
        if (dra__alloc_tick(x)) goto pop;
        int sel = selectable(x, cs, rd, c, false);
        if (sel < 0) goto pop;
        if (!sel) continue;
        if (x->f->consumable_capacity && !dra_rs_capacity_fits(x, rd, c, false)) continue;
        bool twin = false;
        for (uint8_t i = 0; i < f->nfailed && !twin; i++) twin = interchangeable(x, f->failed[i], c);
        if (twin) continue;   /* fails as the failed one did */
        f->allocating = x->allocating[c];
        int ok = allocate_device(x, cs, rd, c, false);
        if (ok < 0) goto pop;
        if (!ok) continue;
        f->pos = c + 1;
        search_at(s, f, f->si, f->di + 1, f->in_sub, c + 1);
        return S_PUSH;
    }
    arm_bound(x, f->ci);   /* the search backtracks: from now on the bound pays off */
    s->ret = R_FAIL;
pop:
    s->st.n--;
    return S_UNDO;
}

/* Undoes what the step of an F_ALL or F_SLOT frame allocated (its last result), and
 * asserts the claim is back where the frame was pushed: as many results, the device's
 * allocating count as before it was taken. */
static void search_undo_device(dra_alloc_ctx *x, const dra_frame *f) {
    dra_claim_state *cs = &x->cs[f->ci];
    uint32_t c = cs->res[cs->nres - 1].cand;
    deallocate_last(x, cs);
    assert(cs->nres == f->nres && "undo restores the claim's results");
    assert((f->kind != F_SLOT || x->allocating[c] == f->allocating) && "undo restores the device's count");
    (void)c;
}

/* s->ret, the innermost call's result, handed to the top frame: popped (and its device
 * undone) until one resumes — a subrequest's next variant (S_PUSH), a slot's next
 * candidate (S_STEP) — or the stack is empty (the search's result). */
static int search_undo(dra_alloc_ctx *x, search_state *s) {
    dra_frame *f = &s->st.v[s->st.n - 1];
    switch (f->kind) {
    case F_CLAIM:
        s->st.n--;
        if (s->ret == R_MAX) s->ret = R_FAIL;
        return S_UNDO;
    case F_SUBS: {
        dra_claim_state *cs = &x->cs[f->ci];
        if (s->ret != R_MAX) {
            f->all_exceeded = false;
            if (s->ret == R_OK) cs->selected[f->ri] = f->pos;
            if (s->ret != R_FAIL) {
                s->st.n--;
                return S_UNDO;
            }
        }
        if (++f->pos < cs->nvar[f->ri]) {
            search_at(s, f, f->pos, 0, true, 0);
            return S_PUSH;
        }
        s->ret = f->all_exceeded ? R_MAX : R_FAIL;
        s->st.n--;
        return S_UNDO;
    }
    case F_ALL:
        if (s->ret != R_OK) search_undo_device(x, f);
        s->st.n--;
        return S_UNDO;
    default:
        assert(f->kind == F_SLOT);
        if (s->ret == R_OK) {
            s->st.n--;
            return S_UNDO;
        }
        search_undo_device(x, f);
        if (s->ret != R_FAIL) {
            s->st.n--;
            return S_UNDO;
        }
        if (s->sym && f->nfailed < 4) f->failed[f->nfailed++] = f->pos - 1;
        return S_STEP;
    }
}

/* allocateOne's depth-first search, as push / step / undo over the frames: the result
 * of the first call (R_OK, R_FAIL, R_MAX, R_ERR). */
static int search(dra_alloc_ctx *x) {
    search_state s = {.sym = symmetry_ok(x)};
    for (int next = S_PUSH;;) {
        switch (next) {
        case S_PUSH: next = search_push(x, &s); break;
        case S_STEP: next = search_step(x, &s); break;
        default:
            if (!s.st.n) return s.ret;
            next = search_undo(x, &s);
        }
    }
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
            /* Go prints claim.Name here, the only claim reference without its namespace
             * (allocator_incubating.go: "create NodeSelector for claim %s", claim.Name).
             * Issue #21 added the namespace; the oracle (tests/upstream) is the judge. */
            return dra__alloc_fail(x, "create NodeSelector for claim %s: unsupported ResourceSlice.NodeSelector with %u terms",
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
            r->key = c->key;
            r->admin_access = re->rd->admin ? 1 : -1;
            r->tols = re->rd->spec->tols;
            r->ntols = re->rd->spec->ntols;
            r->share_id = re->share_id;
            if (re->consumed && c->dev->cel.ncaps) {
                r->consumed = ARENA_NEWN(&x->a, dra_cap_value, c->dev->cel.ncaps);
                for (uint32_t k = 0; k < c->dev->cel.ncaps; k++)
                    r->consumed[k] = (dra_cap_value){c->dev->caps[k].key, c->dev->caps[k].key_id, re->consumed[k]};
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

void dra__alloc_carry_selectors(dra_alloc_ctx *x) { x->sel_carry = true; }

void dra__alloc_class_hint(dra_alloc_ctx *x, const dra_world *w, const dra_request_spec *const *specs,
                           const dra_class *const *cls, uint32_t n) {
    x->hint_w = n ? w : NULL;
    x->hint_specs = specs;
    x->hint_cls = cls;
    x->nhint = n;
}

/* Saves the last call's selector results into x->sel_keep when the coming call is on
 * the same view and claims and they can be carried (a result with an error or a
 * derived attribute is not: its text or values live in the arena); true when saved. */
static bool sel_save(dra_alloc_ctx *x, const dra_nodeview *v, const dra_claim *const *claims, size_t n) {
    bool carry = x->sel_carry;
    x->sel_carry = false;
    if (!carry || !x->prepared || !x->cs || x->v != v || x->ncs != n || !v->ncands) return false;
    size_t need = 0;
    for (size_t ci = 0; ci < n; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        if (cs->claim != claims[ci]) return false;
        for (uint32_t ri = 0; ri < cs->claim->nreqs; ri++)
            for (uint32_t si = 0; si < cs->nvar[ri]; si++) {
                if (!cs->reqs[ri][si].sel || cs->reqs[ri][si].derived) return false;
                need += v->ncands;
            }
    }
    if (need > x->sel_keep_cap) {
        free(x->sel_keep);
        x->sel_keep = xmalloc(need);
        x->sel_keep_cap = need;
    }
    size_t off = 0;
    for (size_t ci = 0; ci < n; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        for (uint32_t ri = 0; ri < cs->claim->nreqs; ri++)
            for (uint32_t si = 0; si < cs->nvar[ri]; si++, off += v->ncands) {
                const uint8_t *sel = cs->reqs[ri][si].sel;
                for (uint32_t c = 0; c < v->ncands; c++)
                    x->sel_keep[off + c] = sel[c] == SEL_YES || sel[c] == SEL_NO ? sel[c] : SEL_UNKNOWN;
            }
    }
    return true;
}

/* Puts the saved results back into the new call's requests (prepared as the saved
 * ones were: the same claims). */
static void sel_restore(dra_alloc_ctx *x) {
    size_t off = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        for (uint32_t ri = 0; ri < cs->claim->nreqs; ri++)
            for (uint32_t si = 0; si < cs->nvar[ri]; si++, off += x->v->ncands) {
                dra_req_data *rd = &cs->reqs[ri][si];
                if (!rd->derived) memcpy(rd->sel, x->sel_keep + off, x->v->ncands);
            }
    }
}

dra_alloc_status dra_allocate(dra_alloc_ctx *x, const dra_nodeview *v, const dra_allocated *state,
                              const dra_claim *const *claims, size_t nclaims, dra_alloc_result **out, err *e) {
    bool carried = sel_save(x, v, claims, nclaims);
    arena_clear(&x->a);
    x->steps = 0;
    x->timed_out = false;
    x->ticks = 0;
    x->bound_on = false;
    x->bnd = NULL;
    x->doomed = SIZE_MAX;
    x->err_after = NULL;
    x->bf = NULL;
    x->status_only = !out;
    x->explained = NULL;
    x->explainable = false;
    x->v = v;
    x->w = v->w;
    x->st = state;
    x->f = &v->f;
    x->e = e;
    x->out = NULL;
    uint32_t nc = v->ncands ? v->ncands : 1;
    x->allocating = ARENA_NEWN(&x->a, uint32_t, nc);
    /* capacity bookkeeping only exists with DRAConsumableCapacity */
    x->cap_alloc = v->f.consumable_capacity ? ARENA_NEWN(&x->a, quantity *, nc) : NULL;
    x->cap_shares = v->f.consumable_capacity ? ARENA_NEWN(&x->a, uint32_t, nc) : NULL;
    x->mark = ARENA_NEWN(&x->a, uint8_t, nc);
    x->st_use = state ? ARENA_NEWN(&x->a, uint8_t, nc) : NULL;
    /* A fleet's in-use set is far larger than the caches, and a node's candidates sit
     * at random places in it: their lines are asked for all at once, so that the
     * misses overlap, before the search reads them one candidate at a time (the
     * chunks' headers first: cmap_prefetch reads them). */
    for (uint32_t c = 0; state && c < v->ncands; c++) cmap_prefetch_chunk(&state->devices, v->cands[c].key);
    for (uint32_t c = 0; state && c < v->ncands; c++) cmap_prefetch(&state->devices, v->cands[c].key);
    x->cnt_avail = ARENA_NEWN(&x->a, quantity *, v->npools ? v->npools : 1);
    x->cnt_used = ARENA_NEWN(&x->a, quantity *, v->npools ? v->npools : 1);
    if (out) *out = NULL;
    x->prepared = false;
    bool prepared = x->prepared = prepare(x, claims, nclaims);
    if (prepared && carried) sel_restore(x);
    int r = prepared ? search(x) : R_ERR;
    if (x->bf && dra__bestfit_finish(x)) r = R_OK;   /* best-fit: the best solution, back in x->cs */
    if (x->timed_out) {
        err_set(e, "timed out trying to allocate devices");
        return DRA_ALLOC_TIMEOUT;
    }
    if (r == R_ERR) return DRA_ALLOC_ERROR;
    assert(prepared);
    if (r != R_OK) {
        x->explainable = true;
        for (uint32_t i = 0; i < v->npools; i++)
            if (v->pools[i].invalid) {
                dra__alloc_fail(x, "invalid resource pools were encountered");
                return DRA_ALLOC_NODE_ERROR;
            }
        return DRA_ALLOC_UNSAT;
    }
    if (!build_results(x)) return DRA_ALLOC_ERROR;
    if (out) *out = x->out;
    return DRA_ALLOC_OK;
}
