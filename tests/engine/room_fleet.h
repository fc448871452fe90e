/* room_fleet.h — small fleets for the make-room tests (test_preempt.c,
 * test_preempt_brute.c), built as JSON objects: GPU nodes (whole GPUs, or MIG-like
 * GPUs whose 7 slices are shared counters), pods bound with allocated claims (one
 * claim each, or one claim reserved by several pods), pending pods asking for GPUs,
 * PriorityClasses and PodDisruptionBudgets; and a room over them. Header-only. */
#ifndef DRALLOC_TESTS_ENGINE_ROOM_FLEET_H
#define DRALLOC_TESTS_ENGINE_ROOM_FLEET_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/preempt.h"

static inline void rf_add(json_t *items, json_t *o) {
    cr_assert_not_null(o, "bad json_pack in a fleet");
    json_array_append_new(items, o);
}

/* DeviceClasses gpu (whole GPUs: attribute profile "full"), mig-1g and mig-7g. */
static inline void rf_classes(json_t *items) {
    const char *cls[][2] = {{"gpu", "full"}, {"mig-1g", "1g"}, {"mig-7g", "7g"}};
    for (int i = 0; i < 3; i++) {
        char expr[200];
        snprintf(expr, sizeof expr, "device.attributes[\"gpu.example.com\"].profile == \"%s\"", cls[i][1]);
        rf_add(items, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1", "kind",
                                "DeviceClass", "metadata", "name", cls[i][0], "spec", "selectors", "cel", "expression",
                                expr));
    }
}

static inline json_t *rf_device(const char *name, const char *profile) {
    return json_pack("{s:s, s:{s:{s:s}}}", "name", name, "attributes", "profile", "string", profile);
}

/* A node with n whole GPUs gpu-0..n-1 (pool = node name). */
static inline void rf_node(json_t *items, const char *node, int n) {
    rf_add(items, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", node));
    json_t *devs = json_array();
    for (int i = 0; i < n; i++) {
        char d[32];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(devs, rf_device(d, "full"));
    }
    char sl[300];
    snprintf(sl, sizeof sl, "%s-gpus", node);
    rf_add(items, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion",
                            "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", sl, "spec", "driver",
                            "gpu.example.com", "nodeName", node, "pool", "name", node, "generation", 1,
                            "resourceSliceCount", 1, "devices", devs));
}

/* A node with n MIG-like GPUs: counter set gpu-<i> of 7 slices each; devices
 * gpu-<i>-7g (all 7) and gpu-<i>-1g-<j> (one each, j = 0..6). */
static inline void rf_node_mig(json_t *items, const char *node, int n) {
    rf_add(items, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", node));
    json_t *devs = json_array(), *sets = json_array();
    for (int i = 0; i < n; i++) {
        char set[32], d[48];
        snprintf(set, sizeof set, "gpu-%d", i);
        json_array_append_new(sets, json_pack("{s:s, s:{s:{s:s}}}", "name", set, "counters", "slices", "value", "7"));
        for (int j = -1; j < 7; j++) {
            if (j < 0) snprintf(d, sizeof d, "gpu-%d-7g", i);
            else snprintf(d, sizeof d, "gpu-%d-1g-%d", i, j);
            json_t *dev = rf_device(d, j < 0 ? "7g" : "1g");
            json_object_set_new(dev, "consumesCounters",
                                json_pack("[{s:s, s:{s:{s:s}}}]", "counterSet", set, "counters", "slices", "value",
                                          j < 0 ? "7" : "1"));
            json_array_append_new(devs, dev);
        }
    }
    /* resource.k8s.io/v1: counters and devices in slices of their own */
    char sl[300];
    snprintf(sl, sizeof sl, "%s-counters", node);
    rf_add(items, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion",
                            "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", sl, "spec", "driver",
                            "gpu.example.com", "nodeName", node, "pool", "name", node, "generation", 1,
                            "resourceSliceCount", 2, "sharedCounters", sets));
    snprintf(sl, sizeof sl, "%s-gpus", node);
    rf_add(items, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion",
                            "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", sl, "spec", "driver",
                            "gpu.example.com", "nodeName", node, "pool", "name", node, "generation", 1,
                            "resourceSliceCount", 2, "devices", devs));
}

/* A pod (pending when node is NULL) with priority prio and, when label is given,
 * labels {app: label}; started at second `start` of 2026-01-01 when bound. */
static inline json_t *rf_pod(const char *ns, const char *name, const char *node, int prio, const char *label,
                             int start, const char *claim) {
    json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s, s:s+}, s:{s:i, s:[{s:s, s:s}], s:[{s:s, s:{s:[{s:s}]}}]}}",
                          "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns, "uid", name,
                          "-uid", "spec", "priority", prio, "resourceClaims", "name", "gpus", "resourceClaimName",
                          claim, "containers", "name", "main", "resources", "claims", "name", "gpus");
    if (label) json_object_set_new(json_object_get(p, "metadata"), "labels", json_pack("{s:s}", "app", label));
    if (node) {
        json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
        char t[64];
        snprintf(t, sizeof t, "2026-01-01T%02d:%02d:%02dZ", start / 3600 % 24, start / 60 % 60, start % 60);
        json_object_set_new(p, "status", json_pack("{s:s, s:s}", "phase", "Running", "startTime", t));
    }
    return p;
}

/* A claim of count devices of class cls; allocated to devs[0..n) on node (pool =
 * node) and reserved for pods[0..npods) when devs is given. */
static inline json_t *rf_claim(const char *ns, const char *name, const char *cls, int count, const char *node,
                               const char *const *devs, int n, const char *const *pods, int npods) {
    json_t *c = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "apiVersion",
                          "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace", ns,
                          "spec", "devices", "requests", "name", "gpus", "exactly", "deviceClassName", cls, "count",
                          count);
    if (!devs) return c;
    json_t *res = json_array(), *rf = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpus", "driver", "gpu.example.com",
                                             "pool", node, "device", devs[i]));
    for (int i = 0; i < npods; i++) {
        char uid[300];
        snprintf(uid, sizeof uid, "%s-uid", pods[i]);
        json_array_append_new(rf, json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", pods[i], "uid", uid));
    }
    json_object_set_new(c, "status",
                        json_pack("{s:{s:{s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}, s:o}", "allocation", "devices",
                                  "results", res, "nodeSelector", "nodeSelectorTerms", "matchFields", "key",
                                  "metadata.name", "operator", "In", "values", node, "reservedFor", rf));
    return c;
}

/* A pod bound to node holding devs (its own claim <name>-c of class cls). */
static inline void rf_bound(json_t *items, const char *ns, const char *name, const char *node, int prio,
                            const char *label, int start, const char *cls, const char *const *devs, int n) {
    char claim[300];
    snprintf(claim, sizeof claim, "%s-c", name);
    rf_add(items, rf_pod(ns, name, node, prio, label, start, claim));
    rf_add(items, rf_claim(ns, claim, cls, n, node, devs, n, (const char *[]){name}, 1));
}

/* A pending pod asking for count devices of class cls (its own claim <name>-c). */
static inline void rf_pending(json_t *items, const char *ns, const char *name, int prio, const char *cls, int count) {
    char claim[300];
    snprintf(claim, sizeof claim, "%s-c", name);
    rf_add(items, rf_pod(ns, name, NULL, prio, NULL, 0, claim));
    rf_add(items, rf_claim(ns, claim, cls, count, NULL, NULL, 0, NULL, 0));
}

static inline void rf_pdb(json_t *items, const char *ns, const char *name, const char *app, int allowed) {
    rf_add(items, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:s}}}, s:{s:i}}", "apiVersion", "policy/v1", "kind",
                            "PodDisruptionBudget", "metadata", "name", name, "namespace", ns, "spec", "selector",
                            "matchLabels", "app", app, "status", "disruptionsAllowed", allowed));
}

/* A store of the items and a room over its snapshot. */
typedef struct rf_room {
    dra_store *st;
    dra_snapshot *s;
    dra_room *r;
} rf_room;

static inline rf_room rf_open(const json_t *items) {
    rf_room x = {0};
    dra_features f;
    dra_features_default(&f);
    dra_store_opts o = {.keep_text = true, .one_shot = true};
    x.st = dra_store_new_with(&f, &o);
    err e;
    err_clear(&e);
    json_t *dra = json_array();
    size_t i;
    json_t *obj;
    json_array_foreach((json_t *)items, i, obj) if (!dra_room_reads_only(json_string_value(json_object_get(obj, "kind"))))
        json_array_append(dra, obj);
    cr_assert(dra_store_apply_json(x.st, dra, &e), "%s", e.msg);
    json_decref(dra);
    x.s = dra_store_acquire(x.st);
    x.r = dra_room_new(x.s, items, &e);
    cr_assert_not_null(x.r, "%s", e.msg);
    return x;
}

static inline void rf_close(rf_room *x) {
    dra_room_free(x->r);
    dra_snapshot_release(x->s);
    dra_store_free(x->st);
}

/* Room for ns/name; asserts it is not an error. */
static inline json_t *rf_make(rf_room *x, const char *ns, const char *name, bool allow_pdb, dra_room_status *status) {
    err e;
    err_clear(&e);
    dra_room_opts o = {.allow_pdb_violations = allow_pdb, .list = UINT32_MAX};
    json_t *out = dra_room_make(x->r, ns, name, &o, status, &e);
    cr_assert_not_null(out, "%s", e.msg);
    return out;
}

/* "ns/name ns/name ..." of a candidate's victims. */
static inline const char *rf_victims(const json_t *cand, char *buf, size_t n) {
    buf[0] = '\0';
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(cand, "victims"), i, v) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s/%s", l ? " " : "", json_string_value(json_object_get(v, "namespace")),
                 json_string_value(json_object_get(v, "name")));
    }
    return buf;
}

#endif
