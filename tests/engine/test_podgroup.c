/* test_podgroup.c — PodGroup claims (engine/podgroup.c): every case of
 * testdata/podgroup, and the first-member / later-member sequence on the example
 * cluster (testdata/extres/cluster) with DRAWorkloadResourceClaims on and off. */
#include "tests/engine/case_check.h"

#include "engine/extres.h"

Test(podgroup, testdata_cases) {
    cc_check_dir("podgroup", 9);
}

Test(podgroup, later_member_allocates_nothing) {
    json_t *out = cc_run_case("podgroup", "later-member-reuses");
    cr_assert_eq(json_array_size(json_object_get(out, "allocations")), 0);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(out, "reused"), 0)), "default/workers-gpus-x7k2p");
    json_decref(out);
}

static json_t *worker0(bool gate) {
    dra_world *w = th_world_testdata("extres/cluster");
    dra_features f;
    dra_features_default(&f);
    cr_assert_not(f.workload_claims, "beta, off by default");
    f.workload_claims = gate;
    json_t *out = dra_pod_allocate(w, dra_extres_find_pod(w, "default", "worker-0"), dra_world_find_node(w, "node-dra"), &f,
                                   NULL, NULL, NULL);
    dra_world_free(w);
    return out;
}

static const char *first_claim_name(const json_t *out) {
    const json_t *c = json_array_get(json_object_get(out, "claims"), 0);
    return json_string_value(json_object_get(json_object_get(c, "metadata"), "name"));
}

Test(podgroup, first_member_generates_the_group_claim) {
    json_t *out = worker0(true);
    cr_assert_str_eq(first_claim_name(out), "workers-shared");
    json_decref(out);
    out = worker0(false);
    /* gate off: a per-pod claim, named by the ResourceClaim controller's GenerateName */
    const char *n = first_claim_name(out);
    cr_assert(!strncmp(n, "worker-0-shared-", 16) && strlen(n) == 21, "%s", n);
    json_decref(out);
}
