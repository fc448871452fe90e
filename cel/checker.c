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
 * Typing is cel-go's checker (checker/checker.go, checker/types.go): gradual typing
 * where `dyn` is compatible with everything, and type inference with free type
 * variables: each overload attempt instantiates its type parameters as fresh
 * variables, an empty literal gets variables for its element types, and a
 * substitution (with an undo log standing for cel-go's copied mapping) binds them
 * as assignability is checked; every node's type is substituted at the end
 * (unbound variables become dyn). The checker does not stop at an error: the node
 * gets the error type (compatible with everything) and checking goes on, so every
 * error cel-go reports is reported, sorted by position as cel-go's Errors prints
 * them. Then, on a tree without errors, the validators Kubernetes' environment
 * installs: homogeneous aggregate literals (cel/validator.go: element types of a
 * literal must be equivalent after inference) and the literal arguments of
 * duration(), timestamp() and matches(). For the DRA environment the result must be
 * bool or dyn. With opts.no_check every call keeps all overloads of its name and
 * arity as runtime candidates and type errors become runtime errors (cel-spec's
 * "disableCheck" tests). */
#include "cel/env_internal.h"
#include "cel/functions.h"
#include "cel/regex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCOPE 256
#define MAX_REPORTED_ERRORS 100   /* cel-go common/errors.go maxErrorsToReport */

typedef struct local {
    const char *name;
    const cel_type *type;
    int slot;
} local;

typedef struct cerror {
    uint32_t pos;
    char *msg;
} cerror;

typedef struct undo_rec {
    uint32_t var;
    const cel_type *old;
} undo_rec;

typedef struct checker {
    const cel_env *env;
    arena *a;
    strbuf *d;               /* the error text */
    const char *src;
    size_t n;
    bool check;
    bool fatal;              /* nesting too deep: stop */
    local scope[MAX_SCOPE];
    int nscope;
    int nslots;
    /* type inference: sub[i] is what the free type variable _var<i> stands for */
    const cel_type **sub;
    uint32_t nvars, capvars;
    undo_rec *undo;          /* bindings made since the tentative check began */
    uint32_t nundo, capundo;
    /* errors, in the order found (sorted when printed) */
    cerror *errs;
    uint32_t nerrs, caperrs;
    /* every node checked, for the final substitution and the validators */
    cel_node **nodes;
    uint32_t nnodes, capnodes;
    /* shared nodes a validator walk has entered: walked once, as the checker checks
     * them once (a chain of optMaps would otherwise be exponential) */
    const cel_node **seen;
    uint32_t nseen, capseen;
} checker;


#define GROW(c, arr, cnt, cap)                                                        \
    do {                                                                              \
        if ((c)->cnt == (c)->cap) {                                                   \
            uint32_t nc_ = (c)->cap ? (c)->cap * 2 : 16;                              \
            void *np_ = arena_alloc((c)->a, nc_ * sizeof *(c)->arr);                  \
            if ((c)->cnt) memcpy(np_, (c)->arr, (c)->cnt * sizeof *(c)->arr);         \
            (c)->arr = np_;                                                           \
            (c)->cap = nc_;                                                           \
        }                                                                             \
    } while (0)

static bool seen_before(checker *c, const cel_node *n) {
    if (!n->shared) return false;
    for (uint32_t i = 0; i < c->nseen; i++)
        if (c->seen[i] == n) return true;
    GROW(c, seen, nseen, capseen);
    c->seen[c->nseen++] = n;
    return false;
}

static void report(checker *c, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(checker *c, uint32_t pos, const char *fmt, ...) {
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int len = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *msg = arena_alloc(c->a, (size_t)(len < 0 ? 0 : len) + 1);
    vsnprintf(msg, (size_t)(len < 0 ? 0 : len) + 1, fmt, ap);
    va_end(ap);
    GROW(c, errs, nerrs, caperrs);
    c->errs[c->nerrs].pos = pos;
    c->errs[c->nerrs].msg = msg;
    c->nerrs++;
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

/* ---- type inference (cel-go checker/types.go) ------------------------------------ */

static bool is_dyn(const cel_type *t) { return t->kind == TY_DYN; }
static bool is_error(const cel_type *t) { return t->kind == TY_ERROR; }
static bool is_dyn_or_error(const cel_type *t) { return is_dyn(t) || is_error(t); }
/* a free type variable of this check (signature parameters are instantiated as these) */
static bool is_var(const cel_type *t) { return t->kind == TY_PARAM && t->name[0] == '_'; }
static uint32_t var_id(const cel_type *t) { return (uint32_t)strtoul(t->name + 4, NULL, 10); }

static const cel_type *new_var(checker *c) {
    GROW(c, sub, nvars, capvars);
    uint32_t id = c->nvars++;
    c->sub[id] = NULL;
    cel_type *t = ARENA_NEW(c->a, cel_type);
    t->kind = TY_PARAM;
    t->name = arena_printf(c->a, "_var%u", id);
    return t;
}

static const cel_type *m_find(checker *c, const cel_type *t) {
    if (!is_var(t)) return NULL;
    uint32_t id = var_id(t);
    return id < c->nvars ? c->sub[id] : NULL;
}

static void m_add(checker *c, const cel_type *var, const cel_type *to) {
    if (!is_var(var)) return;
    uint32_t id = var_id(var);
    if (id >= c->nvars) return;
    GROW(c, undo, nundo, capundo);
    c->undo[c->nundo].var = id;
    c->undo[c->nundo].old = c->sub[id];
    c->nundo++;
    c->sub[id] = to;
}

static void m_rollback(checker *c, uint32_t mark) {
    while (c->nundo > mark) {
        c->nundo--;
        c->sub[c->undo[c->nundo].var] = c->undo[c->nundo].old;
    }
}

static bool exact(const cel_type *a, const cel_type *b) { return cel__type_equal(a, b); }

static bool less_specific(const cel_type *t1, const cel_type *t2) {
    if (is_dyn(t1) || t1->kind == TY_PARAM) return true;
    if (is_dyn(t2) || t2->kind == TY_PARAM) return false;
    if (t1->kind != t2->kind) return false;
    switch ((cel_tkind)t1->kind) {
    case TY_OPAQUE:
        if (strcmp(t1->name, t2->name) || !t1->p0 != !t2->p0) return false;
        return !t1->p0 || less_specific(t1->p0, t2->p0);
    case TY_OPTIONAL:
    case TY_LIST: return less_specific(t1->p0, t2->p0);
    case TY_MAP: return less_specific(t1->p0, t2->p0) && less_specific(t1->p1, t2->p1);
    case TY_TYPE: return true;
    default: return exact(t1, t2);
    }
}

static const cel_type *most_general(const cel_type *t1, const cel_type *t2) { return less_specific(t1, t2) ? t1 : t2; }

static bool not_referenced_in(checker *c, const cel_type *t, const cel_type *within) {
    if (exact(t, within)) return false;
    switch ((cel_tkind)within->kind) {
    case TY_PARAM: {
        const cel_type *s = m_find(c, within);
        return !s || not_referenced_in(c, t, s);
    }
    case TY_MAP: return not_referenced_in(c, t, within->p0) && not_referenced_in(c, t, within->p1);
    case TY_LIST:
    case TY_OPTIONAL:
    case TY_TYPE: return !within->p0 || not_referenced_in(c, t, within->p0);
    case TY_OPAQUE: return !within->p0 || not_referenced_in(c, t, within->p0);
    default: return true;
    }
}

static bool assignable_in(checker *c, const cel_type *t1, const cel_type *t2);

static bool valid_substitution(checker *c, const cel_type *t1, const cel_type *t2, bool *has_sub) {
    *has_sub = false;
    if (t1->kind == t2->kind && exact(t1, t2)) {
        *has_sub = true;
        return true;
    }
    const cel_type *s = m_find(c, t2);
    if (s) {
        *has_sub = true;
        if (t1->kind == s->kind && exact(t1, s)) return true;
        if (assignable_in(c, t1, s)) {
            const cel_type *nw = most_general(t1, s);
            if (not_referenced_in(c, t2, nw)) m_add(c, t2, nw);
            return true;
        }
        return false;
    }
    if (not_referenced_in(c, t2, t1)) {
        m_add(c, t2, t1);
        return true;
    }
    return false;
}

/* isLegacyNullable and null itself: what null may be assigned to */
static bool nullable(const cel_type *t) {
    return t->kind == TY_NULL || t->kind == TY_OPAQUE || t->kind == TY_OPTIONAL || t->kind == TY_DEVICE;
}

static bool assignable_in(checker *c, const cel_type *t1, const cel_type *t2) {
    if (t2->kind == TY_PARAM) {
        bool has;
        if (valid_substitution(c, t1, t2, &has)) return true;
        if (has) return false;
    }
    if (t1->kind == TY_PARAM) {
        bool has;
        return valid_substitution(c, t2, t1, &has);
    }
    if (is_dyn_or_error(t1) || is_dyn_or_error(t2)) return true;
    if (t1->kind == TY_NULL) return nullable(t2);
    if (t2->kind == TY_NULL) return nullable(t1);
    if (t1->kind != t2->kind) return false;
    switch ((cel_tkind)t1->kind) {
    case TY_TYPE: return true;
    case TY_LIST:
    case TY_OPTIONAL: return assignable_in(c, t1->p0, t2->p0);
    case TY_MAP: return assignable_in(c, t1->p0, t2->p0) && assignable_in(c, t1->p1, t2->p1);
    case TY_OPAQUE:
        if (strcmp(t1->name, t2->name) || !t1->p0 != !t2->p0) return false;
        return !t1->p0 || assignable_in(c, t1->p0, t2->p0);
    default: return true;   /* primitives and the device: same kind */
    }
}

/* cel-go's isAssignable: bindings kept only when the whole check succeeds */
static bool assignable(checker *c, const cel_type *t1, const cel_type *t2) {
    uint32_t mark = c->nundo;
    if (assignable_in(c, t1, t2)) return true;
    m_rollback(c, mark);
    return false;
}

static const cel_type *substitute(checker *c, const cel_type *t, bool to_dyn) {
    const cel_type *s = m_find(c, t);
    if (s) return substitute(c, s, to_dyn);
    switch ((cel_tkind)t->kind) {
    case TY_PARAM: return to_dyn ? &cel_t_dyn : t;
    case TY_LIST: {
        const cel_type *e = substitute(c, t->p0, to_dyn);
        return e == t->p0 ? t : cel__type_list(c->a, e);
    }
    case TY_OPTIONAL: {
        const cel_type *e = substitute(c, t->p0, to_dyn);
        return e == t->p0 ? t : cel__type_optional(c->a, e);
    }
    case TY_TYPE: {
        if (!t->p0) return t;
        const cel_type *e = substitute(c, t->p0, to_dyn);
        return e == t->p0 ? t : cel__type_type(c->a, e);
    }
    case TY_MAP: {
        const cel_type *k = substitute(c, t->p0, to_dyn), *v = substitute(c, t->p1, to_dyn);
        return k == t->p0 && v == t->p1 ? t : cel__type_map(c->a, k, v);
    }
    case TY_OPAQUE: {
        if (!t->p0) return t;
        const cel_type *e = substitute(c, t->p0, to_dyn);
        if (e == t->p0) return t;
        cel_type *o = ARENA_NEW(c->a, cel_type);
        *o = *t;
        o->p0 = e;
        return o;
    }
    default: return t;
    }
}

/* A signature type with its parameters (A, B, ...) replaced by fresh variables,
 * the same variable for the same name within one overload. */
typedef struct inst_map {
    const char *names[8];
    const cel_type *vars[8];
    int n;
} inst_map;

static const cel_type *instantiate(checker *c, inst_map *im, const cel_type *t) {
    if (!t) return &cel_t_dyn;
    switch ((cel_tkind)t->kind) {
    case TY_PARAM:
        for (int i = 0; i < im->n; i++)
            if (!strcmp(im->names[i], t->name)) return im->vars[i];
        if (im->n >= 8) return &cel_t_dyn;
        im->names[im->n] = t->name;
        im->vars[im->n] = new_var(c);
        return im->vars[im->n++];
    case TY_LIST: return cel__type_list(c->a, instantiate(c, im, t->p0));
    case TY_OPTIONAL: return cel__type_optional(c->a, instantiate(c, im, t->p0));
    case TY_TYPE: return t->p0 ? cel__type_type(c->a, instantiate(c, im, t->p0)) : t;
    case TY_MAP: return cel__type_map(c->a, instantiate(c, im, t->p0), instantiate(c, im, t->p1));
    case TY_OPAQUE: {
        if (!t->p0) return t;
        cel_type *o = ARENA_NEW(c->a, cel_type);
        *o = *t;
        o->p0 = instantiate(c, im, t->p0);
        return o;
    }
    default: return t;
    }
}

static bool mentions_param(const cel_type *t) {
    if (!t) return false;
    if (t->kind == TY_PARAM) return true;
    return (t->p0 && mentions_param(t->p0)) || (t->kind == TY_MAP && t->p1 && mentions_param(t->p1));
}

static void type_text(const cel_type *t, char *b, size_t n) { cel__type_str(t, b, n); }

/* ---- names ----------------------------------------------------------------------- */

static const local *find_local(checker *c, const char *name) {
    for (int i = c->nscope - 1; i >= 0; i--)
        if (!strcmp(c->scope[i].name, name)) return &c->scope[i];
    return NULL;
}

static int push_local(checker *c, const char *name, const cel_type *t) {
    if (c->nscope >= MAX_SCOPE) {
        if (!c->fatal) report(c, 0, "expression nesting too deep");
        c->fatal = true;
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

/* "a.b.c" for an ident/select chain (no test-only or optional selects), else NULL;
 * with locals_ok false, NULL also when the chain starts at a local variable. */
static char *chain_name(checker *c, cel_node *n, bool locals_ok) {
    cel_node *parts[64];
    int np = 0;
    cel_node *x = n;
    while (x->kind == N_SELECT && !x->test_only && !x->optional && np < 63) {
        parts[np++] = x;
        x = x->target;
    }
    if (x->kind != N_IDENT || np >= 63) return NULL;
    if (!locals_ok && find_local(c, x->name)) return NULL;
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
        report(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->name, container_text(c));
        return &cel_t_error;
    }
    n->resolved = "@undeclared";
    return &cel_t_dyn;
}

/* The opaque types Kubernetes' CEL libraries declare with cel.ObjectType. */
static bool is_k8s_object(const cel_type *t) {
    static const char *const names[] = {"kubernetes.Quantity", "kubernetes.Semver", "kubernetes.URL",
                                        "kubernetes.NamedFormat"};
    for (size_t i = 0; i < ARRAY_SIZE(names); i++)
        if (t->name && !strcmp(t->name, names[i])) return true;
    return false;
}

/* checkSelectField: the type of `operand.field` (operand already checked). */
static const cel_type *select_field(checker *c, cel_node *n, const cel_type *operand, bool optional) {
    const cel_type *t = substitute(c, operand, false);
    bool is_opt = t->kind == TY_OPTIONAL;
    if (is_opt) t = t->p0;
    const cel_type *r = &cel_t_error;
    switch ((cel_tkind)t->kind) {
    case TY_MAP: r = t->p1; break;
    case TY_DEVICE:
        if (!strcmp(n->name, "driver")) r = &cel_t_string;
        else if (!strcmp(n->name, "attributes"))
            r = cel__type_map(c->a, &cel_t_string, cel__type_map(c->a, &cel_t_string, &cel_t_dyn));
        else if (!strcmp(n->name, "capacity"))
            r = cel__type_map(c->a, &cel_t_string, cel__type_map(c->a, &cel_t_string, &cel_t_quantity));
        else if (!strcmp(n->name, "allowMultipleAllocations")) r = &cel_t_bool;
        else if (c->check) report(c, n->pos, "undefined field '%s'", n->name);
        else r = &cel_t_dyn;
        break;
    case TY_OPAQUE:
        /* Kubernetes declares these as object types (cel.ObjectType), which no type
         * provider resolves: cel-go's lookupFieldType reports the failed resolution
         * (net.IP and net.CIDR are opaque types: the default's error) */
        if (c->check && is_k8s_object(t)) {
            report(c, n->pos, "unexpected failed resolution of '%s'", t->name);
            break;
        }
        goto unsupported;
    case TY_PARAM:
        assignable(c, &cel_t_dyn, t);
        r = &cel_t_dyn;
        break;
    default:
    unsupported:
        if (!is_dyn_or_error(t) && c->check) {
            char b[128];
            type_text(t, b, sizeof b);
            report(c, n->pos, "type '%s' does not support field selection", b);
        }
        r = &cel_t_dyn;
    }
    if (is_opt || optional) return cel__type_optional(c->a, r);
    return r;
}

static const cel_type *check_select(checker *c, cel_node *n) {
    /* qualified identifier `a.b.c` naming a declared variable */
    char *q = chain_name(c, n, false);
    if (q) {
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
    const cel_type *r = select_field(c, n, t, n->optional);
    if (n->test_only) return &cel_t_bool;
    return substitute(c, r, false);
}

static void type_list_str(const cel_type **ts, uint32_t k, bool receiver, char *buf, size_t len) {
    size_t o = 0;
    uint32_t i = 0;
    buf[0] = '\0';
    if (receiver && k) {
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

/* resolveOverload: the overloads of fname whose (instantiated) signature the
 * argument types (receiver first) are assignable to, in declaration order; the
 * result is the first one's, or dyn when they differ. `argn[i]` is the node of
 * ts[i] (for && and ||'s messages). */
static const cel_type *resolve_call(checker *c, cel_node *n, const char *fname, bool receiver, const cel_type **ts,
                                    cel_node **argn, uint32_t k) {
    const cel_fn_decl *first;
    size_t cnt = cel__env_find_fns(c->env, fname, &first);
    if (!cnt) {
        if (c->check) {
            report(c, n->pos, "undeclared reference to '%s' (in container '%s')", fname, container_text(c));
            return &cel_t_error;
        }
        n->novs = 0;
        return &cel_t_dyn;
    }
    const cel_fn_decl **ovs = ARENA_NEWN(c->a, const cel_fn_decl *, cnt);
    uint32_t nov = 0;
    if (c->check && !receiver && (!strcmp(fname, "_&&_") || !strcmp(fname, "_||_"))) {
        bool bad = false;
        for (uint32_t j = 0; j < k; j++)
            if (!assignable(c, ts[j], &cel_t_bool)) {
                char b[128];
                type_text(ts[j], b, sizeof b);
                report(c, argn[j]->pos, "expected type 'bool' but found '%s'", b);
                bad = true;
            }
        for (size_t i = 0; i < cnt; i++)
            if (first[i].ov->style != CEL_RECEIVER && first[i].ov->nargs == k) ovs[nov++] = &first[i];
        n->ovs = (const struct cel_overload **)ovs;
        n->novs = nov;
        n->resolved = fname;
        return bad ? &cel_t_error : &cel_t_bool;
    }
    const cel_type *result = NULL;
    for (size_t i = 0; i < cnt; i++) {
        const cel_fn_decl *d = &first[i];
        if ((d->ov->style == CEL_RECEIVER) != receiver || d->ov->nargs != k) continue;
        if (!c->check) {
            ovs[nov++] = d;
            continue;
        }
        inst_map im = {0};
        const cel_type *params[CEL_MAX_ARGS + 1];
        bool generic = false;
        for (uint32_t j = 0; j < k; j++) generic |= mentions_param(d->args[j]);
        generic |= mentions_param(d->result);
        for (uint32_t j = 0; j < k; j++) params[j] = generic ? instantiate(c, &im, d->args[j]) : d->args[j];
        const cel_type *res = generic ? instantiate(c, &im, d->result) : d->result;
        uint32_t mark = c->nundo;
        bool ok = true;
        for (uint32_t j = 0; j < k && ok; j++) ok = assignable_in(c, ts[j], params[j]);
        if (!ok) {
            m_rollback(c, mark);
            continue;
        }
        ovs[nov++] = d;
        const cel_type *r = substitute(c, res, false);
        if (!result) result = r;
        else if (!is_dyn(result) && !exact(r, result)) result = &cel_t_dyn;
    }
    if (!nov) {
        if (c->check) {
            const cel_type *st[CEL_MAX_ARGS + 1];
            for (uint32_t j = 0; j < k; j++) st[j] = substitute(c, ts[j], true);
            char b[400];
            type_list_str(st, k, receiver, b, sizeof b);
            report(c, n->pos, "found no matching overload for '%s' applied to '%s'", fname, b);
            return &cel_t_error;
        }
        n->novs = 0;
        return &cel_t_dyn;
    }
    n->ovs = (const struct cel_overload **)ovs;
    n->novs = nov;
    n->resolved = fname;
    if (!c->check) return &cel_t_dyn;
    return result;
}

static const cel_type *check_call(checker *c, cel_node *n) {
    const cel_type *ts[CEL_MAX_ARGS + 1];
    cel_node *argn[CEL_MAX_ARGS + 1];
    uint32_t k = 0;
    /* namespaced global function: ns.f(args) */
    if (n->target) {
        char *q = chain_name(c, n->target, false);
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
        if (n->target) check(c, n->target);
        if (c->check) {
            report(c, n->pos, "found no matching overload for '%s' (too many arguments)", n->name);
            return &cel_t_error;
        }
        n->novs = 0;
        return &cel_t_dyn;
    }
    /* cel-go checks the arguments, then the receiver */
    const cel_type *at[CEL_MAX_ARGS + 1];
    for (uint32_t i = 0; i < n->nargs; i++) at[i] = check(c, n->args[i]);
    if (n->target) {
        argn[k] = n->target;
        ts[k++] = check(c, n->target);
        const cel_fn_decl *first;
        if (c->check && !cel__env_find_fns(c->env, n->name, &first)) {
            report(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->name, container_text(c));
            return &cel_t_error;
        }
    }
    for (uint32_t i = 0; i < n->nargs; i++) {
        argn[k] = n->args[i];
        ts[k++] = at[i];
    }
    return resolve_call(c, n, n->name, n->target != NULL, ts, argn, k);
}

/* joinTypes with dyn aggregate elements (the homogeneous rule is a validator in
 * cel-go, run on the inferred types afterwards). */
static const cel_type *join_types(checker *c, const cel_type *prev, const cel_type *cur) {
    if (!prev) return cur;
    if (assignable(c, prev, cur)) return most_general(prev, cur);
    return &cel_t_dyn;
}

static const cel_type *unwrap_opt_elem(checker *c, cel_node *e, const cel_type *t) {
    if (t->kind == TY_OPTIONAL) return t->p0;
    if (!is_dyn(t) && c->check) {
        char b[128], o[160];
        type_text(t, b, sizeof b);
        snprintf(o, sizeof o, "optional_type(%s)", b);
        report(c, e->pos, "expected type '%s' but found '%s'", o, b);
    }
    return t;
}

static const cel_type *check_list(checker *c, cel_node *n) {
    const cel_type *elem = NULL;
    for (uint32_t i = 0; i < n->nargs; i++) {
        const cel_type *t = check(c, n->args[i]);
        if (n->opt_mask && n->opt_mask[i]) t = unwrap_opt_elem(c, n->args[i], t);
        elem = join_types(c, elem, t);
    }
    if (!elem) elem = c->check ? new_var(c) : &cel_t_dyn;
    return cel__type_list(c->a, elem);
}

static const cel_type *check_map(checker *c, cel_node *n) {
    const cel_type *kt = NULL, *vt = NULL;
    for (uint32_t i = 0; i + 1 < n->nargs; i += 2) {
        const cel_type *k = check(c, n->args[i]);
        kt = join_types(c, kt, k);
        const cel_type *v = check(c, n->args[i + 1]);
        if (n->opt_mask && n->opt_mask[i / 2]) v = unwrap_opt_elem(c, n->args[i + 1], v);
        vt = join_types(c, vt, v);
    }
    if (!kt) {
        kt = c->check ? new_var(c) : &cel_t_dyn;
        vt = c->check ? new_var(c) : &cel_t_dyn;
    }
    return cel__type_map(c->a, kt, vt);
}

static void assert_type(checker *c, cel_node *e, const cel_type *want) {
    if (!c->check || !e->type) return;
    if (!assignable(c, want, e->type)) {
        char x[128], y[128];
        type_text(want, x, sizeof x);
        type_text(e->type, y, sizeof y);
        report(c, e->pos, "expected type '%s' but found '%s'", x, y);
    }
}

static const cel_type *check_comp(checker *c, cel_node *n) {
    check(c, n->range);
    const cel_type *at = check(c, n->accu_init);
    const cel_type *rt = substitute(c, n->range->type ? n->range->type : &cel_t_dyn, false);
    int mark = c->nscope;
    n->accu_slot = push_local(c, n->accu_var, at);
    const cel_type *it1 = &cel_t_dyn, *it2 = &cel_t_dyn;
    switch ((cel_tkind)rt->kind) {
    case TY_LIST:
        it1 = rt->p0;
        if (n->iter_var2) it2 = it1, it1 = &cel_t_int;
        break;
    case TY_MAP:
        it1 = rt->p0;
        it2 = rt->p1;
        break;
    case TY_DYN:
    case TY_ERROR:
    case TY_PARAM:
        assignable(c, &cel_t_dyn, rt);
        break;
    default:
        if (c->check) {
            char b[128];
            type_text(rt, b, sizeof b);
            report(c, n->range->pos,
                   "expression of type '%s' cannot be the range of a comprehension (must be list, map, or dynamic)", b);
            it1 = it2 = &cel_t_error;
        }
    }
    int inner = c->nscope;
    n->slot = push_local(c, n->iter_var, it1);
    if (n->iter_var2) n->slot2 = push_local(c, n->iter_var2, it2);
    check(c, n->cond);
    assert_type(c, n->cond, &cel_t_bool);
    check(c, n->step);
    assert_type(c, n->step, at);
    c->nscope = inner;
    const cel_type *r = check(c, n->result);
    c->nscope = mark;
    return substitute(c, r, false);
}

static const cel_type *check(checker *c, cel_node *n) {
    if (c->fatal) return &cel_t_error;
    /* the second use of a shared node: the same scope, so the same answer */
    if (n->shared && n->type) return n->type;
    const cel_type *t;
    switch ((cel_node_kind)n->kind) {
    case N_CONST: t = const_type(&n->val); break;
    case N_IDENT: t = check_ident(c, n); break;
    case N_SELECT: t = check_select(c, n); break;
    case N_INDEX: {
        const cel_type *ts[2];
        cel_node *argn[2] = {n->target, n->args[0]};
        ts[0] = check(c, n->target);
        ts[1] = check(c, n->args[0]);
        /* resolve as the index operator; targets are not "receivers" here */
        cel_node tmp = *n;
        tmp.target = NULL;
        t = resolve_call(c, &tmp, n->optional ? "_[?_]" : "_[_]", false, ts, argn, 2);
        n->ovs = tmp.ovs;
        n->novs = tmp.novs;
        n->resolved = tmp.resolved;
        break;
    }
    case N_CALL: t = check_call(c, n); break;
    case N_LIST: t = check_list(c, n); break;
    case N_MAP: t = check_map(c, n); break;
    case N_STRUCT:
        for (uint32_t i = 0; i < n->nargs; i++) check(c, n->args[i]);
        if (c->check) report(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->name, container_text(c));
        t = c->check ? &cel_t_error : &cel_t_dyn;
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
    if (!t) t = &cel_t_dyn;
    n->type = t;
    GROW(c, nodes, nnodes, capnodes);
    c->nodes[c->nnodes++] = n;
    return t;
}

/* ---- validators (cel-go cel/validator.go, as Kubernetes' base environment installs them) */

/* The node's function name as cel-go's AST has it after checking. */
static bool call_named(const cel_node *n, const char *name) {
    return n->kind == N_CALL && n->name && !strcmp(n->name, name);
}

static bool exempt_call(const cel_env *env, const cel_node *n) {
    if (n->kind != N_CALL || !n->name) return false;
    const cel_fn_decl *first;
    size_t cnt = cel__env_find_fns(env, n->name, &first);
    for (size_t i = 0; i < cnt; i++)
        if (first[i].ov->flags & CEL_FN_MIXED_LITERALS) return true;
    return false;
}

static const cel_type *lit_elem_type(const cel_node *e, bool opt) {
    const cel_type *t = e->type ? e->type : &cel_t_dyn;
    if (opt && t->kind == TY_OPTIONAL) return t->p0;
    return t;
}

/* homogeneousAggregateLiteralValidator: in every list literal the first element
 * whose type is not equivalent to the first element's; in every map literal each
 * key and value not equivalent to the first entry's. Literals anywhere below a
 * string format call are exempt. */
static void validate_homogeneous(checker *c, cel_node *n, int exempt) {
    if (!n || seen_before(c, n)) return;
    if (exempt_call(c->env, n)) exempt++;
    if (!exempt && n->kind == N_LIST) {
        const cel_type *first = NULL;
        for (uint32_t i = 0; i < n->nargs; i++) {
            const cel_type *et = lit_elem_type(n->args[i], n->opt_mask && n->opt_mask[i]);
            if (!first) {
                first = et;
                continue;
            }
            if (!exact(first, et)) {
                char x[128], y[128];
                type_text(first, x, sizeof x);
                type_text(et, y, sizeof y);
                report(c, n->args[i]->pos, "expected type '%s' but found '%s'", x, y);
                break;
            }
        }
    }
    if (!exempt && n->kind == N_MAP) {
        const cel_type *kt = NULL, *vt = NULL;
        for (uint32_t i = 0; i + 1 < n->nargs; i += 2) {
            const cel_type *k = lit_elem_type(n->args[i], false);
            const cel_type *v = lit_elem_type(n->args[i + 1], n->opt_mask && n->opt_mask[i / 2]);
            if (!kt) {
                kt = k, vt = v;
                continue;
            }
            char x[128], y[128];
            if (!exact(kt, k)) {
                type_text(kt, x, sizeof x);
                type_text(k, y, sizeof y);
                report(c, n->args[i]->pos, "expected type '%s' but found '%s'", x, y);
            }
            if (!exact(vt, v)) {
                type_text(vt, x, sizeof x);
                type_text(v, y, sizeof y);
                report(c, n->args[i + 1]->pos, "expected type '%s' but found '%s'", x, y);
            }
        }
    }
    validate_homogeneous(c, n->target, exempt);
    for (uint32_t i = 0; i < n->nargs && n->args; i++) validate_homogeneous(c, n->args[i], exempt);
    if (n->kind == N_COMPREHENSION) {
        validate_homogeneous(c, n->range, exempt);
        validate_homogeneous(c, n->accu_init, exempt);
        validate_homogeneous(c, n->cond, exempt);
        validate_homogeneous(c, n->step, exempt);
        validate_homogeneous(c, n->result, exempt);
    }
}

/* formatValidator: a call of `fname` whose first argument (the receiver is not an
 * argument) is a literal that the function rejects. */
static bool literal_ok(checker *c, const cel_node *call, const cel_node *lit, bool regex) {
    if (regex) {
        /* compileRegex: the literal must be a pattern RE2 accepts */
        if (lit->val.kind != CV_STRING) return true;
        char msg[256];
        cel_regex *re = cel__regex_compile(lit->val.u.s, lit->val.len, msg, sizeof msg);
        if (!re) return false;
        cel__regex_free(re);
        return true;
    }
    /* evalCall: the call itself, evaluated with its literal */
    if (call->target || call->nargs != 1) return true;
    const cel_fn_decl *const *ovs = (const cel_fn_decl *const *)call->ovs;
    for (uint32_t i = 0; i < call->novs; i++) {
        const cel_fn_decl *d = ovs[i];
        if (d->kinds[0] >= 0 && d->kinds[0] != lit->val.kind) continue;
        arena a;
        arena_init(&a, 1024);
        uint64_t cost = 0;
        cel_call cc = {.arena = &a, .names = c->env->names, .cost = &cost, .cost_limit = UINT64_MAX};
        cel_value v = d->ov->fn(&cc, &lit->val, 1);
        bool ok = v.kind != CV_ERROR;
        arena_free(&a);
        return ok;
    }
    return true;
}

static void validate_literal_args(checker *c, cel_node *n, const char *fname) {
    if (!n || seen_before(c, n)) return;
    if (call_named(n, fname) && n->nargs > 0 && n->args[0]->kind == N_CONST &&
        !literal_ok(c, n, n->args[0], !strcmp(fname, "matches")))
        report(c, n->args[0]->pos, "invalid %s argument", fname);
    validate_literal_args(c, n->target, fname);
    for (uint32_t i = 0; i < n->nargs && n->args; i++) validate_literal_args(c, n->args[i], fname);
    if (n->kind == N_COMPREHENSION) {
        validate_literal_args(c, n->range, fname);
        validate_literal_args(c, n->accu_init, fname);
        validate_literal_args(c, n->cond, fname);
        validate_literal_args(c, n->step, fname);
        validate_literal_args(c, n->result, fname);
    }
}

/* ---- errors ------------------------------------------------------------------------ */

/* Prints the errors as cel-go's Errors.ToDisplayString: stably sorted by position,
 * one "ERROR: ..." block each, at most 100 and a count of the rest. */
static void flush_errors(checker *c) {
    if (!c->d) return;
    /* insertion sort: stable, and error lists are short */
    for (uint32_t i = 1; i < c->nerrs; i++) {
        cerror x = c->errs[i];
        uint32_t j = i;
        while (j > 0 && c->errs[j - 1].pos > x.pos) {
            c->errs[j] = c->errs[j - 1];
            j--;
        }
        c->errs[j] = x;
    }
    sbuf_reset(c->d);
    for (uint32_t i = 0; i < c->nerrs && i < MAX_REPORTED_ERRORS; i++)
        cel__error_at(c->d, c->src, c->n, c->errs[i].pos, "%s", c->errs[i].msg);
    if (c->nerrs > MAX_REPORTED_ERRORS) sbuf_addf(c->d, "\n%u more errors were truncated", c->nerrs - MAX_REPORTED_ERRORS);
}

bool cel__check(const cel_env *env, cel_node *root, const char *src, size_t n, arena *a, cel_check_result *out, strbuf *d) {
    checker c = {0};
    c.env = env;
    c.a = a;
    c.d = d;
    c.src = src;
    c.n = n;
    c.check = !env->opts.no_check;
    const cel_type *t = check(&c, root);
    /* the final substitution: unbound type variables are dyn */
    if (c.check) {
        for (uint32_t i = 0; i < c.nnodes; i++) c.nodes[i]->type = substitute(&c, c.nodes[i]->type, true);
        t = root->type;
    }
    if (c.nerrs) {
        flush_errors(&c);
        return false;
    }
    if (c.check) {
        if (!env->opts.heterogeneous) validate_homogeneous(&c, root, 0);
        static const char *const literal_fns[] = {"duration", "timestamp", "matches"};
        for (size_t i = 0; i < ARRAY_SIZE(literal_fns); i++) {
            c.nseen = 0;
            validate_literal_args(&c, root, literal_fns[i]);
        }
        if (c.nerrs) {
            flush_errors(&c);
            return false;
        }
    }
    if (env->opts.dra && !env->opts.any_result && c.check && t->kind != TY_BOOL && !is_dyn_or_error(t)) {
        char b[128];
        cel__type_str(t, b, sizeof b);
        if (d) sbuf_addf(d, "must evaluate to bool or the unknown type, not %s", b);
        return false;
    }
    out->type = t;
    out->nslots = c.nslots;
    return true;
}
