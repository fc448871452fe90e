/* bestfit.c — best-fit device choice (engine.h: dra_device_choice).
 *
 * First-fit returns the first solution of Kubernetes' depth-first search. Best-fit
 * lets the same search run on past it: where the search would return success
 * (alloc.c, every claim filled) it calls dra__bestfit_leaf, which scores the solution,
 * keeps it when it beats the best so far, and has the search treat the leaf as a
 * failure, so it backtracks to the next solution in search order. Every solution
 * seen is a state the exact search reached with all requests, constraints, counters
 * and capacity satisfied, so best-fit cannot change satisfiability: it allocates
 * exactly when first-fit does and only chooses which allocation to return. alloc.c's
 * pruning stays sound under enumeration: the bounds skip only subtrees without a
 * solution, and the interchangeable-device skip only solutions that mirror an
 * earlier one device for device (same pool, counter consumption, attributes), which
 * score the same, so the earlier one wins the tie anyway.
 *
 * The objective (the tiers are listed in engine.h) is the fragmentation the
 * allocation leaves on the node, over three kinds of unit a later large request
 * wants whole: shared-counter sets (a physical GPU under MIG-like partitions),
 * multi-allocatable devices (consumable capacity), and topology groups (devices
 * sharing a pcieRoot or a NUMA node). A unit is free (nothing in use), partly used,
 * or full (fill 1: every counter or capacity used up, every member device in use).
 * Only the units a solution touches differ between solutions — the rest is the
 * allocated state, the same for all — so a score is a sum of per-unit changes over
 * the units the solution's devices touch: O(results) per solution, plus one pass
 * over the node's devices per call to group them.
 *
 * Plain depth-first enumeration varies the last device first, so a bounded run only
 * sees the corner of the search below the first solution's early choices (for a pod
 * of two 1g claims: every second device with the first one on the whole GPU). So
 * the enumeration is a branch and bound: tiers 1-4 count units a partial allocation
 * took from free, which only grow as devices are added, so once the devices taken
 * so far are worse on them than the best solution, dra__bestfit_bound cuts the
 * subtree (the search sees a plain failure there; alloc.c's pruning and its
 * interchangeable-device skip stay sound, since a mirror device scores the same).
 * Allocations that only tie the best on tiers 1-4 are refined on tiers 5-6 for
 * BF_TIE_LEAVES leaves, then cut as well, so the budget goes to branches that can
 * improve tiers 1-4. No bound with firstAvailable requests (tier 0 dominates and is
 * not known for a partial allocation) or in pods of more than BF_BNB_MAX_CLAIMS
 * claims.
 *
 * Bounds (engine.h): at most DRA_BESTFIT_MAX_SOLUTIONS solutions, and after the
 * first one DRA_BESTFIT_MAX_STEPS search steps and DRA_BESTFIT_MAX_TICKS candidate
 * visits; these decide in practice and keep the answer reproducible. The cap of
 * DRA_BESTFIT_MAX_NS of the thread's CPU time (and the caller's deadline, or its
 * cancel flag) is the safety net for pathological inputs; either way the
 * enumeration stops through alloc.c's deadline machinery and the best solution so
 * far is returned. When
 * nothing on the node can score differently (no counters, no multi-allocatable
 * device, no topology attribute, no firstAvailable request) the first solution is
 * returned at once. */
#include "engine/alloc/alloc_internal.h"

#include "base/clock.h"
#include "base/hash.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* ---- the option ------------------------------------------------------------------ */

void dra_alloc_ctx_set_device_choice(dra_alloc_ctx *x, dra_device_choice c) { x->choice = (uint8_t)c; }
dra_device_choice dra_alloc_ctx_device_choice(const dra_alloc_ctx *x) { return (dra_device_choice)x->choice; }

bool dra_device_choice_parse(const char *s, dra_device_choice *out) {
    if (!s) return false;
    if (!strcmp(s, "first-fit")) *out = DRA_CHOICE_FIRST_FIT;
    else if (!strcmp(s, "best-fit")) *out = DRA_CHOICE_BEST_FIT;
    else return false;
    return true;
}

const char *dra_device_choice_name(dra_device_choice c) { return c == DRA_CHOICE_BEST_FIT ? "best-fit" : "first-fit"; }

/* ---- per-call state --------------------------------------------------------------- */

/* Score tiers after the subrequest choice, in order; higher is better. */
enum { T_SETS, T_MULTI, T_PCIE, T_NUMA, T_PARTIAL, T_FILL, NTIERS };
enum { G_PCIE, G_NUMA, NGROUPKINDS };

#define FULL (1.0 - 1e-9)

/* Pods with more claims enumerate without the bound: scoring a partial allocation
 * is O(results) per search step. */
enum { BF_BNB_MAX_CLAIMS = 64 };
/* Leaves spent refining tiers 5-6 among allocations as good on tiers 1-4 as the best:
 * past that, partial allocations that only tie the best on tiers 1-4 are cut too,
 * and the enumeration moves on to branches that may improve them. */
enum { BF_TIE_LEAVES = 16 };

typedef struct bf_groups {
    uint32_t *of;            /* per candidate: its group, UINT32_MAX when none; NULL: no device has the attribute */
    uint32_t *size;          /* per group: member devices in complete, valid pools */
    uint32_t *used;          /* per group: members in use before the call */
    uint32_t *add;           /* per group: members the solution takes (zero between leaves) */
    uint32_t n;
    uint32_t nshared;        /* groups of two devices or more: a group of one is just its device */
} bf_groups;

struct dra_bestfit {
    uint32_t nsol;
    /* the best solution so far */
    int64_t best[NTIERS];
    uint32_t *best_sel, *cur_sel;   /* per (claim, request): the subrequest chosen (0 without) */
    uint32_t nsel;
    dra_res_entry *best_res;        /* every claim's results, one after the other */
    size_t best_cap;
    uint32_t *best_nres;            /* per claim */
    /* the caller's deadline (restored at the end) and the enumeration's budget */
    uint64_t user_deadline, step_limit, tick_limit, cpu_limit;
    /* units */
    bf_groups g[NGROUPKINDS];
    uint8_t *was_used;              /* per candidate: in use before the call (was_used) */
    uint32_t *stamp, gen;           /* per candidate: seen in this leaf */
    uint32_t *touched;              /* groups the leaf touched: kind << 31 | group */
    size_t touched_cap;
    quantity *q;                    /* capacity scratch */
    uint32_t qcap;
    bool flat;                      /* nothing can score differently: the first solution is it */
    bool bnb;                       /* branch and bound on (dra__bestfit_bound) */
    uint32_t ties;                  /* leaves since tiers 1-4 of the best last improved */
};


static bool state_uses(const dra_alloc_ctx *x, uint32_t c) {
    const dra_allocated *st = x->st;
    uint64_t v, k = x->v->cands[c].key;
    return st && (cmap_get(&st->devices, k, &v) || cmap_get(&st->shared, k, &v) || cmap_get(&st->capacity, k, &v));
}

static const cel_attr *group_attr(const dra_device *d, int kind, uint32_t dom, uint32_t pcie, uint32_t numa1,
                                  uint32_t numa2) {
    for (uint32_t i = 0; i < d->cel.nattrs; i++) {
        const cel_attr *a = &d->cel.attrs[i];
        if (a->kind != CEL_ATTR_STRING && a->kind != CEL_ATTR_INT) continue;
        if (kind == G_PCIE ? (pcie && a->domain == dom && a->name == pcie)
                           : ((numa1 && a->name == numa1) || (numa2 && a->name == numa2)))
            return a;
    }
    return NULL;
}

static bool same_value(const cel_attr *a, const cel_attr *b) {
    if (a->kind != b->kind) return false;
    if (a->kind == CEL_ATTR_INT) return a->u.i == b->u.i;
    return a->u.s->len == b->u.s->len && !memcmp(a->u.s->s, b->u.s->s, a->u.s->len);
}

/* In use before the call (allocated, shared or with capacity consumed), looked up at
 * first need: 1 no, 2 yes. */
static bool was_used(const dra_alloc_ctx *x, struct dra_bestfit *b, uint32_t c) {
    if (!b->was_used[c]) b->was_used[c] = state_uses(x, c) ? 2 : 1;
    return b->was_used[c] == 2;
}

/* Devices grouped by pcieRoot and by NUMA node: one open-addressing table per kind,
 * keyed by the attribute's value (the same value in any driver's devices is the same
 * root or node of this machine). */
static void build_groups(dra_alloc_ctx *x, struct dra_bestfit *b) {
    const dra_nodeview *v = x->v;
    const intern_table *names = x->w->names;
    size_t count = intern_count(names);
    /* (a table freed and another made at the same address with as many strings
     * could leave stale ids: that would only cost grouping, never validity) */
    if (x->bf_names != names || x->bf_names_count != count) {
        static const char *const ids[4] = {"resource.kubernetes.io", "pcieRoot", "numaNode", "numa"};
        for (int i = 0; i < 4; i++) x->bf_ids[i] = intern_get(names, ids[i], strlen(ids[i]));
        x->bf_names = names, x->bf_names_count = count;
    }
    uint32_t dom = x->bf_ids[0], pcie = dom ? x->bf_ids[1] : 0, numa1 = x->bf_ids[2], numa2 = x->bf_ids[3];
    uint32_t nc = v->ncands ? v->ncands : 1;
    b->was_used = ARENA_NEWN(&x->a, uint8_t, nc);
    uint32_t *table = NULL;   /* group + 1, by value hash */
    const cel_attr **rep = NULL;
    size_t tsize = 16;
    while (tsize < 2 * (size_t)nc) tsize *= 2;
    for (int kind = 0; kind < NGROUPKINDS; kind++) {
        bf_groups *g = &b->g[kind];
        if (kind == G_PCIE ? !pcie : !numa1 && !numa2) continue;
        uint32_t first = 0;   /* nodes without the attribute pay one scan, nothing more */
        while (first < v->ncands && !group_attr(v->cands[first].dev, kind, dom, pcie, numa1, numa2)) first++;
        if (first == v->ncands) continue;
        if (!table) {
            table = ARENA_NEWN(&x->a, uint32_t, tsize);
            rep = ARENA_NEWN(&x->a, const cel_attr *, nc);
        } else {
            memset(table, 0, sizeof *table * tsize);
        }
        g->of = ARENA_NEWN(&x->a, uint32_t, nc);
        memset(g->of, 0xff, sizeof *g->of * nc);
        g->size = ARENA_NEWN(&x->a, uint32_t, nc);
        g->add = ARENA_NEWN(&x->a, uint32_t, nc);
        for (uint32_t c = first; c < v->ncands; c++) {
            const dra_pool *p = &v->pools[v->cands[c].pool];
            if (p->incomplete || p->invalid) continue;
            const cel_attr *a = group_attr(v->cands[c].dev, kind, dom, pcie, numa1, numa2);
            if (!a) continue;
            uint64_t h = a->kind == CEL_ATTR_INT ? hash_u64((uint64_t)a->u.i) : hash_bytes(a->u.s->s, a->u.s->len);
            size_t i = (size_t)h & (tsize - 1);
            while (table[i] && !same_value(a, rep[table[i] - 1])) i = (i + 1) & (tsize - 1);
            if (!table[i]) {
                rep[g->n] = a;
                table[i] = ++g->n;
            }
            g->of[c] = table[i] - 1;
            g->size[table[i] - 1]++;
        }
        /* a group of one device is just that device; the others count their members in use */
        g->used = ARENA_NEWN(&x->a, uint32_t, g->n ? g->n : 1);
        for (uint32_t c = first; c < v->ncands; c++) {
            uint32_t gi = g->of[c];
            if (gi == UINT32_MAX) continue;
            if (g->size[gi] < 2) g->of[c] = UINT32_MAX;
            else g->used[gi] += was_used(x, b, c);
        }
        for (uint32_t gi = 0; gi < g->n; gi++) g->nshared += g->size[gi] >= 2;
    }
}

static bool node_is_flat(const dra_alloc_ctx *x, const struct dra_bestfit *b) {
    const dra_nodeview *v = x->v;
    if (b->g[G_PCIE].nshared || b->g[G_NUMA].nshared) return false;
    for (uint32_t pi = 0; pi < v->npools; pi++)
        if (v->pools[pi].ncounters && x->f->partitionable) return false;
    if (x->f->consumable_capacity)
        for (uint32_t c = 0; c < v->ncands; c++)
            if (v->cands[c].dev->allow_multi) return false;
    for (size_t ci = 0; ci < x->ncs; ci++)
        for (uint32_t r = 0; r < x->cs[ci].claim->nreqs; r++)
            if (x->cs[ci].nvar[r] > 1) return false;
    return true;
}

static struct dra_bestfit *begin(dra_alloc_ctx *x) {
    struct dra_bestfit *b = ARENA_NEW(&x->a, struct dra_bestfit);
    /* The budget counts from here. A deadline must be set for the search to look at
     * the clock and count ticks at all: the caller's, or one that never passes. The
     * CPU clock (a system call) is read from the first budget check on. */
    b->user_deadline = x->deadline_ns;
    if (!x->deadline_ns) x->deadline_ns = UINT64_MAX;
    b->step_limit = x->steps + DRA_BESTFIT_MAX_STEPS;
    b->tick_limit = x->ticks + DRA_BESTFIT_MAX_TICKS;
    for (size_t ci = 0; ci < x->ncs; ci++) b->nsel += x->cs[ci].claim->nreqs;
    b->best_sel = ARENA_NEWN(&x->a, uint32_t, b->nsel ? b->nsel : 1);
    b->cur_sel = ARENA_NEWN(&x->a, uint32_t, b->nsel ? b->nsel : 1);
    b->best_nres = ARENA_NEWN(&x->a, uint32_t, x->ncs ? x->ncs : 1);
    b->stamp = ARENA_NEWN(&x->a, uint32_t, x->v->ncands ? x->v->ncands : 1);
    build_groups(x, b);
    b->flat = node_is_flat(x, b);
    /* The bound needs the subrequest tier settled (it dominates and is not monotone
     * in a partial allocation) and a partial score that is cheap (few claims). */
    b->bnb = !b->flat && x->ncs <= BF_BNB_MAX_CLAIMS;
    for (size_t ci = 0; ci < x->ncs && b->bnb; ci++)
        for (uint32_t r = 0; r < x->cs[ci].claim->nreqs; r++)
            if (x->cs[ci].nvar[r] > 1) b->bnb = false;
    return b;
}

/* ---- scoring ------------------------------------------------------------------------ */

static double clamp01(double f) { return f < 0 ? 0 : f > 1 ? 1 : f; }

/* One touched unit: was it in use before, its fill before and after. */
static void unit(int64_t *t, int tier, bool used_before, double fb, double fa) {
    if (!used_before) t[tier]--;   /* a wholly free unit broken into */
    int64_t partial_before = used_before && fb < FULL, partial_after = fa < FULL;
    t[T_PARTIAL] -= partial_after - partial_before;
    int64_t b6 = llround(clamp01(fb) * 1e6), a6 = llround(clamp01(fa) * 1e6);
    t[T_FILL] += a6 * a6 - b6 * b6;
}

/* Shared-counter sets this attempt consumes from: fill is the mean over the set's
 * counters of used / capacity. */
static void score_counter_sets(dra_alloc_ctx *x, int64_t *t) {
    const dra_nodeview *v = x->v;
    for (uint32_t pi = 0; pi < v->npools; pi++) {
        const dra_pool *p = &v->pools[pi];
        if (!p->ncounters || !x->cnt_used[pi]) continue;
        const quantity *used = x->cnt_used[pi], *avail = x->cnt_avail[pi];
        for (uint32_t s = 0; s < p->nsets; s++) {
            bool took = false, before = false;
            for (uint32_t i = 0; i < p->ncounters && !took; i++)
                took = p->counters[i].set_id == p->set_ids[s] && quantity_sign(&used[i]) > 0;
            if (!took) continue;   /* a set this attempt does not consume from */
            double fb = 0, fa = 0;
            uint32_t n = 0;
            for (uint32_t i = 0; i < p->ncounters; i++) {
                if (p->counters[i].set_id != p->set_ids[s]) continue;
                quantity ub;   /* consumed by allocated devices */
                quantity_sub(&p->counters[i].value, &avail[i], &ub);
                if (quantity_sign(&ub) > 0) before = true;
                double cap = quantity_to_double(&p->counters[i].value);
                if (cap <= 0) continue;
                double u0 = quantity_to_double(&ub);
                fb += clamp01(u0 / cap);
                fa += clamp01((u0 + quantity_to_double(&used[i])) / cap);
                n++;
            }
            if (n) fb /= n, fa /= n;
            unit(t, T_SETS, before, fb, fa);
        }
    }
}

/* A multi-allocatable device this attempt takes a share of: fill is the mean over
 * its capacities of used / value. */
static void score_multi(dra_alloc_ctx *x, struct dra_bestfit *b, uint32_t c, int64_t *t) {
    const dra_device *d = x->v->cands[c].dev;
    uint32_t ncaps = d->cel.ncaps;
    if (ncaps > b->qcap) {
        b->qcap = ncaps * 2;
        b->q = ARENA_NEWN(&x->a, quantity, b->qcap);
    }
    double fb = 0, fa = 0;
    uint32_t n = 0;
    bool before = was_used(x, b, c);
    if (ncaps) dra__rs_capacity_left(x, c, b->q);
    for (uint32_t k = 0; k < ncaps; k++) {
        double cap = quantity_to_double(&d->caps[k].value);
        if (cap <= 0) continue;
        double ua = cap - quantity_to_double(&b->q[k]);
        double ub = ua - (x->cap_alloc[c] ? quantity_to_double(&x->cap_alloc[c][k]) : 0);
        if (ub > 0) before = true;
        fb += clamp01(ub / cap);
        fa += clamp01(ua / cap);
        n++;
    }
    if (n) fb /= n, fa /= n;
    unit(t, T_MULTI, before, fb, fa);
}

static void score(dra_alloc_ctx *x, struct dra_bestfit *b, int64_t *t) {
    memset(t, 0, sizeof *t * NTIERS);
    if (x->f->partitionable) score_counter_sets(x, t);
    if (++b->gen == 0) {
        memset(b->stamp, 0, sizeof *b->stamp * (x->v->ncands ? x->v->ncands : 1));
        b->gen = 1;
    }
    size_t total = 0, ntouched = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) total += x->cs[ci].nres;
    if (2 * total > b->touched_cap) {
        b->touched_cap = 4 * total;
        b->touched = ARENA_NEWN(&x->a, uint32_t, b->touched_cap);
    }
    for (size_t ci = 0; ci < x->ncs; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        for (uint32_t i = 0; i < cs->nres; i++) {
            const dra_res_entry *re = &cs->res[i];
            uint32_t c = re->cand;
            if (re->rd->admin || b->stamp[c] == b->gen) continue;   /* admin access uses nothing up */
            b->stamp[c] = b->gen;
            if (re->cap_inserted) score_multi(x, b, c, t);
            bool grouped = (b->g[G_PCIE].of && b->g[G_PCIE].of[c] != UINT32_MAX) ||
                           (b->g[G_NUMA].of && b->g[G_NUMA].of[c] != UINT32_MAX);
            if (!grouped || was_used(x, b, c)) continue;   /* a group member already in use */
            for (int kind = 0; kind < NGROUPKINDS; kind++) {
                bf_groups *g = &b->g[kind];
                uint32_t gi = g->of ? g->of[c] : UINT32_MAX;
                if (gi == UINT32_MAX) continue;
                if (!g->add[gi]++) b->touched[ntouched++] = (uint32_t)kind << 31 | gi;
            }
        }
    }
    for (size_t i = 0; i < ntouched; i++) {
        int kind = (int)(b->touched[i] >> 31);
        uint32_t gi = b->touched[i] & 0x7fffffffu;
        bf_groups *g = &b->g[kind];
        double size = g->size[gi], before = g->used[gi], after = g->used[gi] + g->add[gi];
        unit(t, kind == G_PCIE ? T_PCIE : T_NUMA, before > 0, before / size, after / size);
        g->add[gi] = 0;
    }
}

static bool better(const struct dra_bestfit *b, const int64_t *t) {
    for (uint32_t i = 0; i < b->nsel; i++)
        if (b->cur_sel[i] != b->best_sel[i]) return b->cur_sel[i] < b->best_sel[i];
    for (int k = 0; k < NTIERS; k++)
        if (t[k] != b->best[k]) return t[k] > b->best[k];
    return false;   /* a tie: the earlier solution stays */
}

static void keep(dra_alloc_ctx *x, struct dra_bestfit *b, const int64_t *t) {
    size_t total = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) total += x->cs[ci].nres;
    if (total > b->best_cap) {
        b->best_cap = total * 2;
        b->best_res = ARENA_NEWN(&x->a, dra_res_entry, b->best_cap);
    }
    size_t off = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        memcpy(b->best_res + off, cs->res, sizeof *cs->res * cs->nres);
        b->best_nres[ci] = cs->nres;
        off += cs->nres;
    }
    memcpy(b->best_sel, b->cur_sel, sizeof *b->cur_sel * b->nsel);
    memcpy(b->best, t, sizeof b->best);
}

/* ---- the search's hooks ------------------------------------------------------------------ */

bool dra__bestfit_leaf(dra_alloc_ctx *x) {
    struct dra_bestfit *b = x->bf;
    if (!b) b = x->bf = begin(x);
    int64_t t[NTIERS];
    score(x, b, t);
    uint32_t k = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) {
        const dra_claim_state *cs = &x->cs[ci];
        for (uint32_t r = 0; r < cs->claim->nreqs; r++) b->cur_sel[k++] = cs->nvar[r] > 1 ? cs->selected[r] : 0;
    }
    bool first = b->nsol == 0, improves = false;
    for (int k = T_SETS; k <= T_NUMA && !first; k++)
        if (t[k] != b->best[k]) {
            improves = t[k] > b->best[k];
            break;
        }
    b->ties = first || improves ? 0 : b->ties + 1;
    if (first || better(b, t)) keep(x, b, t);
    return b->flat || ++b->nsol >= DRA_BESTFIT_MAX_SOLUTIONS;
}

bool dra__bestfit_bound(dra_alloc_ctx *x) {
    struct dra_bestfit *b = x->bf;
    if (!b->bnb) return false;
    int64_t t[NTIERS];
    score(x, b, t);
    for (int k = T_SETS; k <= T_NUMA; k++)
        if (t[k] != b->best[k]) return t[k] < b->best[k];
    return b->ties >= BF_TIE_LEAVES;   /* as good so far: tiers 5 and 6 may still win */
}

bool dra__bestfit_spent(const dra_alloc_ctx *x) {
    struct dra_bestfit *b = x->bf;
    if (x->steps >= b->step_limit || x->ticks >= b->tick_limit) return true;
    /* this thread's CPU time: the safety net counts work, not time the thread spent
     * preempted on a busy machine (which would make answers depend on the load) */
    uint64_t now = thread_cpu_ns();
    if (!b->cpu_limit) b->cpu_limit = now + DRA_BESTFIT_MAX_NS;   /* first check: within 64 steps, 256 ticks */
    return now >= b->cpu_limit;
}

bool dra__bestfit_finish(dra_alloc_ctx *x) {
    struct dra_bestfit *b = x->bf;
    x->deadline_ns = b->user_deadline;
    size_t off = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        cs->nres = b->best_nres[ci];
        memcpy(cs->res, b->best_res + off, sizeof *cs->res * cs->nres);
        off += cs->nres;
    }
    uint32_t k = 0;
    for (size_t ci = 0; ci < x->ncs; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        for (uint32_t r = 0; r < cs->claim->nreqs; r++, k++)
            if (cs->nvar[r] > 1) cs->selected[r] = b->best_sel[k];
    }
    /* what the enumeration ran into after the first solution (its budget, the
     * caller's deadline, a selector error first-fit never reaches) is not the answer */
    x->timed_out = false;
    if (x->e) err_clear(x->e);
    return true;
}
