/* taintrule.h — private to engine/: DeviceTaintRule objects (resource.k8s.io
 * v1alpha3 / v1beta2, gate DRADeviceTaintRules). A rule adds one taint to every
 * device its selector matches, "the same effect as if the taint was specified
 * directly in the ResourceSlice". Rules are decoded when loaded and merged into the
 * matching devices' taints when the world is frozen, so the allocator's taint check
 * (alloc_resources.c) sees them like driver-published taints. */
#ifndef DRA_ENGINE_TAINTRULE_H
#define DRA_ENGINE_TAINTRULE_H

#include <jansson.h>

#include "base/error.h"

typedef struct dra_world dra_world;

/* world.c add_one(): decode one DeviceTaintRule into the world. */
bool dra__taintrule_add(dra_world *w, const json_t *obj, err *e);
/* world.c dra_world_freeze(): append each rule's taint to the devices it selects
 * (once per world). */
void dra__taintrule_apply(dra_world *w);
/* store.c: slice s as the rules of world `rules` see it — s itself when no rule
 * selects any of its devices, else a copy in a with the rules' taints appended (in
 * rule order), so a shared slice is never written. */
struct dra_slice;
struct arena;
const struct dra_slice *dra__taintrule_slice(const dra_world *rules, const struct dra_slice *s, struct arena *a);

#endif
