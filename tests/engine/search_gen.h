/* search_gen.h — what the search tests share: running a case (the conformance
 * fixture shape: features, node, classes, slices, allocatedDevices, claims) with
 * control over the context the fixture runner hides (pruning off, a deadline, a
 * fixed shareID seed), an outcome reduced to a comparable text, and the JSON
 * builders the generated cases (random ones, the hardening table) are made of.
 * Header-only, like helpers.h. */
#ifndef DRALLOC_TESTS_ENGINE_SEARCH_GEN_H
#define DRALLOC_TESTS_ENGINE_SEARCH_GEN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/alloc/alloc_internal.h"
#include "engine/engine.h"
#include "tests/engine/helpers.h"

typedef struct sg_out {
    dra_alloc_status status;
    char *text;            /* malloc'd: allocations without shareIDs, or the error text */
    uint64_t steps;
    double ms;
} sg_out;

static inline bool sg_feature(const json_t *fs, const char *name) { return json_is_true(json_object_get(fs, name)); }

static inline void sg_add_all(th_store *ws, const json_t *c, const char *key, const char *kind) {
    const json_t *arr = json_object_get(c, key);
    for (size_t i = 0; json_is_array(arr) && i < json_array_size(arr); i++) {
        json_t *o = json_copy(json_array_get(arr, i));
        if (!json_object_get(o, "kind")) json_object_set_new(o, "kind", json_string(kind));
        err e;
        err_clear(&e);
        cr_assert(th_add(ws, o, &e), "%s: %s", key, e.msg);
        json_decref(o);
    }
}

/* Drops every "shareID" (pruned and unpruned searches draw different numbers of them). */
static inline void sg_strip_share_ids(json_t *j) {
    if (json_is_object(j)) {
        json_object_del(j, "shareID");
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v) sg_strip_share_ids(v);
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) sg_strip_share_ids(json_array_get(j, i));
    }
}

/* Runs the case with a device choice; no_prune turns the search's shortcuts off;
 * deadline_ms 0: none. */
static inline void sg_run_choice(const json_t *c, bool no_prune, uint64_t deadline_ms, dra_device_choice choice,
                                 sg_out *o) {
    const json_t *fs = json_object_get(c, "features");
    dra_features f = {
        .admin_access = sg_feature(fs, "adminAccess"),
        .prioritized_list = sg_feature(fs, "prioritizedList"),
        .partitionable = sg_feature(fs, "partitionableDevices"),
        .device_taints = sg_feature(fs, "deviceTaints"),
        .binding_conditions = sg_feature(fs, "deviceBindingConditions"),
        .consumable_capacity = sg_feature(fs, "consumableCapacity"),
        .list_type_attributes = sg_feature(fs, "listTypeAttributes"),
    };
    th_store *ws = th_new(false);
    json_t *node = json_copy(json_object_get(c, "node"));
    json_object_set_new(node, "kind", json_string("Node"));
    err e;
    err_clear(&e);
    cr_assert(th_add(ws, node, &e), "%s", e.msg);
    json_decref(node);
    sg_add_all(ws, c, "classes", "DeviceClass");
    sg_add_all(ws, c, "slices", "ResourceSlice");
    sg_add_all(ws, c, "claims", "ResourceClaim");
    const dra_world *w = th_world(ws);
    dra_allocated *st = dra_allocated_new(w);
    const json_t *ad = json_object_get(c, "allocatedDevices");
    for (size_t i = 0; json_is_array(ad) && i < json_array_size(ad); i++)
        cr_assert(dra_allocated_add_device(st, json_string_value(json_array_get(ad, i)), &e), "%s", e.msg);
    dra_nodeview *v = dra_nodeview_new(w, dra_world_node(w, 0), &f, &e);
    cr_assert_not_null(v, "%s", e.msg);
    size_t n = dra_world_nclaims(w);
    const dra_claim **claims = calloc(n ? n : 1, sizeof *claims);
    for (size_t i = 0; i < n; i++) claims[i] = dra_world_claim(w, i);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(x, choice);
    x->no_prune = no_prune;
    dra_alloc_ctx_set_seed(x, 1);
    uint64_t t0 = dra_monotonic_ns();
    if (deadline_ms) dra_alloc_ctx_set_deadline(x, t0 + deadline_ms * 1000000ull, NULL);
    dra_alloc_result *res;
    err_clear(&e);
    o->status = dra_allocate(x, v, st, claims, n, &res, &e);
    o->ms = (double)(dra_monotonic_ns() - t0) / 1e6;
    o->steps = dra_alloc_ctx_steps(x);
    if (o->status == DRA_ALLOC_OK) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(arr, dra_alloc_result_to_json(&res[i]));
        sg_strip_share_ids(arr);
        o->text = json_dumps(arr, JSON_SORT_KEYS | JSON_COMPACT);
        json_decref(arr);
    } else {
        o->text = strdup(o->status == DRA_ALLOC_UNSAT ? "unsatisfiable" : e.msg);
    }
    if (o->status == DRA_ALLOC_UNSAT || o->status == DRA_ALLOC_NODE_ERROR) {
        /* every failure can be explained (explain.c walks the state the search left) */
        char why[8192];
        cr_assert_gt(dra_alloc_explain(x, why, sizeof why), 0);
    }
    dra_alloc_ctx_free(x);
    free(claims);
    dra_nodeview_free(v);
    dra_allocated_free(st);
    th_free(ws);
}

/* sg_run_choice, first-fit. */
static inline void sg_run(const json_t *c, bool no_prune, uint64_t deadline_ms, sg_out *o) {
    sg_run_choice(c, no_prune, deadline_ms, DRA_CHOICE_FIRST_FIT, o);
}

/* The device names of claim ci's results, space-separated ("" when none). */
static inline void sg_devices(const sg_out *o, size_t ci, char *buf, size_t n) {
    buf[0] = '\0';
    json_t *arr = json_loads(o->text, 0, NULL);
    json_t *res = json_object_get(json_object_get(json_array_get(arr, ci), "devices"), "results");
    size_t off = 0;
    for (size_t i = 0; i < json_array_size(res) && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? " " : "",
                                json_string_value(json_object_get(json_array_get(res, i), "device")));
    json_decref(arr);
}

/* ---- builders ------------------------------------------------------------------ */

/* A case on node-1 with the given features (a JSON object text) and the class
 * "gpu" (driver gpu.example.com) and "nic" (driver nic.example.com). */
static inline json_t *sg_case(const char *features) {
    json_t *c = json_object();
    json_object_set_new(c, "features", json_loads(features, 0, NULL));
    json_object_set_new(c, "node", json_pack("{s:{s:s}}", "metadata", "name", "node-1"));
    json_t *classes = json_array();
    const char *drv[] = {"gpu", "nic"};
    for (int i = 0; i < 2; i++) {
        char expr[128];
        snprintf(expr, sizeof expr, "device.driver == \"%s.example.com\"", drv[i]);
        json_array_append_new(classes, json_pack("{s:{s:s},s:{s:[{s:{s:s}}]}}", "metadata", "name", drv[i], "spec",
                                                 "selectors", "cel", "expression", expr));
    }
    json_object_set_new(c, "classes", classes);
    json_object_set_new(c, "slices", json_array());
    json_object_set_new(c, "claims", json_array());
    return c;
}

/* Adds a slice (its own pool) of the driver "<kind>.example.com" for node-1 and
 * returns its device list, for the caller to fill. */
static inline json_t *sg_slice(json_t *c, const char *kind, const char *pool) {
    char drv[64];
    snprintf(drv, sizeof drv, "%s.example.com", kind);
    json_t *devs = json_array();
    json_t *s = json_pack("{s:{s:s},s:{s:s,s:{s:s,s:i,s:i},s:s,s:o}}", "metadata", "name", pool, "spec", "driver", drv,
                          "pool", "name", pool, "resourceSliceCount", 1, "generation", 1, "nodeName", "node-1",
                          "devices", devs);
    json_array_append_new(json_object_get(c, "slices"), s);
    return devs;
}

/* A device {name, attributes: {}} appended to devs; returns it for more fields. */
static inline json_t *sg_device(json_t *devs, const char *fmt, int i) {
    char name[64];
    snprintf(name, sizeof name, fmt, i);
    json_t *d = json_pack("{s:s,s:{}}", "name", name, "attributes");
    json_array_append_new(devs, d);
    return d;
}

static inline void sg_attr_int(json_t *dev, const char *name, long long v) {
    json_object_set_new(json_object_get(dev, "attributes"), name, json_pack("{s:I}", "int", (json_int_t)v));
}

/* A claim with no requests yet; returns its request list. */
static inline json_t *sg_claim(json_t *c, const char *name, json_t **constraints) {
    json_t *reqs = json_array(), *cons = json_array();
    json_t *cl = json_pack("{s:{s:s,s:s},s:{s:{s:o,s:o}}}", "metadata", "name", name, "namespace", "default", "spec",
                           "devices", "requests", reqs, "constraints", cons);
    json_array_append_new(json_object_get(c, "claims"), cl);
    if (constraints) *constraints = cons;
    return reqs;
}

/* An ExactCount request (or All when count < 0) of a class; returns its `exactly`. */
static inline json_t *sg_request(json_t *reqs, const char *name, const char *cls, int count) {
    json_t *ex = count < 0 ? json_pack("{s:s,s:s}", "deviceClassName", cls, "allocationMode", "All")
                           : json_pack("{s:s,s:s,s:i}", "deviceClassName", cls, "allocationMode", "ExactCount", "count",
                                       count);
    json_array_append_new(reqs, json_pack("{s:s,s:o}", "name", name, "exactly", ex));
    return ex;
}

static inline void sg_constraint(json_t *cons, bool match, const char *attr) {
    json_array_append_new(cons, json_pack("{s:s}", match ? "matchAttribute" : "distinctAttribute", attr));
}

#endif
