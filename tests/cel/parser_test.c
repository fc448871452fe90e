/* parser_test.c — the CEL lexer and parser: literal forms (bytes, raw, triple
 * quotes, escapes, u suffix, negative int64 minimum), precedence, macros, optional
 * syntax, reserved words, nesting limit, and cel-go's error format with positions. */
#include <criterion/criterion.h>

#include "cel/ast.h"
#include "tests/cel/cel_helpers.h"

static bool parses(const char *src, err *e) {
    arena a;
    arena_init(&a, 0);
    cel_node *root;
    err_clear(e);
    strbuf d;
    sbuf_init(&d);
    bool ok = cel__parse(src, strlen(src), NULL, &a, &root, &d);
    if (!ok) err_set(e, "%s", d.buf ? d.buf : "");
    sbuf_free(&d);
    arena_free(&a);
    return ok;
}

Test(parser, literals) {
    fixture f;
    fx_init(&f);
    cr_expect_str_eq(fx_eval(&f, "-9223372036854775808"), "-9223372036854775808");
    cr_expect_str_eq(fx_eval(&f, "18446744073709551615u"), "18446744073709551615u");
    cr_expect_str_eq(fx_eval(&f, "0x1F"), "31");
    cr_expect_str_eq(fx_eval(&f, ".5"), "0.5");
    cr_expect_str_eq(fx_eval(&f, "1e3"), "1000.0");
    cr_expect_str_eq(fx_eval(&f, "r'a\\nb'"), "\"a\\\\nb\"");
    cr_expect_str_eq(fx_eval(&f, "'''x\ny'''"), "\"x\\ny\"");
    cr_expect_str_eq(fx_eval(&f, "b'\\xff\\000'"), "b\"\\xff\\x00\"");
    cr_expect_str_eq(fx_eval(&f, "'\\u00e9' == '\\xe9'"), "true");
    cr_expect_str_eq(fx_eval(&f, "size('\\U0001F600')"), "1");
    cr_expect_str_eq(fx_eval(&f, "'\\101\\x41'"), "\"AA\"");
    fx_fini(&f);
}

Test(parser, precedence_and_unary) {
    fixture f;
    fx_init(&f);
    cr_expect_str_eq(fx_eval(&f, "1 + 2 * 3"), "7");
    cr_expect_str_eq(fx_eval(&f, "(1 + 2) * 3"), "9");
    cr_expect_str_eq(fx_eval(&f, "true || false && false"), "true");
    cr_expect_str_eq(fx_eval(&f, "!!true"), "true");
    cr_expect_str_eq(fx_eval(&f, "--5"), "5");
    cr_expect_str_eq(fx_eval(&f, "---5"), "-5");
    /* cel-go: both '-' are operators, so the literal is unsigned and too big */
    cr_expect(strstr(fx_eval(&f, "--9223372036854775808"), "1:3: invalid int literal") != NULL, "%s", f.out);
    cr_expect_str_eq(fx_eval(&f, "1 < 2 == true"), "true");
    cr_expect_str_eq(fx_eval(&f, "true ? 1 : false ? 2 : 3"), "1");
    cr_expect_str_eq(fx_eval(&f, "2 in [1, 2]"), "true");
    /* cel-go's OptOptimize (Kubernetes plans with it): `x in []` is the constant false,
     * x never evaluated (interpreter/decorators.go maybeOptimizeSetMembership) */
    cr_expect_str_eq(fx_eval(&f, "1/0 in []"), "false");
    cr_expect_str_eq(fx_eval(&f, "7 % 4 - 1"), "2");
    fx_fini(&f);
}

Test(parser, macros) {
    fixture f;
    fx_init(&f);
    cr_expect_str_eq(fx_eval(&f, "[1, 2, 3].map(x, x * 2)"), "[2, 4, 6]");
    cr_expect_str_eq(fx_eval(&f, "[1, 2, 3].map(x, x > 1, x * 2)"), "[4, 6]");
    cr_expect_str_eq(fx_eval(&f, "[1, 2, 3].filter(x, x != 2)"), "[1, 3]");
    cr_expect_str_eq(fx_eval(&f, "[1, 2, 3].exists_one(x, x > 2)"), "true");
    cr_expect_str_eq(fx_eval(&f, "[1, 2, 3].all(x, x > 0)"), "true");
    cr_expect_str_eq(fx_eval(&f, "{'a': 1}.exists(k, k == 'a')"), "true");
    cr_expect_str_eq(fx_eval(&f, "has({'a': 1}.a)"), "true");
    cr_expect_str_eq(fx_eval(&f, "cel.bind(x, 2, x * x)"), "4");
    cr_expect_str_eq(fx_eval(&f, "[10, 20].all(i, v, v == (i + 1) * 10)"), "true");
    cr_expect_str_eq(fx_eval(&f, "[1, 2].transformList(i, v, i + v)"), "[1, 3]");
    cr_expect_str_eq(fx_eval(&f, "{'a': 1}.transformMap(k, v, v + 1)"), "{\"a\": 2}");
    fx_fini(&f);
}

Test(parser, optional_syntax) {
    fixture f;
    fx_init(&f);
    cr_expect_str_eq(fx_eval(&f, "{'a': 1}.?b.orValue(7)"), "7");
    cr_expect_str_eq(fx_eval(&f, "[1, 2][?5].hasValue()"), "false");
    cr_expect_str_eq(fx_eval(&f, "[?optional.none(), ?optional.of(2)]"), "[2]");
    cr_expect_str_eq(fx_eval(&f, "{?'k': optional.none(), 'j': 1}"), "{\"j\": 1}");
    cr_expect_str_eq(fx_eval(&f, "optional.of(2).optMap(x, x + 1).value()"), "3");
    fx_fini(&f);
}

Test(parser, errors_have_positions_and_snippets) {
    err e;
    cr_expect_not(parses("1 + ", &e));
    cr_expect(strstr(e.msg, "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>'") == e.msg, "%s", e.msg);
    cr_expect(strstr(e.msg, "\n | 1 + \n | ....^") != NULL, "%s", e.msg);
    cr_expect_not(parses("a.b.\n  c +", &e));
    cr_expect(strstr(e.msg, "<input>:2:6:") != NULL, "%s", e.msg);
    cr_expect_not(parses("has(m)", &e));
    cr_expect(strstr(e.msg, "invalid argument to has() macro") != NULL);
    cr_expect_not(parses("while", &e));
    cr_expect(strstr(e.msg, "reserved identifier: while") != NULL);
    cr_expect_not(parses("0xFFFFFFFFFFFFFFFFF", &e));
    cr_expect(strstr(e.msg, "invalid int literal") != NULL);
    cr_expect_not(parses("9223372036854775808", &e));
    cr_expect_not(parses("'\\udead'", &e));
    cr_expect_not(parses("a | b", &e));
    cr_expect_not(parses("[1, 2].map(__result__, 1)", &e));
    cr_expect(parses("a.`b-c`", &e));
    cr_expect(parses("// comment\n1", &e));
}

Test(parser, nesting_limit) {
    char buf[2048];
    size_t o = 0;
    for (int i = 0; i < 300; i++) buf[o++] = '[';
    for (int i = 0; i < 300; i++) buf[o++] = ']';
    buf[o] = '\0';
    err e;
    cr_expect_not(parses(buf, &e));
    cr_expect(strstr(e.msg, "recursion limit") != NULL, "%s", e.msg);
    o = 0;
    for (int i = 0; i < 100; i++) buf[o++] = '(';
    buf[o++] = '1';
    for (int i = 0; i < 100; i++) buf[o++] = ')';
    buf[o] = '\0';
    cr_expect(parses(buf, &e));
}
