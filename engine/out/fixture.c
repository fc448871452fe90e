/* fixture.c — one allocator conformance case end to end: feature flags, node,
 * classes, slices, allocated state and claims go into a store of their own exactly as
 * given (no API defaulting, objects of the same name all kept), the claims are allocated together on the node, and the
 * outcome is returned in the case's expectation shape (an unsatisfiable one with its
 * explanation: "reason", the short line, and "explanation", the long text). Shared by
 * `dralloc allocate --fixture` and the conformance runner. */
#include "engine/alloc/explain.h"
#include "engine/pod/podplan.h"
#include "engine/world/world.h"
#include "engine/snapshot.h"

#include <string.h>

static bool feature(const json_t *fs, const char *name) { return json_is_true(json_object_get(fs, name)); }

/* o, with its kind when it has none, appended to objs. */
static void add_obj(json_t *objs, json_t *o, const char *kind) {
    if (json_object_get(o, "kind")) {
        json_array_append(objs, o);
        return;
    }
    json_t *copy = json_copy(o);
    json_object_set_new(copy, "kind", json_string(kind));
    json_array_append_new(objs, copy);
}

static bool add_all(json_t *objs, const json_t *c, const char *key, const char *kind, err *e) {
    const json_t *arr = json_object_get(c, key);
    if (!arr || json_is_null(arr)) return true;
    if (!json_is_array(arr)) return err_set(e, "case field %s: expected array", key);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        if (!json_is_object(o)) return err_set(e, "case field %s[%zu]: expected object", key, i);
        add_obj(objs, o, kind);
    }
    return true;
}

json_t *dra_fixture_run(const json_t *c, err *e) { return dra_fixture_run_choice(c, DRA_CHOICE_FIRST_FIT, e); }

json_t *dra_fixture_run_choice(const json_t *c, dra_device_choice choice, err *e) {
    if (!json_is_object(c)) {
        err_set(e, "case: expected a JSON object");
        return NULL;
    }
    const json_t *fs = json_object_get(c, "features");
    dra_features f = {
        .admin_access = feature(fs, "adminAccess"),
        .prioritized_list = feature(fs, "prioritizedList"),
        .partitionable = feature(fs, "partitionableDevices"),
        .device_taints = feature(fs, "deviceTaints"),
        .binding_conditions = feature(fs, "deviceBindingConditions") || feature(fs, "deviceStatus"),
        .consumable_capacity = feature(fs, "consumableCapacity"),
        .list_type_attributes = feature(fs, "listTypeAttributes"),
        .derived_attributes = feature(fs, "derivedAttributes"),
        .extended_resource = !json_is_false(json_object_get(fs, "extendedResource")),
        .workload_claims = feature(fs, "workloadResourceClaims"),
        .device_compatibility_groups = feature(fs, "compatibilityGroups"),
        .fractional_capacity_range = feature(fs, "fractionalCapacityRange"),
        .optional_node_operations = feature(fs, "optionalNodeOperations"),
    };
    /* a pod to schedule (extended resources, PodGroup claims): engine/out/fixture_pod.c */
    if (json_object_get(c, "pod")) return dra__podcase_run(c, &f, choice, e);
    json_t *objs = json_array(), *out = NULL;
    dra_store *store = NULL;
    dra_snapshot *snap = NULL;
    dra_allocated *st = NULL;
    dra_nodeview *v = NULL;
    dra_alloc_ctx *x = NULL;
    const dra_claim **claims = NULL;
    const json_t *node = json_object_get(c, "node");
    if (!json_is_object(node)) {
        err_set(e, "case: node missing");
        goto done;
    }
    add_obj(objs, (json_t *)node, "Node");
    if (!add_all(objs, c, "classes", "DeviceClass", e) || !add_all(objs, c, "slices", "ResourceSlice", e) ||
        !add_all(objs, c, "claims", "ResourceClaim", e) || !add_all(objs, c, "deviceTaintRules", "DeviceTaintRule", e))
        goto done;
    store = dra_store_new_with(&f, &(dra_store_opts){.as_given = true, .keep_text = true});
    if (!dra_store_apply_json(store, objs, e)) goto done;
    snap = dra_store_acquire(store);
    const dra_world *w = dra_snapshot_world(snap);
    st = dra_allocated_new(w);
    const json_t *ad = json_object_get(c, "allocatedDevices");
    for (size_t i = 0; json_is_array(ad) && i < json_array_size(ad); i++)
        if (!dra_allocated_add_device(st, json_string_value(json_array_get(ad, i)) ?: "", e)) goto done;
    const json_t *sh = json_object_get(c, "allocatedSharedDeviceIDs");
    for (size_t i = 0; json_is_array(sh) && i < json_array_size(sh); i++)
        if (!dra_allocated_add_shared(st, json_string_value(json_array_get(sh, i)) ?: "", e)) goto done;
    const json_t *cap = json_object_get(c, "allocatedCapacity");
    if (json_is_object(cap)) {
        const char *dev;
        json_t *caps;
        json_object_foreach((json_t *)cap, dev, caps) {
            const char *name;
            json_t *q;
            json_object_foreach(caps, name, q) {
                quantity qq;
                err qe;
                err_clear(&qe);
                const char *s = json_string_value(q);
                if (!s || !quantity_parse(s, strlen(s), &qq, &qe)) {
                    err_set(e, "allocatedCapacity %s %s: %s", dev, name, qe.msg);
                    goto done;
                }
                if (!dra_allocated_add_capacity(st, dev, name, &qq, e)) goto done;
            }
        }
    }
    if (dra_world_nnodes(w) < 1) {
        err_set(e, "case: node missing");
        goto done;
    }
    v = dra_nodeview_new(w, dra_world_node(w, 0), &f, e);
    if (!v) {
        out = json_object();
        json_object_set_new(out, "error", json_string(e->msg));
        err_clear(e);
        goto done;
    }
    size_t n = dra_world_nclaims(w);
    claims = xcalloc(n ? n : 1, sizeof *claims);
    for (size_t i = 0; i < n; i++) claims[i] = dra_world_claim(w, i);
    x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(x, choice);
    dra_alloc_result *res;
    err ae;
    err_clear(&ae);
    dra_alloc_status s = dra_allocate(x, v, st, claims, n, &res, &ae);
    out = json_object();
    if (s == DRA_ALLOC_OK) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(arr, dra_alloc_result_to_json(&res[i]));
        json_object_set_new(out, "allocations", arr);
    } else if (s == DRA_ALLOC_UNSAT) {
        /* why, as the extender's FailedNodes and `dralloc allocate` say it (explain.c) */
        char why[4096];
        json_object_set_new(out, "unsatisfiable", json_true());
        dra__explain_short(x, why, sizeof why);
        json_object_set_new(out, "reason", json_string(why));
        dra_alloc_explain(x, why, sizeof why);
        json_object_set_new(out, "explanation", json_string(why));
    } else {
        json_object_set_new(out, "error", json_string(ae.msg));
        char why[4096];
        if (s == DRA_ALLOC_NODE_ERROR && dra__explain_pools(x, why, sizeof why))
            json_object_set_new(out, "explanation", json_string(why));
    }
done:
    free(claims);
    dra_alloc_ctx_free(x);
    dra_nodeview_free(v);
    dra_allocated_free(st);
    dra_snapshot_release(snap);
    dra_store_free(store);
    json_decref(objs);
    return out;
}
