/* cel_runner.c — `dralloc-conformance cel [--tag TAG]... FILE_OR_DIR...`: runs the
 * cel-spec conformance corpus (../shared/conformance/cel, format in its README)
 * against the CEL layer.
 *
 * Each test is compiled in a fresh test environment: the standard environment
 * with Kubernetes' language settings (type checking on, homogeneous aggregate
 * literals), the test's container, and its bindings declared as variables (typed
 * from `typeEnv` where given, else dyn). `disableCheck` tests compile without the
 * checker. A compile error counts as an error result. Values are compared
 * type-exactly (1 is not 1u); an `error` expectation passes on any error, as
 * upstream does. go_parsing.json cases only parse.
 *
 * --spec-literals turns Kubernetes' homogeneous-literal rule off, to see the
 * evaluator on the tests that rule rejects (tests/cel-divergences.md). */
#include "tests/conformance/conformance.h"

#include "cel/env_internal.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct run {
    const char **tags;
    int ntags;
    const char **skip;    /* --skip-tag: tests carrying any of these are not run */
    int nskip;
    bool spec_literals;   /* --spec-literals: allow mixed-type literals as cel-spec does (informational) */
    int passed, failed;
    intern_table *names;
    cel_eval_ctx *ctx;
    bool verbose;
} run;

/* ---- typed JSON values ---------------------------------------------------------- */

static int b64val(int c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

static bool b64_decode(arena *a, const char *s, cel_value *out) {
    size_t n = strlen(s);
    char *o = arena_alloc(a, n + 1);
    size_t len = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '=') break;
        int v = b64val((unsigned char)s[i]);
        if (v < 0) return false;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[len++] = (char)((acc >> bits) & 0xFF);
        }
    }
    o[len] = '\0';
    *out = cel_bytes(o, len);
    return true;
}

static bool to_value(arena *a, json_t *j, cel_value *out, const char **why) {
    if (!json_is_object(j) || json_object_size(j) != 1) {
        *why = "malformed typed value";
        return false;
    }
    const char *k = json_object_iter_key(json_object_iter(j));
    json_t *v = json_object_iter_value(json_object_iter(j));
    if (!strcmp(k, "int")) {
        *out = cel_int(json_is_string(v) ? strtoll(json_string_value(v), NULL, 10) : (int64_t)json_number_value(v));
        return true;
    }
    if (!strcmp(k, "uint")) {
        *out = cel_uint(json_is_string(v) ? strtoull(json_string_value(v), NULL, 10) : (uint64_t)json_number_value(v));
        return true;
    }
    if (!strcmp(k, "double")) {
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            if (!strcmp(s, "NaN")) *out = cel_double(NAN);
            else if (!strcmp(s, "Infinity")) *out = cel_double(INFINITY);
            else if (!strcmp(s, "-Infinity")) *out = cel_double(-INFINITY);
            else if (!strcmp(s, "-0")) *out = cel_double(-0.0);
            else *out = cel_double(strtod(s, NULL));
        } else {
            *out = cel_double(json_number_value(v));
        }
        return true;
    }
    if (!strcmp(k, "string")) {
        *out = cel_string(arena_strndup(a, json_string_value(v), json_string_length(v)), json_string_length(v));
        return true;
    }
    if (!strcmp(k, "bytes")) return b64_decode(a, json_string_value(v), out) || (*why = "bad base64", false);
    if (!strcmp(k, "bool")) {
        *out = cel_bool(json_is_true(v));
        return true;
    }
    if (!strcmp(k, "null")) {
        *out = cel_null();
        return true;
    }
    if (!strcmp(k, "duration") && json_is_string(v)) {
        /* proto-JSON duration "123.321456789s" */
        const char *d = json_string_value(v);
        bool neg = *d == '-';
        if (neg) d++;
        char *end;
        long long sec = strtoll(d, &end, 10);
        long long ns = 0;
        if (*end == '.') {
            int k2 = 0;
            for (end++; *end >= '0' && *end <= '9'; end++, k2++)
                if (k2 < 9) ns = ns * 10 + (*end - '0');
            for (; k2 < 9; k2++) ns *= 10;
        }
        __int128 total = (__int128)sec * 1000000000 + ns;
        if (neg) total = -total;
        __int128 s2 = total / 1000000000, r = total % 1000000000;
        if (r < 0) r += 1000000000, s2 -= 1;
        *out = cel_duration((int64_t)s2, (uint32_t)r);
        return true;
    }
    if (!strcmp(k, "type")) {
        *out = cel_type_value(arena_strdup(a, json_string_value(v)));
        return true;
    }
    if (!strcmp(k, "list")) {
        cel_list *l = cel__list_new(a, (uint32_t)json_array_size(v));
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (!to_value(a, e, &l->items[l->n], why)) return false;
            l->n++;
        }
        *out = cel_list_value(l);
        return true;
    }
    if (!strcmp(k, "map")) {
        cel_map *m = cel__map_new(a, (uint32_t)json_array_size(v) + 1);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            cel_value kk, vv;
            if (!to_value(a, json_array_get(e, 0), &kk, why) || !to_value(a, json_array_get(e, 1), &vv, why))
                return false;
            cel__map_put(a, m, kk, vv);
        }
        *out = cel_map_value(m);
        return true;
    }
    static char buf[64];
    snprintf(buf, sizeof buf, "unsupported value kind '%s'", k);
    *why = buf;
    return false;
}

/* Type-exact comparison of a result with an expected value. */
static bool same(const cel_value *x, const cel_value *y) {
    if (x->kind != y->kind) return false;
    switch (x->kind) {
    case CV_DOUBLE:
        if (isnan(x->u.d) || isnan(y->u.d)) return isnan(x->u.d) && isnan(y->u.d);
        if (x->u.d == 0 && y->u.d == 0) return signbit(x->u.d) == signbit(y->u.d);
        return x->u.d == y->u.d;
    case CV_LIST:
        if (x->u.list->n != y->u.list->n) return false;
        for (uint32_t i = 0; i < x->u.list->n; i++)
            if (!same(&x->u.list->items[i], &y->u.list->items[i])) return false;
        return true;
    case CV_MAP:
        if (x->u.map->n != y->u.map->n) return false;
        for (uint32_t i = 0; i < x->u.map->n; i++) {
            bool found = false;
            for (uint32_t j = 0; j < y->u.map->n && !found; j++)
                if (same(&x->u.map->keys[i], &y->u.map->keys[j])) {
                    if (!same(&x->u.map->vals[i], &y->u.map->vals[j])) return false;
                    found = true;
                }
            if (!found) return false;
        }
        return true;
    default: return cel__value_equal(x, y);
    }
}

/* ---- types from typeEnv ------------------------------------------------------------ */

static const cel_type *typeenv_type(cel_env *env, json_t *t) {
    if (!json_is_object(t)) return NULL;
    json_t *v;
    if ((v = json_object_get(t, "primitive"))) {
        const char *p = json_string_value(v);
        if (!p) return NULL;
        if (!strcmp(p, "BOOL")) return cel__env_type(env, "bool");
        if (!strcmp(p, "INT64")) return cel__env_type(env, "int");
        if (!strcmp(p, "UINT64")) return cel__env_type(env, "uint");
        if (!strcmp(p, "DOUBLE")) return cel__env_type(env, "double");
        if (!strcmp(p, "STRING")) return cel__env_type(env, "string");
        if (!strcmp(p, "BYTES")) return cel__env_type(env, "bytes");
        return NULL;
    }
    if ((v = json_object_get(t, "listType"))) {
        const cel_type *e = typeenv_type(env, json_object_get(v, "elemType"));
        return cel__type_list(&env->a, e ? e : &cel_t_dyn);
    }
    if ((v = json_object_get(t, "mapType"))) {
        const cel_type *k = typeenv_type(env, json_object_get(v, "keyType"));
        const cel_type *vt = typeenv_type(env, json_object_get(v, "valueType"));
        return cel__type_map(&env->a, k ? k : &cel_t_dyn, vt ? vt : &cel_t_dyn);
    }
    if (json_object_get(t, "null")) return cel__env_type(env, "null");
    return NULL;   /* dyn, message, well-known, wrappers: dynamic */
}

/* ---- one test ------------------------------------------------------------------------ */

static bool has_tag(json_t *tags, const char *tag) {
    size_t k;
    json_t *x;
    json_array_foreach(tags, k, x) if (json_is_string(x) && !strcmp(json_string_value(x), tag)) return true;
    return false;
}

static bool has_tags(run *r, json_t *t) {
    json_t *tags = json_object_get(t, "tags");
    for (int i = 0; i < r->nskip; i++)
        if (has_tag(tags, r->skip[i])) return false;
    for (int i = 0; i < r->ntags; i++) {
        if (!has_tag(tags, r->tags[i])) return false;
    }
    return true;
}

static void fail_test(run *r, json_t *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_test(run *r, json_t *t, const char *fmt, ...) {
    char why[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    for (char *p = why; *p; p++)
        if (*p == '\n') *p = ' ';
    printf("FAIL %s/%s/%s: %s\n", json_string_value(json_object_get(t, "file")),
           json_string_value(json_object_get(t, "section")), json_string_value(json_object_get(t, "name")), why);
    r->failed++;
}

static void run_parse_test(run *r, json_t *t) {
    const char *expr = json_string_value(json_object_get(t, "expr"));
    const char *want = json_string_value(json_object_get(json_object_get(t, "expect"), "parse"));
    arena a;
    arena_init(&a, 0);
    strbuf e;
    sbuf_init(&e);
    cel_node *root;
    bool ok = cel__parse(expr, json_string_length(json_object_get(t, "expr")), NULL, &a, &root, &e);
    bool want_ok = want && !strcmp(want, "ok");
    if (ok == want_ok) r->passed++;
    else if (ok) fail_test(r, t, "parsed, expected a parse error");
    else fail_test(r, t, "parse error, expected success: %s", e.buf);
    sbuf_free(&e);
    arena_free(&a);
}

static void run_test(run *r, json_t *t) {
    json_t *expect = json_object_get(t, "expect");
    if (json_object_get(expect, "parse")) {
        run_parse_test(r, t);
        return;
    }
    const char *expr = json_string_value(json_object_get(t, "expr"));
    if (!expr) {
        fail_test(r, t, "no expr");
        return;
    }
    cel_env_opts o = {0};
    o.no_check = json_is_true(json_object_get(t, "disableCheck"));
    o.container = json_string_value(json_object_get(t, "container"));
    o.heterogeneous = r->spec_literals;
    cel_env *env = cel__env_new_opts(r->names, &o);
    arena a;
    arena_init(&a, 0);

    /* declarations: typeEnv idents, then bindings not declared there */
    json_t *tenv = json_object_get(t, "typeEnv");
    size_t i;
    json_t *d;
    json_array_foreach(tenv, i, d) {
        json_t *id = json_object_get(d, "ident");
        const char *name = json_string_value(json_object_get(d, "name"));
        if (id && name) cel__env_add_var(env, name, typeenv_type(env, json_object_get(id, "type")));
    }
    json_t *binds = json_object_get(t, "bindings");
    const char *bk;
    json_t *bv;
    json_object_foreach(binds, bk, bv) {
        bool declared = false;
        for (size_t k = 0; k < env->nvars; k++) declared |= !strcmp(env->vars[k].name, bk);
        if (!declared) cel__env_add_var(env, bk, NULL);
    }
    cel_value *vars = ARENA_NEWN(&a, cel_value, env->nvars + 1);
    for (size_t k = 0; k < env->nvars; k++) vars[k] = cel_error_static("no such attribute");
    const char *why = NULL;
    json_object_foreach(binds, bk, bv) {
        for (size_t k = 0; k < env->nvars; k++) {
            if (strcmp(env->vars[k].name, bk)) continue;
            json_t *val = json_object_get(bv, "value") ? json_object_get(bv, "value") : bv;
            if (!to_value(&a, val, &vars[k], &why)) {
                fail_test(r, t, "binding %s: %s", bk, why);
                goto out;
            }
        }
    }

    err e;
    err_clear(&e);
    cel_program *p = cel_compile(env, expr, json_string_length(json_object_get(t, "expr")), &e);
    bool want_err = json_object_get(expect, "error") != NULL;
    json_t *want_val = json_object_get(expect, "value");
    if (!p) {
        if (want_err) r->passed++;
        else fail_test(r, t, "compile error: %s", e.msg);
        goto out;
    }
    if (json_is_true(json_object_get(t, "checkOnly"))) {
        r->passed++;
        cel_program_free(p);
        goto out;
    }
    cel_value v = cel__eval_value(p, NULL, vars, r->ctx);
    char got[1024];
    cel__value_format(&v, r->names, got, sizeof got);
    if (want_err) {
        if (v.kind == CV_ERROR) r->passed++;
        else fail_test(r, t, "got %s, expected an error", got);
    } else {
        cel_value want = cel_bool(true);
        if (want_val && !to_value(&a, want_val, &want, &why)) {
            fail_test(r, t, "expected value: %s", why);
        } else if (v.kind == CV_ERROR) {
            fail_test(r, t, "error: %s", v.u.s);
        } else if (!same(&v, &want)) {
            char w[1024];
            cel__value_format(&want, r->names, w, sizeof w);
            fail_test(r, t, "got %s, want %s", got, w);
        } else {
            r->passed++;
        }
    }
    cel_program_free(p);
out:
    arena_free(&a);
    cel_env_free(env);
}

static void run_file(run *r, const char *path) {
    json_error_t je;
    json_t *root = json_load_file(path, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
    if (!root) {
        fprintf(stderr, "dralloc-conformance: %s: %s\n", path, je.text);
        r->failed++;
        return;
    }
    if (!json_is_array(root)) {
        json_decref(root);
        return;   /* summary.json */
    }
    size_t i;
    json_t *t;
    json_array_foreach(root, i, t) {
        if (has_tags(r, t)) run_test(r, t);
    }
    json_decref(root);
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_path(run *r, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "dralloc-conformance: %s: not found\n", path);
        r->failed++;
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(r, path);
        return;
    }
    DIR *dir = opendir(path);
    if (!dir) return;
    char *files[512];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dir)) && n < 512) {
        size_t l = strlen(de->d_name);
        if (l > 5 && !strcmp(de->d_name + l - 5, ".json") && strcmp(de->d_name, "summary.json"))
            files[n++] = xstrdup(de->d_name);
    }
    closedir(dir);
    qsort(files, (size_t)n, sizeof(char *), cmpstr);
    for (int i = 0; i < n; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, files[i]);
        run_file(r, full);
        free(files[i]);
    }
}

int conf_cel(int argc, char **argv) {
    run r = {0};
    r.tags = calloc((size_t)argc, sizeof(char *));
    r.skip = calloc((size_t)argc, sizeof(char *));
    const char **paths = calloc((size_t)argc, sizeof(char *));
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tag") && i + 1 < argc) r.tags[r.ntags++] = argv[++i];
        else if (!strcmp(argv[i], "--skip-tag") && i + 1 < argc) r.skip[r.nskip++] = argv[++i];
        else if (!strcmp(argv[i], "--spec-literals")) r.spec_literals = true;
        else paths[np++] = argv[i];
    }
    if (!np) {
        fprintf(stderr, "usage: dralloc-conformance cel [--tag TAG]... [--skip-tag TAG]... [--spec-literals] FILE_OR_DIR...\n");
        free(r.tags);
        free(r.skip);
        free(paths);
        return 2;
    }
    r.names = intern_new();
    r.ctx = cel_eval_ctx_new();
    for (int i = 0; i < np; i++) run_path(&r, paths[i]);
    printf("%d passed, %d failed\n", r.passed, r.failed);
    cel_eval_ctx_free(r.ctx);
    intern_free(r.names);
    free(r.tags);
    free(r.skip);
    free(paths);
    return r.failed ? 1 : 0;
}
