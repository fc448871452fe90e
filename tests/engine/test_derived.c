/* test_derived.c — derived attributes (engine/alloc/derived.c) and DeviceTaintRules
 * (engine/decode/taintrule.c): every case of testdata/derived and testdata/taintrules, plus
 * checks of the rules those cases rely on (evaluation only after the selectors,
 * errors where the constraint looks the value up, backtracking through derived
 * values, the feature gate, the API server's name checks). */
#include "tests/engine/case_check.h"

Test(derived, testdata_cases) {
    cc_check_dir("derived", 33);
}

Test(taintrules, testdata_cases) {
    cc_check_dir("taintrules", 12);
}

Test(derived, gpu_nic_numa_backtracks_to_the_aligned_pair) {
    /* gpu-0 (numa 0) comes first; no NIC has numaNode 0, so the search must take it back */
    json_t *out = cc_run_case("derived", "gpu-nic-numa");
    cr_assert_not_null(json_object_get(out, "allocations"));
    cr_assert_str_eq(th_device(out, 0, 0), "gpu-1");
    cr_assert_str_eq(th_device(out, 0, 1), "nic-0");
    json_decref(out);
}

static json_t *run_inline(const char *text) {
    json_error_t je;
    json_t *c = json_loads(text, 0, &je);
    cr_assert_not_null(c, "%s (line %d)", je.text, je.line);
    json_t *out = th_run(c);
    json_decref(c);
    return out;
}

#define SLICE_NO_NUMA_FIRST                                                                                      \
    "\"node\": {\"metadata\": {\"name\": \"n\"}},"                                                              \
    "\"classes\": [{\"metadata\": {\"name\": \"gpu\"}, \"spec\": {}}],"                                           \
    "\"slices\": [{\"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"gpu.example.com\", \"nodeName\": \"n\"," \
    "  \"pool\": {\"name\": \"p\", \"generation\": 1, \"resourceSliceCount\": 1},"                              \
    "  \"devices\": [{\"name\": \"plain\"}, {\"name\": \"numa\", \"attributes\": {\"numa\": {\"int\": 3}}}]}}],"   \
    "\"allocatedDevices\": [],"

Test(derived, evaluated_only_after_the_selectors_accept_the_device) {
    /* "plain" has no numa attribute: the expression would fail on it, but the request's
     * selector rejects it first, so it is never evaluated there. */
    json_t *out = run_inline("{\"features\": {\"derivedAttributes\": true}," SLICE_NO_NUMA_FIRST
                             "\"claims\": [{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
                             "  \"requests\": [{\"name\": \"r\", \"exactly\": {\"deviceClassName\": \"gpu\", "
                             "    \"allocationMode\": \"ExactCount\", \"count\": 1,"
                             "    \"selectors\": [{\"cel\": {\"expression\": \"'numa' in device.attributes['gpu.example.com']\"}}],"
                             "    \"derivedAttributes\": [{\"name\": \"x.example.com/numa\", "
                             "       \"expression\": \"device.attributes['gpu.example.com'].numa\"}]}}],"
                             "  \"constraints\": [{\"matchAttribute\": \"x.example.com/numa\"}]}}}]}");
    cr_assert_null(json_object_get(out, "error"), "%s", json_string_value(json_object_get(out, "error")));
    cr_assert_str_eq(th_device(out, 0, 0), "numa");
    json_decref(out);
}

Test(derived, runtime_error_on_any_candidate_aborts) {
    /* without the selector "plain" is a candidate: the missing attribute aborts the
     * allocation although "numa" would have worked, in Kubernetes' words
     * (lookupAttribute: no claim prefix, no optional-chaining hint) */
    json_t *out = run_inline("{\"features\": {\"derivedAttributes\": true}," SLICE_NO_NUMA_FIRST
                             "\"claims\": [{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
                             "  \"requests\": [{\"name\": \"r\", \"exactly\": {\"deviceClassName\": \"gpu\", "
                             "    \"allocationMode\": \"ExactCount\", \"count\": 1,"
                             "    \"derivedAttributes\": [{\"name\": \"x.example.com/numa\", "
                             "       \"expression\": \"device.attributes['gpu.example.com'].numa\"}]}}],"
                             "  \"constraints\": [{\"matchAttribute\": \"x.example.com/numa\"}]}}}]}");
    const char *msg = json_string_value(json_object_get(out, "error"));
    cr_assert_not_null(msg);
    cr_expect_str_eq(msg, "evaluate derived attribute x.example.com/numa on device gpu.example.com/p/plain failed: no such key: numa");
    json_decref(out);
}

Test(derived, no_error_where_no_constraint_looks_it_up) {
    /* the constraint applies to another request: r's derived attribute is never looked
     * up (and the claim is API-invalid: reported as the API server words it) */
    json_t *out = run_inline("{\"features\": {\"derivedAttributes\": true}," SLICE_NO_NUMA_FIRST
                             "\"claims\": [{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
                             "  \"requests\": [{\"name\": \"r\", \"exactly\": {\"deviceClassName\": \"gpu\", "
                             "    \"allocationMode\": \"ExactCount\", \"count\": 1,"
                             "    \"derivedAttributes\": [{\"name\": \"x.example.com/numa\", "
                             "       \"expression\": \"device.attributes['gpu.example.com'].numa\"}]}},"
                             "   {\"name\": \"q\", \"exactly\": {\"deviceClassName\": \"gpu\", \"allocationMode\": \"ExactCount\", \"count\": 1}}],"
                             "  \"constraints\": [{\"requests\": [\"q\"], \"matchAttribute\": \"x.example.com/numa\"}]}}}]}");
    const char *msg = json_string_value(json_object_get(out, "error"));
    cr_assert_not_null(msg);
    cr_expect(strstr(msg, "derivedAttributes[0].name: Invalid value: \"x.example.com/numa\": must be referenced by at least one "
                          "matchAttribute or distinctAttribute constraint targeting this request") != NULL,
              "%s", msg);
    json_decref(out);
}

Test(derived, gate_off_is_an_error) {
    json_t *out = run_inline("{\"features\": {\"derivedAttributes\": false}," SLICE_NO_NUMA_FIRST
                             "\"claims\": [{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
                             "  \"requests\": [{\"name\": \"r\", \"exactly\": {\"deviceClassName\": \"gpu\", "
                             "    \"allocationMode\": \"ExactCount\", \"count\": 1,"
                             "    \"derivedAttributes\": [{\"name\": \"x.example.com/numa\", \"expression\": \"1\"}]}}],"
                             "  \"constraints\": [{\"matchAttribute\": \"x.example.com/numa\"}]}}}]}");
    const char *msg = json_string_value(json_object_get(out, "error"));
    cr_assert_not_null(msg);
    cr_expect_str_eq(msg, "claim c, request r: cannot handle request with derived attributes, the feature is disabled");
    json_decref(out);
}

Test(derived, optional_chaining_avoids_the_error) {
    json_t *out = run_inline("{\"features\": {\"derivedAttributes\": true}," SLICE_NO_NUMA_FIRST
                             "\"claims\": [{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
                             "  \"requests\": [{\"name\": \"r\", \"exactly\": {\"deviceClassName\": \"gpu\", "
                             "    \"allocationMode\": \"ExactCount\", \"count\": 2,"
                             "    \"derivedAttributes\": [{\"name\": \"x.example.com/numa\", "
                             "       \"expression\": \"device.attributes['gpu.example.com'].?numa.orValue(-1)\"}]}}],"
                             "  \"constraints\": [{\"distinctAttribute\": \"x.example.com/numa\"}]}}}]}");
    cr_assert_null(json_object_get(out, "error"), "%s", json_string_value(json_object_get(out, "error")));
    cr_assert_str_eq(th_device(out, 0, 0), "plain");
    cr_assert_str_eq(th_device(out, 0, 1), "numa");
    json_decref(out);
}

Test(derived, feature_gate) {
    dra_features f;
    dra_features_default(&f);
    cr_assert_not(f.derived_attributes, "alpha: off by default");
    err e;
    err_clear(&e);
    cr_assert(dra_features_parse(&f, "DRADerivedAttributes=true", &e), "%s", e.msg);
    cr_assert(f.derived_attributes);
}

#include "engine/world/world.h"

/* A rule selects devices of the slices of the snapshot it is in: one added later
 * reaches the old slice, a slice added later gets every rule, and no taint is merged
 * twice (the slices are shared between snapshots; rules go into copies). */
Test(taintrules, merged_once_across_snapshots) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    json_t *slice = json_loads("{\"kind\": \"ResourceSlice\", \"metadata\": {\"name\": \"s\"}, \"spec\": {\"driver\": \"d\","
                               " \"nodeName\": \"n\", \"pool\": {\"name\": \"p\", \"generation\": 1, \"resourceSliceCount\": 1},"
                               " \"devices\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}}",
                               0, NULL);
    json_t *rule = json_loads("{\"apiVersion\": \"resource.k8s.io/v1beta2\", \"kind\": \"DeviceTaintRule\", \"metadata\": {\"name\": \"r\"},"
                              " \"spec\": {\"deviceSelector\": {\"device\": \"a\"}, \"taint\": {\"key\": \"k\", \"effect\": \"NoSchedule\"}}}",
                              0, NULL);
    cr_assert(th_add(ws, slice, &e), "%s", e.msg);
    cr_assert(th_add(ws, rule, &e), "%s", e.msg);
    size_t n;
    const dra_slice *const *sl = dra__world_all_slices(th_world(ws), &n);
    sl = dra__world_all_slices(th_world(ws), &n);   /* the same snapshot again */
    cr_assert_eq(n, 1);
    cr_assert_eq(sl[0]->devices[0].ntaints, 1);
    cr_assert_str_eq(sl[0]->devices[0].taints[0].key, "k");
    cr_assert_eq(sl[0]->devices[1].ntaints, 0);
    json_object_set_new(json_object_get(json_object_get(rule, "spec"), "deviceSelector"), "device", json_string("b"));
    json_object_set_new(json_object_get(rule, "metadata"), "name", json_string("r2"));   /* one object per name */
    cr_assert(th_add(ws, rule, &e), "%s", e.msg);
    json_object_set_new(json_object_get(slice, "metadata"), "name", json_string("s2"));
    cr_assert(th_add(ws, slice, &e), "%s", e.msg);
    sl = dra__world_all_slices(th_world(ws), &n);
    cr_assert_eq(n, 2);
    cr_assert_eq(sl[0]->devices[0].ntaints, 1);
    cr_assert_eq(sl[0]->devices[1].ntaints, 1);
    cr_assert_eq(sl[1]->devices[0].ntaints, 1);
    cr_assert_eq(sl[1]->devices[1].ntaints, 1);
    json_decref(slice);
    json_decref(rule);
    th_free(ws);
}

Test(taintrules, rule_without_taint_is_rejected) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    json_t *rule = json_loads("{\"kind\": \"DeviceTaintRule\", \"metadata\": {\"name\": \"r\"}, \"spec\": {\"deviceSelector\": {}}}", 0,
                              NULL);
    cr_assert_not(th_add(ws, rule, &e));
    char buf[1024];
    cr_expect(strstr(err_format(&e, buf, sizeof buf), "DeviceTaintRule r") != NULL, "%s", buf);
    cr_expect(strstr(buf, "taint: Required value") != NULL, "%s", buf);
    json_decref(rule);
    th_free(ws);
}

/* One claim with one derived attribute called `name`, used by a distinct constraint. */
static json_t *run_named(const char *name) {
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"features\": {\"derivedAttributes\": true}," SLICE_NO_NUMA_FIRST
             "\"claims\": [{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
             "  \"requests\": [{\"name\": \"r\", \"exactly\": {\"deviceClassName\": \"gpu\", "
             "    \"allocationMode\": \"ExactCount\", \"count\": 1,"
             "    \"derivedAttributes\": [{\"name\": \"%s\", \"expression\": \"device.driver\"}]}}],"
             "  \"constraints\": [{\"distinctAttribute\": \"%s\"}]}}}]}",
             name, name);
    return run_inline(buf);
}

Test(derived, name_format) {
    static const char *const ok[] = {
        "derived/numa", "a.b-c.example.com/_x9", "d/N", "x/abcdefghijklmnopqrstuvwxyz012345",
        "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyza/id",   /* 63-character domain */
        "derived/a/b",   /* more than one '/': ResourceFullyQualifiedName looks no further */
    };
    static const char *const bad[] = {
        "numa", "/numa", "derived/", "Derived/numa", "-d/numa", "d-/numa", "d..e/numa", "derived/9numa",
        "derived/numa-node", "x/abcdefghijklmnopqrstuvwxyz0123456",   /* 33-character id */
        "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyzab/id",         /* 64-character domain */
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        json_t *out = run_named(ok[i]);
        cr_expect_null(json_object_get(out, "error"), "%s: %s", ok[i], json_string_value(json_object_get(out, "error")));
        json_decref(out);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *out = run_named(bad[i]);
        const char *msg = json_string_value(json_object_get(out, "error"));
        cr_expect(msg && (strstr(msg, "derivedAttributes[0].name: Invalid value") ||
                          strstr(msg, "derivedAttributes[0].name: Too long: may not be more than")),
                  "%s: %s", bad[i], msg ? msg : "accepted");
        json_decref(out);
    }
}
