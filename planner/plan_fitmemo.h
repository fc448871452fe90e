/* plan_fitmemo.h — fits kept from one simulation to the next (`--min-nodes`' probes,
 * plan_minnodes.c): the probes run on snapshots that differ only by whole added nodes,
 * so a node of the cluster is, in every probe, its snapshot state plus the replicas
 * committed to it. Where every device is node-local and the workload shares no claim
 * (plan_sim.c's fit cache), that state is a function of which workloads' replicas were
 * committed there, in order: a node's fit and score for a workload's replica are kept
 * under (workload, scoring, node name, that history), and a later probe that reaches
 * the same node with the same history takes the answer instead of deciding it again.
 * Under binpack most nodes of the cluster fill the same way whatever the count of
 * copies, so a probe decides mostly the added nodes. Private to planner/. */
#ifndef DRA_PLANNER_PLAN_FITMEMO_H
#define DRA_PLANNER_PLAN_FITMEMO_H

#include "planner/planner.h"

plan_fitmemo *plan_fitmemo_new(void);
void plan_fitmemo_free(plan_fitmemo *m);   /* NULL: nothing */

/* A workload's key: its name and its template (the same workload in every probe,
 * gang or not: a gang changes what is undone, not what a fit answers). */
uint64_t plan_fitmemo_workload_key(const plan_workload *w);
/* A node's name as a key. */
uint64_t plan_fitmemo_node_key(const char *name);
/* A node's history after one more replica of workload wkey was committed to it
 * (history 0: nothing committed). */
uint64_t plan_fitmemo_history(uint64_t hist, uint64_t wkey);

bool plan_fitmemo_get(const plan_fitmemo *m, uint64_t wkey, int mode, uint64_t node, uint64_t hist, bool *fits,
                      int64_t *score);
void plan_fitmemo_put(plan_fitmemo *m, uint64_t wkey, int mode, uint64_t node, uint64_t hist, bool fits, int64_t score);
size_t plan_fitmemo_size(const plan_fitmemo *m);

#endif
