/* env.c — environments, compilation entry points, the program cache and the
 * result conversions of the public API (cel.h).
 *
 * An environment parses every registry signature once and keeps the overloads
 * sorted by function name. cel_compile = length check, parse, check, build; the
 * program owns one arena holding its AST, instructions and constants. The cache
 * maps expression text to programs under a reader/writer lock; compilation
 * happens outside the lock, and a racing duplicate is dropped. */
#include "cel/program_internal.h"

#include "base/hash.h"
#include "base/hmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
#include <string.h>

static int decl_cmp(const void *a, const void *b) {
    const cel_fn_decl *x = a, *y = b;
    int c = strcmp(x->ov->name, y->ov->name);
    if (c) return c;
    /* stable order within a name: by address in the registry tables */
    return (x->ov > y->ov) - (x->ov < y->ov);
}

cel_env *cel__env_new_opts(intern_table *names, const cel_env_opts *o) {
    cel_env *env = xcalloc(1, sizeof *env);
    arena_init(&env->a, 64 * 1024);
    env->names = names;
    if (o) env->opts = *o;
    if (env->opts.container) env->opts.container = arena_strdup(&env->a, env->opts.container);
    size_t total = 0;
    for (size_t l = 0; l < cel_nlibraries; l++) total += cel_libraries[l]->count;
    env->fns = ARENA_NEWN(&env->a, cel_fn_decl, total ? total : 1);
    size_t k = 0;
    for (size_t l = 0; l < cel_nlibraries; l++) {
        const cel_library *lib = cel_libraries[l];
        for (size_t i = 0; i < lib->count; i++) {
            const cel_overload *ov = &lib->overloads[i];
            cel_fn_decl *d = &env->fns[k];
            d->ov = ov;
            bool ok = ov->nargs <= CEL_MAX_ARGS;
            for (uint32_t j = 0; j < ov->nargs && ok; j++) {
                d->args[j] = cel__type_parse(&env->a, ov->args[j]);
                ok = d->args[j] != NULL;
                if (ok) {
                    int k = cel__type_value_kind(d->args[j]);
                    d->kinds[j] = (int8_t)k;
                    if (k < 0) d->kmask[j] = ~0u;
                    else if (k == CV_MAP) d->kmask[j] = 1u << CV_MAP | 1u << CV_DEVMAP | 1u << CV_DEVDOMAIN;
                    else d->kmask[j] = 1u << k;
                    if (k == CV_OPAQUE) d->opaque = true;
                }
            }
            d->result = ok ? cel__type_parse(&env->a, ov->result) : NULL;
            if (!ok || !d->result) {
                /* a malformed signature is a programming error in a library table */
                fprintf(stderr, "cel: bad signature in overload %s (library %s)\n", ov->id, lib->name);
                abort();
            }
            k++;
        }
    }
    env->nfns = k;
    qsort(env->fns, env->nfns, sizeof(cel_fn_decl), decl_cmp);
    if (env->opts.dra) cel__env_add_var(env, "device", &cel_t_device);
    return env;
}

cel_env *cel_env_new_dra(intern_table *names) {
    cel_env_opts o = {.dra = true};
    return cel__env_new_opts(names, &o);
}

cel_env *cel_env_new_dra_any(intern_table *names) {
    cel_env_opts o = {.dra = true, .any_result = true};
    return cel__env_new_opts(names, &o);
}

void cel_env_free(cel_env *env) {
    if (!env) return;
    free(env->vars);
    arena_free(&env->a);
    free(env);
}

int cel__env_add_var(cel_env *env, const char *name, const cel_type *t) {
    if (env->nvars == env->capvars) {
        env->capvars = env->capvars ? env->capvars * 2 : 8;
        env->vars = xrealloc(env->vars, env->capvars * sizeof(cel_var_decl));
    }
    env->vars[env->nvars].name = arena_strdup(&env->a, name);
    env->vars[env->nvars].type = t ? t : &cel_t_dyn;
    return (int)env->nvars++;
}

const cel_type *cel__env_type(cel_env *env, const char *text) { return cel__type_parse(&env->a, text); }

size_t cel__env_find_fns(const cel_env *env, const char *name, const cel_fn_decl **first) {
    size_t lo = 0, hi = env->nfns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(env->fns[mid].ov->name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    size_t end = lo;
    while (end < env->nfns && !strcmp(env->fns[end].ov->name, name)) end++;
    *first = env->fns + lo;
    return end - lo;
}

/* ---- compilation ---------------------------------------------------------------- */

/* e->msg gets the text up to its size; *text (when asked for) the whole of it. */
static void compile_failed(strbuf *d, err *e, char **text) {
    if (e) {
        size_t k = d->len < sizeof e->msg - 1 ? d->len : sizeof e->msg - 1;
        memcpy(e->msg, d->buf ? d->buf : "", k);
        e->msg[k] = '\0';
        e->set = true;
    }
    if (text) *text = sbuf_take(d);
    else sbuf_free(d);
}

cel_program *cel_compile_text(const cel_env *env, const char *expr, size_t len, err *e, char **text) {
    if (text) *text = NULL;
    if (e) err_clear(e);
    strbuf d;
    sbuf_init(&d);
    if (len > CEL_MAX_EXPRESSION_LEN) {
        sbuf_addf(&d, "Too long: may not be more than %d bytes", CEL_MAX_EXPRESSION_LEN);
        compile_failed(&d, e, text);
        return NULL;
    }
    cel_program *p = xcalloc(1, sizeof *p);
    arena_init(&p->a, 4096);   /* most selectors need a few KiB; caches hold thousands */
    p->env = env;
    char *src = arena_strndup(&p->a, expr, len);
    cel_node *root;
    cel_check_result cr;
    if (!cel__parse(src, len, NULL, &p->a, &root, &d) || !cel__check(env, root, src, len, &p->a, &cr, &d) ||
        !cel__program_build(p, root, cr.nslots, src, len, &d)) {
        cel_program_free(p);
        compile_failed(&d, e, text);
        return NULL;
    }
    sbuf_free(&d);
    p->type = cr.type;
    return p;
}

cel_program *cel_compile(const cel_env *env, const char *expr, size_t len, err *e) {
    return cel_compile_text(env, expr, len, e, NULL);
}

void cel_program_free(cel_program *p) {
    if (!p) return;
    for (uint32_t i = 0; i < p->nnames; i++) intern_release(p->env->names, p->names[i]);
    free(p->names);
    for (uint32_t i = 0; i < p->npreps; i++)
        if (p->preps[i].release) p->preps[i].release(p->preps[i].p);
    arena_free(&p->a);
    free(p);
}

bool cel__program_returns_bool(const cel_program *p) { return p->type && p->type->kind == TY_BOOL; }
const cel_type *cel__program_type(const cel_program *p) { return p->type; }

/* dynamic-resource-allocation cel/compile.go isAllowedDerivedAttributeElementType */
static bool derived_scalar(const cel_type *t) {
    return t->kind == TY_BOOL || t->kind == TY_INT || t->kind == TY_STRING || cel__type_is_dyn(t) ||
           (t->kind == TY_OPAQUE && t->name && !strcmp(t->name, "kubernetes.Semver"));
}

bool cel_program_value_type_ok(const cel_program *p, char *msg, size_t n) {
    const cel_type *t = p->type;
    if (!t || derived_scalar(t) || (t->kind == TY_LIST && t->p0 && derived_scalar(t->p0))) return true;
    char b[256];
    cel__type_str(t, b, sizeof b);
    snprintf(msg, n, "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of these scalars, not %s",
             b);
    return false;
}

/* ---- cache ------------------------------------------------------------------------ */

/* Each entry counts its holders: a program lives while something that compiled it
 * through the cache (a decoded selector) holds it, and goes with the last release —
 * so the cache holds what live objects use, not every text ever seen. */
typedef struct cache_entry {
    struct cache_entry *next;
    uint64_t hash;
    uint64_t refs;           /* guarded by the cache's lock */
    size_t bytes;            /* counted when cached */
    size_t len;
    cel_program *prog;
    char text[];
} cache_entry;

struct cel_cache {
    const cel_env *env;
    pthread_mutex_t lock;
    hmap by_hash;            /* hash → first entry (chained) */
    hmap by_prog;            /* program address → its entry */
    size_t count, bytes;
};

cel_cache *cel_cache_new(const cel_env *env) {
    cel_cache *c = xcalloc(1, sizeof *c);
    c->env = env;
    pthread_mutex_init(&c->lock, NULL);
    hmap_init(&c->by_hash);
    hmap_init(&c->by_prog);
    return c;
}

void cel_cache_free(cel_cache *c) {
    if (!c) return;
    uint64_t k, v;
    for (size_t it = 0; hmap_next(&c->by_hash, &it, &k, &v);) {
        cache_entry *e = (cache_entry *)(uintptr_t)v;
        while (e) {
            cache_entry *nx = e->next;
            cel_program_free(e->prog);
            free(e);
            e = nx;
        }
    }
    hmap_free(&c->by_hash);
    hmap_free(&c->by_prog);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static cache_entry *lookup(cel_cache *c, uint64_t h, const char *expr, size_t len) {
    uint64_t v;
    if (!hmap_get(&c->by_hash, h, &v)) return NULL;
    for (cache_entry *e = (cache_entry *)(uintptr_t)v; e; e = e->next)
        if (e->len == len && !memcmp(e->text, expr, len)) return e;
    return NULL;
}

const cel_program *cel_cache_get(cel_cache *c, const char *expr, size_t len, err *e) {
    return cel_cache_get_text(c, expr, len, e, NULL);
}

const cel_program *cel_cache_get_text(cel_cache *c, const char *expr, size_t len, err *e, char **text) {
    if (text) *text = NULL;
    uint64_t h = hash_bytes(expr, len);
    pthread_mutex_lock(&c->lock);
    cache_entry *ce = lookup(c, h, expr, len);
    if (ce) ce->refs++;
    pthread_mutex_unlock(&c->lock);
    if (ce) return ce->prog;
    /* compiled outside the lock: another thread may compile the same text meanwhile */
    cel_program *np = cel_compile_text(c->env, expr, len, e, text);
    if (!np) return NULL;
    pthread_mutex_lock(&c->lock);
    ce = lookup(c, h, expr, len);
    if (ce) {
        ce->refs++;
        pthread_mutex_unlock(&c->lock);
        cel_program_free(np);
        return ce->prog;
    }
    ce = xmalloc(sizeof *ce + len + 1);
    ce->hash = h;
    ce->refs = 1;
    ce->len = len;
    ce->prog = np;
    memcpy(ce->text, expr, len);
    ce->text[len] = '\0';
    bool inserted;
    uint64_t *slot = hmap_upsert(&c->by_hash, h, 0, &inserted);
    ce->next = (cache_entry *)(uintptr_t)*slot;
    *slot = (uint64_t)(uintptr_t)ce;
    hmap_put(&c->by_prog, (uint64_t)(uintptr_t)np, (uint64_t)(uintptr_t)ce);
    ce->bytes = sizeof *ce + len + 1 + arena_bytes_reserved(&np->a);
    c->count++;
    c->bytes += ce->bytes;
    pthread_mutex_unlock(&c->lock);
    return np;
}

void cel_cache_release(cel_cache *c, const cel_program *p) {
    if (!p) return;
    pthread_mutex_lock(&c->lock);
    uint64_t v;
    bool known = hmap_get(&c->by_prog, (uint64_t)(uintptr_t)p, &v);
    assert(known && "cel_cache_release of a program the cache did not give");
    cache_entry *ce = known ? (cache_entry *)(uintptr_t)v : NULL;
    if (ce && --ce->refs == 0) {
        uint64_t *head = hmap_upsert(&c->by_hash, ce->hash, 0, &(bool){false});
        if ((cache_entry *)(uintptr_t)*head == ce) {
            if (ce->next) *head = (uint64_t)(uintptr_t)ce->next;
            else hmap_del(&c->by_hash, ce->hash);
        } else {
            cache_entry *q = (cache_entry *)(uintptr_t)*head;
            while (q->next != ce) q = q->next;
            q->next = ce->next;
        }
        hmap_del(&c->by_prog, (uint64_t)(uintptr_t)p);
        c->count--;
        c->bytes -= ce->bytes;
    } else {
        ce = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (ce) {
        cel_program_free(ce->prog);
        free(ce);
    }
}

void cel_cache_stats(cel_cache *c, size_t *programs, size_t *bytes) {
    pthread_mutex_lock(&c->lock);
    if (programs) *programs = c->count;
    if (bytes) *bytes = c->bytes;
    pthread_mutex_unlock(&c->lock);
}

/* ---- results ---------------------------------------------------------------------- */

static bool scalar_attr(const cel_value *v, arena *a, cel_attr *out) {
    switch (v->kind) {
    case CV_INT: out->kind = CEL_ATTR_INT; out->u.i = v->u.i; return true;
    case CV_BOOL: out->kind = CEL_ATTR_BOOL; out->u.b = v->u.b; return true;
    case CV_STRING:
        out->kind = CEL_ATTR_STRING;
        cel_str *s = ARENA_NEW(a, cel_str);
        s->s = arena_strndup(a, v->u.s, v->len);
        s->len = v->len;
        out->u.s = s;
        return true;
    case CV_SEMVER: {
        out->kind = CEL_ATTR_VERSION;
        semver *s = ARENA_NEW(a, semver);
        *s = *v->u.v;
        if (s->pre) s->pre = arena_strndup(a, s->pre, s->pre_len);
        if (s->build) s->build = arena_strndup(a, s->build, s->build_len);
        out->u.v = s;
        return true;
    }
    default: return false;
    }
}

bool cel_eval_attr(const cel_program *p, const cel_device *d, cel_eval_ctx *x, bool allow_lists, arena *out_arena,
                   cel_attr *out, err *e) {
    cel_value v = cel__eval_value(p, d, NULL, x);
    memset(out, 0, sizeof *out);
    if (v.kind == CV_ERROR) return err_set(e, "%s", v.u.s);
    if (scalar_attr(&v, out_arena, out)) return true;
    if (v.kind == CV_LIST && allow_lists && v.u.list->n > 0) {
        const cel_list *l = v.u.list;
        uint8_t k0 = l->items[0].kind;
        for (uint32_t i = 1; i < l->n; i++)
            if (l->items[i].kind != k0) return err_set(e, "list elements must all have the same type");
        cel_attr_list *list = ARENA_NEW(out_arena, cel_attr_list);
        list->count = l->n;
        out->u.list = list;
        switch (k0) {
        case CV_INT: {
            int64_t *a = ARENA_NEWN(out_arena, int64_t, l->n);
            for (uint32_t i = 0; i < l->n; i++) a[i] = l->items[i].u.i;
            out->kind = CEL_ATTR_INTS;
            list->ints = a;
            return true;
        }
        case CV_BOOL: {
            bool *a = ARENA_NEWN(out_arena, bool, l->n);
            for (uint32_t i = 0; i < l->n; i++) a[i] = l->items[i].u.b;
            out->kind = CEL_ATTR_BOOLS;
            list->bools = a;
            return true;
        }
        case CV_STRING: {
            cel_str *a = ARENA_NEWN(out_arena, cel_str, l->n);
            for (uint32_t i = 0; i < l->n; i++) {
                a[i].s = arena_strndup(out_arena, l->items[i].u.s, l->items[i].len);
                a[i].len = l->items[i].len;
            }
            out->kind = CEL_ATTR_STRINGS;
            list->strs = a;
            return true;
        }
        case CV_SEMVER: {
            semver *a = ARENA_NEWN(out_arena, semver, l->n);
            for (uint32_t i = 0; i < l->n; i++) {
                cel_attr tmp;
                scalar_attr(&l->items[i], out_arena, &tmp);
                a[i] = *tmp.u.v;
            }
            out->kind = CEL_ATTR_VERSIONS;
            list->vers = a;
            return true;
        }
        default: break;
        }
    }
    return err_set(e, "CEL result of type %s cannot be used as an attribute value", cel__kind_type_name(&v));
}

bool cel__eval_format(const cel_program *p, const cel_device *d, cel_eval_ctx *x, char *buf, size_t n, err *e) {
    cel_value v = cel__eval_value(p, d, NULL, x);
    if (v.kind == CV_ERROR) return err_set(e, "%s", v.u.s);
    cel__value_format(&v, p->env->names, buf, n);
    return true;
}

char *cel_eval_format_alloc(const cel_program *p, const cel_device *d, cel_eval_ctx *x, err *e) {
    cel_value v = cel__eval_value(p, d, NULL, x);
    if (v.kind == CV_ERROR) {
        err_set(e, "%s", v.u.s);
        return NULL;
    }
    /* measured first, then written: the value stays in the context's arena until
     * the next evaluation, and printing does not change it */
    size_t n = cel__value_format(&v, p->env->names, NULL, 0) + 1;
    char *buf = xmalloc(n);
    size_t w = cel__value_format(&v, p->env->names, buf, n);
    assert(w + 1 == n);
    (void)w;
    return buf;
}

#define CEL_NO_SUCH_KEY_HINT                                                                     \
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with " \
    "has() for optional fields"

void cel_enhance_runtime_error(err *e) {
    if (!e || !strstr(e->msg, "no such key:") || strstr(e->msg, CEL_NO_SUCH_KEY_HINT)) return;
    size_t len = strlen(e->msg);
    snprintf(e->msg + len, sizeof e->msg - len, "%s", CEL_NO_SUCH_KEY_HINT);
}

/* Compiled and its estimated cost checked (cost_estimate.c), here beside cel_compile
 * so that the estimator calls nothing that compiles. */
bool cel__validate_selector(const cel_env *env, const char *expr, size_t len, err *e) {
    cel_program *p = cel_compile(env, expr, len, e);
    if (!p) return false;
    uint64_t c = p->est_cost;
    cel_program_free(p);
    if (c > CEL_MAX_COST) {
        err_set(e, "%s", CEL_TOO_COMPLEX_MSG);
        return false;
    }
    return true;
}
