/* cel_helpers.h — shared fixtures for the CEL unit tests: a DRA environment over a
 * small GPU device, and one-call helpers that compile + evaluate an expression and
 * return its printed result or error text. */
#ifndef DRA_TESTS_CEL_HELPERS_H
#define DRA_TESTS_CEL_HELPERS_H

#include "cel/cel.h"
#include "cel/env_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct fixture {
    intern_table *names;
    cel_env *env;       /* selectors: bool result */
    cel_env *any;       /* any result type */
    cel_eval_ctx *ctx;
    cel_attr attrs[8];
    cel_capacity caps[2];
    semver cc;          /* the values the views refer to */
    quantity memory;
    cel_device dev;
    char out[4096];
} fixture;

static inline void fx_init(fixture *f) {
    memset(f, 0, sizeof *f);
    f->names = intern_new();
    f->env = cel_env_new_dra(f->names);
    f->any = cel_env_new_dra_any(f->names);
    f->ctx = cel_eval_ctx_new();
    uint32_t dom = intern_cstr(f->names, "gpu.example.com");
    int n = 0;
    cel_attr *a = f->attrs;
    a[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, "type"), .kind = CEL_ATTR_STRING};
    static const cel_str gpu = {.s = "gpu", .len = 3}, root = {.s = "pci0000:40", .len = 10};
    a[n++].u.s = &gpu;
    a[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, "index"), .kind = CEL_ATTR_INT};
    a[n++].u.i = 3;
    a[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, "mig"), .kind = CEL_ATTR_BOOL};
    a[n++].u.b = false;
    a[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, "cc"), .kind = CEL_ATTR_VERSION};
    semver_parse("9.0.0", 5, &f->cc, NULL);
    a[n++].u.v = &f->cc;
    static const cel_str models[] = {{.s = "a100", .len = 4}, {.s = "h100", .len = 4}};
    static const cel_attr_list model_list = {.count = 2, .strs = models};
    a[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, "models"), .kind = CEL_ATTR_STRINGS};
    a[n++].u.list = &model_list;
    a[n] = (cel_attr){.domain = intern_cstr(f->names, "resource.kubernetes.io"),
                      .name = intern_cstr(f->names, "pcieRoot"), .kind = CEL_ATTR_STRING};
    a[n++].u.s = &root;
    f->caps[0] = (cel_capacity){.domain = dom, .name = intern_cstr(f->names, "memory"), .value = &f->memory};
    f->memory = quantity_must("80Gi");
    f->dev.driver = (cel_str){.s = "gpu.example.com", .len = 15};
    f->dev.driver_id = dom;
    f->dev.attrs = f->attrs;
    f->dev.nattrs = (uint32_t)n;
    f->dev.caps = f->caps;
    f->dev.ncaps = 1;
}

static inline void fx_fini(fixture *f) {
    cel_eval_ctx_free(f->ctx);
    cel_env_free(f->env);
    cel_env_free(f->any);
    intern_free(f->names);
}

/* "compile: <msg>", "error: <msg>" or the printed value. */
static inline const char *fx_eval(fixture *f, const char *expr) {
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(f->any, expr, strlen(expr), &e);
    if (!p) {
        snprintf(f->out, sizeof f->out, "compile: %s", e.msg);
        return f->out;
    }
    if (!cel__eval_format(p, &f->dev, f->ctx, f->out, sizeof f->out, &e))
        snprintf(f->out, sizeof f->out, "error: %s", e.msg);
    cel_program_free(p);
    return f->out;
}

/* Selector evaluation in the bool-only environment; -2 on a compile error. */
static inline int fx_sel(fixture *f, const char *expr, err *e) {
    err_clear(e);
    cel_program *p = cel_compile(f->env, expr, strlen(expr), e);
    if (!p) return -2;
    cel_result r = cel_eval_bool(p, &f->dev, f->ctx, e);
    cel_program_free(p);
    return (int)r;
}

#endif
