/* test_lib_strings.c — cel-go ext.Strings (v2) through compile + evaluate:
 * code-point indexing, cel-go's corner cases and error texts, Go's Replace/SplitN
 * rules, Unicode trim, quote, join and format. */
#include "lib_test.h"

Test(lib_strings, char_at) {
    EXPECT("'tacocat'.charAt(3)", "\"o\"");
    EXPECT("'tacocat'.charAt(7)", "\"\"");
    EXPECT("'©αT'.charAt(1)", "\"α\"");
    EXPECT("'tacocat'.charAt(8)", "error: index out of range: 8");
    EXPECT("'tacocat'.charAt(-1)", "error: index out of range: -1");
}

Test(lib_strings, index_of) {
    EXPECT("'tacocat'.indexOf('')", "0");
    EXPECT("'tacocat'.indexOf('ac')", "1");
    EXPECT("'tacocat'.indexOf('none')", "-1");
    EXPECT("'tacocat'.indexOf('a', 3)", "5");
    EXPECT("'ta©o©αT'.indexOf('©αT', 3)", "4");
    EXPECT("'ta©o©αT'.indexOf('©α', 5)", "-1");
    /* cel-go: an empty needle returns the offset unchecked, a non-empty one checks it */
    /* cel-go v0.29.2 ext/strings.go indexOfOffset (what Kubernetes 1.37 runs; checked
     * with tests/upstream's dra-oracle): the empty string matches at the offset clamped
     * to the end, an offset at or past the end finds nothing — not an error */
    EXPECT("'abc'.indexOf('', 30)", "3");
    EXPECT("'tacocat'.indexOf('a', 30)", "-1");
    EXPECT("''.indexOf('a')", "-1");
}

Test(lib_strings, last_index_of) {
    EXPECT("'tacocat'.lastIndexOf('')", "7");
    EXPECT("'tacocat'.lastIndexOf('at')", "5");
    EXPECT("'tacocat'.lastIndexOf('a', 3)", "1");
    EXPECT("'ta©o©αT'.lastIndexOf('©')", "4");
    EXPECT("'ta©o©αT'.lastIndexOf('©α', 4)", "4");
    EXPECT("'bananananana'.lastIndexOf('nana', 7)", "6");
    EXPECT("'hello wello'.lastIndexOf('hello wello')", "0");
    EXPECT("'tacocat'.lastIndexOf('a', -1)", "error: index out of range: -1");
    EXPECT("'tacocat'.lastIndexOf('a', 30)", "-1");
    /* cel-go starts at len-1 = -1 for an empty receiver */
    EXPECT("''.lastIndexOf('@@')", "-1");
}

Test(lib_strings, ascii_case) {
    EXPECT("'TacoCÆt Xii'.lowerAscii()", "\"tacocÆt xii\"");
    EXPECT("'tacoCαt'.upperAscii()", "\"TACOCαT\"");
}

Test(lib_strings, replace) {
    EXPECT("'hello hello'.replace('he', 'we')", "\"wello wello\"");
    EXPECT("'hello hello'.replace('he', 'we', 1)", "\"wello hello\"");
    EXPECT("'hello hello'.replace('he', 'we', 0)", "\"hello hello\"");
    EXPECT("'hello hello'.replace('he', 'we', -1)", "\"wello wello\"");
    EXPECT("'1 ©αT taco'.replace('αT', 'o©α')", "\"1 ©o©α taco\"");
    /* Go's strings.Replace with an empty old string inserts around every code point */
    EXPECT("'aé'.replace('', '-')", "\"-a-é-\"");
    EXPECT("'abc'.replace('', '-', 2)", "\"-a-bc\"");
}

Test(lib_strings, split) {
    EXPECT("'hello hello hello'.split(' ')", "[\"hello\", \"hello\", \"hello\"]");
    EXPECT("'hello hello hello'.split(' ', 0)", "[]");
    EXPECT("'hello hello hello'.split(' ', 1)", "[\"hello hello hello\"]");
    EXPECT("'hello hello hello'.split(' ', 2)", "[\"hello\", \"hello hello\"]");
    EXPECT("'o©o©o©o'.split('©', -1)", "[\"o\", \"o\", \"o\", \"o\"]");
    EXPECT("'a©c'.split('')", "[\"a\", \"©\", \"c\"]");
    EXPECT("'abc'.split('', 2)", "[\"a\", \"bc\"]");
    EXPECT("''.split('')", "[]");
    EXPECT("''.split(',')", "[\"\"]");
    EXPECT("',a,'.split(',')", "[\"\", \"a\", \"\"]");
}

Test(lib_strings, substring) {
    EXPECT("'tacocat'.substring(4)", "\"cat\"");
    EXPECT("'tacocat'.substring(7)", "\"\"");
    EXPECT("'ta©o©αT'.substring(2, 6)", "\"©o©α\"");
    EXPECT("'tacocat'.substring(40)", "error: index out of range: 40");
    EXPECT("'tacocat'.substring(1, 50)", "error: index out of range: 50");
    EXPECT("'tacocat'.substring(49, 50)", "error: index out of range: 49");
    EXPECT("'tacocat'.substring(4, 3)", "error: invalid substring range. start: 4, end: 3");
}

Test(lib_strings, trim) {
    EXPECT("' \\f\\n\\r\\t\\vtext  '.trim()", "\"text\"");
    EXPECT_TRUE("'\\u0085\\u00a0\\u1680text\\u2000\\u200a\\u2028\\u2029\\u202F\\u205F\\u3000'.trim() == 'text'");
    /* zero-width characters are not White_Space */
    EXPECT_TRUE("'\\u180etext\\u200b\\ufeff'.trim() == '\\u180etext\\u200b\\ufeff'");
    EXPECT("'   '.trim()", "\"\"");
}

Test(lib_strings, join) {
    EXPECT("['x', 'y'].join()", "\"xy\"");
    EXPECT("['x', 'y'].join('-')", "\"x-y\"");
    EXPECT("[].join('-')", "\"\"");
}

Test(lib_strings, quote) {
    EXPECT_TRUE("strings.quote('first\\nsecond') == '\"first\\\\nsecond\"'");
    EXPECT_TRUE("strings.quote('bell\\a\\b\\f\\r\\t\\v') == '\"bell\\\\a\\\\b\\\\f\\\\r\\\\t\\\\v\"'");
    EXPECT_TRUE("strings.quote('a \"q\" \\\\ z') == '\"a \\\\\"q\\\\\" \\\\\\\\ z\"'");
    EXPECT_TRUE("strings.quote('завтра😀') == '\"завтра😀\"'");
    EXPECT("strings.quote('')", "\"\\\"\\\"\"");
}

Test(lib_strings, format_clauses) {
    EXPECT("'%d %s, %s'.format([1, 'A', true])", "\"1 A, true\"");
    EXPECT("'%%%s%%'.format(['text'])", "\"%text%\"");
    EXPECT("'%.3f'.format([1.2345])", "\"1.234\"");
    EXPECT("'%f'.format([2.71828])", "\"2.718280\"");
    EXPECT("'%.0f %.0f %.0f'.format([1.5, 2.5, 3.5001])", "\"2 2 4\"");
    EXPECT("'%.6e'.format([1052.032911275])", "\"1.052033e+03\"");
    EXPECT("'%e'.format([2.71828])", "\"2.718280e+00\"");
    EXPECT("'%b %b %b'.format([5, uint(64), true])", "\"101 1000000 1\"");
    EXPECT("'%o %o'.format([11, uint(65535)])", "\"13 177777\"");
    EXPECT("'%x %X %x'.format([30, 30, -30])", "\"1e 1E -1e\"");
    EXPECT("'%x'.format(['Hello world!'])", "\"48656c6c6f20776f726c6421\"");
    EXPECT("'%X'.format([b'byte string'])", "\"6279746520737472696E67\"");
    EXPECT("'%d %f %e'.format([double('NaN'), double('Infinity'), double('-Infinity')])",
           "\"NaN Infinity -Infinity\"");
}

Test(lib_strings, format_values) {
    EXPECT("'%s'.format([null])", "\"null\"");
    EXPECT("'%s'.format([b'xyz'])", "\"xyz\"");
    EXPECT("'%s'.format([type('x')])", "\"string\"");
    EXPECT("'%s, %s'.format([dyn(32), dyn(56.8)])", "\"32, 56.8\"");
    EXPECT("'%s'.format([1e20])", "\"100000000000000000000\"");
    EXPECT("'%s'.format([0.000001])", "\"0.000001\"");
    EXPECT("'%s'.format([[1, 2]])", "\"[1, 2]\"");
    EXPECT("'%s'.format([[dyn(6), dyn('a string')]])", "\"[6, a string]\"");
    EXPECT("'%s'.format([{'b': 2, 'a': 1}])", "\"{a: 1, b: 2}\"");
    EXPECT("'%s'.format([[double('NaN'), double('-Infinity')]])", "\"[NaN, -Infinity]\"");
    EXPECT("'%s'.format([timestamp('2023-02-03T23:31:20+00:00')])", "\"2023-02-03T23:31:20Z\"");
    EXPECT("'%s %s'.format([duration('1h45m47s'), duration('1.5s')])", "\"6347s 1.5s\"");
    EXPECT("'%s'.format([{'k2': duration('2h'), 'k1': duration('1s')}])", "\"{k1: 1s, k2: 7200s}\"");
    EXPECT("'%d'.format([duration('1s')])",
           "error: error during formatting: decimal clause can only be used on integers, was given "
           "google.protobuf.Duration");
}

Test(lib_strings, format_errors) {
    /* format strings computed at run time (a literal one is checked when compiling) */
    EXPECT("['%a'][0].format([1])", "error: could not parse formatting clause: unrecognized formatting clause \"a\"");
    EXPECT("['%d %d %d'][0].format([0, 1])", "error: index 2 out of range");
    EXPECT("['%'][0].format([1])", "error: unexpected end of string");
    EXPECT("['%.3'][0].format([1.0])",
           "error: could not parse formatting clause: error while parsing precision: could not find end of precision "
           "specifier");
    EXPECT("'%b'.format(['abc'])",
           "error: error during formatting: only integers and bools can be formatted as binary, was given string");
    EXPECT("'%o'.format([dyn('a')])",
           "error: error during formatting: octal clause can only be used on integers, was given string");
    EXPECT("'%x'.format([0.5])",
           "error: error during formatting: only integers, byte buffers, and strings can be formatted as hex, was "
           "given double");
    EXPECT("'%d'.format([null])",
           "error: error during formatting: decimal clause can only be used on integers, was given null_type");
    EXPECT("'%e'.format([null])",
           "error: error during formatting: scientific clause can only be used on doubles, was given null_type");
    EXPECT("'%f'.format([null])",
           "error: error during formatting: fixed-point clause can only be used on doubles, was given null_type");
    EXPECT("'%s'.format([optional.none()])",
           "error: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, "
           "maps, lists, types, durations, and timestamps, was given optional_type");
}

Test(lib_strings, format_validated_at_compile_time) {
    const char *r = ev("'%s %s'.format(['a', 'b', 'c'])");
    cr_expect(strstr(r, "compile: ") == r && strstr(r, "too many arguments supplied to string.format (expected 2, got 3)"),
              "%s", r);
    r = ev("'%s %s %s'.format(['a', 'b'])");
    cr_expect(strstr(r, "compile: ") == r && strstr(r, "index 2 out of range"), "%s", r);
    r = ev("'%q'.format(['a'])");
    cr_expect(strstr(r, "compile: ") == r && strstr(r, "unrecognized formatting clause \"q\""), "%s", r);
    /* a format string known only at run time is checked at run time */
    EXPECT("['%s %s'][0].format(['a', 'b', 'c'])", "\"a b\"");
}

Test(lib_strings, type_errors_unchecked) {
    EXPECT_DYN("42.charAt(2)", "error: no such overload");
    EXPECT_DYN("'42'.indexOf(4, 0)", "error: no such overload");
    EXPECT_DYN("'42'.replace('2', '1', '1')", "error: no such overload");
}
