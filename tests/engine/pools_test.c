/* pools_test.c — pool gathering for a node: completeness (resourceSliceCount,
 * generations, obsolete pools), validity, order, and node access by nodeName,
 * allNodes, nodeSelector and perDeviceNodeSelection. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/world/world.h"
#include "tests/engine/helpers.h"

/* A store of the objects, as given. */
static th_store *world(const char *const *objs) {
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    for (; *objs; objs++) cr_assert(th_add_json(ws, *objs, &e), "%s", e.msg);
    return ws;
}

static char *slice(char *buf, const char *name, const char *pool, int gen, int count, const char *access,
                   const char *devs) {
    sprintf(buf,
            "{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"%s\","
            "\"generation\":%d,\"resourceSliceCount\":%d},%s,\"devices\":[%s]}}",
            name, pool, gen, count, access, devs);
    return buf;
}

/* The view of w from a node with these labels (the Node made in the test's memory). */
static dra_nodeview *view(th_store *ws, const dra_world *w, const char *node, const char *labels_json) {
    char buf[512];
    sprintf(buf, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":%s}}", node, labels_json);
    json_t *o = json_loads(buf, 0, NULL);
    err e;
    err_clear(&e);
    dra_decoder d = {.a = &ws->mem, .cat = w->cat};
    dra_node *n = ARENA_NEW(&ws->mem, dra_node);
    cr_assert(dra__decode_node(&d, o, n, &e));
    json_decref(o);
    dra_features f;
    dra_features_default(&f);
    dra_nodeview *v = dra_nodeview_new(w, n, &f, &e);
    cr_assert_not_null(v, "%s", e.msg);
    return v;
}

Test(pools, incomplete_when_a_slice_is_missing) {
    char a[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 2, "\"nodeName\":\"n1\"", "{\"name\":\"x\"}"), NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert_eq(v->npools, 1);
    cr_assert(v->pools[0].incomplete);
    dra_nodeview_free(v);
    th_free(ws);
}

Test(pools, complete_with_slices_of_other_nodes) {
    char a[1024], b[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 2, "\"nodeName\":\"n1\"", "{\"name\":\"x\"}"),
                          slice(b, "s2", "p", 1, 2, "\"nodeName\":\"n2\"", "{\"name\":\"y\"}"), NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert_eq(v->npools, 1);
    cr_assert_not(v->pools[0].incomplete);
    cr_assert_eq(v->ncands, 1, "only devices of slices targeting the node are candidates");
    cr_assert_str_eq(v->cands[0].dev->name, "x");
    dra_nodeview_free(v);
    th_free(ws);
}

Test(pools, newer_generation_elsewhere_makes_pool_obsolete) {
    char a[1024], b[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 2, "\"nodeName\":\"n1\"", "{\"name\":\"x\"}"),
                          slice(b, "s2", "p", 2, 2, "\"nodeName\":\"n2\"", "{\"name\":\"y\"}"), NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert_eq(v->npools, 0);
    dra_nodeview_free(v);
    th_free(ws);
}

Test(pools, highest_relevant_generation_wins) {
    char a[1024], b[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 1, "\"nodeName\":\"n1\"", "{\"name\":\"old\"}"),
                          slice(b, "s2", "p", 2, 1, "\"nodeName\":\"n1\"", "{\"name\":\"new\"}"), NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert_eq(v->npools, 1);
    cr_assert_eq(v->ncands, 1);
    cr_assert_str_eq(v->cands[0].dev->name, "new");
    dra_nodeview_free(v);
    th_free(ws);
}

Test(pools, duplicate_device_names_make_pool_invalid) {
    char a[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 1, "\"nodeName\":\"n1\"", "{\"name\":\"x\"},{\"name\":\"x\"}"), NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert(v->pools[0].invalid);
    cr_assert_str_eq(v->pools[0].invalid_reason, "duplicate device name x");
    dra_nodeview_free(v);
    th_free(ws);
}

Test(pools, sorted_by_pool_and_slice_name) {
    char a[1024], b[1024], c[1024];
    const char *objs[] = {slice(a, "z", "p2", 1, 1, "\"allNodes\":true", "{\"name\":\"p2z\"}"),
                          slice(b, "b", "p1", 1, 2, "\"allNodes\":true", "{\"name\":\"p1b\"}"),
                          slice(c, "a", "p1", 1, 2, "\"allNodes\":true", "{\"name\":\"p1a\"}"), NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert_eq(v->ncands, 3);
    cr_assert_str_eq(v->cands[0].dev->name, "p1a");
    cr_assert_str_eq(v->cands[1].dev->name, "p1b");
    cr_assert_str_eq(v->cands[2].dev->name, "p2z");
    dra_nodeview_free(v);
    th_free(ws);
}

Test(nodes, node_selector_and_node_name) {
    char a[1024], b[1024], c[1024];
    const char *objs[] = {
        slice(a, "s1", "p1", 1, 1,
              "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
              "\"values\":[\"a\",\"b\"]}]}]}",
              "{\"name\":\"x\"}"),
        slice(b, "s2", "p2", 1, 1, "\"nodeName\":\"other\"", "{\"name\":\"y\"}"),
        slice(c, "s3", "p3", 1, 1,
              "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
              "\"values\":[\"n1\"]}]}]}",
              "{\"name\":\"z\"}"),
        NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{\"zone\":\"b\"}");
    cr_assert_eq(v->ncands, 2);
    cr_assert_str_eq(v->cands[0].dev->name, "x");
    cr_assert_str_eq(v->cands[1].dev->name, "z");
    dra_nodeview_free(v);
    v = view(ws, w, "n2", "{\"zone\":\"c\"}");
    cr_assert_eq(v->ncands, 0);
    dra_nodeview_free(v);
    th_free(ws);
}

Test(nodes, per_device_node_selection) {
    char a[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 1, "\"perDeviceNodeSelection\":true",
                                "{\"name\":\"x\",\"nodeName\":\"n2\"},{\"name\":\"y\",\"allNodes\":true}"),
                          NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_nodeview *v = view(ws, w, "n1", "{}");
    cr_assert_eq(v->ncands, 2, "the slice is relevant because one device matches");
    cr_assert(v->cands[0].per_device_node);
    dra_nodeview_free(v);
    th_free(ws);
}

Test(nodes, invalid_operator_is_an_error) {
    char a[1024];
    const char *objs[] = {slice(a, "s1", "p", 1, 1,
                                "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"k\","
                                "\"operator\":\"Near\"}]}]}",
                                "{\"name\":\"x\"}"),
                          NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    dra_node n = {.name = "n1"};
    dra_features f;
    dra_features_default(&f);
    err e;
    err_clear(&e);
    cr_assert_null(dra_nodeview_new(w, &n, &f, &e));
    cr_assert(strstr(e.msg, "gather pool information") != NULL, "%s", e.msg);
    th_free(ws);
}

Test(nodes, selector_operators) {
    dra_label labels[] = {{"gpus", "8"}, {"zone", "a"}};
    dra_node n = {.name = "n1", .labels = labels, .nlabels = 2};
    dra_ns_req gt = {.key = "gpus", .op_text = "Gt", .op = DRA_NS_GT, .values = {(const char *[]){"4"}, 1}};
    dra_ns_req lt = {.key = "gpus", .op_text = "Lt", .op = DRA_NS_LT, .values = {(const char *[]){"4"}, 1}};
    dra_ns_req notin = {.key = "zone", .op_text = "NotIn", .op = DRA_NS_NOT_IN, .values = {(const char *[]){"b"}, 1}};
    dra_ns_req dne = {.key = "rack", .op_text = "DoesNotExist", .op = DRA_NS_DOES_NOT_EXIST};
    dra_ns_req name = {.key = "metadata.name", .op_text = "In", .op = DRA_NS_IN, .values = {(const char *[]){"n1"}, 1}};
    err e;
    err_clear(&e);
    bool m;
    dra_ns_term t1 = {.exprs = (dra_ns_req[]){gt, notin, dne}, .nexprs = 3, .fields = &name, .nfields = 1};
    dra_node_selector s1 = {.terms = &t1, .nterms = 1};
    cr_assert(dra__node_matches(&n, NULL, false, &s1, &m, &e));
    cr_assert(m);
    dra_ns_term t2 = {.exprs = &lt, .nexprs = 1};
    dra_ns_term empty = {0};
    dra_node_selector s2 = {.terms = (dra_ns_term[]){t2, empty}, .nterms = 2};
    cr_assert(dra__node_matches(&n, NULL, false, &s2, &m, &e));
    cr_assert_not(m, "Lt fails and an empty term matches nothing");
    cr_assert(dra__node_matches(&n, "n2", true, &s1, &m, &e));
    cr_assert_not(m, "nodeName wins over allNodes and the selector");
    cr_assert(dra__node_matches(&n, NULL, true, NULL, &m, &e));
    cr_assert(m);
    cr_assert(dra__node_matches(&n, NULL, false, NULL, &m, &e));
    cr_assert_not(m, "nothing set matches nothing");
}

/* ---- what a decoded device shares ---------------------------------------------------------- */

/* A MIG-carved GPU's devices each consume a different counters map, and the next GPU of
 * the slice repeats them all, one GPU's devices later; each device also brings a UUID
 * no other has. Repeats are kept once per slice (decode_slice.c's 64-slot table): the
 * same counters array for the same profile on another GPU, one copy of the model name
 * however many UUIDs come between, names as the catalog's interned text. */
Test(pools, a_slice_keeps_repeated_counters_and_strings_once) {
    enum { GPUS = 3, PER_GPU = 19 };
    char *devs = malloc(64 * 1024), *obj = malloc(70 * 1024);
    size_t o = 0;
    for (int g = 0; g < GPUS; g++)
        for (int k = 0; k < PER_GPU; k++)
            o += (size_t)sprintf(devs + o,
                                 "%s{\"name\":\"gpu-%d-part-%d\",\"attributes\":{\"uuid\":{\"string\":\"GPU-%d-%d\"},"
                                 "\"model\":{\"string\":\"A100\"},\"driverVersion\":{\"version\":\"550.54.15\"}},"
                                 "\"consumesCounters\":[{\"counterSet\":\"gpu-%d\",\"counters\":{"
                                 "\"memory\":{\"value\":\"%dGi\"},\"slice-%d\":{\"value\":\"1\"}}}]}",
                                 o ? "," : "", g, k, g, k, g, 5 * (k + 1), k);
    slice(obj, "s", "p", 1, 1, "\"nodeName\":\"n1\"", devs);
    const char *objs[] = {obj, NULL};
    th_store *ws = world(objs);
    const dra_world *w = th_world(ws);
    size_t n;
    const dra_slice *const *all = dra__world_all_slices(w, &n);
    cr_assert_eq(n, 1);
    const dra_slice *s = all[0];
    cr_assert_eq(s->ndevices, GPUS * PER_GPU);
    for (int k = 0; k < PER_GPU; k++) {
        const dra_device *d0 = &s->devices[k], *d2 = &s->devices[2 * PER_GPU + k];
        cr_assert_eq(d0->nconsumes, 1);
        cr_assert_str_eq(d0->consumes[0].name, "gpu-0");
        cr_assert_str_eq(d2->consumes[0].name, "gpu-2");
        cr_assert_eq(d0->consumes[0].ncounters, 2);
        cr_assert_eq(d0->consumes[0].counters, d2->consumes[0].counters, "device %d: the same map is one array", k);
        cr_assert_eq(d0->name, intern_str(w->cat->names, d0->name_id), "the name is the interned text");
        cr_assert_str_eq(d0->attr_text[1].key, "model");
        cr_assert_eq(d0->cel.attrs[1].u.s, d2->cel.attrs[1].u.s, "one model string for the slice");
        cr_assert_neq(d0->cel.attrs[0].u.s, d2->cel.attrs[0].u.s);
        cr_assert_eq(d0->attr_text[2].ver, d2->attr_text[2].ver, "one version text");
    }
    /* different maps stay apart */
    cr_assert_neq(s->devices[0].consumes[0].counters, s->devices[1].consumes[0].counters);
    th_free(ws);
    free(devs);
    free(obj);
}
