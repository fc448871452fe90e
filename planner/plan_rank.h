/* plan_rank.h — the nodes one workload's replicas fit, best first: plan_sim.c's fit
 * cache. Each node's last answer (fits or not, its score) is kept; the best node is
 * the top of a binary heap ordered as the simulation's scan chose (the higher score,
 * then the smaller tie key, then the smaller index), so a replica costs the fits of
 * the nodes that changed and a heap step, not a pass over every node. An answer
 * replaced by a newer one leaves its heap entry behind, dropped when it surfaces. */
#ifndef DRA_PLANNER_PLAN_RANK_H
#define DRA_PLANNER_PLAN_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct plan_rank plan_rank;

/* tie: per node, smaller wins a score tie; borrowed, must outlive the rank */
plan_rank *plan_rank_new(size_t nnodes, const uint64_t *tie);
void plan_rank_free(plan_rank *r);
/* Every node unknown (a new workload). */
void plan_rank_reset(plan_rank *r);
/* The next node without an answer, taken (true), or false when every node has one. */
bool plan_rank_take_unknown(plan_rank *r, size_t *node);
void plan_rank_set(plan_rank *r, size_t node, bool fits, int64_t score);
/* The node's state changed (a commit): its answer is void and it is unknown again. */
void plan_rank_forget(plan_rank *r, size_t node);
/* The best node that fits, or -1. Every node must have an answer. */
long plan_rank_best(plan_rank *r);

#endif
