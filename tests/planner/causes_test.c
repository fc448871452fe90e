/* causes_test.c — unplaced reasons as kube-scheduler counts them, then the closest
 * nodes (testdata/why/: every number worked by hand in the files), and the cause of
 * every kind of fit reason the engine writes. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/causes.h"
#include "planner/planner.h"

#define TD DRALLOC_SOURCE_DIR "/testdata/"

static json_t *plan_of(const char *cluster, const char *workload) {
    plan_objects objs;
    plan_objects_init(&objs);
    err e;
    err_clear(&e);
    cr_assert(plan_objects_load_path(&objs, cluster, &e), "%s", e.msg);
    plan_workloads w = {0};
    cr_assert(plan_workloads_load(workload, &w, &objs, &e), "%s", e.msg);
    plan_opts o;
    plan_opts_default(&o);
    json_t *p = plan_run(&objs, &w, &o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    plan_workloads_free(&w);
    plan_objects_free(&objs);
    return p;
}

static const json_t *workload(const json_t *plan, const char *name) {
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) if (!strcmp(json_string_value(json_object_get(w, "name")), name)) return w;
    cr_assert_fail("no workload %s", name);
    return NULL;
}

/* kube-scheduler's FitError.Error (pkg/scheduler/framework/types.go): "0/%v nodes are
 * available: " then the "<count> <reason>" strings, sort.Strings'ed, joined by ", ". */
Test(causes, reason_counts_causes_then_the_closest_nodes) {
    json_t *p = plan_of(TD "why/cluster.yaml", TD "why/workloads.yaml");
    const json_t *w = workload(p, "four");
    const char *r = json_string_value(json_object_get(w, "reason"));
    const char *head = "0/4 nodes are available: 1 devices of class gpu.example.com held by claims, 1 no device matches "
                       "class gpu.example.com and the selectors, 1 too few free devices of class gpu.example.com, 1 "
                       "untolerated taint example.com/maintenance=firmware:NoSchedule. Closest: gpu-c (2 devices missing)";
    cr_assert(!strncmp(r, head, strlen(head)), "%s", r);
    /* the taint and the holding claim, from the closest nodes' own explanations */
    cr_assert(strstr(r, "gpu-a (4 devices missing): cannot allocate all claims: claim ml/four-0-gpus request gpus: wants 4, "
                        "4 match gpu.example.com, 0 free: 4 held by claim ml/hog"),
              "%s", r);
    cr_assert(strstr(r, "gpu-b (4 devices missing): cannot allocate all claims: claim ml/four-0-gpus request gpus: wants 4, "
                        "4 match gpu.example.com, 0 free: 4 taint example.com/maintenance=firmware:NoSchedule not tolerated"),
              "%s", r);
    /* never the node where nothing matches while closer ones exist */
    cr_assert_null(strstr(r, "cpu-d"), "%s", r);
    const json_t *cl = json_object_get(w, "closest");
    cr_assert_eq(json_array_size(cl), 3);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(cl, 0), "node")), "gpu-c");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cl, 0), "missing")), 2);
    cr_assert(json_is_false(json_object_get(w, "unfittable")));
    json_decref(p);
}

Test(causes, unfittable_when_no_node_could_run_one_even_empty) {
    json_t *p = plan_of(TD "why/cluster.yaml", TD "why/workloads.yaml");
    const json_t *w = workload(p, "eight");
    cr_assert(json_is_true(json_object_get(w, "unfittable")), "%s", json_dumps(w, 0));
    cr_assert(json_is_false(json_object_get(workload(p, "four"), "unfittable")));
    json_decref(p);
}

static void cause_of(const char *reason, const char *node, const char *want, int64_t missing) {
    dra_fit f = {.status = DRA_FIT_UNSCHEDULABLE};
    snprintf(f.reason, sizeof f.reason, "%s", reason);
    dra_cause c;
    dra_fit_cause(&f, node, &c);
    cr_assert_str_eq(c.text, want, "%s", reason);
    cr_assert_eq(c.missing, missing, "%s: missing %lld", reason, (long long)c.missing);
}

/* Every shape of reason the engine writes (explain.c, podplan.c, nodefit.c) has a cause
 * without the node's name or counts. */
Test(causes, every_reason_has_a_node_independent_cause) {
    cause_of("cannot allocate all claims: claim ml/p request r: wants 2, 0 match gpu.example.com, 0 free", "n1",
             "no device matches class gpu.example.com and the selectors", 2);
    cause_of("cannot allocate all claims: claim ml/p request r: wants 2, 4 match c, 1 free: 2 need 1 of counter "
             "memorySlice0: counter set s in pool d/p has 0 left, 1 held by claim ml/x",
             "n1", "devices of class c blocked by shared counters in use", 1);
    cause_of("cannot allocate all claims: claim ml/p request r: wants all (4), 4 match c, 3 free: 1 already allocated", "n",
             "devices of class c held by claims", 1);
    cause_of("cannot allocate all claims: claim ml/p request r: wants 2, 2 match c, 2 free, but no 2 of them share a value "
             "of attribute a (matchAttribute: at most 1 do)",
             "n", "free devices of class c do not meet the claim's constraints", 0);
    cause_of("ResourceClaim ml/c is allocated for other nodes than n7", "n7", "resourceclaim ml/c not available on the node",
             -1);
    cause_of("Insufficient example.com/gpu: node n7 has 4 allocatable, 4 in use, pod requests 1", "n7",
             "Insufficient example.com/gpu", -1);
    cause_of("node(s) had untolerated taint {dedicated: gpu}", "n7", "node(s) had untolerated taint {dedicated: gpu}", -1);
    cause_of("no node view for n7", "n7", "no node view for the node", -1);
}
