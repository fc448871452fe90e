/* test_hostile.c — CEL text built to hurt: one byte over the length limit, nesting
 * past the parser's recursion limit, numbers that overflow while parsing. Clear
 * compile or runtime errors, never a crash. Inputs the fuzzer found are also under
 * tests/fuzz/regressions/cel/. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "cel_helpers.h"

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
    cr_assert_str_eq(fx_eval(&f, "duration('-300055555555555555555550000000s')"),
                     "error: duration(\"-300055555555555555555550000000s\"): invalid or out of range");
    cr_assert_str_eq(fx_eval(&f, "duration('99999999999999999999999999999h')"),
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
