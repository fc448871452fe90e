/* test_plan_bestfit.c — `dralloc plan --device-choice best-fit` against first-fit on
 * testdata/bestfit (a MIG node with a 3g running on GPU 1; four 1g pods, then one
 * whole-GPU pod): first-fit breaks GPU 0 and cannot place the whole-GPU pod,
 * best-fit fills GPU 1 and places all five. The fit cache changes nothing. */
#include <criterion/criterion.h>
#include <string.h>

#include "planner/planner.h"

#define TD DRALLOC_SOURCE_DIR "/testdata/bestfit/"

static json_t *plan_choice(dra_device_choice ch, bool no_fit_cache) {
    plan_objects objs;
    plan_objects_init(&objs);
    err e;
    err_clear(&e);
    cr_assert(plan_objects_load_path(&objs, TD "mig-node.yaml", &e), "%s", e.msg);
    cr_assert(plan_objects_load_path(&objs, TD "in-use.yaml", &e), "%s", e.msg);
    plan_workloads w = {0};
    cr_assert(plan_workloads_load(TD "workloads.yaml", &w, &objs, &e), "%s: %s", e.object, e.msg);
    plan_opts o;
    plan_opts_default(&o);
    o.device_choice = ch;
    o.no_fit_cache = no_fit_cache;
    json_t *out = plan_run(&objs, &w, &o, &e);
    cr_assert_not_null(out, "%s", e.msg);
    plan_workloads_free(&w);
    plan_objects_free(&objs);
    return out;
}

static json_int_t placed(const json_t *plan, const char *workload) {
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(plan, "workloads"), i, w)
        if (!strcmp(json_string_value(json_object_get(w, "name")), workload))
            return json_integer_value(json_object_get(w, "placed"));
    cr_assert_fail("no workload %s", workload);
    return -1;
}

Test(plan_bestfit, best_fit_places_the_whole_gpu_pod) {
    json_t *ff = plan_choice(DRA_CHOICE_FIRST_FIT, false), *bf = plan_choice(DRA_CHOICE_BEST_FIT, false);
    cr_assert_eq(placed(ff, "small"), 4);
    cr_assert_eq(placed(ff, "whole-gpu"), 0);
    cr_assert_eq(placed(bf, "small"), 4);
    cr_assert_eq(placed(bf, "whole-gpu"), 1);
    const json_t *sf = json_object_get(ff, "summary"), *sb = json_object_get(bf, "summary");
    cr_assert_eq(json_integer_value(json_object_get(sf, "placed")), 4);
    cr_assert_eq(json_integer_value(json_object_get(sb, "placed")), 5);
    cr_assert_null(json_object_get(sf, "deviceChoice"));   /* first-fit plans print as before */
    cr_assert_str_eq(json_string_value(json_object_get(sb, "deviceChoice")), "best-fit");
    json_t *bf2 = plan_choice(DRA_CHOICE_BEST_FIT, true);
    cr_assert(json_equal(bf, bf2), "the fit cache changed the best-fit plan");
    json_decref(ff);
    json_decref(bf);
    json_decref(bf2);
}
