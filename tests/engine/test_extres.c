/* test_extres.c — extended resources (engine/extres.c): every case of testdata/extres,
 * and the example cluster of testdata/extres/cluster through dra_pod_allocate, the
 * code behind `dralloc allocate --pod`: a DRA node gets the implicit claim, a
 * device-plugin node is counted, and allocations feed the allocated state. */
#include "tests/engine/case_check.h"

#include "engine/pod/podplan.h"

Test(extres, testdata_cases) {
    cc_check_dir("extres", 21);
}

static th_store *cluster(void) { return th_store_testdata("extres/cluster"); }

Test(extres, dra_node_gets_the_implicit_claim) {
    th_store *ws = cluster();
    const dra_world *w = th_world(ws);
    dra_features f;
    dra_features_default(&f);
    dra_allocated *st = dra_allocated_new(w);
    const dra_pod *pod = dra_extres_find_pod(w, "default", "trainer");
    cr_assert_not_null(pod);
    json_t *out = dra_pod_allocate(w, pod, dra_world_find_node(w, "node-dra"), &f, st, NULL, NULL);
    const json_t *claims = json_object_get(out, "claims");
    cr_assert_eq(json_array_size(claims), 1, "%s", json_string_value(json_object_get(out, "reason")));
    const json_t *c = json_array_get(claims, 0);
    /* the scheduler creates it with GenerateName <pod>-extended-resources- */
    const char *name = json_string_value(json_object_get(json_object_get(c, "metadata"), "name"));
    cr_assert(!strncmp(name, "trainer-extended-resources-", 27) && strlen(name) == 32, "%s", name);
    cr_assert_str_eq(th_device(out, 0, 0), "gpu-0");
    cr_assert_str_eq(th_device(out, 0, 1), "gpu-1");
    /* the pod's status names, per request of the implicit claim, its container and
     * resource (status.extendedResourceClaimStatus, KEP-5004) */
    const json_t *ers = json_object_get(json_object_get(out, "podStatus"), "extendedResourceClaimStatus");
    cr_assert_str_eq(json_string_value(json_object_get(ers, "resourceClaimName")), name);
    const json_t *m = json_array_get(json_object_get(ers, "requestMappings"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(m, "containerName")), "main");
    cr_assert_str_eq(json_string_value(json_object_get(m, "resourceName")), "example.com/gpu");
    cr_assert_str_eq(json_string_value(json_object_get(m, "requestName")), "container-0-request-0");
    json_decref(out);
    /* the allocation is recorded: a second pod gets the other two GPUs, a third none */
    const dra_pod *small = dra_extres_find_pod(w, "default", "small");
    out = dra_pod_allocate(w, small, dra_world_find_node(w, "node-dra"), &f, st, NULL, NULL);
    cr_assert_str_eq(th_device(out, 0, 0), "gpu-2");
    json_decref(out);
    out = dra_pod_allocate(w, pod, dra_world_find_node(w, "node-dra"), &f, st, NULL, NULL);
    cr_assert(json_is_true(json_object_get(out, "unsatisfiable")));
    json_decref(out);
    dra_allocated_free(st);
    th_free(ws);
}

Test(extres, device_plugin_node_is_counted) {
    th_store *ws = cluster();
    const dra_world *w = th_world(ws);
    dra_features f;
    dra_features_default(&f);
    const dra_pod *pod = dra_extres_find_pod(w, "default", "trainer");
    json_t *out = dra_pod_allocate(w, pod, dra_world_find_node(w, "node-dp"), &f, NULL, NULL, NULL);
    cr_assert(json_is_true(json_object_get(out, "unsatisfiable")), "4 allocatable, 3 used by busy, 2 wanted");
    cr_assert(strstr(json_string_value(json_object_get(out, "reason")), "Insufficient example.com/gpu") != NULL);
    json_decref(out);
    th_free(ws);
}

Test(extres, feature_gate_default_on) {
    dra_features f;
    dra_features_default(&f);
    cr_assert(f.extended_resource);
    err e;
    err_clear(&e);
    cr_assert(dra_features_parse(&f, "DRAExtendedResource=false", &e), "%s", e.msg);
    cr_assert_not(f.extended_resource);
}
