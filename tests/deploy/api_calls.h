/* api_calls.h — every kube-apiserver request `dralloc serve` makes, as RBAC sees it
 * (API group, resource, verb), and which mode makes it. One table for two tests:
 *   - tests/deploy/deploy_check.c: dralloc's roles in the rendered deploy/ overlays
 *     grant exactly these (advisor: the read ones; bind: read + bind);
 *   - tests/live/live_test.c: every request `dralloc serve --bind` sent to the fake
 *     API server maps to a row here (so the table cannot miss a call the code makes).
 * Where each comes from: extender/watch.c (list, watch of each kind) and
 * extender/bind.c (the pod, its binding and status, the claims, a PodGroup),
 * extender/requeue.c (its own claim, created and patched), extender/evict.c (opt-in
 * preemption: pods listed and patched, evictions, Events).
 * Leases are not here: the sidecar does not run --leader-elect (kube-scheduler's own
 * election picks the active replica; its Role is in deploy/base). */
#ifndef DRA_TESTS_DEPLOY_API_CALLS_H
#define DRA_TESTS_DEPLOY_API_CALLS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct api_call {
    const char *group, *resource, *verb;
    bool bind;          /* bind mode only */
    bool public_info;   /* a non-resource URL every user may GET (the API server's own
                         * system:public-info-viewer ClusterRole): no role of deploy/ grants it */
} api_call;

static const api_call API_CALLS[] = {
    /* watch.c: the cache */
    {"resource.k8s.io", "deviceclasses", "list", false, false},
    {"resource.k8s.io", "deviceclasses", "watch", false, false},
    {"resource.k8s.io", "resourceslices", "list", false, false},
    {"resource.k8s.io", "resourceslices", "watch", false, false},
    {"resource.k8s.io", "resourceclaims", "list", false, false},
    {"resource.k8s.io", "resourceclaims", "watch", false, false},
    {"resource.k8s.io", "devicetaintrules", "list", false, false},
    {"resource.k8s.io", "devicetaintrules", "watch", false, false},
    {"", "nodes", "list", false, false},
    {"", "nodes", "watch", false, false},
    {"scheduling.k8s.io", "podgroups", "list", false, false},
    {"scheduling.k8s.io", "podgroups", "watch", false, false},
    /* bind.c */
    {"", "pods", "get", true, false},
    {"", "pods/binding", "create", true, false},
    {"", "pods/status", "patch", true, false},
    {"resource.k8s.io", "resourceclaims", "get", true, false},
    {"resource.k8s.io", "resourceclaims", "create", true, false},
    {"resource.k8s.io", "resourceclaims", "update", true, false},
    {"resource.k8s.io", "resourceclaims", "delete", true, false},
    {"resource.k8s.io", "resourceclaims/status", "update", true, false},
    /* no request of its own: the API server (1.36+, DRAResourceClaimGranularStatusAuthorization)
     * authorizes the status PUT above a second time against this synthetic subresource when it
     * changes status.allocation or status.reservedFor, with the same verb */
    {"resource.k8s.io", "resourceclaims/binding", "update", true, false},
    {"scheduling.k8s.io", "podgroups", "get", true, false},
    /* requeue.c: the requeue claim's annotation (created with the create above) */
    {"resource.k8s.io", "resourceclaims", "patch", true, false},
    /* evict.c (--preemption=evict; granted with bind mode, used only when the flag is
     * given): the pods of candidate nodes and the held pods listed, the hold's label
     * and annotation patched on the preemptor, the victims evicted (policy/v1, which
     * enforces PodDisruptionBudgets), Events on both */
    {"", "pods", "list", true, false},
    {"", "pods", "patch", true, false},
    {"", "pods/eviction", "create", true, false},
    {"", "events", "create", true, false},
    /* cmd/serve.c: the release, for the feature gates' defaults (extender/gates.h) */
    {"", "/version", "get", false, true},
};

/* An HTTP request ("GET /apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/c",
 * "?watch" appended for a watch) as RBAC names it; /version as a non-resource URL
 * (group "", resource "/version", verb get); false for any other path that is no
 * resource. */
static inline bool api_call_of(const char *req, char *group, size_t ng, char *resource, size_t nr, const char **verb) {
    char method[16], path[1024];
    if (sscanf(req, "%15s %1023s", method, path) != 2) return false;
    bool watch = strstr(path, "?watch") != NULL;
    char *q = strchr(path, '?');
    if (q) *q = '\0';
    if (!strcmp(path, "/version") && !strcmp(method, "GET")) {
        snprintf(group, ng, "%s", "");
        snprintf(resource, nr, "%s", "/version");
        *verb = "get";
        return true;
    }
    const char *seg[16];
    int n = 0;
    for (char *t = strtok(path, "/"); t && n < 16; t = strtok(NULL, "/")) seg[n++] = t;
    int i;
    if (n >= 2 && !strcmp(seg[0], "api")) i = 2, snprintf(group, ng, "%s", "");
    else if (n >= 3 && !strcmp(seg[0], "apis")) i = 3, snprintf(group, ng, "%s", seg[1]);
    else return false;
    if (i + 1 < n && !strcmp(seg[i], "namespaces") && i + 2 < n) i += 2;   /* namespaced */
    if (i >= n) return false;
    const char *res = seg[i], *name = i + 1 < n ? seg[i + 1] : NULL, *sub = i + 2 < n ? seg[i + 2] : NULL;
    if (sub) snprintf(resource, nr, "%s/%s", res, sub);
    else snprintf(resource, nr, "%s", res);
    if (!strcmp(method, "GET")) *verb = watch ? "watch" : name ? "get" : "list";
    else if (!strcmp(method, "POST")) *verb = "create";
    else if (!strcmp(method, "PUT")) *verb = "update";
    else if (!strcmp(method, "PATCH")) *verb = "patch";
    else if (!strcmp(method, "DELETE")) *verb = name ? "delete" : "deletecollection";
    else return false;
    return true;
}

/* The table's row for (group, resource, verb), or NULL. */
static inline const api_call *api_call_find(const char *group, const char *resource, const char *verb) {
    for (size_t i = 0; i < sizeof API_CALLS / sizeof API_CALLS[0]; i++)
        if (!strcmp(API_CALLS[i].group, group) && !strcmp(API_CALLS[i].resource, resource) &&
            !strcmp(API_CALLS[i].verb, verb))
            return &API_CALLS[i];
    return NULL;
}

#endif
