/* lib_test.h — helpers for the library tests (tests/cel/test_lib_*.c): compile an
 * expression in a checked, non-DRA environment (so results of any type can be
 * looked at), evaluate it and render the outcome as one string:
 *   a value          → its CEL literal text ("\"abc\"", "[1, 2]", "true")
 *   a runtime error  → "error: <message>"
 *   a compile error  → "compile: <message>"
 * so that a test reads as `cr_assert_str_eq(ev("'abc'.charAt(1)"), "\"b\"")`.
 * Each call keeps its result in a small ring of static buffers (tests compare a
 * handful at a time). */
#ifndef DRA_TESTS_CEL_LIB_TEST_H
#define DRA_TESTS_CEL_LIB_TEST_H

#include "cel/env_internal.h"
#include "cel/value.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static const char *lt_run(const char *expr, bool no_check) {
    static char ring[8][2048];
    static int slot;
    char *out = ring[slot++ & 7];
    intern_table *names = intern_new();
    cel_env_opts o = {0};
    o.no_check = no_check;
    cel_env *env = cel__env_new_opts(names, &o);
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(env, expr, strlen(expr), &e);
    if (!p) {
        snprintf(out, 2048, "compile: %s", e.msg);
    } else {
        cel_eval_ctx *x = cel_eval_ctx_new();
        cel_value v = cel__eval_value(p, NULL, NULL, x);
        if (v.kind == CV_ERROR) snprintf(out, 2048, "error: %s", v.u.s);
        else cel__value_format(&v, names, out, 2048);
        cel_eval_ctx_free(x);
        cel_program_free(p);
    }
    cel_env_free(env);
    intern_free(names);
    return out;
}

/* Checked evaluation (the Kubernetes way). */
static inline const char *ev(const char *expr) { return lt_run(expr, false); }
/* Unchecked evaluation (type errors surface at run time as "no such overload"). */
static inline const char *ev_dyn(const char *expr) { return lt_run(expr, true); }

/* Asserts that expr evaluates to `want` (rendered as above). */
#define EXPECT(expr, want)                                                \
    do {                                                                  \
        const char *got_ = ev(expr);                                      \
        cr_expect_str_eq(got_, want, "%s\n  got:  %s\n  want: %s", expr, got_, want); \
    } while (0)
#define EXPECT_DYN(expr, want)                                            \
    do {                                                                  \
        const char *got_ = ev_dyn(expr);                                  \
        cr_expect_str_eq(got_, want, "%s\n  got:  %s\n  want: %s", expr, got_, want); \
    } while (0)
/* The expression is a bool expected true. */
#define EXPECT_TRUE(expr) EXPECT(expr, "true")

#endif
