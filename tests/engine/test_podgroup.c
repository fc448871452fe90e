/* test_podgroup.c — PodGroup claims (engine/world/podgroup.c): every case of
 * testdata/podgroup, and the first-member / later-member sequence on the example
 * cluster (testdata/extres/cluster) with DRAWorkloadResourceClaims on and off. */
#include "tests/engine/case_check.h"

#include "engine/pod/podplan.h"

Test(podgroup, testdata_cases) {
    cc_check_dir("podgroup", 11);
}

Test(podgroup, later_member_allocates_nothing) {
    json_t *out = cc_run_case("podgroup", "later-member-reuses");
    cr_assert_eq(json_array_size(json_object_get(out, "allocations")), 0);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(out, "reused"), 0)), "default/workers-gpus-x7k2p");
    json_decref(out);
}

static json_t *worker0(bool gate) {
    th_store *ws = th_store_testdata("extres/cluster");
    const dra_world *w = th_world(ws);
    dra_features f;
    dra_features_default(&f);
    cr_assert_not(f.workload_claims, "beta, off by default");
    f.workload_claims = gate;
    json_t *out = dra_pod_allocate(w, dra_extres_find_pod(w, "default", "worker-0"), dra_world_find_node(w, "node-dra"), &f,
                                   NULL, NULL, NULL);
    th_free(ws);
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

/* KEP-5729: a PodGroup's claim is reserved for the group, not the member pod
 * ({apiGroup: scheduling.k8s.io, resource: podgroups}, as kube-scheduler's tests
 * write it); a later member reusing it adds nothing; a member's own claim is
 * reserved for the pod. */
Test(podgroup, group_claim_is_reserved_for_the_group) {
    json_t *out = worker0(true);
    const json_t *c = json_array_get(json_object_get(out, "claims"), 0);
    const json_t *rf = json_object_get(json_object_get(c, "status"), "reservedFor");
    cr_assert_eq(json_array_size(rf), 1);
    const json_t *r = json_array_get(rf, 0);
    cr_assert_str_eq(json_string_value(json_object_get(r, "apiGroup")), "scheduling.k8s.io");
    cr_assert_str_eq(json_string_value(json_object_get(r, "resource")), "podgroups");
    cr_assert_str_eq(json_string_value(json_object_get(r, "name")), "workers");
    json_decref(out);
    out = worker0(false);
    r = json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(out, "claims"), 0), "status"),
                                       "reservedFor"),
                       0);
    cr_assert_str_eq(json_string_value(json_object_get(r, "resource")), "pods", "gate off: the pod's own claim");
    cr_assert_str_eq(json_string_value(json_object_get(r, "name")), "worker-0");
    json_decref(out);
    /* the later member: the group claim printed with the group appended once */
    out = cc_run_case("podgroup", "later-member-reuses");
    const json_t *reused = json_array_get(json_object_get(out, "reusedClaims"), 0);
    rf = json_object_get(json_object_get(reused, "status"), "reservedFor");
    cr_assert_eq(json_array_size(rf), 1, "reserved for the group, not for each member");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(rf, 0), "resource")), "podgroups");
    json_decref(out);
}
