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
