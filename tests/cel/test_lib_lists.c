/* test_lib_lists.c — Kubernetes' lists library and cel-go ext.Lists v3: results,
 * cel-go's quirks (ignored failed comparisons, per-overload sum zero), and the
 * error texts. */
#include "lib_test.h"

Test(lib_lists, is_sorted) {
    EXPECT("[1, 2, 3].isSorted()", "true");
    EXPECT("['a', 'b', 'b', 'c'].isSorted()", "true");
    EXPECT("[2.0, 1.0].isSorted()", "false");
    EXPECT("[].isSorted()", "true");
    EXPECT("[b'a', b'c', b'b'].isSorted()", "false");
}

Test(lib_lists, sum) {
    EXPECT("[1, 3].sum()", "4");
    EXPECT("[1.0, 3.5].sum()", "4.5");
    EXPECT("[1u, 3u].sum()", "4u");
    EXPECT("[].sum()", "0");
    EXPECT("[9223372036854775807, 1].sum()", "error: integer overflow");
    EXPECT("[18446744073709551615u, 1u].sum()", "error: unsigned integer overflow");
}

Test(lib_lists, min_max) {
    EXPECT("[3, 1, 2].min()", "1");
    EXPECT("[3, 1, 2].max()", "3");
    EXPECT("['b', 'a'].min()", "\"a\"");
    EXPECT("[1].min()", "1");
    EXPECT("[true, false].max()", "true");
    EXPECT("[].min()", "error: min called on empty list");
    EXPECT("[].max()", "error: max called on empty list");
    /* mixed numbers in a dyn list compare numerically */
    EXPECT("[dyn(2), dyn(1.5), dyn(3u)].min()", "1.5");
}

Test(lib_lists, durations_and_timestamps) {
    EXPECT("[duration('1m'), duration('1s')].sum() == duration('61s')", "true");
    EXPECT("[duration('1m'), duration('-90s')].sum() == duration('-30s')", "true");
    EXPECT("[duration('2562047h'), duration('2562047h')].sum()", "error: integer overflow");
    EXPECT("[duration('1m'), duration('1s')].min() == duration('1s')", "true");
    EXPECT("[timestamp('2023-01-01T00:00:00Z'), timestamp('2022-01-01T00:00:00Z')].isSorted()", "false");
    EXPECT("[timestamp('2023-01-01T00:00:00Z'), timestamp('2022-01-01T00:00:00Z')].sort()[0] == "
           "timestamp('2022-01-01T00:00:00Z')",
           "true");
}

Test(lib_lists, index_of) {
    EXPECT("[1, 2, 2, 3].indexOf(2)", "1");
    EXPECT("['a', 'b', 'b', 'c'].lastIndexOf('b')", "2");
    EXPECT("[1.0].indexOf(1.1)", "-1");
    EXPECT("[].indexOf('string')", "-1");
    EXPECT("[[1], [2]].indexOf([2])", "1");
    /* the string overloads keep working next to the list ones */
    EXPECT("'abcb'.lastIndexOf('b')", "3");
}

Test(lib_lists, slice) {
    EXPECT("[1, 2, 3, 4].slice(1, 3)", "[2, 3]");
    EXPECT("[1, 2, 3, 4].slice(4, 4)", "[]");
    EXPECT("[1, 2, 3, 4].slice(-1, 3)", "error: cannot slice(-1, 3), negative indexes not supported");
    EXPECT("[1, 2, 3, 4].slice(3, 1)",
           "error: cannot slice(3, 1), start index must be less than or equal to end index");
    EXPECT("[1, 2, 3, 4].slice(1, 5)", "error: cannot slice(1, 5), list is length 4");
}

Test(lib_lists, flatten) {
    EXPECT("[[1], [2, 3]].flatten()", "[1, 2, 3]");
    /* (nested mixed lists need dyn elements: Kubernetes forbids mixed literals) */
    EXPECT("[dyn(1), dyn([dyn(2), dyn([dyn(3), dyn([4])])])].flatten(2)", "[1, 2, 3, [4]]");
    EXPECT("[dyn(1), dyn([dyn(2), dyn([4])])].flatten(0)", "[1, [2, [4]]]");
    EXPECT("[dyn(1), dyn([dyn(2), dyn([4])])].flatten(5)", "[1, 2, 4]");
    EXPECT("[[1], [2]].flatten(-1)", "error: level must be non-negative");
}

Test(lib_lists, sort) {
    EXPECT("[3, 2, 1].sort()", "[1, 2, 3]");
    EXPECT("['b', 'c', 'a'].sort()", "[\"a\", \"b\", \"c\"]");
    EXPECT("[2.5, -1.5, 0.5].sort()", "[-1.5, 0.5, 2.5]");
    EXPECT("[b'b', b'a'].sort()", "[b\"a\", b\"b\"]");
    EXPECT("[true, false, true].sort()", "[false, true, true]");
    EXPECT("[].sort()", "[]");
    EXPECT("[dyn(1), dyn('b')].sort()", "error: list elements must have the same type");
    EXPECT("[dyn([1]), dyn([2])].sort()", "error: list elements must be comparable");
}

Test(lib_lists, range_reverse_distinct) {
    EXPECT("lists.range(4)", "[0, 1, 2, 3]");
    EXPECT("lists.range(0)", "[]");
    EXPECT("lists.range(-1)", "error: lists.range: size must be non-negative, got -1");
    EXPECT("[5, 3, 1, 2].reverse()", "[2, 1, 3, 5]");
    EXPECT("[1, 2, 2, 3, 3, 3].distinct()", "[1, 2, 3]");
    EXPECT("['b', 'b', 'c', 'a', 'c'].distinct()", "[\"b\", \"c\", \"a\"]");
    EXPECT("[dyn(1), dyn(1.0), dyn(1u), dyn(2)].distinct()", "[1, 2]");
}

Test(lib_lists, cost_limit) {
    /* a sort of 1000 elements costs 2·n² = 2,000,000 > the 1,000,000 budget */
    EXPECT("lists.range(1000).sort().size()", "error: operation cancelled: actual cost limit exceeded");
    EXPECT("lists.range(500).sort().size()", "500");
}
