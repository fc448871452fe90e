/* plan_scan.h — one replica decided on many nodes at once, on two threads: plan_sim.c's
 * pass over every node (a workload's first replica, a replica whose commits can reach
 * other nodes). The calling thread decides on the plan's overlay, a second one on a
 * copy of it (dra_overlay_copy: the same commits), each taking the next chunk of nodes;
 * the copy's memo answers then move into the overlay (dra_overlay_memo_adopt), so it
 * holds what one thread deciding every node would have left. Exact: a fit without
 * commit changes nothing another fit reads, and each answer lands in its own slot. */
#ifndef DRA_PLANNER_PLAN_SCAN_H
#define DRA_PLANNER_PLAN_SCAN_H

#include "engine/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct plan_scan_answer {
    bool fits;
    int64_t score;
} plan_scan_answer;

/* out[k]: pr on node names[idx[k]], for k < n, without commit. x: the caller's
 * context (the second thread makes its own). one_thread: every node on the calling
 * thread (plan_opts.one_thread: tests compare the two). */
void plan_scan(const dra_pod_request *pr, dra_overlay *ov, dra_alloc_ctx *x, dra_score_mode mode,
               const char *const *names, const size_t *idx, size_t n, bool one_thread, plan_scan_answer *out);

#endif
