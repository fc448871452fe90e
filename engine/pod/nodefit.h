/* nodefit.h — private to engine/: the whole-pod checks of kube-scheduler's other
 * Filter plugins (NodeName, NodeUnschedulable, NodeAffinity, TaintToleration,
 * NodeResourcesFit) for `allocate --pod` and `plan` (nodefit.c). */
#ifndef DRA_ENGINE_NODEFIT_H
#define DRA_ENGINE_NODEFIT_H

#include "engine/decode/decode.h"
#include "engine/engine.h"

/* What a node already runs: pods bound or committed there and their requests; ext,
 * their requests of one extended resource (dra__node_usage's res). */
typedef struct dra_node_usage {
    int64_t pods, cpu_milli, memory, ext;
} dra_node_usage;

/* Whether two decoded pods are one pod: the same object, or the same namespace/name
 * and UID. kube-scheduler keys pods by UID, so a pod re-created under its old name
 * (a StatefulSet's, before the old one's deletion arrived) is another pod; without a
 * UID on either side (objects written by hand), namespace/name decides. */
bool dra__pod_same(const dra_pod *a, const dra_pod *b);
/* The pods of the world bound to the node (terminated ones and `self` excluded), in
 * one pass: their count and requests, and of extended resource res (NULL: none). */
void dra__node_usage(const dra_world *w, const dra_node *node, const dra_pod *self, const char *res,
                     dra_node_usage *out);
/* True when the pod passes; else the plugin's message in reason and whether no
 * change in usage could help. */
bool dra__nodefit_check(const dra_pod *pod, const dra_node *node, const dra_node_usage *used, char *reason, size_t n,
                        bool *unresolvable);

#endif
