/* nodefit.h — private to engine/: the whole-pod checks of kube-scheduler's other
 * Filter plugins (NodeName, NodeUnschedulable, NodeAffinity, TaintToleration,
 * NodeResourcesFit) for `allocate --pod` and `plan` (nodefit.c). */
#ifndef DRA_ENGINE_NODEFIT_H
#define DRA_ENGINE_NODEFIT_H

#include "engine/decode.h"
#include "engine/engine.h"

typedef struct dra_node_toleration {
    const char *key, *value, *effect;   /* "" when unset */
    bool exists;                        /* operator Exists (else Equal) */
} dra_node_toleration;

/* A pod's node requirements, decoded once per request. */
typedef struct dra_nodefit {
    const char *node_name;              /* spec.nodeName, NULL when unset */
    dra_label *selector;                /* spec.nodeSelector */
    uint32_t nselector;
    dra_node_selector *affinity;        /* required node affinity, NULL when none */
    dra_node_toleration *tols;
    uint32_t ntols;
} dra_nodefit;

/* What a node already runs: pods bound or committed there and their requests. */
typedef struct dra_node_usage {
    int64_t pods, cpu_milli, memory;
} dra_node_usage;

void dra__ingest_node_fit(const dra_decoder *d, const json_t *obj, dra_node *n);
void dra__pod_cpu_mem(const json_t *pod, int64_t *cpu_milli, int64_t *memory);
bool dra__nodefit_read(const dra_decoder *d, const json_t *pod, dra_nodefit *out, err *e);
/* Whether two decoded pods are one pod: the same object, or the same namespace/name
 * and UID. kube-scheduler keys pods by UID, so a pod re-created under its old name
 * (a StatefulSet's, before the old one's deletion arrived) is another pod; without a
 * UID on either side (objects written by hand), namespace/name decides. */
bool dra__pod_same(const dra_pod *a, const dra_pod *b);
/* The pods of the world bound to the node (terminated ones and `self` excluded). */
void dra__node_usage(const dra_world *w, const dra_node *node, const dra_pod *self, dra_node_usage *out);
/* True when the pod passes; else the plugin's message in reason and whether no
 * change in usage could help. */
bool dra__nodefit_check(const dra_nodefit *pf, const dra_pod *pod, const dra_node *node, const dra_node_usage *used,
                        char *reason, size_t n, bool *unresolvable);

#endif
