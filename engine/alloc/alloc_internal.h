/* alloc_internal.h — private to the allocator and what reads its state (alloc.c,
 * alloc_resources.c, constraints.c, derived.c, bestfit.c, explain.c): the per-call
 * state. One dra_alloc_ctx per thread; each dra_allocate call resets its
 * arena and lays out, in it, per-request data (selector result caches, All-mode
 * device lists), per-claim constraint state and results, and per-candidate
 * "allocating" counters — so the search (an explicit stack of frames in the same
 * arena) never allocates from the heap. */
#ifndef DRA_ENGINE_ALLOC_INTERNAL_H
#define DRA_ENGINE_ALLOC_INTERNAL_H

#include "engine/world/world.h"

#include <stdatomic.h>

/* ---- constraints (constraints.c) ---------------------------------------------- */

typedef union dra_velem {
    int64_t i;               /* ints and bools */
    const cel_str *s;        /* strings and version texts */
} dra_velem;

typedef struct dra_vset {
    uint8_t kind;            /* 0 int, 1 bool, 2 string, 3 version */
    uint32_t n;
    dra_velem *e;
} dra_vset;

typedef struct dra_cstate {
    const dra_constraint *c;
    bool is_match;
    bool list_mode;          /* DRAListTypeAttributes: set semantics */
    uint32_t domain, id;     /* attribute name; domain 0 = qualified by the device's driver */
    bool no_slash;
    uint32_t num;            /* devices added */
    /* scalar matchAttribute: the first device's attribute */
    const cel_attr *first;
    const dra_attr_text *first_text;
    /* list matchAttribute: intersection stack; distinct: one entry per device */
    dra_vset stack[DRA_RESULTS_MAX + 2];
    const cel_attr *dattr[DRA_RESULTS_MAX + 2];
    const dra_attr_text *dtext[DRA_RESULTS_MAX + 2];
    dra_velem *buf;          /* element storage for the stack, used LIFO */
    size_t buf_used, buf_cap;
    /* derived attribute shadowing the named one for the device being added (derived.c) */
    const cel_attr *dv;
    const dra_attr_text *dv_text;
} dra_cstate;

void dra__cons_init(dra_cstate *s, const dra_constraint *c, bool list_mode);
/* Adds a device (already known to be affected by the constraint). */
bool dra__cons_add(dra_cstate *s, arena *a, const dra_cand *cand);
void dra__cons_remove(dra_cstate *s);
/* For the search bound (alloc.c): how many devices with pairwise distinct values the
 * candidates (vals[i], texts[i]: their values under a distinctAttribute constraint)
 * can still contribute, counted up to `want`; UINT32_MAX when no sound count exists
 * (scalar values of mixed types, where Kubernetes' comparison stops early). */
uint32_t dra__cons_distinct_values(const dra_cstate *s, const cel_attr *const *vals, const dra_attr_text *const *texts,
                                  uint32_t n, uint32_t want);
/* The value the constraint sees for a device (a bound derived value first). */
const cel_attr *dra__cons_value(const dra_cstate *s, const dra_cand *cand, const dra_attr_text **text);

/* ---- per-call state (alloc.c, alloc_resources.c) --------------------------------- */

/* What the selectors say of one candidate for one request, cached (dra_req_data.sel):
 * as isSelectable would answer, evaluated once per request and candidate. */
typedef enum dra_sel_state {
    SEL_UNKNOWN = 0,         /* not evaluated yet (the arena's zero) */
    SEL_NO,                  /* a selector or the node selection says no */
    SEL_YES,
    SEL_ERROR,               /* evaluation failed: the message in sel_err[cand] */
    SEL_YES_DERIVED_ERROR,   /* selected, but a derived attribute failed to evaluate */
} dra_sel_state;

typedef struct dra_req_data {
    const dra_request_spec *spec;
    const dra_request *parent;   /* set for a firstAvailable subrequest */
    const char *name;            /* result name: "req" or "req/sub" */
    const dra_class *cls;
    int64_t num_devices;
    bool all_mode, admin;
    uint32_t *all;               /* All mode: candidates, in search order */
    uint32_t nall;
    uint8_t *sel;                /* per candidate: a dra_sel_state (0: not yet known) */
    const char **sel_err;        /* per candidate error text when sel == 3 */
    bool *applies;               /* per claim constraint: does it affect this request */
    struct dra_derived_state *derived;   /* derived attributes (derived.c), NULL without */
    /* An earlier plain request of the claim that takes exactly the same devices
     * (class, selectors, constraints, no tolerations, capacity or derived
     * attributes): the search bound counts both as one, -1 when none. */
    int32_t twin;
} dra_req_data;

/* Whether constraint k applies to a request (its `requests`, or every request when
 * empty; a subrequest by its parent's name or its own "req/sub"). */
bool dra__constraint_applies(const dra_constraint *k, const dra_req_data *rd);

typedef struct dra_res_entry {
    uint32_t cand;
    dra_req_data *rd;
    bool marked;                 /* counted in ctx->allocating */
    bool counters;               /* counters reserved */
    bool cap_inserted;           /* consumed capacity added to ctx allocating capacity */
    quantity *consumed;          /* per device capacity (multi-allocatable devices) */
    const char *share_id;
} dra_res_entry;

typedef struct dra_claim_state {
    const dra_claim *claim;
    dra_req_data **reqs;         /* reqs[r][variant]: one variant, or one per subrequest */
    uint32_t *nvar;
    uint32_t *selected;
    dra_cstate *cons;            /* ncons; NULL without constraints (each is ~1 KB) */
    uint32_t ncons;
    bool eager_bound;            /* bound this claim at its entry even before the search backtracked */
    uint32_t nres;
    /* Last, and not zeroed when the state is set up (1.3 KB per claim): an entry is
     * cleared when it is taken (allocate_device), and only res[0..nres) is read. */
    dra_res_entry res[DRA_RESULTS_MAX + 1];
} dra_claim_state;

struct dra_alloc_ctx {
    arena a;
    cel_eval_ctx *cel;
    uint64_t steps;
    uint64_t rng;
    const dra_nodeview *v;
    const dra_world *w;
    const dra_allocated *st;
    const dra_features *f;
    dra_claim_state *cs;
    size_t ncs;
    /* 32 bits: one call may hold any number of claims (16-bit counters wrapped at
     * 65,536 and handed an in-use device to the next claim) */
    uint32_t *allocating;        /* per candidate: claims allocating it in this attempt */
    quantity **cap_alloc;        /* per candidate: capacity being allocated (shares), lazily */
    uint32_t *cap_shares;        /* per candidate: shares being allocated */
    uint8_t *mark;               /* per candidate scratch for feasibility counting */
    /* Per candidate, the allocated state's answers (hash lookups) memoised for the
     * call, which asks them again and again (free-device count, feasibility bound,
     * search): DRA_USE_* bits; NULL without a state. The state does not change
     * during a call. */
    uint8_t *st_use;
    quantity **cnt_avail;        /* per pool: available counters, lazily */
    quantity **cnt_used;         /* per pool: counters consumed by this attempt */
    err *e;
    dra_alloc_result *out;
    /* deadline (CLOCK_MONOTONIC ns, 0 none) and cancel flag, checked every
     * DRA_DEADLINE_EVERY steps; timed_out once either fired in this call */
    uint64_t deadline_ns;
    const _Atomic bool *cancel;
    bool timed_out;
    uint64_t ticks;              /* candidate loop iterations, for the deadline */
    /* Pruning (alloc.c "exact pruning"): no_prune turns every shortcut off (tests
     * compare both searches); bound_on arms the claim bound after the first failed
     * slot of the call, so searches that never backtrack pay nothing for it. */
    bool no_prune;
    bool bound_on;
    struct dra_bound *bnd;       /* bound scratch, in the arena, made at first use */
    /* When the bound is armed: the first later claim that no state can satisfy
     * (ncs: none) and, per claim, the first claim from there on whose search may
     * raise an error (alloc.c static_pass). */
    size_t doomed;
    size_t *err_after;
    /* Device choice (bestfit.c): best-fit enumerates solutions at the search's leaf
     * (dra__bestfit_leaf); bf is its per-call state, NULL until the first solution. */
    uint8_t choice;              /* dra_device_choice */
    bool no_reasons;             /* dra_alloc_ctx_set_reasons(x, false): failed fits unexplained */
    /* dra__alloc_carry_selectors: the next call on the same view and claims takes the
     * last call's selector results (sel_keep: scratch outside the arena, reused) */
    /* classes.h: the classes of the pod's requests, looked up once per pod request */
    const dra_world *hint_w;
    const dra_request_spec *const *hint_specs;
    const dra_class *const *hint_cls;
    uint32_t nhint;
    bool sel_carry;
    bool prepared;               /* the last call's requests were all prepared (cs complete) */
    uint8_t *sel_keep;
    size_t sel_keep_cap;
    bool status_only;            /* dra_allocate(out = NULL): the first solution answers */
    struct dra_bestfit *bf;
    /* the attribute name ids best-fit groups devices by (pcieRoot's domain and name,
     * numaNode, numa), kept across calls: looked up in bf_names when it held
     * bf_names_count strings (an id never changes; a 0 may once the table grows) */
    const intern_table *bf_names;
    size_t bf_names_count;
    uint32_t bf_ids[4];
    /* explain.c's analysis of the last call, made at the first explanation asked for
     * after it (in the arena), NULL until then; the call can be explained only when it
     * ended unsatisfiable or with the node error (its state is complete then) */
    struct dra_explain *explained;
    bool explainable;
};

enum { DRA_DEADLINE_EVERY = 64 };

enum { DRA_USE_DEV_KNOWN = 1, DRA_USE_DEV = 2, DRA_USE_CAP_KNOWN = 4, DRA_USE_CAP = 8 };

/* The claim as klog.KObj prints it ("ns/name" or "name"), for error texts only:
 * formatted when asked (in x's arena), not for every call. */
static inline const char *dra_claim_obj(dra_alloc_ctx *x, const dra_claim_state *cs) {
    const dra_claim *cl = cs->claim;
    return cl->ns && *cl->ns ? arena_printf(&x->a, "%s/%s", cl->ns, cl->name) : cl->name;
}

/* alloc_resources.c: counters, consumable capacity, taints, allocated state. */
bool dra__rs_device_in_use(const dra_alloc_ctx *x, uint32_t cand);
bool dra__rs_capacity_in_use(const dra_alloc_ctx *x, uint32_t cand);
bool dra__rs_counters_take(dra_alloc_ctx *x, uint32_t cand);
/* Per counter of the pool: what this attempt may still consume (may be negative). */
void dra__rs_counters_left(dra_alloc_ctx *x, uint32_t pool, quantity *out);
/* Per device capacity: value minus allocated minus being allocated. */
void dra__rs_capacity_left(const dra_alloc_ctx *x, uint32_t cand, quantity *out);
void dra__rs_counters_give(dra_alloc_ctx *x, uint32_t cand);
/* CmpRequestOverCapacity: DRA_CAP_FITS, or why the device does not fit — it lacks a
 * requested capacity, the request policy refuses the amount, the capacity is smaller
 * than the amount, or too little of it is left. static_only ignores what is allocated
 * or being allocated (All-mode gathering: a matching device whose capacity is used up
 * must fail the All request, kubernetes#140769). why (may be NULL; for explain.c):
 * the first capacity that fails, what the request consumes of it and what is left
 * (the capacity's value unless DRA_CAP_USED_UP). */
enum { DRA_CAP_FITS = 0, DRA_CAP_MISSING, DRA_CAP_POLICY, DRA_CAP_TOO_SMALL, DRA_CAP_USED_UP };
typedef struct dra_cap_verdict {
    const char *cap;
    quantity want, left;
} dra_cap_verdict;
int dra__rs_capacity_check(const dra_alloc_ctx *x, const dra_req_data *rd, uint32_t cand, bool static_only,
                          dra_cap_verdict *why);
/* The same as a yes or no: the search's check. */
static inline bool dra_rs_capacity_fits(const dra_alloc_ctx *x, const dra_req_data *rd, uint32_t cand, bool static_only) {
    return dra__rs_capacity_check(x, rd, cand, static_only, NULL) == DRA_CAP_FITS;
}
/* Consumed value per device capacity for this request (into out[ncaps]). */
void dra__rs_capacity_consumed(const dra_alloc_ctx *x, const dra_req_data *rd, uint32_t cand, quantity *out);
void dra__rs_capacity_add(dra_alloc_ctx *x, uint32_t cand, const quantity *consumed);
void dra__rs_capacity_sub(dra_alloc_ctx *x, uint32_t cand, const quantity *consumed);
/* The first NoSchedule/NoExecute taint of the device the request does not tolerate, or NULL. */
const dra_taint *dra__rs_taint_blocking(const dra_device *d, const dra_request_spec *spec);
static inline bool dra_rs_taint_blocks(const dra_device *d, const dra_request_spec *spec) {
    return dra__rs_taint_blocking(d, spec) != NULL;
}

/* Sets the call's error message (allocation errors name the claim in their text, as
 * Kubernetes' do) and returns false. Defined in alloc.c, shared with derived.c. */
bool dra__alloc_fail(dra_alloc_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For explain.c: isSelectable's selectors, per-device node selection and derived
 * attributes on candidate cand, cached as the search caches them, without the
 * binding-condition gate (1 yes, 0 no, -1 an error, not reported); and the class's
 * and request's selectors alone on any device, one the node view left out included
 * (uncached). */
int dra__alloc_matches(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand);
int dra__alloc_selectors_match(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, const dra_cand *c);

/* Counts one iteration of a candidate loop (search, selector passes, bounds) and
 * reads the clock every 256: true once the deadline passed or the call was cancelled. */
bool dra__alloc_tick(dra_alloc_ctx *x);

/* ---- best-fit (bestfit.c) ----------------------------------------------------------- */

/* At a complete solution (every claim filled; x->cs[].selected set for the requests
 * with subrequests): scores and keeps it when it is the best so far. True: stop the
 * enumeration here (solution bound reached); false: search on for more. */
bool dra__bestfit_leaf(dra_alloc_ctx *x);
/* At each search step after the first solution: true when the devices taken so far
 * already fragment the node more than the best solution (tiers 1-4 of the objective
 * only grow as devices are added), so no completion can win — branch and bound. */
bool dra__bestfit_bound(dra_alloc_ctx *x);
/* Checked with the deadline (every DRA_DEADLINE_EVERY steps, every 256 ticks): true
 * once the enumeration spent its step or tick budget. */
bool dra__bestfit_spent(const dra_alloc_ctx *x);
/* After the search: when a solution was found, puts the best back into x->cs (results
 * and selected subrequests), clears a timeout or error the enumeration ran into after
 * it, restores the caller's deadline and returns true. */
bool dra__bestfit_finish(dra_alloc_ctx *x);

#endif
