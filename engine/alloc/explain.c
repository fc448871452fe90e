/* explain.c — why the claims of the last dra_allocate call do not fit the node.
 *
 * Nothing here runs unless a caller asks, after the call returned DRA_ALLOC_UNSAT
 * (or DRA_ALLOC_NODE_ERROR): the search is over and gave every device back, so the
 * context still holds each request's class, selectors and cached selector results,
 * the claims' constraints and the in-use state, and nothing is being allocated. The
 * analysis (struct dra_explain, made once per call in the context's arena) asks the
 * search's own predicates — alloc.c's selectors, alloc_resources.c's taint, capacity,
 * counter and in-use checks, constraints.c — device by device:
 *
 *   per request (each firstAvailable subrequest on its own): the devices matching the
 *   class and selectors, and for each one that is not free the first reason it cannot
 *   be taken, most lasting first: in an incomplete or invalid pool; bindingConditions
 *   with DRADeviceBindingConditions off; a taint not tolerated; consumesCounters with
 *   DRAPartitionableDevices off; a capacity the device lacks, that its requestPolicy
 *   refuses or that is smaller than asked; held by a claim (the allocated state keeps
 *   which: world.h dra_allocated.holders); too little capacity left; shared counters
 *   used up (which counter of which set, how much left, how much a device needs).
 *   Devices of slices the node view leaves out (a slice with sharedCounters or
 *   perDeviceNodeSelection while DRAPartitionableDevices is off; with it on, the
 *   devices of a slice that also holds sharedCounters) are counted beside them.
 *   With enough free devices, each constraint on the request alone: no value of a
 *   matchAttribute shared by as many free devices as it wants, too few distinct values
 *   for a distinctAttribute (list-type values noted when DRAListTypeAttributes is off);
 *   then the constraint over all its requests together; and when every request and
 *   constraint is satisfiable alone, the requests together (more devices wanted than
 *   free ones match any of them), or plainly that no combination satisfies them all.
 *
 * Every statement made is true of the node (a count, a failing predicate); when
 * nothing provably cuts, the text says only that no combination works. Two
 * renderings: the long text for `dralloc allocate` (dra_alloc_explain, one detail line
 * per cause) and one line for the extender's FailedNodes and `allocate --pod`
 * (dra__explain_short: the failing requests with their two largest causes). */
#include "engine/alloc/explain.h"

#include "engine/alloc/alloc_internal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the analysis -------------------------------------------------------------------- */

enum {
    K_POOL,           /* in an incomplete or invalid pool (p: the dra_pool) */
    K_BINDING,        /* bindingConditions, DRADeviceBindingConditions off */
    K_TAINT,          /* a taint the request does not tolerate (p: the dra_taint) */
    K_COUNTERS_GATE,  /* consumesCounters, DRAPartitionableDevices off */
    K_CAP_MISSING,    /* a requested capacity the device lacks (key) */
    K_CAP_POLICY,     /* the capacity's requestPolicy refuses the amount (key, want) */
    K_CAP_SMALL,      /* the capacity is smaller than the amount (key, want, left = value) */
    K_HELD,           /* allocated to a claim (the request's holders) */
    K_CAP_USED,       /* too little of the capacity left (key, want, left) */
    K_COUNTERS,       /* a shared counter used up (p: pool, idx: counter, want, left) */
    K_LOST,           /* in a slice the node view leaves out (p: lost_slice) */
};

typedef struct lost_slice {
    const dra_slice *s;
    uint8_t why;
} lost_slice;

typedef struct cause {
    uint8_t kind;
    uint32_t n;              /* devices */
    const void *p;
    const char *key;
    uint32_t idx;
    quantity want, left;
    /* K_COUNTERS: the claims holding devices that draw on the counter (most first; at
     * most 2 named, nby counts them all) — what a user frees to make room */
    const dra_claim *by[2];
    uint32_t nby;
} cause;

typedef struct holder {
    const dra_claim *c;
    uint32_t n;
} holder;

typedef struct req_ex {
    dra_claim_state *cs;
    uint32_t ri, si;
    dra_req_data *rd;
    int64_t want;
    uint32_t match, nfree;
    bool errors;             /* some selectors fail to evaluate */
    uint32_t *free;          /* the free candidates, in search order */
    cause *causes;
    uint32_t ncauses, ccap;
    holder *holders;         /* K_HELD: the claims, most devices first */
    uint32_t nholders, hcap, unknown_holder;
    const char *cons_why;    /* "no 2 of them share attribute A": a constraint alone cuts */
    bool fails;              /* cannot be filled on its own */
} req_ex;

typedef struct claim_msg {
    const dra_claim_state *cs;
    const char *msg;
} claim_msg;

struct dra_explain {
    req_ex *reqs;
    size_t nreqs;
    lost_slice *lost;
    uint32_t nlost;
    claim_msg *cmsgs;        /* constraints over several requests */
    size_t ncmsgs;
    const char *together;    /* when nothing above fails on its own */
};

/* Every claim as "namespace/name", a claim without one in "default" as the API server
 * puts it: the form the CLI's and the extender's other lines use, and the one the fit
 * memo's name placeholders (podfit.c) are made of. */
static const char *claim_name(dra_alloc_ctx *x, const dra_claim *c) {
    return arena_printf(&x->a, "%s/%s", dra_ns(c->ns), c->name);
}

static const char *qty_text(dra_alloc_ctx *x, const quantity *q) {
    char b[QUANTITY_STR_MAX];
    quantity_format(q, b, sizeof b);
    return arena_strdup(&x->a, b);
}

/* q printed in the format of ref, the device's capacity or the pool's counter the line
 * is about: one line, one unit. A request written "6442450944" against a capacity in
 * Mi reads "5119Mi left, the request needs 6Gi" (Kubernetes' String() of the amount
 * in the capacity's format), never "5119Mi left, the request needs 6442450944". */
static const char *qty_text_as(dra_alloc_ctx *x, const quantity *q, const quantity *ref) {
    quantity t = *q;
    t.format = ref->format;
    return qty_text(x, &t);
}

static bool str0_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static bool same_cause(const cause *a, const cause *b) {
    if (a->kind != b->kind || a->idx != b->idx) return false;
    switch (a->kind) {
    case K_TAINT: {
        const dra_taint *s = a->p, *t = b->p;
        return str0_eq(s->key, t->key) && str0_eq(s->value, t->value) && str0_eq(s->effect, t->effect);
    }
    case K_CAP_MISSING: return !strcmp(a->key, b->key);
    case K_CAP_POLICY:
    case K_CAP_SMALL:
    case K_CAP_USED: return !strcmp(a->key, b->key) && !quantity_cmp(&a->want, &b->want) && !quantity_cmp(&a->left, &b->left);
    case K_COUNTERS: return a->p == b->p && !quantity_cmp(&a->want, &b->want) && !quantity_cmp(&a->left, &b->left);
    default: return a->p == b->p;
    }
}

static void add_cause(dra_alloc_ctx *x, req_ex *re, const cause *c, uint32_t n) {
    for (uint32_t i = 0; i < re->ncauses; i++)
        if (same_cause(&re->causes[i], c)) {
            re->causes[i].n += n;
            return;
        }
    if (re->ncauses == re->ccap) {
        uint32_t cap = re->ccap ? re->ccap * 2 : 8;
        cause *nc = ARENA_NEWN(&x->a, cause, cap);
        if (re->ncauses) memcpy(nc, re->causes, sizeof *nc * re->ncauses);
        re->causes = nc, re->ccap = cap;
    }
    re->causes[re->ncauses] = *c;
    re->causes[re->ncauses++].n = n;
}

/* K_HELD: one cause per request, its holders listed beside it. */
static void add_holder(dra_alloc_ctx *x, req_ex *re, const dra_claim *c) {
    cause k = {.kind = K_HELD};
    add_cause(x, re, &k, 1);
    if (!c) {
        re->unknown_holder++;
        return;
    }
    for (uint32_t i = 0; i < re->nholders; i++)
        if (re->holders[i].c == c) {
            re->holders[i].n++;
            /* keep most devices first (stable among equals: first seen first) */
            for (uint32_t j = i; j > 0 && re->holders[j - 1].n < re->holders[j].n; j--) {
                holder t = re->holders[j - 1];
                re->holders[j - 1] = re->holders[j];
                re->holders[j] = t;
            }
            return;
        }
    if (re->nholders == re->hcap) {
        uint32_t cap = re->hcap ? re->hcap * 2 : 4;
        holder *nh = ARENA_NEWN(&x->a, holder, cap);
        if (re->nholders) memcpy(nh, re->holders, sizeof *nh * re->nholders);
        re->holders = nh, re->hcap = cap;
    }
    re->holders[re->nholders++] = (holder){c, 1};
}

static const dra_claim *holder_of(const dra_alloc_ctx *x, uint32_t cand) {
    uint64_t h;
    if (!x->st || !cmap_get(&x->st->holders, x->v->cands[cand].key, &h)) return NULL;
    return (const dra_claim *)(uintptr_t)h;
}

/* The claims holding the pool's allocated devices that draw on counter ci, into k->by
 * (each claim once; devices allocated in this decision, with no claim yet, are not
 * named). */
static void counter_holders(dra_alloc_ctx *x, uint32_t pool, uint32_t ci, cause *k) {
    const dra_nodeview *v = x->v;
    const dra_claim *seen[64];
    uint32_t nseen = 0;
    for (uint32_t c = 0; c < v->ncands; c++) {
        const dra_cand *cd = &v->cands[c];
        if (cd->pool != pool || !dra__rs_device_in_use(x, c)) continue;
        bool draws = false;
        for (uint32_t j = 0; j < cd->ncons && !draws; j++) draws = cd->cons[j].counter == ci;
        const dra_claim *h = draws ? holder_of(x, c) : NULL;
        if (!h) continue;
        bool dup = false;
        for (uint32_t s = 0; s < nseen && !dup; s++) dup = seen[s] == h;
        if (dup) continue;
        if (nseen < sizeof seen / sizeof seen[0]) seen[nseen++] = h;
        if (k->nby < 2) k->by[k->nby] = h;
        k->nby++;
    }
}

/* Shared counters: the first counter of the pool this device would overdraw (as
 * dra__rs_counters_take checks them: every counter of the pool must stay covered). */
static void counters_cause(dra_alloc_ctx *x, uint32_t cand, cause *k) {
    const dra_cand *c = &x->v->cands[cand];
    const dra_pool *p = &x->v->pools[c->pool];
    quantity *left = ARENA_NEWN(&x->a, quantity, p->ncounters ? p->ncounters : 1);
    dra__rs_counters_left(x, c->pool, left);
    *k = (cause){.kind = K_COUNTERS, .p = p};
    for (uint32_t i = 0; i < p->ncounters; i++) {
        quantity need = quantity_from_int(0, QTY_DECIMAL_SI);
        for (uint32_t j = 0; j < c->ncons; j++)
            if (c->cons[j].counter == i) quantity_add(&need, &c->cons[j].value, &need);
        if (quantity_cmp(&left[i], &need) < 0) {
            k->idx = i, k->want = need, k->left = left[i];
            counter_holders(x, c->pool, i, k);
            return;
        }
    }
}

/* The devices of one request variant, each counted once: matching or not, and for a
 * matching one that is not free, its first cause. */
static void analyse_request(dra_alloc_ctx *x, struct dra_explain *ex, req_ex *re) {
    const dra_nodeview *v = x->v;
    const dra_features *f = x->f;
    dra_req_data *rd = re->rd;
    re->want = rd->num_devices;
    re->free = ARENA_NEWN(&x->a, uint32_t, v->ncands ? v->ncands : 1);
    for (uint32_t c = 0; c < v->ncands; c++) {
        const dra_cand *cd = &v->cands[c];
        const dra_device *d = cd->dev;
        const dra_pool *p = &v->pools[cd->pool];
        int m = dra__alloc_matches(x, re->cs, rd, c);
        if (m < 0) re->errors = true;
        if (m <= 0) continue;
        re->match++;
        cause k = {0};
        dra_cap_verdict why;
        const dra_taint *t;
        if (p->incomplete || p->invalid) {
            k = (cause){.kind = K_POOL, .p = p};
        } else if (!f->binding_conditions && d->binding_conditions.n) {
            k = (cause){.kind = K_BINDING};
        } else if (f->device_taints && (t = dra__rs_taint_blocking(d, rd->spec))) {
            k = (cause){.kind = K_TAINT, .p = t};
        } else if (!f->partitionable && d->nconsumes) {
            k = (cause){.kind = K_COUNTERS_GATE};
        } else if (f->consumable_capacity && (m = dra__rs_capacity_check(x, rd, c, true, &why)) != DRA_CAP_FITS) {
            k = (cause){.kind = m == DRA_CAP_MISSING ? K_CAP_MISSING : m == DRA_CAP_POLICY ? K_CAP_POLICY : K_CAP_SMALL,
                        .key = why.cap, .want = why.want, .left = why.left};
        } else if (!rd->admin && dra__rs_device_in_use(x, c)) {
            add_holder(x, re, holder_of(x, c));
            continue;
        } else if (f->consumable_capacity && dra__rs_capacity_check(x, rd, c, false, &why) != DRA_CAP_FITS) {
            k = (cause){.kind = K_CAP_USED, .key = why.cap, .want = why.want, .left = why.left};
        } else if (d->nconsumes && !(f->consumable_capacity && d->allow_multi && dra__rs_capacity_in_use(x, c))) {
            if (dra__rs_counters_take(x, c)) {
                dra__rs_counters_give(x, c);
                re->free[re->nfree++] = c;
                continue;
            }
            counters_cause(x, c, &k);
        } else {
            re->free[re->nfree++] = c;
            continue;
        }
        add_cause(x, re, &k, 1);
    }
    /* devices the node view leaves out that would match */
    for (uint32_t i = 0; i < ex->nlost; i++) {
        const dra_slice *s = ex->lost[i].s;
        uint32_t n = 0;
        for (uint32_t j = 0; j < s->ndevices; j++) {
            dra_cand tmp = {.dev = &s->devices[j], .slice = s};
            if (dra__alloc_selectors_match(x, re->cs, rd, &tmp) == 1) n++;
        }
        cause k = {.kind = K_LOST, .p = &ex->lost[i]};
        if (n) add_cause(x, re, &k, n);
    }
    /* largest causes first (insertion sort: stable, few causes) */
    for (uint32_t i = 1; i < re->ncauses; i++)
        for (uint32_t j = i; j > 0 && re->causes[j - 1].n < re->causes[j].n; j--) {
            cause t = re->causes[j - 1];
            re->causes[j - 1] = re->causes[j];
            re->causes[j] = t;
        }
    re->fails = re->want > 0 && (int64_t)re->nfree < re->want;
    if (rd->all_mode && rd->nall == 0) re->fails = true;
}

/* Slices relevant to the node that the node view leaves out, with their devices: the
 * view found them when it was built (pools.c), for its world and gates. */
static void find_lost(dra_alloc_ctx *x, struct dra_explain *ex) {
    const dra_nodeview *v = x->v;
    assert(v->w == x->w && v->f.partitionable == x->f->partitionable);
    if (!v->nlost) return;
    ex->lost = ARENA_NEWN(&x->a, lost_slice, v->nlost);
    for (uint32_t i = 0; i < v->nlost; i++) ex->lost[i] = (lost_slice){v->lost[i], v->lost_why[i]};
    ex->nlost = v->nlost;
}

/* ---- constraints ------------------------------------------------------------------------- */

/* Would a constraint accept devices a and b together (a fresh state, a first)? */
static bool compatible(dra_alloc_ctx *x, dra_cstate *t, uint32_t a, uint32_t b) {
    const dra_cand *cands = x->v->cands;
    if (!dra__cons_add(t, &x->a, &cands[a])) return false;
    bool ok = dra__cons_add(t, &x->a, &cands[b]);
    if (ok) dra__cons_remove(t);
    dra__cons_remove(t);
    return ok;
}

static dra_cstate *fresh_state(dra_alloc_ctx *x, const dra_constraint *c) {
    dra_cstate *t = ARENA_NEW(&x->a, dra_cstate);
    dra__cons_init(t, c, x->f->list_type_attributes);
    return t;
}

/* How many of the devices have the constraint's attribute; *lists: how many of those
 * have a list-type value (which a constraint takes as a value only with
 * DRAListTypeAttributes). */
static uint32_t with_attribute(dra_alloc_ctx *x, const dra_cstate *t, const uint32_t *devs, uint32_t n, uint32_t *lists) {
    uint32_t have = 0;
    *lists = 0;
    for (uint32_t i = 0; i < n; i++) {
        const dra_attr_text *tx;
        const cel_attr *a = dra__cons_value(t, &x->v->cands[devs[i]], &tx);
        if (!a || a->kind == CEL_ATTR_NONE) continue;
        have++;
        if (a->kind >= CEL_ATTR_INTS) (*lists)++;
    }
    return have;
}

enum { MAX_ANCHORS = 64 };

/* matchAttribute over request variants (res[0..nr)): is there a device whose value
 * enough free devices of every one of them share? 1 yes, 0 no (*best: the most of
 * res[0]'s any value gathers), -1 unknown (too many values to try). */
static int match_feasible(dra_alloc_ctx *x, dra_cstate *t, req_ex *const *res, uint32_t nr, uint32_t *best) {
    uint32_t anchors[MAX_ANCHORS], na = 0;
    *best = 0;
    for (uint32_t r = 0; r < nr; r++)
        for (uint32_t i = 0; i < res[r]->nfree; i++) {
            uint32_t a = res[r]->free[i];
            bool seen = false;
            /* a value tried already (list mode: a device tried already) */
            for (uint32_t j = 0; j < na && !seen; j++)
                seen = anchors[j] == a || (!t->list_mode && compatible(x, t, anchors[j], a));
            if (seen) continue;
            if (na == MAX_ANCHORS) return -1;
            anchors[na++] = a;
            bool all = true;
            for (uint32_t q = 0; q < nr; q++) {
                uint32_t got = 0;
                for (uint32_t k = 0; k < res[q]->nfree && (int64_t)got < res[q]->want; k++)
                    if (compatible(x, t, a, res[q]->free[k])) got++;
                if (q == 0 && got > *best) *best = got;
                if ((int64_t)got < res[q]->want) all = false;
            }
            if (all) return 1;
        }
    return 0;
}

/* distinctAttribute: at most how many distinct values the devices bring (up to want). */
static uint32_t distinct_values(dra_alloc_ctx *x, dra_cstate *t, const uint32_t *devs, uint32_t n, uint32_t want) {
    const cel_attr **vals = ARENA_NEWN(&x->a, const cel_attr *, n ? n : 1);
    const dra_attr_text **texts = ARENA_NEWN(&x->a, const dra_attr_text *, n ? n : 1);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        const dra_attr_text *tx;
        const cel_attr *a = dra__cons_value(t, &x->v->cands[devs[i]], &tx);
        if (a) vals[m] = a, texts[m++] = tx;
    }
    return dra__cons_distinct_values(t, vals, texts, m, want);
}

static const char *list_note(dra_alloc_ctx *x, uint32_t lists, const char *attr) {
    if (!lists || x->f->list_type_attributes) return "";
    return arena_printf(&x->a, "; %u of them have a list-type value of %s, which constraints compare only with "
                               "DRAListTypeAttributes (off)",
                        lists, attr);
}

/* A constraint on one request variant alone: the text after "F free, but " when its
 * free devices cannot satisfy it, else NULL. */
static const char *single_constraint(dra_alloc_ctx *x, req_ex *re, const dra_constraint *c) {
    const char *attr = c->match_attr ? c->match_attr : c->distinct_attr;
    if (re->want < 2 && c->distinct_attr) return NULL;
    dra_cstate *t = fresh_state(x, c);
    uint32_t lists;
    uint32_t have = with_attribute(x, t, re->free, re->nfree, &lists);
    if (!have)
        return arena_printf(&x->a, "none of them has attribute %s (%s)%s", attr,
                            c->match_attr ? "matchAttribute" : "distinctAttribute", list_note(x, lists, attr));
    if (c->match_attr) {
        uint32_t best;
        req_ex *one[1] = {re};
        if (match_feasible(x, t, one, 1, &best) != 0) return NULL;
        return arena_printf(&x->a, "no %lld of them share a value of attribute %s (matchAttribute: at most %u do%s)%s",
                            (long long)re->want, attr, best, have < re->nfree ? arena_printf(&x->a, ", %u lack it", re->nfree - have) : "",
                            list_note(x, lists, attr));
    }
    uint32_t got = distinct_values(x, t, re->free, re->nfree, (uint32_t)re->want);
    if (got == UINT32_MAX || (int64_t)got >= re->want) return NULL;
    return arena_printf(&x->a, "only %u distinct value(s) of attribute %s among them (distinctAttribute)%s", got, attr,
                        list_note(x, lists, attr));
}

/* A constraint over several plain requests of a claim, each satisfiable alone. */
static const char *joint_constraint(dra_alloc_ctx *x, req_ex *const *res, uint32_t nr, const dra_constraint *c) {
    const char *attr = c->match_attr ? c->match_attr : c->distinct_attr;
    dra_cstate *t = fresh_state(x, c);
    char wants[512] = "";
    int64_t total = 0;
    for (uint32_t r = 0; r < nr; r++) {
        size_t l = strlen(wants);
        snprintf(wants + l, sizeof wants - l, "%s%s (%lld)", r ? ", " : "", res[r]->rd->name, (long long)res[r]->want);
        total += res[r]->want;
    }
    if (c->match_attr) {
        uint32_t best;
        if (match_feasible(x, t, res, nr, &best) != 0) return NULL;
        return arena_printf(&x->a, "matchAttribute %s: no value of it is shared by enough free devices of every request: %s",
                            attr, wants);
    }
    /* distinct: the free devices of all the requests, each once */
    uint32_t *devs = ARENA_NEWN(&x->a, uint32_t, x->v->ncands ? x->v->ncands : 1), n = 0;
    uint8_t *mark = arena_zalloc(&x->a, x->v->ncands ? x->v->ncands : 1);
    for (uint32_t r = 0; r < nr; r++)
        for (uint32_t i = 0; i < res[r]->nfree; i++)
            if (!mark[res[r]->free[i]]) mark[res[r]->free[i]] = 1, devs[n++] = res[r]->free[i];
    if (total > DRA_RESULTS_MAX) return NULL;
    uint32_t got = distinct_values(x, t, devs, n, (uint32_t)total);
    if (got == UINT32_MAX || (int64_t)got >= total) return NULL;
    return arena_printf(&x->a, "distinctAttribute %s: requests %s want %lld device(s) with distinct values, their free "
                               "devices have only %u",
                        attr, wants, (long long)total, got);
}

static void analyse_constraints(dra_alloc_ctx *x, struct dra_explain *ex, dra_claim_state *cs, req_ex *first,
                                size_t nre) {
    const dra_claim *cl = cs->claim;
    for (uint32_t k = 0; k < cs->ncons; k++) {
        const dra_constraint *c = &cl->constraints[k];
        req_ex **plain = ARENA_NEWN(&x->a, req_ex *, nre ? nre : 1);
        uint32_t np = 0;
        bool joint = true;
        for (size_t i = 0; i < nre; i++) {
            req_ex *re = &first[i];
            dra_req_data *rd = re->rd;
            if (!rd->applies[k] || re->want <= 0) continue;
            /* derived values are per request and device (derived.c); an All request's
             * constraint failure is an error, not a failed fit */
            if (rd->derived || rd->all_mode) {
                joint = false;
                continue;
            }
            if (!re->fails && !re->cons_why) {
                re->cons_why = single_constraint(x, re, c);
                if (re->cons_why) re->fails = true;
            }
            if (cs->nvar[re->ri] != 1) joint = false;
            else if (re->fails) joint = false;
            else plain[np++] = re;
        }
        if (joint && np >= 2) {
            const char *m = joint_constraint(x, plain, np, c);
            if (m) {
                claim_msg *nm = ARENA_NEWN(&x->a, claim_msg, ex->ncmsgs + 1);
                if (ex->ncmsgs) memcpy(nm, ex->cmsgs, sizeof *nm * ex->ncmsgs);
                nm[ex->ncmsgs++] = (claim_msg){cs, m};
                ex->cmsgs = nm;
            }
        }
    }
}

/* Does request ri of the claim fail in every variant? */
static bool request_fails(const req_ex *first, size_t nre, uint32_t ri) {
    bool any = false;
    for (size_t i = 0; i < nre; i++) {
        if (first[i].ri != ri) continue;
        if (!first[i].fails) return false;
        any = true;
    }
    return any;
}

/* Nothing fails alone: are more devices wanted than free ones match any request? */
static void analyse_together(dra_alloc_ctx *x, struct dra_explain *ex) {
    int64_t total = 0;
    uint32_t nfree = 0;
    uint8_t *mark = arena_zalloc(&x->a, x->v->ncands ? x->v->ncands : 1);
    for (size_t i = 0; i < ex->nreqs; i++) {
        const req_ex *re = &ex->reqs[i];
        for (uint32_t k = 0; k < re->nfree; k++)
            if (!mark[re->free[k]]) mark[re->free[k]] = 1, nfree++;
        /* the smallest variant of each request */
        if (re->si) continue;
        int64_t mn = INT64_MAX;
        for (size_t j = i; j < ex->nreqs && ex->reqs[j].cs == re->cs && ex->reqs[j].ri == re->ri; j++)
            if (ex->reqs[j].want < mn) mn = ex->reqs[j].want;
        if (mn > 0 && mn != INT64_MAX) total += mn;
    }
    if (total > nfree)
        ex->together = arena_printf(&x->a, "the requests want %lld device(s) together, only %u free device(s) match any of them",
                                    (long long)total, nfree);
    else
        ex->together = "no combination of the free devices satisfies all requests and constraints together";
}

static struct dra_explain *analyse(dra_alloc_ctx *x) {
    if (x->explained) return x->explained;
    struct dra_explain *ex = ARENA_NEW(&x->a, struct dra_explain);
    memset(ex, 0, sizeof *ex);
    /* the holders of the devices in use (and the in-use answers the search did not
     * need), read from a map far larger than the caches: every line asked for at once
     * (as dra_allocate does for the in-use set) */
    for (uint32_t c = 0; x->st && c < x->v->ncands; c++) {
        uint8_t m = x->st_use[c];
        if (!(m & DRA_USE_DEV_KNOWN) || (m & DRA_USE_DEV)) cmap_prefetch_chunk(&x->st->holders, x->v->cands[c].key);
    }
    for (uint32_t c = 0; x->st && c < x->v->ncands; c++) {
        uint8_t m = x->st_use[c];
        if (!(m & DRA_USE_DEV_KNOWN)) cmap_prefetch(&x->st->devices, x->v->cands[c].key);
        if (!(m & DRA_USE_DEV_KNOWN) || (m & DRA_USE_DEV)) cmap_prefetch(&x->st->holders, x->v->cands[c].key);
    }
    find_lost(x, ex);
    size_t n = 0;
    for (size_t ci = 0; ci < x->ncs; ci++)
        for (uint32_t ri = 0; ri < x->cs[ci].claim->nreqs; ri++) n += x->cs[ci].nvar[ri];
    ex->reqs = ARENA_NEWN(&x->a, req_ex, n ? n : 1);
    memset(ex->reqs, 0, sizeof *ex->reqs * (n ? n : 1));
    for (size_t ci = 0; ci < x->ncs; ci++) {
        dra_claim_state *cs = &x->cs[ci];
        size_t first = ex->nreqs;
        for (uint32_t ri = 0; ri < cs->claim->nreqs; ri++)
            for (uint32_t si = 0; si < cs->nvar[ri]; si++) {
                req_ex *re = &ex->reqs[ex->nreqs++];
                re->cs = cs, re->ri = ri, re->si = si, re->rd = &cs->reqs[ri][si];
                analyse_request(x, ex, re);
            }
        if (cs->ncons) analyse_constraints(x, ex, cs, &ex->reqs[first], ex->nreqs - first);
    }
    bool any = ex->ncmsgs > 0;
    for (size_t i = 0; i < ex->nreqs && !any; i++) {
        const req_ex *re = &ex->reqs[i];
        size_t first = i;
        while (first > 0 && ex->reqs[first - 1].cs == re->cs) first--;
        size_t end = i;
        while (end < ex->nreqs && ex->reqs[end].cs == re->cs) end++;
        any = request_fails(&ex->reqs[first], end - first, re->ri);
    }
    if (!any) analyse_together(x, ex);
    x->explained = ex;
    return ex;
}

/* ---- text ------------------------------------------------------------------------------- */

typedef struct out {
    char *b;
    size_t n, off;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...) {
    if (o->off + 1 >= o->n) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(o->b + o->off, o->n - o->off, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    o->off += (size_t)w;
    if (o->off >= o->n) o->off = o->n - 1;
}

/* put(o, "%s", s) without the formatter: the short line is written for every node
 * that does not fit, and vsnprintf's cost per call was most of writing it. The same
 * bytes as put's, cut at the same place. */
static void puts_(out *o, const char *s) {
    if (o->off + 1 >= o->n) return;
    size_t len = strlen(s), room = o->n - o->off - 1;
    memcpy(o->b + o->off, s, len < room ? len : room);
    o->b[o->off + (len < room ? len : room)] = '\0';
    o->off += len;
    if (o->off >= o->n) o->off = o->n - 1;
}

/* put(o, "%lld", v) (and "%u") without the formatter. */
static void putn(out *o, int64_t v) {
    char b[24], *p = b + sizeof b;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    *--p = '\0';
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--p = '-';
    puts_(o, p);
}

/* A claim as claim_name() writes it ("namespace/name"). */
static void put_claim(out *o, const dra_claim *c) {
    puts_(o, dra_ns(c->ns));
    puts_(o, "/");
    puts_(o, c->name);
}

static void put_taint(out *o, const dra_taint *t) {
    puts_(o, t->key ? t->key : "");
    if (t->value && *t->value) puts_(o, "="), puts_(o, t->value);
    puts_(o, ":");
    puts_(o, t->effect ? t->effect : "");
}

/* "claim A", "claims A and B", "claims A, B and 3 more" (brief: one name at most). */
static void put_holders(out *o, const req_ex *re, bool brief) {
    uint32_t shown = re->nholders < (brief ? 1u : 2u) ? re->nholders : (brief ? 1u : 2u);
    uint32_t more = re->nholders - shown;
    if (!re->nholders) {
        puts_(o, "already allocated");
        return;
    }
    puts_(o, shown + more + (re->unknown_holder ? 1 : 0) > 1 && !brief ? "held by claims " : "held by claim ");
    for (uint32_t i = 0; i < shown; i++) {
        puts_(o, i == 0 ? "" : (more || re->unknown_holder || i + 1 < shown) ? ", " : " and ");
        put_claim(o, re->holders[i].c);
    }
    if (more) puts_(o, " and "), putn(o, more), puts_(o, " more");
    else if (re->unknown_holder) puts_(o, " and others");
}

static const char *lost_why(uint8_t why) {
    switch (why) {
    case DRA_LOST_COUNTERS_GATE: return "it has sharedCounters, which need DRAPartitionableDevices (off)";
    case DRA_LOST_PER_DEVICE_GATE: return "it sets perDeviceNodeSelection, which needs DRAPartitionableDevices (off)";
    default: return "a slice with sharedCounters holds no devices";
    }
}

static void pool_why(dra_alloc_ctx *x, out *o, const dra_pool *p) {
    if (p->invalid) {
        put(o, "invalid: %s", p->invalid_reason ? p->invalid_reason : "?");
        return;
    }
    /* incomplete: how many of the slices of its generation exist */
    const dra_world *w = x->w;
    uint32_t have = 0;
    int64_t want = 0;
    const dra_slice_list *pl = dra__world_pool_slices(w, p->pool_key);
    for (uint32_t si = 0; pl && si < pl->n; si++) {
        const dra_slice *s = pl->v[si];
        if (s->generation != p->generation) continue;
        have++;
        if (!want) want = s->slice_count;
    }
    put(o, "incomplete: %u of %lld ResourceSlice(s) of generation %lld (being updated)", have, (long long)want,
        (long long)p->generation);
}

static void put_cause(dra_alloc_ctx *x, out *o, const req_ex *re, const cause *c, bool brief) {
    putn(o, c->n);
    puts_(o, " ");
    switch (c->kind) {
    case K_POOL: {
        const dra_pool *p = c->p;
        put(o, "in pool %s, ", p->id_text);
        pool_why(x, o, p);
        break;
    }
    case K_BINDING:
        put(o, brief ? "with bindingConditions (DRADeviceBindingConditions off)"
                     : "have bindingConditions, which need DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (off)");
        break;
    case K_TAINT:
        puts_(o, brief ? "taint " : "have taint ");
        put_taint(o, c->p);
        puts_(o, brief ? " not tolerated" : ", not tolerated by the request");
        break;
    case K_COUNTERS_GATE:
        put(o, brief ? "consume counters (DRAPartitionableDevices off)"
                     : "consume shared counters, which needs DRAPartitionableDevices (off)");
        break;
    case K_CAP_MISSING: put(o, "lack capacity %s, which the request asks for", c->key); break;
    case K_CAP_POLICY:
        put(o, "have a requestPolicy for capacity %s that does not allow %s", c->key, qty_text_as(x, &c->want, &c->left));
        break;
    case K_CAP_SMALL:
        put(o, "have %s of capacity %s, the request needs %s", qty_text(x, &c->left), c->key,
            qty_text_as(x, &c->want, &c->left));
        break;
    case K_HELD: put_holders(o, re, brief); break;
    case K_CAP_USED:
        put(o, "have %s of capacity %s left, the request needs %s", qty_text(x, &c->left), c->key,
            qty_text_as(x, &c->want, &c->left));
        break;
    case K_COUNTERS: {
        const dra_pool *p = c->p;
        const dra_pool_counter *pc = &p->counters[c->idx];
        put(o, "need %s of counter %s: counter set %s in pool %s has %s left", qty_text_as(x, &c->want, &c->left),
            intern_str(x->w->names, pc->name_id), intern_str(x->w->names, pc->set_id), p->id_text, qty_text(x, &c->left));
        if (c->nby) {
            put(o, " (used by claim%s %s", c->nby > 1 ? "s" : "", claim_name(x, c->by[0]));
            if (c->nby == 2) put(o, " and %s", claim_name(x, c->by[1]));
            else if (c->nby > 2) put(o, ", %s and %u more", claim_name(x, c->by[1]), c->nby - 2);
            put(o, ")");
        }
        break;
    }
    case K_LOST: {
        const lost_slice *l = c->p;
        put(o, "more in slice %s, ignored: %s", l->s->name, lost_why(l->why));
        break;
    }
    }
}

static const char *class_of(const req_ex *re) { return re->rd->cls ? re->rd->cls->name : "?"; }

/* "claim %s request %s: wants [all (]%lld[)], %u match %s, %u free" and the causes. */
static void put_short_request(dra_alloc_ctx *x, out *o, const req_ex *re) {
    const dra_req_data *rd = re->rd;
    puts_(o, "claim ");
    put_claim(o, re->cs->claim);
    puts_(o, " request ");
    puts_(o, rd->name);
    puts_(o, rd->all_mode ? ": wants all (" : ": wants ");
    putn(o, re->want);
    puts_(o, rd->all_mode ? "), " : ", ");
    putn(o, re->match);
    puts_(o, " match ");
    puts_(o, class_of(re));
    puts_(o, ", ");
    putn(o, re->nfree);
    puts_(o, " free");
    if (re->cons_why && (int64_t)re->nfree >= re->want) {
        puts_(o, ", but ");
        puts_(o, re->cons_why);
        return;
    }
    for (uint32_t i = 0; i < re->ncauses && i < 2; i++) {
        puts_(o, i ? ", " : ": ");
        put_cause(x, o, re, &re->causes[i], true);
    }
    if (re->ncauses > 2) puts_(o, ", ...");
}

size_t dra__explain_short(dra_alloc_ctx *x, char *buf, size_t n) {
    if (!n) return 0;
    buf[0] = '\0';
    if (!x->v || !x->cs) return 0;
    if (!x->explainable) return 0;
    struct dra_explain *ex = analyse(x);
    out o = {buf, n, 0};
    bool any = false;
    for (size_t i = 0; i < ex->nreqs; i++) {
        const req_ex *re = &ex->reqs[i];
        size_t first = i, end = i;
        while (first > 0 && ex->reqs[first - 1].cs == re->cs) first--;
        while (end < ex->nreqs && ex->reqs[end].cs == re->cs) end++;
        if (!request_fails(&ex->reqs[first], end - first, re->ri)) continue;
        if (any) puts_(&o, "; ");
        put_short_request(x, &o, re);
        any = true;
    }
    for (size_t i = 0; i < ex->ncmsgs; i++) {
        if (any) put(&o, "; ");
        put(&o, "claim %s: %s", claim_name(x, ex->cmsgs[i].cs->claim), ex->cmsgs[i].msg);
        any = true;
    }
    if (!any && ex->together) put(&o, "%s", ex->together);
    return o.off;
}

size_t dra__explain_pools(dra_alloc_ctx *x, char *buf, size_t n) {
    if (!n) return 0;
    buf[0] = '\0';
    if (!x->v) return 0;
    out o = {buf, n, 0};
    for (uint32_t p = 0; p < x->v->npools; p++) {
        const dra_pool *pl = &x->v->pools[p];
        if (!pl->incomplete && !pl->invalid) continue;
        put(&o, "%spool %s: ", o.off ? "; " : "", pl->id_text);
        pool_why(x, &o, pl);
    }
    return o.off;
}

size_t dra_alloc_explain(dra_alloc_ctx *x, char *buf, size_t n) {
    if (!n) return 0;
    buf[0] = '\0';
    if (!x->v || !x->cs || !x->explainable) return 0;
    const dra_nodeview *v = x->v;
    struct dra_explain *ex = analyse(x);
    out o = {buf, n, 0};
    uint32_t usable = 0, incomplete = 0, invalid = 0;
    for (uint32_t p = 0; p < v->npools; p++) {
        if (v->pools[p].incomplete) incomplete++;
        else if (v->pools[p].invalid) invalid++;
        else usable += v->pools[p].ncands;
    }
    put(&o, "node %s: %u pool(s), %u device(s) in complete and valid pools", v->node ? v->node->name : "?", v->npools,
        usable);
    if (incomplete) put(&o, ", %u pool(s) incomplete (being updated)", incomplete);
    if (invalid) put(&o, ", %u pool(s) invalid", invalid);
    put(&o, "\n");
    for (uint32_t p = 0; p < v->npools; p++) {
        const dra_pool *pl = &v->pools[p];
        if (!pl->incomplete && !pl->invalid) continue;
        put(&o, "  pool %s: ", pl->id_text);
        pool_why(x, &o, pl);
        put(&o, ", its %u device(s) are not used\n", pl->ncands);
    }
    for (uint32_t i = 0; i < ex->nlost; i++)
        put(&o, "  slice %s: %u device(s) ignored: %s\n", ex->lost[i].s->name, ex->lost[i].s->ndevices,
            lost_why(ex->lost[i].why));
    enum { MAX_LINES = 8 };
    for (size_t i = 0; i < ex->nreqs; i++) {
        const req_ex *re = &ex->reqs[i];
        const dra_req_data *rd = re->rd;
        put(&o, "  claim %s, request %s: wants %s%lld, %u device(s) match class %s and the selectors, %u of them free%s\n",
            claim_name(x, re->cs->claim), rd->name, rd->all_mode ? "all, i.e. " : "", (long long)re->want, re->match,
            class_of(re), re->nfree, re->errors ? " (some selectors fail to evaluate)" : "");
        for (uint32_t k = 0; k < re->ncauses && k < MAX_LINES; k++) {
            put(&o, "    ");
            put_cause(x, &o, re, &re->causes[k], false);
            put(&o, "\n");
        }
        if (re->ncauses > MAX_LINES) put(&o, "    and %u more cause(s)\n", re->ncauses - MAX_LINES);
        if (re->cons_why && (int64_t)re->nfree >= re->want) put(&o, "    but %s\n", re->cons_why);
        bool last = i + 1 == ex->nreqs || ex->reqs[i + 1].cs != re->cs;
        if (last)
            for (size_t k = 0; k < ex->ncmsgs; k++)
                if (ex->cmsgs[k].cs == re->cs) put(&o, "  claim %s: %s\n", claim_name(x, re->cs->claim), ex->cmsgs[k].msg);
    }
    if (ex->together) put(&o, "  %s\n", ex->together);
    return o.off;
}
