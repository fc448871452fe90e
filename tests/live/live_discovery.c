/* live_discovery.c — the offline commands' one read of a cluster (ext_kube_snapshot)
 * finds each resource.k8s.io kind at the newest version the server serves, by
 * discovery (issue #40 item 7). A fake of its own: one node with two GPUs and a
 * DeviceTaintRule tainting gpu-0 NoSchedule, served
 *   - at resource.k8s.io/v1beta2 only (a 1.35 cluster; also what `make e2e`'s
 *     kube-apiserver does with --runtime-config=resource.k8s.io/v1/devicetaintrules=false):
 *     `dralloc capacity --server` reads the rule there, says so in a note, and
 *     counts gpu-0 blocked by taints (1 free, 1 blocked) — reading v1 alone, as before,
 *     counted both free;
 *   - not at all: the note says DeviceTaintRules are not served and what that means,
 *     and both GPUs count free (there is no rule to apply). */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs `dralloc capacity --server URL -o json`: the JSON, the exit status, stderr. */
static json_t *capacity_of(const char *dralloc, int port, int *rc, char *err_text, size_t n) {
    char errfile[] = "/tmp/dralloc-live-disc-XXXXXX";
    int fd = mkstemp(errfile);
    if (fd >= 0) close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s capacity --server http://127.0.0.1:%d -o json 2>%s", dralloc, port, errfile);
    FILE *p = popen(cmd, "r");
    json_t *j = p ? json_loadf(p, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    if (p) {
        char sink[256];
        while (fread(sink, 1, sizeof sink, p) > 0) {}
    }
    int st = p ? pclose(p) : -1;
    *rc = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    err_text[0] = '\0';
    FILE *ef = fopen(errfile, "r");
    if (ef) {
        size_t got = fread(err_text, 1, n - 1, ef);
        err_text[got] = '\0';
        fclose(ef);
    }
    unlink(errfile);
    return j;
}

static json_int_t node_count(const json_t *cap, const char *field, const char *blocked) {
    const json_t *node = json_array_get(json_object_get(cap, "nodes"), 0);
    const json_t *o = blocked ? json_object_get(node, "blocked") : node;
    return json_integer_value(json_object_get(o, blocked ? blocked : field));
}

void live_discovery(const char *dralloc) {
    fake_api *f = fake_start();
    fake_put(f, "deviceclasses", json_pack("{s:{s:s}, s:{s:[{s:{s:s}}]}}", "metadata", "name", "gpu.example.com", "spec",
                                            "selectors", "cel", "expression", "device.driver == 'gpu.example.com'"));
    fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", "node-0"));
    fake_put(f, "resourceslices", live_slice("node-0-gpus", "node-0", 2, "H100"));
    fake_put(f, "devicetaintrules",
             json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}}", "apiVersion",
                       "resource.k8s.io/v1beta2", "kind", "DeviceTaintRule", "metadata", "name", "gpu-0-maintenance",
                       "spec", "deviceSelector", "driver", "gpu.example.com", "pool", "node-0", "device", "gpu-0", "taint",
                       "key", "example.com/maintenance", "value", "firmware", "effect", "NoSchedule"));
    fake_serve_taint_rules_at(f, "v1beta2");

    int rc;
    char errs[4096];
    json_t *cap = capacity_of(dralloc, fake_port(f), &rc, errs, sizeof errs);
    CHECK(rc == 0 && cap, "discovery: capacity --server exit %d: %s", rc, errs);
    CHECK(node_count(cap, "free", NULL) == 1 && node_count(cap, NULL, "taints") == 1,
          "discovery: taint rules at v1beta2: node-0 %lld free, %lld blocked by taints; want 1 and 1 (%s)",
          (long long)node_count(cap, "free", NULL), (long long)node_count(cap, NULL, "taints"), errs);
    CHECK(strstr(errs, "note: DeviceTaintRule: read at resource.k8s.io/v1beta2"),
          "discovery: no note that DeviceTaintRules were read at v1beta2: '%s'", errs);
    json_decref(cap);

    fake_unserve(f, "devicetaintrules");
    cap = capacity_of(dralloc, fake_port(f), &rc, errs, sizeof errs);
    CHECK(rc == 0 && cap && node_count(cap, "free", NULL) == 2,
          "discovery: taint rules not served: exit %d, %lld free (want 2)", rc, (long long)node_count(cap, "free", NULL));
    CHECK(strstr(errs, "note: DeviceTaintRule: not served by this API server") &&
              strstr(errs, "without the taints such rules would put on them"),
          "discovery: no note that DeviceTaintRules are not served: '%s'", errs);
    json_decref(cap);
    fake_stop(f);
}
