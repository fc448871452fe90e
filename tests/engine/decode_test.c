/* decode_test.c — the decoder: kinds, lists, YAML documents, and errors that name the
 * object and the field path. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/world/world.h"
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

/* Devices of one slice mostly list the same attribute, capacity and counter keys in the
 * same order, so the decoder takes a key equal to the previous device's at the same
 * position from that device (decode_slice.c key_memo). Keys that move, change domain or
 * appear only on some devices must still decode as themselves. */
Test(decode, keys_that_move_between_devices_decode_as_themselves) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    const char *dev[] = {
        "{\"name\":\"a\",\"attributes\":{\"x\":{\"int\":1},\"ex.com/y\":{\"string\":\"s\"}},"
        "\"capacity\":{\"mem\":{\"value\":\"1Gi\"}},"
        "\"consumesCounters\":[{\"counterSet\":\"gpu\",\"counters\":{\"c1\":{\"value\":\"1\"},\"c2\":{\"value\":\"2\"}}}]}",
        /* the same keys the other way round; a capacity in another domain */
        "{\"name\":\"b\",\"attributes\":{\"ex.com/y\":{\"string\":\"t\"},\"x\":{\"int\":2}},"
        "\"capacity\":{\"other.io/mem\":{\"value\":\"2Gi\"}},"
        "\"consumesCounters\":[{\"counterSet\":\"gpu\",\"counters\":{\"c2\":{\"value\":\"3\"},\"c1\":{\"value\":\"4\"}}}]}",
        /* a's order again, twice (the second one entirely as its predecessor); an int
         * written as a whole real, a bool */
        "{\"name\":\"c\",\"attributes\":{\"x\":{\"int\":3.0},\"ex.com/y\":{\"string\":\"u\"},\"z\":{\"bool\":true}},"
        "\"capacity\":{\"mem\":{\"value\":\"3Gi\"}}}",
        "{\"name\":\"d\",\"attributes\":{\"x\":{\"int\":4},\"ex.com/y\":{\"string\":\"v\"},\"z\":{\"bool\":false}},"
        "\"capacity\":{\"mem\":{\"value\":\"4Gi\"}}}",
    };
    char doc[4096];
    snprintf(doc, sizeof doc,
             "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\","
             "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
             "\"devices\":[%s,%s,%s,%s]}}",
             dev[0], dev[1], dev[2], dev[3]);
    /* consumesCounters needs a slice of shared counters in the pool */
    cr_assert(th_add_json(ws,
                          "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"c\"},\"spec\":{\"driver\":\"d.example.com\","
                          "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":2},\"nodeName\":\"n\","
                          "\"sharedCounters\":[{\"name\":\"gpu\",\"counters\":{\"c1\":{\"value\":\"8\"},"
                          "\"c2\":{\"value\":\"8\"}}}]}}",
                          &e),
              "%s", e.msg);
    char *fixed = strstr(doc, "\"resourceSliceCount\":1");
    fixed[strlen("\"resourceSliceCount\":")] = '2';
    cr_assert(th_add_json(ws, doc, &e), "%s", e.msg);
    size_t n;
    const dra_slice *const *sl = dra__world_all_slices(th_world(ws), &n);
    const dra_slice *s = NULL;
    for (size_t i = 0; i < n; i++)
        if (sl[i]->ndevices == 4) s = sl[i];
    cr_assert_not_null(s);
    const dra_device *a = &s->devices[0], *b = &s->devices[1], *c = &s->devices[2], *d = &s->devices[3];
    /* a: x (the driver's domain), ex.com/y */
    cr_assert_str_eq(a->attr_text[0].key, "x");
    cr_assert_eq(a->cel.attrs[0].domain, s->driver_id);
    cr_assert_eq(a->cel.attrs[0].u.i, 1);
    cr_assert_str_eq(a->attr_text[1].key, "ex.com/y");
    cr_assert_neq(a->cel.attrs[1].domain, s->driver_id);
    uint32_t x_name = a->cel.attrs[0].name, y_name = a->cel.attrs[1].name, ex_domain = a->cel.attrs[1].domain;
    cr_assert_neq(x_name, y_name);
    /* b: the other way round, each key as itself */
    cr_assert_str_eq(b->attr_text[0].key, "ex.com/y");
    cr_assert_eq(b->cel.attrs[0].domain, ex_domain);
    cr_assert_eq(b->cel.attrs[0].name, y_name);
    cr_assert_str_eq(b->attr_text[1].key, "x");
    cr_assert_eq(b->cel.attrs[1].domain, s->driver_id);
    cr_assert_eq(b->cel.attrs[1].name, x_name);
    cr_assert_eq(b->cel.attrs[1].u.i, 2);
    /* capacities: mem in the driver's domain, then other.io/mem, then mem again */
    cr_assert_str_eq(a->caps[0].key, "mem");
    cr_assert_eq(a->cel.caps[0].domain, s->driver_id);
    cr_assert_str_eq(b->caps[0].key, "other.io/mem");
    cr_assert_neq(b->cel.caps[0].domain, s->driver_id);
    cr_assert_eq(b->cel.caps[0].name, a->cel.caps[0].name, "the same name, another domain");
    cr_assert_neq(b->caps[0].key_id, a->caps[0].key_id);
    cr_assert_str_eq(c->caps[0].key, "mem");
    cr_assert_eq(c->cel.caps[0].domain, s->driver_id);
    cr_assert_eq(c->caps[0].key_id, a->caps[0].key_id);
    /* counters by name, in each device's order */
    cr_assert_str_eq(a->consumes[0].counters[0].name, "c1");
    cr_assert_str_eq(a->consumes[0].counters[1].name, "c2");
    cr_assert_str_eq(b->consumes[0].counters[0].name, "c2");
    cr_assert_str_eq(b->consumes[0].counters[1].name, "c1");
    cr_assert_eq(b->consumes[0].counters[1].name_id, a->consumes[0].counters[0].name_id);
    /* c and d: a's order again; a third key only they have; an int given as 3.0 */
    for (const dra_device *v = c; v <= d; v++) {
        cr_assert_eq(v->cel.nattrs, 3);
        cr_assert_str_eq(v->attr_text[0].key, "x");
        cr_assert_eq(v->cel.attrs[0].name, x_name);
        cr_assert_eq(v->cel.attrs[1].name, y_name);
        cr_assert_eq(v->cel.attrs[1].domain, ex_domain);
        cr_assert_str_eq(v->attr_text[2].key, "z");
        cr_assert_eq(v->cel.attrs[2].kind, CEL_ATTR_BOOL);
    }
    cr_assert_eq(c->cel.attrs[0].u.i, 3);
    cr_assert_eq(d->cel.attrs[0].u.i, 4);
    cr_assert(c->cel.attrs[2].u.b);
    cr_assert_not(d->cel.attrs[2].u.b);

    /* a value of the wrong type is still refused where dra__dget_int refuses it */
    err_clear(&e);
    cr_assert_not(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"driver\":\"d\","
                                 "\"pool\":{\"name\":\"q\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
                                 "\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{\"int\":1.5}}}]}}",
                              &e));
    cr_assert_str_eq(e.path, "spec.devices[0].attributes[\"x\"].int");
    err_clear(&e);
    cr_assert_not(th_add_json(ws, "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"u\"},\"spec\":{\"driver\":\"d\","
                                 "\"pool\":{\"name\":\"r\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
                                 "\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{\"bool\":\"yes\"}}}]}}",
                              &e));
    cr_assert_str_eq(e.path, "spec.devices[0].attributes[\"x\"].bool");
    th_free(ws);
}

/* dra__catalog_share (node views' counter consumptions): one copy per content, for
 * as long as the catalog lives; distinct contents, distinct copies; two threads
 * asking for the same content get the same copy. */
#include "engine/decode/catalog.h"
#include <pthread.h>

static void *share_many(void *arg) {
    dra_catalog *c = arg;
    const void **got = xcalloc(1000, sizeof *got);
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t v[4] = {i, i * 3, 7, 9};
        got[i] = dra__catalog_share(c, v, sizeof v);
    }
    return got;
}

Test(decode, catalog_share_by_content) {
    dra_catalog *c = dra__catalog_new();
    uint64_t a[3] = {1, 2, 3}, b[3] = {1, 2, 3}, d[3] = {1, 2, 4};
    const void *pa = dra__catalog_share(c, a, sizeof a), *pb = dra__catalog_share(c, b, sizeof b);
    const void *pd = dra__catalog_share(c, d, sizeof d);
    cr_assert_not_null(pa);
    cr_assert_eq(pa, pb);
    cr_assert_neq(pa, pd);
    cr_assert(!memcmp(pa, a, sizeof a) && !memcmp(pd, d, sizeof d));
    cr_assert_eq((uintptr_t)pa % 16, 0);
    cr_assert_null(dra__catalog_share(c, a, 0));
    cr_assert_eq(dra__catalog_share(c, a, 2 * sizeof a[0]) == pa, false);   /* a prefix is another content */
    pthread_t t1, t2;
    pthread_create(&t1, NULL, share_many, c);
    pthread_create(&t2, NULL, share_many, c);
    const void **g1, **g2;
    pthread_join(t1, (void **)&g1);
    pthread_join(t2, (void **)&g2);
    for (int i = 0; i < 1000; i++) cr_assert_eq(g1[i], g2[i], "content %d shared twice", i);
    free(g1);
    free(g2);
    cr_assert_eq(dra__catalog_shared_bytes(c), 2 * 32 + 16 + 1000 * 32);   /* copies 16-aligned: 24 bytes take 32 */
    dra__catalog_release(c);
}
