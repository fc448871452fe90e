/* test_eval_memory.c — an evaluation context's memory stays flat however many
 * evaluations it runs: each evaluation resets the context's arena to the mark taken
 * when the context was made, and that reset must give back everything the
 * evaluation allocated, the oversized blocks of large lists included (they were
 * once kept: 20,000 evaluations of the selector below grew to 1.25 GB). */
#include <criterion/criterion.h>

#include "tests/cel/cel_helpers.h"

#include <stdlib.h>

/* `[1,1,...,1].map(x, x+1).size() > 0` with n elements: a legal selector (4,000
 * elements are 8 KB of text) whose evaluation builds a list of n values by doubling,
 * i.e. several blocks larger than the arena's block size. */
static char *mapped_list_selector(int n) {
    size_t cap = (size_t)n * 2 + 64;
    char *s = malloc(cap);
    size_t k = 0;
    s[k++] = '[';
    for (int i = 0; i < n; i++) {
        if (i) s[k++] = ',';
        s[k++] = '1';
    }
    k += (size_t)snprintf(s + k, cap - k, "].map(x, x + 1).size() > 0");
    cr_assert_lt(k, cap);
    return s;
}

Test(eval_memory, repeated_evaluation_stays_flat) {
    fixture f;
    fx_init(&f);
    char *expr = mapped_list_selector(4000);
    cr_assert_leq(strlen(expr), CEL_MAX_EXPRESSION_LEN);
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(f.env, expr, strlen(expr), &e);
    cr_assert_not_null(p, "%s", e.msg);
    const arena *a = cel__eval_ctx_arena(f.ctx);
    for (int i = 0; i < 10; i++) cr_assert_eq(cel_eval_bool(p, &f.dev, f.ctx, &e), CEL_TRUE, "%s", e.msg);
    size_t warm = arena_bytes_reserved(a);
    /* fewer than the 20,000 of the report: the sanitizer build is slow, and the
     * leak was per evaluation (~100 KB each), so 2,000 show it as well */
    for (int i = 0; i < 2000; i++) cr_assert_eq(cel_eval_bool(p, &f.dev, f.ctx, &e), CEL_TRUE, "%s", e.msg);
    size_t after = arena_bytes_reserved(a);
    cr_expect_leq(after, warm + warm / 10, "reserved %zu bytes after warm-up, %zu after 2,000 more evaluations",
                  warm, after);
    cel_program_free(p);
    free(expr);
    fx_fini(&f);
}
