/* fuzz_cel.c — input: CEL expression text. Compiled in both DRA environments (selector
 * and any-result); what compiles is evaluated on three fixed devices: a plain GPU, one
 * with list-type attributes and one whose conversion failed (conv_error), decoded
 * from a fixed ResourceSlice by the engine. Must never
 * crash, leak or hang: the cost limit has to stop loops, so one evaluation taking more
 * than 3 s aborts the harness. And a differential: compiled without the fused
 * instructions (cel_env_opts.no_fuse), every any-result evaluation must print the
 * same value or error at the same runtime cost. */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "cel/program_internal.h"
#include "engine/world/world.h"

#define NDEV 3

/* The devices come from a ResourceSlice decoded by the engine (dra_world_find_device),
 * so they are exactly what the allocator evaluates selectors on. */
static const char SLICE[] =
    "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.example.com\","
    "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"node-1\",\"devices\":["
    /* a plain GPU */
    "{\"name\":\"gpu\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"index\":{\"int\":3},\"mig\":{\"bool\":false},"
    "\"cc\":{\"version\":\"9.0.0\"},\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:40\"}},"
    "\"capacity\":{\"memory\":{\"value\":\"80Gi\"},\"cores\":{\"value\":\"1500m\"}}},"
    /* list-type attributes */
    "{\"name\":\"lists\",\"allowMultipleAllocations\":true,\"attributes\":{"
    "\"ints\":{\"ints\":[1,-2,9223372036854775807,-9223372036854775808]},\"bools\":{\"bools\":[true,false]},"
    "\"models\":{\"strings\":[\"a100\",\"h100\",\"\"]},\"vers\":{\"versions\":[\"1.2.3-rc.1+b\",\"0.0.1\"]},"
    "\"none\":{\"strings\":[]}}},"
    /* an attribute without a value: every evaluation fails with the conversion error */
    "{\"name\":\"broken\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"empty\":{}}}"
    "]}}";

static struct {
    dra_store *st;
    dra_snapshot *snap;
    const dra_world *w;
    cel_env *sel, *any, *tree;
    cel_eval_ctx *x;
    cel_device dev[NDEV];
} F;

static void setup(void) {
    if (F.w) return;
    dra_features f;
    dra_features_default(&f);
    F.st = dra_store_new_with(&f, &(dra_store_opts){.as_given = true});
    json_t *j = json_loads(SLICE, 0, NULL);
    err e;
    err_clear(&e);
    if (!j || !dra_store_apply_json(F.st, j, &e)) {
        fprintf(stderr, "fuzz_cel: fixed slice: %s\n", e.msg);
        abort();
    }
    json_decref(j);
    F.snap = dra_store_acquire(F.st);
    F.w = dra_snapshot_world(F.snap);
    static const char *const names[NDEV] = {"gpu", "lists", "broken"};
    for (int i = 0; i < NDEV; i++) {
        const cel_device *d = dra_world_find_device(F.w, "s", names[i], NULL, NULL);
        if (!d) abort();
        F.dev[i] = *d;
    }
    if (!F.dev[2].conv_error) abort();
    F.sel = cel_env_new_dra(F.w->names);
    F.any = cel_env_new_dra_any(F.w->names);
    cel_env_opts o = {.dra = true, .any_result = true, .no_fuse = true};
    F.tree = cel__env_new_opts(F.w->names, &o);
    F.x = cel_eval_ctx_new();
}

/* One evaluation must finish within 3 s whatever the expression: the cost limit
 * (CEL_MAX_COST) is what bounds it. The slowest legitimate evaluation is deep
 * equality, which cel-go charges 0.1 per entry: `lists.range(5010).all(i, m == m)`
 * over a 2,660-entry map compares ~10M entries before the limit stops it, 75 ms in
 * the release build and ~1 s under libFuzzer's instrumentation and ASan
 * (regressions/cel/map-equality-at-cost-limit.cel). */
static void check_time(double t0, const char *what, const uint8_t *data, size_t size) {
    double dt = fuzz_now() - t0;
    if (dt > 3.0) {
        fprintf(stderr, "fuzz_cel: %s took %.2fs on %.*s\n", what, dt, (int)(size > 200 ? 200 : size), (const char *)data);
        abort();
    }
}

static void check_err(const err *e, const char *what) {
    if (!e->msg[0]) {
        fprintf(stderr, "fuzz_cel: %s failed without an error message\n", what);
        abort();
    }
}

int fuzz_cel_one(const uint8_t *data, size_t size) {
    setup();
    const char *expr = (const char *)data;
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(F.sel, expr, size, &e);
    if (p) {
        for (int i = 0; i < NDEV; i++) {
            err_clear(&e);
            double t0 = fuzz_now();
            cel_result r = cel_eval_bool(p, &F.dev[i], F.x, &e);
            check_time(t0, "cel_eval_bool", data, size);
            /* the predicate path (eval.c) decides as the full evaluation does */
            uint64_t cost = F.x->cost;
            cel_value w = cel__eval_value(p, &F.dev[i], NULL, F.x);
            if (w.kind == CV_BOOL || w.kind == CV_ERROR) {
                bool same = w.kind == CV_BOOL ? r == (w.u.b ? CEL_TRUE : CEL_FALSE) && cost == F.x->cost
                                              : r == CEL_ERROR && !strcmp(e.msg, w.u.s);
                if (!same) {
                    fprintf(stderr, "fuzz_cel: device %d: cel_eval_bool %d (%s, cost %llu), full evaluation %s (cost %llu)\n",
                            i, (int)r, e.msg, (unsigned long long)cost, w.kind == CV_BOOL ? (w.u.b ? "true" : "false") : w.u.s,
                            (unsigned long long)F.x->cost);
                    abort();
                }
            }
            if (r == CEL_ERROR) {
                check_err(&e, "cel_eval_bool");
                cel_enhance_runtime_error(&e);
            }
        }
        cel_result out[NDEV];
        err_clear(&e);
        double t0 = fuzz_now();
        cel_eval_bool_many(p, F.dev, NDEV, F.x, out, &e, NULL);
        check_time(t0, "cel_eval_bool_many", data, size);
        cel_program_free(p);
    } else {
        check_err(&e, "cel_compile (selector)");
    }

    err_clear(&e);
    p = cel_compile(F.any, expr, size, &e);
    err te;
    err_clear(&te);
    cel_program *tp = cel_compile(F.tree, expr, size, &te);
    if (!p != !tp || (!p && strcmp(e.msg, te.msg))) {
        fprintf(stderr, "fuzz_cel: compiles %s fused, %s as a tree\n%s\n%s\n", p ? "yes" : "no", tp ? "yes" : "no", e.msg,
                te.msg);
        abort();
    }
    if (!p) {
        check_err(&e, "cel_compile (any)");
        return 0;
    }
    for (int i = 0; i < NDEV; i++) {
        char fb[1100], tb[1100];   /* room for "error: " and a whole err message */
        err_clear(&e);
        if (!cel__eval_format(p, &F.dev[i], F.x, fb, sizeof fb, &e)) snprintf(fb, sizeof fb, "error: %s", e.msg);
        uint64_t fc = F.x->cost;
        err_clear(&e);
        if (!cel__eval_format(tp, &F.dev[i], F.x, tb, sizeof tb, &e)) snprintf(tb, sizeof tb, "error: %s", e.msg);
        if (strcmp(fb, tb) || fc != F.x->cost) {
            fprintf(stderr, "fuzz_cel: device %d: fused %s (cost %llu), tree %s (cost %llu)\n", i, fb,
                    (unsigned long long)fc, tb, (unsigned long long)F.x->cost);
            abort();
        }
    }
    cel_program_free(tp);
    char buf[512];
    arena a;
    arena_init(&a, 4096);
    for (int i = 0; i < NDEV; i++) {
        err_clear(&e);
        double t0 = fuzz_now();
        if (!cel__eval_format(p, &F.dev[i], F.x, buf, sizeof buf, &e)) check_err(&e, "cel__eval_format");
        check_time(t0, "cel__eval_format", data, size);
        err_clear(&e);
        cel_attr out;
        t0 = fuzz_now();
        if (!cel_eval_attr(p, &F.dev[i], F.x, i != 0, &a, &out, &e)) check_err(&e, "cel_eval_attr");
        check_time(t0, "cel_eval_attr", data, size);
    }
    arena_free(&a);
    cel_program_free(p);
    return 0;
}

FUZZ_ENTRY(fuzz_cel_one)
