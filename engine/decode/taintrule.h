/* taintrule.h — private to engine/: DeviceTaintRule objects (resource.k8s.io
 * v1alpha3 / v1beta2, gate DRADeviceTaintRules). A rule adds one taint to every
 * device its selector matches, "the same effect as if the taint was specified
 * directly in the ResourceSlice". Rules are decoded per snapshot (kinds.h, dra_rules)
 * and each slice a rule selects is seen through a copy with the rules' taints merged
 * into its devices' (store.c), so the allocator's taint check (alloc_resources.c) sees
 * them like driver-published taints. */
#ifndef DRA_ENGINE_TAINTRULE_H
#define DRA_ENGINE_TAINTRULE_H

#include <jansson.h>

#include "base/error.h"

typedef struct dra_rules dra_rules;

/* rules.c dra__rules_add: decode one DeviceTaintRule into r. */
bool dra__taintrule_add(dra_rules *r, const json_t *obj, err *e);
/* store.c: slice s as the rules of `rules` see it — s itself when no rule
 * selects any of its devices, else a copy in a with the rules' taints appended (in
 * rule order), so a shared slice is never written. */
struct dra_slice;
struct arena;
const struct dra_slice *dra__taintrule_slice(const dra_rules *rules, const struct dra_slice *s, struct arena *a);

#endif
