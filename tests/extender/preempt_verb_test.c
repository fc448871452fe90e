/* preempt_verb_test.c — the extender's preempt verb (extender/preempt.c) in process, on
 * the three nodes of tests/engine/test_preempt.c (8 GPUs each, 7/6/7 held by 1-GPU pods
 * of priority 0, started at second i of their node) and a fourth node whose 8 pods have
 * priority 2000. The pod wants 4 GPUs at priority 1000. What kube-scheduler sends
 * (ExtenderPreemptionArgs, nodeCacheCapable: UIDs) and what comes back, by hand:
 *   node-a: kube-scheduler's one victim (p6) frees 1 GPU of the 4 needed: 2 more go,
 *           the two that started last of the rest (p4, p5);
 *   node-b: sent with no victims (kubernetes#135486): answered with p4, p5;
 *   node-c: its three victims free 3, with 1 free: enough, as sent;
 *   node-d: nothing of lower priority: left out. */
#include "tests/engine/room_fleet.h"

#include "extender/extender.h"

static void node_of(json_t *items, const char *n, int used, int prio) {
    rf_node(items, n, 8);
    for (int i = 0; i < used; i++) {
        char pod[64], dev[16];
        snprintf(pod, sizeof pod, "%s-p%d", n, i);
        snprintf(dev, sizeof dev, "gpu-%d", i);
        rf_bound(items, "ml", pod, n, prio, NULL, i, "gpu", (const char *[]){dev}, 1);
    }
}

static json_t *uids(const char *node, const int *idx, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        char u[64];
        snprintf(u, sizeof u, "%s-p%d-uid", node, idx[i]);
        json_array_append_new(a, json_pack("{s:s}", "UID", u));
    }
    return json_pack("{s:o, s:i}", "Pods", a, "NumPDBViolations", 0);
}

Test(preempt_verb, completes_kube_schedulers_victims) {
    json_t *items = json_array();
    rf_classes(items);
    node_of(items, "node-a", 7, 0);
    node_of(items, "node-b", 6, 0);
    node_of(items, "node-c", 7, 0);
    node_of(items, "node-d", 8, 2000);
    rf_pending(items, "ml", "big", 1000, "gpu", 4);
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new_with(&f, &(dra_store_opts){.keep_text = true});
    err e;
    err_clear(&e);
    cr_assert(dra_store_apply_json(st, items, &e), "%s", e.msg);
    ext_config c;
    ext_config_default(&c);
    ext_service *svc = ext_service_new(st, &c);
    json_t *pod = json_deep_copy(json_array_get(items, json_array_size(items) - 2));
    json_t *args = json_pack("{s:o, s:{s:o, s:o, s:o, s:o}}", "Pod", pod, "NodeNameToMetaVictims", "node-a",
                             uids("node-a", (int[]){6}, 1), "node-b", uids("node-b", NULL, 0), "node-c",
                             uids("node-c", (int[]){4, 5, 6}, 3), "node-d", uids("node-d", NULL, 0));
    char *body = json_dumps(args, JSON_COMPACT);
    ext_reply r;
    ext_service_handle(svc, "POST", "/preempt", body, strlen(body), &r);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_t *out = json_loads(r.body, 0, NULL);
    const json_t *m = json_object_get(out, "NodeNameToMetaVictims");
    cr_assert_eq(json_object_size(m), 3, "%s", r.body);
    cr_assert_null(json_object_get(m, "node-d"));
    const char *want[][4] = {{"node-a", "node-a-p6-uid", "node-a-p4-uid", "node-a-p5-uid"},
                             {"node-b", "node-b-p4-uid", "node-b-p5-uid", NULL},
                             {"node-c", "node-c-p4-uid", "node-c-p5-uid", "node-c-p6-uid"}};
    for (int i = 0; i < 3; i++) {
        const json_t *pods = json_object_get(json_object_get(m, want[i][0]), "Pods");
        size_t n = want[i][3] ? 3 : 2;
        cr_assert_eq(json_array_size(pods), n, "%s: %s", want[i][0], r.body);
        for (size_t k = 0; k < n; k++)
            cr_assert_str_eq(json_string_value(json_object_get(json_array_get(pods, k), "UID")), want[i][k + 1]);
    }
    json_decref(out);
    ext_reply_free(&r);
    /* not an object: 400 */
    ext_service_handle(svc, "POST", "/preempt", "{\"Pod\": 3}", 10, &r);
    cr_assert_eq(r.status, 400);
    ext_reply_free(&r);
    free(body);
    json_decref(args);
    ext_service_free(svc);
    dra_store_free(st);
    json_decref(items);
}
