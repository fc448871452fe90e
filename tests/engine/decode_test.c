/* decode_test.c — the decoder: kinds, lists, YAML documents, and errors that name the
 * object and the field path. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/world.h"
#include "tests/engine/helpers.h"

static bool load_yaml(th_store *ws, const char *text, err *e) {
    char path[] = "/tmp/dralloc-decode-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    bool ok = th_load(ws, path, e);
    remove(path);
    return ok;
}

Test(decode, multi_document_yaml_and_lists) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    cr_assert(load_yaml(ws,
                        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: a, namespace: ns}\n"
                        "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: c}\n"
                        "---\n"
                        "apiVersion: v1\nkind: List\nitems:\n"
                        "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1, labels: {zone: \"1\"}}\n"
                        "---\n"
                        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimList\nitems:\n"
                        "- metadata: {name: b}\n  spec: {}\n  unknownField: 3\n",
                        &e),
              "%s", e.msg);
    const dra_world *w = th_world(ws);
    cr_assert_eq(dra_world_nclaims(w), 2);
    const dra_claim *a = dra_world_find_claim(w, "ns", "a");
    cr_assert_not_null(a);
    cr_assert_eq(a->nreqs, 1);
    /* API defaults applied to hand-written objects */
    cr_assert_str_eq(a->reqs[0].exactly.mode, "ExactCount");
    cr_assert_eq(a->reqs[0].exactly.count, 1);
    cr_assert_not_null(dra_world_find_claim(w, NULL, "b"));
    const dra_node *n = dra_world_find_node(w, "n1");
    cr_assert_not_null(n);
    cr_assert_str_eq(n->labels[0].value, "1");
    th_free(ws);
}

Test(decode, bad_quantity_names_object_and_path) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert_not(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-1-gpus\"},\"spec\":{\"driver\":\"d\","
                                 "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
                                 "\"devices\":[{\"name\":\"a\"},{\"name\":\"b\",\"capacity\":{\"memory\":{\"value\":\"12XB\"}}}]}}", &e));
    cr_assert_str_eq(e.object, "ResourceSlice node-1-gpus");
    cr_assert_str_eq(e.path, "spec.devices[1].capacity[\"memory\"].value");
    th_free(ws);
}

Test(decode, wrong_type_rejected) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert_not(th_add_json(ws, "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},"
                                 "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"x\","
                                 "\"count\":\"many\"}}]}}}", &e));
    cr_assert_str_eq(e.object, "ResourceClaim default/c");
    cr_assert_str_eq(e.path, "spec.devices.requests[0].exactly.count");
    th_free(ws);
}

Test(decode, attribute_with_two_values_rejected) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert_not(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\","
                                 "\"pool\":{\"name\":\"p\"},\"allNodes\":true,"
                                 "\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{\"int\":1,\"string\":\"y\"}}}]}}", &e));
    cr_assert_str_eq(e.path, "spec.devices[0].attributes[\"x\"]");
    th_free(ws);
}

Test(decode, empty_attribute_is_a_lazy_cel_error) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\","
                             "\"pool\":{\"name\":\"p\"},\"allNodes\":true,"
                             "\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{}}}]}}", &e), "%s", e.msg);
    th_free(ws);
}

Test(decode, invalid_yaml) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    cr_assert_not(load_yaml(ws, "kind: Node\nmetadata: [unclosed\n", &e));
    cr_assert(strstr(e.msg, "YAML") != NULL);
    th_free(ws);
}

Test(features, gates) {
    dra_features f;
    dra_features_default(&f);
    cr_assert(f.prioritized_list);
    cr_assert_not(f.list_type_attributes);
    err e;
    err_clear(&e);
    cr_assert(dra_features_parse(&f, "DRAListTypeAttributes=true,DRAPrioritizedList=false", &e));
    cr_assert(f.list_type_attributes);
    cr_assert_not(f.prioritized_list);
    cr_assert(dra_features_parse(&f, "DRAResourceClaimDeviceStatus=false", &e));
    cr_assert_not(f.binding_conditions);
    cr_assert_not(dra_features_parse(&f, "NoSuchGate=true", &e));
    /* DRASchedulerFilterTimeout was accepted and did nothing: it turns the 10 s default off */
    cr_assert(f.filter_timeout);
    cr_assert(dra_features_parse(&f, "DRASchedulerFilterTimeout=false", &e));
    cr_assert_not(f.filter_timeout);
}

/* Every DRA feature gate of Kubernetes 1.37 with its 1.37 default (issue #21: a real
 * cluster's --feature-gates was refused because DRADeviceCompatibilityGroups was not
 * known): each is accepted by name, set both ways, and the defaults are Kubernetes'. */
Test(features, every_dra_gate_of_kubernetes_1_37) {
    static const struct {
        const char *name;
        bool dflt;
    } gates[] = {
        {"DynamicResourceAllocation", true},     {"DRAAdminAccess", true},
        {"DRAConsumableCapacity", true},         {"DRADerivedAttributes", false},
        {"DRADeviceBindingConditions", true},    {"DRADeviceCompatibilityGroups", false},
        {"DRADeviceTaintRules", true},           {"DRADeviceTaints", true},
        {"DRAExtendedResource", true},           {"DRAFractionalCapacityRange", false},
        {"DRAListTypeAttributes", false},        {"DRANodeAllocatableResources", false},
        {"DRAOptionalNodeOperations", false},    {"DRAPartitionableDevices", true},
        {"DRAPrioritizedList", true},            {"DRAResourceClaimDeviceStatus", true},
        {"DRAResourceClaimGranularStatusAuthorization", true},
        {"DRASchedulerFilterTimeout", true},     {"DRAWorkloadResourceClaims", false},
        {"KubeletPodResourcesDynamicResources", true}, {"ResourceHealthStatus", true},
    };
    dra_features def;
    dra_features_default(&def);
    for (size_t i = 0; i < sizeof gates / sizeof gates[0]; i++) {
        bool on;
        cr_assert(dra_features_get(&def, gates[i].name, &on), "%s: not a gate", gates[i].name);
        cr_assert_eq(on, gates[i].dflt, "%s: default %d, Kubernetes 1.37 has %d", gates[i].name, on, gates[i].dflt);
        for (int v = 0; v < 2; v++) {
            dra_features f = def;
            char spec[128];
            snprintf(spec, sizeof spec, "%s=%s", gates[i].name, v ? "true" : "false");
            err e;
            err_clear(&e);
            cr_assert(dra_features_parse(&f, spec, &e), "%s: %s", spec, e.msg);
            cr_assert(dra_features_get(&f, gates[i].name, &on));
            cr_assert_eq(on, v == 1, "%s", spec);
        }
    }
    bool on;
    cr_assert_not(dra_features_get(&def, "DRANoSuchGate", &on));
    err e;
    err_clear(&e);
    cr_assert_not(dra_features_parse(&def, "DRANoSuchGate=true", &e));
    cr_assert_str_eq(e.msg, "unknown feature gate DRANoSuchGate");
}

/* The two binding gates stand for one allocator flag, on only when both are; each keeps
 * its own setting across calls, so turning one back on restores the flag. */
Test(features, binding_gates_each_kept) {
    dra_features f;
    dra_features_default(&f);
    cr_assert(f.binding_conditions);
    err e;
    err_clear(&e);
    cr_assert(dra_features_parse(&f, "DRAResourceClaimDeviceStatus=false", &e));
    cr_assert_not(f.binding_conditions);
    cr_assert(dra_features_parse(&f, "DRADeviceBindingConditions=true", &e));
    cr_assert_not(f.binding_conditions);
    cr_assert(dra_features_parse(&f, "DRAResourceClaimDeviceStatus=true", &e));
    cr_assert(f.binding_conditions);
}

Test(decode, yaml_anchors_quotes_and_numbers) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    cr_assert(load_yaml(ws,
                        "apiVersion: resource.k8s.io/v1\n"
                        "kind: ResourceSlice\n"
                        "metadata: {name: s}\n"
                        "spec:\n"
                        "  driver: d\n"
                        "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                        "  allNodes: true\n"
                        "  devices:\n"
                        "  - &dev\n"
                        "    name: a\n"
                        "    attributes:\n"
                        "      v: {version: 1.2.3}\n"
                        "      s: {string: \"true\"}\n"
                        "      i: {int: 7}\n"
                        "    capacity:\n"
                        "      memory: {value: 8}\n"
                        "  - <<: *dev\n"
                        "    name: b\n",
                        &e),
              "%s", e.msg);
    const dra_world *w = th_world(ws);
    const dra_slice *s = w ? NULL : NULL;
    (void)s;
    dra_node n = {.name = "x"};
    dra_features f;
    dra_features_default(&f);
    dra_nodeview *v = dra_nodeview_new(w, &n, &f, &e);
    cr_assert_not_null(v);
    dra_nodeview_free(v);
    th_free(ws);
}

/* Capacities and counters are read member by member when they have one or two
 * (dra__dmember): a value alone, a value with a requestPolicy in either order, and
 * a counter decode as json_object_get read them; an object without "value" is still
 * the quantity error. */
Test(decode, capacity_and_counter_members_in_any_order) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\","
                             "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
                             "\"sharedCounters\":[{\"name\":\"gpu\",\"counters\":{\"mem\":{\"value\":\"40Gi\"}}}],"
                             "\"devices\":[{\"name\":\"a\",\"capacity\":{"
                             "\"m1\":{\"value\":\"8Gi\"},"
                             "\"m2\":{\"requestPolicy\":{\"default\":\"1Gi\"},\"value\":\"16Gi\"},"
                             "\"m3\":{\"value\":\"32Gi\",\"requestPolicy\":{\"default\":\"2Gi\"}}},"
                             "\"consumesCounters\":[{\"counterSet\":\"gpu\",\"counters\":{\"mem\":{\"value\":\"5Gi\"}}}]}]}}",
                          &e),
              "%s", e.msg);
    size_t n;
    const dra_slice *const *sl = dra__world_all_slices(th_world(ws), &n);
    cr_assert_eq(n, 1);
    const dra_device *d = &sl[0]->devices[0];
    cr_assert_eq(d->cel.ncaps, 3);
    char buf[64];
    const char *want[] = {"8Gi", "16Gi", "32Gi"}, *dflt[] = {NULL, "1Gi", "2Gi"};
    for (int i = 0; i < 3; i++) {
        quantity_format(&d->caps[i].value, buf, sizeof buf);
        cr_assert_str_eq(buf, want[i], "capacity %d", i);
        if (!dflt[i]) {
            cr_assert_null(d->caps[i].policy);
            continue;
        }
        cr_assert_not_null(d->caps[i].policy, "capacity %d", i);
        quantity_format(&d->caps[i].policy->dflt, buf, sizeof buf);
        cr_assert_str_eq(buf, dflt[i]);
    }
    cr_assert_eq(d->nconsumes, 1);
    quantity_format(&d->consumes[0].counters[0].value, buf, sizeof buf);
    cr_assert_str_eq(buf, "5Gi");
    quantity_format(&sl[0]->shared_counters[0].counters[0].value, buf, sizeof buf);
    cr_assert_str_eq(buf, "40Gi");

    err_clear(&e);
    cr_assert_not(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"driver\":\"d\","
                                 "\"pool\":{\"name\":\"q\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
                                 "\"devices\":[{\"name\":\"a\",\"capacity\":{\"m\":{\"vaule\":\"8Gi\"}}}]}}",
                              &e));
    cr_assert_str_eq(e.path, "spec.devices[0].capacity[\"m\"].value");
    th_free(ws);
}
