/* plan_scan_test.c — the planner's two-thread node scan (planner/plan_scan.c) gives
 * the plan one thread gives. A replica is decided on every node before the best one
 * is taken; from 512 nodes on, a second thread decides half of them on its own copy
 * of the overlay and fit memo. Its answers must be the ones the calling thread would
 * have found, whatever order the two take their chunks in: the same placements,
 * node rows and unplaced reasons, under binpack, spread and seeded tie-breaking. */
#include <criterion/criterion.h>

#include "planner/planner.h"

#define TD DRALLOC_SOURCE_DIR "/testdata/plan/"

/* testdata/plan/gpus' three nodes and 600 copies of its node shape (8 GPUs each):
 * past plan_scan.c's SCAN_PARALLEL_MIN (512), so the scan takes two threads. */
static void big_cluster(plan_objects *objs) {
    plan_objects shape;
    plan_objects_init(objs);
    plan_objects_init(&shape);
    err e;
    err_clear(&e);
    cr_assert(plan_objects_load_path(objs, TD "gpus/cluster.yaml", &e), "%s", e.msg);
    cr_assert(plan_objects_load_path(&shape, TD "gpus/shape.yaml", &e), "%s", e.msg);
    cr_assert(plan_add_nodes(objs, &shape, 600, 0, &e), "%s", e.msg);
    plan_objects_free(&shape);
}

static json_t *plan_of(const plan_objects *objs, const char *workload, dra_score_mode mode, bool seeded,
                       bool one_thread) {
    err e;
    err_clear(&e);
    plan_objects copy;
    plan_objects_copy(&copy, objs);
    plan_workloads w = {0};
    cr_assert(plan_workloads_load(workload, &w, &copy, &e), "%s: %s", e.object, e.msg);
    plan_opts o;
    plan_opts_default(&o);
    o.score = mode;
    o.seeded = seeded;
    o.seed = 7;
    o.one_thread = one_thread;
    json_t *p = plan_run(&copy, &w, &o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    plan_workloads_free(&w);
    plan_objects_free(&copy);
    return p;
}

static void same_both_ways(const char *workload, dra_score_mode mode, bool seeded) {
    plan_objects objs;
    big_cluster(&objs);
    json_t *one = plan_of(&objs, workload, mode, seeded, true);
    json_t *two = plan_of(&objs, workload, mode, seeded, false);
    /* the run placed something on more than one node: the scan had answers to merge */
    const json_t *w0 = json_array_get(json_object_get(one, "workloads"), 0);
    cr_assert_gt(json_array_size(json_object_get(w0, "placements")), 1);
    char *a = json_dumps(one, JSON_SORT_KEYS | JSON_COMPACT), *b = json_dumps(two, JSON_SORT_KEYS | JSON_COMPACT);
    cr_assert_str_eq(a, b, "one thread and two threads planned %s differently", workload);
    free(a);
    free(b);
    json_decref(one);
    json_decref(two);
    plan_objects_free(&objs);
}

/* 40 replicas of 2 GPUs through the extended resource: binpack fills 10 nodes. */
Test(plan_scan, two_threads_binpack_as_one) { same_both_ways(TD "gpus/many.json", DRA_SCORE_BINPACK, false); }

/* Spread puts each replica on an emptiest node: 40 nodes, ties by name. */
Test(plan_scan, two_threads_spread_as_one) { same_both_ways(TD "gpus/many.json", DRA_SCORE_SPREAD, false); }

/* Ties shuffled by seed: the same shuffle either way. */
Test(plan_scan, two_threads_seeded_as_one) { same_both_ways(TD "gpus/two-gpu.yaml", DRA_SCORE_SPREAD, true); }
