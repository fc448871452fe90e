/* test_cli.c — `dralloc allocate` as a user runs it: the built binary (next to this
 * test binary's directory: build/tests/test_engine → build/dralloc) on generated
 * files, checking exit codes, stdout and stderr. kubectl's habits (--flag=value,
 * -f -, -n), --timeout, more than 64 claims per pod, input size limits, and YAML
 * output that parses back as the same values. */
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/validate.h"

static char dralloc_bin[1024];
static char out_path[] = "/tmp/dralloc-cli-out-XXXXXX", err_path[] = "/tmp/dralloc-cli-err-XXXXXX";
static char *out_text, *err_text;

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    b[fread(b, 1, (size_t)n, f)] = '\0';
    fclose(f);
    return b;
}

/* Runs `dralloc allocate ARGS` (a shell fragment: redirections allowed); returns the
 * exit code, out_text/err_text hold stdout/stderr. */
static int run(const char *args) {
    if (!dralloc_bin[0]) {
        char self[1024];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        cr_assert(n > 0);
        self[n] = '\0';
        snprintf(dralloc_bin, sizeof dralloc_bin, "%s/../dralloc", dirname(self));
        cr_assert(access(dralloc_bin, X_OK) == 0, "%s not built", dralloc_bin);
        int fd = mkstemp(out_path);
        close(fd);
        fd = mkstemp(err_path);
        close(fd);
    }
    free(out_text);
    free(err_text);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=detect_leaks=0 %s allocate %s >%s 2>%s", dralloc_bin, args, out_path, err_path);
    int st = system(cmd);
    out_text = slurp(out_path);
    err_text = slurp(err_path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static const char class_and_node[] = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                     "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n"
                                     "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n";

/* A slice of n GPUs on node-1, each with its own numa attribute. */
static void append_slice(char *b, size_t cap, int n) {
    snprintf(b + strlen(b), cap - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: gpus}\nspec:\n"
             "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
             "  devices:\n");
    for (int i = 0; i < n; i++)
        snprintf(b + strlen(b), cap - strlen(b), "  - {name: gpu-%d, attributes: {numa: {int: %d}}}\n", i, i);
}

/* A pod with nclaims single-device claims c0..; a slice of ndevices GPUs; claim c0
 * asks for class `none` (no device matches) when c0_unsat. */
static void write_pod_case(const char *path, int nclaims, int ndevices, bool c0_unsat) {
    size_t cap = 1 << 16;
    char *b = calloc(1, cap);
    strcpy(b, class_and_node);
    append_slice(b, cap, ndevices);
    snprintf(b + strlen(b), cap - strlen(b), "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                                             "spec:\n  resourceClaims:\n");
    for (int i = 0; i < nclaims; i++)
        snprintf(b + strlen(b), cap - strlen(b), "  - {name: c%d, resourceClaimName: c%d}\n", i, i);
    snprintf(b + strlen(b), cap - strlen(b), "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: none}\n"
                                             "spec: {selectors: [{cel: {expression: 'false'}}]}\n");
    for (int i = 0; i < nclaims; i++)
        snprintf(b + strlen(b), cap - strlen(b),
                 "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c%d, namespace: default}\n"
                 "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: %s}}]}}\n",
                 i, i == 0 && c0_unsat ? "none" : "gpu");
    write_file(path, b);
    free(b);
}

/* The claims array of a job was claims[64]: a pod's 65th and later claims were left
 * out of the pod's allocation (and allocated on their own afterwards), so for a pod
 * that does not fit, its 65th claim was printed as allocated. A pod's claims are
 * all or nothing. */
Test(cli, pod_claims_past_64_are_allocated_with_the_pod) {
    write_pod_case("/tmp/dralloc-cli-65.yaml", 65, 65, true);
    cr_assert_eq(run("-f /tmp/dralloc-cli-65.yaml --node node-1 -o json"), 1, "%s", err_text);
    cr_assert_str_eq(out_text, "");
    cr_assert(strstr(err_text, "ResourceClaim default/c64: cannot be allocated on node node-1"), "%s", err_text);
    cr_assert(strstr(err_text, "ResourceClaim default/c0: cannot be allocated"), "%s", err_text);
    write_pod_case("/tmp/dralloc-cli-65.yaml", 70, 70, false);
    cr_assert_eq(run("-f /tmp/dralloc-cli-65.yaml --node node-1 -o json"), 0, "%s", err_text);
    json_t *list = json_loads(out_text, 0, NULL);
    cr_assert_not_null(list);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 70);
    json_decref(list);
    remove("/tmp/dralloc-cli-65.yaml");
}

/* --timeout: dra_alloc_ctx_set_deadline; the outcome prints Kubernetes' text, exit 1. */
Test(cli, timeout_stops_a_long_search) {
    size_t cap = 1 << 16;
    char *b = calloc(1, cap);
    strcpy(b, class_and_node);
    append_slice(b, cap, 100);
    /* two devices with the same numa: none exist, so the search tries every pair */
    snprintf(b + strlen(b), cap - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
             "spec:\n  devices:\n    requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}]\n"
             "    constraints: [{matchAttribute: gpu.example.com/numa}]\n");
    write_file("/tmp/dralloc-cli-slow.yaml", b);
    free(b);
    cr_assert_eq(run("-f=/tmp/dralloc-cli-slow.yaml --node=node-1 --timeout=1ns"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "timed out trying to allocate devices"), "%s", err_text);
    cr_assert_eq(run("-f /tmp/dralloc-cli-slow.yaml --node node-1 --timeout 2x"), 2);
    cr_assert(strstr(err_text, "time: unknown unit \"x\" in duration \"2x\""), "%s", err_text);
    cr_assert_eq(run("-f /tmp/dralloc-cli-slow.yaml --node node-1 --timeout 1m30s"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "no combination of available devices"), "%s", err_text);
    remove("/tmp/dralloc-cli-slow.yaml");
}

Test(cli, kubectl_flag_habits) {
    size_t cap = 1 << 14;
    char *b = calloc(1, cap);
    strcpy(b, class_and_node);
    append_slice(b, cap, 2);
    snprintf(b + strlen(b), cap - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: team}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n");
    write_file("/tmp/dralloc-cli-flags.yaml", b);
    free(b);
    /* stdin, --flag=value, -n for a claim name without namespace */
    cr_assert_eq(run("-f - --node=node-1 -n team --claim c -ojson </tmp/dralloc-cli-flags.yaml"), 0, "%s", err_text);
    cr_assert(strstr(out_text, "\"device\": \"gpu-0\""), "%s", out_text);
    cr_assert_eq(run("--filename=/tmp/dralloc-cli-flags.yaml --node node-1 --namespace=other"), 0, "%s", err_text);
    cr_assert(strstr(err_text, "nothing to allocate"), "%s", err_text);
    cr_assert_eq(run("-f /tmp/dralloc-cli-flags.yaml"), 2);
    cr_assert(strstr(err_text, "required flag(s) \"node\" not set"), "%s", err_text);
    cr_assert_eq(run("-f /tmp/dralloc-cli-flags.yaml --node"), 2);
    cr_assert(strstr(err_text, "flag needs an argument: --node"), "%s", err_text);
    cr_assert_eq(run("--help"), 0);
    cr_assert(strstr(out_text, "0 allocated") && strstr(out_text, "2 usage or input error"), "%s", out_text);
    remove("/tmp/dralloc-cli-flags.yaml");
}

Test(cli, endless_input_stops_at_the_size_limit) {
    cr_assert_eq(run("-f /dev/zero --node n"), 2);
    cr_assert(strstr(err_text, "/dev/zero: more than 256 MiB of input, refused"), "%s", err_text);
}

/* Warnings as kubectl prints them; --strict makes them errors. */
Test(cli, unknown_fields_and_kindless_documents) {
    write_file("/tmp/dralloc-cli-warn.yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                             "spec: {selector: []}\n---\njust a string\n---\nmetadata: {name: x}\n");
    cr_assert_eq(run("-f /tmp/dralloc-cli-warn.yaml --node n"), 0, "%s", err_text);
    cr_assert(strstr(err_text, "Warning: DeviceClass gpu: unknown field \"spec.selector\""), "%s", err_text);
    cr_assert(strstr(err_text, "Warning: /tmp/dralloc-cli-warn.yaml: document 2 (line 6) is a string, not a Kubernetes object"),
              "%s", err_text);
    cr_assert(strstr(err_text, "document 3 (line 8) has no kind"), "%s", err_text);
    cr_assert_eq(run("-f /tmp/dralloc-cli-warn.yaml --node n --strict"), 2);
    cr_assert(strstr(err_text, "document 2 (line 6) is a string, not a Kubernetes object; ignored (strict)"), "%s", err_text);
    write_file("/tmp/dralloc-cli-warn.yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                             "spec: {selector: []}\n");
    cr_assert_eq(run("-f /tmp/dralloc-cli-warn.yaml --node n --strict"), 2);
    cr_assert(strstr(err_text, "DeviceClass gpu: unknown field \"spec.selector\" (strict)"), "%s", err_text);
    remove("/tmp/dralloc-cli-warn.yaml");
}

/* `-o yaml` must read back (sigs.k8s.io/yaml: YAML 1.1) as exactly what `-o json`
 * prints: TRUE, NO, NULL, <<, ~ and number-like strings quoted; DEL, NEL, U+2028 and
 * U+2029 escaped. consumedCapacity keys sorted (a Go map); namespace always printed. */
Test(cli, yaml_output_reads_back) {
    write_file("/tmp/dralloc-cli-out.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n    allowMultipleAllocations: true\n"
               "    capacity: {zeta: {value: \"10\"}, alpha: {value: \"10\"}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c\n  annotations:\n"
               "    a: \"TRUE\"\n    b: \"NO\"\n    c: \"NULL\"\n    d: \"<<\"\n    e: \"~\"\n    f: \"a\\u2028b\\u2029c\"\n"
               "    g: \"x\\x85y\"\n    h: \"del\\x7f\"\n    i: \"0x1F\"\n    j: \"1_000\"\n    k: \"010\"\n    l: \"=\"\n"
               "    m: \"Off\"\n    n: \"y\"\n    o: \"tab\\there\"\n    p: \"-\"\n    q: \".inf\"\n"
               "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: gpu\n"
               "        capacity: {requests: {zeta: \"1\", alpha: \"2\"}}\n");
    cr_assert_eq(run("-f /tmp/dralloc-cli-out.yaml --node node-1 --seed 7 -o json"), 0, "%s", err_text);
    json_t *want = json_loads(out_text, 0, NULL);
    cr_assert_not_null(want, "%s", out_text);
    const char *cc = strstr(out_text, "\"consumedCapacity\"");
    cr_assert_not_null(cc, "%s", out_text);
    cr_assert(strstr(cc, "\"alpha\"") < strstr(cc, "\"zeta\""), "%s", cc);
    json_t *meta = json_object_get(json_array_get(json_object_get(want, "items"), 0), "metadata");
    cr_assert_str_eq(json_string_value(json_object_get(meta, "namespace")), "default");
    cr_assert_eq(run("-f /tmp/dralloc-cli-out.yaml --node node-1 --seed 7 -o yaml"), 0, "%s", err_text);
    err e;
    err_clear(&e);
    json_t *docs = dra_yaml_load(out_text, strlen(out_text), "out.yaml", &e);
    cr_assert_not_null(docs, "%s\n%s", e.msg, out_text);
    json_t *got = json_array_get(docs, 0);
    char *a = json_dumps(want, JSON_SORT_KEYS), *b = json_dumps(got, JSON_SORT_KEYS);
    cr_assert_str_eq(b, a, "yaml:\n%s", out_text);
    free(a);
    free(b);
    json_decref(docs);
    json_decref(want);
    remove("/tmp/dralloc-cli-out.yaml");
}

/* encoding/json into interface{} reads an integer beyond int64 as a float64: driver
 * parameters holding one must not make the JSON file unreadable. */
Test(cli, json_file_with_integer_beyond_int64) {
    write_file("/tmp/dralloc-cli-big.json",
               "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"resource.k8s.io/v1\", "
               "\"kind\": \"DeviceClass\", \"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"config\": [{\"opaque\": "
               "{\"driver\": \"gpu.example.com\", \"parameters\": {\"mask\": 18446744073709551615}}}]}}]}\n");
    cr_assert_eq(run("-f /tmp/dralloc-cli-big.json --node n"), 0, "%s", err_text);
    cr_assert(strstr(err_text, "nothing to allocate"), "%s", err_text);
    remove("/tmp/dralloc-cli-big.json");
}

/* The same object given twice (a directory and one of its files) loads once; a
 * different object under the same kind/namespace/name is an error naming both
 * files, as the API server holds one object per name. */
Test(cli, same_object_twice_loads_once) {
    system("rm -rf /tmp/dralloc-cli-dup && mkdir -p /tmp/dralloc-cli-dup");
    write_file("/tmp/dralloc-cli-dup/cluster.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n");
    write_file("/tmp/dralloc-cli-dup/slices.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n");
    /* before: the pool held every device twice and turned invalid */
    cr_assert_eq(run("-f /tmp/dralloc-cli-dup -f /tmp/dralloc-cli-dup/slices.yaml --node node-1 -o json"), 0, "%s",
                 err_text);
    cr_assert(strstr(out_text, "gpu-0"), "%s", out_text);
    write_file("/tmp/dralloc-cli-dup-other.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-9\n");
    cr_assert_eq(run("-f /tmp/dralloc-cli-dup -f /tmp/dralloc-cli-dup-other.yaml --node node-1"), 2, "%s", err_text);
    cr_assert(strstr(err_text, "ResourceSlice s is given twice with different contents") &&
                  strstr(err_text, "slices.yaml") && strstr(err_text, "dralloc-cli-dup-other.yaml"),
              "%s", err_text);
}

/* Pods one by one, as kube-scheduler schedules them: pod a needs a shared claim and
 * 3 more devices of 2 (it fails); pod b needs the shared claim and one device. The
 * shared claim is allocated with b, the first pod that fits (before, it went into
 * a's failed job and b was allocated without it). */
Test(cli, shared_claim_goes_with_the_first_pod_that_fits) {
    write_file("/tmp/dralloc-cli-shared.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n  - name: gpu-1\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: big, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, count: 3}}]}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: small, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default}\n"
               "spec: {containers: [{name: c}], resourceClaims: [{name: s, resourceClaimName: shared}, "
               "{name: b, resourceClaimName: big}]}\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: default}\n"
               "spec: {containers: [{name: c}], resourceClaims: [{name: s, resourceClaimName: shared}, "
               "{name: m, resourceClaimName: small}]}\n");
    cr_assert_eq(run("-f /tmp/dralloc-cli-shared.yaml --node node-1 -o json"), 1, "%s", err_text);   /* a does not fit */
    json_t *out = json_loads(out_text, 0, NULL);
    cr_assert_not_null(out, "%s", out_text);
    const json_t *items = json_object_get(out, "items");
    cr_assert_eq(json_array_size(items), 2, "%s", out_text);
    const char *n0 = json_string_value(json_object_get(json_object_get(json_array_get(items, 0), "metadata"), "name"));
    const char *n1 = json_string_value(json_object_get(json_object_get(json_array_get(items, 1), "metadata"), "name"));
    cr_assert(!strcmp(n0, "shared") && !strcmp(n1, "small"), "%s %s", n0, n1);
    json_decref(out);
}
