/* test_hostile.c — CEL text built to hurt: one byte over the length limit, nesting
 * past the parser's recursion limit, numbers that overflow while parsing. Clear
 * compile or runtime errors, never a crash. Inputs the fuzzer found are also under
 * tests/fuzz/regressions/cel/. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cel_helpers.h"
#include "cel/program_internal.h"

static char *nested(const char *open, int n, const char *mid, const char *close) {
    char *s = malloc(n * (strlen(open) + strlen(close)) + strlen(mid) + 1), *p = s;
    for (int i = 0; i < n; i++) p = stpcpy(p, open);
    p = stpcpy(p, mid);
    for (int i = 0; i < n; i++) p = stpcpy(p, close);
    return s;
}

Test(hostile, expression_of_10KiB_plus_one_byte) {
    fixture f;
    fx_init(&f);
    char *s = malloc(CEL_MAX_EXPRESSION_LEN + 2);
    const char *head = "device.driver == \"";
    strcpy(s, head);
    memset(s + strlen(head), 'a', CEL_MAX_EXPRESSION_LEN - strlen(head) - 1);
    strcpy(s + CEL_MAX_EXPRESSION_LEN - 1, "\"");
    cr_assert_eq(strlen(s), CEL_MAX_EXPRESSION_LEN);
    err e;
    cr_assert_eq(fx_sel(&f, s, &e), CEL_FALSE, "%s", e.msg);
    s[CEL_MAX_EXPRESSION_LEN - 1] = 'a';
    strcpy(s + CEL_MAX_EXPRESSION_LEN, "\"");
    cr_assert_eq(fx_sel(&f, s, &e), -2);
    cr_assert_str_eq(e.msg, "Too long: may not be more than 10240 bytes");
    free(s);
    fx_fini(&f);
}

Test(hostile, deep_nesting_hits_the_recursion_limit) {
    fixture f;
    fx_init(&f);
    static const char *const shapes[][3] = {
        {"(", "true", ")"}, {"[", "1", "]"}, {"{1: ", "2", "}"}, {"size(", "\"a\"", ")"}, {"-(", "1", ")"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char *s = nested(shapes[i][0], 2000, shapes[i][1], shapes[i][2]);
        if (strlen(s) > CEL_MAX_EXPRESSION_LEN) s[CEL_MAX_EXPRESSION_LEN] = '\0';   /* under the length limit */
        err e;
        cr_assert_eq(fx_sel(&f, s, &e), -2, "%s", shapes[i][0]);
        cr_assert(strstr(e.msg, "expression recursion limit exceeded: 250") || strstr(e.msg, "ERROR: <input>"), "%s: %s",
                  shapes[i][0], e.msg);
        free(s);
    }
    /* the limit itself is not an error */
    char *s = nested("(", 100, "true", ")");
    err e;
    cr_assert_eq(fx_sel(&f, s, &e), CEL_TRUE, "%s", e.msg);
    free(s);
    fx_fini(&f);
}

/* Found by fuzz_cel: the digits of a duration overflowed a 128-bit multiplication. */
Test(hostile, duration_digits_overflow) {
    fixture f;
    fx_init(&f);
    /* not literals: a literal argument is rejected by the duration literal validator */
    cr_assert_str_eq(fx_eval(&f, "duration('-300055555555555555555550000000' + 's')"),
                     "error: duration(\"-300055555555555555555550000000s\"): invalid or out of range");
    cr_assert_str_eq(fx_eval(&f, "duration('99999999999999999999999999999' + 'h')"),
                     "error: duration(\"99999999999999999999999999999h\"): invalid or out of range");
    fx_fini(&f);
}

/* Found by fuzz_decode_json: a device without attributes has attrs == NULL, and the
 * attribute lookup computed NULL + 0 (undefined; clang's UBSan stops there). */
Test(hostile, device_without_attributes) {
    fixture f;
    fx_init(&f);
    f.dev.attrs = NULL;
    f.dev.nattrs = 0;
    err e;
    cr_assert_eq(fx_sel(&f, "device.attributes[\"gpu.example.com\"].index > 2", &e), CEL_ERROR);
    cr_assert_str_eq(e.msg, "no such key: index");
    cr_assert_eq(fx_sel(&f, "!has(device.attributes[\"gpu.example.com\"].index)", &e), CEL_TRUE, "%s", e.msg);
    fx_fini(&f);
}

/* optMap/optFlatMap use their target twice (`t.hasValue() ? ... t.value() ...`);
 * cel-go copies it (meh.Copy in its optMap macro), so a chain of n is 2^n nodes to
 * cel-go. Found by fuzz_cel: 20 chained optFlatMaps took 26 s and 2.5 GB to compile
 * here, every walk (check, estimate, build) seeing the shared target as two trees.
 * The hand-written expansion is the differential: the same estimated cost, runtime
 * cost and value as the macro, for every n the length limit allows. */
static char *opt_chain(int n) {
    char *s = malloc(32 + 20 * (size_t)n), *p = stpcpy(s, "optional.of(1)");
    for (int i = 0; i < n; i++) p = stpcpy(p, ".optMap(x, x + 1)");
    return s;
}
static char *opt_expanded(int n) {
    if (!n) return strdup("optional.of(1)");
    char *t = opt_expanded(n - 1);
    size_t len = 2 * strlen(t) + 96;
    char *s = malloc(len);
    snprintf(s, len, "(%s.hasValue() ? optional.of(cel.bind(x, %s.value(), x + 1)) : optional.none())", t, t);
    free(t);
    return s;
}

Test(hostile, opt_map_chain_is_costed_as_cel_go_copies_it) {
    fixture f;
    fx_init(&f);
    for (int n = 1; n <= 6; n++) {
        char *m = opt_chain(n), *h = opt_expanded(n);
        cr_assert_lt(strlen(h), CEL_MAX_EXPRESSION_LEN);
        uint64_t cost[2], run[2];
        char val[2][64];
        for (int k = 0; k < 2; k++) {
            const char *src = k ? h : m;
            err e;
            err_clear(&e);
            cel_program *p = cel_compile(f.any, src, strlen(src), &e);
            cr_assert(p, "%s: %s", src, e.msg);
            cost[k] = cel_program_estimated_cost(p);
            cr_assert(cel__eval_format(p, &f.dev, f.ctx, val[k], sizeof val[k], &e), "%s", e.msg);
            run[k] = f.ctx->cost;
            cel_program_free(p);
        }
        char want[32];
        snprintf(want, sizeof want, "optional.of(%d)", n + 1);
        cr_assert_str_eq(val[0], want, "n=%d", n);
        cr_assert_str_eq(val[1], want, "n=%d", n);
        cr_assert_eq(cost[0], cost[1], "n=%d: estimated %llu for the macro, %llu written out", n,
                     (unsigned long long)cost[0], (unsigned long long)cost[1]);
        cr_assert_eq(run[0], run[1], "n=%d: runtime cost %llu for the macro, %llu written out", n,
                     (unsigned long long)run[0], (unsigned long long)run[1]);
        if (n > 1) cr_assert_gt(cost[0], 2 * 10, "n=%d: the estimate doubles per link", n);
        free(m);
        free(h);
    }
    fx_fini(&f);
}

Test(hostile, opt_map_chain_of_200_compiles_in_linear_time) {
    fixture f;
    fx_init(&f);
    char *m = opt_chain(200);   /* 2^200 nodes as cel-go sees it; 250 links is the recursion limit */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(f.any, m, strlen(m), &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert(p, "%s", e.msg);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(s, 1.0, "compile took %.3f s", s);
    cr_assert_eq(cel_program_estimated_cost(p), UINT64_MAX, "the estimate saturates");
    /* evaluation walks the uses too, and the runtime cost limit stops it */
    char out[256];
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_not(cel__eval_format(p, &f.dev, f.ctx, out, sizeof out, &e));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert(strstr(e.msg, "cost limit"), "%s", e.msg);
    s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(s, 2.0, "evaluation took %.3f s", s);
    cel_program_free(p);
    /* a selector: rejected at validation, as Kubernetes would */
    err_clear(&e);
    char *sel = malloc(strlen(m) + 32);
    sprintf(sel, "%s.value() > 0", m);
    cr_assert_not(cel__validate_selector(f.env, sel, strlen(sel), &e));
    cr_assert(strstr(e.msg, CEL_TOO_COMPLEX_MSG), "%s", e.msg);
    free(sel);
    free(m);
    fx_fini(&f);
}

/* "%.<p>f".format([v]) evaluated to the C string it prints, quotes removed; caller frees. */
static char *format_prec(fixture *f, char verb, int prec, const char *v) {
    char src[96];
    snprintf(src, sizeof src, "\"%%.%d%c\".format([%s])", prec, verb, v);
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(f->any, src, strlen(src), &e);
    cr_assert(p, "%s: %s", src, e.msg);
    char *out = cel_eval_format_alloc(p, &f->dev, f->ctx, &e);
    cr_assert(out, "%s: %s", src, e.msg);
    cel_program_free(p);
    size_t n = strlen(out);
    cr_assert(n >= 2 && out[0] == '"' && out[n - 1] == '"', "%.40s", out);
    memmove(out, out + 1, n - 2);
    out[n - 2] = '\0';
    return out;
}

/* A fuzzer's find: "%.83333333f".format([2.5]) took 3.2 s in glibc's printf. cel-go
 * hands "%.<p>f" to Go's fmt.Sprintf, which prints exact digits (as printf does) up to
 * a precision of 10,000,009 and gives up past it (fmt/print.go parsenum: the digits so
 * far may not exceed 1e6 before another is read), printing "%!(NOVERB)" and the value
 * as an unused operand. Past the digits a double's exact expansion can have, the text
 * is zeros, which dralloc writes directly. */
Test(hostile, format_huge_precision_is_exact_and_quick) {
    fixture f;
    fx_init(&f);
    static const char *const vals[] = {"2.5", "-0.1", "5e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
                                       "123.456", "0.0", "-7"};
    static const int precs[] = {0, 6, 766, 767, 768, 1073, 1074, 1075, 1099, 1100, 1101, 1500, 3000};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        for (size_t j = 0; j < sizeof precs / sizeof *precs; j++)
            for (int k = 0; k < 2; k++) {
                char verb = k ? 'e' : 'f';
                char *got = format_prec(&f, verb, precs[j], vals[i]);
                double d = strtod(vals[i], NULL);
                size_t wn = (size_t)snprintf(NULL, 0, k ? "%.*e" : "%.*f", precs[j], d) + 1;
                char *want = malloc(wn);
                snprintf(want, wn, k ? "%.*e" : "%.*f", precs[j], d);
                cr_assert_str_eq(got, want, "%%.%d%c of %s", precs[j], verb, vals[i]);
                free(want);
                free(got);
            }
    /* the largest precision Go's fmt takes: 10 MB of text, in well under a second */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_str_eq(fx_eval(&f, "\"%.10000009f\".format([2.5]).size()"), "10000011");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(s, 1.0, "took %.3f s (release build: 0.01 s; glibc's printf alone: 0.4 s)", s);
    char *big = format_prec(&f, 'e', 10000009, "2.5");
    cr_assert_eq(strlen(big), 10000009 + 6);
    cr_assert(!strncmp(big, "2.5000", 6) && !strcmp(big + 10000009 + 2, "e+00"), "%.8s...%s", big, big + 10000009);
    free(big);
    /* one more, and Go's fmt gives up: the same text here */
    cr_assert_str_eq(fx_eval(&f, "\"%.10000010f\".format([2.5])"), "\"%!(NOVERB)%!(EXTRA float64=2.5)\"");
    cr_assert_str_eq(fx_eval(&f, "\"x%.83333333e y\".format([-1e21])"), "\"x%!(NOVERB)%!(EXTRA float64=-1e+21) y\"");
    cr_assert_str_eq(fx_eval(&f, "\"%.0000000000000000000001f\".format([3])"), "\"3.0\"");
    /* strconv.Atoi's range on a 64-bit int */
    cr_assert_str_eq(fx_eval(&f, "\"%.9223372036854775807f\".format([1.0])"), "\"%!(NOVERB)%!(EXTRA float64=1)\"");
    cr_assert(strstr(fx_eval(&f, "\"%.9223372036854775808f\".format([1.0])"), "value out of range"), "%s", f.out);
    fx_fini(&f);
}
