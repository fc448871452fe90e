/* test_input.c — real driver objects as kubectl users write them: DeviceTaintRules as
 * kube-scheduler's slice tracker applies them, YAML as sigs.k8s.io/yaml reads it,
 * apiVersions the API server serves (and converts), and the API server's validation.
 * Each test names the upstream code it follows. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/world/world.h"
#include "tests/engine/case_check.h"
#include "tests/engine/helpers.h"

/* Loads YAML text as the file `name` (so errors can be checked for it). */
static bool ti_load(th_store *ws, const char *text, err *e) {
    char path[] = "/tmp/dralloc-input-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    bool ok = th_load(ws, path, e);
    remove(path);
    return ok;
}

static const char slice_two_gpus[] = "apiVersion: resource.k8s.io/v1\n"
                                     "kind: ResourceSlice\n"
                                     "metadata: {name: s}\n"
                                     "spec:\n"
                                     "  driver: gpu.example.com\n"
                                     "  nodeName: node-1\n"
                                     "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                                     "  devices: [{name: gpu-0}, {name: gpu-1}]\n";

static th_store *world_with_rule(const char *rule) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    char text[4096];
    snprintf(text, sizeof text, "%s---\n%s", slice_two_gpus, rule);
    cr_assert(ti_load(ws, text, &e), "%s", e.msg);
    return ws;
}

/* The first slice of the store's world, as the allocator sees it. */
static const dra_slice *slice0(th_store *ws) {
    size_t n;
    const dra_slice *const *v = dra__world_all_slices(th_world(ws), &n);
    cr_assert_gt(n, 0);
    return v[0];
}

/* kube-scheduler's tracker (k8s.io/dynamic-resource-allocation v0.37.2
 * resourceslice/tracker/tracker.go, applyPatches: "No selector matches no devices"): a
 * null or absent selector taints no device, the empty selector {} every device.
 * scheduler_perf's templates/devicetaintrule.yaml says "Empty selector -> all devices!"
 * of a null one; the code decides (and tests/upstream's oracle, which runs the
 * tracker, agrees with it). */
Test(taintrules, null_or_absent_selector_taints_no_device_empty_one_every_device) {
    static const char *const rules[] = {
        "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
        "spec:\n  deviceSelector:\n  taint: {key: example.com/taint, value: tainted, effect: NoSchedule}\n",
        "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
        "spec:\n  taint: {key: example.com/taint, effect: NoSchedule}\n",
        "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
        "spec:\n  deviceSelector: {}\n  taint: {key: example.com/taint, effect: NoSchedule}\n",
    };
    static const uint32_t want[] = {0, 0, 1};
    for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
        th_store *ws = world_with_rule(rules[i]);
        const dra_slice *s = slice0(ws);
        cr_assert_eq(s->devices[0].ntaints, want[i], "rule %zu", i);
        cr_assert_eq(s->devices[1].ntaints, want[i], "rule %zu", i);
        if (want[i]) cr_assert_str_eq(s->devices[1].taints[0].key, "example.com/taint");
        th_free(ws);
    }
}

/* deviceClassName and selectors left DeviceTaintSelector in 1.35: the API server drops
 * them, so they do not narrow the rule (the tracker of 1.37 has no such fields): the
 * selector is there, and empty. */
Test(taintrules, removed_selector_fields_do_not_narrow) {
    th_store *ws = world_with_rule("apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                                   "spec:\n  deviceSelector:\n    deviceClassName: none\n"
                                   "  taint: {key: k, effect: NoSchedule}\n");
    cr_assert_eq(slice0(ws)->devices[0].ntaints, 1);
    cr_assert_eq(slice0(ws)->devices[1].ntaints, 1);
    th_free(ws);
    ws = world_with_rule("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                        "spec:\n  deviceSelector: {driver: gpu.example.com, device: gpu-1}\n"
                        "  taint: {key: k, effect: NoSchedule}\n");
    cr_assert_eq(slice0(ws)->devices[0].ntaints, 0);
    cr_assert_eq(slice0(ws)->devices[1].ntaints, 1);
    th_free(ws);
}

/* ---- YAML as sigs.k8s.io/yaml reads it --------------------------------------------- */

#include "engine/decode/decode.h"

static json_t *yaml1(const char *text) {
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(text, strlen(text), "t.yaml", &e);
    cr_assert_not_null(docs, "%s", e.msg);
    json_t *v = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return v;
}

/* A `---` glued to the previous line makes the next object's keys part of this one;
 * sigs.k8s.io/yaml's strict decoding (kubectl) rejects the repeated key. */
Test(yaml, duplicate_key_is_an_error_with_line) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    cr_assert_not(ti_load(ws,
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer---\n"
                          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n",
                          &e));
    cr_assert(strstr(e.msg, "key \"apiVersion\" already set in map (line 5)"), "%s", e.msg);
    cr_assert(strstr(e.object, "/tmp/dralloc-input-"), "%s", e.object);
    th_free(ws);
    /* keys a merge key brings in may be overridden */
    json_t *v = yaml1("base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  x: 3\n");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "m"), "x")), 3);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "m"), "z")), 2);
    json_decref(v);
    err_clear(&e);
    cr_assert_null(dra__yaml_load("a: 1\nb: {c: 1, c: 2}\n", 21, "t.yaml", &e));
    cr_assert(strstr(e.msg, "key \"c\" already set in map (line 2)"), "%s", e.msg);
}

/* go-yaml v2 resolve.go: strings.Replace(in, "_", "", -1), then
 * strconv.ParseInt(plain, 0, 64), ParseUint, then yamlStyleFloat. */
Test(yaml, integers_as_go_yaml_v2) {
    json_t *v = yaml1("a: 010\nb: 0o10\nc: 1_000\nd: 0x1F\ne: 0b101\nf: -0x10\ng: 08\nh: 99999999999999999999\n"
                      "i: 0x\nj: +7\nk: 1e3\nl: 0xFFFFFFFFFFFFFFFFF\nm: 1.5.2\n");
    cr_assert_eq(json_integer_value(json_object_get(v, "a")), 8);
    cr_assert_eq(json_integer_value(json_object_get(v, "b")), 8);
    cr_assert_eq(json_integer_value(json_object_get(v, "c")), 1000);
    cr_assert_eq(json_integer_value(json_object_get(v, "d")), 31);
    cr_assert_eq(json_integer_value(json_object_get(v, "e")), 5);
    cr_assert_eq(json_integer_value(json_object_get(v, "f")), -16);
    cr_assert(json_is_real(json_object_get(v, "g")));   /* invalid octal, a float: 8 */
    cr_assert_eq(json_real_value(json_object_get(v, "g")), 8.0);
    cr_assert(json_is_real(json_object_get(v, "h")));
    cr_assert_str_eq(json_string_value(json_object_get(v, "i")), "0x");
    cr_assert_eq(json_integer_value(json_object_get(v, "j")), 7);
    cr_assert_eq(json_real_value(json_object_get(v, "k")), 1000.0);
    cr_assert_str_eq(json_string_value(json_object_get(v, "l")), "0xFFFFFFFFFFFFFFFFF");
    cr_assert_str_eq(json_string_value(json_object_get(v, "m")), "1.5.2");
    json_decref(v);
}

/* 100,000 anchors, each alias naming the first ones: the lookup was a backward scan
 * (25 s); it is a hash index now. */
Test(yaml, hundred_thousand_anchors_load_in_linear_time) {
    enum { N = 100000 };
    size_t cap = (size_t)N * 40;
    char *text = malloc(cap);
    size_t n = 0;
    n += (size_t)snprintf(text + n, cap - n, "a:\n");
    for (int i = 0; i < N; i++) n += (size_t)snprintf(text + n, cap - n, "- &a%d v%d\n", i, i);
    n += (size_t)snprintf(text + n, cap - n, "b:\n");
    for (int i = 0; i < N; i++) n += (size_t)snprintf(text + n, cap - n, "- *a%d\n", i % 16);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(text, n, "t.yaml", &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_not_null(docs, "%s", e.msg);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(s, 10.0, "took %.2f s", s);   /* quadratic: ~110 s under ASan */
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_array_get(docs, 0), "b"), 17)), "v1");
    json_decref(docs);
    free(text);
}

/* ---- apiVersion, conversion, unknown fields ------------------------------------------- */

#include "engine/decode/validate.h"

/* Loads text into a fresh store reading with `in`; returns it (NULL and *e set on failure). */
static th_store *try_load_in(const char *text, const dra_input *in, err *e) {
    th_store *ws = th_new_in(true, in);
    err_clear(e);
    if (!ti_load(ws, text, e)) {
        th_free(ws);
        return NULL;
    }
    return ws;
}

static th_store *try_load(const char *text, err *e) { return try_load_in(text, NULL, e); }

static void expect_error(const char *text, const char *want) {
    err e;
    th_store *ws = try_load(text, &e);
    cr_assert_null(ws, "loaded, expected error %s", want);
    char buf[2048];
    err_format(&e, buf, sizeof buf);
    cr_assert(strstr(buf, want), "got: %s\nwant: %s", buf, want);
}

/* pkg/apis/resource/v1beta1 conversion: devices[].basic holds the device's fields. */
Test(apiversion, v1beta1_slice_basic_devices_convert) {
    err e;
    th_store *ws = try_load("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                            "spec:\n  driver: gpu.example.com\n  nodeName: node-1\n"
                            "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                            "  devices:\n  - name: gpu-0\n    basic:\n      attributes: {index: {int: 3}}\n"
                            "      capacity: {memory: {value: 80Gi}}\n",
                            &e);
    cr_assert_not_null(ws, "%s", e.msg);
    const dra_device *d = &slice0(ws)->devices[0];
    cr_assert_eq(d->cel.nattrs, 1);
    cr_assert_eq(d->cel.attrs[0].u.i, 3);
    cr_assert_eq(d->cel.ncaps, 1);
    th_free(ws);
}

/* v1beta1 requests carry the ExactDeviceRequest fields themselves; v1beta2 has v1's shape. */
Test(apiversion, v1beta1_and_v1beta2_claims_convert) {
    err e;
    th_store *ws = try_load("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: a}\n"
                            "spec:\n  devices:\n    requests:\n    - name: gpu\n      deviceClassName: gpu.example.com\n"
                            "      count: 2\n"
                            "---\napiVersion: resource.k8s.io/v1beta2\nkind: ResourceClaim\nmetadata: {name: b}\n"
                            "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.example.com}\n",
                            &e);
    cr_assert_not_null(ws, "%s", e.msg);
    const dra_claim *a = dra_world_find_claim(th_world(ws), NULL, "a");
    cr_assert(a->reqs[0].has_exactly);
    cr_assert_str_eq(a->reqs[0].exactly.class_name, "gpu.example.com");
    cr_assert_eq(a->reqs[0].exactly.count, 2);
    cr_assert_str_eq(a->reqs[0].exactly.mode, "ExactCount");
    const dra_claim *b = dra_world_find_claim(th_world(ws), NULL, "b");
    cr_assert_str_eq(b->reqs[0].exactly.class_name, "gpu.example.com");
    th_free(ws);
}

/* The API's typed lists (ResourceSliceList from /apis/resource.k8s.io/v1beta1) give
 * items no apiVersion: the v1beta1 shape is recognised, not dropped as unknown fields. */
Test(apiversion, typed_v1beta1_list_items_convert) {
    err e;
    th_store *ws = try_load("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSliceList\nitems:\n"
                            "- metadata: {name: s}\n  spec:\n    driver: gpu.example.com\n    nodeName: node-1\n"
                            "    pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                            "    devices: [{name: gpu-0, basic: {attributes: {index: {int: 3}}}}]\n",
                            &e);
    cr_assert_not_null(ws, "%s", e.msg);
    cr_assert_eq(slice0(ws)->devices[0].cel.nattrs, 1);
    th_free(ws);
}

Test(apiversion, unserved_versions_are_refused) {
    expect_error("apiVersion: example.com/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {}\n",
                 "ResourceSlice s: no matches for kind \"ResourceSlice\" in version \"example.com/v1\"");
    expect_error("apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaim\nmetadata: {name: c}\n",
                 "no matches for kind \"ResourceClaim\" in version \"resource.k8s.io/v1alpha3\"");
    expect_error("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: p}\n", "no matches for kind \"Pod\"");
}

static char warned[4096];
static void collect(void *ud, const char *msg) {
    (void)ud;
    snprintf(warned + strlen(warned), sizeof warned - strlen(warned), "%s\n", msg);
}

/* kubectl warns 'unknown field "spec.requests"'; a claim left without requests by
 * such a typo must not be "allocated" with no devices. */
Test(apiversion, unknown_fields_warn_and_strict_fails) {
    warned[0] = '\0';
    const dra_input warn = {.warn = collect}, strict = {.strict = true};
    err e;
    th_store *ws = try_load_in("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                               "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: x, colour: red}\n",
                               &warn, &e);
    cr_assert_not_null(ws, "%s", e.msg);
    th_free(ws);
    cr_assert(strstr(warned, "ResourceClaim c: unknown field \"spec.devices.requests[0].exactly.colour\""), "%s", warned);
    ws = try_load_in("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                    "spec:\n  requests:\n  - name: r\n    exactly: {deviceClassName: x}\n",
                    &warn, &e);
    cr_assert_null(ws);
    cr_assert(strstr(e.msg, "no spec.devices.requests"), "%s", e.msg);
    /* where nobody hears of unknown fields (a service's store) the walk is skipped,
     * but not for a claim: its misplaced requests still fail */
    const dra_input quiet = {0};
    ws = try_load_in("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                    "spec:\n  requests:\n  - name: r\n    exactly: {deviceClassName: x}\n",
                    &quiet, &e);
    cr_assert_null(ws);
    cr_assert(strstr(e.msg, "no spec.devices.requests"), "%s", e.msg);
    ws = try_load_in("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c, colour: red}\n", &strict, &e);
    cr_assert_null(ws);
    cr_assert(strstr(e.msg, "unknown field \"metadata.colour\""), "%s", e.msg);
}

/* ---- the API server's validation (pkg/apis/resource/validation/validation.go) -------------- */

static void claim_error(const char *requests, const char *want) {
    char text[8192];
    snprintf(text, sizeof text,
             "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
             "spec:\n  devices:\n%s",
             requests);
    expect_error(text, want);
}

Test(validation, claim_requests) {
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x, count: -1}\n",
                "ResourceClaim ns/c: spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x, count: \"3\"}\n",
                "spec.devices.requests[0].exactly.count: expected integer, got string");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x, count: 9223372036854775808}\n",
                "spec.devices.requests[0].exactly.count: cannot unmarshal number 9.2233720368547758e+18");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x, allocationMode: All, count: 2}\n",
                "count: Invalid value: 2: must not be specified when allocationMode is 'All'");
    claim_error("    requests:\n    - name: GPU\n      exactly: {deviceClassName: x}\n",
                "spec.devices.requests[0].name: Invalid value: \"GPU\": a lowercase RFC 1123 label must consist of");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x}\n    - name: r\n      exactly: {deviceClassName: x}\n",
                "spec.devices.requests[1]: Duplicate value: \"r\"");
    claim_error("    requests:\n    - exactly: {deviceClassName: x}\n",
                "spec.devices.requests[0].name: Invalid value: \"\"");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x}\n      firstAvailable: [{name: a, deviceClassName: x}]\n",
                "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, "
                "but multiple fields are set");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x}\n    constraints:\n"
                "    - {requests: [r, s], matchAttribute: example.com/numa}\n",
                "spec.devices.constraints[0].requests[1]: Invalid value: \"s\": must be the name of a request in the claim");
    claim_error("    requests:\n    - name: r\n      exactly:\n        deviceClassName: x\n"
                "        tolerations: [{key: k, operator: In, value: v}]\n",
                "spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: \"In\": supported values: "
                "\"Equal\", \"Exists\"");
    claim_error("    requests:\n    - name: r\n      exactly:\n        deviceClassName: x\n"
                "        tolerations: [{key: k, operator: Exists, value: v}]\n",
                "tolerations[0].value: Invalid value: \"v\": must be empty for operator `Exists`");
    char many[8192] = "    requests:\n";
    for (int i = 0; i < 33; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "    - {name: r%d, exactly: {deviceClassName: x}}\n", i);
    claim_error(many, "spec.devices.requests: Too many: 33: must have at most 32 items");
}

/* SetDefaults_ExactDeviceRequest: count is a plain int64, so `count: 0` becomes 1. */
Test(validation, count_zero_defaults_to_one) {
    err e;
    th_store *ws = try_load("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                            "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: x, count: 0}\n",
                            &e);
    cr_assert_not_null(ws, "%s", e.msg);
    cr_assert_eq(dra_world_find_claim(th_world(ws), NULL, "c")->reqs[0].exactly.count, 1);
    th_free(ws);
}

/* ndevices devices named gpu-<i> (or all `name` when set), each with device_extra. */
static void slice_error(const char *spec_extra, int ndevices, const char *name, const char *device_extra,
                        const char *want) {
    char *text = malloc(65536);
    snprintf(text, 65536,
             "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
             "spec:\n  driver: gpu.example.com\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n%s  devices:\n",
             spec_extra);
    for (int i = 0; i < ndevices; i++)
        if (name) snprintf(text + strlen(text), 65536 - strlen(text), "  - {name: %s%s}\n", name, device_extra);
        else snprintf(text + strlen(text), 65536 - strlen(text), "  - {name: gpu-%d%s}\n", i, device_extra);
    expect_error(text, want);
    free(text);
}

Test(validation, slices) {
    slice_error("  nodeName: node-1\n", 129, NULL, "", "ResourceSlice s: spec.devices: Too many: 129: must have at most 128 items");
    slice_error("  nodeName: node-1\n", 65, NULL, ", taints: [{key: k, effect: NoSchedule}]",
                "spec.devices: Too many: 65: must have at most 64 items");
    slice_error("  nodeName: node-1\n  allNodes: true\n", 1, NULL, "",
                "spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                "`perDeviceNodeSelection` is required, but multiple fields are set");
    slice_error("", 1, NULL, "", "spec: Required value: exactly one of `nodeName`");
    slice_error("  nodeName: node-1\n", 1, "GPU_0", "",
                "spec.devices[0].name: Invalid value: \"GPU_0\": a lowercase RFC 1123 label");
    slice_error("  nodeName: node-1\n", 1, NULL, ", taints: [{key: k, effect: NoScheduling}]",
                "spec.devices[0].taints[0].effect: Unsupported value: \"NoScheduling\": supported values: \"NoExecute\", "
                "\"NoSchedule\", \"None\"");
    slice_error("  nodeName: node-1\n", 2, "gpu", "", "spec.devices[1]: Duplicate value: \"gpu\"");
    expect_error("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu_example, "
                 "nodeName: n, pool: {name: p, resourceSliceCount: 1}}\n",
                 "spec.driver: Invalid value: \"gpu_example\": a lowercase RFC 1123 subdomain");
    expect_error("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: d, nodeName: n, "
                 "pool: {name: a/B, resourceSliceCount: 1}}\n",
                 "spec.pool.name: Invalid value: \"B\": a lowercase RFC 1123 subdomain");
    expect_error("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: S}\nspec: {driver: d, nodeName: n, "
                 "pool: {name: p, resourceSliceCount: 1}}\n",
                 "metadata.name: Invalid value: \"S\": a lowercase RFC 1123 subdomain");
}

/* The API server validates the whole object and reports every violation, joined as
 * apimachinery's errors.NewInvalid joins an ErrorList (ToAggregate: each text once,
 * "[a, b]" for more than one); one violation keeps the decoder's form. */
Test(validation, every_violation_of_an_object) {
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x, count: -1}\n"
                "    - name: r\n      exactly: {deviceClassName: Bad}\n",
                "ResourceClaim ns/c is invalid: [spec.devices.requests[0].exactly.count: Invalid value: -1: must be "
                "greater than zero, spec.devices.requests[1].exactly.deviceClassName: Invalid value: \"Bad\": a lowercase "
                "RFC 1123 subdomain must consist of");
    claim_error("    requests:\n    - name: r\n      exactly: {deviceClassName: x, count: -1}\n"
                "    - name: r\n      exactly: {deviceClassName: Bad}\n",
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.devices.requests[1]: Duplicate "
                "value: \"r\"]");
    char *text = malloc(65536);
    snprintf(text, 65536,
             "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
             "spec:\n  driver: gpu_example\n  nodeName: node-1\n  pool: {name: p, generation: -1, resourceSliceCount: 1}\n"
             "  devices: [{name: gpu}, {name: gpu, taints: [{key: k}]}]\n");
    expect_error(text, "ResourceSlice s is invalid: [spec.driver: Invalid value: \"gpu_example\": a lowercase RFC 1123 "
                       "subdomain");
    expect_error(text, ", spec.pool.generation: Invalid value: -1: must be greater than or equal to zero, "
                       "spec.devices[1].taints[0].effect: Required value, spec.devices[1]: Duplicate value: \"gpu\"]");
    /* the same text twice is one violation */
    snprintf(text, 65536,
             "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
             "spec: {driver: d, nodeName: node-1, pool: {name: A/A, resourceSliceCount: 1}}\n");
    err e;
    th_store *ws = try_load(text, &e);
    cr_assert_null(ws);
    char buf[2048];
    err_format(&e, buf, sizeof buf);
    cr_assert(!strncmp(buf, "ResourceSlice s: spec.pool.name: Invalid value: \"A\": a lowercase RFC 1123 subdomain", 80),
              "%s", buf);
    free(text);
}

/* encoding/json into interface{} makes an integer beyond int64 a float64: driver
 * parameters holding one do not fail the file. */
Test(validation, json_integer_beyond_int64_in_parameters) {
    static const char text[] = "{\"kind\": \"ResourceClaim\", \"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {"
                               "\"config\": [{\"opaque\": {\"driver\": \"d\", \"parameters\": {\"big\": 18446744073709551616}}}]}}}";
    err e;
    err_clear(&e);
    json_t *v = dra_json_load(text, strlen(text), "c.json", NULL, &e);
    cr_assert_not_null(v, "%s", e.msg);
    const json_t *big = json_object_get(json_object_get(json_object_get(json_array_get(
        json_object_get(json_object_get(json_object_get(v, "spec"), "devices"), "config"), 0), "opaque"), "parameters"), "big");
    cr_assert(json_is_real(big));
    json_decref(v);
    cr_assert_null(dra_json_load("{\"a\": }", 7, "bad.json", NULL, &e));
    cr_assert(strstr(e.msg, "JSON:"), "%s", e.msg);
}

/* testdata/realworld: v1beta1 objects and the scheduler_perf taint rule, as cases. */
Test(realworld, testdata_cases) {
    cc_check_dir("realworld", 4);
}

/* ---- input settings per reader ------------------------------------------------------------ */

typedef struct sink {
    const char *field;         /* the unknown field this thread's objects carry */
    bool strict;
    int warned, foreign, loaded, refused;
} sink;

static void sink_warn(void *ud, const char *msg) {
    sink *s = ud;
    if (strstr(msg, s->field)) s->warned++;
    else s->foreign++;
}

static void *load_many(void *arg) {
    sink *s = arg;
    const dra_input in = {.warn = sink_warn, .ud = s, .strict = s->strict};
    char text[512];
    snprintf(text, sizeof text, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {%s: 1}\n",
             s->field);
    for (int i = 0; i < 200; i++) {
        err e;
        th_store *ws = try_load_in(text, &in, &e);
        if (ws) s->loaded++;
        else if (strstr(e.msg, "(strict)")) s->refused++;
        th_free(ws);
    }
    return NULL;
}

/* The warning sink and strictness go with the store that reads (dra_store_opts),
 * not the process: two threads loading at once, one strict and one collecting its
 * warnings, each see only their own settings. */
Test(apiversion, input_settings_per_thread) {
    sink a = {.field = "colour"}, b = {.field = "flavour", .strict = true};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, load_many, &a);
    pthread_create(&tb, NULL, load_many, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_assert_eq(a.loaded, 200, "lenient thread refused %d", a.refused);
    cr_assert_eq(a.warned, 200);
    cr_assert_eq(a.foreign, 0);
    cr_assert_eq(b.refused, 200, "strict thread loaded %d", b.loaded);
    cr_assert_eq(b.warned + b.foreign, 0);
}
