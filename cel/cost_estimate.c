/* cost_estimate.c — CEL's static (worst-case) cost estimate of a checked expression,
 * as Kubernetes computes it for DRA selectors and derived attributes.
 *
 * Kubernetes rejects an expression whose estimated maximum cost exceeds 1,000,000
 * ("too complex, exceeds cost limit"). The estimate is cel-go's checker cost model
 * (checker/cost.go) driven by two Kubernetes estimators: the apiserver CEL library's
 * per-function estimates (pkg/cel/library/cost.go) and the DRA size estimator of
 * dynamic-resource-allocation cel/compile.go, which knows the declared maxima of the
 * `device` variable. This file re-implements that model over our checked AST; it
 * runs once per compilation (cel__program_build) and the result is kept in the
 * program.
 *
 * The model, in short. Every node has a cost range {min, max}; sizes (string length,
 * list/map element count) are ranges too, saturating at 2^64-1 ("unknown").
 *  - literal 0; identifier 1; field selection 1 when the operand is a map or the
 *    device object (0 on dyn), plus the operand; has() adds nothing (Kubernetes
 *    sets PresenceTestHasCost(false)); list literal 10, map literal 30, plus elements.
 *  - a call: receiver + arguments + the function's own cost, the union over the
 *    overloads the checker left; by default 1. Size-dependent ones: string
 *    comparison/equality ceil(0.1 × the smaller max size), `+` on strings 0.1 × result
 *    size, startsWith/endsWith 0.1 × argument size, contains 0.1×0.1 × both sizes,
 *    matches ceil(0.1 × (size+1)) × ceil(0.25 × pattern size), `in` on lists the list
 *    size; `&&`/`||` only their operands, `?:` condition + the dearer branch.
 *    Kubernetes' estimates by function name (apiserver v0.37.2): lowerAscii/
 *    upperAscii/substring/trim 0.1 × size, split/replace 0.2 × size, find/findAll
 *    like matches, join, isSorted/sum/min/max/indexOf/lastIndexOf/includes over
 *    the list size, the parses quantity/isQuantity/semver/isSemver/cidr/isIP/
 *    isCIDR/ip 0.1 × the argument's size (global functions: no receiver needed),
 *    quantity and semver methods 1, `==` on quantities/semvers/IPs/CIDRs 1, on
 *    named formats ceil(0.1 × 64), format validate() 32 × ceil(0.1 × size).
 *    Before those, cel-go's per-overload estimators: sets.contains/intersects
 *    size × size (equivalent 2×) + 1, and ext.Lists v3's lists.range, slice,
 *    flatten, reverse, distinct, sort, sortBy: 1 + 10 + factor × result size.
 *  - a comprehension: range + init + result + (range size) × (condition + step);
 *    cel.bind (and optMap/optFlatMap, which cel-go expands to a bind): 10 for its
 *    empty range list + init + result.
 *  - sizes come from literals (string length in code points, element counts), from
 *    function results (split, lowerAscii, ...), from scalar types (1), and for
 *    anything reached from `device` from the DRA size estimator, which follows the
 *    path of the expression: device.driver 63, device.attributes and
 *    device.capacity 32 domains of ≤ 63 characters, each domain 32 ids of ≤ 32
 *    characters, an attribute value 64 (string length or list length), a capacity
 *    reached by index 0, one reached by field selection unknown (Kubernetes' walk
 *    only recognises the attribute value type there), allowMultipleAllocations 1.
 * The result is the max of the range, as Kubernetes compares it. */
#include "cel/program_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rng {
    uint64_t lo, hi;
} rng;

#define UNKNOWN ((rng){0, UINT64_MAX})

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }
static uint64_t factor(uint64_t x, double f) {
    double xf = (double)x;
    if (xf > 0 && f > 0 && xf > (double)UINT64_MAX / f) return UINT64_MAX;
    double c = ceil(xf * f);
    if (c >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)c;
}
static rng radd(rng a, rng b) { return (rng){sat_add(a.lo, b.lo), sat_add(a.hi, b.hi)}; }
static rng rmul(rng a, rng b) { return (rng){sat_mul(a.lo, b.lo), sat_mul(a.hi, b.hi)}; }
static rng rfactor(rng a, double f) { return (rng){factor(a.lo, f), factor(a.hi, f)}; }
static rng runion(rng a, rng b) { return (rng){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi}; }
static rng fixed(uint64_t v) { return (rng){v, v}; }

#define STRING_TRAVERSAL 0.1   /* cel-go common.StringTraversalCostFactor */
#define REGEX_LENGTH 0.25      /* common.RegexStringLengthCostFactor */
#define LIST_CREATE 10         /* common.ListCreateBaseCost */
#define MAP_CREATE 30          /* common.MapCreateBaseCost */
#define STRUCT_CREATE 40       /* common.StructCreateBaseCost */
#define MAX_FORMAT_SIZE 64     /* apiserver cel.MaxFormatSize */
#define MAX_NAME_FORMAT_REGEX 128 /* apiserver cel.MaxNameFormatRegexSize */

/* Where a node sits in the declared `device` type (the DRA size estimator's path walk). */
typedef enum pos {
    P_NONE = 0,    /* not reachable from `device`, or the walk gave up */
    P_DEVICE,
    P_DRIVER,      /* string ≤ 63 (DriverNameMaxLength) */
    P_MULTI,       /* allowMultipleAllocations: bool with MaxElements 1 */
    P_ATTRS,       /* map(domain, map(id, attribute)) ≤ 32 entries */
    P_CAPS,        /* map(domain, map(id, quantity)) ≤ 32 entries */
    P_ATTR_INNER,  /* map(id, attribute) ≤ 32 */
    P_CAP_INNER,   /* map(id, quantity) ≤ 32 */
    P_ATTR_VAL,    /* attribute value: 64 (DeviceAttributeMaxValueLength, ≥ 48 list values) */
    P_QUANTITY,    /* a quantity declaration: MaxElements 0 */
    P_DOMAIN,      /* a domain key ≤ 63 */
    P_ID,          /* an id key ≤ 32 */
} pos;

static const uint64_t pos_size[] = {0, 0, 63, 1, 32, 32, 32, 32, 64, 0, 63, 32};

static pos pos_field(pos p, const char *f) {
    switch (p) {
    case P_DEVICE:
        if (!strcmp(f, "driver")) return P_DRIVER;
        if (!strcmp(f, "attributes")) return P_ATTRS;
        if (!strcmp(f, "capacity")) return P_CAPS;
        if (!strcmp(f, "allowMultipleAllocations")) return P_MULTI;
        return P_NONE;
    case P_ATTR_INNER: return P_ATTR_VAL;   /* any id: all values share the attribute type */
    default: return P_NONE;
    }
}
static pos pos_elem(pos p) {   /* "@items" / "@values" */
    switch (p) {
    case P_ATTRS: return P_ATTR_INNER;
    case P_CAPS: return P_CAP_INNER;
    case P_ATTR_INNER: return P_ATTR_VAL;
    case P_CAP_INNER: return P_QUANTITY;
    default: return P_NONE;
    }
}
static pos pos_key(pos p) {    /* "@keys" */
    switch (p) {
    case P_ATTRS:
    case P_CAPS: return P_DOMAIN;
    case P_ATTR_INNER:
    case P_CAP_INNER: return P_ID;
    default: return P_NONE;
    }
}

typedef struct entry {   /* cel-go entrySizeEstimate: element sizes of a list/map value */
    uint8_t kind;        /* 0 none, TY_LIST, TY_MAP */
    rng key, val;
} entry;

typedef struct info {
    const cel_node *n;
    bool has_size;
    bool has_cost;       /* a shared node's cost, once estimated (see cost()) */
    uint8_t path;
    rng size;
    entry ent;
    rng cost;
} info;

typedef struct local {
    const char *name;
    uint8_t path;
    bool has_size;
    rng size;
    entry ent;
} local;

typedef struct est {
    info *tab;
    size_t cap, used;
    local *vars;
    size_t nvars, capvars;
} est;

static size_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static info *lookup(est *c, const cel_node *n, bool create) {
    if (create && (c->used + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        info *nt = xcalloc(ncap, sizeof *nt);
        for (size_t i = 0; i < c->cap; i++) {
            if (!c->tab[i].n) continue;
            size_t j = hash_ptr(c->tab[i].n) & (ncap - 1);
            while (nt[j].n) j = (j + 1) & (ncap - 1);
            nt[j] = c->tab[i];
        }
        free(c->tab);
        c->tab = nt;
        c->cap = ncap;
    }
    if (!c->cap) return NULL;
    size_t j = hash_ptr(n) & (c->cap - 1);
    while (c->tab[j].n) {
        if (c->tab[j].n == n) return &c->tab[j];
        j = (j + 1) & (c->cap - 1);
    }
    if (!create) return NULL;
    c->tab[j] = (info){.n = n};
    c->used++;
    return &c->tab[j];
}

static void set_size(est *c, const cel_node *n, const rng *s) {
    if (!s) return;
    info *i = lookup(c, n, true);
    i->has_size = true;
    i->size = *s;
}
static void set_entry(est *c, const cel_node *n, const entry *e) {
    if (!e || !e->kind) return;
    lookup(c, n, true)->ent = *e;
}
static void set_path(est *c, const cel_node *n, pos p) {
    if (p == P_NONE && !lookup(c, n, false)) return;
    lookup(c, n, true)->path = (uint8_t)p;
}

static local *peek_var(est *c, const char *name) {
    for (size_t i = c->nvars; i-- > 0;)
        if (!strcmp(c->vars[i].name, name)) return &c->vars[i];
    return NULL;
}
static void push_var(est *c, const char *name, pos p, const rng *size, const entry *e) {
    if (c->nvars == c->capvars) {
        c->capvars = c->capvars ? c->capvars * 2 : 16;
        c->vars = xrealloc(c->vars, c->capvars * sizeof *c->vars);
    }
    local *v = &c->vars[c->nvars++];
    *v = (local){.name = name, .path = (uint8_t)p};
    if (size) v->has_size = true, v->size = *size;
    if (e) v->ent = *e;
}
static void pop_var(est *c) { c->nvars--; }

static bool is_local_ident(const cel_node *n) { return n->kind == N_IDENT && n->slot >= 0; }

static pos get_path(est *c, const cel_node *n) {
    if (n->kind == N_IDENT) {
        local *v = is_local_ident(n) ? peek_var(c, n->name) : NULL;
        if (v) return (pos)v->path;
    }
    info *i = lookup(c, n, false);
    return i ? (pos)i->path : P_NONE;
}

static const cel_type *type_of(const cel_node *n) { return n->type ? n->type : &cel_t_dyn; }

static bool is_scalar(const cel_type *t) {
    switch (t->kind) {
    case TY_BOOL:
    case TY_DOUBLE:
    case TY_INT:
    case TY_UINT: return true;
    case TY_OPAQUE: return t == &cel_t_timestamp || t == &cel_t_duration || !strcmp(t->name, cel_t_timestamp.name) ||
                           !strcmp(t->name, cel_t_duration.name);
    case TY_OPTIONAL: return t->p0 && is_scalar(t->p0);
    default: return false;
    }
}

static uint64_t utf8_len(const char *s, uint32_t n) {
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) k++;
    return k;
}

/* cel-go computeSize: nullable. */
static bool compute_size(est *c, const cel_node *n, rng *out) {
    info *i = lookup(c, n, false);
    if (i && i->has_size) {
        *out = i->size;
        return true;
    }
    switch (n->kind) {
    case N_CONST:
        switch (n->val.kind) {
        case CV_STRING: *out = fixed(utf8_len(n->val.u.s, n->val.len)); return true;
        case CV_BYTES: *out = fixed(n->val.len); return true;
        case CV_BOOL:
        case CV_DOUBLE:
        case CV_INT:
        case CV_UINT:
        case CV_NULL:
        case CV_TIMESTAMP:
        case CV_DURATION: *out = fixed(1); return true;
        default: break;
        }
        break;
    case N_LIST: *out = fixed(n->nargs); return true;
    case N_MAP: *out = fixed(n->nargs / 2); return true;
    default: break;
    }
    pos p = get_path(c, n);
    if (p != P_NONE) {
        *out = (rng){0, pos_size[p]};
        set_size(c, n, out);
        return true;
    }
    if (is_scalar(type_of(n))) {
        *out = fixed(1);
        return true;
    }
    if (is_local_ident(n)) {
        local *v = peek_var(c, n->name);
        if (v && v->has_size) {
            *out = v->size;
            return true;
        }
    }
    return false;
}

static rng size_or_unknown(est *c, const cel_node *n) {
    rng r;
    return compute_size(c, n, &r) ? r : UNKNOWN;
}

static bool compute_entry(est *c, const cel_node *n, entry *out) {
    info *i = lookup(c, n, false);
    if (i && i->ent.kind) {
        *out = i->ent;
        return true;
    }
    if (is_local_ident(n)) {
        local *v = peek_var(c, n->name);
        if (v && v->ent.kind) {
            *out = v->ent;
            return true;
        }
    }
    return false;
}

static rng cost(est *c, const cel_node *n);

/* ---- calls ------------------------------------------------------------------------ */

typedef struct call {
    const cel_node *e;          /* the node the call's results are recorded on */
    const char *fn;             /* function name */
    const cel_node *target;     /* receiver, NULL for global calls */
    const cel_node *const *args;
    uint32_t nargs;
    rng argsum;                 /* arguments' costs (not the receiver's) */
    const rng *argcost;
} call;

typedef struct call_est {
    rng cost;
    bool has_rsize;
    rng rsize;
} call_est;

static call_est ce(rng cost) { return (call_est){.cost = cost}; }
static call_est ce_sized(rng cost, rng size) { return (call_est){.cost = cost, .has_rsize = true, .rsize = size}; }

static const cel_type *first_param(const cel_type *t) {
    switch (t->kind) {
    case TY_LIST:
    case TY_MAP:
    case TY_OPTIONAL:
    case TY_TYPE: return t->p0;
    default: return NULL;
    }
}

/* Size of a list's element as Kubernetes' listElementNode sees it: the path (for the
 * DRA estimator) extended by "@items", else only the element type (which never has a
 * size of its own there). */
static rng list_elem_size(est *c, const cel_node *list) {
    pos p = get_path(c, list);
    if (p != P_NONE) {
        pos q = pos_elem(p);
        if (q != P_NONE) return (rng){0, pos_size[q]};
    }
    return UNKNOWN;
}

static bool literal_int(const cel_node *n, int64_t *v) {
    if (n->kind != N_CONST || n->val.kind != CV_INT) return false;
    *v = n->val.u.i;
    return true;
}

/* Go's uint64(f) on amd64 for f ≥ 0: exact below 2^64, 2^63 from there on (the
 * conversion subtracts 2^63, truncates and sets the top bit; a too-large truncation
 * is already 1<<63). C leaves the out-of-range case undefined. */
static uint64_t go_f2u(double f) {
    if (f < 9223372036854775808.0) return (uint64_t)(int64_t)f;
    if (f < 18446744073709551616.0) return (uint64_t)f;
    return UINT64_C(1) << 63;
}

static bool fn_is(const char *f, const char *const *names) {
    for (; *names; names++)
        if (!strcmp(f, *names)) return true;
    return false;
}

/* kubernetes apiserver pkg/cel/library CostEstimator.EstimateCallCost (v0.37.2),
 * keyed on the function name as upstream is; false when it has no estimate. The
 * result excludes argument costs. `args` are the arguments without the receiver,
 * so a global function's guard is on them alone (quantity("1") is estimated as
 * 0.1 × the string's size, not the default 1). */
static bool k8s_estimate(est *c, const call *k, const char *ovid, call_est *out) {
    static const char *const list_fns[] = {"isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes", NULL};
    static const char *const nominal[] = {"masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                                          "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
                                          "format.named", "sign", "asInteger", "isInteger", "asApproximateFloat",
                                          "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor",
                                          "patch", "getScheme", "getHostname", "getHost", "getPort",
                                          "getEscapedPath", "getQuery", NULL};
    static const char *const parse_fns[] = {"cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver",
                                            NULL};
    const char *f = k->fn;
    const cel_node *t = k->target;
    if (fn_is(f, list_fns)) {
        if (!t) return false;
        const cel_type *el = first_param(type_of(t));   /* listElementNode: the type's first parameter */
        if (el) {
            rng elcost = fixed(1);
            if (el->kind == TY_STRING || el->kind == TY_BYTES)
                elcost = radd(elcost, rfactor(list_elem_size(c, t), STRING_TRAVERSAL));
            *out = ce(rmul(size_or_unknown(c, t), elcost));
        } else if (!strcmp(f, "includes")) {   /* a dyn receiver: n comparisons of cost 1 */
            *out = ce(size_or_unknown(c, t));
        } else {   /* a string receiver (indexOf/lastIndexOf) */
            *out = ce(rfactor(size_or_unknown(c, t), STRING_TRAVERSAL));
        }
        return true;
    }
    if (!strcmp(f, "url") || !strcmp(f, "jsonpatch.escapeKey")) {
        if (k->nargs != 1) return false;
        rng sz = size_or_unknown(c, k->args[0]);
        *out = ce_sized(rfactor(sz, STRING_TRAVERSAL), sz);
        return true;
    }
    if (!strcmp(f, "lowerAscii") || !strcmp(f, "upperAscii") || !strcmp(f, "substring") || !strcmp(f, "trim")) {
        if (!t) return false;
        rng sz = size_or_unknown(c, t);
        *out = ce_sized(rfactor(sz, STRING_TRAVERSAL), sz);
        return true;
    }
    if (!strcmp(f, "replace")) {
        if (!t || k->nargs < 2) return false;
        rng sz = size_or_unknown(c, t), from = size_or_unknown(c, k->args[0]), to = size_or_unknown(c, k->args[1]);
        rng count = {0, 0}, kept = {0, 0};
        if (from.lo == 0) {
            count.hi = sz.hi < UINT64_MAX ? sz.hi + 1 : sz.hi;
            kept.hi = sz.hi;
        } else if (to.hi <= from.lo) {
            count.hi = 0;
            kept.hi = sz.hi;
        } else {
            count.hi = go_f2u(ceil((double)sz.hi / (double)from.lo));
        }
        if (from.hi == 0) {
            count.lo = sz.lo < UINT64_MAX ? sz.lo + 1 : sz.lo;
            kept.lo = sz.lo;
        } else if (from.hi <= to.lo) {
            count.lo = 0;
            kept.lo = sz.lo;
        } else {
            count.lo = go_f2u(ceil((double)sz.lo / (double)from.hi));
        }
        *out = ce_sized(rfactor(sz, 2 * STRING_TRAVERSAL), radd(rmul(count, to), kept));
        return true;
    }
    if (!strcmp(f, "split")) {
        if (!t) return false;
        rng sz = size_or_unknown(c, t);
        uint64_t mx = sz.hi;
        int64_t lim;
        if (k->nargs > 1 && literal_int(k->args[1], &lim)) mx = (uint64_t)lim;
        *out = ce_sized(rfactor(sz, 2 * STRING_TRAVERSAL), (rng){0, mx});
        return true;
    }
    if (!strcmp(f, "join")) {
        if (!t) return false;
        rng sz = {0, 0};
        rng n = size_or_unknown(c, t);
        if (first_param(type_of(t))) sz = rmul(n, list_elem_size(c, t));
        if (k->nargs > 0) {
            rng sep = size_or_unknown(c, k->args[0]);
            rng seps = {n.lo > 0 ? n.lo - 1 : 0, n.hi > 0 ? n.hi - 1 : 0};
            sz = radd(sz, rmul(sep, seps));
        }
        *out = ce_sized(rfactor(sz, STRING_TRAVERSAL), sz);
        return true;
    }
    if (!strcmp(f, "find") || !strcmp(f, "findAll")) {
        if (!t || k->nargs < 1) return false;
        rng sz = size_or_unknown(c, t);
        rng str = rfactor(radd(sz, fixed(1)), STRING_TRAVERSAL);
        rng re = rfactor(size_or_unknown(c, k->args[0]), REGEX_LENGTH);
        *out = ce_sized(rmul(str, re), (rng){0, sz.hi});
        return true;
    }
    if (fn_is(f, parse_fns)) {   /* a parse: one traversal of the string */
        if (k->nargs < 1) return false;
        *out = ce(rfactor(size_or_unknown(c, k->args[0]), STRING_TRAVERSAL));
        return true;
    }
    if (!strcmp(f, "ip")) {
        if (!strcmp(ovid, "cidr_ip")) {   /* the IP member of a CIDR */
            *out = ce(fixed(1));
            return true;
        }
        if (k->nargs < 1) return false;
        *out = ce(rfactor(size_or_unknown(c, k->args[0]), STRING_TRAVERSAL));
        return true;
    }
    if (!strcmp(f, "ip.isCanonical")) {
        if (k->nargs < 1) return false;
        *out = ce(rfactor(size_or_unknown(c, k->args[0]), 2 * STRING_TRAVERSAL));
        return true;
    }
    if (fn_is(f, nominal)) {
        *out = ce(fixed(1));
        return true;
    }
    if (!strcmp(f, "containsIP") || !strcmp(f, "containsCIDR")) {
        if (k->nargs < 1) return false;
        rng ip = {4, 16};
        rng r = rfactor(radd(ip, ip), STRING_TRAVERSAL);
        bool cidr = f[8] == 'C';
        if (cidr) r = radd(radd(r, rfactor(ip, STRING_TRAVERSAL)), fixed(1));
        if (!strcmp(ovid, cidr ? "cidr_contains_cidr_string" : "cidr_contains_ip_string"))
            r = radd(r, rfactor(size_or_unknown(c, k->args[0]), STRING_TRAVERSAL));
        *out = ce(r);
        return true;
    }
    if (!strcmp(f, "validate")) {   /* named format: MaxNameFormatRegexSize 128 × 0.25 per 0.1 × size */
        if (k->nargs < 1) return false;
        *out = ce(rfactor(rfactor(size_or_unknown(c, k->args[0]), STRING_TRAVERSAL), MAX_NAME_FORMAT_REGEX * REGEX_LENGTH));
        return true;
    }
    if (!strcmp(f, "_==_") && k->nargs == 2) {
        const cel_type *l = type_of(k->args[0]), *r = type_of(k->args[1]);
        if (l->kind == TY_OPAQUE && cel__type_equal(l, r)) {
            if (!strcmp(l->name, "net.IP") || !strcmp(l->name, "net.CIDR") || !strcmp(l->name, "kubernetes.Quantity") ||
                !strcmp(l->name, "kubernetes.Semver")) {
                *out = ce(fixed(1));
                return true;
            }
            if (!strcmp(l->name, "kubernetes.NamedFormat")) {
                *out = ce(rfactor((rng){1, MAX_FORMAT_SIZE}, STRING_TRAVERSAL));
                return true;
            }
            if (!strcmp(l->name, "kubernetes.URL")) {
                rng s;   /* upstream unions the right side's size with itself */
                rng sz = compute_size(c, k->args[1], &s) ? s : fixed(1);
                *out = ce(rfactor((rng){1, sz.hi}, STRING_TRAVERSAL));
                return true;
            }
        }
    }
    return false;
}

static bool is_id(const char *ovid, const char *a) { return !strcmp(ovid, a); }

/* cel-go ext/costs.go nodeAsUintValue: an int literal's value (negative ones 0), else
 * the default. */
static uint64_t literal_uint(const cel_node *n, uint64_t dflt) {
    int64_t v;
    if (!literal_int(n, &v)) return dflt;
    return v < 0 ? 0 : (uint64_t)v;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* The per-overload estimators cel-go's ext.Lists (version 3) registers
 * (ext/lists.go estimateAllocatingListCall): 1 for the call + 10 for the new list +
 * costFactor × the result's size, which is also the result size. Like every
 * OverloadCostEstimate they come before the Kubernetes estimator. */
static bool lists_estimate(est *c, const call *k, const char *ovid, call_est *out) {
    const cel_node *t = k->target;
    double factor = 1;
    rng size;
    if (is_id(ovid, "lists_range")) {
        if (t || k->nargs != 1) return false;
        size = fixed(literal_uint(k->args[0], UINT64_MAX));
    } else if (is_id(ovid, "list_slice")) {
        if (!t || k->nargs != 2) return false;
        rng sz = size_or_unknown(c, t);
        /* unsigned: an end before the start wraps, as upstream's end-start does */
        size = fixed(literal_uint(k->args[1], sz.hi) - literal_uint(k->args[0], 0));
    } else if (is_id(ovid, "list_reverse")) {
        if (!t || k->nargs != 0) return false;
        size = size_or_unknown(c, t);
    } else if (is_id(ovid, "list_flatten") || is_id(ovid, "list_flatten_int")) {
        if (!t || k->nargs > 1) return false;
        factor = (double)(k->nargs == 1 ? literal_uint(k->args[0], UINT64_MAX) : 1);
        size = size_or_unknown(c, t);
    } else if (is_id(ovid, "list_distinct")) {
        if (!t || k->nargs != 0) return false;
        rng sz = size_or_unknown(c, t);
        factor = 2;
        size = rmul(sz, sz);
    } else if (!strncmp(ovid, "list_", 5) && (has_suffix(ovid, "_sort") || has_suffix(ovid, "_sortByAssociatedKeys"))) {
        /* list_<T>_sort over the receiver, list_<T>_sortByAssociatedKeys over the keys:
         * n² comparisons of cost 2, 2.1 for strings and bytes */
        bool by = has_suffix(ovid, "_sortByAssociatedKeys");
        if (!t || k->nargs != (by ? 1u : 0u)) return false;
        rng sz = size_or_unknown(c, by ? k->args[0] : t);
        factor = 2;
        if (!strncmp(ovid, "list_string_", 12) || !strncmp(ovid, "list_bytes_", 11)) factor += STRING_TRAVERSAL;
        size = rmul(sz, sz);
    } else {
        return false;
    }
    *out = ce_sized(radd(radd(rfactor(size, factor), fixed(1)), fixed(LIST_CREATE)), size);
    return true;
}

/* cel-go coster.functionCost for one overload. */
static call_est function_cost(est *c, const call *k, const char *ovid) {
    /* ext.Sets registers per-overload estimators (checked before the estimator) */
    if (k->nargs == 2 && (is_id(ovid, "sets_contains_list_list") || is_id(ovid, "sets_intersects_list_list") ||
                          is_id(ovid, "sets_equivalent_list_list"))) {
        double f = is_id(ovid, "sets_equivalent_list_list") ? 2 : 1;
        rng r = radd(rfactor(rmul(size_or_unknown(c, k->args[0]), size_or_unknown(c, k->args[1])), f), fixed(1));
        return ce(radd(r, k->argsum));
    }
    call_est ke;
    if (lists_estimate(c, k, ovid, &ke) || k8s_estimate(c, k, ovid, &ke)) {
        ke.cost = radd(ke.cost, k->argsum);
        return ke;
    }
    const cel_node *t = k->target;
    if (is_id(ovid, "string_format") && t)
        return ce_sized(radd(rfactor(size_or_unknown(c, t), STRING_TRAVERSAL), k->argsum),
                        radd(size_or_unknown(c, t), size_or_unknown(c, k->args[0])));
    if (k->nargs == 1 && !t && (is_id(ovid, "string_to_bytes") || is_id(ovid, "bytes_to_string") ||
                                is_id(ovid, "strings_quote"))) {
        rng sz = size_or_unknown(c, k->args[0]);
        rng rs = is_id(ovid, "string_to_bytes")   ? (rng){sz.lo, sat_mul(sz.hi, 4)}
                 : is_id(ovid, "bytes_to_string") ? (rng){sz.lo / 4, sz.hi}
                                                  : (rng){sat_add(sz.lo, 2), sat_add(sat_mul(sz.hi, 2), 2)};
        return ce_sized(radd(rfactor(sz, STRING_TRAVERSAL), k->argsum), rs);
    }
    if ((is_id(ovid, "starts_with_string") || is_id(ovid, "ends_with_string")) && t && k->nargs == 1)
        return ce(radd(rfactor(size_or_unknown(c, k->args[0]), STRING_TRAVERSAL), k->argsum));
    if (is_id(ovid, "in_list") && k->nargs == 2)
        return ce(radd(size_or_unknown(c, k->args[1]), k->argsum));
    if (is_id(ovid, "matches_string") && t && k->nargs == 1) {
        rng str = rfactor(radd(size_or_unknown(c, t), fixed(1)), STRING_TRAVERSAL);
        rng re = rfactor(size_or_unknown(c, k->args[0]), REGEX_LENGTH);
        return ce(radd(rmul(str, re), k->argsum));
    }
    if (is_id(ovid, "contains_string") && t && k->nargs == 1) {
        rng a = rfactor(size_or_unknown(c, t), STRING_TRAVERSAL);
        rng b = rfactor(size_or_unknown(c, k->args[0]), STRING_TRAVERSAL);
        return ce(radd(rmul(a, b), k->argsum));
    }
    if ((is_id(ovid, "logical_or") || is_id(ovid, "logical_and")) && k->nargs == 2) {
        rng l = k->argcost[0], r = k->argcost[1];
        return ce((rng){l.lo, sat_add(l.hi, r.hi)});
    }
    if (is_id(ovid, "conditional") && k->nargs == 3) {
        rng size = runion(size_or_unknown(c, k->args[1]), size_or_unknown(c, k->args[2]));
        entry a, b;
        if (compute_entry(c, k->args[1], &a) && compute_entry(c, k->args[2], &b)) {
            entry u = {a.kind, runion(a.key, b.key), runion(a.val, b.val)};
            set_entry(c, k->e, &u);
        }
        return ce_sized(radd(k->argcost[0], runion(k->argcost[1], k->argcost[2])), size);
    }
    if ((is_id(ovid, "add_string") || is_id(ovid, "add_bytes") || is_id(ovid, "add_list")) && k->nargs == 2) {
        rng size = radd(size_or_unknown(c, k->args[0]), size_or_unknown(c, k->args[1]));
        entry a, b;
        if (compute_entry(c, k->args[0], &a) && compute_entry(c, k->args[1], &b)) {
            entry u = {a.kind, runion(a.key, b.key), runion(a.val, b.val)};
            set_entry(c, k->e, &u);
        }
        if (is_id(ovid, "add_list")) return ce_sized(radd(fixed(1), k->argsum), size);
        return ce_sized(radd(rfactor(size, STRING_TRAVERSAL), k->argsum), size);
    }
    if (k->nargs == 2 && (is_id(ovid, "less_string") || is_id(ovid, "greater_string") ||
                          is_id(ovid, "less_equals_string") || is_id(ovid, "greater_equals_string") ||
                          is_id(ovid, "less_bytes") || is_id(ovid, "greater_bytes") ||
                          is_id(ovid, "less_equals_bytes") || is_id(ovid, "greater_equals_bytes") ||
                          is_id(ovid, "equals") || is_id(ovid, "not_equals"))) {
        rng l = size_or_unknown(c, k->args[0]), r = size_or_unknown(c, k->args[1]);
        uint64_t smallest = l.hi < r.hi ? l.hi : r.hi;
        rng cmp = {smallest > 0 ? 1 : 0, smallest};
        return ce(radd(rfactor(cmp, STRING_TRAVERSAL), k->argsum));
    }
    return ce(radd(fixed(1), k->argsum));
}

/* cel-go coster.costCall, for a call node or the index/optional-select operators. */
static rng cost_call(est *c, const cel_node *e, const char *fn, const cel_node *target, const cel_node *const *args,
                     uint32_t nargs, const cel_fn_decl *const *ovs, uint32_t novs) {
    rng argcost[CEL_MAX_ARGS + 1];
    rng argsum = {0, 0};
    for (uint32_t i = 0; i < nargs && i <= CEL_MAX_ARGS; i++) {
        argcost[i] = cost(c, args[i]);
        argsum = radd(argsum, argcost[i]);
    }
    if (!novs) return (rng){0, 0};
    rng sum = {0, 0};
    if (target) sum = cost(c, target);
    call k = {e, fn, target, args, nargs, argsum, argcost};
    rng fncost = {UINT64_MAX, 0};
    bool have_size = false;
    rng rsize = {0, 0};
    for (uint32_t i = 0; i < novs; i++) {
        const char *ovid = ovs[i]->ov->id;
        call_est r = function_cost(c, &k, ovid);
        fncost = runion(fncost, r.cost);
        if (r.has_rsize) {
            rsize = have_size ? runion(rsize, r.rsize) : r.rsize;
            have_size = true;
        }
        bool il = is_id(ovid, "index_list"), im = is_id(ovid, "index_map");
        if ((il || im) && nargs > 0) {
            entry en;
            have_size = compute_entry(c, args[0], &en);
            if (have_size) rsize = en.val;
            set_path(c, e, pos_elem(get_path(c, args[0])));
        }
        if (!have_size) have_size = compute_size(c, e, &rsize);
    }
    if (have_size) set_size(c, e, &rsize);
    return radd(sum, fncost);
}

static const char *call_name(const cel_node *n) { return n->resolved ? n->resolved : n->name; }

static void push_iter(est *c, const char *name, const cel_node *range, int which /* 0 single, 1 key, 2 value */) {
    entry en;
    bool has = compute_entry(c, range, &en);
    int kind = has ? en.kind : type_of(range)->kind;
    pos p = get_path(c, range);
    const rng *size = NULL;
    pos q;
    if (which == 1) {
        size = has ? &en.key : NULL;
        q = kind == TY_LIST ? P_NONE /* @indices */ : pos_key(p);
    } else if (which == 2) {
        size = has ? &en.val : NULL;
        q = pos_elem(p);
    } else if (kind == TY_LIST) {
        size = has ? &en.val : NULL;
        q = pos_elem(p);
    } else {
        size = has ? &en.key : NULL;
        q = pos_key(p);
    }
    push_var(c, name, q, size, NULL);
}

static void push_local_of(est *c, const char *name, const cel_node *init) {
    rng s;
    entry en;
    bool hs = compute_size(c, init, &s), he = compute_entry(c, init, &en);
    push_var(c, name, get_path(c, init), hs ? &s : NULL, he ? &en : NULL);
}

static void copy_sizes(est *c, const cel_node *dst, const cel_node *src) {
    rng s;
    entry en;
    if (compute_size(c, src, &s)) set_size(c, dst, &s);
    if (compute_entry(c, src, &en)) set_entry(c, dst, &en);
}

static rng cost_comprehension(est *c, const cel_node *n) {
    rng sum = cost(c, n->range);
    sum = radd(sum, cost(c, n->accu_init));
    push_local_of(c, n->accu_var, n->accu_init);
    size_t mark = c->nvars;
    if (n->iter_var2) {
        push_iter(c, n->iter_var, n->range, 1);
        push_iter(c, n->iter_var2, n->range, 2);
    } else {
        push_iter(c, n->iter_var, n->range, 0);
    }
    rng loop = cost(c, n->cond);
    rng step = cost(c, n->step);
    c->nvars = mark;
    sum = radd(sum, cost(c, n->result));
    pop_var(c);
    rng cnt = size_or_unknown(c, n->range);
    sum = radd(sum, rmul(cnt, radd(step, loop)));
    switch (n->accu_init->kind) {
    case N_CONST: {
        rng s;
        if (compute_size(c, n->accu_init, &s)) set_size(c, n, &s);
        break;
    }
    case N_LIST:
    case N_MAP: {
        set_size(c, n, &cnt);
        entry en;
        if (compute_entry(c, n->step, &en)) set_entry(c, n, &en);
        break;
    }
    default: break;
    }
    return sum;
}

static rng cost_node(est *c, const cel_node *n);

/* A shared node (optMap's target) is one subtree to us and two copies to cel-go: it
 * is estimated once, in one scope, and its cost counted at each use, so the
 * estimate is cel-go's (exponential in the chain) in time linear in the text. */
static rng cost(est *c, const cel_node *n) {
    if (!n || !n->shared) return cost_node(c, n);
    info *in = lookup(c, n, false);
    if (in && in->has_cost) return in->cost;
    rng r = cost_node(c, n);
    in = lookup(c, n, true);
    in->has_cost = true;
    in->cost = r;
    return r;
}

static rng cost_node(est *c, const cel_node *n) {
    if (!n) return (rng){0, 0};
    switch ((cel_node_kind)n->kind) {
    case N_CONST: return (rng){0, 0};
    case N_IDENT:
        if (!is_local_ident(n) || !peek_var(c, n->name)) set_path(c, n, !strcmp(n->name, "device") && n->resolved ? P_DEVICE : P_NONE);
        return fixed(1);
    case N_SELECT: {
        if (n->test_only) return cost(c, n->target);   /* PresenceTestHasCost(false) */
        if (n->optional) {   /* cel-go: the `_?._` function, one overload */
            static const cel_overload ov = {.name = "_?._", .id = "select_optional_field"};
            static const cel_fn_decl d = {.ov = &ov};
            const cel_fn_decl *ds[1] = {&d};
            const cel_node *args[1] = {n->target};
            return cost_call(c, n, "_?._", NULL, args, 1, ds, 1);
        }
        rng sum = cost(c, n->target);
        const cel_type *t = type_of(n->target);
        if (t->kind == TY_MAP || t->kind == TY_DEVICE || t->kind == TY_PARAM) sum = radd(sum, fixed(1));
        set_path(c, n, pos_field(get_path(c, n->target), n->name));
        return sum;
    }
    case N_INDEX: {
        const cel_node *args[2] = {n->target, n->args[0]};
        return cost_call(c, n, n->optional ? "_[?_]" : "_[_]", NULL, args, 2, (const cel_fn_decl *const *)n->ovs,
                         n->novs);
    }
    case N_CALL: {
        if (!strcmp(n->name, "dyn") && !n->target && n->nargs == 1) {
            rng r = radd(fixed(1), cost(c, n->args[0]));
            copy_sizes(c, n, n->args[0]);
            return r;
        }
        return cost_call(c, n, call_name(n), n->target, (const cel_node *const *)n->args, n->nargs,
                         (const cel_fn_decl *const *)n->ovs, n->novs);
    }
    case N_LIST: {
        rng sum = {0, 0};
        rng item = {n->nargs ? UINT64_MAX : 0, 0};
        for (uint32_t i = 0; i < n->nargs; i++) {
            sum = radd(sum, cost(c, n->args[i]));
            item = runion(item, size_or_unknown(c, n->args[i]));
        }
        entry en = {TY_LIST, fixed(1), item};
        set_entry(c, n, &en);
        return radd(sum, fixed(LIST_CREATE));
    }
    case N_MAP: {
        rng sum = {0, 0};
        rng ks = {n->nargs ? UINT64_MAX : 0, 0}, vs = ks;
        for (uint32_t i = 0; i + 1 < n->nargs; i += 2) {
            sum = radd(sum, cost(c, n->args[i]));
            sum = radd(sum, cost(c, n->args[i + 1]));
            ks = runion(ks, size_or_unknown(c, n->args[i]));
            vs = runion(vs, size_or_unknown(c, n->args[i + 1]));
        }
        entry en = {TY_MAP, ks, vs};
        set_entry(c, n, &en);
        return radd(sum, fixed(MAP_CREATE));
    }
    case N_STRUCT: {
        rng sum = {0, 0};
        for (uint32_t i = 0; i < n->nargs; i++) sum = radd(sum, cost(c, n->args[i]));
        return radd(sum, fixed(STRUCT_CREATE));
    }
    case N_COMPREHENSION: return cost_comprehension(c, n);
    case N_BIND: {
        /* cel-go's bind is a comprehension over an empty list literal (cost 10) */
        rng sum = radd(fixed(LIST_CREATE), cost(c, n->args[0]));
        push_local_of(c, n->iter_var, n->args[0]);
        sum = radd(sum, cost(c, n->args[1]));
        pop_var(c);
        copy_sizes(c, n, n->args[1]);
        return sum;
    }
    }
    return (rng){0, 0};
}

uint64_t cel__estimate_cost(const cel_node *root) {
    est c = {0};
    rng r = cost(&c, root);
    free(c.tab);
    free(c.vars);
    return r.hi;
}

uint64_t cel_program_estimated_cost(const cel_program *p) { return p->est_cost; }
