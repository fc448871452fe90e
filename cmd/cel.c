/* cel.c — `dralloc cel eval EXPR (--device-json FILE | --slice FILE --device NAME)`:
 * compiles a CEL expression in the DRA environment and evaluates it on one device,
 * printing the typed result as CEL literal text ("true", "42", "quantity(\"40Gi\")")
 * or the error.
 *
 * --device-json reads a JSON object shaped like a resource.k8s.io/v1 Device plus
 * the driver name:
 *   {"name": "gpu-0", "driver": "gpu.example.com",
 *    "attributes": {"model": {"string": "H100"}, "dom.io/index": {"int": 3},
 *                   "cc": {"version": "9.0.0"}, "ids": {"ints": [1, 2]}},
 *    "capacity": {"memory": {"value": "80Gi"}},
 *    "allowMultipleAllocations": false}
 * Unqualified attribute and capacity names belong to the driver's domain, as in
 * Kubernetes. --slice decodes ResourceSlices with the engine and picks the device by name.
 * -o json prints the answer as an object (eval_json below: value or error, runtime and
 * estimated cost, the limit's verdict), the keys tests/upstream's dra-oracle prints;
 * --stdin answers JSON Lines of expression and device, one object a line.
 * Exit codes: 0 result printed, 1 compile or runtime error, 2 usage or input error. */
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/jsonl.h"

#include "base/arena.h"
#include "base/error.h"
#include "base/intern.h"
#include "cel/cel.h"
#include "engine/engine.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage_to(FILE *f) {
    fprintf(f,
            "usage: dralloc cel eval EXPR --device-json FILE [-o json]\n"
            "       dralloc cel eval EXPR --slice FILE --device NAME\n"
            "       dralloc cel eval --stdin   (JSON Lines {\"expr\": ..., \"device\": {...}} in, -o json lines out)\n"
            "       (after `--` the next argument is EXPR even if it starts with '-':\n"
            "        dralloc cel eval -- '-1 + 2' --device-json FILE)\n");
}

static int usage(void) {
    usage_to(stderr);
    return 2;
}

/* Splits "dom/id" (or "id" → driver domain) into interned ids. */
static void qualified(intern_table *t, const char *name, const char *driver, uint32_t *dom, uint32_t *id) {
    const char *slash = strchr(name, '/');
    if (slash) {
        *dom = intern_put(t, name, (size_t)(slash - name));
        *id = intern_cstr(t, slash + 1);
    } else {
        *dom = intern_cstr(t, driver);
        *id = intern_cstr(t, name);
    }
}

static bool read_attr(arena *a, const char *name, json_t *v, cel_attr *at, char **conv_error, char *msg,
                      size_t nmsg) {
    const char *kind = NULL;
    json_t *val = NULL;
    if (json_object_size(v) == 1) {
        kind = json_object_iter_key(json_object_iter(v));
        val = json_object_iter_value(json_object_iter(v));
    }
    if (!kind) {
        at->kind = CEL_ATTR_NONE;
        if (!*conv_error) *conv_error = arena_printf(a, "attribute %s: unsupported attribute value", name);
        return true;
    }
    size_t n = json_is_array(val) ? json_array_size(val) : 0;
    cel_attr_list *list = ARENA_NEW(a, cel_attr_list);   /* the list kinds' elements */
    list->count = (uint32_t)n;
    if (!strcmp(kind, "int") && json_is_integer(val)) {
        at->kind = CEL_ATTR_INT;
        at->u.i = json_integer_value(val);
    } else if (!strcmp(kind, "bool") && json_is_boolean(val)) {
        at->kind = CEL_ATTR_BOOL;
        at->u.b = json_is_true(val);
    } else if (!strcmp(kind, "string") && json_is_string(val)) {
        at->kind = CEL_ATTR_STRING;
        cel_str *s = ARENA_NEW(a, cel_str);
        *s = cel_str_of(arena_strdup(a, json_string_value(val)), (uint32_t)json_string_length(val));
        at->u.s = s;
    } else if (!strcmp(kind, "version") && json_is_string(val)) {
        at->kind = CEL_ATTR_VERSION;
        const char *s = arena_strdup(a, json_string_value(val));
        err e;
        err_clear(&e);
        semver *v = ARENA_NEW(a, semver);
        at->u.v = v;
        if (!semver_parse(s, strlen(s), v, &e) && !*conv_error)
            *conv_error = arena_printf(a, "attribute %s: parse semantic version: %s", name, e.msg);
    } else if (!strcmp(kind, "ints") && json_is_array(val)) {
        int64_t *xs = ARENA_NEWN(a, int64_t, n + 1);
        for (size_t i = 0; i < n; i++) xs[i] = json_integer_value(json_array_get(val, i));
        at->kind = CEL_ATTR_INTS;
        list->ints = xs;
        at->u.list = list;
    } else if (!strcmp(kind, "bools") && json_is_array(val)) {
        bool *xs = ARENA_NEWN(a, bool, n + 1);
        for (size_t i = 0; i < n; i++) xs[i] = json_is_true(json_array_get(val, i));
        at->kind = CEL_ATTR_BOOLS;
        list->bools = xs;
        at->u.list = list;
    } else if (!strcmp(kind, "strings") && json_is_array(val)) {
        cel_str *xs = ARENA_NEWN(a, cel_str, n + 1);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(val, i);
            xs[i].s = arena_strdup(a, json_is_string(e) ? json_string_value(e) : "");
            xs[i].len = (uint32_t)strlen(xs[i].s);
        }
        at->kind = CEL_ATTR_STRINGS;
        list->strs = xs;
        at->u.list = list;
    } else if (!strcmp(kind, "versions") && json_is_array(val)) {
        semver *xs = ARENA_NEWN(a, semver, n + 1);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(val, i);
            const char *s = arena_strdup(a, json_is_string(e) ? json_string_value(e) : "");
            err er;
            err_clear(&er);
            if (!semver_parse(s, strlen(s), &xs[i], &er) && !*conv_error)
                *conv_error = arena_printf(a, "attribute %s: parse semantic version: %s", name, er.msg);
        }
        at->kind = CEL_ATTR_VERSIONS;
        list->vers = xs;
        at->u.list = list;
    } else {
        snprintf(msg, nmsg, "attribute %s: unsupported value kind '%s'", name, kind);
        return false;
    }
    return true;
}

/* The --device-json shape (this file's opening) into d; `where` names the input in
 * messages, which go to msg. */
static bool device_from_json(json_t *root, const char *where, arena *a, intern_table *t, cel_device *d, char *msg,
                             size_t nmsg) {
    if (!json_is_object(root)) return snprintf(msg, nmsg, "%s: expected a JSON object (a Device)", where), false;
    const char *driver = json_string_value(json_object_get(root, "driver"));
    if (!driver) return snprintf(msg, nmsg, "%s: driver: required string", where), false;
    memset(d, 0, sizeof *d);
    d->driver.s = arena_strdup(a, driver);
    d->driver.len = (uint32_t)strlen(driver);
    d->driver_id = intern_cstr(t, driver);
    d->allow_multiple_allocations = json_is_true(json_object_get(root, "allowMultipleAllocations"));
    json_t *attrs = json_object_get(root, "attributes");
    json_t *caps = json_object_get(root, "capacity");
    cel_attr *av = ARENA_NEWN(a, cel_attr, json_object_size(attrs) + 1);
    cel_capacity *cv = ARENA_NEWN(a, cel_capacity, json_object_size(caps) + 1);
    char *conv_error = NULL;
    const char *k;
    json_t *v;
    json_object_foreach(attrs, k, v) {
        cel_attr *at = &av[d->nattrs];
        uint32_t name;
        qualified(t, k, driver, &at->domain, &name);
        if (name > CEL_ATTR_NAME_MAX)   /* a fresh table: cannot happen, but never truncate */
            return snprintf(msg, nmsg, "%s: attribute %s: too many distinct names", where, k), false;
        at->name = name;
        if (!read_attr(a, k, v, at, &conv_error, msg, nmsg)) return false;
        d->nattrs++;
    }
    json_object_foreach(caps, k, v) {
        cel_capacity *c = &cv[d->ncaps];
        qualified(t, k, driver, &c->domain, &c->name);
        const char *q = json_string_value(json_object_get(v, "value"));
        err e;
        err_clear(&e);
        quantity *qv = ARENA_NEW(a, quantity);
        c->value = qv;
        if (!q || !quantity_parse(q, strlen(q), qv, &e))
            return snprintf(msg, nmsg, "%s: capacity[\"%s\"].value: %.300s", where, k, q ? e.msg : "required string"), false;
        d->ncaps++;
    }
    d->attrs = av;
    d->caps = cv;
    d->conv_error = conv_error;
    return true;
}

static bool load_device(const char *path, arena *a, intern_table *t, cel_device *d) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        fprintf(stderr, "dralloc cel: %s:%d: %s\n", path, je.line, je.text);
        return false;
    }
    char msg[1024];
    bool ok = device_from_json(root, path, a, t, d, msg, sizeof msg);
    if (!ok) fprintf(stderr, "dralloc cel: %s\n", msg);
    json_decref(root);
    return ok;
}

/* Compiles expr in env and prints its value on d: the step both device sources
 * share. on_device (slice mode: "driver/pool/device") names the device in a runtime
 * error, which is then worded as the allocator reports it; NULL for --device-json.
 * Returns the exit code: 0 printed, 1 compile or runtime error. */
static int compile_and_print(const cel_env *env, const char *expr, const cel_device *d, const char *on_device) {
    err e;
    err_clear(&e);
    char *etext;
    cel_program *p = cel_compile_text(env, expr, strlen(expr), &e, &etext);
    if (!p) {
        fprintf(stderr, "CEL compile error: %s\n", etext);
        free(etext);
        return 1;
    }
    cel_eval_ctx *x = cel_eval_ctx_new();
    int rc = 0;
    char *text = cel_eval_format_alloc(p, d, x, &e);
    if (!text) {
        if (on_device) {
            cel_enhance_runtime_error(&e);
            fprintf(stderr, "CEL runtime error on device %s: %s\n", on_device, e.msg);
        } else {
            fprintf(stderr, "CEL runtime error: %s\n", e.msg);
        }
        rc = 1;
    } else {
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
    }
    cel_program_free(p);
    cel_eval_ctx_free(x);
    return rc;
}

/* -o json: the answer as an object with tests/upstream's dra-oracle keys — "value"
 * (CEL literal text) or "error" with "errorKind" ("compile", "runtime"); "cost" (the
 * runtime cost charged), "estimatedCost" (the compile-time worst case), "costLimit"
 * and "tooComplex" (estimatedCost over the limit: the API server's "Forbidden: too
 * complex, exceeds cost limit"). An expression that compiles as a selector (bool, or
 * the attributes' dyn type) is evaluated as the allocator evaluates one
 * (cel_eval_bool), its runtime error worded as the allocator's (cel_enhance_runtime_error,
 * as upstream's EnhanceRuntimeError); any other is evaluated for its value, as a derived
 * attribute is. */
static json_t *eval_json(intern_table *t, const char *expr, const cel_device *d, cel_eval_ctx *x) {
    json_t *o = json_object();
    err e;
    err_clear(&e);
    /* a selector if it compiles as one (bool or the attribute's dyn type), else a value */
    cel_env *sel = cel_env_new_dra(t), *any = NULL;
    char *etext;   /* a compile error's whole text (cel_compile_text) */
    cel_program *p = cel_compile_text(sel, expr, strlen(expr), &e, &etext);
    bool selector = p != NULL;
    if (!p && !strncmp(etext, "must evaluate to bool", 21)) {
        any = cel_env_new_dra_any(t);
        free(etext);
        p = cel_compile_text(any, expr, strlen(expr), &e, &etext);
        if (p && !cel_program_value_type_ok(p, e.msg, sizeof e.msg)) {
            cel_program_free(p);
            p = NULL;
            etext = xstrdup(e.msg);
        }
    }
    if (!p) {
        cel_env_free(sel);
        cel_env_free(any);
        /* upstream's CompilationResult.Error.Detail: "compilation failed: " before
         * cel-go's issues, nothing before its own output type check */
        char *msg = xmalloc(strlen(etext) + 32);
        sprintf(msg, "%s%s", strncmp(etext, "ERROR:", 6) ? "" : "compilation failed: ", etext);
        free(etext);
        json_object_set_new(o, "error", json_string(msg));
        free(msg);
        json_object_set_new(o, "errorKind", json_string("compile"));
        json_object_set_new(o, "costLimit", json_integer(CEL_MAX_COST));
        json_object_set_new(o, "tooComplex", json_false());
        return o;
    }
    uint64_t est = cel_program_estimated_cost(p);
    char *text = NULL;
    bool ok;
    if (selector) {
        cel_result r = cel_eval_bool(p, d, x, &e);
        ok = r != CEL_ERROR;
        if (ok) text = xstrdup(r == CEL_TRUE ? "true" : "false");
    } else {
        text = cel_eval_format_alloc(p, d, x, &e);
        ok = text != NULL;
    }
    if (ok) {
        json_object_set_new(o, "value", json_string(text));
    } else {
        cel_enhance_runtime_error(&e);
        json_object_set_new(o, "error", json_string(e.msg));
        json_object_set_new(o, "errorKind", json_string("runtime"));
    }
    free(text);
    json_object_set_new(o, "cost", json_integer((json_int_t)cel_eval_ctx_cost(x)));
    /* past int64 (jansson's integer) the exact figure goes in as text, written out as
     * a JSON number by print_json: cel-go saturates at 2^64-1, and says so */
    if (est > INT64_MAX) {
        char big[24];
        snprintf(big, sizeof big, "%llu", (unsigned long long)est);
        json_object_set_new(o, "estimatedCost", json_string(big));
    } else {
        json_object_set_new(o, "estimatedCost", json_integer((json_int_t)est));
    }
    json_object_set_new(o, "costLimit", json_integer(CEL_MAX_COST));
    json_object_set_new(o, "tooComplex", json_boolean(est > CEL_MAX_COST));
    cel_program_free(p);
    cel_env_free(sel);
    cel_env_free(any);
    return o;
}

/* Prints o on one line; an "estimatedCost" held as text (above int64) is printed as
 * the unsigned JSON number it is. */
static void print_json(json_t *o) {
    const char *big = json_string_value(json_object_get(o, "estimatedCost"));
    char num[24] = "";
    if (big) {
        snprintf(num, sizeof num, "%s", big);
        json_object_set_new(o, "estimatedCost", json_integer(0));
    }
    char *s = json_dumps(o, JSON_COMPACT);
    const char *at = big ? strstr(s, "\"estimatedCost\":0") : NULL;
    if (at) {
        size_t pre = (size_t)(at - s) + strlen("\"estimatedCost\":");
        printf("%.*s%s%s\n", (int)pre, s, num, at + strlen("\"estimatedCost\":0"));
    } else {
        puts(s);
    }
    free(s);
}

/* --stdin: JSON Lines of {"expr": EXPR, "device": DEVICE}, one answer line each (the
 * -o json object, or {"inputError": "..."} for a line that is not such an object;
 * cmd/jsonl.h). */
static json_t *cel_line(json_t *in, const char *where, char *msg, size_t nmsg, void *ud) {
    (void)ud;
    const char *expr = json_string_value(json_object_get(in, "expr"));
    if (!expr) return snprintf(msg, nmsg, "%s: expr: required string", where), NULL;
    intern_table *t = intern_new();
    arena a;
    arena_init(&a, 0);
    cel_device d;
    json_t *out = NULL;
    if (device_from_json(json_object_get(in, "device"), where, &a, t, &d, msg, nmsg)) {
        cel_eval_ctx *x = cel_eval_ctx_new();
        out = eval_json(t, expr, &d, x);
        cel_eval_ctx_free(x);
    }
    arena_free(&a);
    intern_free(t);
    return out;
}

/* --slice FILE --device NAME: the device as the allocator sees it, decoded by the
 * engine from ResourceSlice objects (a file or a directory, YAML or JSON). */
static int cel_eval_slice(const char *expr, const char *path, const char *devname) {
    if (!devname) {
        fprintf(stderr, "dralloc cel: --slice needs --device NAME\n");
        return 2;
    }
    err e;
    err_clear(&e);
    char msg[ERR_OBJECT_MAX + ERR_PATH_MAX + ERR_MSG_MAX + 8];
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new_with(&f, &(dra_store_opts){.one_shot = true});
    dra_snapshot *snap = NULL;
    int rc = 2;
    if (!dra_store_load_paths(st, &path, 1, &e)) {
        fprintf(stderr, "dralloc cel: %s\n", err_format(&e, msg, sizeof msg));
        goto out;
    }
    snap = dra_store_acquire(st);
    const dra_world *w = dra_snapshot_world(snap);
    const char *driver = NULL, *pool = NULL;
    const cel_device *d = dra_world_find_device(w, NULL, devname, &driver, &pool);
    if (!d) {
        fprintf(stderr, "dralloc cel: no device named %s in the ResourceSlices of %s\n", devname, path);
        goto out;
    }
    size_t n = strlen(driver) + strlen(pool) + strlen(devname) + 3;
    char *where = xmalloc(n);
    snprintf(where, n, "%s/%s/%s", driver, pool, devname);
    rc = compile_and_print(dra_world_cel_env(w), expr, d, where);
    free(where);
out:
    dra_snapshot_release(snap);
    dra_store_free(st);
    return rc;
}

typedef struct cel_args {
    const char *expr, *devjson, *slice, *devname;
    bool as_json, from_stdin;
} cel_args;

/* EXPR: one ("-" is none: stdin is --stdin) */
static int cel_word(void *opts, const char *w) {
    cel_args *c = opts;
    if (c->expr || !strcmp(w, "-")) return CMD_PARSE_UNKNOWN;
    c->expr = w;
    return CMD_PARSE_OK;
}

/* -o json, the only output besides the default text */
static int read_output(const cmd_flag_use *u) {
    if (strcmp(u->value, "json")) return CMD_PARSE_UNKNOWN;
    *(bool *)u->field = true;
    return CMD_PARSE_OK;
}

static const cmd_flag cel_flags[] = {
    {.name = "--device-json", .kind = CMD_STRING, .off = offsetof(cel_args, devjson)},
    {.name = "--slice", .kind = CMD_STRING, .off = offsetof(cel_args, slice)},
    {.name = "--device", .kind = CMD_STRING, .off = offsetof(cel_args, devname)},
    {.name = "--output", .shorthand = "-o", .kind = CMD_FUNC, .off = offsetof(cel_args, as_json), .fn = read_output},
    {.name = "--stdin", .kind = CMD_BOOL, .off = offsetof(cel_args, from_stdin)},
};

/* Every mistake answers the usage on stderr, exit 2 (--help too: the oracle harness's
 * contract); `--` makes the next word EXPR even when it starts with '-' (`-1 + 2`),
 * flags may still follow it. */
static const cmd_flags cel_spec = {
    .prog = "dralloc cel eval",
    .flags = cel_flags,
    .nflags = sizeof cel_flags / sizeof cel_flags[0],
    .word = cel_word,
    .usage = usage_to,
    .usage_after_unknown = true,
    .no_help = true,
    .dashdash = CMD_DASHDASH_NEXT,
};

static int cel_eval_cmd(int argc, char **argv) {
    cel_args c = {0};
    if (cmd_flags_parse(&cel_spec, argc, argv, &c)) return 2;
    const char *expr = c.expr, *devjson = c.devjson, *slice = c.slice, *devname = c.devname;
    bool as_json = c.as_json, from_stdin = c.from_stdin;
    if (from_stdin) return expr || devjson || slice ? usage() : cmd_jsonl_answer(cel_line, NULL, "inputError", print_json);
    if (!expr || (!devjson && !slice)) return usage();
    if (slice) return cel_eval_slice(expr, slice, devname);
    intern_table *t = intern_new();
    arena a;
    arena_init(&a, 0);
    cel_device d;
    int rc = 2;
    cel_env *env = NULL;
    if (!load_device(devjson, &a, t, &d)) goto out;
    if (as_json) {
        cel_eval_ctx *x = cel_eval_ctx_new();
        json_t *o = eval_json(t, expr, &d, x);
        rc = json_object_get(o, "error") ? 1 : 0;
        print_json(o);
        json_decref(o);
        cel_eval_ctx_free(x);
    } else {
        env = cel_env_new_dra_any(t);
        rc = compile_and_print(env, expr, &d, NULL);
    }
out:
    cel_env_free(env);
    arena_free(&a);
    intern_free(t);
    return rc;
}

int cmd_cel(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "eval")) return cel_eval_cmd(argc - 1, argv + 1);
    return usage();
}
