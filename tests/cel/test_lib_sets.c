/* test_lib_sets.c — cel-go ext.Sets with CEL equality (heterogeneous numbers,
 * deep lists), the empty-list rules. */
#include "lib_test.h"

Test(lib_sets, contains) {
    EXPECT("sets.contains([], [])", "true");
    EXPECT("sets.contains([], [1])", "false");
    EXPECT("sets.contains([1, 2, 3, 4], [2, 3])", "true");
    EXPECT("sets.contains([1, 2], [2, 5])", "false");
    EXPECT("sets.contains([dyn(1), dyn(2.0), dyn(3u)], [dyn(1.0), dyn(2u), dyn(3)])", "true");
    EXPECT("sets.contains([[1], [2, 3]], [[2, 3]])", "true");
}

Test(lib_sets, equivalent) {
    EXPECT("sets.equivalent([], [])", "true");
    EXPECT("sets.equivalent([1], [1, 1])", "true");
    EXPECT("sets.equivalent([dyn(1)], [dyn(1u), dyn(1.0)])", "true");
    EXPECT("sets.equivalent([1, 2, 3], [3, 2, 1])", "true");
    EXPECT("sets.equivalent([1, 2], [1])", "false");
}

Test(lib_sets, intersects) {
    EXPECT("sets.intersects([1], [])", "false");
    EXPECT("sets.intersects([], [1])", "false");
    EXPECT("sets.intersects([1], [1, 2])", "true");
    EXPECT("sets.intersects([[1], [2, 3]], [[1, 2], [2, 3]])", "true");
    EXPECT("sets.intersects(['a'], ['b'])", "false");
}
