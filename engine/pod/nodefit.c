/* nodefit.c — the whole-pod checks kube-scheduler's other Filter plugins make before
 * DynamicResources, for `dralloc allocate --pod` and `dralloc plan` (the extender
 * does not need them: kube-scheduler has run them already). Each check gives the
 * plugin's own message and its kind of failure:
 *   NodeName            spec.nodeName names another node          unresolvable
 *   NodeUnschedulable   spec.unschedulable, not tolerated          unresolvable
 *   NodeAffinity        spec.nodeSelector, required node affinity  unresolvable
 *   TaintToleration     NoSchedule/NoExecute taints not tolerated  unresolvable
 *   NodeResourcesFit    cpu, memory, pods over status.allocatable  unschedulable
 * Requests follow the effective-request rule (app containers plus sidecars, or the
 * largest init container with the sidecars started before it). Node and pod fields
 * are decoded once with their objects (decode_core.c). */
#include "engine/pod/nodefit.h"

#include "engine/decode/decode_util.h"
#include "engine/world/world.h"

#include <stdio.h>
#include <string.h>

/* core/v1 Toleration.ToleratesTaint */
static bool tolerates(const dra_node_toleration *t, const char *key, const char *value, const char *effect) {
    if (*t->effect && strcmp(t->effect, effect ? effect : "")) return false;
    if (!*t->key) return t->exists;
    if (strcmp(t->key, key)) return false;
    return t->exists || !strcmp(t->value, value ? value : "");
}

static bool tolerated(const dra_nodefit *pf, const char *key, const char *value, const char *effect) {
    for (uint32_t i = 0; i < pf->ntols; i++)
        if (tolerates(&pf->tols[i], key, value, effect)) return true;
    return false;
}

bool dra__nodefit_check(const dra_pod *pod, const dra_node *node, const dra_node_usage *used, char *reason, size_t n,
                        bool *unresolvable) {
    const dra_nodefit *pf = &pod->fit;
    *unresolvable = true;
    if (pf->node_name && strcmp(pf->node_name, node->name))
        return snprintf(reason, n, "node(s) didn't match the requested node name"), false;
    if (node->unschedulable && !tolerated(pf, "node.kubernetes.io/unschedulable", NULL, "NoSchedule"))
        return snprintf(reason, n, "node(s) were unschedulable"), false;
    for (uint32_t i = 0; i < pf->nselector; i++) {
        bool ok = false;
        for (uint32_t j = 0; j < node->nlabels && !ok; j++)
            ok = !strcmp(node->labels[j].key, pf->selector[i].key) && !strcmp(node->labels[j].value, pf->selector[i].value);
        if (!ok) return snprintf(reason, n, "node(s) didn't match Pod's node affinity/selector"), false;
    }
    if (pf->affinity) {
        bool m = false;
        err e;
        err_clear(&e);
        if (!dra__node_matches(node, NULL, false, pf->affinity, &m, &e) || !m)
            return snprintf(reason, n, "node(s) didn't match Pod's node affinity/selector"), false;
    }
    for (uint32_t i = 0; i < node->ntaints; i++) {
        const dra_taint *t = &node->taints[i];
        if (!t->effect || (strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "NoExecute"))) continue;
        if (!tolerated(pf, t->key, t->value, t->effect))
            return snprintf(reason, n, "node(s) had untolerated taint {%s: %s}", t->key, t->value ? t->value : ""), false;
    }
    *unresolvable = false;
    if (!node->has_allocatable) return true;
    if (node->alloc_pods >= 0 && used->pods + 1 > node->alloc_pods) {
        *unresolvable = node->alloc_pods < 1;
        return snprintf(reason, n, "Too many pods"), false;
    }
    if (pod->req_cpu_milli > 0 && node->alloc_cpu_milli >= 0 && used->cpu_milli + pod->req_cpu_milli > node->alloc_cpu_milli) {
        *unresolvable = pod->req_cpu_milli > node->alloc_cpu_milli;
        return snprintf(reason, n, "Insufficient cpu"), false;
    }
    if (pod->req_memory > 0 && node->alloc_memory >= 0 && used->memory + pod->req_memory > node->alloc_memory) {
        *unresolvable = pod->req_memory > node->alloc_memory;
        return snprintf(reason, n, "Insufficient memory"), false;
    }
    return true;
}

bool dra__pod_same(const dra_pod *a, const dra_pod *b) {
    if (a == b) return true;
    if (!a || !b || strcmp(a->name, b->name) ||
        strcmp(dra_ns(a->ns), dra_ns(b->ns)))
        return false;
    return !a->uid || !b->uid || !strcmp(a->uid, b->uid);
}

void dra__node_usage(const dra_world *w, const dra_node *node, const dra_pod *self, const char *res,
                     dra_node_usage *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < w->pods.n; i++) {
        const dra_pod *p = w->pods.v[i];
        if (p->terminated || !p->node_name || strcmp(p->node_name, node->name) || (self && dra__pod_same(p, self)))
            continue;
        out->pods++;
        out->cpu_milli += p->req_cpu_milli;
        out->memory += p->req_memory;
        for (uint32_t r = 0; res && p->res && r < p->res->n; r++)
            if (!strcmp(p->res->names[r], res)) {
                out->ext += p->res->total[r];
                break;
            }
    }
}
