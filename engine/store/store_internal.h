/* store_internal.h — private to engine/: what a snapshot gives the modules that decide
 * a pod on it (podfit.c, capacity.c, podplan.c, fixture_pod.c): its world, in-use set, features and
 * catalog, the view of a node by name, and the fit memo. Defined in store*.c. */
#ifndef DRA_ENGINE_STORE_INTERNAL_H
#define DRA_ENGINE_STORE_INTERNAL_H

#include "engine/world/world.h"

/* The view of a node by name, built at
 * first use and shared (NULL with *errmsg when gathering its pools failed); or, for a
 * node without a Node object once the snapshot keeps enough of those, built in
 * *owned (the caller frees it; its node and message live in a). */
const dra_nodeview *dra__snapshot_view(dra_snapshot *s, const char *name, const dra_node **node, const char **errmsg,
                                       arena *a, dra_nodeview **owned);
const dra_world *dra__snapshot_world(const dra_snapshot *s);
const dra_allocated *dra__snapshot_allocated(const dra_snapshot *s);
const dra_features *dra__snapshot_features(const dra_snapshot *s);
dra_catalog *dra__snapshot_catalog(const dra_snapshot *s);
/* The snapshot's fit memo (store.c): a node's answer for a pod signature (what the
 * pod needs, without names), with the reason kept as a template whose \x01<i> marks
 * stand for names[i] (pod and claim names), so another pod with the same needs gets
 * the same answer in its own names. */
/* A reason with names[i] replaced by \x01<i+1> (malloc'd), and back in other names. */
char *dra__reason_template(const char *reason, const char *const *names, size_t nnames);
void dra__reason_expand(const char *tmpl, char *reason, size_t n, const char *const *names, size_t nnames);
bool dra__memo_get(dra_snapshot *s, const char *node, uint64_t sig, int *status, int64_t *score, char *reason,
                   size_t n, const char *const *names, size_t nnames);
void dra__memo_put(dra_snapshot *s, const char *node, uint64_t sig, int status, int64_t score, const char *reason,
                   const char *const *names, size_t nnames);

#endif
