/* test_explain.c — why claims do not fit (engine/alloc/explain.c): every case of
 * testdata/explain (one per kind of reason, checked as text in the short reason and
 * the long explanation). */
#include "tests/engine/case_check.h"

Test(explain, testdata_cases) {
    cc_check_dir("explain", 23);
}

/* ---- the extender's reasons through the fit memo -------------------------------------------- */

static json_t *parse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    cr_assert_not_null(j, "%s", je.text);
    return j;
}

/* node-1: 4 GPUs, 3 held by ml/train-10-gpus (whose name starts with "ml/train-1"). */
static const char *HELD_CLUSTER =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.example.com\"},"
    "  \"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}},"
    " {\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\"}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-1-gpus\"},"
    "  \"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":1,"
    "  \"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"},{\"name\":\"gpu-2\"},{\"name\":\"gpu-3\"}]}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"name\":\"two-gpus\","
    "  \"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
    "  {\"deviceClassName\":\"gpu.example.com\",\"count\":2}}]}}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"train-10-gpus\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":3}}]}},"
    "  \"status\":{\"allocation\":{\"devices\":{\"results\":["
    "   {\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\",\"device\":\"gpu-0\"},"
    "   {\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\",\"device\":\"gpu-1\"},"
    "   {\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-1\",\"device\":\"gpu-2\"}]}}}}]";

static void fit_reason(dra_snapshot *s, const char *pod_name, char *reason, size_t n) {
    char pod[512];
    snprintf(pod, sizeof pod,
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\"},\"spec\":{\"containers\":[{\"name\":\"main\"}],"
             " \"resourceClaims\":[{\"name\":\"gpus\",\"resourceClaimTemplateName\":\"two-gpus\"}]}}",
             pod_name);
    json_t *p = parse(pod);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit f;
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_NONE, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_UNSCHEDULABLE, "%s", f.reason);
    snprintf(reason, n, "%s", f.reason);
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(p);
}

/* Two pods with the same needs share the node's answer (the memo keeps the reason
 * with the pod's own names as placeholders): each gets its own claim name back, and
 * the claim holding the GPUs — another pod's, whose name begins with the first pod's —
 * stays as it is. */
Test(explain, memo_keeps_the_holder_name) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *c = parse(HELD_CLUSTER);
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, c, &e), 1, "%s", e.msg);
    json_decref(c);
    dra_snapshot *s = dra_store_acquire(st);
    char r1[512], r2[512];
    fit_reason(s, "train-1", r1, sizeof r1);
    cr_assert(strstr(r1, "claim ml/train-1-gpus request gpu: wants 2, 4 match gpu.example.com, 1 free: "
                         "3 held by claim ml/train-10-gpus"),
              "%s", r1);
    fit_reason(s, "train-2", r2, sizeof r2);   /* from the memo */
    cr_assert(strstr(r2, "claim ml/train-2-gpus request gpu: wants 2, 4 match gpu.example.com, 1 free: "
                         "3 held by claim ml/train-10-gpus"),
              "%s", r2);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* The implicit claim of extended resources is named after its pod too. */
Test(explain, memo_names_each_pods_implicit_claim) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *c = parse(HELD_CLUSTER);
    json_array_append_new(c, parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":"
                                   "{\"name\":\"gpu-er\"},\"spec\":{\"extendedResourceName\":\"example.com/gpu\","
                                   "\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}}"));
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, c, &e), 1, "%s", e.msg);
    json_decref(c);
    dra_snapshot *s = dra_store_acquire(st);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    const char *names[] = {"w-1", "w-2"};
    for (int i = 0; i < 2; i++) {
        char pod[512], want[256];
        snprintf(pod, sizeof pod,
                 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\"},\"spec\":{\"containers\":[{\"name\":\"main\","
                 "\"resources\":{\"limits\":{\"example.com/gpu\":\"2\"}}}]}}",
                 names[i]);
        json_t *p = parse(pod);
        dra_pod_request *pr = dra_pod_request_new(s, p, &e);
        cr_assert_not_null(pr, "%s", e.msg);
        dra_fit fit;
        dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_NONE, 0, &fit);
        cr_assert_eq(fit.status, DRA_FIT_UNSCHEDULABLE, "%s", fit.reason);
        snprintf(want, sizeof want, "claim ml/%s-extended-resources request container-0-request-0: wants 2", names[i]);
        cr_assert(strstr(fit.reason, want) && strstr(fit.reason, "3 held by claim ml/train-10-gpus"), "%s", fit.reason);
        dra_pod_request_free(pr);
        json_decref(p);
    }
    dra_alloc_ctx_free(x);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* A node whose pool is invalid: Kubernetes' per-node error, then which pool and why. */
Test(explain, invalid_pool_named_in_the_node_reason) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *c = parse(HELD_CLUSTER);
    /* the pool complete at two slices (an incomplete pool is not validated:
     * pools_incubating.go GatherPools), the second repeating a device name */
    size_t i;
    json_t *o;
    json_array_foreach(c, i, o) {
        json_t *pool = json_object_get(json_object_get(o, "spec"), "pool");
        if (pool) json_object_set_new(pool, "resourceSliceCount", json_integer(2));
    }
    json_array_append_new(c, parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":"
                                   "{\"name\":\"node-1-more\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\","
                                   "\"pool\":{\"name\":\"node-1\",\"generation\":1,\"resourceSliceCount\":2},"
                                   "\"devices\":[{\"name\":\"gpu-3\"}]}}"));
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, c, &e), 1, "%s", e.msg);
    json_decref(c);
    dra_snapshot *s = dra_store_acquire(st);
    char r[512];
    fit_reason(s, "train-1", r, sizeof r);
    cr_assert_str_eq(r, "invalid resource pools were encountered: pool gpu.example.com/node-1: invalid: duplicate "
                        "device name gpu-3");
    dra_snapshot_release(s);
    dra_store_free(st);
}
