/* eval.c — the evaluator: runs a program (program_internal.h) on a device or an
 * activation of variables.
 *
 * One recursive function with a switch per instruction; values are 16-byte
 * structs returned in registers. Errors are values (CV_ERROR) so that `&&`, `||`
 * and `?:` can absorb them as CEL requires: `false && error` and `error && false`
 * are both false, `true || error` and `error || true` both true. Everything an
 * evaluation allocates (materialised lists, strings built by functions, error
 * texts) comes from the context's arena, rolled back at the start of the next
 * evaluation, so an ordinary selector allocates nothing at all.
 *
 * Cost is cel-go's ActualCost with Kubernetes' CallCost (see functions.h), charged
 * node by node as its tracker observes them: each instruction's value-independent
 * part (`self`: identifiers, the device paths, relative attributes, folded calls,
 * compile.c) where it is evaluated; qualifiers when applied (optional ones when
 * they find a value), calls, comparisons, `in`, list and map literals and the
 * map/filter steps at cel-go's figure for the values at hand (`==` on two maps of n
 * entries ceil(n/10), `x in list` the list's size, startsWith ceil(0.1 × the
 * prefix's length), a failed argument priced as cel-go prices it, ...). Work
 * that cel-go charges less than it costs (deep equality, string scans of
 * fixed-cost functions) counts against the hidden work budget (CEL_MAX_WORK). Once
 * the running cost passes the limit the evaluation ends with Kubernetes'
 * "operation cancelled: actual cost limit exceeded", which no operator absorbs. */
#include "cel/program_internal.h"
#include "cel/lib_support.h"   /* cel__lib_traversal_cost: the price of a failed call */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cel_value cel__call_error(cel_call *c, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return cel_error_static(arena_strdup(c->arena, buf));
}

cel_value cel__cost_exceeded(void) { return cel_error_static(CEL_COST_EXCEEDED_MSG); }

static cel_value no_overload(cel_eval_ctx *x, const char *fn) {
    (void)fn;
    (void)x;
    return cel_error_static("no such overload");
}

static inline bool over_budget(const cel_eval_ctx *x) { return x->cost > CEL_MAX_COST; }

static cel_value eval(const cel_inst *n, cel_eval_ctx *x);

/* A cel.bind slot whose value is not computed yet (OP_BIND, OP_LOCAL): a kind no
 * value has. */
#define SLOT_PENDING CV_KIND_COUNT
/* `"dom" in device.attributes` / `device.capacity`: a domain is present when some
 * attribute (or capacity) of the device is in it. */
static inline bool has_domain(const cel_device *d, uint32_t which, uint32_t domain) {
    if (which == CEL_DM_CAPS) {
        for (uint32_t i = 0; i < d->ncaps; i++)
            if (d->caps[i].domain == domain) return true;
    } else {
        for (uint32_t i = 0; i < d->nattrs; i++)
            if (d->attrs[i].domain == domain) return true;
    }
    return false;
}

static cel_value dev_attr(cel_eval_ctx *x, const cel_inst *n);
static cel_value dev_cap(cel_eval_ctx *x, const cel_inst *n);
static inline cel_value eval_leaf(const cel_inst *n, cel_eval_ctx *x);

static const intern_table *names_of(const cel_eval_ctx *x) { return x->prog->env->names; }

__attribute__((noinline)) static cel_value no_such_key(cel_eval_ctx *x, const cel_value *k) {
    if (k->kind == CV_STRING) return cel__error_fmt(&x->a, "no such key: %.*s", (int)k->len, k->u.s);
    char b[128];
    cel__value_format(k, names_of(x), b, sizeof b);
    return cel__error_fmt(&x->a, "no such key: %s", b);
}

/* The attribute with interned (domain, name), or NULL. */
static inline const cel_attr *find_attr(const cel_device *d, uint32_t dom, uint32_t name) {
    const cel_attr *at = d->attrs;
    for (uint32_t i = 0; i < d->nattrs; i++)   /* by index: attrs is NULL when nattrs is 0 */
        if (at[i].name == name && at[i].domain == dom) return &at[i];
    return NULL;
}

/* Scalar attribute by interned ids without a call; NULL-kind result → slow path. */
static inline bool attr_fast(const cel_eval_ctx *x, const cel_inst *n, cel_value *out) {
    const cel_attr *at = find_attr(x->dev, n->a, n->b);
    if (!at) return false;
    switch (at->kind) {
    case CEL_ATTR_INT: *out = cel_int(at->u.i); return true;
    case CEL_ATTR_BOOL: *out = cel_bool(at->u.b); return true;
    case CEL_ATTR_STRING: *out = cel_string(at->u.s->s, at->u.s->len); return true;
    case CEL_ATTR_VERSION: *out = cel_semver_value(at->u.v); return true;
    default: return false;
    }
}

__attribute__((noinline)) static cel_value dev_attr(cel_eval_ctx *x, const cel_inst *n) {
    const cel_device *d = x->dev;
    {
        const cel_attr *at = find_attr(d, n->a, n->b);
        if (at) {
            switch (at->kind) {
            case CEL_ATTR_INT: return cel_int(at->u.i);
            case CEL_ATTR_BOOL: return cel_bool(at->u.b);
            case CEL_ATTR_STRING: return cel_string(at->u.s->s, at->u.s->len);
            case CEL_ATTR_VERSION: return cel_semver_value(at->u.v);
            default: return cel__attr_value(&x->a, at);
            }
        }
    }
    return no_such_key(x, &n->k);
}

__attribute__((noinline)) static cel_value dev_cap(cel_eval_ctx *x, const cel_inst *n) {
    const cel_device *d = x->dev;
    for (uint32_t i = 0; i < d->ncaps; i++)
        if (d->caps[i].name == n->b && d->caps[i].domain == n->a) return cel_quantity_value(d->caps[i].value);
    return no_such_key(x, &n->k);
}

/* ---- the fused shapes (OP_CAP_CMPK & co.): the fast path, or the tree in x ---------- */


static inline bool work(cel_eval_ctx *x, uint64_t w);

static inline bool cmp_holds(int32_t op, int64_t a, int64_t b) {
    switch (op) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
    }
}

static inline cel_value fused_cap_cmp(const cel_inst *n, cel_eval_ctx *x) {
    const cel_device *d = x->dev;
    for (uint32_t i = 0; i < d->ncaps; i++)
        if (d->caps[i].name == n->b && d->caps[i].domain == n->a) {
            x->cost += n->cost;
            return cel_bool(cmp_holds(n->iv, quantity_cmp(d->caps[i].value, n->k.u.q), n->iv2));
        }
    return eval(n->x, x);
}

/* s in a list of strings (compile.c checked every element is one); *w gets the
 * bytes compared, the hidden work in_op counts */
static inline bool str_in(const cel_str *s, const cel_list *l, uint64_t *w) {
    for (uint32_t i = 0; i < l->n; i++) {
        const cel_value *e = &l->items[i];
        if (e->len == s->len) {
            *w += s->len;
            if (cel_bytes_eq(e->u.s, s->s, s->len)) return true;
        }
    }
    return false;
}

static inline cel_value fused_attr(const cel_inst *n, cel_eval_ctx *x) {
    const cel_attr *at = find_attr(x->dev, n->a, n->b);
    if (LIKELY(at)) {
        switch (n->op) {
        case OP_ATTR_ICMPK:
            if (at->kind != CEL_ATTR_INT) break;
            x->cost += n->cost;
            return cel_bool(cmp_holds(n->iv, at->u.i, n->k.u.i));
        case OP_ATTR_VCMPK:
            if (at->kind != CEL_ATTR_VERSION) break;
            x->cost += n->cost;
            return cel_bool(cmp_holds(n->iv, semver_cmp(at->u.v, n->k.u.v), n->iv2));
        case OP_ATTR_PREFIXK:
        case OP_ATTR_SUFFIXK: {
            if (at->kind != CEL_ATTR_STRING) break;
            const cel_str *s = at->u.s;
            x->cost += n->cost;   /* str_starts/str_ends' cost, by the constant's length (compile.c) */
            if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();
            if (n->k.len > s->len) return cel_bool(false);
            const char *at_s = n->op == OP_ATTR_PREFIXK ? s->s : s->s + s->len - n->k.len;
            return cel_bool(cel_bytes_eq(at_s, n->k.u.s, n->k.len));
        }
        case OP_ATTR_INK: {
            if (at->kind != CEL_ATTR_STRING) break;
            const cel_list *l = n->k.u.list;
            x->cost += n->cost;   /* in_op's charge for a constant list (compile.c) */
            if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();
            uint64_t w = 0;
            bool found = str_in(at->u.s, l, &w);
            if (UNLIKELY(!work(x, w))) return cel__cost_exceeded();
            return cel_bool(found);
        }
        default: break;
        }
    }
    return eval(n->x, x);
}

/* Field selection / indexing by key on any map-like value. */
__attribute__((noinline)) static cel_value select_field(cel_eval_ctx *x, cel_value t, const cel_value *key, bool test_only) {
    if (t.kind == CV_DEVICE && key->kind == CV_STRING) {
        const cel_device *d = t.u.dev;
        cel_value v;
        if (key->len == 6 && !memcmp(key->u.s, "driver", 6)) {
            if (test_only) return cel_bool(d->driver.len > 0);
            return cel_string(d->driver.s, d->driver.len);
        }
        if (key->len == 10 && !memcmp(key->u.s, "attributes", 10)) {
            if (test_only) return cel_bool(d->nattrs > 0);
            v = (cel_value){.kind = CV_DEVMAP, .aux = CEL_DM_ATTRS};
            v.u.dev = d;
            return v;
        }
        if (key->len == 8 && !memcmp(key->u.s, "capacity", 8)) {
            if (test_only) return cel_bool(d->ncaps > 0);
            v = (cel_value){.kind = CV_DEVMAP, .aux = CEL_DM_CAPS};
            v.u.dev = d;
            return v;
        }
        if (key->len == 24 && !memcmp(key->u.s, "allowMultipleAllocations", 24)) {
            if (test_only) return cel_bool(d->allow_multiple_allocations);
            return cel_bool(d->allow_multiple_allocations);
        }
        return cel__error_fmt(&x->a, "no such field: %.*s", (int)key->len, key->u.s);
    }
    if (t.kind == CV_MAP || t.kind == CV_DEVMAP || t.kind == CV_DEVDOMAIN) {
        cel_value out;
        if (cel__map_find(&x->a, names_of(x), &t, key, &out)) return test_only ? cel_bool(true) : out;
        if (test_only) return cel_bool(false);
        if (t.kind == CV_DEVMAP) {
            /* an unknown domain is an empty map (Kubernetes' default-map behaviour) */
            cel_value v = {.kind = CV_DEVDOMAIN, .aux = t.aux, .len = 0};
            v.u.dev = t.u.dev;
            return v;
        }
        return no_such_key(x, key);
    }
    if (t.kind == CV_ERROR) return t;
    /* cel-go's refQualify: a list takes the field name as an index (and rejects it,
     * even in has()); a value with no fields at all (scalars, quantities, semvers, ...)
     * has no such key, and has() of one is false */
    if (t.kind == CV_LIST) return cel_error_static("unsupported index type 'string' in list");
    if (t.kind != CV_OPTIONAL) return test_only ? cel_bool(false) : no_such_key(x, key);
    return no_overload(x, "_._");
}

static bool to_index(const cel_value *k, int64_t *out) {
    switch (k->kind) {
    case CV_INT: *out = k->u.i; return true;
    case CV_UINT:
        if (k->u.u > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)k->u.u;
        return true;
    case CV_DOUBLE: {
        double d = k->u.d;
        if (d != d || d < -9.2e18 || d > 9.2e18 || (double)(int64_t)d != d) return false;
        *out = (int64_t)d;
        return true;
    }
    default: return false;
    }
}

__attribute__((noinline)) static cel_value index_value(cel_eval_ctx *x, cel_value t, cel_value k) {
    if (t.kind == CV_ERROR) return t;
    if (k.kind == CV_ERROR) return k;
    if (t.kind == CV_LIST) {
        int64_t i;
        if (!to_index(&k, &i)) {
            if (k.kind == CV_DOUBLE) return cel__error_fmt(&x->a, "unsupported index value");
            return no_overload(x, "_[_]");
        }
        if (i < 0 || i >= (int64_t)t.u.list->n)
            return cel__error_fmt(&x->a, "index out of bounds: %lld", (long long)i);
        return t.u.list->items[i];
    }
    if (t.kind == CV_MAP || t.kind == CV_DEVMAP || t.kind == CV_DEVDOMAIN || t.kind == CV_DEVICE) {
        if (k.kind == CV_LIST || k.kind == CV_MAP || k.kind == CV_NULL) return no_overload(x, "_[_]");
        return select_field(x, t, &k, false);
    }
    return no_overload(x, "_[_]");
}

static bool kind_ok(const cel_fn_decl *d, uint32_t i, const cel_value *v) {
    int k = d->kinds[i];
    if (k < 0) return true;
    if (k == CV_MAP) return v->kind == CV_MAP || v->kind == CV_DEVMAP || v->kind == CV_DEVDOMAIN;
    if (k == CV_OPAQUE) return v->kind == CV_OPAQUE && !strcmp(v->u.o->type->name, d->args[i]->name);
    return v->kind == k;
}

static inline cel_value call_dispatch(const cel_inst *n, cel_eval_ctx *x, cel_value *av, uint32_t na, uint64_t limit);

/* cel-go's actualSize, an error being 1. */
static uint64_t cost_size(const cel_value *v) { return v->kind == CV_ERROR ? 1 : cel__value_size(v); }

/* What cel-go charges a call that an argument made fail: the cost tracker still
 * prices it from its arguments, an error among them (size 1). The size-dependent
 * rules of the functions the generator reaches (cel-go's defaults by overload,
 * ext/sets.go, Kubernetes' CallCost); the fixed cost otherwise. */
__attribute__((noinline)) static uint64_t failed_call_cost(const cel_inst *n, const cel_value *av, uint32_t na) {
    const char *f = n->k.u.s;
    double t = CEL_STRING_TRAVERSAL;
    if (n->flags & CALL_DEFAULT1) return 1;
    if (na == 2 && (!strcmp(f, "startsWith") || !strcmp(f, "endsWith"))) return cel__cost_factor(cost_size(&av[1]), t);
    if (na == 2 && !strcmp(f, "contains"))
        return cel__cost_factor(cost_size(&av[0]), t) * cel__cost_factor(cost_size(&av[1]), t);
    if (na == 2 && !strcmp(f, "_+_")) {
        bool str = av[0].kind == CV_STRING || av[0].kind == CV_BYTES || av[1].kind == CV_STRING || av[1].kind == CV_BYTES;
        return str ? cel__cost_factor(cost_size(&av[0]) + cost_size(&av[1]), t) : 1;
    }
    if (na == 2 && (!strcmp(f, "matches") || !strcmp(f, "find") || !strcmp(f, "findAll")))
        return cel__cost_factor(1 + cost_size(&av[0]), t) * cel__cost_factor(cost_size(&av[1]), CEL_REGEX_LENGTH);
    if (na == 2 && (!strcmp(f, "sets.contains") || !strcmp(f, "sets.intersects")))
        return 1 + cost_size(&av[0]) * cost_size(&av[1]);
    if (na == 2 && !strcmp(f, "sets.equivalent")) return 1 + 2 * cost_size(&av[0]) * cost_size(&av[1]);
    if (!strcmp(f, "isSorted") || !strcmp(f, "sum") || !strcmp(f, "max") || !strcmp(f, "min") ||
        !strcmp(f, "indexOf") || !strcmp(f, "lastIndexOf") || !strcmp(f, "includes"))
        return av[0].kind == CV_ERROR ? 1 : cel__lib_traversal_cost(&av[0]);
    if (!strcmp(f, "lowerAscii") || !strcmp(f, "upperAscii") || !strcmp(f, "substring") || !strcmp(f, "trim") ||
        !strcmp(f, "url") || !strcmp(f, "quantity") || !strcmp(f, "isQuantity") || !strcmp(f, "semver") ||
        !strcmp(f, "isSemver") || !strcmp(f, "cidr") || !strcmp(f, "isIP") || !strcmp(f, "isCIDR") || !strcmp(f, "ip"))
        return cel__cost_factor(cost_size(&av[0]), t);
    if (!strcmp(f, "replace") || !strcmp(f, "split")) return cel__cost_factor(cost_size(&av[0]) * 2, t);
    if (!strcmp(f, "join")) return cel__cost_factor(1 * 2, t);   /* the result, an error */
    return n->cost;
}

__attribute__((noinline)) static cel_value call(const cel_inst *n, cel_eval_ctx *x) {
    cel_value av[CEL_MAX_ARGS];
    uint32_t na = n->nargs;
    bool strict = !(n->fn_flags & CEL_FN_NONSTRICT);
    /* receiver and constant arguments straight from the device / the program: the
     * common `attr.method(constant)` shape needs no dispatch at all */
    uint32_t i0 = 0;
    int first_err = -1;
    if (n->flags & CALL_RECV_ATTR) {
        x->cost += n->args[0]->self;
        if (!attr_fast(x, n->args[0], &av[0])) av[0] = dev_attr(x, n->args[0]);
        if (strict && av[0].kind == CV_ERROR) first_err = 0;
        i0 = 1;
    } else if (n->flags & CALL_RECV_CAP) {
        x->cost += n->args[0]->self;
        av[0] = dev_cap(x, n->args[0]);
        if (strict && av[0].kind == CV_ERROR) first_err = 0;
        i0 = 1;
    }
    if (UNLIKELY(first_err == 0 && na > 1 && (n->flags & CALL_VARARGS))) return av[0];
    if (n->flags & CALL_ARGS_CONST) {
        for (uint32_t i = i0; i < na; i++) {
            av[i] = n->args[i]->k;
            x->cost += n->args[i]->self;
        }
    } else {
        for (uint32_t i = i0; i < na; i++) {
            av[i] = eval_leaf(n->args[i], x);
            if (strict && first_err < 0 && av[i].kind == CV_ERROR) {
                first_err = (int)i;
                /* a variadic call stops here, and is charged only once every argument is in */
                if ((n->flags & CALL_VARARGS) && i + 1 < na) return av[i];
            }
        }
    }
    /* cel-go's unary and binary calls evaluate every argument, then the call is
     * charged whether or not one of them failed */
    if (UNLIKELY(first_err >= 0)) {
        x->cost += failed_call_cost(n, av, na);
        return av[first_err];
    }
    x->cost += n->cost;
    if (UNLIKELY(n->flags & CALL_DEFAULT1)) {
        uint64_t base = x->cost - n->cost;
        /* the implementation's size-based figure is replaced by 1: it must not
         * stop the call at the limit either */
        cel_value r = call_dispatch(n, x, av, na, UINT64_MAX);
        x->cost = base + 1;
        return r;
    }
    return call_dispatch(n, x, av, na, CEL_MAX_COST);
}

/* The implementation of call n on its evaluated arguments. */
static inline cel_value call_dispatch(const cel_inst *n, cel_eval_ctx *x, cel_value *av, uint32_t na, uint64_t limit) {
    bool strict = !(n->fn_flags & CEL_FN_NONSTRICT);
    if (n->flags & CALL_TYPED) {
        cel_call cc = {&x->a, names_of(x), &x->cost, limit, n->prepared, &x->work, n->cost, false};
        return n->ovs[0]->ov->fn(&cc, av, na);
    }
    const cel_fn_decl *d = NULL;
    for (uint32_t j = 0; j < n->novs && !d; j++) {
        const cel_fn_decl *c = n->ovs[j];
        bool ok = true;
        if (LIKELY(strict && !c->opaque)) {
            for (uint32_t i = 0; i < na && ok; i++) ok = (c->kmask[i] >> av[i].kind) & 1;
        } else {
            for (uint32_t i = 0; i < na && ok; i++)
                ok = (!strict && av[i].kind == CV_ERROR) || kind_ok(c, i, &av[i]);
        }
        if (ok) d = c;
    }
    if (!d) return no_overload(x, n->k.u.s);
    cel_call cc = {&x->a, names_of(x), &x->cost, limit, n->prepared, &x->work, n->cost, n->novs > 1};
    return d->ov->fn(&cc, av, na);
}

/* Flattened && / ||: the first deciding operand wins; otherwise the first error. */
static cel_value logic_n(const cel_inst *n, cel_eval_ctx *x, bool is_and) {
    cel_value err = {.kind = CV_BOOL};
    bool have_err = false, bad = false;
    for (uint32_t i = 0; i < n->nargs; i++) {
        cel_value v = eval_leaf(n->args[i], x);
        if (LIKELY(v.kind == CV_BOOL)) {
            if (v.u.b != is_and) return v;
            continue;
        }
        if (v.kind == CV_ERROR) {
            if (!have_err) err = v, have_err = true;
        } else {
            bad = true;
        }
    }
    if (have_err) return err;
    if (bad) return no_overload(x, is_and ? "_&&_" : "_||_");
    return cel_bool(is_and);
}

static cel_value logic_and(const cel_inst *n, cel_eval_ctx *x) {
    cel_value l = eval(n->x, x);
    if (l.kind == CV_BOOL && !l.u.b) return l;
    cel_value r = eval(n->y, x);
    if (r.kind == CV_BOOL) {
        if (!r.u.b) return r;
        if (l.kind == CV_BOOL) return r;
    }
    if (l.kind == CV_ERROR) return l;
    if (r.kind == CV_ERROR) return r;
    return no_overload(x, "_&&_");
}

static cel_value logic_or(const cel_inst *n, cel_eval_ctx *x) {
    cel_value l = eval(n->x, x);
    if (l.kind == CV_BOOL && l.u.b) return l;
    cel_value r = eval(n->y, x);
    if (r.kind == CV_BOOL) {
        if (r.u.b) return r;
        if (l.kind == CV_BOOL) return r;
    }
    if (l.kind == CV_ERROR) return l;
    if (r.kind == CV_ERROR) return r;
    return no_overload(x, "_||_");
}

/* Size of v as cel-go's actualSize, counting a string's code points only up to
 * cap + 1 (enough to take the minimum with a size of at most cap). */
static uint64_t size_capped(const cel_value *v, uint64_t cap) {
    if (v->kind == CV_STRING) return cel__utf8_len_capped(v->u.s, v->len, cap);
    return cel__value_size(v);
}

/* cel-go's cost of `==`, `!=` (any operands) and of `<`, `<=`, `>`, `>=` on strings
 * and bytes (interpreter/runtimecost.go): ceil(0.1 × the smaller actualSize), so 1
 * for scalars, ceil(n/10) for two lists or maps of n entries. Work: the shorter
 * operand's length. */
static uint64_t cmp_cost(const cel_value *l, const cel_value *r) {
    uint64_t rb = r->kind == CV_STRING ? r->len : cel__value_size(r);   /* bytes bound code points */
    uint64_t a = size_capped(l, rb);
    uint64_t b = size_capped(r, a);
    return cel__cost_factor(a < b ? a : b, CEL_STRING_TRAVERSAL);
}

/* ceil(0.1 × min(a, b)) for two ASCII strings of a and b bytes: the cost of
 * comparing a device's driver name (a DNS subdomain) or, taking bytes for code
 * points, a string attribute (≤ 64 bytes, so at most 7) with a constant, without
 * counting code points on the selector fast paths. */
static inline uint64_t short_cmp_cost(uint32_t a, uint32_t b) {
    uint32_t m = a < b ? a : b;
    return (m + 9) / 10;
}

/* Hidden work of deep equality, membership and accumulator copies: past
 * CEL_MAX_WORK, or with the arena past CEL_MAX_ARENA, the evaluation fails as over
 * the cost limit. */
static inline bool work(cel_eval_ctx *x, uint64_t w) {
    x->work += w;
    if (LIKELY(x->work <= CEL_MAX_WORK && x->a.total <= CEL_MAX_ARENA)) return true;
    x->cost = CEL_MAX_COST + 1;
    return false;
}

/* An operator with a failed operand: cel-go evaluated both and charges the call as
 * for any values, an error's size being 1 (equality, and an ordering resolved to
 * strings or bytes: ceil(0.1 × the smaller size), so 0 beside an empty one; the
 * others 1). The first error is the result. */
__attribute__((noinline)) static cel_value failed_operand(const cel_inst *n, cel_eval_ctx *x, const cel_value *l,
                                                          const cel_value *r) {
    if (n->op == OP_EQ || n->op == OP_NE) {
        const cel_value *o = l->kind == CV_ERROR ? r : l;
        x->cost += o->kind == CV_ERROR || cel__value_size(o) > 0;
    } else if (n->op == OP_IN) {
        x->cost += n->flags & IN_SET ? 0 : r->kind == CV_LIST && (n->flags & ONE_OV) ? r->u.list->n : 1;
    } else {
        const cel_value *o = l->kind == CV_ERROR ? r : l;
        bool sized = (n->flags & ONE_OV) && (o->kind == CV_STRING || o->kind == CV_BYTES);
        x->cost += sized ? o->len > 0 : 1;
    }
    return l->kind == CV_ERROR ? *l : *r;
}

static cel_value compare(const cel_inst *n, cel_eval_ctx *x) {
    cel_value l = n->x->op == OP_CALL ? call(n->x, x) : eval_leaf(n->x, x);
    cel_value r;
    if (n->y->op == OP_CONST) {
        r = n->y->k;
        x->cost += n->y->self;
    } else {
        r = eval_leaf(n->y, x);
    }
    if (UNLIKELY(l.kind == CV_ERROR || r.kind == CV_ERROR)) return failed_operand(n, x, &l, &r);
    if (LIKELY(l.kind == CV_INT && r.kind == CV_INT)) {
        x->cost++;   /* cel-go: ceil(0.1 × min(1, 1)) */
        int64_t a = l.u.i, b = r.u.i;
        switch (n->op) {
        case OP_EQ: return cel_bool(a == b);
        case OP_NE: return cel_bool(a != b);
        case OP_LT: return cel_bool(a < b);
        case OP_LE: return cel_bool(a <= b);
        case OP_GT: return cel_bool(a > b);
        default: return cel_bool(a >= b);
        }
    }
    if (n->op == OP_EQ || n->op == OP_NE) {
        x->cost += cmp_cost(&l, &r);
        if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();   /* before the work it pays for */
        uint64_t w = 0;
        bool eq = cel__value_equal_work(&l, &r, &w);
        if (UNLIKELY(!work(x, w))) return cel__cost_exceeded();
        return cel_bool(eq == (n->op == OP_EQ));
    }
    /* less_string & co. ceil(0.1 × min size); other orderings the default 1 */
    x->cost += (l.kind == CV_STRING || l.kind == CV_BYTES) && l.kind == r.kind && (n->flags & ONE_OV) ? cmp_cost(&l, &r) : 1;
    int c;
    if (!cel__value_compare(&l, &r, &c)) return no_overload(x, "_<_");
    switch (n->op) {
    case OP_LT: return cel_bool(c == -1);
    case OP_LE: return cel_bool(c == -1 || c == 0);
    case OP_GT: return cel_bool(c == 1);
    default: return cel_bool(c == 1 || c == 0);
    }
}

__attribute__((noinline)) static cel_value in_op(const cel_inst *n, cel_eval_ctx *x) {
    cel_value v = eval_leaf(n->x, x);
    cel_value c = eval_leaf(n->y, x);
    if (UNLIKELY(v.kind == CV_ERROR || c.kind == CV_ERROR)) return failed_operand(n, x, &v, &c);
    if (c.kind == CV_LIST) {
        /* cel-go in_list: the list's size (interpreter/runtimecost.go), whatever the
         * element type (nothing for a set lookup in a constant list); elements are
         * compared until one is equal */
        uint32_t len = c.u.list->n;
        if (!(n->flags & IN_SET)) x->cost += n->flags & ONE_OV ? len : 1;
        if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();
        uint64_t w = 0;
        bool found = false;
        if (v.kind == CV_STRING) {
            for (uint32_t i = 0; i < len && !found; i++) {
                const cel_value *e = &c.u.list->items[i];
                if (e->kind == CV_STRING && e->len == v.len) {
                    w += v.len;
                    found = cel_bytes_eq(e->u.s, v.u.s, v.len);
                }
            }
        } else {
            for (uint32_t i = 0; i < len && !found; i++) found = cel__value_equal_work(&v, &c.u.list->items[i], &w);
        }
        if (UNLIKELY(!work(x, w))) return cel__cost_exceeded();
        return cel_bool(found);
    }
    if (c.kind == CV_MAP || c.kind == CV_DEVMAP || c.kind == CV_DEVDOMAIN) {
        x->cost++;   /* in_map: cel-go's default 1 */
        cel_value out;
        return cel_bool(cel__map_find(&x->a, names_of(x), &c, &v, &out));
    }
    return no_overload(x, "@in");
}

__attribute__((noinline)) static cel_value build_list(const cel_inst *n, cel_eval_ctx *x) {
    cel_list *l = cel__list_new(&x->a, n->nargs);
    x->cost += n->cost;
    for (uint32_t i = 0; i < n->nargs; i++) {
        cel_value v = eval(n->args[i], x);
        if (v.kind == CV_ERROR) return v;
        if (n->opt_mask && n->opt_mask[i]) {
            if (v.kind != CV_OPTIONAL) return no_overload(x, "optional");
            if (!v.u.opt) continue;
            v = *v.u.opt;
        }
        l->items[l->n++] = v;
    }
    return cel_list_value(l);
}

static bool valid_key(const cel_value *k) {
    return k->kind == CV_INT || k->kind == CV_UINT || k->kind == CV_BOOL || k->kind == CV_STRING;
}

__attribute__((noinline)) static cel_value build_map(const cel_inst *n, cel_eval_ctx *x) {
    cel_map *m = cel__map_new(&x->a, n->nargs / 2 + 1);
    x->cost += n->cost;
    for (uint32_t i = 0; i + 1 < n->nargs; i += 2) {
        cel_value k = eval(n->args[i], x);
        if (k.kind == CV_ERROR) return k;
        cel_value v = eval(n->args[i + 1], x);
        if (v.kind == CV_ERROR) return v;
        if (!valid_key(&k)) return cel__error_fmt(&x->a, "unsupported key type");
        if (n->opt_mask && n->opt_mask[i / 2]) {
            if (v.kind != CV_OPTIONAL) return no_overload(x, "optional");
            if (!v.u.opt) continue;
            v = *v.u.opt;
        }
        cel_value old, mv = cel_map_value(m);
        if (cel__map_find(&x->a, names_of(x), &mv, &k, &old)) {
            char b[128];
            cel__value_format(&k, names_of(x), b, sizeof b);
            return cel__error_fmt(&x->a, "Failed with repeated key: %s", b);
        }
        cel__map_put(&x->a, m, k, v);
    }
    return cel_map_value(m);
}

__attribute__((noinline)) static cel_value comprehension(const cel_inst *n, cel_eval_ctx *x) {
    cel_value range = eval(n->x, x);
    if (range.kind == CV_ERROR) return range;
    const cel_value *keys = NULL, *vals = NULL;
    uint32_t cnt;
    bool is_list;
    if (range.kind == CV_LIST) {
        is_list = true;
        vals = range.u.list->items;
        cnt = range.u.list->n;
    } else if (range.kind == CV_MAP || range.kind == CV_DEVMAP || range.kind == CV_DEVDOMAIN) {
        is_list = false;
        const cel_map *m = cel__devmap_materialize(&x->a, names_of(x), &range);
        keys = m->keys;
        vals = m->vals;
        cnt = m->n;
    } else {
        return cel_error_static("expression of this type cannot be the range of a comprehension");
    }
    cel_value *s = x->slots;
    s[n->accu] = eval(n->y, x);
    for (uint32_t i = 0; i < cnt; i++) {
        if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();
        if (is_list) {
            if (n->iv2 >= 0) {
                s[n->iv] = cel_int(i);
                s[n->iv2] = vals[i];
            } else {
                s[n->iv] = vals[i];
            }
        } else {
            s[n->iv] = keys[i];
            if (n->iv2 >= 0) s[n->iv2] = vals[i];
        }
        cel_value c = eval(n->z, x);
        if (c.kind == CV_BOOL && !c.u.b) break;
        s[n->accu] = eval(n->step, x);
        if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();
    }
    cel_value r = eval(n->result, x);
    /* the accumulator was grown in place; whoever holds the result must not */
    r.aux = 0;
    return r;
}

__attribute__((noinline)) static cel_value append(const cel_inst *n, cel_eval_ctx *x) {
    cel_value acc = x->slots[n->a];
    cel_value v = eval(n->x, x);
    /* cel-go's step `__result__ + [e]`: the accumulator 1, the list literal 10 (none
     * for a constant e), add_list 1 (compile.c), failed or not */
    x->cost += n->cost;
    if (acc.kind == CV_ERROR) return acc;
    if (v.kind == CV_ERROR) return v;
    if (acc.kind != CV_LIST) return no_overload(x, "_+_");
    cel_list *l;
    if (UNLIKELY(acc.aux != 1 && !work(x, (uint64_t)(acc.u.list->n + 4) * sizeof(cel_value))))
        return cel__cost_exceeded();
    if (acc.aux == 1) {
        l = (cel_list *)acc.u.list;   /* owned by this comprehension: grow in place */
    } else {
        l = cel__list_new(&x->a, acc.u.list->n + 4);
        if (acc.u.list->n) memcpy(l->items, acc.u.list->items, sizeof(cel_value) * acc.u.list->n);
        l->n = acc.u.list->n;
    }
    cel__list_push(&x->a, l, v);
    cel_value r = cel_list_value(l);
    r.aux = 1;
    return r;
}

__attribute__((noinline)) static cel_value map_insert(const cel_inst *n, cel_eval_ctx *x) {
    cel_value acc = eval(n->x, x);
    cel_value k = eval(n->y, x);
    cel_value v = n->z ? eval(n->z, x) : cel_null();
    x->cost++;   /* the call, its arguments all evaluated (cel-go), failed or not */
    if (acc.kind == CV_ERROR) return acc;
    if (k.kind == CV_ERROR) return k;
    if (v.kind == CV_ERROR) return v;
    if (acc.kind != CV_MAP) return no_overload(x, "cel.@mapInsert");
    cel_map *m;
    if (acc.aux == 1) {
        m = (cel_map *)acc.u.map;
    } else {
        if (UNLIKELY(!work(x, (uint64_t)(acc.u.map->n + 4) * 2 * sizeof(cel_value)))) return cel__cost_exceeded();
        m = cel__map_new(&x->a, acc.u.map->n + 4);
        for (uint32_t i = 0; i < acc.u.map->n; i++) cel__map_put(&x->a, m, acc.u.map->keys[i], acc.u.map->vals[i]);
    }
    cel_value old, mv = cel_map_value(m);
    if (n->z) {
        if (!valid_key(&k)) return cel_error_static("unsupported key type");
        if (cel__map_find(&x->a, names_of(x), &mv, &k, &old))
            return cel_error_static("insert failed: key already exists");
        cel__map_put(&x->a, m, k, v);
    } else {
        if (k.kind != CV_MAP) return no_overload(x, "cel.@mapInsert");
        for (uint32_t i = 0; i < k.u.map->n; i++) {
            if (cel__map_find(&x->a, names_of(x), &mv, &k.u.map->keys[i], &old))
                return cel_error_static("insert failed: key already exists");
            cel__map_put(&x->a, m, k.u.map->keys[i], k.u.map->vals[i]);
        }
    }
    cel_value r = cel_map_value(m);
    r.aux = 1;
    return r;
}

__attribute__((noinline)) static cel_value optional_access(const cel_inst *n, cel_eval_ctx *x, cel_value t, const cel_value *key) {
    if (t.kind == CV_ERROR) return t;
    if (key->kind == CV_ERROR) return *key;
    if (t.kind == CV_OPTIONAL) {
        if (!t.u.opt) return t;
        t = *t.u.opt;
    }
    if (t.kind == CV_LIST) {
        int64_t i;
        if (!to_index(key, &i)) return no_overload(x, "_[?_]");
        if (i < 0 || i >= (int64_t)t.u.list->n) return cel_optional_none();
        return cel__optional_of(&x->a, t.u.list->items[i]);
    }
    if (t.kind == CV_MAP || t.kind == CV_DEVMAP || t.kind == CV_DEVDOMAIN) {
        cel_value out;
        if (cel__map_find(&x->a, names_of(x), &t, key, &out)) return cel__optional_of(&x->a, out);
        if (t.kind == CV_DEVMAP) {
            cel_value v = {.kind = CV_DEVDOMAIN, .aux = t.aux, .len = 0};
            v.u.dev = t.u.dev;
            return cel__optional_of(&x->a, v);
        }
        return cel_optional_none();
    }
    if (t.kind == CV_DEVICE) {
        cel_value v = select_field(x, t, key, false);
        if (v.kind == CV_ERROR) return v;
        return cel__optional_of(&x->a, v);
    }
    (void)n;
    return no_overload(x, "_?._");
}

/* Whether a qualifier applied to t (the value it qualifies) is charged, and how the
 * result of an optional qualification tells it: cel-go observes a qualifier when
 * it is applied, failing or not, but an optional one only when it finds a value. */
static inline uint32_t opt_found(const cel_value *r) { return r->kind == CV_OPTIONAL && r->u.opt; }

static cel_value eval(const cel_inst *n, cel_eval_ctx *x) {
    x->cost += n->self;
    switch ((cel_op)n->op) {
    case OP_CONST: return n->k;
    case OP_ERROR: return n->k;
    case OP_VAR: return x->vars ? x->vars[n->a] : cel_error_static("no such attribute");
    case OP_LOCAL: {
        cel_value v = x->slots[n->a];
        if (UNLIKELY(v.kind == SLOT_PENDING)) {
            /* a cel.bind variable's first use evaluates its value (cel-go's folder
             * evaluates the accumulator's init lazily: unused, it costs nothing) */
            v = eval(n->x, x);
            x->slots[n->a] = v;
        }
        return v;
    }
    case OP_DEVICE: {
        cel_value v = {.kind = CV_DEVICE};
        v.u.dev = x->dev;
        return v;
    }
    case OP_DRIVER: return cel_string(x->dev->driver.s, x->dev->driver.len);
    case OP_ALLOW_MULTI: return cel_bool(x->dev->allow_multiple_allocations);
    case OP_DEVMAP: {
        cel_value v = {.kind = CV_DEVMAP, .aux = (uint8_t)n->a};
        v.u.dev = x->dev;
        return v;
    }
    case OP_DEVDOMAIN: {
        cel_value v = {.kind = CV_DEVDOMAIN, .aux = (uint8_t)n->a, .len = n->b};
        v.u.dev = x->dev;
        return v;
    }
    case OP_DEVATTR: return dev_attr(x, n);
    case OP_DEVCAP: return dev_cap(x, n);
    case OP_HAS_DEVATTR:
        for (uint32_t i = 0; i < x->dev->nattrs; i++)
            if (x->dev->attrs[i].name == n->b && x->dev->attrs[i].domain == n->a) return cel_bool(true);
        return cel_bool(false);
    case OP_HAS_DOMAIN: return cel_bool(has_domain(x->dev, n->a, n->b));
    case OP_HAS_DEVCAP:
        for (uint32_t i = 0; i < x->dev->ncaps; i++)
            if (x->dev->caps[i].name == n->b && x->dev->caps[i].domain == n->a) return cel_bool(true);
        return cel_bool(false);
    case OP_SELECT: {
        cel_value t = eval(n->x, x);
        if (t.kind == CV_OPTIONAL) {
            cel_value r = optional_access(n, x, t, &n->k);
            x->cost += opt_found(&r);
            return r;
        }
        x->cost += t.kind != CV_ERROR;
        return select_field(x, t, &n->k, false);
    }
    case OP_HAS: {
        cel_value t = eval(n->x, x);
        /* the presence test 1 when applied, the attribute's own charge given back
         * (PresenceTestHasCost(false) on the observed test-only attribute) */
        x->cost += t.kind != CV_ERROR;
        if (n->flags & HAS_OF_ATTR) x->cost--;
        if (t.kind == CV_ERROR) return t;
        if (t.kind == CV_OPTIONAL) {
            if (!t.u.opt) return cel_bool(false);
            t = *t.u.opt;
        }
        if (t.kind == CV_OPTIONAL) return no_overload(x, "has");
        return select_field(x, t, &n->k, true);
    }
    case OP_OPT_SELECT: {
        cel_value r = optional_access(n, x, eval(n->x, x), &n->k);
        x->cost += opt_found(&r);
        return r;
    }
    case OP_INDEX:
    case OP_OPT_INDEX: {
        cel_value t = eval(n->x, x);
        if (t.kind == CV_ERROR) return t;   /* the key, a qualifier, is never applied */
        cel_value k = eval(n->y, x);
        if (t.kind == CV_OPTIONAL || n->op == OP_OPT_INDEX) {
            /* an optional qualification is observed only when it finds a value */
            cel_value r = optional_access(n, x, t, &k);
            if (opt_found(&r)) x->cost += (n->flags & (IDX_KEY_QUAL | IDX_KEY_REL)) != 0;
            else x->cost -= (n->flags & IDX_KEY_ATTR) != 0;
            return r;
        }
        x->cost += (n->flags & (IDX_KEY_QUAL | IDX_KEY_REL)) != 0;
        return index_value(x, t, k);
    }
    case OP_ANDN: return logic_n(n, x, true);
    case OP_ORN: return logic_n(n, x, false);
    case OP_AND: return logic_and(n, x);
    case OP_OR: return logic_or(n, x);
    case OP_NOT: {
        cel_value v = eval_leaf(n->x, x);
        if (v.kind == CV_BOOL) return cel_bool(!v.u.b);
        if (v.kind == CV_ERROR) return v;
        return no_overload(x, "!_");
    }
    case OP_NSF: {
        cel_value v = eval(n->x, x);
        return cel_bool(!(v.kind == CV_BOOL && !v.u.b));
    }
    case OP_COND: {
        cel_value c = eval(n->x, x);
        if (c.kind == CV_BOOL) {
            cel_value r = eval(c.u.b ? n->y : n->z, x);
            /* an attribute branch is not observed on its own (compile.c) */
            x->cost -= (n->flags & (c.u.b ? COND_Y_ATTR : COND_Z_ATTR)) != 0;
            return r;
        }
        if (c.kind == CV_ERROR) return c;
        return no_overload(x, "_?_:_");
    }
    case OP_DRIVER_EQK:
    case OP_DRIVER_NEK: {
        const cel_device *d = x->dev;
        x->cost += short_cmp_cost(d->driver.len, n->k.len);
        bool eq = d->driver_id ? d->driver_id == n->b
                               : d->driver.len == n->k.len && cel_bytes_eq(d->driver.s, n->k.u.s, d->driver.len);
        return cel_bool(eq == (n->op == OP_DRIVER_EQK));
    }
    case OP_ATTR_EQK:
    case OP_ATTR_NEK: {
        const cel_attr *at = find_attr(x->dev, n->a, n->b);
        if (UNLIKELY(!at)) {
            x->cost += n->k.len > 0;   /* == on an error: ceil(0.1 × min(1, size)) */
            return no_such_key(x, &n->y->k);
        }
        x->cost += at->kind == CEL_ATTR_STRING ? short_cmp_cost(at->u.s->len, n->k.len) : 1;
        bool eq = at->kind == CEL_ATTR_STRING && at->u.s->len == n->k.len && cel_bytes_eq(at->u.s->s, n->k.u.s, n->k.len);
        return cel_bool(eq == (n->op == OP_ATTR_EQK));
    }
    case OP_EQ_STRK:
    case OP_NE_STRK: {
        cel_value v = eval(n->x, x);
        bool eq;
        /* ceil(0.1 × min size): 1 unless a string is empty or both are longer than 10 bytes */
        if (LIKELY(v.kind == CV_STRING && (n->k.len <= 10 || v.len <= 10))) x->cost += v.len && n->k.len;
        else if (v.kind != CV_ERROR) x->cost += cmp_cost(&v, &n->k);
        else x->cost += n->k.len > 0;
        if (v.kind == CV_STRING) eq = v.len == n->k.len && cel_bytes_eq(v.u.s, n->k.u.s, v.len);
        else if (v.kind == CV_ERROR) return v;
        else eq = false;
        return cel_bool(n->op == OP_EQ_STRK ? eq : !eq);
    }
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: return compare(n, x);
    case OP_IN: return in_op(n, x);
    case OP_CALL: return call(n, x);
    case OP_LIST: return build_list(n, x);
    case OP_MAP: return build_map(n, x);
    case OP_COMP: return comprehension(n, x);
    case OP_BIND:
        /* optMap's target is shared and evaluated at each use, so a chain doubles per
         * link; every doubling passes through its bind, so checking here bounds the
         * walk (cel-go checks after every node; without sharing nothing else could
         * outgrow the expression's text between two loop steps) */
        if (UNLIKELY(over_budget(x))) return cel__cost_exceeded();
        x->slots[n->a] = (cel_value){.kind = SLOT_PENDING};
        return eval(n->y, x);
    case OP_APPEND: return append(n, x);
    case OP_MAPINSERT: return map_insert(n, x);
    case OP_TYPE_IDENT: return n->k;
    case OP_CAP_CMPK: return fused_cap_cmp(n, x);
    case OP_ATTR_VCMPK:
    case OP_ATTR_ICMPK:
    case OP_ATTR_PREFIXK:
    case OP_ATTR_SUFFIXK:
    case OP_ATTR_INK: return fused_attr(n, x);
    }
    return cel_error_static("internal error: bad instruction");
}

/* The frequent leaves of selectors, dispatched at their parent's own branch site
 * (better predicted than the one big switch) and without a call. */
static inline cel_value eval_leaf(const cel_inst *n, cel_eval_ctx *x) {
    switch (n->op) {
    case OP_CONST: x->cost += n->self; return n->k;
    case OP_DRIVER_EQK: {
        const cel_device *d = x->dev;
        x->cost += n->self + short_cmp_cost(d->driver.len, n->k.len);
        if (LIKELY(d->driver_id)) return cel_bool(d->driver_id == n->b);
        return cel_bool(d->driver.len == n->k.len && cel_bytes_eq(d->driver.s, n->k.u.s, d->driver.len));
    }
    case OP_ATTR_EQK: {
        const cel_attr *at = find_attr(x->dev, n->a, n->b);
        if (UNLIKELY(!at)) {
            x->cost += n->self + (n->k.len > 0);
            return no_such_key(x, &n->y->k);
        }
        x->cost += n->self + (at->kind == CEL_ATTR_STRING ? short_cmp_cost(at->u.s->len, n->k.len) : 1);
        return cel_bool(at->kind == CEL_ATTR_STRING && at->u.s->len == n->k.len &&
                        cel_bytes_eq(at->u.s->s, n->k.u.s, n->k.len));
    }
    case OP_DEVATTR: {
        x->cost += n->self;
        const cel_attr *at = find_attr(x->dev, n->a, n->b);
        if (at) {
            switch (at->kind) {
            case CEL_ATTR_INT: return cel_int(at->u.i);
            case CEL_ATTR_BOOL: return cel_bool(at->u.b);
            case CEL_ATTR_STRING: return cel_string(at->u.s->s, at->u.s->len);
            case CEL_ATTR_VERSION: return cel_semver_value(at->u.v);
            default: break;
            }
        }
        return dev_attr(x, n);
    }
    case OP_DEVCAP: x->cost += n->self; return dev_cap(x, n);
    case OP_CALL: return call(n, x);
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: return compare(n, x);
    case OP_IN: return in_op(n, x);
    case OP_NOT: {
        cel_value v;
        x->cost += n->self;
        if (n->x->op == OP_DEVATTR) {
            x->cost += n->x->self;
            if (!attr_fast(x, n->x, &v)) v = dev_attr(x, n->x);
        } else {
            v = eval(n->x, x);
        }
        if (v.kind == CV_BOOL) return cel_bool(!v.u.b);
        if (v.kind == CV_ERROR) return v;
        return no_overload(x, "!_");
    }
    case OP_HAS_DOMAIN: x->cost += n->self; return cel_bool(has_domain(x->dev, n->a, n->b));
    default: return eval(n, x);   /* the fused shapes too: their usual caller is the predicate path */
    }
}

cel_value cel__eval_inst(const cel_inst *n, cel_eval_ctx *x) { return eval(n, x); }

/* ---- the predicate path ---------------------------------------------------------
 *
 * Most selectors are && and || of device tests (driver, attribute or capacity
 * against a constant). Such a program is decided here on plain bools and a running
 * cost, without cel_values, the arena or the context's set-up: 1 or 0 when every
 * test evaluated cleanly, -1 the moment one would not (a missing key, a value of
 * another kind, anything that makes an error). -1 sends cel_eval_bool down the
 * ordinary path from the start, which recomputes the cost too, so an answer from here
 * is always the one that path gives: for && the first false wins (as in logic_n,
 * whatever the operands before it), otherwise all are true; || likewise. */

/* A test's outcome packed in one register: PRED_NO (-1) when it would not evaluate
 * cleanly, else its cost times two plus its truth (pred_val), so that the running
 * cost never goes through memory. */
#define PRED_NO ((int64_t)-1)
static inline int64_t pred_val(uint64_t cost, bool v) { return (int64_t)(cost << 1) | v; }

static int64_t pred_nested(const cel_inst *r, const cel_device *d);

static inline int64_t pred_leaf(uint8_t op, const cel_inst *n, const cel_device *d) {
    switch (op) {
    case OP_ANDN:
    case OP_ORN: return pred_nested(n, d);
    case OP_DRIVER_EQK:
    case OP_DRIVER_NEK: {
        bool eq = d->driver_id ? d->driver_id == n->b
                               : d->driver.len == n->k.len && cel_bytes_eq(d->driver.s, n->k.u.s, d->driver.len);
        return pred_val(n->self + short_cmp_cost(d->driver.len, n->k.len), eq == (op == OP_DRIVER_EQK));
    }
    case OP_ATTR_EQK:
    case OP_ATTR_NEK: {
        const cel_attr *at = find_attr(d, n->a, n->b);
        if (!at) return PRED_NO;
        if (at->kind != CEL_ATTR_STRING) return pred_val(n->self + 1, op == OP_ATTR_NEK);
        const cel_str *s = at->u.s;
        bool eq = s->len == n->k.len && cel_bytes_eq(s->s, n->k.u.s, n->k.len);
        return pred_val(n->self + short_cmp_cost(s->len, n->k.len), eq == (op == OP_ATTR_EQK));
    }
    case OP_HAS_DOMAIN: return pred_val(n->self, has_domain(d, n->a, n->b));
    case OP_CAP_CMPK:
        for (uint32_t i = 0; i < d->ncaps; i++)
            if (d->caps[i].name == n->b && d->caps[i].domain == n->a)
                return pred_val(n->cost, cmp_holds(n->iv, quantity_cmp(d->caps[i].value, n->k.u.q), n->iv2));
        return PRED_NO;
    case OP_ATTR_ICMPK: {
        const cel_attr *at = find_attr(d, n->a, n->b);
        if (!at || at->kind != CEL_ATTR_INT) return PRED_NO;
        return pred_val(n->cost, cmp_holds(n->iv, at->u.i, n->k.u.i));
    }
    case OP_ATTR_VCMPK: {
        const cel_attr *at = find_attr(d, n->a, n->b);
        if (!at || at->kind != CEL_ATTR_VERSION) return PRED_NO;
        return pred_val(n->cost, cmp_holds(n->iv, semver_cmp(at->u.v, n->k.u.v), n->iv2));
    }
    case OP_ATTR_PREFIXK:
    case OP_ATTR_SUFFIXK: {
        const cel_attr *at = find_attr(d, n->a, n->b);
        if (!at || at->kind != CEL_ATTR_STRING) return PRED_NO;
        const cel_str *s = at->u.s;
        uint64_t c = n->cost;
        if (n->k.len > s->len) return pred_val(c, false);
        return pred_val(c, cel_bytes_eq(op == OP_ATTR_PREFIXK ? s->s : s->s + s->len - n->k.len, n->k.u.s, n->k.len));
    }
    case OP_ATTR_INK: {
        const cel_attr *at = find_attr(d, n->a, n->b);
        if (!at || at->kind != CEL_ATTR_STRING) return PRED_NO;
        uint64_t c = n->cost;
        if (c > CEL_MAX_COST) return PRED_NO;   /* the ordinary path reports it */
        uint64_t w = 0;   /* one constant list: far below CEL_MAX_WORK, no loop here to add up */
        return pred_val(c, str_in(at->u.s, n->k.u.list, &w));
    }
    case OP_NOT: {   /* !device.attributes["d"].flag */
        const cel_attr *at = find_attr(d, n->x->a, n->x->b);
        if (!at || at->kind != CEL_ATTR_BOOL) return PRED_NO;
        return pred_val(n->self + n->x->self, !at->u.b);
    }
    default: return PRED_NO;
    }
}

static bool pred_leaf_ok(const cel_inst *n) {
    switch (n->op) {
    case OP_DRIVER_EQK: case OP_DRIVER_NEK: case OP_ATTR_EQK: case OP_ATTR_NEK: case OP_HAS_DOMAIN:
    case OP_CAP_CMPK: case OP_ATTR_ICMPK: case OP_ATTR_VCMPK: case OP_ATTR_PREFIXK: case OP_ATTR_SUFFIXK:
    case OP_ATTR_INK:
        return true;
    case OP_NOT: return n->x->op == OP_DEVATTR;
    case OP_ANDN:
    case OP_ORN:
        for (uint32_t i = 0; i < n->nargs; i++)
            if (!pred_leaf_ok(n->args[i])) return false;
        return true;
    default: return false;
    }
}

bool cel__pred_ok(const cel_inst *root) { return pred_leaf_ok(root); }

/* The tests of an && / || in order: && stops at the first false, || at the first
 * true, and the costs of the tests evaluated add up. The last test is not branched
 * on: once every test before it let the loop go on, its truth is the answer, and
 * adding its packed outcome to the cost so far gives the result as it is. That
 * outcome is the selector's (E1: "gpu" or "mig", as good as random from device to
 * device), so a branch on it was a misprediction on a third of the devices. */
static inline __attribute__((always_inline)) int64_t pred_all(const uint8_t *ops, const cel_inst *const *t,
                                                              uint32_t n, bool is_and, const cel_device *d) {
    assert(n > 0);
    uint64_t cost = 0;
    for (uint32_t i = 0;; i++) {   /* one call site: pred_leaf is inlined once */
        int64_t v = pred_leaf(ops ? ops[i] : t[i]->op, t[i], d);
        if (v < 0) return PRED_NO;
        if (i + 1 == n) return (int64_t)(cost << 1) + v;   /* = pred_val(cost + (v >> 1), v & 1) */
        cost += (uint64_t)v >> 1;
        if ((v & 1) != is_and) return pred_val(cost, !is_and);
    }
}

/* An && / || below the root: out of line, so the root's loop stays inlined. */
__attribute__((noinline)) static int64_t pred_nested(const cel_inst *r, const cel_device *d) {
    return pred_all(NULL, r->args, r->nargs, r->op == OP_ANDN, d);
}

/* ---- the equality chain ----------------------------------------------------------
 *
 * `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type ==
 * "gpu"` is the shape of the real DeviceClasses (../shared/reference/realdata,
 * nvidia-dra-driver-gpu__deviceclasses.yaml) and of E1. Its tests as records are
 * decided by a loop without a switch, a jump table, a call or values spilled to the
 * stack (the general loop has all four): fewer instructions per device let more
 * devices' memory reads overlap (E1 9.1-9.3 -> 8.0-8.2 ns at 100k devices). The
 * outcome and the cost are pred_leaf's for the same tests (test_fused checks that both
 * paths agree with the ordinary evaluation). */
typedef struct cel_pred_eq {
    uint32_t domain, name;   /* the attribute's ids; 0, 0 for device.driver */
    uint32_t id;             /* the driver's interned id (device.driver) */
    uint32_t klen;
    uint32_t base;           /* the test's cost whatever the values (cel_inst.self) */
    const char *k;
    bool driver, ne;         /* device.driver; != rather than == */
} cel_pred_eq;

static inline __attribute__((always_inline)) int64_t pred_eqs(const cel_pred_eq *q, uint32_t n,
                                                              const cel_device *d) {
    uint64_t cost = 0;
    for (uint32_t i = 0;; i++, q++) {
        bool eq;
        uint64_t c;
        if (q->driver) {
            if (UNLIKELY(!d->driver_id)) return PRED_NO;   /* a view without ids: pred_leaf's byte compare */
            eq = d->driver_id == q->id;
            c = q->base + short_cmp_cost(d->driver.len, q->klen);
        } else {
            const cel_attr *at = find_attr(d, q->domain, q->name);
            if (UNLIKELY(!at)) return PRED_NO;
            if (UNLIKELY(at->kind != CEL_ATTR_STRING)) {
                eq = false, c = q->base + 1;
            } else {
                const cel_str *s = at->u.s;
                eq = s->len == q->klen && cel_bytes_eq(s->s, q->k, q->klen);
                c = q->base + short_cmp_cost(s->len, q->klen);
            }
        }
        int64_t v = pred_val(c, eq != q->ne);
        if (i + 1 == n) return (int64_t)(cost << 1) + v;   /* the last test is not branched on (pred_all) */
        cost += c;
        if (!(v & 1)) return pred_val(cost, false);
    }
}

static void pred_eqs_build(cel_program *p) {
    p->pred_eqs = NULL;
    if (!p->pred_and) return;
    for (uint32_t i = 0; i < p->pred_n; i++) {
        uint8_t op = p->pred_ops[i];
        if (op != OP_DRIVER_EQK && op != OP_DRIVER_NEK && op != OP_ATTR_EQK && op != OP_ATTR_NEK) return;
    }
    cel_pred_eq *q = ARENA_NEWN(&p->a, cel_pred_eq, p->pred_n);
    for (uint32_t i = 0; i < p->pred_n; i++) {
        const cel_inst *t = p->pred_tests[i];
        uint8_t op = p->pred_ops[i];
        q[i].driver = op == OP_DRIVER_EQK || op == OP_DRIVER_NEK;
        q[i].ne = op == OP_DRIVER_NEK || op == OP_ATTR_NEK;
        q[i].domain = q[i].driver ? 0 : t->a;
        q[i].name = q[i].driver ? 0 : t->b;
        q[i].id = q[i].driver ? t->b : 0;
        q[i].k = t->k.u.s;
        q[i].klen = t->k.len;
        q[i].base = t->self;
    }
    p->pred_eqs = q;
}

/* The root's tests from the program's flat arrays (cel__pred_flatten). */
static inline int64_t pred_eval(const cel_program *p, const cel_device *d) {
    const uint8_t *ops = p->pred_ops;
    if (!ops) __builtin_unreachable();   /* cel__pred_flatten sets it: no test per device */
    return pred_all(ops, p->pred_tests, p->pred_n, p->pred_and, d);
}

void cel__pred_flatten(cel_program *p) {
    const cel_inst *r = p->root;
    bool flat = r->op == OP_ANDN || r->op == OP_ORN;
    uint32_t n = flat ? r->nargs : 1;
    uint8_t *ops = arena_alloc(&p->a, n);
    for (uint32_t i = 0; i < n; i++) ops[i] = flat ? r->args[i]->op : r->op;
    p->pred_and = r->op != OP_ORN;
    p->pred_n = (uint16_t)n;
    p->pred_ops = ops;
    p->pred_tests = flat ? r->args : &p->root;
    pred_eqs_build(p);
}

/* ---- public entry points ------------------------------------------------------ */

cel_eval_ctx *cel_eval_ctx_new(void) {
    cel_eval_ctx *x = xcalloc(1, sizeof *x);
    arena_init(&x->a, 64 * 1024);
    /* touch the first block now so that the mark covers it and resets never free it */
    arena_alloc(&x->a, 16);
    x->base = arena_save(&x->a);
    return x;
}

void cel_eval_ctx_free(cel_eval_ctx *x) {
    if (!x) return;
    arena_free(&x->a);
    free(x->slots);
    free(x);
}

arena *cel__eval_ctx_arena(cel_eval_ctx *x) { return &x->a; }

uint64_t cel_eval_ctx_cost(const cel_eval_ctx *x) { return x->cost; }

static inline void begin(const cel_program *p, const cel_device *d, const cel_value *vars, cel_eval_ctx *x) {
    if (x->a.total != x->base.total) arena_reset(&x->a, x->base);
    x->cost = 0;
    x->work = 0;
    x->dev = d;
    x->vars = vars;
    x->prog = p;
    if (UNLIKELY(p->nslots > x->cap_slots)) {
        free(x->slots);
        x->cap_slots = p->nslots < 16 ? 16 : p->nslots;
        x->slots = xcalloc(x->cap_slots, sizeof(cel_value));
    }
}

cel_value cel__eval_value(const cel_program *p, const cel_device *d, const cel_value *vars, cel_eval_ctx *x) {
    begin(p, d, vars, x);
    if (d && d->conv_error) return cel_error_static(d->conv_error);
    cel_value v = eval(p->root, x);
    if (over_budget(x)) return cel__cost_exceeded();
    return v;
}

/* Why cel-go's ConvertToNative(bool) refuses a value: the text upstream's
 * DeviceMatches puts after "CEL result of type T could not be converted to bool: ",
 * each type's own wording in cel-go (common/types) and the apiserver's library
 * types (Quantity, Semver, IP, CIDR, URL: "type conversion error from 'Name' to
 * 'bool'"). An optional converts its value (none: "optional.none() dereference").
 * Found by tests/upstream's CEL differential test. */
static const char *not_bool_why(const cel_value *v) {
    switch ((cel_kind)v->kind) {
    case CV_INT: return "unsupported type conversion from 'int' to bool";
    case CV_UINT: return "unsupported type conversion from 'uint' to bool";
    case CV_STRING: return "unsupported native conversion from string to 'bool'";
    case CV_DOUBLE: return "type conversion error from Double to 'bool'";
    case CV_BYTES: return "type conversion error from Bytes to 'bool'";
    case CV_NULL: return "type conversion error from 'null_type' to 'bool'";
    case CV_LIST: return "type conversion error from list to 'bool'";
    case CV_MAP: case CV_DEVMAP: case CV_DEVDOMAIN: case CV_DEVICE: return "type conversion error from map to 'bool'";
    case CV_TYPE: return "type conversion not supported for 'type'";
    case CV_DURATION: return "type conversion error from 'Duration' to 'bool'";
    case CV_TIMESTAMP: return "type conversion error from 'Timestamp' to 'bool'";
    case CV_QUANTITY: return "type conversion error from 'Quantity' to 'bool'";
    case CV_SEMVER: return "type conversion error from 'Semver' to 'bool'";
    case CV_OPTIONAL:
        if (!v->u.opt) return "optional.none() dereference";
        return not_bool_why(v->u.opt);
    case CV_OPAQUE: {
        const char *n = v->u.o->type->name;
        if (!strcmp(n, "net.IP")) return "type conversion error from 'IP' to 'bool'";
        if (!strcmp(n, "net.CIDR")) return "type conversion error from 'CIDR' to 'bool'";
        if (!strcmp(n, "kubernetes.URL")) return "type conversion error from 'URL' to 'bool'";
        if (!strcmp(n, "kubernetes.NamedFormat")) return "type conversion error from 'Format' to 'bool'";
        return "type conversion error";
    }
    case CV_ERROR: case CV_BOOL: case CV_KIND_COUNT: break;
    }
    return "type conversion error";
}

/* The ordinary path of cel_eval_bool: out of line, so that the predicate path's
 * caller does not pay for its registers and stack frame. */
__attribute__((noinline)) static cel_result eval_bool_full(const cel_program *p, const cel_device *d, cel_eval_ctx *x,
                                                           err *e) {
    begin(p, d, NULL, x);
    if (UNLIKELY(d->conv_error)) {
        err_set(e, "%s", d->conv_error);
        return CEL_ERROR;
    }
    const cel_inst *r = p->root;
    cel_value v = r->op == OP_ANDN ? logic_n(r, x, true) : eval_leaf(r, x);
    /* cel-go's Optional.ConvertToNative converts the value it holds: a selector of
     * dyn type yielding optional.of(true) matches */
    if (UNLIKELY(v.kind == CV_OPTIONAL && v.u.opt && v.u.opt->kind == CV_BOOL)) v = *v.u.opt;
    if (LIKELY(v.kind == CV_BOOL && !over_budget(x))) return v.u.b ? CEL_TRUE : CEL_FALSE;
    if (over_budget(x)) {
        err_set(e, "%s", CEL_COST_EXCEEDED_MSG);
        return CEL_ERROR;
    }
    if (v.kind == CV_ERROR) err_set(e, "%s", v.u.s);
    /* upstream's device variable is a Go map at run time, whatever its declared type */
    else err_set(e, "CEL result of type %s could not be converted to bool: %s",
                 v.kind == CV_DEVICE ? "map" : cel__kind_type_name(&v), not_bool_why(&v));
    return CEL_ERROR;
}

/* The predicate path's answer, or the ordinary path's when it had none. */
static inline __attribute__((always_inline)) cel_result pred_finish(const cel_program *p, const cel_device *d,
                                                                    cel_eval_ctx *x, err *e, int64_t r) {
    uint64_t cost = (uint64_t)r >> 1;
    if (LIKELY(r >= 0 && cost <= CEL_MAX_COST)) {
        x->cost = cost;
        return r & 1 ? CEL_TRUE : CEL_FALSE;
    }
    return eval_bool_full(p, d, x, e);
}

/* An equality chain's evaluation: out of line, a function of its own, so that the
 * general predicate loop in cel_eval_bool keeps its registers and code as they were. */
__attribute__((noinline)) static cel_result eval_bool_eqs(const cel_program *p, const cel_device *d, cel_eval_ctx *x,
                                                          err *e) {
    return pred_finish(p, d, x, e, pred_eqs(p->pred_eqs, p->pred_n, d));
}

cel_result cel_eval_bool(const cel_program *p, const cel_device *d, cel_eval_ctx *x, err *e) {
    /* A selector that reads a capacity often does so only after several attribute
     * tests, for a minority of devices; read that late and that sparsely, the
     * capacity line is a full memory latency each time. Requested now, it arrives
     * while the attributes are examined, and asking for it on every device keeps the
     * capacity region a dense stream that the hardware prefetcher follows (see the
     * layout contract in cel.h). */
    if (p->touches & CEL_TOUCH_CAPS) __builtin_prefetch(d->caps);
    if (p->pred && LIKELY(!d->conv_error)) {
        if (p->pred_eqs) return eval_bool_eqs(p, d, x, e);
        return pred_finish(p, d, x, e, pred_eval(p, d));
    }
    return eval_bool_full(p, d, x, e);
}

size_t cel_eval_bool_many(const cel_program *p, const cel_device *devs, size_t n, cel_eval_ctx *x, cel_result *out,
                          err *e, size_t *first_error) {
    size_t trues = 0;
    bool have_err = false;
    err tmp;
    for (size_t i = 0; i < n; i++) {
        cel_result r = cel_eval_bool(p, &devs[i], x, have_err ? &tmp : e);
        out[i] = r;
        trues += r == CEL_TRUE;
        if (r == CEL_ERROR && !have_err) {
            have_err = true;
            if (first_error) *first_error = i;
        }
    }
    return trues;
}
