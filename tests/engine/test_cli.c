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
#include "engine/decode/decode.h"
#include "engine/decode/validate.h"

static char dralloc_bin[1024];
static char out_path[] = "dralloc-cli-out-XXXXXX", err_path[] = "dralloc-cli-err-XXXXXX";
static char *out_text, *err_text;

/* Each test (its own process under Criterion) works in a directory of its own, so the
 * files it writes under fixed names cannot meet another run's (two checkouts testing
 * at once on one machine did). */
static void in_own_dir(void) {
    char dir[] = "/tmp/dralloc-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chdir(dir), 0);
}

static void remove_own_dir(void) {
    char cwd[1024];
    if (!getcwd(cwd, sizeof cwd) || strncmp(cwd, "/tmp/dralloc-cli-", 17)) return;
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cwd);
    if (chdir("/") == 0 && system(cmd) != 0) fprintf(stderr, "test_cli: could not remove %s\n", cwd);
}

TestSuite(cli, .init = in_own_dir, .fini = remove_own_dir);

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
    write_pod_case("dralloc-cli-65.yaml", 65, 65, true);
    cr_assert_eq(run("-f dralloc-cli-65.yaml --node node-1 -o json"), 1, "%s", err_text);
    cr_assert_str_eq(out_text, "");
    cr_assert(strstr(err_text, "ResourceClaim default/c64: cannot be allocated on node node-1"), "%s", err_text);
    cr_assert(strstr(err_text, "ResourceClaim default/c0: cannot be allocated"), "%s", err_text);
    write_pod_case("dralloc-cli-65.yaml", 70, 70, false);
    cr_assert_eq(run("-f dralloc-cli-65.yaml --node node-1 -o json"), 0, "%s", err_text);
    json_t *list = json_loads(out_text, 0, NULL);
    cr_assert_not_null(list);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 70);
    json_decref(list);
    remove("dralloc-cli-65.yaml");
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
    write_file("dralloc-cli-slow.yaml", b);
    free(b);
    cr_assert_eq(run("-f=dralloc-cli-slow.yaml --node=node-1 --timeout=1ns"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "timed out trying to allocate devices"), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-slow.yaml --node node-1 --timeout 2x"), 2);
    cr_assert(strstr(err_text, "time: unknown unit \"x\" in duration \"2x\""), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-slow.yaml --node node-1 --timeout 1m30s"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "no combination of available devices"), "%s", err_text);
    /* --pod too: the pod's allocation on the node is bounded; a timeout is an Error
     * (kubernetes#137607), so the pod would be retried */
    FILE *fp = fopen("dralloc-cli-slow.yaml", "a");
    fputs("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: u-1}\n"
          "spec:\n  containers: [{name: c, image: x}]\n  resourceClaims: [{name: g, resourceClaimName: c}]\n",
          fp);
    fclose(fp);
    cr_assert_eq(run("-f dralloc-cli-slow.yaml --node node-1 --pod default/p --timeout 1ns"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "Pod default/p: cannot be scheduled: timed out trying to allocate devices"), "%s",
              err_text);
    /* the default is kube-scheduler's filterTimeout (10 s), or none with its gate off */
    cr_assert_eq(run("-f dralloc-cli-slow.yaml --node node-1 --pod default/p"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "does not fit node node-1"), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-slow.yaml --node node-1 --pod default/p "
                     "--feature-gates DRASchedulerFilterTimeout=false"),
                 1, "%s", err_text);
    cr_assert(strstr(err_text, "does not fit node node-1"), "%s", err_text);
    remove("dralloc-cli-slow.yaml");
}

Test(cli, kubectl_flag_habits) {
    size_t cap = 1 << 14;
    char *b = calloc(1, cap);
    strcpy(b, class_and_node);
    append_slice(b, cap, 2);
    snprintf(b + strlen(b), cap - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: team}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n");
    write_file("dralloc-cli-flags.yaml", b);
    free(b);
    /* stdin, --flag=value, -n for a claim name without namespace */
    cr_assert_eq(run("-f - --node=node-1 -n team --claim c -ojson <dralloc-cli-flags.yaml"), 0, "%s", err_text);
    cr_assert(strstr(out_text, "\"device\": \"gpu-0\""), "%s", out_text);
    cr_assert_eq(run("--filename=dralloc-cli-flags.yaml --node node-1 --namespace=other"), 0, "%s", err_text);
    cr_assert(strstr(err_text, "nothing to allocate"), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-flags.yaml"), 2);
    cr_assert(strstr(err_text, "required flag(s) \"node\" not set"), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-flags.yaml --node"), 2);
    cr_assert(strstr(err_text, "flag needs an argument: --node"), "%s", err_text);
    cr_assert_eq(run("--help"), 0);
    cr_assert(strstr(out_text, "0 allocated") && strstr(out_text, "2 usage or input error"), "%s", out_text);
    remove("dralloc-cli-flags.yaml");
}

Test(cli, endless_input_stops_at_the_size_limit) {
    cr_assert_eq(run("-f /dev/zero --node n"), 2);
    cr_assert(strstr(err_text, "/dev/zero: more than 256 MiB of input, refused"), "%s", err_text);
}

/* Warnings as kubectl prints them; --strict makes them errors. An object without
 * apiVersion or kind is refused as kubectl refuses it (client-side validation, on by
 * default: `error validating "f.yaml": error validating data: apiVersion not set`). */
Test(cli, unknown_fields_and_kindless_documents) {
    write_file("dralloc-cli-warn.yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                             "spec: {selector: []}\n---\njust a string\n---\nmetadata: {name: x}\n");
    cr_assert_eq(run("-f dralloc-cli-warn.yaml --node n"), 2, "%s", err_text);
    cr_assert(strstr(err_text, "Warning: dralloc-cli-warn.yaml: document 2 (line 6) is a string, not a Kubernetes object"),
              "%s", err_text);
    cr_assert(strstr(err_text, "error validating \"dralloc-cli-warn.yaml\": error validating data: [apiVersion not "
                               "set, kind not set] (object x)"),
              "%s", err_text);
    write_file("dralloc-cli-warn.yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                             "spec: {selector: []}\n---\njust a string\n---\nkind: Pod\nmetadata: {name: p}\n");
    cr_assert_eq(run("-f dralloc-cli-warn.yaml --node n"), 2, "%s", err_text);
    cr_assert(strstr(err_text, "error validating data: apiVersion not set (object p)"), "%s", err_text);
    write_file("dralloc-cli-warn.yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                             "spec: {selector: []}\n---\njust a string\n");
    cr_assert_eq(run("-f dralloc-cli-warn.yaml --node n"), 0, "%s", err_text);
    cr_assert(strstr(err_text, "Warning: DeviceClass gpu: unknown field \"spec.selector\""), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-warn.yaml --node n --strict"), 2);
    cr_assert(strstr(err_text, "document 2 (line 6) is a string, not a Kubernetes object; ignored (strict)"), "%s", err_text);
    write_file("dralloc-cli-warn.yaml", "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                                             "spec: {selector: []}\n");
    cr_assert_eq(run("-f dralloc-cli-warn.yaml --node n --strict"), 2);
    cr_assert(strstr(err_text, "DeviceClass gpu: unknown field \"spec.selector\" (strict)"), "%s", err_text);
    remove("dralloc-cli-warn.yaml");
}

/* `-o yaml` must read back (sigs.k8s.io/yaml: YAML 1.1) as exactly what `-o json`
 * prints: TRUE, NO, NULL, <<, ~ and number-like strings quoted; DEL, NEL, U+2028 and
 * U+2029 escaped. consumedCapacity keys sorted (a Go map); namespace always printed. */
Test(cli, yaml_output_reads_back) {
    write_file("dralloc-cli-out.yaml",
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
    cr_assert_eq(run("-f dralloc-cli-out.yaml --node node-1 --seed 7 -o json"), 0, "%s", err_text);
    json_t *want = json_loads(out_text, 0, NULL);
    cr_assert_not_null(want, "%s", out_text);
    const char *cc = strstr(out_text, "\"consumedCapacity\"");
    cr_assert_not_null(cc, "%s", out_text);
    cr_assert(strstr(cc, "\"alpha\"") < strstr(cc, "\"zeta\""), "%s", cc);
    json_t *meta = json_object_get(json_array_get(json_object_get(want, "items"), 0), "metadata");
    cr_assert_str_eq(json_string_value(json_object_get(meta, "namespace")), "default");
    cr_assert_eq(run("-f dralloc-cli-out.yaml --node node-1 --seed 7 -o yaml"), 0, "%s", err_text);
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(out_text, strlen(out_text), "out.yaml", &e);
    cr_assert_not_null(docs, "%s\n%s", e.msg, out_text);
    json_t *got = json_array_get(docs, 0);
    char *a = json_dumps(want, JSON_SORT_KEYS), *b = json_dumps(got, JSON_SORT_KEYS);
    cr_assert_str_eq(b, a, "yaml:\n%s", out_text);
    free(a);
    free(b);
    json_decref(docs);
    json_decref(want);
    remove("dralloc-cli-out.yaml");
}

/* -o yaml quotes a string only where kubectl's printer does (issue #21: "1Mi" came out
 * quoted, and of two UIDs the one starting with a digit): go-yaml v2 double-quotes
 * what would read back as another type (an int, a float, a bool, null, a timestamp, a
 * base-60 number), single-quotes what cannot be plain (an indicator first, ": "
 * inside, a space first), writes text with line breaks as a literal block, the rest
 * plain. */
Test(cli, yaml_quotes_as_kubectl) {
    write_file("dralloc-cli-quotes.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n    allowMultipleAllocations: true\n    capacity: {memory: {value: 4Gi}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c\n"
               "  uid: 1234e567-89ab-cdef-0123-456789abcdef\n  annotations:\n"
               "    a: \"1234e5\"\n    b: \"1Mi\"\n    c: \"- x\"\n    d: \" lead\"\n    e: \"2026-12-04T14:48:10Z\"\n"
               "    f: \"two\\nlines\\n\"\n    g: \"it's: here\"\n    h: \"0x1F\"\n    i: \"\"\n    j: \"yes\"\n"
               "    k: \"1.5\"\n    l: \"1:20\"\n    m: \"4e36d8a0-0b1c-4d5e-8f90-a1b2c3d4e5f6\"\n    o: \"no end\\nx\"\n"
               "    p: \"1e400\"\n"
               "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: gpu\n"
               "        capacity: {requests: {memory: 1Mi}}\n");
    cr_assert_eq(run("-f dralloc-cli-quotes.yaml --node node-1 --seed 1 -o yaml"), 0, "%s", err_text);
    cr_assert(strstr(out_text, "    annotations:\n"
                               "      a: \"1234e5\"\n"
                               "      b: 1Mi\n"
                               "      c: '- x'\n"
                               "      d: ' lead'\n"
                               "      e: \"2026-12-04T14:48:10Z\"\n"
                               "      f: |\n"
                               "        two\n"
                               "        lines\n"
                               "      g: 'it''s: here'\n"
                               "      h: \"0x1F\"\n"
                               "      i: \"\"\n"
                               "      j: \"yes\"\n"
                               "      k: \"1.5\"\n"
                               "      l: \"1:20\"\n"
                               "      m: 4e36d8a0-0b1c-4d5e-8f90-a1b2c3d4e5f6\n"
                               "      o: |-\n"
                               "        no end\n"
                               "        x\n"
                               "      p: 1e400\n"
                               "    name: c\n"),
              "%s", out_text);
    cr_assert(strstr(out_text, "    uid: 1234e567-89ab-cdef-0123-456789abcdef\n"), "%s", out_text);
    cr_assert(strstr(out_text, "              memory: 1Mi\n"), "%s", out_text);
    cr_assert(strstr(out_text, "        - consumedCapacity:\n            memory: 1Mi\n"), "%s", out_text);
    cr_assert(strstr(out_text, "\nmetadata:\n  resourceVersion: \"\"\n"), "%s", out_text);
    /* and it reads back as -o json prints it */
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(out_text, strlen(out_text), "out.yaml", &e);
    cr_assert_not_null(docs, "%s\n%s", e.msg, out_text);
    const json_t *ann = json_object_get(json_object_get(json_array_get(json_object_get(json_array_get(docs, 0), "items"), 0),
                                                        "metadata"),
                                        "annotations");
    cr_assert_str_eq(json_string_value(json_object_get(ann, "f")), "two\nlines\n");
    cr_assert_str_eq(json_string_value(json_object_get(ann, "o")), "no end\nx");
    cr_assert_str_eq(json_string_value(json_object_get(ann, "p")), "1e400");
    cr_assert_str_eq(json_string_value(json_object_get(ann, "a")), "1234e5");
    json_decref(docs);
    remove("dralloc-cli-quotes.yaml");
}

/* encoding/json into interface{} reads an integer beyond int64 as a float64: driver
 * parameters holding one must not make the JSON file unreadable. */
Test(cli, json_file_with_integer_beyond_int64) {
    write_file("dralloc-cli-big.json",
               "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"resource.k8s.io/v1\", "
               "\"kind\": \"DeviceClass\", \"metadata\": {\"name\": \"gpu\"}, \"spec\": {\"config\": [{\"opaque\": "
               "{\"driver\": \"gpu.example.com\", \"parameters\": {\"mask\": 18446744073709551615}}}]}}]}\n");
    cr_assert_eq(run("-f dralloc-cli-big.json --node n"), 0, "%s", err_text);
    cr_assert(strstr(err_text, "nothing to allocate"), "%s", err_text);
    remove("dralloc-cli-big.json");
}

/* The same object given twice (a directory and one of its files) loads once; a
 * different object under the same kind/namespace/name is an error naming both
 * files, as the API server holds one object per name. */
Test(cli, same_object_twice_loads_once) {
    system("rm -rf dralloc-cli-dup && mkdir -p dralloc-cli-dup");
    write_file("dralloc-cli-dup/cluster.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n");
    write_file("dralloc-cli-dup/slices.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n");
    /* before: the pool held every device twice and turned invalid */
    cr_assert_eq(run("-f dralloc-cli-dup -f dralloc-cli-dup/slices.yaml --node node-1 -o json"), 0, "%s",
                 err_text);
    cr_assert(strstr(out_text, "gpu-0"), "%s", out_text);
    write_file("dralloc-cli-dup-other.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-9\n");
    cr_assert_eq(run("-f dralloc-cli-dup -f dralloc-cli-dup-other.yaml --node node-1"), 2, "%s", err_text);
    cr_assert(strstr(err_text, "ResourceSlice s is given twice with different contents") &&
                  strstr(err_text, "slices.yaml") && strstr(err_text, "dralloc-cli-dup-other.yaml"),
              "%s", err_text);
}

/* Pods one by one, as kube-scheduler schedules them: pod a needs a shared claim and
 * 3 more devices of 2 (it fails); pod b needs the shared claim and one device. The
 * shared claim is allocated with b, the first pod that fits (before, it went into
 * a's failed job and b was allocated without it). */
Test(cli, shared_claim_goes_with_the_first_pod_that_fits) {
    write_file("dralloc-cli-shared.yaml",
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
    cr_assert_eq(run("-f dralloc-cli-shared.yaml --node node-1 -o json"), 1, "%s", err_text);   /* a does not fit */
    json_t *out = json_loads(out_text, 0, NULL);
    cr_assert_not_null(out, "%s", out_text);
    const json_t *items = json_object_get(out, "items");
    cr_assert_eq(json_array_size(items), 2, "%s", out_text);
    const char *n0 = json_string_value(json_object_get(json_object_get(json_array_get(items, 0), "metadata"), "name"));
    const char *n1 = json_string_value(json_object_get(json_object_get(json_array_get(items, 1), "metadata"), "name"));
    cr_assert(!strcmp(n0, "shared") && !strcmp(n1, "small"), "%s %s", n0, n1);
    json_decref(out);
}

/* ---- after scheduling: the claims as `kubectl get resourceclaim -o yaml` shows them ---- */

static json_t *items_of(const char *text) {
    json_t *o = json_loads(text, 0, NULL);
    cr_assert_not_null(o, "%s", text);
    return o;
}

static const json_t *item(const json_t *list, size_t i) { return json_array_get(json_object_get(list, "items"), i); }
static const json_t *meta(const json_t *o) { return json_object_get(o, "metadata"); }
static const char *str_at(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* A name the API server made from GenerateName `base`: base and 5 characters of
 * k8s.io/apimachinery/pkg/util/rand's alphabet. */
static bool generated_from(const char *name, const char *base) {
    size_t n = strlen(base);
    if (!name || strncmp(name, base, n) || strlen(name) != n + 5) return false;
    for (const char *p = name + n; *p; p++)
        if (!strchr("bcdfghjklmnpqrstvwxz2456789", *p)) return false;
    return true;
}

static void write_bind_case(const char *path, const char *extra) {
    char b[8192];
    snprintf(b, sizeof b, "%s", class_and_node);
    append_slice(b, sizeof b, 4);
    snprintf(b + strlen(b), sizeof b - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: team}\n"
             "spec:\n  metadata:\n    labels: {app: trainer}\n    annotations: {note: from-template}\n"
             "  spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu, selectors: []}}], config: []}}\n"
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
             "metadata: {name: shared, namespace: team, finalizers: [resource.kubernetes.io/delete-protection]}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"
             "status:\n  allocation:\n"
             "    devices: {results: [{request: r, driver: gpu.example.com, pool: node-1, device: gpu-3}]}\n"
             "    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-1]}]}]}\n"
             "  reservedFor: [{resource: pods, name: other, uid: other-uid}]\n"
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: own, namespace: team}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: trainer, namespace: team, uid: 6a1e0f2c-pod}\n"
             "spec: {containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: t}, "
             "{name: own, resourceClaimName: own}, {name: s, resourceClaimName: shared}]}\n%s",
             extra);
    write_file(path, b);
}

/* kube-scheduler's PreBind (pkg/scheduler/framework/plugins/dynamicresources/
 * dynamicresources.go, bindClaim): the delete-protection finalizer on a claim it
 * allocates, the pod appended to status.reservedFor of every claim the pod uses
 * (a shared claim keeps its entries), and status.allocation.allocationTimestamp
 * (time.Now()) when DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are
 * both enabled and it is unset — for every claim it binds, with binding conditions
 * or not, a reused one too. The ResourceClaim controller (pkg/controller/resourceclaim,
 * handleClaim) names a template's claim GenerateName "<pod>-<entry>-", owned by the
 * pod, with the template's labels and annotations and resource.kubernetes.io/
 * pod-claim-name, and records it in the pod's status.resourceClaimStatuses. Before,
 * the claims were printed bare, the template claim named "trainer-gpu", the shared
 * claim not at all. */
Test(cli, pod_claims_as_the_control_plane_leaves_them) {
    write_bind_case("dralloc-cli-bind.yaml", "");
    setenv("SOURCE_DATE_EPOCH", "1750000000", 1);
    cr_assert_eq(run("-f dralloc-cli-bind.yaml --node node-1 --pod team/trainer --seed 9 -o json"), 0, "%s",
                 err_text);
    json_t *out = items_of(out_text);
    cr_assert_eq(json_array_size(json_object_get(out, "items")), 4, "%s", out_text);
    /* the template's claim */
    const json_t *gen = item(out, 0), *m = meta(gen);
    const char *gname = str_at(m, "name");
    cr_assert(generated_from(gname, "trainer-gpu-"), "%s", out_text);
    cr_assert_str_eq(str_at(m, "generateName"), "trainer-gpu-");
    cr_assert_str_eq(str_at(m, "namespace"), "team");
    cr_assert_str_eq(str_at(json_object_get(m, "annotations"), "resource.kubernetes.io/pod-claim-name"), "gpu");
    cr_assert_str_eq(str_at(json_object_get(m, "annotations"), "note"), "from-template");
    cr_assert_str_eq(str_at(json_object_get(m, "labels"), "app"), "trainer");
    json_t *owner = json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "v1", "kind", "Pod", "name", "trainer",
                              "uid", "6a1e0f2c-pod", "controller", 1, "blockOwnerDeletion", 1);
    cr_assert(json_equal(owner, json_object_get(m, "ownerReferences")), "%s", out_text);
    json_decref(owner);
    /* Go's omitempty: the template's empty selectors and config are not printed;
     * the API server's defaults are */
    const json_t *ex = json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(gen, "spec"),
                                                                                      "devices"),
                                                                      "requests"),
                                                      0),
                                       "exactly");
    cr_assert_null(json_object_get(ex, "selectors"), "%s", out_text);
    cr_assert_null(json_object_get(json_object_get(json_object_get(gen, "spec"), "devices"), "config"));
    cr_assert_str_eq(str_at(ex, "allocationMode"), "ExactCount");
    cr_assert_eq(json_integer_value(json_object_get(ex, "count")), 1);
    /* allocated now: finalizer, reservedFor, allocationTimestamp */
    json_t *fin = json_pack("[s]", "resource.kubernetes.io/delete-protection");
    json_t *rf = json_pack("[{s:s, s:s, s:s}]", "resource", "pods", "name", "trainer", "uid", "6a1e0f2c-pod");
    for (size_t i = 0; i < 2; i++) {
        const json_t *c = item(out, i);
        cr_assert(json_equal(fin, json_object_get(meta(c), "finalizers")), "%zu: %s", i, out_text);
        cr_assert(json_equal(rf, json_object_get(json_object_get(c, "status"), "reservedFor")), "%zu: %s", i, out_text);
        cr_assert_str_eq(str_at(json_object_get(json_object_get(c, "status"), "allocation"), "allocationTimestamp"),
                         "2025-06-15T15:06:40Z");
    }
    cr_assert_str_eq(str_at(meta(item(out, 1)), "name"), "own");
    /* the shared claim: its reservation kept, the pod appended, the finalizer once */
    const json_t *sh = item(out, 2);
    cr_assert_str_eq(str_at(meta(sh), "name"), "shared");
    json_t *rf2 = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "resource", "pods", "name", "other", "uid", "other-uid",
                            "resource", "pods", "name", "trainer", "uid", "6a1e0f2c-pod");
    cr_assert(json_equal(rf2, json_object_get(json_object_get(sh, "status"), "reservedFor")), "%s", out_text);
    cr_assert(json_equal(fin, json_object_get(meta(sh), "finalizers")), "%s", out_text);
    cr_assert_str_eq(str_at(json_object_get(json_object_get(sh, "status"), "allocation"), "allocationTimestamp"),
                     "2025-06-15T15:06:40Z");
    /* the pod: the generated claim's name in status.resourceClaimStatuses */
    const json_t *pod = item(out, 3);
    cr_assert_str_eq(str_at(pod, "kind"), "Pod");
    json_t *rcs = json_pack("[{s:s, s:s}]", "name", "gpu", "resourceClaimName", gname);
    cr_assert(json_equal(rcs, json_object_get(json_object_get(pod, "status"), "resourceClaimStatuses")), "%s", out_text);
    json_decref(rcs);
    json_decref(rf);
    json_decref(rf2);

    /* --seed: the same names again; another seed, another name */
    char *first = strdup(out_text);
    cr_assert_eq(run("-f dralloc-cli-bind.yaml --node node-1 --pod team/trainer --seed 9 -o json"), 0);
    cr_assert_str_eq(out_text, first);
    cr_assert_eq(run("-f dralloc-cli-bind.yaml --node node-1 --pod team/trainer --seed 10 -o json"), 0);
    json_t *other = items_of(out_text);
    cr_assert(generated_from(str_at(meta(item(other, 0)), "name"), "trainer-gpu-"));
    cr_assert_str_neq(str_at(meta(item(other, 0)), "name"), gname);
    json_decref(other);

    /* a generated name never repeats a claim of the input */
    char extra[512];
    snprintf(extra, sizeof extra,
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s, namespace: team}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: none}}]}}\n",
             gname);
    write_bind_case("dralloc-cli-bind.yaml", extra);
    cr_assert_eq(run("-f dralloc-cli-bind.yaml --node node-1 --pod team/trainer --seed 9 -o json"), 0, "%s",
                 err_text);
    other = items_of(out_text);
    const char *again = str_at(meta(item(other, 0)), "name");
    cr_assert(generated_from(again, "trainer-gpu-") && strcmp(again, gname), "%s vs %s", again, gname);
    json_decref(other);

    /* allocationTimestamp only with both gates */
    write_bind_case("dralloc-cli-bind.yaml", "");
    cr_assert_eq(run("-f dralloc-cli-bind.yaml --node node-1 --pod team/trainer --seed 9 -o json "
                     "--feature-gates DRADeviceBindingConditions=false"),
                 0, "%s", err_text);
    other = items_of(out_text);
    for (size_t i = 0; i < 3; i++)
        cr_assert_null(json_object_get(json_object_get(json_object_get(item(other, i), "status"), "allocation"),
                                       "allocationTimestamp"),
                       "%s", out_text);
    json_decref(other);
    free(first);
    json_decref(fin);
    json_decref(out);
    remove("dralloc-cli-bind.yaml");
}

/* The controller cuts a long "<pod>-<entry>-" in proportion to fit 57 bytes (and
 * drops the trailing hyphen then); the API server appends 5 characters. The
 * implicit extended-resource claim is "<pod>-extended-resources-" + 5, owned by the
 * pod as controller without blockOwnerDeletion. A pod without metadata.uid gets one
 * (as the API server gives every pod), the same in every reference. */
Test(cli, generated_names_are_cut_as_the_controller_cuts_them) {
    char b[8192];
    snprintf(b, sizeof b, "%s", class_and_node);
    append_slice(b, sizeof b, 2);
    const char *pod = "p0123456789012345678901234567890123456789012345678"; /* 50 */
    const char *entry = "e012345678901234567";                               /* 19 */
    snprintf(b + strlen(b), sizeof b - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: default}\n"
             "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s}\n"
             "spec: {containers: [{name: c}], resourceClaims: [{name: %s, resourceClaimTemplateName: t}]}\n",
             pod, entry);
    write_file("dralloc-cli-long.yaml", b);
    cr_assert_eq(run("-f dralloc-cli-long.yaml --node node-1 --pod p0123456789012345678901234567890123456789012345678 "
                     "-o json"),
                 0, "%s", err_text);
    json_t *out = items_of(out_text);
    /* 50 + 19 + 2 = 71 > 57: pod[:50*57/71 = 40] + "-" + entry[:19*57/71 = 15] */
    char base[128];
    snprintf(base, sizeof base, "%.40s-%.15s", pod, entry);
    const json_t *m = meta(item(out, 0));
    cr_assert_str_eq(str_at(m, "generateName"), base);
    cr_assert(generated_from(str_at(m, "name"), base), "%s", str_at(m, "name"));
    cr_assert_str_eq(str_at(m, "namespace"), "default");
    const char *uid = str_at(json_array_get(json_object_get(m, "ownerReferences"), 0), "uid");
    cr_assert(uid && strlen(uid) == 36 && uid[14] == '4', "a version-4 UUID: %s", uid);
    cr_assert_str_eq(str_at(json_array_get(json_object_get(json_object_get(item(out, 0), "status"), "reservedFor"), 0),
                            "uid"),
                     uid);
    cr_assert_str_eq(str_at(meta(item(out, 1)), "uid"), uid);
    json_decref(out);

    /* the implicit claim of extended resources */
    snprintf(b, sizeof b,
             "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
             "spec: {selectors: [{cel: {expression: 'true'}}], extendedResourceName: example.com/gpu}\n"
             "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n");
    append_slice(b, sizeof b, 2);
    snprintf(b + strlen(b), sizeof b - strlen(b),
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: default, uid: x-uid}\n"
             "spec: {containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]}\n");
    write_file("dralloc-cli-long.yaml", b);
    cr_assert_eq(run("-f dralloc-cli-long.yaml --node node-1 --pod x -o json"), 0, "%s", err_text);
    out = items_of(out_text);
    m = meta(item(out, 0));
    cr_assert(generated_from(str_at(m, "name"), "x-extended-resources-"), "%s", out_text);
    json_t *owner = json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1", "kind", "Pod", "name", "x", "uid",
                              "x-uid", "controller", 1);
    cr_assert(json_equal(owner, json_object_get(m, "ownerReferences")), "%s", out_text);
    json_decref(owner);
    const json_t *ers = json_object_get(json_object_get(item(out, 1), "status"), "extendedResourceClaimStatus");
    cr_assert_str_eq(str_at(ers, "resourceClaimName"), str_at(m, "name"));
    json_decref(out);
    remove("dralloc-cli-long.yaml");
}

/* Without --pod, each pod's claims are bound to it the same way: a template's claim
 * gets a generated name and the pod as owner, a claim two pods share is reserved for
 * both (the first pod allocates it). A claim no pod uses is allocated bare (the
 * scheduler binds claims only for pods). */
Test(cli, file_mode_binds_each_pods_claims) {
    char b[8192];
    snprintf(b, sizeof b, "%s", class_and_node);
    append_slice(b, sizeof b, 4);
    snprintf(b + strlen(b), sizeof b - strlen(b),
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: default}\n"
             "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n"
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: default}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: lone, namespace: default}\n"
             "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: default, uid: a-uid}\n"
             "spec: {containers: [{name: c}], resourceClaims: [{name: s, resourceClaimName: shared}, "
             "{name: mine, resourceClaimTemplateName: t}]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: default, uid: b-uid}\n"
             "spec: {containers: [{name: c}], resourceClaims: [{name: s, resourceClaimName: shared}]}\n");
    write_file("dralloc-cli-files.yaml", b);
    cr_assert_eq(run("-f dralloc-cli-files.yaml --node node-1 --seed 1 -o json"), 0, "%s", err_text);
    json_t *out = items_of(out_text);
    cr_assert_eq(json_array_size(json_object_get(out, "items")), 3, "%s", out_text);
    const json_t *sh = item(out, 0), *mine = item(out, 1), *lone = item(out, 2);
    cr_assert_str_eq(str_at(meta(sh), "name"), "shared");
    json_t *rf = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "resource", "pods", "name", "a", "uid", "a-uid",
                           "resource", "pods", "name", "b", "uid", "b-uid");
    cr_assert(json_equal(rf, json_object_get(json_object_get(sh, "status"), "reservedFor")), "%s", out_text);
    json_decref(rf);
    cr_assert(generated_from(str_at(meta(mine), "name"), "a-mine-"), "%s", out_text);
    cr_assert_str_eq(str_at(json_array_get(json_object_get(meta(mine), "ownerReferences"), 0), "uid"), "a-uid");
    cr_assert_str_eq(str_at(meta(lone), "name"), "lone");
    cr_assert_null(json_object_get(meta(lone), "finalizers"), "%s", out_text);
    cr_assert_null(json_object_get(json_object_get(lone, "status"), "reservedFor"), "%s", out_text);
    json_decref(out);
    remove("dralloc-cli-files.yaml");
}

/* Every scalar -o yaml prints must read back as the string it is: besides the
 * words and numbers of yaml_output_reads_back, U+FFFE and U+FFFF (not printable in
 * YAML: a reader rejects the whole document unless they are escaped). Read back with
 * the project's reader and, when installed, PyYAML (YAML 1.1, as go-yaml v2). Keys
 * print in go-yaml's order, as kubectl's printer sorts them (k9 before k10). */
static const char *const nasty[] = {
    "TRUE", "True", "NO", "yes", "On", "off", "y", "N", "NULL", "Null", "~", "<<", "=", "0o10", "1_000", "0x1F", ".inf",
    "-.Inf", ".NaN", "1e3", "+1", "-1", "010", "0b101", "1:20", "2001-12-14", "a\xe2\x80\xa8" "b", "a\xe2\x80\xa9" "b",
    "x\xc2\x85y", "del\x7f", "\x01", "tab\there", "nl\nx", "- x", "? x", ": x", "a: b", "a #b", "#c", "&a", "*a", "!t",
    "|", "> x", "'q", "\"q", "%p", "@a", "`b", " lead", "trail ", "", "\xef\xbb\xbf" "bom", "\xef\xbf\xbe", "\xef\xbf\xbf",
    "nb\xc2\xa0sp", "---", "...", "[x", "{x", "x:", "\\", "\xe2\x80\xa8"};

Test(cli, yaml_output_reads_back_with_pyyaml_too) {
    json_t *ann = json_object();
    char k[16];
    for (size_t i = 0; i < ARRAY_SIZE(nasty); i++) {
        snprintf(k, sizeof k, "k%zu", i);
        json_object_set_new(ann, k, json_string(nasty[i]));
        json_object_set_new(ann, nasty[i][0] ? nasty[i] : "empty", json_string("key"));
    }
    json_t *claim = json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:{s:[{s:s, s:{s:s}}]}}}", "apiVersion", "resource.k8s.io/v1",
                              "kind", "ResourceClaim", "metadata", "name", "c", "annotations", ann, "spec", "devices",
                              "requests", "name", "r", "exactly", "deviceClassName", "gpu");
    json_t *list = json_pack("{s:s, s:s, s:[o, {s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}]}", "apiVersion", "v1", "kind",
                             "List", "items", claim, "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass", "metadata",
                             "name", "gpu", "spec", "selectors", "cel", "expression", "true");
    cr_assert(json_dump_file(list, "dralloc-cli-nasty.json", 0) == 0);
    json_decref(list);
    char b[4096];
    snprintf(b, sizeof b, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
                          "  driver: gpu.example.com\n  nodeName: node-1\n"
                          "  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n  devices:\n  - name: gpu-0\n");
    write_file("dralloc-cli-nasty.yaml", b);
    const char *args = "-f dralloc-cli-nasty.json -f dralloc-cli-nasty.yaml --node node-1";
    snprintf(b, sizeof b, "%s -o json", args);
    cr_assert_eq(run(b), 0, "%s", err_text);
    json_t *want = items_of(out_text);
    snprintf(b, sizeof b, "%s -o yaml", args);
    cr_assert_eq(run(b), 0, "%s", err_text);
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(out_text, strlen(out_text), "out.yaml", &e);
    cr_assert_not_null(docs, "%s\n%s", e.msg, out_text);
    cr_assert(json_equal(want, json_array_get(docs, 0)), "%s", out_text);
    /* kubectl's key order: the List's items before kind; k9 before k10 */
    const char *items = strstr(out_text, "\nitems:"), *kind = strstr(out_text, "\nkind: List");
    cr_assert(items && kind && items < kind, "%s", out_text);
    const char *k9 = strstr(out_text, "\n      k9:"), *k10 = strstr(out_text, "\n      k10:");
    cr_assert(k9 && k10 && k9 < k10, "%s", out_text);
    json_decref(docs);
    FILE *f = fopen("dralloc-cli-nasty.out.yaml", "w");
    fputs(out_text, f);
    fclose(f);
    f = fopen("dralloc-cli-nasty.out.json", "w");
    json_dumpf(want, f, 0);
    fclose(f);
    if (system("python3 -c 'import yaml' 2>/dev/null") == 0) {
        int st = system("python3 -c 'import json, sys, yaml\n"
                        "y = yaml.safe_load(open(\"dralloc-cli-nasty.out.yaml\", encoding=\"utf-8\").read())\n"
                        "j = json.load(open(\"dralloc-cli-nasty.out.json\", encoding=\"utf-8\"))\n"
                        "sys.exit(0 if y == j else 1)'");
        cr_assert_eq(st, 0, "PyYAML reads the YAML differently:\n%s", out_text);
    } else {
        cr_log_warn("python3-yaml not installed: the PyYAML read-back is skipped");
    }
    json_decref(want);
    remove("dralloc-cli-nasty.json");
    remove("dralloc-cli-nasty.yaml");
    remove("dralloc-cli-nasty.out.yaml");
    remove("dralloc-cli-nasty.out.json");
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* --pod: the pod's reason names the pod and the cause (the holder of the GPU in use),
 * then the per-request explanation, each claim once. */
Test(cli, pod_failure_explains_each_claim_once) {
    write_file("dralloc-cli-podwhy.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n  - name: gpu-1\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: holder, namespace: team}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"
               "status: {allocation: {devices: {results: [{request: r, driver: gpu.example.com, pool: node-1, "
               "device: gpu-1}]}}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: one, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: two, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}]}}\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
               "spec: {containers: [{name: c}], resourceClaims: [{name: a, resourceClaimName: one}, "
               "{name: b, resourceClaimName: two}]}\n");
    cr_assert_eq(run("-f dralloc-cli-podwhy.yaml --node node-1 --pod default/p"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "Pod default/p: does not fit node node-1: cannot allocate all claims: claim default/two "
                               "request r: wants 2, 2 match gpu, 1 free: 1 held by claim team/holder\n"),
              "%s", err_text);
    cr_assert_eq(count_of(err_text, "  claim default/one, request r: wants 1, 2 device(s) match class gpu and the "
                                    "selectors, 1 of them free\n    1 held by claim team/holder\n"),
                 1, "%s", err_text);
    cr_assert_eq(count_of(err_text, "  claim default/two, request r: wants 2, 2 device(s) match class gpu and the "
                                    "selectors, 1 of them free\n    1 held by claim team/holder\n"),
                 1, "%s", err_text);
    cr_assert(strstr(err_text, "  the requests want 3 device(s) together") == NULL, "%s", err_text);
    remove("dralloc-cli-podwhy.yaml");
}

/* A claim allocated earlier in the same run holds its device: the next claim's
 * explanation names it. */
Test(cli, explanation_names_a_claim_allocated_in_the_run) {
    write_file("dralloc-cli-held.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 1}\n"
               "  devices:\n  - name: gpu-0\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: first, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: second, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n");
    cr_assert_eq(run("-f dralloc-cli-held.yaml --node node-1 -o json"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "  claim default/second, request r: wants 1, 1 device(s) match class gpu and the selectors, "
                               "0 of them free\n    1 held by claim default/first\n"),
              "%s", err_text);
    remove("dralloc-cli-held.yaml");
}

/* Kubernetes' per-node error, then which pool is invalid and why. */
Test(cli, invalid_pool_is_named) {
    write_file("dralloc-cli-invalid.yaml",
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
               "spec: {selectors: [{cel: {expression: 'true'}}]}\n---\n"
               "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: a}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 2}\n"
               "  devices:\n  - name: gpu-0\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: b}\nspec:\n"
               "  driver: gpu.example.com\n  nodeName: node-1\n  pool: {name: node-1, generation: 1, resourceSliceCount: 2}\n"
               "  devices:\n  - name: gpu-0\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
               "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}]}}\n");
    cr_assert_eq(run("-f dralloc-cli-invalid.yaml --node node-1"), 1, "%s", err_text);
    cr_assert(strstr(err_text, "ResourceClaim default/c: cannot be allocated on node node-1: invalid resource pools were "
                               "encountered\n"),
              "%s", err_text);
    cr_assert(strstr(err_text, "  pool gpu.example.com/node-1: invalid: duplicate device name gpu-0, its 2 device(s) are "
                               "not used\n"),
              "%s", err_text);
    remove("dralloc-cli-invalid.yaml");
}

/* The API server's defaulting of a Node (SetDefaults_NodeStatus, pkg/apis/core/v1/
 * defaults.go: status.allocatable = status.capacity when allocatable is absent) and
 * kubectl's strictness for Pods: real driver objects (issue #21) list extended
 * resources only under capacity. */
Test(cli, node_allocatable_defaults_from_capacity) {
    write_file("dralloc-cli-cap.yaml",
               "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
               "status:\n  capacity: {example.com/gpu: \"2\", cpu: \"4\", memory: 8Gi, pods: \"110\"}\n---\n"
               "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
               "spec:\n  extendedResourceName: example.com/gpu\n"
               "  selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: dp, namespace: ml}\n"
               "spec:\n  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: \"2\"}}}]\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: ml}\n"
               "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"8\"}}}]\n");
    /* the device plugin's 2 GPUs serve the pod: no DRA claim, as kube-scheduler decides */
    cr_assert_eq(run("-f dralloc-cli-cap.yaml --node n1 --pod ml/dp"), 0, "%s%s", out_text, err_text);
    cr_assert(strstr(out_text, "device") == NULL || strstr(out_text, "example.com/gpu"), "%s", out_text);
    cr_assert(strstr(err_text, "fits node n1"), "%s", err_text);
    /* 8 CPUs do not fit a node whose capacity is 4 */
    cr_assert_eq(run("-f dralloc-cli-cap.yaml --node n1 --pod ml/big"), 1, "%s%s", out_text, err_text);
    cr_assert(strstr(out_text, "Insufficient cpu") || strstr(err_text, "Insufficient cpu"), "%s%s", out_text, err_text);
    remove("dralloc-cli-cap.yaml");
}

Test(cli, pod_and_node_unknown_fields_as_kubectl_reports_them) {
    write_file("dralloc-cli-podtypo.yaml",
               "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {unschedulabel: true}\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: ml}\n"
               "spec:\n  resourceclaims: [{name: g, resourceClaimTemplateName: t}]\n"
               "  containers: [{name: c, image: x, resources: {limit: {cpu: \"1\"}}}]\n");
    cr_assert_eq(run("-f dralloc-cli-podtypo.yaml --node n1 --pod ml/p2"), 0, "%s%s", out_text, err_text);
    cr_assert(strstr(err_text, "Warning: Pod ml/p2: unknown field \"spec.resourceclaims\""), "%s", err_text);
    cr_assert(strstr(err_text, "Warning: Pod ml/p2: unknown field \"spec.containers[0].resources.limit\""), "%s", err_text);
    cr_assert(strstr(err_text, "Warning: Node n1: unknown field \"spec.unschedulabel\""), "%s", err_text);
    cr_assert_eq(run("-f dralloc-cli-podtypo.yaml --node n1 --pod ml/p2 --strict"), 2);
    cr_assert(strstr(err_text, "unknown field") && strstr(err_text, "(strict)"), "%s", err_text);
    remove("dralloc-cli-podtypo.yaml");
}
