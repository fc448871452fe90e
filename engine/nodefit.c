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
 * are decoded at ingest (dra__ingest_node_fit, dra__pod_cpu_mem), the pod's
 * selectors and tolerations once per request (dra__nodefit_read). */
#include "engine/nodefit.h"

#include "engine/decode_util.h"
#include "engine/world.h"

#include <stdio.h>
#include <string.h>

static bool qty_scaled(const json_t *v, int32_t scale, int64_t *out) {
    const char *s = json_string_value(v);
    quantity q;
    err e;
    err_clear(&e);
    if (json_is_integer(v)) q = quantity_from_int(json_integer_value(v), QTY_DECIMAL_SI);
    else if (!s || !quantity_parse(s, strlen(s), &q, &e)) return false;
    return quantity_scaled_value(&q, scale, out);
}

void dra__ingest_node_fit(const dra_decoder *d, const json_t *obj, dra_node *n) {
    const json_t *spec = json_object_get(obj, "spec");
    n->unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
    const json_t *taints = json_object_get(spec, "taints");
    size_t nt = json_is_array(taints) ? json_array_size(taints) : 0;
    n->taints = nt ? ARENA_NEWN(d->a, dra_taint, nt) : NULL;
    for (size_t i = 0; i < nt; i++) {
        const json_t *t = json_array_get(taints, i);
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *v = json_string_value(json_object_get(t, "value"));
        const char *ef = json_string_value(json_object_get(t, "effect"));
        if (!k) continue;
        n->taints[n->ntaints++] = (dra_taint){arena_strdup(d->a, k), v ? arena_strdup(d->a, v) : NULL,
                                              ef ? arena_strdup(d->a, ef) : NULL, NULL};
    }
    const json_t *al = json_object_get(json_object_get(obj, "status"), "allocatable");
    n->has_allocatable = json_is_object(al);
    n->alloc_cpu_milli = n->alloc_memory = n->alloc_pods = -1;
    if (!n->has_allocatable) return;
    int64_t v;
    if (qty_scaled(json_object_get(al, "cpu"), -3, &v)) n->alloc_cpu_milli = v;
    if (qty_scaled(json_object_get(al, "memory"), 0, &v)) n->alloc_memory = v;
    if (qty_scaled(json_object_get(al, "pods"), 0, &v)) n->alloc_pods = v;
}

/* A container's request of one resource: requests, else limits (the API server's
 * default), 0 when neither. */
static int64_t cont_req(const json_t *c, const char *res, int32_t scale) {
    const json_t *r = json_object_get(c, "resources");
    int64_t v = 0;
    if (qty_scaled(json_object_get(json_object_get(r, "requests"), res), scale, &v)) return v;
    if (qty_scaled(json_object_get(json_object_get(r, "limits"), res), scale, &v)) return v;
    return 0;
}

static int64_t effective(const json_t *spec, const char *res, int32_t scale) {
    const json_t *inits = json_object_get(spec, "initContainers"), *conts = json_object_get(spec, "containers");
    int64_t steady = 0, side = 0, peak = 0;
    for (size_t i = 0; i < json_array_size(conts); i++) steady += cont_req(json_array_get(conts, i), res, scale);
    for (size_t i = 0; i < json_array_size(inits); i++) {
        const json_t *c = json_array_get(inits, i);
        const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
        int64_t v = cont_req(c, res, scale);
        if (rp && !strcmp(rp, "Always")) {
            side += v;
            steady += v;
        } else if (v + side > peak) {
            peak = v + side;
        }
    }
    int64_t over = 0;
    qty_scaled(json_object_get(json_object_get(spec, "overhead"), res), scale, &over);
    return (peak > steady ? peak : steady) + over;
}

void dra__pod_cpu_mem(const json_t *pod, int64_t *cpu_milli, int64_t *memory) {
    const json_t *spec = json_object_get(pod, "spec");
    *cpu_milli = effective(spec, "cpu", -3);
    *memory = effective(spec, "memory", 0);
}

bool dra__nodefit_read(const dra_decoder *d, const json_t *pod, dra_nodefit *out, err *e) {
    memset(out, 0, sizeof *out);
    const json_t *spec = json_object_get(pod, "spec");
    const char *nn = json_string_value(json_object_get(spec, "nodeName"));
    out->node_name = nn && *nn ? arena_strdup(d->a, nn) : NULL;
    const json_t *ns = json_object_get(spec, "nodeSelector");
    if (json_is_object(ns)) {
        out->selector = ARENA_NEWN(d->a, dra_label, json_object_size(ns) ? json_object_size(ns) : 1);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)ns, k, v) {
            out->selector[out->nselector++] = (dra_label){arena_strdup(d->a, k),
                                                          arena_strdup(d->a, json_string_value(v) ? json_string_value(v) : "")};
        }
    }
    const json_t *req = json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
                                        "requiredDuringSchedulingIgnoredDuringExecution");
    if (req && !json_is_null(req)) {
        dctx c;
        dra_dctx_init(&c, d, e, "Pod", pod);
        if (!dra_ddecode_node_selector(&c, req, &out->affinity)) return false;
    }
    const json_t *tols = json_object_get(spec, "tolerations");
    size_t nt = json_is_array(tols) ? json_array_size(tols) : 0;
    out->tols = nt ? ARENA_NEWN(d->a, dra_node_toleration, nt) : NULL;
    for (size_t i = 0; i < nt; i++) {
        const json_t *t = json_array_get(tols, i);
        dra_node_toleration *o = &out->tols[out->ntols++];
        const char *f[4] = {json_string_value(json_object_get(t, "key")), json_string_value(json_object_get(t, "operator")),
                            json_string_value(json_object_get(t, "value")), json_string_value(json_object_get(t, "effect"))};
        o->key = f[0] ? arena_strdup(d->a, f[0]) : "";
        o->exists = f[1] && !strcmp(f[1], "Exists");
        o->value = f[2] ? arena_strdup(d->a, f[2]) : "";
        o->effect = f[3] ? arena_strdup(d->a, f[3]) : "";
    }
    return true;
}

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

bool dra__nodefit_check(const dra_nodefit *pf, const dra_pod *pod, const dra_node *node, const dra_node_usage *used,
                        char *reason, size_t n, bool *unresolvable) {
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
        if (!dra_node_matches(node, NULL, false, pf->affinity, &m, &e) || !m)
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
        strcmp(a->ns && *a->ns ? a->ns : "default", b->ns && *b->ns ? b->ns : "default"))
        return false;
    return !a->uid || !b->uid || !strcmp(a->uid, b->uid);
}

void dra__node_usage(const dra_world *w, const dra_node *node, const dra_pod *self, dra_node_usage *out) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < w->pods.n; i++) {
        const dra_pod *p = w->pods.v[i];
        if (p->terminated || !p->node_name || strcmp(p->node_name, node->name) || (self && dra__pod_same(p, self)))
            continue;
        out->pods++;
        out->cpu_milli += p->req_cpu_milli;
        out->memory += p->req_memory;
    }
}
