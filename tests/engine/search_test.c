/* search_test.c — the search, through whole cases in testdata/engine (same format
 * as the shared conformance corpus), including regressions of upstream bugs:
 *   - kubernetes#140436: counters reserved by a rejected candidate were leaked;
 *   - kubernetes#140326: a list-attribute intersection was not widened on backtracking;
 *   - kubernetes#140769: an All request with consumable capacity succeeded on the
 *     subset of devices that still had capacity;
 * plus pruning checks (CEL errors still surface; 32 wanted with 31 free). */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/engine/helpers.h"

static json_t *run(const char *name) {
    json_t *c = th_load_case("engine", name);
    json_t *out = th_run(c);
    json_t *exp = json_incref(json_object_get(c, "expect"));
    json_decref(c);
    json_object_set_new(out, "expect", exp);
    return out;
}

Test(search, counters_released_when_candidate_rejected_140436) {
    json_t *out = run("counters-released-on-rejection");
    cr_assert_not_null(json_object_get(out, "allocations"), "a leaked reservation makes this unsatisfiable");
    cr_assert_str_eq(th_device(out, 0, 0), "c");
    cr_assert_str_eq(th_device(out, 0, 1), "b");
    json_decref(out);
}

Test(search, list_intersection_restored_on_backtracking_140326) {
    json_t *out = run("list-intersection-restored");
    cr_assert_not_null(json_object_get(out, "allocations"));
    cr_assert_str_eq(th_device(out, 0, 0), "d1");
    cr_assert_str_eq(th_device(out, 0, 1), "d3");
    cr_assert_str_eq(th_device(out, 0, 2), "d4");
    json_decref(out);
}

Test(search, all_with_consumable_capacity_never_on_a_subset_140769) {
    json_t *out = run("all-consumable-capacity-no-subset");
    cr_assert(json_is_true(json_object_get(out, "unsatisfiable")));
    json_decref(out);
}

Test(search, pruning_keeps_cel_errors) {
    json_t *out = run("pruning-keeps-cel-errors");
    const char *msg = json_string_value(json_object_get(out, "error"));
    cr_assert_not_null(msg);
    cr_assert(strstr(msg, "selector #0 on device driver-a/pool-1/d2: CEL runtime error") != NULL, "%s", msg);
    json_decref(out);
}

Test(search, thirty_two_of_thirty_one_is_unsatisfiable) {
    json_t *out = run("thirty-two-of-thirty-one");
    cr_assert(json_is_true(json_object_get(out, "unsatisfiable")));
    json_decref(out);
}

Test(search, two_requests_wanting_more_than_free_answer_fast, .timeout = 5) {
    /* 16 + 16 wanted, 31 free: without the whole-claim bound the first request would
     * enumerate all C(31,16) combinations before giving up. */
    json_t *out = run("two-requests-want-more-than-free");
    cr_assert(json_is_true(json_object_get(out, "unsatisfiable")));
    json_decref(out);
}

Test(search, list_distinct_backtracking_removes_entries) {
    /* Pairwise-disjoint sets across three requests; the first two choices for req-0
     * fail later, so entries must be taken back exactly. */
    json_t *out = run("list-distinct-backtracking-removes");
    cr_assert_not_null(json_object_get(out, "allocations"));
    cr_assert_str_eq(th_device(out, 0, 0), "d3");
    cr_assert_str_eq(th_device(out, 0, 1), "d4");
    cr_assert_str_eq(th_device(out, 0, 2), "d0");
    json_decref(out);
}
