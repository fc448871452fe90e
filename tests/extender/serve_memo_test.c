/* serve_memo_test.c — issue #23's two reproductions through `dralloc serve`, as
 * kube-scheduler would meet them: objects through /objects, pods through /filter in
 * both orders, each answer compared with a fresh service's on the same objects (the
 * engine's differential test, tests/engine/test_memo.c, covers the rest). */
#include "tests/extender/serve_helpers.h"

static const char *const no_args[] = {"--threads", "2", NULL};

/* h100-0: 8 GPUs, 7 held; two unallocated claims with one spec. */
static const char *SHARED =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.nvidia.com\"},"
    "  \"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com'\"}}]}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"h100-0\"}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"h100-0-gpus\"},"
    "  \"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"h100-0\",\"pool\":{\"name\":\"h100-0\",\"generation\":1,"
    "  \"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"}]}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"holder\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}},"
    "  \"status\":{\"allocation\":{\"devices\":{\"results\":["
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-0\"}]}}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"shared-gpu\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"shared-gpu-2\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"dp-0\"},"
    "  \"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"3\"}}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-ext-2\",\"namespace\":\"ml\",\"uid\":\"uid-old\"},"
    "  \"spec\":{\"nodeName\":\"dp-0\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}}]";

static const char *const DUP =
    "{\"metadata\":{\"name\":\"p-dup-shared\",\"namespace\":\"ml\",\"uid\":\"u1\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
    "\"resourceClaims\":[{\"name\":\"a\",\"resourceClaimName\":\"shared-gpu\"},{\"name\":\"b\",\"resourceClaimName\":\"shared-gpu\"}]}}";
static const char *const TWO =
    "{\"metadata\":{\"name\":\"p-two-shared\",\"namespace\":\"ml\",\"uid\":\"u2\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
    "\"resourceClaims\":[{\"name\":\"a\",\"resourceClaimName\":\"shared-gpu\"},{\"name\":\"b\",\"resourceClaimName\":\"shared-gpu-2\"}]}}";
/* extended resources and a claim on the device-plugin node (the claim's device is
 * h100-0's, so every answer here is about nvidia.com/gpu first) */
static const char *const EXT =
    "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}],"
    "\"resourceClaims\":[{\"name\":\"a\",\"resourceClaimName\":\"shared-gpu\"}]}}";

/* The node's outcome for the pod: "fit", "unschedulable" or "unresolvable". */
static const char *outcome(const srv *s, const char *pod, const char *node) {
    char body[2048];
    snprintf(body, sizeof body, "{\"Pod\":%s,\"NodeNames\":[\"%s\"],\"Nodes\":null}", pod, node);
    char *out;
    cr_assert_eq(th_http(s, "POST", "/filter", body, &out), 200, "%s", out);
    json_t *r = th_json(out);
    const char *o = json_object_get(json_object_get(r, "FailedNodes"), node)                  ? "unschedulable"
                    : json_object_get(json_object_get(r, "FailedAndUnresolvableNodes"), node) ? "unresolvable"
                    : json_array_size(json_object_get(r, "NodeNames")) == 1                   ? "fit"
                                                                                              : "?";
    json_decref(r);
    free(out);
    return o;
}

static void start_with_objects(srv *s) {
    srv_start(s, no_args);
    char *out;
    cr_assert_eq(th_http(s, "POST", "/objects", SHARED, &out), 200, "%s", out);
    free(out);
}

Test(serve_memo, pods_naming_the_same_claims_differently_answer_as_a_fresh_service) {
    srv fresh;
    start_with_objects(&fresh);
    const char *want_dup = outcome(&fresh, DUP, "h100-0");
    cr_assert_eq(srv_stop(&fresh), 0);
    start_with_objects(&fresh);
    const char *want_two = outcome(&fresh, TWO, "h100-0");
    cr_assert_eq(srv_stop(&fresh), 0);
    cr_assert_str_eq(want_dup, "fit");             /* one claim, one GPU: the free one */
    cr_assert_str_eq(want_two, "unschedulable");   /* two claims want two: one is held */
    for (int order = 0; order < 2; order++) {
        srv s;
        start_with_objects(&s);
        const char *first = outcome(&s, order ? TWO : DUP, "h100-0"), *second = outcome(&s, order ? DUP : TWO, "h100-0");
        cr_expect_str_eq(order ? second : first, want_dup, "order %d: p-dup-shared", order);
        cr_expect_str_eq(order ? first : second, want_two, "order %d: p-two-shared", order);
        cr_assert_eq(srv_stop(&s), 0);
    }
}

Test(serve_memo, a_pod_recreated_under_a_bound_pods_name_is_another_pod) {
    char pending[1024], twin[1024];
    snprintf(pending, sizeof pending, EXT, "p-ext-2", "uid-new");
    snprintf(twin, sizeof twin, EXT, "p-twin", "uid-twin");
    srv s;
    start_with_objects(&s);
    /* 2 of dp-0's 3 GPUs are the bound ml/p-ext-2's (another UID): neither fits */
    cr_expect_str_eq(outcome(&s, pending, "dp-0"), "unschedulable");
    cr_expect_str_eq(outcome(&s, twin, "dp-0"), "unschedulable");
    cr_assert_eq(srv_stop(&s), 0);
}
