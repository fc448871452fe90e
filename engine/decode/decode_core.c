/* decode_core.c — core/v1 Nodes and Pods, decoded once into everything requests read:
 * a Node's labels, taints, unschedulable flag and allocatable resources (whole counts
 * for extended resources; cpu, memory and pods for NodeResourcesFit), a Pod's claim
 * entries and their statuses, UID, PodGroup, phase, effective cpu/memory requests,
 * extended resources (podplan.h) and node requirements (nodeName, nodeSelector,
 * required node affinity, tolerations: nodefit.c). The store, one-shot worlds and
 * requests (a Pod in /filter, a Node carried in the request) all call
 * dra__decode_node / dra__decode_pod; nothing is read from a Pod's or Node's JSON again.
 *
 * The API server's defaulting applies (as it does before anything is stored):
 * SetDefaults_NodeStatus copies status.capacity into status.allocatable when the
 * latter is absent, and a container's requests default to its limits per resource.
 * Each public decoder first runs validate.h's steps (apiVersion, unknown fields). */
#include "engine/decode/decode_util.h"
#include "engine/decode/validate.h"

#include <stdlib.h>
#include <string.h>


/* ---- quantities ------------------------------------------------------------------------ */

/* A whole count (extended resources are whole numbers). */
static bool qty_int(const json_t *v, int64_t *out) {
    if (json_is_integer(v)) return (*out = json_integer_value(v)), true;
    const char *s = json_string_value(v);
    quantity q;
    err e;
    err_clear(&e);
    return s && quantity_parse(s, strlen(s), &q, &e) && quantity_value_int64(&q, out);
}

/* A quantity in units of 10^scale (cpu: -3, millicores). */
static bool qty_scaled(const json_t *v, int32_t scale, int64_t *out) {
    const char *s = json_string_value(v);
    quantity q;
    err e;
    err_clear(&e);
    if (json_is_integer(v)) q = quantity_from_int(json_integer_value(v), QTY_DECIMAL_SI);
    else if (!s || !quantity_parse(s, strlen(s), &q, &e)) return false;
    return quantity_scaled_value(&q, scale, out);
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int cmp_res_count(const void *a, const void *b) {
    return strcmp(((const dra_res_count *)a)->name, ((const dra_res_count *)b)->name);
}

/* ---- Node ------------------------------------------------------------------------------ */

static bool decode_labels(dctx *c, const json_t *meta, dra_node *n) {
    const json_t *labels;
    if (!meta) return true;
    size_t m = dra__dpush_key(c, "metadata");
    if (!dra__dget_obj(c, meta, "labels", &labels)) return false;
    if (labels) {
        size_t cnt = json_object_size(labels);
        n->labels = ARENA_NEWN(c->d->a, dra_label, cnt ? cnt : 1);
        size_t m2 = dra__dpush_key(c, "labels");
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)labels, k, v) {
            dra_label *l = &n->labels[n->nlabels];
            l->key = dra__dstrdup(c, k);
            if (!dra__dget_str(c, labels, k, &l->value)) return false;
            if (!l->value) l->value = "";
            n->nlabels++;
        }
        dpop(c, m2);
    }
    dpop(c, m);
    return true;
}

static void decode_taints(dctx *c, const json_t *spec, dra_node *n) {
    const json_t *taints = json_object_get(spec, "taints");
    size_t nt = json_is_array(taints) ? json_array_size(taints) : 0;
    n->taints = nt ? ARENA_NEWN(c->d->a, dra_taint, nt) : NULL;
    for (size_t i = 0; i < nt; i++) {
        const json_t *t = json_array_get(taints, i);
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *v = json_string_value(json_object_get(t, "value"));
        const char *ef = json_string_value(json_object_get(t, "effect"));
        if (!k) continue;
        n->taints[n->ntaints++] = (dra_taint){dra__dstrdup(c, k), v ? dra__dstrdup(c, v) : NULL,
                                              ef ? dra__dstrdup(c, ef) : NULL, NULL};
    }
}

/* status.conditions: the Ready condition present with a status other than "True" —
 * what `kubectl get nodes` prints as NotReady (False: the kubelet says so; Unknown: the
 * node lifecycle controller lost it). */
static bool node_not_ready(const json_t *obj) {
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i;
    const json_t *cd;
    json_array_foreach(conds, i, cd) {
        const char *t = json_string_value(json_object_get(cd, "type"));
        const char *st = json_string_value(json_object_get(cd, "status"));
        if (t && !strcmp(t, "Ready")) return !st || strcmp(st, "True");
    }
    return false;
}

/* status.allocatable, or status.capacity when allocatable is absent
 * (SetDefaults_NodeStatus, pkg/apis/core/v1/defaults.go: the API server copies it
 * before the Node is stored). */
static void decode_allocatable(dctx *c, const json_t *obj, dra_node *n) {
    const json_t *status = json_object_get(obj, "status");
    const json_t *al = json_object_get(status, "allocatable");
    if (!json_is_object(al)) al = json_object_get(status, "capacity");
    n->alloc_cpu_milli = n->alloc_memory = n->alloc_pods = -1;
    n->has_allocatable = json_is_object(al);
    if (!n->has_allocatable) return;
    size_t cnt = json_object_size(al);
    n->allocatable = cnt ? ARENA_NEWN(c->d->a, dra_res_count, cnt) : NULL;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)al, k, v) {
        int64_t x;
        if (!qty_int(v, &x)) continue;   /* cpu "3500m": not a count; extended resources are whole */
        n->allocatable[n->nallocatable++] = (dra_res_count){dra__dstrdup(c, k), x};
    }
    if (n->nallocatable) qsort(n->allocatable, n->nallocatable, sizeof *n->allocatable, cmp_res_count);
    int64_t x;
    if (qty_scaled(json_object_get(al, "cpu"), -3, &x)) n->alloc_cpu_milli = x;
    if (qty_scaled(json_object_get(al, "memory"), 0, &x)) n->alloc_memory = x;
    if (qty_scaled(json_object_get(al, "pods"), 0, &x)) n->alloc_pods = x;
}

static bool decode_node_v1(const dra_decoder *d, const json_t *obj, void *out, err *e) {
    dra_node *n = out;
    dctx c;
    dra__dctx_init(&c, d, e, "Node", obj);
    memset(n, 0, sizeof *n);
    const char *ns;
    if (!dra__ddecode_meta(&c, obj, &ns, &n->name)) return false;
    if (!n->name) n->name = "";
    if (!decode_labels(&c, json_object_get(obj, "metadata"), n)) return false;
    const json_t *spec = json_object_get(obj, "spec");
    n->unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
    decode_taints(&c, spec, n);
    decode_allocatable(&c, obj, n);
    n->not_ready = node_not_ready(obj);
    n->raw_json = dra__djson_text(&c, obj);
    return true;
}

/* ---- Pod: extended resources ------------------------------------------------------------- */

/* Kubernetes' extended resource names: domain-qualified, outside kubernetes.io, not a
 * quota "requests." name; the deviceclass.resource.kubernetes.io/<class> form is one. */
static bool is_extended(const char *name) {
    if (!strncmp(name, DRA_DC_PREFIX, strlen(DRA_DC_PREFIX))) return name[strlen(DRA_DC_PREFIX)] != '\0';
    const char *slash = strchr(name, '/');
    if (!slash || !strncmp(name, "requests.", 9)) return false;
    size_t dl = (size_t)(slash - name);
    if (dl == 13 && !strncmp(name, "kubernetes.io", 13)) return false;
    if (dl > 14 && !strncmp(slash - 14, ".kubernetes.io", 14)) return false;
    return true;
}

/* One container: every resource key (requests, and limits for what requests leave
 * out — the API server defaults requests to limits per resource) and its extended
 * resources. */
static bool read_container(arena *a, const json_t *c, bool init, dra_podres_cont *k, err *e) {
    k->name = json_string_value(json_object_get(c, "name"));
    if (k->name) k->name = arena_strdup(a, k->name);
    const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
    k->init = init;
    k->sidecar = init && rp && !strcmp(rp, "Always");
    const json_t *res = json_object_get(c, "resources");
    const json_t *maps[2] = {json_object_get(res, "requests"), json_object_get(res, "limits")};
    size_t cap = json_object_size(maps[0]) + json_object_size(maps[1]);
    k->keys = ARENA_NEWN(a, const char *, cap ? cap : 1);
    k->res = ARENA_NEWN(a, const char *, cap ? cap : 1);
    k->count = ARENA_NEWN(a, int64_t, cap ? cap : 1);
    for (int m = 0; m < 2; m++) {
        if (maps[m] && !json_is_object(maps[m]))
            return err_set(e, "container %s: resources.%s: expected an object", k->name ? k->name : "?",
                           m ? "limits" : "requests");
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)maps[m], key, v) {
            if (m == 1 && json_object_get(maps[0], key)) continue;
            k->keys[k->nkeys++] = arena_strdup(a, key);
            if (!is_extended(key)) continue;
            int64_t n;
            if (!qty_int(v, &n) || n < 0)
                return err_set(e, "container %s: resources %s: extended resources must be whole numbers",
                               k->name ? k->name : "?", key);
            k->res[k->nres] = k->keys[k->nkeys - 1];
            k->count[k->nres++] = n;
        }
    }
    qsort(k->keys, k->nkeys, sizeof *k->keys, cmp_cstr);
    return true;
}

static bool has_name(const char *const *v, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(v[i], name)) return true;
    return false;
}

/* The pod's extended resources and their effective totals; *out NULL when it asks
 * for none. */
static bool read_podres(arena *a, const json_t *spec, const dra_podres **out, err *e) {
    *out = NULL;
    const json_t *lists[2] = {json_object_get(spec, "initContainers"), json_object_get(spec, "containers")};
    size_t nc = json_array_size(lists[0]) + json_array_size(lists[1]);
    dra_podres *p = ARENA_NEW(a, dra_podres);
    p->c = ARENA_NEWN(a, dra_podres_cont, nc ? nc : 1);
    uint32_t nnames = 0;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < json_array_size(lists[l]); i++) {
            dra_podres_cont *k = &p->c[p->nc++];
            if (!read_container(a, json_array_get(lists[l], i), l == 0, k, e)) return false;
            nnames += k->nres;
        }
    if (!nnames) return true;
    p->names = ARENA_NEWN(a, const char *, nnames);
    for (uint32_t i = 0; i < p->nc; i++)
        for (uint32_t j = 0; j < p->c[i].nres; j++)
            if (!has_name(p->names, p->n, p->c[i].res[j])) p->names[p->n++] = p->c[i].res[j];
    qsort(p->names, p->n, sizeof *p->names, cmp_cstr);
    p->total = ARENA_NEWN(a, int64_t, p->n);
    p->steady = ARENA_NEWN(a, int64_t, p->n);
    p->peak = ARENA_NEWN(a, int64_t, p->n);
    p->peak_at = ARENA_NEWN(a, uint32_t, p->n);
    for (uint32_t r = 0; r < p->n; r++) {
        int64_t side = 0, steady = 0, peak = 0;
        uint32_t at = 0;
        for (uint32_t i = 0; i < p->nc; i++) {
            const dra_podres_cont *k = &p->c[i];
            int64_t n = dra_podres_cont_count(k, p->names[r]);
            if (k->init && !k->sidecar) {
                if (n + side > peak) peak = n + side, at = i;
            } else {
                steady += n;
                if (k->sidecar) side += n;
            }
        }
        p->steady[r] = steady;
        p->peak[r] = peak;
        p->peak_at[r] = at;
        p->total[r] = peak > steady ? peak : steady;
    }
    *out = p;
    return true;
}

/* ---- Pod: cpu and memory ------------------------------------------------------------------ */

/* A container's request of one resource: requests, else limits (the API server's
 * default), 0 when neither. */
static int64_t cont_req(const json_t *c, const char *res, int32_t scale) {
    const json_t *r = json_object_get(c, "resources");
    int64_t v = 0;
    if (qty_scaled(json_object_get(json_object_get(r, "requests"), res), scale, &v)) return v;
    if (qty_scaled(json_object_get(json_object_get(r, "limits"), res), scale, &v)) return v;
    return 0;
}

/* The effective request: app containers plus sidecars, or the largest init container
 * with the sidecars started before it, plus the pod overhead. */
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

/* ---- Pod: node requirements ------------------------------------------------------------- */

static bool read_nodefit(dctx *c, const json_t *spec, dra_nodefit *out) {
    memset(out, 0, sizeof *out);
    const char *nn = json_string_value(json_object_get(spec, "nodeName"));
    out->node_name = nn && *nn ? dra__dstrdup(c, nn) : NULL;
    const json_t *ns = json_object_get(spec, "nodeSelector");
    if (json_is_object(ns)) {
        out->selector = ARENA_NEWN(c->d->a, dra_label, json_object_size(ns) ? json_object_size(ns) : 1);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)ns, k, v) {
            const char *s = json_string_value(v);
            out->selector[out->nselector++] = (dra_label){dra__dstrdup(c, k), dra__dstrdup(c, s ? s : "")};
        }
    }
    const json_t *tols = json_object_get(spec, "tolerations");
    size_t nt = json_is_array(tols) ? json_array_size(tols) : 0;
    out->tols = nt ? ARENA_NEWN(c->d->a, dra_node_toleration, nt) : NULL;
    for (size_t i = 0; i < nt; i++) {
        const json_t *t = json_array_get(tols, i);
        dra_node_toleration *o = &out->tols[out->ntols++];
        const char *f[4] = {json_string_value(json_object_get(t, "key")), json_string_value(json_object_get(t, "operator")),
                            json_string_value(json_object_get(t, "value")), json_string_value(json_object_get(t, "effect"))};
        o->key = f[0] ? dra__dstrdup(c, f[0]) : "";
        o->exists = f[1] && !strcmp(f[1], "Exists");
        o->value = f[2] ? dra__dstrdup(c, f[2]) : "";
        o->effect = f[3] ? dra__dstrdup(c, f[3]) : "";
    }
    const json_t *req = json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
                                        "requiredDuringSchedulingIgnoredDuringExecution");
    if (!req || json_is_null(req)) return true;
    size_t m = dra__dpush_key(c, "spec");
    dra__dpush_key(c, "affinity");
    dra__dpush_key(c, "nodeAffinity");
    dra__dpush_key(c, "requiredDuringSchedulingIgnoredDuringExecution");
    bool ok = dra__ddecode_node_selector(c, req, &out->affinity);
    dpop(c, m);
    return ok;
}

static bool decode_pod_v1(const dra_decoder *d, const json_t *obj, void *out, err *e) {
    dra_pod *p = out;
    dctx c;
    dra__dctx_init(&c, d, e, "Pod", obj);
    memset(p, 0, sizeof *p);
    if (!dra__ddecode_meta(&c, obj, &p->ns, &p->name)) return false;
    if (!p->name) p->name = "";
    const json_t *meta = json_object_get(obj, "metadata");
    if (json_is_object(meta) && !dra__dget_str(&c, meta, "uid", &p->uid)) return false;
    if (p->uid && !*p->uid) p->uid = NULL;
    const json_t *spec, *status;
    if (!dra__dget_obj(&c, obj, "spec", &spec) || !dra__dget_obj(&c, obj, "status", &status)) return false;
    if (spec) {
        size_t m = dra__dpush_key(&c, "spec");
        if (!dra__dget_str(&c, spec, "nodeName", &p->node_name)) return false;
        if (!DRA_DGET_OBJS(&c, spec, "resourceClaims", &p->claims, &p->nclaims, dra__ddecode_claim_ref, NULL)) return false;
        dpop(&c, m);
        const char *g = json_string_value(json_object_get(json_object_get(spec, "schedulingGroup"), "podGroupName"));
        p->group_name = g ? dra__dstrdup(&c, g) : NULL;
    }
    if (status && !dra__ddecode_claim_statuses(&c, status, p->claims, p->nclaims)) return false;
    const char *ph = json_string_value(json_object_get(status, "phase"));
    p->terminated = ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
    p->req_cpu_milli = effective(spec, "cpu", -3);
    p->req_memory = effective(spec, "memory", 0);
    /* what cannot be read here does not stop the pod from loading: it is reported
     * when the pod is decided (a bound pod's problem is not every pod's) */
    err pe;
    err_clear(&pe);
    if (!read_podres(d->a, spec, &p->res, &pe)) {
        p->res = NULL;
        p->res_error = dra__dstrdup(&c, pe.msg);
    }
    err fe;
    err_clear(&fe);
    dctx fc;
    dra__dctx_init(&fc, d, &fe, "Pod", obj);
    if (!read_nodefit(&fc, spec, &p->fit)) {
        char buf[1400];
        p->fit_error = dra__dstrdup(&c, err_format(&fe, buf, sizeof buf));
    }
    p->raw_json = dra__djson_text(&c, obj);
    return true;
}

/* ---- entry points ---------------------------------------------------------------------- */

bool dra__decode_node(const dra_decoder *d, const json_t *obj, dra_node *out, err *e) {
    return dra__input_decode(d, "Node", obj, decode_node_v1, out, e);
}

bool dra__decode_pod(const dra_decoder *d, const json_t *obj, dra_pod *out, err *e) {
    return dra__input_decode(d, "Pod", obj, decode_pod_v1, out, e);
}
