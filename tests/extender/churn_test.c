/* churn_test.c — memory that follows the live objects (issue #21): `dralloc serve`
 * on the demo cluster, then rounds as a busy cluster makes them for weeks — a node
 * autoscaled in under a new name with devices of new UUIDs, a claim whose selector
 * pins a UUID no earlier claim named, a pod filtered against both, then all three
 * deleted. The catalog (/debug/cache "catalog": names and CEL programs) must be back
 * to its starting size after every round's deletion, and the server's RSS after all
 * the rounds within 10 % (+8 MiB) of its RSS after the first 1,000.
 *
 * `make test` runs CHURN_ROUNDS; DRALLOC_CHURN_ROUNDS sets another count. The server
 * runs without ASan's quarantine (freed memory held back to catch use-after-free would
 * read as growth). */
#include "tests/extender/serve_helpers.h"

enum { CHURN_ROUNDS = 20000, CHURN_WARM = 1000 };

static long rss_kib(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = atol(line + 6);
    fclose(f);
    return kib;
}

/* The catalog's names and programs, from /debug/cache. */
static void catalog(CURL *h, const srv *s, long *names, long *programs) {
    char *out;
    cr_assert_eq(th_http_on(h, s, "GET", "/debug/cache", NULL, 0, &out), 200);
    json_t *j = th_json(out);
    json_t *c = json_object_get(j, "catalog");
    cr_assert(json_is_object(c), "/debug/cache has no catalog: %s", out);
    *names = (long)json_integer_value(json_object_get(c, "names"));
    *programs = (long)json_integer_value(json_object_get(c, "programs"));
    json_decref(j);
    free(out);
}

static void req(CURL *h, const srv *s, const char *method, const char *path, const char *body, int round) {
    char *out;
    long code = th_http_on(h, s, method, path, body, body ? strlen(body) : 0, &out);
    cr_assert_eq(code, 200, "round %d: %s %s: %ld %s", round, method, path, code, out);
    free(out);
}

Test(churn, the_catalog_and_rss_follow_the_live_objects) {
    const char *env = getenv("DRALLOC_CHURN_ROUNDS");
    int rounds = env ? atoi(env) : CHURN_ROUNDS;
    if (rounds <= CHURN_WARM) rounds = CHURN_WARM + 1;
    const char *asan = getenv("ASAN_OPTIONS");
    char opts[512];
    snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0:thread_local_quarantine_size_kb=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    const char *const args[] = {"--snapshot", DEMO, "--threads", "2", NULL};
    srv s;
    srv_start(&s, args);
    CURL *h = curl_easy_init();
    long names0, progs0, names, progs;
    catalog(h, &s, &names0, &progs0);
    long rss_warm = 0;
    char body[4096], path[256];
    for (int i = 0; i < rounds; i++) {
        snprintf(body, sizeof body,
                 "[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"auto-%d\",\"labels\":{\"pool\":\"spot\"}}},"
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"auto-%d-gpus\"},"
                 "\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"auto-%d\",\"pool\":{\"name\":\"auto-%d\","
                 "\"generation\":1,\"resourceSliceCount\":1},\"devices\":["
                 "{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"GPU-%08d-0\"},\"index\":{\"int\":0}}},"
                 "{\"name\":\"gpu-1\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"GPU-%08d-1\"},\"index\":{\"int\":1}}}]}},"
                 "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"churn-%d\","
                 "\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
                 "\"deviceClassName\":\"gpu.nvidia.com\",\"selectors\":[{\"cel\":{\"expression\":"
                 "\"device.attributes['gpu.nvidia.com'].uuid == 'GPU-%08d-0'\"}}]}}]}}}]",
                 i, i, i, i, i, i, i, i);
        req(h, &s, "POST", "/objects", body, i);
        snprintf(body, sizeof body,
                 "{\"Pod\":{\"metadata\":{\"name\":\"p-%d\",\"namespace\":\"ml\",\"uid\":\"uid-%d\"},\"spec\":{"
                 "\"containers\":[{\"name\":\"c\"}],\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"churn-%d\"}]}},"
                 "\"NodeNames\":[\"auto-%d\",\"gpu-node-001\",\"gone-%d\"],\"Nodes\":null}",
                 i, i, i, i, i);
        char *out;
        cr_assert_eq(th_http_on(h, &s, "POST", "/filter", body, strlen(body), &out), 200);
        cr_assert(strstr(out, "\"NodeNames\":[\"auto-"), "round %d: the new node should fit: %s", i, out);
        free(out);
        snprintf(path, sizeof path, "/objects/ResourceClaim/ml/churn-%d", i);
        req(h, &s, "DELETE", path, NULL, i);
        snprintf(path, sizeof path, "/objects/ResourceSlice/_/auto-%d-gpus", i);
        req(h, &s, "DELETE", path, NULL, i);
        snprintf(path, sizeof path, "/objects/Node/_/auto-%d", i);
        req(h, &s, "DELETE", path, NULL, i);
        if (i < 3 || i % 997 == 0) {
            catalog(h, &s, &names, &progs);
            cr_assert_eq(names, names0, "round %d: %ld names, %ld before the rounds", i, names, names0);
            cr_assert_eq(progs, progs0, "round %d: %ld programs, %ld before the rounds", i, progs, progs0);
        }
        if (i == CHURN_WARM - 1) rss_warm = rss_kib(s.pid);
    }
    long rss_end = rss_kib(s.pid);
    catalog(h, &s, &names, &progs);
    fprintf(stderr, "churn: %d rounds: catalog %ld names, %ld programs (started at %ld, %ld); RSS %ld KiB after %d "
                    "rounds, %ld KiB after all\n",
            rounds, names, progs, names0, progs0, rss_warm, CHURN_WARM, rss_end);
    cr_expect_eq(names, names0);
    cr_expect_eq(progs, progs0);
    cr_expect_leq(rss_end, rss_warm + rss_warm / 10 + 8 * 1024, "RSS grew from %ld KiB to %ld KiB", rss_warm, rss_end);
    curl_easy_cleanup(h);
    cr_assert_eq(srv_stop(&s), 0);
}
