/* test_lib_regex.c — matches / find / findAll on RE2: partial-match semantics,
 * leftmost-first, Go's FindAllString empty-match rule and limit, compile-time
 * rejection of bad constant patterns, Go's error texts for dynamic ones, and the
 * shim itself. */
#include "cel/regex.h"
#include "lib_test.h"

Test(lib_regex, matches) {
    EXPECT("'hello'.matches('ell')", "true");       /* partial, not full */
    EXPECT("'hello'.matches('^ell')", "false");
    EXPECT("matches('gpu-7', '^gpu-[0-9]+$')", "true");
    EXPECT("'A100'.matches('(?i)a1')", "true");
    EXPECT("'x'.matches('')", "true");
    EXPECT("'ÿ'.matches('^.$')", "true");            /* UTF-8: one code point */
    EXPECT("'abc'.matches('\\\\d')", "false");
}

Test(lib_regex, bad_constant_pattern_is_compile_error) {
    const char *r = ev("'x'.matches('(')");
    cr_expect(strstr(r, "compile: ") == r, "%s", r);
    cr_expect(strstr(r, "invalid matches argument") != NULL, "%s", r);
    r = ev("'x'.find('[a')");
    cr_expect(strstr(r, "compile: ") == r, "%s", r);
    cr_expect(strstr(r, "error parsing regexp: missing closing ]: `[a`") != NULL, "%s", r);
}

Test(lib_regex, bad_dynamic_pattern_is_runtime_error) {
    EXPECT("'x'.matches(['('][0])", "error: error parsing regexp: missing closing ): `(`");
    EXPECT("'x'.find(['a**'][0])", "error: Illegal regex: error parsing regexp: invalid nested repetition operator: `**`");
    EXPECT("'x'.findAll(['\\\\'][0])",
           "error: Illegal regex: error parsing regexp: trailing backslash at end of expression: ``");
    EXPECT("'x'.matches(['a)'][0])", "error: error parsing regexp: unexpected ): `a)`");
    EXPECT("'x'.matches(['x{1001}'][0])", "error: error parsing regexp: invalid repeat count: `{1001}`");
    /* the same pattern, given dynamically, works */
    EXPECT("'gpu-7'.matches(['^gpu-[0-9]+$'][0])", "true");
}

Test(lib_regex, find) {
    EXPECT("'abc 123'.find('[0-9]+')", "\"123\"");
    EXPECT("'abc 123'.find('xyz')", "\"\"");
    EXPECT("'abc 123'.find('[0-9]*')", "\"\"");      /* leftmost: empty match at 0 */
    EXPECT("'aaa'.find('a|aa')", "\"a\"");           /* leftmost-first, not longest */
}

Test(lib_regex, find_all) {
    EXPECT("'123 abc 456'.findAll('[0-9]+')", "[\"123\", \"456\"]");
    EXPECT("'123 abc 456'.findAll('[0-9]+', 1)", "[\"123\"]");
    EXPECT("'123 abc 456'.findAll('[0-9]+', 0)", "[]");
    EXPECT("'123 abc 456'.findAll('[0-9]+', -1)", "[\"123\", \"456\"]");
    EXPECT("'123 abc 456'.findAll('xyz')", "[]");
    /* Go: an empty match right after a match is dropped, others are kept */
    EXPECT("'123 abc 456'.findAll('[0-9]*')", "[\"123\", \"\", \"\", \"\", \"\", \"456\"]");
    EXPECT("'abc'.findAll('')", "[\"\", \"\", \"\", \"\"]");
    EXPECT("'é'.findAll('')", "[\"\", \"\"]");     /* steps by code point */
    EXPECT("'a,b,,c'.findAll('[^,]*')", "[\"a\", \"b\", \"\", \"c\"]");
    /* ^ sees the whole text as context after the first match */
    EXPECT("'aaa'.findAll('^a')", "[\"a\"]");
}

Test(lib_regex, shim) {
    char msg[256];
    cel_regex *re = cel__regex_compile("b+", 2, msg, sizeof msg);
    cr_assert_not_null(re);
    cr_expect(cel__regex_partial_match(re, "abbc", 4));
    cr_expect(!cel__regex_full_match(re, "abbc", 4));
    cr_expect(cel__regex_full_match(re, "bbb", 3));
    size_t s, e;
    cr_assert(cel__regex_find(re, "abbcb", 5, 0, &s, &e));
    cr_expect(s == 1 && e == 3);
    cr_assert(cel__regex_find(re, "abbcb", 5, 3, &s, &e));
    cr_expect(s == 4 && e == 5);
    cr_expect(!cel__regex_find(re, "abbcb", 5, 6, &s, &e));
    cel__regex_free(re);
    cr_expect_null(cel__regex_compile("(?<", 3, msg, sizeof msg));
    cr_expect(strncmp(msg, "error parsing regexp: ", 22) == 0, "%s", msg);
}
