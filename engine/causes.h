/* causes.h — why nodes refuse a pod, counted as kube-scheduler counts it.
 *
 * kube-scheduler explains an unschedulable pod with one line (FitError.Error,
 * pkg/scheduler/framework/types.go): every node's reasons counted by identical text,
 * the "<count> <reason>" strings sorted (sort.Strings) and joined —
 *   0/200 nodes are available: 140 no device matches class gpu.nvidia.com and the
 *   selectors, 18 untolerated taint example.com/maintenance=firmware:NoSchedule, 42 ...
 * It counts texts, so a reason that names the node or its device counts makes every
 * node a line of its own. A fit's reason (dra_fit.reason) is the detail for one node;
 * its cause (dra_fit_cause) is the same text on every node that fails for the same
 * reason: the first failing request's class and what stops its devices (no device
 * matches, held by claims, an untolerated taint, shared counters used up, ...), or the
 * node check's own kube-scheduler text. It is what the extender puts in FailedNodes,
 * so kube-scheduler's event reads as a count by cause.
 *
 * With it, how close the node came: devices missing (what the failing requests want
 * beyond the free devices that match them) and devices matching. dra_causes counts
 * causes over the nodes of one decision and keeps, for each cause, the node that came
 * closest (fewest missing, then most matching) with its full reason; the closest are
 * reported, never a node where nothing matches while one where something does exists. */
#ifndef DRA_ENGINE_CAUSES_H
#define DRA_ENGINE_CAUSES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/snapshot.h"

typedef struct dra_cause {
    char text[320];              /* node-independent */
    int64_t missing;             /* devices the failing requests lack; -1: not a device shortage */
    int64_t matching;            /* devices matching them; -1: unknown */
} dra_cause;

/* The cause of a failed fit on `node` (its name is taken out of texts that carry it). */
void dra_fit_cause(const dra_fit *f, const char *node, dra_cause *out);

typedef struct dra_causes dra_causes;

dra_causes *dra_causes_new(void);
void dra_causes_free(dra_causes *c);
/* One node's failed fit. */
void dra_causes_add(dra_causes *c, const char *node, const dra_fit *f);
/* The same with its cause k, already taken with dra_fit_cause(f, node, k) (the
 * extender takes it for FailedNodes first). */
void dra_causes_add_cause(dra_causes *c, const char *node, const dra_fit *f, const dra_cause *k);
size_t dra_causes_nodes(const dra_causes *c);
/* "0/N nodes are available: <count> <cause>, ...." over N nodes (nodes that fit count
 * in N, not in the causes, as in kube-scheduler). Returns the length (cut at n - 1). */
size_t dra_causes_summary(const dra_causes *c, size_t nnodes, char *buf, size_t n);
/* The same where nfit of the nnodes fit the pod: "K/N nodes do not fit it: <count>
 * <cause>, ...." — kube-scheduler's "0/N nodes are available" would say none does
 * (nfit 0: exactly dra_causes_summary). */
size_t dra_causes_summary_others(const dra_causes *c, size_t nfit, size_t nnodes, char *buf, size_t n);
/* The closest nodes, at most max, one per cause, closest first: {"node", "cause",
 * "missing"?, "matching"?, "reason"}. */
json_t *dra_causes_closest(const dra_causes *c, size_t max);
/* [{"cause", "nodes"}] in the summary's order. */
json_t *dra_causes_json(const dra_causes *c);

#endif
