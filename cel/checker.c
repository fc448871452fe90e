/* checker.c — resolves names and type-checks a parsed expression against an
 * environment, annotating the AST in place.
 *
 * Resolution: local variables (comprehension and cel.bind variables, innermost
 * first), then declared variables with container-qualified candidates ("a.b.x",
 * "a.x", "x" for container "a.b"), then type names used as values (`int`, `list`).
 * A select chain `a.b.c` whose text names a declared variable is that variable
 * (cel-go's qualified identifiers), and `ns.f(x)` is the global function "ns.f" when
 * one is declared (optional.of, sets.contains, strings.quote...).
 *
 * Typing follows cel-go with gradual typing: `dyn` is compatible with everything;
 * overloads are chosen by assignability with type parameters; with several
 * matching overloads the result is their common type or dyn, and the evaluator
 * dispatches among the candidates at run time. Kubernetes' settings are applied
 * unless the environment says otherwise: homogeneous aggregate literals, and for
 * the DRA environment a bool-or-dyn result. With opts.no_check every call keeps all
 * overloads of its name and arity as runtime candidates and type errors become
 * runtime errors (cel-spec's "disableCheck" tests). */
#include "cel/env_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_SCOPE 256

typedef struct local {
    const char *name;
    const cel_type *type;
    int slot;
} local;

typedef struct checker {
    const cel_env *env;
    arena *a;
    err *e;
    const char *src;
    size_t n;
    bool failed;
    bool check;
    local scope[MAX_SCOPE];
    int nscope;
    int nslots;
    bool lit_exempt;   /* the literal checked next is a direct argument of a CEL_FN_MIXED_LITERALS
                        * call (string format), or nested in such a literal through lists and maps
                        * only: it may mix types (cel-go's hasStringFormatAncestor) */
} checker;

static void cfail(checker *c, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cfail(checker *c, uint32_t pos, const char *fmt, ...) {
    if (c->failed) return;
    c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    cel__error_atv(c->e, c->src, c->n, pos, fmt, ap);
    va_end(ap);
}

static const cel_type *check(checker *c, cel_node *n);

static const cel_type *const_type(const cel_value *v) {
    switch (v->kind) {
    case CV_NULL: return &cel_t_null;
    case CV_BOOL: return &cel_t_bool;
    case CV_INT: return &cel_t_int;
    case CV_UINT: return &cel_t_uint;
    case CV_DOUBLE: return &cel_t_double;
    case CV_STRING: return &cel_t_string;
    case CV_BYTES: return &cel_t_bytes;
    default: return &cel_t_dyn;
    }
}

static const local *find_local(checker *c, const char *name) {
    for (int i = c->nscope - 1; i >= 0; i--)
        if (!strcmp(c->scope[i].name, name)) return &c->scope[i];
    return NULL;
}

static int push_local(checker *c, const char *name, const cel_type *t) {
    if (c->nscope >= MAX_SCOPE) {
        cfail(c, 0, "expression nesting too deep");
        return 0;
    }
    int slot = c->nslots++;
    c->scope[c->nscope].name = name;
    c->scope[c->nscope].type = t;
    c->scope[c->nscope].slot = slot;
    c->nscope++;
    return slot;
}

/* Index of a declared variable whose name is `name` resolved in the container. */
static int find_var(const cel_env *env, const char *name, bool absolute) {
    const char *cont = env->opts.container;
    char buf[512];
    if (!absolute && cont && *cont) {
        size_t cl = strlen(cont);
        for (;;) {
            snprintf(buf, sizeof buf, "%.*s.%s", (int)cl, cont, name);
            for (size_t i = 0; i < env->nvars; i++)
                if (!strcmp(env->vars[i].name, buf)) return (int)i;
            while (cl > 0 && cont[cl - 1] != '.') cl--;
            if (cl == 0) break;
            cl--;
        }
    }
    for (size_t i = 0; i < env->nvars; i++)
        if (!strcmp(env->vars[i].name, name)) return (int)i;
    return -1;
}

static const char *const type_idents[] = {"int", "uint", "double", "bool", "string", "bytes", "list",
                                          "map", "null_type", "type", "optional_type"};

static bool is_type_ident(const char *s) {
    for (size_t i = 0; i < ARRAY_SIZE(type_idents); i++)
        if (!strcmp(type_idents[i], s)) return true;
    return !strcmp(s, "google.protobuf.Timestamp") || !strcmp(s, "google.protobuf.Duration");
}

/* The static type of a type name used as a value: `int` is type(int), `type` is
 * type(type). */
static const cel_type *type_ident_type(checker *c, const char *name) {
    if (!strcmp(name, "type")) return cel__type_type(c->a, cel__type_type(c->a, &cel_t_dyn));
    if (!strcmp(name, "null_type")) return cel__type_type(c->a, &cel_t_null);
    if (!strcmp(name, "optional_type")) return cel__type_type(c->a, cel__type_optional(c->a, &cel_t_dyn));
    const cel_type *t = cel__type_parse(c->a, name);
    return cel__type_type(c->a, t ? t : &cel_t_dyn);
}

static const char *container_text(checker *c) { return c->env->opts.container ? c->env->opts.container : ""; }

/* "a.b.c" for an ident/select chain (no test-only or optional selects), else NULL. */
static char *chain_name(checker *c, cel_node *n) {
    cel_node *parts[64];
    int np = 0;
    cel_node *x = n;
    while (x->kind == N_SELECT && !x->test_only && !x->optional && np < 63) {
        parts[np++] = x;
        x = x->target;
    }
    if (x->kind != N_IDENT || np >= 63) return NULL;
    if (find_local(c, x->name)) return NULL;
    parts[np++] = x;
    size_t len = 0;
    for (int i = 0; i < np; i++) len += strlen(parts[i]->name) + 1;
    char *s = arena_alloc(c->a, len + 1);
    size_t o = 0;
    for (int i = np - 1; i >= 0; i--) {
        size_t l = strlen(parts[i]->name);
        memcpy(s + o, parts[i]->name, l);
        o += l;
        if (i) s[o++] = '.';
    }
    s[o] = '\0';
    return s;
}

static const cel_type *check_ident(checker *c, cel_node *n) {
    if (!n->absolute) {
        const local *l = find_local(c, n->name);
        if (l) {
            n->slot = l->slot;
            return l->type;
        }
    }
    int v = find_var(c->env, n->name, n->absolute);
    if (v >= 0) {
        n->slot = -1;
        n->accu_slot = v;   /* global variable index */
        n->resolved = c->env->vars[v].name;
        return c->env->vars[v].type;
    }
    if (is_type_ident(n->name)) {
        n->resolved = "@type";
        return type_ident_type(c, n->name);
    }
    if (c->check) {
        cfail(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->name, container_text(c));
        return &cel_t_error;
    }
    n->resolved = "@undeclared";
    return &cel_t_dyn;
}

static const cel_type *field_type(checker *c, cel_node *n, const cel_type *t) {
    if (cel__type_is_dyn(t)) return &cel_t_dyn;
    switch (t->kind) {
    case TY_DEVICE:
        if (!strcmp(n->name, "driver")) return &cel_t_string;
        if (!strcmp(n->name, "attributes"))
            return cel__type_map(c->a, &cel_t_string, cel__type_map(c->a, &cel_t_string, &cel_t_dyn));
        if (!strcmp(n->name, "capacity"))
            return cel__type_map(c->a, &cel_t_string, cel__type_map(c->a, &cel_t_string, &cel_t_quantity));
        if (!strcmp(n->name, "allowMultipleAllocations")) return &cel_t_bool;
        if (c->check) cfail(c, n->pos, "undefined field '%s'", n->name);
        return &cel_t_error;
    case TY_MAP:
        if (!c->check || cel__type_is_dyn(t->p0) || t->p0->kind == TY_STRING) return t->p1;
        /* a map with other keys has no fields, as any other type: */
        /* FALLTHROUGH */
    default:
        if (c->check) {
            char b[128];
            cel__type_str(t, b, sizeof b);
            cfail(c, n->pos, "type '%s' does not support field selection", b);
        }
        return &cel_t_error;
    }
}

static const cel_type *check_select(checker *c, cel_node *n) {
    /* qualified identifier `a.b.c` naming a declared variable */
    char *q = chain_name(c, n);
    if (q) {
        /* longest prefix that names a variable */
        int v = find_var(c->env, q, false);
        if (v >= 0) {
            n->kind = N_IDENT;
            n->name = q;
            n->target = NULL;
            n->slot = -1;
            n->accu_slot = v;
            n->resolved = c->env->vars[v].name;
            return c->env->vars[v].type;
        }
        if (is_type_ident(q)) {
            n->kind = N_IDENT;
            n->name = q;
            n->target = NULL;
            n->slot = -1;
            n->resolved = "@type";
            return type_ident_type(c, q);
        }
    }
    const cel_type *t = check(c, n->target);
    if (c->failed) return &cel_t_error;
    if (n->test_only) {
        field_type(c, n, t->kind == TY_OPTIONAL ? t->p0 : t);
        return &cel_t_bool;
    }
    if (t->kind == TY_OPTIONAL) {
        const cel_type *f = field_type(c, n, t->p0);
        return cel__type_optional(c->a, f);
    }
    const cel_type *f = field_type(c, n, t);
    if (n->optional) return cel__type_optional(c->a, f);
    return f;
}

static void type_list_str(checker *c, cel_node *n, const cel_type **ts, uint32_t k, char *buf, size_t len) {
    size_t o = 0;
    uint32_t i = 0;
    (void)c;
    buf[0] = '\0';
    if (n->target) {
        cel__type_str(ts[0], buf, len);
        o = strlen(buf);
        o += (size_t)snprintf(buf + o, len - o, ".");
        i = 1;
    }
    o += (size_t)snprintf(buf + o, len > o ? len - o : 0, "(");
    for (uint32_t j = i; j < k && o < len; j++) {
        char t[200];
        cel__type_str(ts[j], t, sizeof t);
        o += (size_t)snprintf(buf + o, len - o, "%s%s", j > i ? ", " : "", t);
    }
    if (o < len) snprintf(buf + o, len - o, ")");
}

/* Overload resolution for a call whose arguments (receiver first) have types ts. */
static const cel_type *resolve_call(checker *c, cel_node *n, const char *fname, bool receiver, const cel_type **ts,
                                    uint32_t k) {
    const cel_fn_decl *first;
    size_t cnt = cel__env_find_fns(c->env, fname, &first);
    if (!cnt) {
        if (c->check) {
            cfail(c, n->pos, "undeclared reference to '%s' (in container '%s')", fname, container_text(c));
            return &cel_t_error;
        }
        n->novs = 0;
        return &cel_t_dyn;
    }
    const cel_fn_decl **ovs = ARENA_NEWN(c->a, const cel_fn_decl *, cnt);
    uint32_t nov = 0;
    const cel_type *result = NULL;
    bool mixed = false;
    for (size_t i = 0; i < cnt; i++) {
        const cel_fn_decl *d = &first[i];
        if ((d->ov->style == CEL_RECEIVER) != receiver || d->ov->nargs != k) continue;
        cel_subst s = {0};
        bool ok = true;
        if (c->check)
            for (uint32_t j = 0; j < k && ok; j++) ok = cel__type_assignable(c->a, &s, d->args[j], ts[j]);
        if (!ok) continue;
        ovs[nov++] = d;
        const cel_type *r = cel__type_subst(c->a, &s, d->result);
        if (!result) result = r;
        else if (!cel__type_equal(result, r)) mixed = true;
    }
    if (!nov) {
        if (c->check) {
            char b[400];
            type_list_str(c, n, ts, k, b, sizeof b);
            cfail(c, n->pos, "found no matching overload for '%s' applied to '%s'", fname, b);
            return &cel_t_error;
        }
        n->novs = 0;
        return &cel_t_dyn;
    }
    n->ovs = (const struct cel_overload **)ovs;
    n->novs = nov;
    n->resolved = fname;
    if (mixed || !c->check) return &cel_t_dyn;
    return result;
}

static const cel_type *check_call(checker *c, cel_node *n) {
    const cel_type *ts[CEL_MAX_ARGS + 1];
    uint32_t k = 0;
    /* namespaced global function: ns.f(args) */
    if (n->target) {
        char *q = chain_name(c, n->target);
        if (q && find_var(c->env, q, false) < 0) {
            char *full = arena_printf(c->a, "%s.%s", q, n->name);
            const cel_fn_decl *first;
            if (cel__env_find_fns(c->env, full, &first)) {
                n->name = full;
                n->target = NULL;
            }
        }
    }
    uint32_t total = n->nargs + (n->target ? 1 : 0);
    if (total > CEL_MAX_ARGS) {
        for (uint32_t i = 0; i < n->nargs; i++) check(c, n->args[i]);
        if (c->check) {
            cfail(c, n->pos, "found no matching overload for '%s' (too many arguments)", n->name);
            return &cel_t_error;
        }
        n->novs = 0;
        return &cel_t_dyn;
    }
    bool mixed_ok = false;
    {
        const cel_fn_decl *first;
        size_t cnt = cel__env_find_fns(c->env, n->name, &first);
        for (size_t i = 0; i < cnt; i++) mixed_ok |= (first[i].ov->flags & CEL_FN_MIXED_LITERALS) != 0;
    }
    if (n->target) ts[k++] = check(c, n->target);
    for (uint32_t i = 0; i < n->nargs; i++) {
        c->lit_exempt = mixed_ok;
        ts[k++] = check(c, n->args[i]);
    }
    if (c->failed) return &cel_t_error;
    /* the conditional's branches must agree */
    return resolve_call(c, n, n->name, n->target != NULL, ts, k);
}

/* cel-go's IsEquivalentType on fully inferred types. Our checker has no free type
 * variables: an empty literal or optional.none() gets dyn parameters where cel-go
 * would have inferred them from the neighbours, so dyn *inside* a type matches
 * anything, while a top-level dyn (an explicit dyn()) only matches dyn. */
static bool equivalent(const cel_type *a, const cel_type *b, int depth) {
    if (depth > 0 && (cel__type_is_dyn(a) || cel__type_is_dyn(b))) return true;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case TY_LIST:
    case TY_OPTIONAL:
    case TY_TYPE: return equivalent(a->p0, b->p0, depth + 1);
    case TY_MAP: return equivalent(a->p0, b->p0, depth + 1) && equivalent(a->p1, b->p1, depth + 1);
    default: return cel__type_equal(a, b);
    }
}

static const cel_type *join_elem(checker *c, cel_node *at, const cel_type *prev, const cel_type *t, bool *mixed,
                                 bool exempt, int depth) {
    if (!prev) return t;
    if (cel__type_equal(prev, t)) return prev;
    if (equivalent(prev, t, depth) && !c->env->opts.heterogeneous) {
        if (cel__type_is_dyn(prev)) return t;
        if (cel__type_is_dyn(t)) return prev;
        /* keep the more specific of the two (list(int) over list(dyn)) */
        return t->kind == prev->kind && (t->kind == TY_LIST || t->kind == TY_MAP || t->kind == TY_OPTIONAL) &&
                       cel__type_is_dyn(prev->p0) ? t : prev;
    }
    /* Kubernetes (cel-go's homogeneous aggregate literal validator): element types must
     * be equivalent — dyn is not equivalent to int, so mixing needs dyn() on every element */
    if (c->check && !c->env->opts.heterogeneous && !exempt && prev->kind != TY_ERROR && t->kind != TY_ERROR) {
        char x[128], y[128];
        cel__type_str(prev, x, sizeof x);
        cel__type_str(t, y, sizeof y);
        cfail(c, at->pos, "expected type '%s' but found '%s'", x, y);
        *mixed = true;
        return &cel_t_dyn;
    }
    cel_subst s = {0};
    if (cel__type_is_dyn(prev)) return t;   /* dyn elements yield to the concrete type */
    if (cel__type_is_dyn(t)) return prev;
    if (cel__type_assignable(c->a, &s, prev, t) && cel__type_assignable(c->a, &s, t, prev)) return prev;
    *mixed = true;
    return &cel_t_dyn;
}

static const cel_type *unwrap_opt(checker *c, cel_node *e, const cel_type *t) {
    if (t->kind == TY_OPTIONAL) return t->p0;
    if (cel__type_is_dyn(t)) return &cel_t_dyn;
    if (c->check) {
        char b[128];
        cel__type_str(t, b, sizeof b);
        cfail(c, e->pos, "expected optional type, found '%s'", b);
    }
    return &cel_t_error;
}

static const cel_type *check_list(checker *c, cel_node *n) {
    const cel_type *elem = NULL;
    bool mixed = false, exempt = c->lit_exempt, prev_opt = false;
    for (uint32_t i = 0; i < n->nargs; i++) {
        c->lit_exempt = exempt;
        const cel_type *t = check(c, n->args[i]);
        bool opt = n->opt_mask && n->opt_mask[i];
        if (opt) t = unwrap_opt(c, n->args[i], t);
        if (c->failed) return &cel_t_error;
        /* a type unwrapped from optional(...) is a type parameter in cel-go */
        elem = join_elem(c, n->args[i], elem, t, &mixed, exempt, (opt || prev_opt) ? 1 : 0);
        prev_opt = opt && cel__type_is_dyn(t) ? true : (opt ? prev_opt : false);
        if (c->failed) return &cel_t_error;
    }
    return cel__type_list(c->a, mixed || !elem ? &cel_t_dyn : elem);
}

static const cel_type *check_map(checker *c, cel_node *n) {
    const cel_type *kt = NULL, *vt = NULL;
    bool mk = false, mv = false, exempt = c->lit_exempt, prev_opt = false;
    for (uint32_t i = 0; i + 1 < n->nargs; i += 2) {
        c->lit_exempt = exempt;
        const cel_type *k = check(c, n->args[i]);
        c->lit_exempt = exempt;
        const cel_type *v = check(c, n->args[i + 1]);
        if (n->opt_mask && n->opt_mask[i / 2]) v = unwrap_opt(c, n->args[i + 1], v);
        if (c->failed) return &cel_t_error;
        if (c->check && !cel__type_is_dyn(k) && k->kind != TY_INT && k->kind != TY_UINT && k->kind != TY_BOOL &&
            k->kind != TY_STRING) {
            char b[128];
            cel__type_str(k, b, sizeof b);
            cfail(c, n->args[i]->pos, "unsupported map key type: %s", b);
            return &cel_t_error;
        }
        bool opt = n->opt_mask && n->opt_mask[i / 2];
        kt = join_elem(c, n->args[i], kt, k, &mk, exempt, 0);
        vt = join_elem(c, n->args[i + 1], vt, v, &mv, exempt, (opt || prev_opt) ? 1 : 0);
        prev_opt = opt && cel__type_is_dyn(v) ? true : (opt ? prev_opt : false);
        if (c->failed) return &cel_t_error;
    }
    return cel__type_map(c->a, mk || !kt ? &cel_t_dyn : kt, mv || !vt ? &cel_t_dyn : vt);
}

static const cel_type *check_comp(checker *c, cel_node *n) {
    const cel_type *rt = check(c, n->range);
    if (c->failed) return &cel_t_error;
    const cel_type *it1 = &cel_t_dyn, *it2 = &cel_t_dyn;
    if (rt->kind == TY_LIST) {
        if (n->iter_var2) it1 = &cel_t_int, it2 = rt->p0;
        else it1 = rt->p0;
    } else if (rt->kind == TY_MAP) {
        it1 = rt->p0;
        it2 = rt->p1;
    } else if (!cel__type_is_dyn(rt) && c->check) {
        char b[128];
        cel__type_str(rt, b, sizeof b);
        cfail(c, n->range->pos, "expression of type '%s' cannot be the range of a comprehension (must be list, map, or dynamic)", b);
        return &cel_t_error;
    }
    const cel_type *at = check(c, n->accu_init);
    if (c->failed) return &cel_t_error;
    int mark = c->nscope;
    n->accu_slot = push_local(c, n->accu_var, at);
    n->slot = push_local(c, n->iter_var, it1);
    if (n->iter_var2) n->slot2 = push_local(c, n->iter_var2, it2);
    check(c, n->cond);
    const cel_type *st = check(c, n->step);
    if (c->failed) return &cel_t_error;
    /* the step refines an empty-literal accumulator (list(dyn) → list(int)) */
    if (st && !cel__type_is_dyn(st) && st->kind == at->kind && (at->kind == TY_LIST || at->kind == TY_MAP)) at = st;
    c->nscope = mark;
    push_local(c, n->accu_var, at);
    c->scope[c->nscope - 1].slot = n->accu_slot;
    c->nslots--;
    const cel_type *r = check(c, n->result);
    c->nscope = mark;
    return r;
}

static const cel_type *check(checker *c, cel_node *n) {
    if (c->failed) return &cel_t_error;
    bool lit_exempt = c->lit_exempt;
    c->lit_exempt = false;
    /* the second use of a shared node: the same scope, so the same answer (its
     * errors were reported by the first, which stopped the check) */
    if (n->shared && n->type) return n->type;
    const cel_type *t;
    switch ((cel_node_kind)n->kind) {
    case N_CONST: t = const_type(&n->val); break;
    case N_IDENT: t = check_ident(c, n); break;
    case N_SELECT: t = check_select(c, n); break;
    case N_INDEX: {
        const cel_type *ts[2];
        ts[0] = check(c, n->target);
        ts[1] = check(c, n->args[0]);
        if (c->failed) return &cel_t_error;
        /* resolve as the index operator; targets are not "receivers" here */
        cel_node tmp = *n;
        tmp.target = NULL;
        t = resolve_call(c, &tmp, n->optional ? "_[?_]" : "_[_]", false, ts, 2);
        n->ovs = tmp.ovs;
        n->novs = tmp.novs;
        break;
    }
    case N_CALL: t = check_call(c, n); break;
    case N_LIST: c->lit_exempt = lit_exempt; t = check_list(c, n); break;
    case N_MAP: c->lit_exempt = lit_exempt; t = check_map(c, n); break;
    case N_STRUCT:
        for (uint32_t i = 0; i < n->nargs; i++) check(c, n->args[i]);
        if (c->check) cfail(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->name, container_text(c));
        t = &cel_t_dyn;
        break;
    case N_COMPREHENSION: t = check_comp(c, n); break;
    case N_BIND: {
        const cel_type *it = check(c, n->args[0]);
        int mark = c->nscope;
        n->slot = push_local(c, n->iter_var, it);
        t = check(c, n->args[1]);
        c->nscope = mark;
        break;
    }
    default: t = &cel_t_dyn;
    }
    n->type = t;
    return t;
}

bool cel__check(const cel_env *env, cel_node *root, const char *src, size_t n, arena *a, cel_check_result *out, err *e) {
    checker c = {0};
    c.env = env;
    c.a = a;
    c.e = e;
    c.src = src;
    c.n = n;
    c.check = !env->opts.no_check;
    const cel_type *t = check(&c, root);
    if (c.failed) return false;
    if (env->opts.dra && !env->opts.any_result && c.check && t->kind != TY_BOOL && !cel__type_is_dyn(t)) {
        char b[128];
        cel__type_str(t, b, sizeof b);
        if (e) {
            snprintf(e->msg, sizeof e->msg, "must evaluate to bool or the unknown type, not %s", b);
            e->set = true;
        }
        return false;
    }
    out->type = t;
    out->nslots = c.nslots;
    return true;
}
