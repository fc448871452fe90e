/* plan_copies.h — copies of node shapes on one store, for `--min-nodes` and the buy
 * list (plan_minnodes.c, plan_buy.c). A count per shape is set in one apply: the
 * copies beyond the last count are upserted (their Node and node-local slices, made
 * by plan_add_nodes from the shape), those below it deleted, so each setting publishes
 * one snapshot that differs from the last by the copies alone. A copy is named
 * `<node>-whatif-<i>` (i skipping names the store already holds) and keeps its name
 * from one setting to the next. The shapes' other objects (DeviceClasses, ...) are
 * applied once, when the store lacks them. Private to planner/. */
#ifndef DRA_PLANNER_PLAN_COPIES_H
#define DRA_PLANNER_PLAN_COPIES_H

#include "planner/planner.h"

typedef struct plan_copies plan_copies;

/* shapes: one Node each (its name names the shape; two shapes may not share one).
 * Borrowed: they must outlive the copies. NULL with e set. */
plan_copies *plan_copies_new(dra_store *st, const plan_objects *shapes, size_t nshapes, err *e);
void plan_copies_free(plan_copies *c);
size_t plan_copies_nshapes(const plan_copies *c);
const char *plan_copies_shape_name(const plan_copies *c, size_t s);
/* The store with exactly counts[s] copies of shape s (one snapshot). */
bool plan_copies_set(plan_copies *c, const long *counts, err *e);
/* The current count of shape s. */
long plan_copies_count(const plan_copies *c, size_t s);
/* The name of copy i of shape s (made by an earlier plan_copies_set), NULL if none. */
const char *plan_copies_node(const plan_copies *c, size_t s, long i);
/* The shape a node is a copy of, or -1 for a node of the base. */
long plan_copies_shape_of(const plan_copies *c, const char *node);
/* Every ResourceSlice of the current snapshot names its node. */
bool plan_copies_node_local(plan_copies *c);

#endif
