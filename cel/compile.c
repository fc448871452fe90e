/* compile.c — turns a checked AST into the program eval.c runs.
 *
 * What happens here, in order of importance for selectors:
 *  - `device.attributes["dom"].name` and `device.capacity["dom"].name` (by select
 *    or by constant index) become one OP_DEVATTR/OP_DEVCAP instruction holding the
 *    interned (domain, name) ids, so evaluation is a scan of the device's id pairs;
 *    `has()` of them becomes OP_HAS_DEVATTR/CAP; `device.driver` is OP_DRIVER.
 *  - operators with fixed semantics (&& || ! ?: == != < <= > >= in) get their own
 *    opcodes; `x == "const"` compares bytes directly.
 *  - calls to CEL_FN_FOLD functions with constant arguments (quantity("40Gi"),
 *    semver("8.0.0")) and literals made only of constants are evaluated once here.
 *  - the `__result__ + [e]` step of map/filter/transformList appends in place.
 *  - overloads with a prepare hook (regex) get their prepared state. */
#include "cel/program_internal.h"

#include "base/hmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct comp {
    cel_program *p;
    const char *src;
    size_t n;
    strbuf *d;           /* the error text */
    bool failed;
    /* the walk's answers for shared instructions (key: the instruction's address),
     * so a chain of optMaps is walked in linear time */
    hmap memo_touch;
    /* while a cel.bind body is built: the bound value's instruction by slot, which
     * the variable's uses evaluate on the first of them (OP_LOCAL) */
    const cel_inst **bind_init;
    uint32_t nslots;
} comp;

static cel_inst *inst(comp *c, cel_op op, uint32_t pos) {
    cel_inst *i = ARENA_NEW(&c->p->a, cel_inst);
    i->op = (uint8_t)op;
    i->pos = pos;
    i->cost = 1;
    i->self = 0;
    return i;
}

static const cel_inst *build(comp *c, cel_node *n);

/* cel-go's planner (Kubernetes plans with cel.OptOptimize) and its cost tracker
 * (interpreter/runtimecost.go) see the program as attributes, constants and calls.
 * An attribute (identifier, selection, index, ternary) is charged once when it is
 * evaluated (SelectAndIdentCost) and each qualifier on it (a field, a constant or an
 * attribute key) once when it is applied; a selection or index on a value that is
 * not an attribute (a call's result, a literal) wraps that value in a relative
 * attribute, charged once more. Constants (literals, list and map literals of
 * constants, conversions of constants) are free. Calls charge their own cost after
 * their arguments, errors included; &&, || and the fold charge nothing. Each
 * instruction's `self` is the part of this that does not depend on values, charged
 * by whoever evaluates the instruction (eval.c); the rest (qualifiers reached or
 * present, call costs by size) is charged there when known. */
static bool is_attr(const cel_inst *i) {
    switch ((cel_op)i->op) {
    case OP_VAR: case OP_LOCAL: case OP_DEVICE: case OP_DRIVER: case OP_ALLOW_MULTI: case OP_DEVMAP:
    case OP_DEVDOMAIN: case OP_DEVATTR: case OP_DEVCAP: case OP_SELECT: case OP_INDEX: case OP_OPT_SELECT:
    case OP_OPT_INDEX: case OP_COND: case OP_HAS: case OP_HAS_DEVATTR: case OP_HAS_DEVCAP: return true;
    default: return false;
    }
}

/* What cel-go's planner holds as a constant (an InterpretableConst): free to evaluate. */
static bool is_plan_const(const cel_inst *i) {
    if (i->op == OP_CONST) return i->flags & CONST_PLAN;
    return (i->op == OP_LIST || i->op == OP_MAP) && i->nargs == 0 && !i->opt_mask;
}

/* A ternary's branch whose own charge the conditional attribute drops: an attribute
 * other than a ternary or a presence test. */
static bool cond_attr(const cel_inst *i) {
    return is_attr(i) && i->op != OP_COND && i->op != OP_HAS && i->op != OP_HAS_DEVATTR && i->op != OP_HAS_DEVCAP;
}

static uint32_t sat32(uint64_t v) { return v < UINT32_MAX ? (uint32_t)v : UINT32_MAX; }

/* A name the program looks devices up by: interned, and held until the program is freed. */
static uint32_t intern_name(comp *c, const char *s, size_t len) {
    cel_program *p = c->p;
    uint32_t id = intern_put(p->env->names, s, len);
    if (!id) return 0;   /* a full table: the lookup finds nothing, as for an unknown name */
    if (p->nnames == p->capnames) {
        p->capnames = p->capnames ? p->capnames * 2 : 8;
        p->names = xrealloc(p->names, p->capnames * sizeof *p->names);
    }
    p->names[p->nnames++] = id;
    return id;
}

static cel_inst *error_inst(comp *c, uint32_t pos, const char *msg) {
    cel_inst *i = inst(c, OP_ERROR, pos);
    i->k = cel_error_static(arena_strdup(&c->p->a, msg));
    return i;
}

/* Field or constant-key access on an already built target. */
static const cel_inst *build_access(comp *c, cel_node *n, const cel_inst *tx, const char *key, size_t klen,
                                    bool test_only, bool optional) {
    /* the device paths as one instruction: `device` 1 and each qualifier 1 (4 for
     * device.attributes["d"].name, as Kubernetes' compile_test has it); has() of
     * one: the qualifiers only (PresenceTestHasCost(false) makes the test free) */
    if (!optional && tx->op == OP_DEVICE && !test_only) {
        cel_inst *i = NULL;
        if (!strcmp(key, "driver")) i = inst(c, OP_DRIVER, n->pos);
        if (!strcmp(key, "allowMultipleAllocations")) i = inst(c, OP_ALLOW_MULTI, n->pos);
        if (!strcmp(key, "attributes") || !strcmp(key, "capacity")) {
            i = inst(c, OP_DEVMAP, n->pos);
            i->a = key[0] == 'c' ? CEL_DM_CAPS : CEL_DM_ATTRS;
        }
        if (i) {
            i->self = 2;
            return i;
        }
    }
    if (!optional && !test_only && tx->op == OP_DEVMAP) {
        cel_inst *i = inst(c, OP_DEVDOMAIN, n->pos);
        i->self = 3;
        i->a = tx->a;
        i->b = intern_name(c, key, klen);
        return i;
    }
    if (!optional && tx->op == OP_DEVDOMAIN) {
        cel_op op = test_only ? (tx->a == CEL_DM_CAPS ? OP_HAS_DEVCAP : OP_HAS_DEVATTR)
                              : (tx->a == CEL_DM_CAPS ? OP_DEVCAP : OP_DEVATTR);
        cel_inst *i = inst(c, op, n->pos);
        i->a = tx->b;
        i->b = intern_name(c, key, klen);
        i->k = cel_string(arena_strndup(&c->p->a, key, klen), klen);
        i->self = test_only ? 3 : 4;
        return i;
    }
    cel_inst *i = inst(c, test_only ? OP_HAS : optional ? OP_OPT_SELECT : OP_SELECT, n->pos);
    /* the field is a qualifier charged when applied (eval.c); an operand that is not
     * an attribute is wrapped in a relative attribute, 1 */
    i->self = is_attr(tx) ? 0 : 1;
    if (test_only && is_attr(tx) && tx->op != OP_COND) {
        i->self = 0;
        i->flags |= HAS_OF_ATTR;
    }
    i->x = tx;
    i->k = cel_string(arena_strndup(&c->p->a, key, klen), klen);
    return i;
}

static bool all_const(const cel_inst **args, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (args[i]->op != OP_CONST) return false;
    return true;
}

/* Evaluates a constant-only instruction now; returns it as OP_CONST, or the
 * instruction unchanged when evaluation fails (the error then happens at run time,
 * as in Kubernetes). */
/* A throw-away evaluation context for evaluating an instruction at compile time (the
 * caller frees x->a). */
static void scratch_ctx(comp *c, cel_eval_ctx *x, size_t block) {
    memset(x, 0, sizeof *x);
    arena_init(&x->a, block);
    x->base = arena_save(&x->a);
    x->prog = c->p;
}

static const cel_inst *fold(comp *c, cel_inst *i) {
    cel_eval_ctx x;
    scratch_ctx(c, &x, 4096);
    cel_value v = cel__eval_inst(i, &x);
    const cel_inst *r = i;
    if (v.kind != CV_ERROR && x.cost <= CEL_MAX_COST) {
        cel_inst *k = inst(c, OP_CONST, i->pos);
        k->k = cel__value_clone(&c->p->a, c->p->env->names, &v);
        /* cel-go evaluates what we fold, and charges it each time it is reached:
         * what this evaluation charged (the constants folded below it included) */
        k->flags = CONST_FOLDED;
        k->self = sat32(x.cost);
        r = k;
    }
    arena_free(&x.a);
    return r;
}

static void add_prep(comp *c, void *p, void (*release)(void *)) {
    cel_program *pr = c->p;
    if (pr->npreps == pr->cappreps) {
        uint32_t nc = pr->cappreps ? pr->cappreps * 2 : 4;
        cel_prep *np = ARENA_NEWN(&pr->a, cel_prep, nc);
        if (pr->npreps) memcpy(np, pr->preps, sizeof(cel_prep) * pr->npreps);
        pr->preps = np;
        pr->cappreps = nc;
    }
    pr->preps[pr->npreps].p = p;
    pr->preps[pr->npreps].release = release;
    pr->npreps++;
}

/* Collects the operands of a chain of the same logical operator (the parser builds
 * balanced trees; evaluation order does not change the result of && and ||). */
static void flatten(comp *c, cel_node *n, const char *op, const cel_inst ***v, uint32_t *cnt, uint32_t *cap) {
    if (n->kind == N_CALL && !n->target && n->nargs == 2 && !strcmp(n->name, op)) {
        flatten(c, n->args[0], op, v, cnt, cap);
        flatten(c, n->args[1], op, v, cnt, cap);
        return;
    }
    if (*cnt == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        const cel_inst **nv = ARENA_NEWN(&c->p->a, const cel_inst *, nc);
        if (*cnt) memcpy(nv, *v, sizeof(cel_inst *) * *cnt);
        *v = nv;
        *cap = nc;
    }
    (*v)[(*cnt)++] = build(c, n);
}

/* ---- fused selector shapes (see OP_CAP_CMPK) -------------------------------------- */

/* Whether the call may resolve to overload `id`, with a constant argument of `kind`. */
static bool call_is(const cel_inst *call, const char *id, cel_kind kind) {
    if (call->op != OP_CALL || call->nargs != 2 || call->args[1]->op != OP_CONST || call->args[1]->k.kind != kind)
        return false;
    for (uint32_t j = 0; j < call->novs; j++)
        if (!strcmp(call->ovs[j]->ov->id, id)) return true;
    return false;
}

static cel_inst *fused(comp *c, cel_op op, const cel_inst *tree, const cel_inst *recv, cel_value k) {
    cel_inst *f = inst(c, op, tree->pos);
    f->x = tree;
    f->a = recv->a;
    f->b = recv->b;
    f->k = k;
    return f;
}

/* `g` is a comparison (OP_EQ..OP_GE) that was not folded. */
static const cel_inst *fuse_compare(comp *c, cel_inst *g) {
    const cel_inst *l = g->x, *r = g->y;
    if (c->p->env->opts.no_fuse || r->op != OP_CONST || r->k.kind != CV_INT) return g;
    if (l->op == OP_DEVATTR) {
        cel_inst *f = fused(c, OP_ATTR_ICMPK, g, l, r->k);
        f->iv = g->op;
        f->cost = sat32((uint64_t)1 + l->self + r->self);   /* the attribute, the constant, the int comparison */
        return f;
    }
    if (l->op != OP_CALL || r->k.u.i < INT32_MIN || r->k.u.i > INT32_MAX) return g;
    cel_op op;
    if (l->args[0]->op == OP_DEVCAP && call_is(l, "quantity_compare_to", CV_QUANTITY)) op = OP_CAP_CMPK;
    else if (l->args[0]->op == OP_DEVATTR && call_is(l, "semver_compare_to", CV_SEMVER)) op = OP_ATTR_VCMPK;
    else return g;
    cel_inst *f = fused(c, op, g, l->args[0], l->args[1]->k);
    f->iv = g->op;
    f->iv2 = (int32_t)r->k.u.i;
    /* the attribute, the constants, the call's fixed cost, then the int comparison */
    f->cost = sat32((uint64_t)l->cost + 1 + l->args[0]->self + l->args[1]->self + r->self);
    return f;
}

/* `g` is an `in`: with a constant list of primitives (not bytes) on the right it is
 * a set lookup under OptOptimize (maybeOptimizeSetMembership), which the cost tracker
 * does not see as a call: free, its left operand charged as usual. */
static void mark_set_membership(cel_inst *g) {
    const cel_inst *r = g->y;
    if (r->op != OP_CONST || !(r->flags & CONST_PLAN) || r->k.kind != CV_LIST) return;
    for (uint32_t i = 0; i < r->k.u.list->n; i++) {
        cel_kind k = r->k.u.list->items[i].kind;
        if (k != CV_BOOL && k != CV_INT && k != CV_UINT && k != CV_DOUBLE && k != CV_STRING) return;
    }
    g->flags |= IN_SET;
}

/* `g` is an `in` that was not folded. */
static const cel_inst *fuse_in(comp *c, cel_inst *g) {
    const cel_inst *l = g->x, *r = g->y;
    /* Kubernetes plans with cel.OptOptimize: `x in <constant empty list>` becomes the
     * constant false and x is never evaluated (cel-go interpreter/decorators.go
     * maybeOptimizeSetMembership), so an error in x does not surface — semantics, not
     * a shortcut: kept with no_fuse too (found by tests/upstream) */
    if (r->op == OP_LIST && r->nargs == 0) {   /* the literal only: lists.range(0) is a call */
        cel_inst *k = inst(c, OP_CONST, g->pos);
        k->k = cel_bool(false);
        k->flags = CONST_PLAN;
        return k;
    }
    if (c->p->env->opts.no_fuse || l->op != OP_DEVATTR || r->op != OP_CONST || r->k.kind != CV_LIST) return g;
    const cel_list *list = r->k.u.list;
    for (uint32_t i = 0; i < list->n; i++)
        if (list->items[i].kind != CV_STRING) return g;
    cel_inst *f = fused(c, OP_ATTR_INK, g, l, r->k);
    /* the attribute, the list, and `in` (eval.c in_op): a constant list */
    uint64_t in = g->flags & IN_SET ? 0 : g->flags & ONE_OV ? list->n : 1;
    f->cost = sat32((uint64_t)l->self + r->self + in);
    return f;
}

/* `i` is a call that was not folded. */
static const cel_inst *fuse_call(comp *c, cel_inst *i) {
    if (c->p->env->opts.no_fuse || i->nargs != 2) return i;
    const cel_inst *recv = i->args[0];
    cel_op op = OP_CONST;
    int32_t cmp = 0;
    if (recv->op == OP_DEVCAP) {
        if (call_is(i, "quantity_is_greater_than", CV_QUANTITY)) op = OP_CAP_CMPK, cmp = OP_GT;
        else if (call_is(i, "quantity_is_less_than", CV_QUANTITY)) op = OP_CAP_CMPK, cmp = OP_LT;
    } else if (recv->op == OP_DEVATTR) {
        if (call_is(i, "semver_is_greater_than", CV_SEMVER)) op = OP_ATTR_VCMPK, cmp = OP_GT;
        else if (call_is(i, "semver_is_less_than", CV_SEMVER)) op = OP_ATTR_VCMPK, cmp = OP_LT;
        else if (call_is(i, "starts_with_string", CV_STRING)) op = OP_ATTR_PREFIXK;
        else if (call_is(i, "ends_with_string", CV_STRING)) op = OP_ATTR_SUFFIXK;
    }
    if (op == OP_CONST) return i;
    cel_inst *f = fused(c, op, i, recv, i->args[1]->k);
    f->iv = cmp;
    f->iv2 = 0;
    /* the receiver and the constant, and the call's cost (startsWith/endsWith: by the
     * constant's length) */
    bool by_len = op == OP_ATTR_PREFIXK || op == OP_ATTR_SUFFIXK;
    f->cost = sat32((uint64_t)recv->self + i->args[1]->self +
                    (by_len ? cel_str_tenth_cost(i->args[1]->k.u.s, i->args[1]->k.len) : i->cost));
    return f;
}

static cel_op binop(const char *name) {
    static const struct { const char *n; cel_op op; } t[] = {
        {"_&&_", OP_AND}, {"_||_", OP_OR}, {"_==_", OP_EQ}, {"_!=_", OP_NE}, {"_<_", OP_LT},
        {"_<=_", OP_LE},  {"_>_", OP_GT},  {"_>=_", OP_GE}, {"@in", OP_IN},
    };
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        if (!strcmp(t[i].n, name)) return t[i].op;
    return OP_CONST;
}

/* cel-go's type conversion functions (common/overloads IsTypeConversionFunction):
 * with OptOptimize its planner evaluates a call of one with a constant argument
 * when the program is built (interpreter/decorators.go maybeOptimizeConstUnary),
 * and an error there fails program construction. */
static bool is_conversion(const char *name) {
    static const char *const conv[] = {"bool", "bytes", "double", "duration", "dyn",
                                       "int", "string", "timestamp", "type", "uint"};
    for (size_t i = 0; i < ARRAY_SIZE(conv); i++)
        if (!strcmp(conv[i], name)) return true;
    return false;
}

/* What cel-go's planner holds as a constant (InterpretableConst): literals, list
 * and map literals of constants (maybeBuildListLiteral/maybeBuildMapLiteral) and
 * conversions of constants. dralloc folds more (any foldable call); cel-go's
 * plan-time checks (conversions, constant regex patterns) see only these. */
static bool plan_const(const cel_node *n) {
    switch ((cel_node_kind)n->kind) {
    case N_CONST: return true;
    case N_LIST:
    case N_MAP:
        for (uint32_t i = 0; i < n->nargs; i++)
            if (!plan_const(n->args[i])) return false;
        return true;
    case N_CALL: return !n->target && n->nargs == 1 && is_conversion(n->name) && plan_const(n->args[0]);
    default: return false;
    }
}

#define PLAN_FAILED "program instantiation failed: "

static void plan_fail(comp *c, const char *msg) {
    if (c->failed) return;
    c->failed = true;
    if (c->d) {
        sbuf_reset(c->d);
        sbuf_adds(c->d, msg);
    }
}

/* The conversion `i` of a planner constant, evaluated now: an error fails the build. */
static void plan_conversion(comp *c, cel_inst *i) {
    cel_eval_ctx x;
    scratch_ctx(c, &x, 1024);
    cel_value v = cel__eval_inst(i, &x);
    if (v.kind == CV_ERROR) {
        strbuf m;
        sbuf_init(&m);
        sbuf_addf(&m, PLAN_FAILED "%s", v.u.s ? v.u.s : "");
        plan_fail(c, m.buf);
        sbuf_free(&m);
    }
    arena_free(&x.a);
}

/* The standard functions cel-go binds once for all their overloads
 * (decls.Singleton*Binding in common/stdlib): planned as unary or binary calls
 * whatever the checker resolved. */
static bool singleton(const char *name) {
    static const char *const s[] = {"_+_", "_-_", "_*_", "_/_", "_%_", "-_", "size", "matches", "dyn", "type", "_[_]"};
    for (size_t i = 0; i < ARRAY_SIZE(s); i++)
        if (!strcmp(s[i], name)) return true;
    return false;
}

static const cel_inst *build_call(comp *c, cel_node *n) {
    const char *name = n->name;
    if (!n->target) {
        cel_op op = binop(name);
        if ((op == OP_AND || op == OP_OR) && n->nargs == 2) {
            const cel_inst **v = NULL;
            uint32_t cnt = 0, cap = 0;
            flatten(c, n, name, &v, &cnt, &cap);
            cel_inst *i = inst(c, op == OP_AND ? OP_ANDN : OP_ORN, n->pos);
            i->args = v;
            i->nargs = (uint16_t)cnt;
            return i;
        }
        if (op != OP_CONST && n->nargs == 2) {
            const cel_inst *l = build(c, n->args[0]), *r = build(c, n->args[1]);
            if ((op == OP_EQ || op == OP_NE) && (r->op == OP_CONST || l->op == OP_CONST)) {
                const cel_inst *k = r->op == OP_CONST ? r : l, *o = r->op == OP_CONST ? l : r;
                if (k->k.kind == CV_STRING) {
                    cel_op fop = op == OP_EQ ? OP_EQ_STRK : OP_NE_STRK;
                    if (o->op == OP_DRIVER) fop = op == OP_EQ ? OP_DRIVER_EQK : OP_DRIVER_NEK;
                    if (o->op == OP_DEVATTR) fop = op == OP_EQ ? OP_ATTR_EQK : OP_ATTR_NEK;
                    cel_inst *i = inst(c, fop, n->pos);
                    i->x = o;
                    i->y = o;
                    i->a = o->a;
                    i->b = o->b;
                    i->k = k->k;
                    /* the constant (a folded call's cost), and the driver or attribute
                     * the instruction reads itself */
                    i->self = sat32((uint64_t)k->self + (fop == OP_EQ_STRK || fop == OP_NE_STRK ? 0 : o->self));
                    /* the driver is compared by interned id (devices carry driver_id) */
                    if (o->op == OP_DRIVER) i->b = intern_name(c, k->k.u.s, k->k.len);
                    return i;
                }
            }
            if (op == OP_IN && r->op == OP_DEVMAP && l->op == OP_CONST && l->k.kind == CV_STRING) {
                cel_inst *i = inst(c, OP_HAS_DOMAIN, n->pos);
                i->self = sat32((uint64_t)1 + l->self + r->self);   /* in_map, the key, device.attributes */
                i->a = r->a;
                i->b = intern_name(c, l->k.u.s, l->k.len);
                return i;
            }
            cel_inst *i = inst(c, op, n->pos);
            i->x = l;
            i->y = r;
            i->self = 0;   /* the operator's cost depends on its operands' sizes (eval.c) */
            if (n->novs == 1) i->flags |= ONE_OV;
            if (op == OP_IN) mark_set_membership(i);
            if (op != OP_AND && op != OP_OR && l->op == OP_CONST && r->op == OP_CONST) return fold(c, i);
            if (op == OP_IN) return fuse_in(c, i);
            return op >= OP_EQ && op <= OP_GE ? fuse_compare(c, i) : i;
        }
        if (!strcmp(name, "!_") && n->nargs == 1) {
            cel_inst *i = inst(c, OP_NOT, n->pos);
            i->x = build(c, n->args[0]);
            i->self = 1;   /* a call of the default cost */
            return i;
        }
        if (!strcmp(name, "@not_strictly_false") && n->nargs == 1) {
            cel_inst *i = inst(c, OP_NSF, n->pos);
            i->x = build(c, n->args[0]);
            i->self = 1;
            return i;
        }
        if (!strcmp(name, "_?_:_") && n->nargs == 3) {
            cel_inst *i = inst(c, OP_COND, n->pos);
            i->x = build(c, n->args[0]);
            i->y = build(c, n->args[1]);
            i->z = build(c, n->args[2]);
            /* the planner keeps an attribute branch as a bare attribute of the
             * conditional (planCallConditional takes Attr()), so that branch's own
             * evaluation is not observed: charged, then given back (eval.c) */
            if (cond_attr(i->y)) i->flags |= COND_Y_ATTR;
            if (cond_attr(i->z)) i->flags |= COND_Z_ATTR;
            return i;
        }
        if (!strcmp(name, "cel.@mapInsert") && (n->nargs == 2 || n->nargs == 3)) {
            cel_inst *i = inst(c, OP_MAPINSERT, n->pos);
            i->x = build(c, n->args[0]);
            i->y = build(c, n->args[1]);
            i->z = n->nargs == 3 ? build(c, n->args[2]) : NULL;
            return i;
        }
        if (!strcmp(name, "_+_") && n->nargs == 2 && n->args[0]->kind == N_IDENT && n->args[0]->slot >= 0 &&
            !strcmp(n->args[0]->name, "__result__") && n->args[1]->kind == N_LIST && n->args[1]->nargs == 1 &&
            !n->args[1]->opt_mask) {
            cel_inst *i = inst(c, OP_APPEND, n->pos);
            i->a = (uint32_t)n->args[0]->slot;
            i->x = build(c, n->args[1]->args[0]);
            /* the accumulator 1, the one-element list literal (free when its element
             * is a constant: a constant list), add_list 1 */
            i->cost = 2 + (is_plan_const(i->x) ? 0 : CEL_LIST_CREATE);
            return i;
        }
    }
    uint32_t total = n->nargs + (n->target ? 1 : 0);
    cel_inst *i = inst(c, OP_CALL, n->pos);
    const cel_inst **args = ARENA_NEWN(&c->p->a, const cel_inst *, total ? total : 1);
    uint32_t k = 0;
    if (n->target) args[k++] = build(c, n->target);
    for (uint32_t j = 0; j < n->nargs; j++) args[k++] = build(c, n->args[j]);
    i->args = args;
    i->nargs = (uint16_t)total;
    i->k = cel_string(name, strlen(name));
    if (!n->novs) return error_inst(c, n->pos, "no such overload");
    const cel_fn_decl *const *ovs = (const cel_fn_decl *const *)n->ovs;
    i->ovs = ovs;
    i->novs = n->novs;
    cel_fn fn = ovs[0]->ov->fn;
    bool fold_ok = true;
    uint32_t cost = 0;
    uint16_t flags = 0;
    for (uint32_t j = 0; j < n->novs; j++) {
        if (ovs[j]->ov->fn != fn) fn = NULL;
        if (!(ovs[j]->ov->flags & CEL_FN_FOLD)) fold_ok = false;
        if (ovs[j]->ov->cost > cost) cost = ovs[j]->ov->cost;
        flags |= ovs[j]->ov->flags;
    }
    /* a single implementation still needs runtime kind checks unless the checker
     * proved the argument types; keep dispatch when types are dynamic */
    i->fn = fn;
    i->fn_flags = flags;
    /* one overload and statically known argument kinds: no runtime dispatch needed */
    if (n->novs == 1 && !(flags & CEL_FN_NONSTRICT)) {
        bool typed = true;
        uint32_t j = 0;
        const cel_type *at;
        if (n->target) {
            at = n->target->type;
            typed &= at && ovs[0]->kinds[j] >= 0 && cel__type_value_kind(at) == ovs[0]->kinds[j] &&
                     ovs[0]->kinds[j] != CV_MAP && ovs[0]->kinds[j] != CV_OPAQUE;
            j++;
        }
        for (uint32_t q = 0; q < n->nargs; q++, j++) {
            at = n->args[q]->type;
            typed &= ovs[0]->kinds[j] < 0 ||
                     (at && cel__type_value_kind(at) == ovs[0]->kinds[j] && ovs[0]->kinds[j] != CV_MAP &&
                      ovs[0]->kinds[j] != CV_OPAQUE);
        }
        if (typed && !c->p->env->opts.no_check) i->flags |= CALL_TYPED;
    }
    uint32_t first = 0;
    if (total && args[0]->op == OP_DEVATTR) i->flags |= CALL_RECV_ATTR, first = 1;
    else if (total && args[0]->op == OP_DEVCAP) i->flags |= CALL_RECV_CAP, first = 1;
    bool rest_const = true;
    for (uint32_t j = first; j < total; j++) rest_const &= args[j]->op == OP_CONST;
    if (rest_const) i->flags |= CALL_ARGS_CONST;
    i->cost = cost;
    /* the planner's choice (planCall): an overload id only when the checker left one
     * overload, and then its own unary/binary binding; otherwise the function's
     * dispatcher, a variadic call; decRegexOptimizer rebuilds matches with a
     * constant pattern as one (NewCall) */
    if (total >= 3 || (n->novs > 1 && !singleton(name)) ||
        (!strcmp(name, "matches") && total == 2 && plan_const(n->target ? n->args[0] : n->args[1])) ||
        !strcmp(name, "format"))   /* ext strings binds it with FunctionBinding */
        i->flags |= CALL_VARARGS;
    if (n->novs > 1) {
        static const char *const by_id[] = {"_+_",  "contains", "startsWith", "endsWith", "matches",
                                            "string", "bytes", "sort", "@sortByAssociatedKeys"};
        for (size_t j = 0; j < ARRAY_SIZE(by_id); j++)
            if (!strcmp(name, by_id[j])) i->flags |= CALL_DEFAULT1;
    }
    bool plan_conv =
        !n->target && n->nargs == 1 && is_conversion(name) && plan_const(n->args[0]) && args[0]->op == OP_CONST;
    if (plan_conv) plan_conversion(c, i);
    if (n->novs == 1 && ovs[0]->ov->prepare) {
        cel_value cv[CEL_MAX_ARGS];
        bool isc[CEL_MAX_ARGS];
        for (uint32_t j = 0; j < total; j++) {
            /* constant as cel-go's planner sees it (a regex pattern "(" + "" is not) */
            cel_node *an = n->target ? (j == 0 ? n->target : n->args[j - 1]) : n->args[j];
            isc[j] = args[j]->op == OP_CONST && plan_const(an);
            cv[j] = isc[j] ? args[j]->k : cel_error_static("not constant");
        }
        void *prep = NULL;
        err pe;
        err_clear(&pe);
        if (!ovs[0]->ov->prepare(cv, isc, total, &prep, &pe)) {
            /* a failure of program construction is worded as such; others are the
             * validators' positioned errors */
            if (!strncmp(pe.msg, PLAN_FAILED, strlen(PLAN_FAILED))) plan_fail(c, pe.msg);
            else if (!c->failed) cel__error_at(c->d, c->src, c->n, n->pos, "%s", pe.msg);
            c->failed = true;
            return i;
        }
        if (prep) {
            i->prepared = prep;
            add_prep(c, prep, ovs[0]->ov->release);
        }
    }
    if (fold_ok && all_const(args, total)) {
        const cel_inst *r = fold(c, i);
        if (plan_conv && r->op == OP_CONST) {
            /* a constant to cel-go's planner (maybeOptimizeConstUnary): free */
            ((cel_inst *)r)->flags |= CONST_PLAN;
            ((cel_inst *)r)->self = 0;
        }
        return r;
    }
    if (plan_conv) i->cost = 0;
    return fuse_call(c, i);
}

static const cel_inst *build_node(comp *c, cel_node *n);

/* A shared node is built once; its instruction is reached from both uses. */
static const cel_inst *build(comp *c, cel_node *n) {
    if (!n->shared) return build_node(c, n);
    if (n->inst) return n->inst;
    cel_inst *i = (cel_inst *)build_node(c, n);
    i->shared = 1;   /* the program's own arena: still being built, so still writable */
    n->inst = i;
    return i;
}

static const cel_inst *build_node(comp *c, cel_node *n) {
    switch ((cel_node_kind)n->kind) {
    case N_CONST: {
        cel_inst *i = inst(c, OP_CONST, n->pos);
        i->k = n->val;
        i->flags = CONST_PLAN;
        return i;
    }
    case N_IDENT: {
        if (n->slot >= 0) {
            cel_inst *i = inst(c, OP_LOCAL, n->pos);
            i->a = (uint32_t)n->slot;
            i->self = 1;
            if ((uint32_t)n->slot < c->nslots) i->x = c->bind_init[n->slot];
            return i;
        }
        if (n->resolved && !strcmp(n->resolved, "@type")) {
            cel_inst *i = inst(c, OP_CONST, n->pos);
            i->k = cel_type_value(n->name);
            i->flags = CONST_PLAN;
            return i;
        }
        if (!n->resolved || !strcmp(n->resolved, "@undeclared")) {
            char msg[300];
            snprintf(msg, sizeof msg, "no such attribute(s): %s", n->name);
            return error_inst(c, n->pos, msg);
        }
        cel_inst *i = inst(c, c->p->env->opts.dra && !strcmp(n->resolved, "device") ? OP_DEVICE : OP_VAR, n->pos);
        i->a = i->op == OP_VAR ? (uint32_t)n->accu_slot : 0;
        i->self = 1;
        return i;
    }
    case N_SELECT: {
        const cel_inst *tx = build(c, n->target);
        return build_access(c, n, tx, n->name, strlen(n->name), n->test_only, n->optional);
    }
    case N_INDEX: {
        const cel_inst *tx = build(c, n->target);
        cel_node *ix = n->args[0];
        if (ix->kind == N_CONST && ix->val.kind == CV_STRING && !n->optional &&
            (tx->op == OP_DEVMAP || tx->op == OP_DEVDOMAIN))
            return build_access(c, n, tx, ix->val.u.s, ix->val.len, false, false);
        cel_inst *i = inst(c, n->optional ? OP_OPT_INDEX : OP_INDEX, n->pos);
        i->x = tx;
        i->y = build(c, ix);
        /* The key is a qualifier, evaluated and charged only when applied, once the
         * operand has a value (eval.c): a constant 1; an attribute is charged as that
         * qualifier instead of on its own, so adds nothing; any other key is wrapped
         * in a relative attribute, 1. An operand that is not an attribute is wrapped
         * likewise, 1 whatever happens. */
        if (is_plan_const(i->y)) i->flags |= IDX_KEY_QUAL;
        else if (is_attr(i->y) && i->y->op != OP_COND) i->flags |= IDX_KEY_ATTR;
        else i->flags |= IDX_KEY_REL;
        i->self = is_attr(tx) ? 0 : 1;
        return i;
    }
    case N_CALL: return build_call(c, n);
    case N_LIST:
    case N_MAP: {
        cel_inst *i = inst(c, n->kind == N_LIST ? OP_LIST : OP_MAP, n->pos);
        const cel_inst **args = ARENA_NEWN(&c->p->a, const cel_inst *, n->nargs ? n->nargs : 1);
        for (uint32_t j = 0; j < n->nargs; j++) args[j] = build(c, n->args[j]);
        i->args = args;
        i->nargs = (uint16_t)n->nargs;
        i->opt_mask = n->opt_mask;
        /* cel-go's ListCreateBaseCost / MapCreateBaseCost, charged when evaluated;
         * a literal of planner constants is one itself (maybeBuildListLiteral) */
        i->cost = n->kind == N_LIST ? CEL_LIST_CREATE : CEL_MAP_CREATE;
        if (!n->nargs && !n->opt_mask) i->cost = 0;
        if (!n->opt_mask && all_const(args, n->nargs) && n->nargs) {
            bool plan = true;
            for (uint32_t j = 0; j < n->nargs; j++) plan &= (args[j]->flags & CONST_PLAN) != 0;
            const cel_inst *r = fold(c, i);
            if (plan && r->op == OP_CONST) {
                ((cel_inst *)r)->flags |= CONST_PLAN;
                ((cel_inst *)r)->self = 0;
            }
            return r;
        }
        return i;
    }
    case N_STRUCT: return error_inst(c, n->pos, "unknown type: message construction is not supported");
    case N_COMPREHENSION: {
        cel_inst *i = inst(c, OP_COMP, n->pos);
        /* the fold charges nothing itself: its parts charge as they are evaluated */
        i->x = build(c, n->range);
        i->y = build(c, n->accu_init);
        i->z = build(c, n->cond);
        i->step = build(c, n->step);
        i->result = build(c, n->result);
        i->iv = n->slot;
        i->iv2 = n->slot2;
        i->accu = n->accu_slot;
        i->cost = 0;
        return i;
    }
    case N_BIND: {
        cel_inst *i = inst(c, OP_BIND, n->pos);
        i->a = (uint32_t)n->slot;
        i->x = build(c, n->args[0]);
        const cel_inst *outer = NULL;
        bool in = (uint32_t)n->slot < c->nslots;
        if (in) outer = c->bind_init[n->slot], c->bind_init[n->slot] = i->x;
        i->y = build(c, n->args[1]);
        if (in) c->bind_init[n->slot] = outer;
        return i;
    }
    }
    return error_inst(c, n->pos, "internal error: unknown node");
}

/* Which device arrays the final program reads. cel_eval_bool reads the capacity bit
 * (it requests the capacity line up front); the attribute bit is kept because it says
 * what the program reads, at no cost per evaluation. */
static unsigned touches(comp *c, const cel_inst *i) {
    if (!i) return 0;
    uint64_t memo;
    if (i->shared && hmap_get(&c->memo_touch, (uintptr_t)i, &memo)) return (unsigned)memo;
    unsigned t = 0;
    switch ((cel_op)i->op) {
    case OP_DEVICE:
    case OP_DEVMAP: return CEL_TOUCH_ATTRS | CEL_TOUCH_CAPS;
    case OP_DEVDOMAIN:
    case OP_HAS_DOMAIN: return i->a == CEL_DM_CAPS ? CEL_TOUCH_CAPS : CEL_TOUCH_ATTRS;
    case OP_DEVATTR:
    case OP_HAS_DEVATTR:
    case OP_ATTR_EQK:
    case OP_ATTR_NEK: return CEL_TOUCH_ATTRS;
    case OP_DEVCAP:
    case OP_HAS_DEVCAP: return CEL_TOUCH_CAPS;
    default: break;
    }
    t |= touches(c, i->x) | touches(c, i->y) | touches(c, i->z) | touches(c, i->step) | touches(c, i->result);
    if (i->op != OP_ATTR_EQK && i->op != OP_ATTR_NEK)
        for (uint32_t k = 0; k < i->nargs && i->args; k++) t |= touches(c, i->args[k]);
    if (i->shared) hmap_put(&c->memo_touch, (uintptr_t)i, t);
    return t;
}

bool cel__program_build(cel_program *p, cel_node *root, int nslots, const char *src, size_t n, strbuf *d) {
    comp c = {.p = p, .src = src, .n = n, .d = d, .nslots = nslots > 0 ? (uint32_t)nslots : 0};
    c.bind_init = xcalloc(c.nslots ? c.nslots : 1, sizeof *c.bind_init);
    hmap_init(&c.memo_touch);
    p->nslots = (uint32_t)nslots;
    p->est_cost = cel__estimate_cost(root);   /* before build: it reads the checked tree as is */
    p->root = build(&c, root);
    p->touches = (uint8_t)touches(&c, p->root);
    p->pred = cel__pred_ok(p->root);
    if (p->pred) cel__pred_flatten(p);
    hmap_free(&c.memo_touch);
    free(c.bind_init);
    return !c.failed;
}
