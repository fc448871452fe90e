/* test_input.c — real driver objects as kubectl users write them: DeviceTaintRules as
 * kube-scheduler's slice tracker applies them, YAML as sigs.k8s.io/yaml reads it,
 * apiVersions the API server serves (and converts), and the API server's validation.
 * Each test names the upstream code it follows. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/world.h"
#include "tests/engine/helpers.h"

/* Loads YAML text as the file `name` (so errors can be checked for it). */
static bool ti_load(dra_world *w, const char *text, err *e) {
    char path[] = "/tmp/dralloc-input-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    bool ok = dra_world_load_path(w, path, e);
    remove(path);
    return ok;
}

static const char slice_two_gpus[] = "apiVersion: resource.k8s.io/v1\n"
                                     "kind: ResourceSlice\n"
                                     "metadata: {name: s}\n"
                                     "spec:\n"
                                     "  driver: gpu.example.com\n"
                                     "  nodeName: n\n"
                                     "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                                     "  devices: [{name: gpu-0}, {name: gpu-1}]\n";

static dra_world *world_with_rule(const char *rule) {
    dra_world *w = dra_world_new(true);
    err e;
    err_clear(&e);
    char text[4096];
    snprintf(text, sizeof text, "%s---\n%s", slice_two_gpus, rule);
    cr_assert(ti_load(w, text, &e), "%s", e.msg);
    dra_world_freeze(w);
    return w;
}

/* kube-scheduler's tracker (k8s.io/dynamic-resource-allocation/resourceslice/tracker/
 * tracker.go, applyPatches) filters by driver/pool/device only `if deviceSelector !=
 * nil`: a null or absent selector taints every device (scheduler_perf's
 * templates/devicetaintrule.yaml relies on it: "Empty selector -> all devices!"). */
Test(taintrules, null_or_absent_selector_taints_every_device) {
    static const char *const rules[] = {
        "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
        "spec:\n  deviceSelector:\n  taint: {key: example.com/taint, value: tainted, effect: NoSchedule}\n",
        "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
        "spec:\n  taint: {key: example.com/taint, effect: NoSchedule}\n",
    };
    for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
        dra_world *w = world_with_rule(rules[i]);
        const dra_slice *s = w->slices.v[0];
        cr_assert_eq(s->devices[0].ntaints, 1, "rule %zu", i);
        cr_assert_eq(s->devices[1].ntaints, 1, "rule %zu", i);
        cr_assert_str_eq(s->devices[1].taints[0].key, "example.com/taint");
        dra_world_free(w);
    }
}

/* deviceClassName and selectors left DeviceTaintSelector in 1.35: the API server drops
 * them, so they do not narrow the rule (the tracker of 1.37 has no such fields). */
Test(taintrules, removed_selector_fields_do_not_narrow) {
    dra_world *w = world_with_rule("apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                                   "spec:\n  deviceSelector:\n    deviceClassName: none\n"
                                   "  taint: {key: k, effect: NoSchedule}\n");
    cr_assert_eq(w->slices.v[0]->devices[0].ntaints, 1);
    cr_assert_eq(w->slices.v[0]->devices[1].ntaints, 1);
    dra_world_free(w);
    w = world_with_rule("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                        "spec:\n  deviceSelector: {driver: gpu.example.com, device: gpu-1}\n"
                        "  taint: {key: k, effect: NoSchedule}\n");
    cr_assert_eq(w->slices.v[0]->devices[0].ntaints, 0);
    cr_assert_eq(w->slices.v[0]->devices[1].ntaints, 1);
    dra_world_free(w);
}

/* ---- YAML as sigs.k8s.io/yaml reads it --------------------------------------------- */

#include "engine/decode.h"

static json_t *yaml1(const char *text) {
    err e;
    err_clear(&e);
    json_t *docs = dra_yaml_load(text, strlen(text), "t.yaml", &e);
    cr_assert_not_null(docs, "%s", e.msg);
    json_t *v = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return v;
}

/* A `---` glued to the previous line makes the next object's keys part of this one;
 * sigs.k8s.io/yaml's strict decoding (kubectl) rejects the repeated key. */
Test(yaml, duplicate_key_is_an_error_with_line) {
    dra_world *w = dra_world_new(true);
    err e;
    err_clear(&e);
    cr_assert_not(ti_load(w,
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer---\n"
                          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n",
                          &e));
    cr_assert(strstr(e.msg, "key \"apiVersion\" already set in map (line 5)"), "%s", e.msg);
    cr_assert(strstr(e.object, "/tmp/dralloc-input-"), "%s", e.object);
    dra_world_free(w);
    /* keys a merge key brings in may be overridden */
    json_t *v = yaml1("base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  x: 3\n");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "m"), "x")), 3);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "m"), "z")), 2);
    json_decref(v);
    err_clear(&e);
    cr_assert_null(dra_yaml_load("a: 1\nb: {c: 1, c: 2}\n", 21, "t.yaml", &e));
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
    json_t *docs = dra_yaml_load(text, n, "t.yaml", &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_not_null(docs, "%s", e.msg);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(s, 3.0, "took %.2f s", s);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_array_get(docs, 0), "b"), 17)), "v1");
    json_decref(docs);
    free(text);
}
