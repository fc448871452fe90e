/* live_why.c — `dralloc why` and `kubectl dra why` against the fake kube-apiserver:
 * the pod read from the server (GET pods/NAME: the fake lists no pods), decided on
 * every node the server lists. The cluster (live_test.c main): NODES nodes of 8 GPUs,
 * the even ones with 7 held by a claim busy-NN.
 *   - ml/why-eight wants 8 GPUs (claim why-eight): it fits every odd node (exit 0);
 *     the even nodes fail for one cause, held by claims.
 *   - ml/why-nine wants 9: no node has 9 (exit 1, unfittable); closest are the odd
 *     nodes (8 free: 1 missing); the count by cause: NODES/2 "too few free devices",
 *     NODES/2 "held by claims".
 * As kubectl runs a plugin: the binary linked as kubectl-dra, the kubeconfig from
 * KUBECONFIG, the namespace from -n or else the context's; `--context` alone picks a
 * context of that kubeconfig; `kubectl dra capacity` with no flag reads that cluster. */
#include "live.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static json_t *want_claim(const char *name, int count) {
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace", "ml", "uid",
                     name, "spec", "devices", "requests", "name", "gpus", "exactly", "deviceClassName", "gpu.example.com",
                     "count", count);
}

static json_t *pending_pod(const char *name) {
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}], s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind",
                     "Pod", "metadata", "name", name, "namespace", "ml", "uid", name, "spec", "containers", "name", "main",
                     "image", "busybox", "resourceClaims", "name", "gpus", "resourceClaimName", name);
}

/* Runs cmd; its stdout as JSON (NULL when not JSON), *rc the exit status. */
static json_t *run_json(const char *cmd, int *rc) {
    FILE *p = popen(cmd, "r");
    if (!p) return *rc = -1, NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (int c; (c = fgetc(p)) != EOF;) {
        if (n + 1 >= cap) buf = realloc(buf, cap = cap ? cap * 2 : 4096);
        if (!buf) abort();
        buf[n++] = (char)c;
    }
    int st = pclose(p);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    json_t *j = buf ? json_loadb(buf, n, 0, NULL) : NULL;
    free(buf);
    return j;
}

static size_t cause_nodes(const json_t *out, const char *cause) {
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(out, "causes"), i, c) if (!strcmp(json_string_value(json_object_get(c, "cause")), cause)) return (
        size_t)json_integer_value(json_object_get(c, "nodes"));
    return 0;
}

void live_why(fake_api *f, const char *dralloc, const char *tokfile, int nodes) {
    fake_put(f, "resourceclaims", want_claim("why-eight", 8));
    fake_put(f, "resourceclaims", want_claim("why-nine", 9));
    fake_put_pod(f, pending_pod("why-eight"));
    fake_put_pod(f, pending_pod("why-nine"));
    char cmd[2048];
    int rc;
    snprintf(cmd, sizeof cmd, "%s why ml/why-eight --server http://127.0.0.1:%d --token-file %s -o json", dralloc,
             fake_port(f), tokfile);
    json_t *out = run_json(cmd, &rc);
    CHECK(rc == 0 && out, "why ml/why-eight: exit %d (want 0: it fits the odd nodes)", rc);
    CHECK(json_integer_value(json_object_get(out, "fit")) == nodes / 2, "why ml/why-eight: fits %lld nodes, want %d",
          (long long)json_integer_value(json_object_get(out, "fit")), nodes / 2);
    CHECK(cause_nodes(out, "devices of class gpu.example.com held by claims") == (size_t)(nodes + 1) / 2,
          "why ml/why-eight: the even nodes fail as held by claims: %s",
          json_string_value(json_object_get(out, "summary")));
    json_decref(out);

    /* kubectl dra why: a kubeconfig from KUBECONFIG, the namespace from -n */
    char dir[] = "/tmp/dralloc-why-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char link[512], cfg[512];
    snprintf(link, sizeof link, "%s/kubectl-dra", dir);
    snprintf(cfg, sizeof cfg, "%s/config", dir);
    char *abs = realpath(dralloc, NULL);   /* the link is read from another directory */
    CHECK(abs && symlink(abs, link) == 0, "symlink kubectl-dra");
    free(abs);
    FILE *c = fopen(cfg, "w");
    if (c) {
        fprintf(c,
                "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n    server: "
                "http://127.0.0.1:%d\nusers:\n- name: u\n  user:\n    tokenFile: %s\ncontexts:\n- name: fake\n  context:\n"
                "    cluster: fake\n    user: u\n- name: team-ml\n  context:\n    cluster: fake\n    user: u\n"
                "    namespace: ml\n",
                fake_port(f), tokfile);
        fclose(c);
    }
    snprintf(cmd, sizeof cmd, "KUBECONFIG=%s %s why why-nine -n ml -o json", cfg, link);
    out = run_json(cmd, &rc);
    CHECK(rc == 1 && out, "kubectl dra why why-nine -n ml: exit %d (want 1: no node has 9 GPUs)", rc);
    CHECK(json_is_true(json_object_get(out, "unfittable")), "kubectl dra why why-nine: not unfittable");
    const json_t *first = json_array_get(json_object_get(out, "closest"), 0);
    CHECK(first && json_integer_value(json_object_get(first, "missing")) == 1,
          "kubectl dra why why-nine: the closest node lacks %lld devices, want 1 (an odd node, 8 free)",
          (long long)json_integer_value(json_object_get(first, "missing")));
    CHECK(cause_nodes(out, "too few free devices of class gpu.example.com") == (size_t)nodes / 2,
          "kubectl dra why why-nine: %s", json_string_value(json_object_get(out, "summary")));
    json_decref(out);
    /* the text form names the pod and the cause count */
    snprintf(cmd, sizeof cmd, "KUBECONFIG=%s %s why why-nine -n ml | grep -c 'nodes are available'", cfg, link);
    FILE *p = popen(cmd, "r");
    char line[64] = "";
    if (p) {
        if (!fgets(line, sizeof line, p)) line[0] = '\0';
        pclose(p);
    }
    CHECK(atoi(line) == 1, "kubectl dra why (text): no count by cause");
    /* kubectl's habits: --context alone (the kubeconfig still from KUBECONFIG), and no
     * -n: the context's namespace (team-ml: ml), not "default" */
    snprintf(cmd, sizeof cmd, "KUBECONFIG=%s %s why why-nine --context team-ml -o json", cfg, link);
    out = run_json(cmd, &rc);
    CHECK(rc == 1 && out && json_is_true(json_object_get(out, "unfittable")),
          "kubectl dra why why-nine --context team-ml (namespace ml from the context): exit %d", rc);
    json_decref(out);
    snprintf(cmd, sizeof cmd, "KUBECONFIG=%s %s capacity --context team-ml -o json", cfg, link);
    out = run_json(cmd, &rc);
    CHECK(rc == 0 && json_array_size(json_object_get(out, "nodes")) == (size_t)nodes,
          "kubectl dra capacity --context team-ml: exit %d (the kubeconfig of KUBECONFIG)", rc);
    json_decref(out);
    /* kubectl dra capacity: no flag, the cluster of KUBECONFIG */
    snprintf(cmd, sizeof cmd, "KUBECONFIG=%s %s capacity -o json", cfg, link);
    out = run_json(cmd, &rc);
    CHECK(rc == 0 && json_array_size(json_object_get(out, "nodes")) == (size_t)nodes,
          "kubectl dra capacity: exit %d, %zu nodes (want %d)", rc, json_array_size(json_object_get(out, "nodes")), nodes);
    json_decref(out);
    unlink(link);
    unlink(cfg);
    rmdir(dir);
}
