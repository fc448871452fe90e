/* result_encode.c — AllocationResult (resource.k8s.io/v1 `status.allocation`) as
 * jansson values, field names and omission rules as the Go types serialise them:
 * adminAccess only when true, tolerations/bindingConditions/shareID/consumedCapacity
 * only when present, config and nodeSelector omitted when empty; map keys
 * (consumedCapacity) sorted as encoding/json sorts a Go map's. Quantities print in
 * Kubernetes' canonical form. Also the ResourceClaim object around an allocation,
 * as both printers of allocated claims build it. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

static json_t *strs_json(const dra_strs *s) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < s->n; i++) json_array_append_new(a, json_string(s->v[i]));
    return a;
}

static json_t *qty_json(const quantity *q) {
    char buf[QUANTITY_STR_MAX];
    quantity_format(q, buf, sizeof buf);
    return json_string(buf);
}

static json_t *reqs_json(const dra_ns_req *r, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "key", json_string(r[i].key));
        json_object_set_new(o, "operator", json_string(r[i].op_text ? r[i].op_text : ""));
        if (r[i].values.n) json_object_set_new(o, "values", strs_json(&r[i].values));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *dra_node_selector_to_json(const dra_node_selector *ns) {
    json_t *o = json_object();
    json_t *terms = json_array();
    for (uint32_t i = 0; i < ns->nterms; i++) {
        json_t *t = json_object();
        if (ns->terms[i].nexprs) json_object_set_new(t, "matchExpressions", reqs_json(ns->terms[i].exprs, ns->terms[i].nexprs));
        if (ns->terms[i].nfields) json_object_set_new(t, "matchFields", reqs_json(ns->terms[i].fields, ns->terms[i].nfields));
        json_array_append_new(terms, t);
    }
    json_object_set_new(o, "nodeSelectorTerms", terms);
    return o;
}

static json_t *tols_json(const dra_toleration *t, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        json_t *o = json_object();
        if (t[i].key) json_object_set_new(o, "key", json_string(t[i].key));
        if (t[i].op) json_object_set_new(o, "operator", json_string(t[i].op));
        if (t[i].value) json_object_set_new(o, "value", json_string(t[i].value));
        if (t[i].effect) json_object_set_new(o, "effect", json_string(t[i].effect));
        if (t[i].has_seconds) json_object_set_new(o, "tolerationSeconds", json_integer(t[i].seconds));
        json_array_append_new(a, o);
    }
    return a;
}

static int cmp_cap_key(const void *a, const void *b) {
    return strcmp((*(const dra_cap_value *const *)a)->key, (*(const dra_cap_value *const *)b)->key);
}

/* consumedCapacity is a Go map: encoding/json writes its keys sorted. */
static json_t *consumed_json(const dra_cap_value *v, uint32_t n) {
    const dra_cap_value **order = xmalloc(n * sizeof *order);
    for (uint32_t i = 0; i < n; i++) order[i] = &v[i];
    qsort(order, n, sizeof *order, cmp_cap_key);
    json_t *cc = json_object();
    for (uint32_t i = 0; i < n; i++) json_object_set_new(cc, order[i]->key, qty_json(&order[i]->value));
    free(order);
    return cc;
}

json_t *dra_alloc_result_to_json(const dra_alloc_result *r) {
    json_t *o = json_object();
    json_t *devs = json_object();
    json_t *res = json_array();
    for (uint32_t i = 0; i < r->nresults; i++) {
        const dra_device_result *d = &r->results[i];
        json_t *x = json_object();
        json_object_set_new(x, "request", json_string(d->request));
        json_object_set_new(x, "driver", json_string(d->driver));
        json_object_set_new(x, "pool", json_string(d->pool));
        json_object_set_new(x, "device", json_string(d->device));
        if (d->admin_access == 1) json_object_set_new(x, "adminAccess", json_true());
        if (d->ntols) json_object_set_new(x, "tolerations", tols_json(d->tols, d->ntols));
        if (d->binding_conditions.n) json_object_set_new(x, "bindingConditions", strs_json(&d->binding_conditions));
        if (d->binding_failure_conditions.n)
            json_object_set_new(x, "bindingFailureConditions", strs_json(&d->binding_failure_conditions));
        if (d->share_id) json_object_set_new(x, "shareID", json_string(d->share_id));
        if (d->nconsumed) json_object_set_new(x, "consumedCapacity", consumed_json(d->consumed, d->nconsumed));
        json_array_append_new(res, x);
    }
    json_object_set_new(devs, "results", res);
    if (r->nconfigs) {
        json_t *cfg = json_array();
        for (uint32_t i = 0; i < r->nconfigs; i++) {
            const dra_config *c = &r->configs[i];
            json_t *x = json_object();
            json_object_set_new(x, "source", json_string(c->source ? c->source : ""));
            if (c->requests.n) json_object_set_new(x, "requests", strs_json(&c->requests));
            if (c->has_opaque) {
                json_t *op = json_object();
                json_object_set_new(op, "driver", json_string(c->driver ? c->driver : ""));
                if (c->params_json) {
                    json_t *p = json_loads(c->params_json, JSON_DECODE_ANY, NULL);
                    if (p) json_object_set_new(op, "parameters", p);
                }
                json_object_set_new(x, "opaque", op);
            }
            json_array_append_new(cfg, x);
        }
        json_object_set_new(devs, "config", cfg);
    }
    json_object_set_new(o, "devices", devs);
    if (r->node_selector) json_object_set_new(o, "nodeSelector", dra_node_selector_to_json(r->node_selector));
    return o;
}

json_t *dra_claim_json_new(const dra_claim *c, json_t **meta) {
    json_t *o = json_object();
    json_object_set_new(o, "apiVersion", json_string("resource.k8s.io/v1"));
    json_object_set_new(o, "kind", json_string("ResourceClaim"));
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(c->name));
    /* ResourceClaims are namespaced: the API server always fills it in */
    json_object_set_new(m, "namespace", json_string(c->ns && *c->ns ? c->ns : "default"));
    json_object_set_new(o, "metadata", m);
    if (meta) *meta = m;
    return o;
}

void dra_claim_json_set_allocation(json_t *claim, const dra_alloc_result *r) {
    json_t *st = json_object_get(claim, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(claim, "status", st);
    }
    json_object_set_new(st, "allocation", dra_alloc_result_to_json(r));
}
