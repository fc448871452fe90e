/* serve_test.c — `dralloc serve` as kube-scheduler sees it: a child process on the
 * static snapshot testdata/demo/ answering the extender.md §4 bodies in both
 * nodeCacheCapable modes (exact keys, exact node sets), prioritize, the static-mode
 * /objects API, hostile bodies (each a 4xx with a JSON error, the server still
 * answering after), concurrent clients while snapshots are swapped (every answer is
 * one snapshot's answer), and SIGTERM with requests in flight (exit 0, sanitizers
 * clean). */
#include <pthread.h>
#include <stdatomic.h>

#include "tests/extender/serve_helpers.h"

static const char *const demo_args[] = {"--snapshot", DEMO, "--threads", "2", NULL};

/* Checks the ExtenderFilterResult keys are Go's, in Go's order. */
static void check_filter_keys(const json_t *r) {
    static const char *const want[] = {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"};
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)r, k, v) {
        cr_assert(i < 5, "extra key %s", k);
        cr_assert_str_eq(k, want[i]);
        i++;
    }
    cr_assert_eq(i, 5);
}

static json_t *post_file(const srv *s, const char *path, const char *file, long want_code) {
    char *body = th_read_file(file, NULL), *out;
    long code = th_http(s, "POST", path, body, &out);
    cr_assert_eq(code, want_code, "%s %s: %ld %s", path, file, code, out);
    json_t *j = th_json(out);
    free(body);
    free(out);
    return j;
}

Test(serve, filter_node_names_mode) {
    srv s;
    srv_start(&s, demo_args);
    /* extender.md §4a verbatim: template claim + shared claim, three names */
    json_t *r = post_file(&s, "/filter", REQ "filter-fits.json", 200);
    check_filter_keys(r);
    cr_assert(json_is_null(json_object_get(r, "Nodes")));
    char *names = th_names(json_object_get(r, "NodeNames"));
    cr_assert_str_eq(names, "gpu-node-002");
    char *failed = th_keys(json_object_get(r, "FailedNodes")), *unres = th_keys(json_object_get(r, "FailedAndUnresolvableNodes"));
    cr_assert_str_eq(failed, "gpu-node-001");   /* 1 of 8 GPUs free: unschedulable for now */
    cr_assert_str_eq(unres, "gpu-node-003");    /* no GPU at all */
    cr_assert_str_eq(json_string_value(json_object_get(r, "Error")), "");
    cr_assert_gt(strlen(json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "gpu-node-001"))), 0);
    free(names), free(failed), free(unres), json_decref(r);

    /* nothing fits: [] (not null), every node explained */
    r = post_file(&s, "/filter", REQ "filter-fails.json", 200);
    check_filter_keys(r);
    cr_assert(json_is_array(json_object_get(r, "NodeNames")));
    cr_assert_eq(json_array_size(json_object_get(r, "NodeNames")), 0);
    failed = th_keys(json_object_get(r, "FailedNodes")), unres = th_keys(json_object_get(r, "FailedAndUnresolvableNodes"));
    cr_assert_str_eq(failed, "gpu-node-001,gpu-node-004");
    cr_assert_str_eq(unres, "gpu-node-003,node-a100");
    free(failed), free(unres), json_decref(r);

    /* MIG partitions on the A100, nothing on the H100 node */
    r = post_file(&s, "/filter", REQ "filter-mig.json", 200);
    names = th_names(json_object_get(r, "NodeNames"));
    cr_assert_str_eq(names, "node-a100");
    free(names), json_decref(r);

    /* a pod without claims passes everywhere */
    r = post_file(&s, "/filter", REQ "filter-no-claims.json", 200);
    names = th_names(json_object_get(r, "NodeNames"));
    cr_assert_str_eq(names, "gpu-node-001,gpu-node-003");
    cr_assert_eq(json_object_size(json_object_get(r, "FailedNodes")), 0);
    free(names), json_decref(r);

    /* any URL prefix (urlPrefix http://host:port/dra) */
    r = post_file(&s, "/dra/filter", REQ "filter-fits.json", 200);
    names = th_names(json_object_get(r, "NodeNames"));
    cr_assert_str_eq(names, "gpu-node-002");
    free(names), json_decref(r);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(serve, filter_node_list_mode) {
    srv s;
    srv_start(&s, demo_args);
    /* extender.md §4c: full Node objects in, the fitting ones echoed, NodeNames null */
    json_t *r = post_file(&s, "/filter", REQ "filter-nodelist.json", 200);
    check_filter_keys(r);
    cr_assert(json_is_null(json_object_get(r, "NodeNames")));
    json_t *items = json_object_get(json_object_get(r, "Nodes"), "items");
    char *names = th_names(items);
    cr_assert_str_eq(names, "gpu-node-002");
    char *req = th_read_file(REQ "filter-nodelist.json", NULL);
    json_t *in = th_json(req);
    json_t *in002 = json_array_get(json_object_get(json_object_get(in, "Nodes"), "items"), 1);
    cr_assert(json_equal(json_array_get(items, 0), in002), "the Node object is echoed unchanged");
    char *failed = th_keys(json_object_get(r, "FailedNodes")), *unres = th_keys(json_object_get(r, "FailedAndUnresolvableNodes"));
    cr_assert_str_eq(failed, "gpu-node-001");
    cr_assert_str_eq(unres, "gpu-node-003");
    free(names), free(failed), free(unres), free(req), json_decref(in), json_decref(r);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(serve, prioritize) {
    srv s;
    srv_start(&s, demo_args);
    json_t *r = post_file(&s, "/prioritize", REQ "prioritize.json", 200);
    cr_assert(json_is_array(r));
    cr_assert_eq(json_array_size(r), 3);
    size_t i;
    json_t *h;
    json_array_foreach(r, i, h) {
        cr_assert_eq(json_object_size(h), 2);
        cr_assert(json_is_string(json_object_get(h, "Host")));
        cr_assert(json_is_integer(json_object_get(h, "Score")), "Score must be a JSON integer");
        json_int_t sc = json_integer_value(json_object_get(h, "Score"));
        cr_assert(sc >= 0 && sc <= 10);
    }
    char *names = th_names(r);
    cr_assert_str_eq(names, "gpu-node-001,gpu-node-002,gpu-node-004");
    /* gpu-node-004 has no free GPU: it cannot score */
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(r, 2), "Score")), 0);
    free(names), json_decref(r);
    /* a pod without claims scores 0 everywhere */
    r = post_file(&s, "/prioritize", REQ "filter-no-claims.json", 200);
    cr_assert_eq(json_array_size(r), 2);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(r, 0), "Score")), 0);
    json_decref(r);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(serve, routes_and_introspection) {
    srv s;
    srv_start(&s, demo_args);
    char *out;
    cr_assert_eq(th_http(&s, "GET", "/healthz", NULL, &out), 200);
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/readyz", NULL, &out), 200);
    free(out);
    cr_assert_eq(th_http(&s, "POST", "/bind", "{\"PodName\":\"p\",\"PodNamespace\":\"ml\",\"PodUID\":\"u\",\"Node\":\"n\"}", &out), 200);
    cr_assert_str_eq(out, "{\"Error\":\"bind mode is not enabled (--bind)\"}");
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/debug/cache", NULL, &out), 200);
    json_t *j = th_json(out);
    cr_assert_eq(json_integer_value(json_object_get(j, "generation")), 1);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "objects"), "Node")), 5);
    const char *when = json_string_value(json_object_get(j, "builtAt"));
    cr_assert(when && strlen(when) == 20 && when[10] == 'T' && when[19] == 'Z', "RFC3339: %s", when ? when : "(none)");
    cr_assert(json_is_number(json_object_get(j, "buildSeconds")));
    json_decref(j);
    free(out);
    json_decref(post_file(&s, "/filter", REQ "filter-fits.json", 200));
    cr_assert_eq(th_http(&s, "GET", "/metrics", NULL, &out), 200);
    static const char *const want[] = {
        "dralloc_http_requests_total{verb=\"filter\",code=\"200\"} 1",
        "dralloc_http_request_duration_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 1",
        "dralloc_filter_nodes_total{outcome=\"fit\"} 1",
        "dralloc_filter_nodes_total{outcome=\"unschedulable\"} 1",
        "dralloc_filter_nodes_total{outcome=\"unresolvable\"} 1",
        "dralloc_nodes_evaluated_total 3",
        "dralloc_allocator_steps_total ",
        "dralloc_snapshot_generation 1",
        "dralloc_snapshot_objects{kind=\"Node\"} 5",
        "process_resident_memory_bytes ",
        "# TYPE dralloc_http_request_duration_seconds histogram",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) cr_assert(strstr(out, want[i]), "missing %s in\n%s", want[i], out);
    free(out);
    /* the status page: allocatable now per class, the heatmap (a cell per node), and the
     * decision just made: the count by cause, then the nodes' own reasons */
    cr_assert_eq(th_http(&s, "GET", "/", NULL, &out), 200);
    cr_assert(strstr(out, "<svg") && strstr(out, "Allocatable now") && strstr(out, "<title>gpu-node-002: "), "%s", out);
    cr_assert(strstr(out, "ml/trainer-0") && strstr(out, "nodes are available: ") &&
                  strstr(out, "gpu-node-001: cannot allocate all claims"),
              "%s", out);
    free(out);
    /* every 4xx is JSON naming the problem */
    cr_assert_eq(th_http(&s, "GET", "/nope", NULL, &out), 404);
    cr_assert(strstr(out, "\"error\":\"no route for GET /nope"), "%s", out);
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/filter", NULL, &out), 405);
    cr_assert(strstr(out, "\"error\""), "%s", out);
    free(out);
    cr_assert_eq(th_http(&s, "DELETE", "/objects/ResourceClaim/ml/no-such-claim", NULL, &out), 404);
    cr_assert(strstr(out, "\"error\""), "%s", out);
    free(out);
    cr_assert_eq(th_http(&s, "DELETE", "/objects/Node", NULL, &out), 400);
    free(out);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(serve, static_mode_objects) {
    srv s;
    const char *const args[] = {"--threads", "2", NULL};
    srv_start(&s, args);   /* no snapshot: alive, not ready */
    char *out;
    cr_assert_eq(th_http(&s, "GET", "/healthz", NULL, &out), 200);
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/readyz", NULL, &out), 503);
    free(out);
    /* one object, then a List, then an array */
    cr_assert_eq(th_http(&s, "POST", "/objects",
                         "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}", &out), 200, "%s", out);
    cr_assert_str_eq(out, "{\"generation\":1}");
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/readyz", NULL, &out), 200);
    free(out);
    cr_assert_eq(th_http(&s, "POST", "/objects",
                         "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                         "\"metadata\":{\"name\":\"n2\"}},{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
                         "\"metadata\":{\"name\":\"gpu\"},\"spec\":{}}]}", &out), 200, "%s", out);
    cr_assert_str_eq(out, "{\"generation\":2}");
    free(out);
    cr_assert_eq(th_http(&s, "POST", "/objects",
                         "[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n3\"}}]", &out), 200, "%s", out);
    cr_assert_str_eq(out, "{\"generation\":3}");
    free(out);
    cr_assert_eq(th_http(&s, "DELETE", "/objects/Node/_/n3", NULL, &out), 200, "%s", out);
    cr_assert_str_eq(out, "{\"generation\":4}");
    free(out);
    cr_assert_eq(th_http(&s, "DELETE", "/objects/Node/_/n3", NULL, &out), 404, "%s", out);
    free(out);
    cr_assert_eq(th_http(&s, "POST", "/objects", "{\"kind\":\"Node\"}", &out), 400, "%s", out);
    cr_assert(strstr(out, "\"error\""), "%s", out);
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/debug/cache", NULL, &out), 200);
    json_t *j = th_json(out);
    cr_assert_eq(json_integer_value(json_object_get(j, "generation")), 4);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "objects"), "Node")), 2);
    json_decref(j);
    free(out);
    cr_assert_eq(srv_stop(&s), 0);
}

/* ---- hostile bodies ------------------------------------------------------------------ */

static void expect_4xx(const srv *s, const char *what, const char *body, size_t len, long want, const char *fragment) {
    char *out;
    long code = th_http_on(NULL, s, "POST", "/filter", body, len, &out);
    cr_assert_eq(code, want, "%s: got %ld %.300s", what, code, out);
    json_t *j = th_json(out);
    const char *msg = json_string_value(json_object_get(j, "error"));
    cr_assert(msg && *msg, "%s: no error text: %.300s", what, out);
    if (fragment) cr_assert(strstr(msg, fragment), "%s: \"%s\" lacks \"%s\"", what, msg, fragment);
    json_decref(j);
    free(out);
    /* and the server keeps answering */
    cr_assert_eq(th_http(s, "GET", "/healthz", NULL, NULL), 200, "%s: server stopped answering", what);
}

Test(serve, hostile_bodies) {
    srv s;
    srv_start(&s, demo_args);
    size_t len;
    char *good = th_read_file(REQ "filter-fits.json", &len);
    expect_4xx(&s, "empty", "", 0, 400, "empty body");
    expect_4xx(&s, "truncated", good, len / 2, 400, "invalid JSON");
    expect_4xx(&s, "trailing garbage", "{\"Pod\":{},\"NodeNames\":[]} x", 27, 400, "invalid JSON");
    expect_4xx(&s, "not an object", "[1,2,3]", 7, 400, "expected a JSON object");
    expect_4xx(&s, "wrong type", "{\"Pod\":{},\"NodeNames\":{\"a\":1}}", 30, 400, "NodeNames: expected an array");
    expect_4xx(&s, "wrong item type", "{\"Pod\":{},\"NodeNames\":[null]}", 29, 400, "NodeNames[0]");
    expect_4xx(&s, "pod not object", "{\"Pod\":[],\"NodeNames\":[]}", 25, 400, "Pod: expected an object");
    expect_4xx(&s, "invalid UTF-8", "{\"Pod\":{},\"NodeNames\":[\"n\xC0\xAF\"]}", 29, 400, "not valid UTF-8");
    expect_4xx(&s, "NUL in string", "{\"Pod\":{},\"NodeNames\":[\"a\\u0000b\"]}", 35, 400, "invalid JSON");
    char bin[512];
    for (size_t i = 0; i < sizeof bin; i++) bin[i] = (char)((i * 7919u) & 0x7f);
    bin[0] = '{';
    expect_4xx(&s, "garbage", bin, sizeof bin, 400, NULL);

    size_t deep = 100000;
    char *d = malloc(5 * deep + 64);
    memset(d, '[', deep);
    memset(d + deep, ']', deep);
    expect_4xx(&s, "100k-deep array", d, 2 * deep, 400, "nested deeper than 128 levels");
    size_t off = (size_t)sprintf(d, "{\"Pod\":{\"spec\":");
    for (size_t i = 0; i < deep; i++) d[off++] = '{', d[off++] = '"', d[off++] = 'a', d[off++] = '"', d[off++] = ':';
    expect_4xx(&s, "100k-deep object inside the Pod", d, off, 400, "nested deeper");
    free(d);

    /* 100,000 node names (1.2 MB): more than --max-nodes */
    strbuf b;
    sbuf_init(&b);
    sbuf_adds(&b, "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"}},\"NodeNames\":[");
    for (int i = 0; i < 100000; i++) sbuf_addf(&b, "%s\"node-%06d\"", i ? "," : "", i);
    sbuf_adds(&b, "]}");
    expect_4xx(&s, "100,000 node names", b.buf, b.len, 400, "more than the limit");
    sbuf_free(&b);

    /* 17 MiB: past the 16 MiB default, refused from its Content-Length */
    size_t huge = 17u << 20;
    char *hb = malloc(huge);
    memset(hb, ' ', huge);
    hb[0] = '{';
    hb[huge - 1] = '}';
    expect_4xx(&s, "17 MiB body", hb, huge, 413, "larger than the limit of 16777216 bytes");
    free(hb);

    /* still answering properly */
    char *out;
    cr_assert_eq(th_http_on(NULL, &s, "POST", "/filter", good, len, &out), 200);
    cr_assert(strstr(out, "\"NodeNames\":[\"gpu-node-002\"]"), "%s", out);
    free(out);
    free(good);
    cr_assert_eq(srv_stop(&s), 0);
}

/* ---- concurrency and shutdown ---------------------------------------------------------- */

typedef struct client {
    const srv *s;
    const char *body;
    size_t len;
    const char *answers[2];   /* the only acceptable bodies (NULL: any 200) */
    _Atomic bool *stop;
    int ok, bad, failed;      /* 200 with an acceptable body / anything else / transfer failed */
    char first_bad[512];
} client;

static void *client_loop(void *arg) {
    client *c = arg;
    CURL *h = curl_easy_init();
    while (!atomic_load(c->stop)) {
        char *out;
        long code = th_http_on(h, c->s, "POST", "/filter", c->body, c->len, &out);
        bool good = code == 200 && (!c->answers[0] || !strcmp(out, c->answers[0]) ||
                                    (c->answers[1] && !strcmp(out, c->answers[1])));
        if (code < 0) c->failed++;
        else if (good) c->ok++;
        else if (!c->bad++) snprintf(c->first_bad, sizeof c->first_bad, "%ld %s", code, out);
        free(out);
    }
    curl_easy_cleanup(h);
    return NULL;
}

/* One request, whatever the stop flag says; ok when it is a 200 with a filter result. */
static void *slow_once(void *arg) {
    client *c = arg;
    char *out;
    long code = th_http_on(NULL, c->s, "POST", "/filter", c->body, c->len, &out);
    if (code == 200 && strstr(out, "\"NodeNames\":[")) c->ok++;
    else snprintf(c->first_bad, sizeof c->first_bad, "%ld %.300s", code, out);
    free(out);
    return NULL;
}

/* A claim taking gpu-node-001's one free GPU and all of gpu-node-002's: in its presence
 * llm-serve-0 (one GPU + one NIC) fits nowhere; without it, on both nodes. */
static const char blocker[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"blocker\",\"namespace\":\"ops\"},"
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
    "\"allocationMode\":\"ExactCount\",\"count\":9}}]}},\"status\":{\"allocation\":{\"devices\":{\"results\":["
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-001\",\"device\":\"gpu-6\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-0\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-1\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-2\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-3\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-4\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-5\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-6\"},"
    "{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-002\",\"device\":\"gpu-7\"}]}}}}";

Test(serve, concurrent_clients_while_snapshots_swap) {
    srv s;
    srv_start(&s, demo_args);
    size_t len;
    char *body = th_read_file(REQ "prioritize.json", &len);   /* llm-serve-0 on 001, 002, 004 */
    char *a, *b, *out;
    cr_assert_eq(th_http_on(NULL, &s, "POST", "/filter", body, len, &a), 200);
    cr_assert(strstr(a, "\"NodeNames\":[\"gpu-node-001\",\"gpu-node-002\"]"), "%s", a);
    cr_assert_eq(th_http(&s, "POST", "/objects", blocker, &out), 200, "%s", out);
    free(out);
    cr_assert_eq(th_http_on(NULL, &s, "POST", "/filter", body, len, &b), 200);
    cr_assert(strstr(b, "\"NodeNames\":[]"), "%s", b);
    cr_assert_eq(th_http(&s, "DELETE", "/objects/ResourceClaim/ops/blocker", NULL, &out), 200, "%s", out);
    free(out);

    _Atomic bool stop = false;
    enum { N = 8 };
    client c[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        c[i] = (client){.s = &s, .body = body, .len = len, .answers = {a, b}, .stop = &stop};
        pthread_create(&t[i], NULL, client_loop, &c[i]);
    }
    int swaps = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        cr_assert_eq(th_http(&s, "POST", "/objects", blocker, &out), 200, "%s", out);
        free(out);
        cr_assert_eq(th_http(&s, "DELETE", "/objects/ResourceClaim/ops/blocker", NULL, &out), 200, "%s", out);
        free(out);
        swaps += 2;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < 2000);
    atomic_store(&stop, true);
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(c[i].bad, 0, "client %d: %d answers from no snapshot, first: %s", i, c[i].bad, c[i].first_bad);
        cr_assert_eq(c[i].failed, 0, "client %d: %d transfers failed", i, c[i].failed);
        ok += c[i].ok;
    }
    cr_log_info("%d answers from 8 clients during %d snapshot swaps", ok, swaps);
    cr_assert_gt(ok, N);
    free(a), free(b), free(body);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(serve, sigterm_with_requests_in_flight) {
    srv s;
    srv_start(&s, demo_args);
    size_t len;
    char *body = th_read_file(REQ "filter-fits.json", &len), *a;
    cr_assert_eq(th_http_on(NULL, &s, "POST", "/filter", body, len, &a), 200);
    _Atomic bool stop = false;
    enum { N = 4 };
    client c[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        c[i] = (client){.s = &s, .body = body, .len = len, .answers = {a, NULL}, .stop = &stop};
        pthread_create(&t[i], NULL, client_loop, &c[i]);
    }
    /* and one slow request: 15,000 copies of gpu-node-002 (seconds of allocator work,
     * bounded by the 2 s filter budget) that must be answered in full after SIGTERM */
    strbuf big;
    sbuf_init(&big);
    sbuf_adds(&big, "{\"Pod\":");
    json_t *req = th_json(body);
    char *pod = json_dumps(json_object_get(req, "Pod"), JSON_COMPACT);
    sbuf_adds(&big, pod);
    free(pod);
    json_decref(req);
    sbuf_adds(&big, ",\"NodeNames\":[");
    for (int i = 0; i < 15000; i++) sbuf_adds(&big, i ? ",\"gpu-node-002\"" : "\"gpu-node-002\"");
    sbuf_adds(&big, "]}");
    _Atomic bool slow_stop = true;   /* one request only */
    client slow = {.s = &s, .body = big.buf, .len = big.len, .stop = &slow_stop};
    pthread_t ts;
    pthread_create(&ts, NULL, slow_once, &slow);
    usleep(300000);
    int rc = srv_stop(&s);   /* SIGTERM while the clients are busy */
    atomic_store(&stop, true);
    pthread_join(ts, NULL);
    cr_assert_eq(slow.ok, 1, "the slow request was cut off: %s", slow.first_bad);
    sbuf_free(&big);
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        /* an answer is complete and right, or the connection was refused after the stop */
        cr_assert_eq(c[i].bad, 0, "client %d: %s", i, c[i].first_bad);
        ok += c[i].ok;
    }
    cr_assert_eq(rc, 0, "dralloc serve must exit 0 on SIGTERM");
    cr_assert_gt(ok, 0);
    free(a), free(body);
}

/* The limits are flags: a body streamed without Content-Length past --max-body is
 * still refused (413, after reading it), --max-nodes and --max-depth bound the JSON,
 * and a --filter-budget too small to decide anything fails every node with
 * Kubernetes' timeout message (FailedNodes: it may fit next time). */
Test(serve, limit_flags) {
    srv s;
    const char *const args[] = {"--snapshot", DEMO,  "--threads",   "2",         "--max-body", "2Ki", "--max-nodes",
                                "3",          "--max-depth", "12", "--filter-budget", "1ns", NULL};
    srv_start(&s, args);
    char big[4096];
    memset(big, ' ', sizeof big);
    big[0] = '{', big[sizeof big - 1] = '}';
    CURL *h = curl_easy_init();
    struct curl_slist *chunked = curl_slist_append(NULL, "Transfer-Encoding: chunked");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, chunked);
    char *out;
    long code = th_http_on(h, &s, "POST", "/filter", big, sizeof big, &out);
    cr_assert_eq(code, 413, "chunked 4 KiB: %ld %s", code, out);
    cr_assert(strstr(out, "larger than the limit of 2048 bytes"), "%s", out);
    free(out);
    curl_easy_cleanup(h);
    curl_slist_free_all(chunked);
    const char *four = "{\"Pod\":{},\"NodeNames\":[\"a\",\"b\",\"c\",\"d\"]}";
    expect_4xx(&s, "4 names", four, strlen(four), 400, "4 nodes, more than the limit of 3");
    const char *deep = "{\"Pod\":{\"a\":[[[[[[[[[[[1]]]]]]]]]]]},\"NodeNames\":[]}";
    expect_4xx(&s, "depth 13", deep, strlen(deep), 400, "nested deeper than 12 levels");
    json_t *r = post_file(&s, "/filter", REQ "filter-fits.json", 200);
    char *failed = th_keys(json_object_get(r, "FailedNodes"));
    cr_assert_str_eq(failed, "gpu-node-001,gpu-node-002,gpu-node-003");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "gpu-node-002")),
                     "timed out trying to allocate devices");
    cr_assert_eq(json_array_size(json_object_get(r, "NodeNames")), 0);
    free(failed), json_decref(r);
    cr_assert_eq(th_http(&s, "GET", "/metrics", NULL, &out), 200);
    cr_assert(strstr(out, "dralloc_filter_nodes_total{outcome=\"timeout\"} 3"), "%s", out);
    cr_assert(strstr(out, "dralloc_http_requests_total{verb=\"filter\",code=\"413\"} 1"), "%s", out);
    free(out);
    cr_assert_eq(srv_stop(&s), 0);
}

/* Exit status of `dralloc serve ARGS...` that is expected to stop by itself, and its log. */
static int run_serve(const char *const *args, char **log) {
    char path[] = "/tmp/dralloc-serve-usage-XXXXXX";
    int fd = mkstemp(path);
    const char *argv[32] = {DRALLOC_BIN, "serve"};
    size_t n = 2;
    for (size_t i = 0; args[i] && n < 30; i++) argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (!pid) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fd, 2);
        dup2(fd, 1);
        execv(DRALLOC_BIN, (char *const *)argv);
        _exit(127);
    }
    close(fd);
    int status = 0;
    for (int i = 0; waitpid(pid, &status, WNOHANG) == 0; i++) {
        if (i == 2000) kill(pid, SIGKILL);   /* 20 s: it was supposed to stop */
        usleep(10000);
    }
    *log = th_read_file(path, NULL);
    unlink(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(serve, usage_errors) {
    char *log;
    const char *const unknown[] = {"--bogus", NULL};
    cr_assert_eq(run_serve(unknown, &log), 2, "%s", log);
    cr_assert(strstr(log, "unexpected argument '--bogus'"), "%s", log);
    free(log);
    const char *const missing[] = {"--snapshot", "/nonexistent/dralloc", NULL};
    cr_assert_eq(run_serve(missing, &log), 2, "%s", log);
    cr_assert(strstr(log, "/nonexistent/dralloc"), "%s", log);
    free(log);
    const char *const budget[] = {"--filter-budget", "2", NULL};
    cr_assert_eq(run_serve(budget, &log), 2, "%s", log);
    cr_assert(strstr(log, "Go duration"), "%s", log);
    free(log);
    const char *const score[] = {"--score", "best", NULL};
    cr_assert_eq(run_serve(score, &log), 2, "%s", log);
    free(log);
    const char *const gates[] = {"--feature-gates", "NoSuchGate=true", NULL};
    cr_assert_eq(run_serve(gates, &log), 2, "%s", log);
    free(log);
    /* a malformed address is a usage error (exit 2, before anything starts), as a port
     * out of range is (issue #20); an address that cannot be bound is exit 1 (below) */
    const char *const listen[] = {"--listen", "nohost", NULL};
    cr_assert_eq(run_serve(listen, &log), 2, "%s", log);
    cr_assert(strstr(log, "--listen nohost: expected HOST:PORT"), "%s", log);
    free(log);
    const char *const help[] = {"--help", NULL};
    cr_assert_eq(run_serve(help, &log), 0, "%s", log);
    cr_assert(strstr(log, "usage: dralloc serve"), "%s", log);
    free(log);
    /* the port is taken: exit 1, not a hang */
    srv s;
    const char *const none[] = {NULL};
    srv_start(&s, none);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", s.port);
    const char *const busy[] = {"--listen", addr, NULL};
    cr_assert_eq(run_serve(busy, &log), 1, "%s", log);
    free(log);
    cr_assert_eq(srv_stop(&s), 0);
}
