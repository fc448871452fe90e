/* test_fused.c — compile.c's fused selector instructions (OP_CAP_CMPK, OP_ATTR_VCMPK,
 * OP_ATTR_ICMPK, OP_ATTR_PREFIXK/SUFFIXK) against the trees they replace: every shape,
 * every comparison, on devices where the fast path applies and where it must not
 * (missing keys, values of another kind, long and multi-byte strings), at top level
 * and inside a loop. The value or error text and the runtime cost must be the same
 * with fusing on and off (cel_env_opts.no_fuse). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cel_helpers.h"
#include "cel/program_internal.h"

static const char *const exprs[] = {
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) == 0",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) != 0",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"100Gi\")) < 0",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) <= -1",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"1\")) > 0",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"1\")) == 5",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"1\")) < 9223372036854775807",
    "device.capacity[\"gpu.example.com\"].memory.isGreaterThan(quantity(\"79Gi\"))",
    "device.capacity[\"gpu.example.com\"].memory.isLessThan(quantity(\"79Gi\"))",
    "device.capacity[\"gpu.example.com\"].nope.isLessThan(quantity(\"79Gi\"))",
    "device.capacity[\"other.example.com\"].memory.compareTo(quantity(\"1\")) > 0",
    "device.attributes[\"gpu.example.com\"].cc.compareTo(semver(\"8.0.0\")) > 0",
    "device.attributes[\"gpu.example.com\"].cc.compareTo(semver(\"9.0.0\")) == 0",
    "device.attributes[\"gpu.example.com\"].cc.compareTo(semver(\"10.0.0\")) >= 0",
    "device.attributes[\"gpu.example.com\"].cc.isGreaterThan(semver(\"9.0.0-rc.1\"))",
    "device.attributes[\"gpu.example.com\"].cc.isLessThan(semver(\"9.0.1\"))",
    "device.attributes[\"gpu.example.com\"].index < 4",
    "device.attributes[\"gpu.example.com\"].index <= 3",
    "device.attributes[\"gpu.example.com\"].index > -1",
    "device.attributes[\"gpu.example.com\"].index >= 9223372036854775807",
    "device.attributes[\"gpu.example.com\"].index == 3",
    "device.attributes[\"gpu.example.com\"].index != 3",
    "device.attributes[\"gpu.example.com\"].type.startsWith(\"gp\")",
    "device.attributes[\"gpu.example.com\"].type.startsWith(\"\")",
    "device.attributes[\"gpu.example.com\"].type.startsWith(\"gpu-and-more\")",
    "device.attributes[\"gpu.example.com\"].type.endsWith(\"pu\")",
    "device.attributes[\"gpu.example.com\"].type.endsWith(\"x\")",
    "device.attributes[\"gpu.example.com\"].nope.startsWith(\"a\")",
    "device.attributes[\"gpu.example.com\"].nope < 4",
    "device.attributes[\"gpu.example.com\"].type in [\"cpu\", \"gpu\"]",
    "device.attributes[\"gpu.example.com\"].type in [\"cpu\", \"tpu\", \"\"]",
    "device.attributes[\"gpu.example.com\"].type in []",
    "device.attributes[\"gpu.example.com\"].nope in [\"a\"]",
    "[1, 2, 3, 4, 5].all(i, device.attributes[\"gpu.example.com\"].index < i)",
    "lists.range(3000).all(i, device.attributes[\"gpu.example.com\"].type in [\"a\", \"b\", \"c\", \"d\", \"e\"])",
    "[1, 2, 3].exists(i, device.attributes[\"gpu.example.com\"].type.startsWith(\"g\"))",
    "[1, 2, 3].map(i, device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) > i)",
};

/* The fixture's device, then variants where the fast path must step aside. */
/* NO_IDS: a view without a driver id; LONG_COUNTED: the long string with its code points counted (cel_str_of) */
enum { PLAIN, NO_CAPS, OTHER_KINDS, LONG_STRINGS, NO_IDS, LONG_COUNTED, NVARIANTS };

static void variant(fixture *f, int v, cel_attr *attrs, cel_device *d) {
    static const cel_str word = {.s = "gpu", .len = 3},
                         longs = {.s = "gpu-\xc3\xa9\xc3\xa9\xc3\xa9-with-a-name-longer-than-ten", .len = 38};
    static cel_str counted;
    counted = cel_str_of(longs.s, longs.len);
    cr_assert_eq(counted.runes, 35, "38 bytes, three of them 2-byte code points");
    *d = f->dev;
    if (v == NO_IDS) d->driver_id = 0;
    memcpy(attrs, f->dev.attrs, sizeof(cel_attr) * f->dev.nattrs);
    d->attrs = attrs;
    for (uint32_t i = 0; i < d->nattrs; i++) {
        cel_attr *a = &attrs[i];
        const char *name = intern_str(f->names, a->name);
        if (v == NO_CAPS) d->ncaps = 0;
        if (v == OTHER_KINDS && !strcmp(name, "index")) a->kind = CEL_ATTR_STRING, a->u.s = &word;
        if (v == OTHER_KINDS && !strcmp(name, "type")) a->kind = CEL_ATTR_INT, a->u.i = 7;
        if (v == OTHER_KINDS && !strcmp(name, "cc")) a->kind = CEL_ATTR_STRING, a->u.s = &word;
        if (v == LONG_STRINGS && !strcmp(name, "type")) a->u.s = &longs;
        if (v == LONG_COUNTED && !strcmp(name, "type")) a->u.s = &counted;
    }
}

static void run(const cel_env *env, const char *src, const cel_device *d, cel_eval_ctx *x, char *out, size_t n,
                uint64_t *cost) {
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(env, src, strlen(src), &e);
    *cost = 0;
    if (!p) {
        snprintf(out, n, "compile: %s", e.msg);
        return;
    }
    if (!cel__eval_format(p, d, x, out, n, &e)) snprintf(out, n, "error: %s", e.msg);
    *cost = x->cost;
    cel_program_free(p);
}

Test(fused, same_value_error_and_cost_as_the_tree) {
    fixture f;
    fx_init(&f);
    cel_env_opts o = {.dra = true, .any_result = true, .no_fuse = true};
    cel_env *tree = cel__env_new_opts(f.names, &o);
    size_t fast = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        cel_attr attrs[16];
        cel_device d;
        variant(&f, v, attrs, &d);
        for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
            char a[1100], b[1100];   /* room for "compile: " or "error: " and a whole message */
            uint64_t ca, cb;
            run(f.any, exprs[i], &d, f.ctx, a, sizeof a, &ca);
            run(tree, exprs[i], &d, f.ctx, b, sizeof b, &cb);
            cr_assert_str_eq(a, b, "variant %d, %s", v, exprs[i]);
            cr_assert_eq(ca, cb, "variant %d, %s: cost %llu fused, %llu as a tree", v, exprs[i], (unsigned long long)ca,
                         (unsigned long long)cb);
            fast += v == PLAIN && !strstr(a, "error");
        }
    }
    cr_assert_gt(fast, 25, "most shapes evaluate on the plain device");
    cel_env_free(tree);
    fx_fini(&f);
}

/* The shapes really are fused (else the test above compares a tree with itself). */
Test(fused, the_shapes_compile_to_one_instruction) {
    fixture f;
    fx_init(&f);
    static const struct { const char *src; int op; } want[] = {
        {"device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0", OP_CAP_CMPK},
        {"device.capacity[\"gpu.example.com\"].memory.isGreaterThan(quantity(\"40Gi\"))", OP_CAP_CMPK},
        {"device.attributes[\"gpu.example.com\"].cc.compareTo(semver(\"8.0.0\")) > 0", OP_ATTR_VCMPK},
        {"device.attributes[\"gpu.example.com\"].cc.isLessThan(semver(\"8.0.0\"))", OP_ATTR_VCMPK},
        {"device.attributes[\"gpu.example.com\"].index < 4", OP_ATTR_ICMPK},
        {"device.attributes[\"gpu.example.com\"].type.startsWith(\"g\")", OP_ATTR_PREFIXK},
        {"device.attributes[\"gpu.example.com\"].type.endsWith(\"g\")", OP_ATTR_SUFFIXK},
        {"device.attributes[\"gpu.example.com\"].type in [\"a\", \"b\"]", OP_ATTR_INK},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        err e;
        err_clear(&e);
        cel_program *p = cel_compile(f.any, want[i].src, strlen(want[i].src), &e);
        cr_assert(p, "%s", e.msg);
        cr_assert_eq(p->root->op, want[i].op, "%s: op %d", want[i].src, p->root->op);
        cel_program_free(p);
    }
    fx_fini(&f);
}

/* cel_eval_bool's predicate path (eval.c) against the ordinary evaluation of the
 * same program (cel__eval_value): the same answer or error text and the same cost,
 * for && / || of every device test, on every device variant. */
static const char *const preds[] = {
    "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].type == \"gpu\"",
    "device.driver != \"gpu.example.com\" || device.attributes[\"gpu.example.com\"].type != \"gpu\"",
    "device.attributes[\"gpu.example.com\"].type == \"gpu-\xc3\xa9\xc3\xa9\xc3\xa9-with-a-name-longer-than-ten\"",
    "device.attributes[\"gpu.example.com\"].index == \"3\" || device.attributes[\"gpu.example.com\"].nope == \"x\"",
    "device.attributes[\"gpu.example.com\"].nope == \"x\" && device.driver == \"other\"",
    "device.driver == \"other\" && device.attributes[\"gpu.example.com\"].nope == \"x\"",
    "\"gpu.example.com\" in device.attributes && !device.attributes[\"gpu.example.com\"].mig",
    "!device.attributes[\"gpu.example.com\"].type",
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0 && "
    "device.attributes[\"gpu.example.com\"].index < 4",
    "device.attributes[\"gpu.example.com\"].cc.isGreaterThan(semver(\"8.0.0\")) || "
    "device.attributes[\"gpu.example.com\"].type.startsWith(\"g\")",
    "device.driver == \"gpu.example.com\" && (device.attributes[\"gpu.example.com\"].type == \"x\" || "
    "device.attributes[\"gpu.example.com\"].type.endsWith(\"ten\")) && device.capacity[\"gpu.example.com\"].memory."
    "isLessThan(quantity(\"100Gi\"))",
    "device.attributes[\"gpu.example.com\"].index > 2 || device.attributes[\"gpu.example.com\"].type.startsWith(\"x\")",
    "device.driver == \"gpu.example.com\" && device.attributes[\"gpu.example.com\"].type in [\"Hopper\", \"gpu\"]",
    "device.attributes[\"gpu.example.com\"].index in [\"3\"] || device.attributes[\"gpu.example.com\"].type in [\"x\"]",
    /* equality chains (eval.c's pred_eqs): string and other kinds, missing keys, !=, long constants */
    "device.driver == \"gpu.example.com\"",
    "device.driver != \"other\" && device.attributes[\"gpu.example.com\"].type != \"mig\" && "
    "device.attributes[\"gpu.example.com\"].index == \"3\"",
    "device.attributes[\"gpu.example.com\"].type == \"gpu\" && device.attributes[\"gpu.example.com\"].nope == \"x\"",
    "device.driver == \"other\" && device.attributes[\"gpu.example.com\"].nope == \"x\" && device.driver == \"x\"",
    "device.attributes[\"gpu.example.com\"].type == \"gpu-\xc3\xa9\xc3\xa9\xc3\xa9-with-a-name-longer-than-ten\" && "
    "device.driver == \"gpu.example.com\"",
    "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci0000:40\" && device.attributes[\"gpu.example.com\"].type "
    "== \"gpu\"",
};

Test(fused, predicate_path_agrees_with_the_full_evaluation) {
    fixture f;
    fx_init(&f);
    size_t on_path = 0, eq_chains = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        cel_attr attrs[16];
        cel_device d;
        variant(&f, v, attrs, &d);
        for (size_t i = 0; i < sizeof preds / sizeof preds[0]; i++) {
            err e;
            err_clear(&e);
            cel_program *p = cel_compile(f.env, preds[i], strlen(preds[i]), &e);
            cr_assert(p, "%s: %s", preds[i], e.msg);
            on_path += p->pred;
            eq_chains += p->pred_eqs != NULL;
            err_clear(&e);
            cel_result r = cel_eval_bool(p, &d, f.ctx, &e);
            uint64_t cost = f.ctx->cost;
            char got[1100], want[1100];
            snprintf(got, sizeof got, "%s", r == CEL_TRUE ? "true" : r == CEL_FALSE ? "false" : e.msg);
            cel_value w = cel__eval_value(p, &d, NULL, f.ctx);
            snprintf(want, sizeof want, "%s", w.kind == CV_BOOL ? (w.u.b ? "true" : "false") : w.u.s);
            cr_assert_str_eq(got, want, "variant %d, %s", v, preds[i]);
            cr_assert_eq(cost, f.ctx->cost, "variant %d, %s: cost %llu on the predicate path, %llu in full", v, preds[i],
                         (unsigned long long)cost, (unsigned long long)f.ctx->cost);
            cel_program_free(p);
        }
    }
    cr_assert_eq(on_path, NVARIANTS * (sizeof preds / sizeof preds[0]), "every one has the predicate shape");
    cr_assert_eq(eq_chains, NVARIANTS * 10, "ten are equality chains (the &&'d driver / attribute string tests)");
    fx_fini(&f);
}
