/* fixture_pod.c — allocator cases with a "pod" (testdata/README.md): the shared case
 * format (features, node, classes, slices, claims, allocatedDevices) plus
 *   "pod":        the Pod to schedule on the node,
 *   "pods":       other Pods (those bound to the node count against device-plugin
 *                 allocatable),
 *   "templates":  ResourceClaimTemplates, "podGroups": PodGroups,
 *   "deviceTaintRules": DeviceTaintRules,
 * and "node" may carry status.allocatable. Objects are hand-written, so the API
 * server's defaults apply (allocationMode ExactCount, count 1). Claims that already
 * have status.allocation are in use. The objects go into a store of their own; the
 * outcome is dra_pod_allocate's object on its snapshot. */
#include "engine/pod/podplan.h"

#include "engine/snapshot.h"
#include "engine/world/world.h"

#include <string.h>

static bool add_one(json_t *objs, const json_t *v, const char *key, const char *kind, err *e) {
    if (!json_is_object(v)) return err_set(e, "case field %s: expected object", key);
    json_t *o = json_copy((json_t *)v);
    if (!json_object_get(o, "kind")) json_object_set_new(o, "kind", json_string(kind));
    json_array_append_new(objs, o);
    return true;
}

static bool add_list(json_t *objs, const json_t *c, const char *key, const char *kind, err *e) {
    const json_t *v = json_object_get(c, key);
    if (!v || json_is_null(v)) return true;
    if (json_is_object(v)) return add_one(objs, v, key, kind, e);
    if (!json_is_array(v)) return err_set(e, "case field %s: expected array", key);
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!add_one(objs, json_array_get(v, i), key, kind, e)) return false;
    return true;
}

json_t *dra__podcase_run(const json_t *c, const dra_features *f, dra_device_choice choice, err *e) {
    json_t *objs = json_array();
    dra_store *store = NULL;
    dra_snapshot *snap = NULL;
    dra_allocated *st = NULL;
    json_t *out = NULL;
    const json_t *pod = json_object_get(c, "pod"), *node = json_object_get(c, "node");
    if (!json_is_object(pod) || !json_is_object(node)) {
        err_set(e, "case: pod and node objects are required");
        goto done;
    }
    if (!add_list(objs, c, "node", "Node", e) || !add_list(objs, c, "classes", "DeviceClass", e) ||
        !add_list(objs, c, "slices", "ResourceSlice", e) || !add_list(objs, c, "claims", "ResourceClaim", e) ||
        !add_list(objs, c, "templates", "ResourceClaimTemplate", e) || !add_list(objs, c, "podGroups", "PodGroup", e) ||
        !add_list(objs, c, "deviceTaintRules", "DeviceTaintRule", e) || !add_list(objs, c, "pods", "Pod", e) ||
        !add_list(objs, c, "pod", "Pod", e))
        goto done;
    store = dra_store_new_with(f, &(dra_store_opts){.keep_text = true});
    if (!dra_store_apply_json(store, objs, e)) goto done;
    snap = dra_store_acquire(store);
    const dra_world *w = dra_snapshot_world(snap);
    st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), f->consumable_capacity);
    const json_t *ad = json_object_get(c, "allocatedDevices");
    for (size_t i = 0; json_is_array(ad) && i < json_array_size(ad); i++)
        if (!dra_allocated_add_device(st, json_string_value(json_array_get(ad, i)) ?: "", e)) goto done;
    const json_t *meta = json_object_get(pod, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *nname = json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    const dra_pod *p = name ? dra_extres_find_pod(w, ns, name) : NULL;
    const dra_node *n = nname ? dra_world_find_node(w, nname) : NULL;
    if (!p || !n) {
        err_set(e, "case: pod and node need metadata.name");
        goto done;
    }
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(x, choice);
    out = dra_pod_allocate(w, p, n, f, st, x, NULL);
    dra_alloc_ctx_free(x);
done:
    dra_allocated_free(st);
    dra_snapshot_release(snap);
    dra_store_free(store);
    json_decref(objs);
    return out;
}
