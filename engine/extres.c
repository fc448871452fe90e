/* extres.c — one Pod on one node (see extres.h): the Pod's claims, its PodGroup's
 * claims, the implicit extended-resource claim and the device-plugin count check,
 * then one allocation of everything still unallocated. Pod and Node fields beyond
 * the model (container resources, schedulingGroup, status.allocatable, phase) are
 * read from the objects' JSON as loaded. */
#include "engine/extres.h"

#include "engine/decode_util.h"
#include "engine/podgroup.h"
#include "engine/world.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DC_PREFIX "deviceclass.resource.kubernetes.io/"
#define MAX_RES 64
#define MAX_CONT 64

/* ---- pod resources ------------------------------------------------------------------ */

/* Kubernetes' extended resource names: domain-qualified, outside kubernetes.io, not a
 * quota "requests." name; the deviceclass.resource.kubernetes.io/<class> form is one. */
static bool is_extended(const char *name) {
    if (!strncmp(name, DC_PREFIX, strlen(DC_PREFIX))) return name[strlen(DC_PREFIX)] != '\0';
    const char *slash = strchr(name, '/');
    if (!slash || !strncmp(name, "requests.", 9)) return false;
    size_t dl = (size_t)(slash - name);
    if (dl == 13 && !strncmp(name, "kubernetes.io", 13)) return false;
    if (dl > 14 && !strncmp(slash - 14, ".kubernetes.io", 14)) return false;
    return true;
}

typedef struct cont {
    const char *name;
    bool init, sidecar;
    const char *res[MAX_RES];   /* extended resources it asks for */
    int64_t count[MAX_RES];
    uint32_t nres;
} cont;

typedef struct podres {
    cont c[MAX_CONT];
    uint32_t nc;
    const char *names[MAX_RES];   /* all extended resource names, sorted */
    int64_t total[MAX_RES];       /* effective pod request */
    int64_t steady[MAX_RES];      /* containers + sidecars */
    int64_t peak[MAX_RES];        /* init peak */
    uint32_t peak_at[MAX_RES];    /* container index of the init peak */
    uint32_t n;
    json_t *doc;                  /* the pod's JSON: names above point into it */
} podres;

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int res_index(const podres *p, const char *name) {
    for (uint32_t i = 0; i < p->n; i++)
        if (!strcmp(p->names[i], name)) return (int)i;
    return -1;
}

static bool qty_int(const json_t *v, int64_t *out) {
    if (json_is_integer(v)) return (*out = json_integer_value(v)), true;
    const char *s = json_string_value(v);
    quantity q;
    err e;
    err_clear(&e);
    return s && quantity_parse(s, strlen(s), &q, &e) && quantity_value_int64(&q, out);
}

/* Adds the extended resources of one resource map (requests or limits) to a
 * container; `skip`: names already taken from the other map. */
static bool read_resources(podres *p, cont *k, const json_t *src, const json_t *skip, err *e) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)src, key, v) {
        if (!is_extended(key) || (skip && json_object_get(skip, key))) continue;
        int64_t n;
        if (!qty_int(v, &n) || n < 0)
            return err_set(e, "container %s: resources %s: extended resources must be whole numbers",
                           k->name ? k->name : "?", key);
        if (k->nres == MAX_RES) return err_set(e, "too many extended resources");
        k->res[k->nres] = key;
        k->count[k->nres++] = n;
        if (res_index(p, key) < 0) {
            if (p->n == MAX_RES) return err_set(e, "too many extended resources");
            p->names[p->n++] = key;
        }
    }
    return true;
}

static bool read_containers(podres *p, const json_t *arr, bool init, err *e) {
    for (size_t i = 0; i < json_array_size(arr); i++) {
        if (p->nc == MAX_CONT) return err_set(e, "too many containers");
        const json_t *c = json_array_get(arr, i);
        cont *k = &p->c[p->nc++];
        k->name = json_string_value(json_object_get(c, "name"));
        k->init = init;
        k->sidecar = init && json_is_string(json_object_get(c, "restartPolicy")) &&
                     !strcmp(json_string_value(json_object_get(c, "restartPolicy")), "Always");
        /* requests, and limits for what requests leave out (the API server defaults
         * requests to limits per resource; for extended resources both must be equal) */
        const json_t *res = json_object_get(c, "resources");
        const json_t *reqs = json_object_get(res, "requests"), *lims = json_object_get(res, "limits");
        if (!read_resources(p, k, reqs, NULL, e) || !read_resources(p, k, lims, reqs, e)) return false;
    }
    return true;
}

static int64_t cont_count(const cont *k, const char *r) {
    for (uint32_t i = 0; i < k->nres; i++)
        if (!strcmp(k->res[i], r)) return k->count[i];
    return 0;
}

/* Reads a pod's extended resources and computes its totals (sidecar rule). */
static bool pod_resources(const char *raw, podres *p, err *e) {
    memset(p, 0, sizeof *p);
    json_t *o = raw ? json_loads(raw, 0, NULL) : NULL;
    const json_t *spec = json_object_get(o, "spec");
    bool ok = read_containers(p, json_object_get(spec, "initContainers"), true, e) &&
              read_containers(p, json_object_get(spec, "containers"), false, e);
    p->doc = o;
    if (!ok) return false;
    qsort(p->names, p->n, sizeof *p->names, cmp_cstr);
    for (uint32_t r = 0; r < p->n; r++) {
        int64_t side = 0, steady = 0, peak = 0;
        uint32_t at = 0;
        for (uint32_t i = 0; i < p->nc; i++) {
            const cont *k = &p->c[i];
            int64_t n = cont_count(k, p->names[r]);
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
    return true;
}

/* ---- node side ---------------------------------------------------------------------------- */

static bool node_allocatable(const dra_node *n, const char *res, int64_t *out) {
    json_t *o = n->raw_json ? json_loads(n->raw_json, 0, NULL) : NULL;
    const json_t *v = json_object_get(json_object_get(json_object_get(o, "status"), "allocatable"), res);
    bool ok = v && qty_int(v, out);
    json_decref(o);
    return ok;
}

static bool same_pod(const dra_pod *a, const dra_pod *b) {
    const char *na = a->ns && *a->ns ? a->ns : "default", *nb = b->ns && *b->ns ? b->ns : "default";
    return a == b || (!strcmp(a->name, b->name) && !strcmp(na, nb));
}

static bool pod_terminated(const dra_pod *p) {
    json_t *o = p->raw_json ? json_loads(p->raw_json, 0, NULL) : NULL;
    const char *ph = json_string_value(json_object_get(json_object_get(o, "status"), "phase"));
    bool t = ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
    json_decref(o);
    return t;
}

/* What the pods bound to the node request of a resource. */
static int64_t node_in_use(const dra_world *w, const dra_node *node, const dra_pod *self, const char *res) {
    int64_t sum = 0;
    for (size_t i = 0; i < w->pods.n; i++) {
        const dra_pod *p = w->pods.v[i];
        if (same_pod(p, self) || !p->node_name || strcmp(p->node_name, node->name) || pod_terminated(p)) continue;
        podres *pr = xcalloc(1, sizeof *pr);
        err e;
        err_clear(&e);
        if (pod_resources(p->raw_json, pr, &e)) {
            int r = res_index(pr, res);
            if (r >= 0) sum += pr->total[r];
        }
        json_decref(pr->doc);
        free(pr);
    }
    return sum;
}

/* The DeviceClass backing an extended resource: the class named by the
 * deviceclass.resource.kubernetes.io/ form, else the class whose extendedResourceName
 * is the name. Several such classes: as Kubernetes documents the field, the one
 * created later wins, and among classes created at the same time the name sorted
 * first (RFC 3339 UTC timestamps compare as text; a class without one counts as
 * oldest). */
static const dra_class *class_for(const dra_world *w, const char *res) {
    if (!strncmp(res, DC_PREFIX, strlen(DC_PREFIX))) return dra_world_find_class(w, res + strlen(DC_PREFIX));
    const dra_class *best = NULL;
    for (size_t i = 0; i < w->classes.n; i++) {
        const dra_class *c = w->classes.v[i];
        if (!c->extended_resource_name || strcmp(c->extended_resource_name, res)) continue;
        int t = best ? strcmp(c->creation_timestamp ? c->creation_timestamp : "", best->creation_timestamp ? best->creation_timestamp : "") : 1;
        if (t > 0 || (t == 0 && strcmp(c->name, best->name) < 0)) best = c;
    }
    return best;
}

/* ---- output --------------------------------------------------------------------------------- */

static json_t *outcome_unsat(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *outcome_unsat(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_t *o = json_object();
    json_object_set_new(o, "unsatisfiable", json_true());
    json_object_set_new(o, "reason", json_string(buf));
    return o;
}

static json_t *outcome_error(const char *msg) {
    json_t *o = json_object();
    json_object_set_new(o, "error", json_string(msg));
    return o;
}

static const char *claim_ref(const dra_claim *c, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", c->ns && *c->ns ? c->ns : "default", c->name);
    return buf;
}

static json_t *claim_object(const dra_claim *c, bool implicit, const dra_alloc_result *r) {
    json_t *o = NULL;
    if (c->raw_json && !c->from_template && !implicit) o = json_loads(c->raw_json, 0, NULL);
    if (!o) {
        json_t *m;
        o = dra_claim_json_new(c, &m);
        if (implicit) {
            json_t *an = json_object();
            json_object_set_new(an, "resource.kubernetes.io/extended-resource-claim", json_string("true"));
            json_object_set_new(m, "annotations", an);
        }
        json_t *spec = NULL;
        if (c->raw_json && !implicit) spec = json_loads(c->raw_json, 0, NULL);
        if (!spec) {
            spec = json_object();
            json_t *devs = json_object(), *reqs = json_array();
            for (uint32_t i = 0; i < c->nreqs; i++) {
                const dra_request_spec *s = &c->reqs[i].exactly;
                json_t *ex = json_object();
                json_object_set_new(ex, "deviceClassName", json_string(s->class_name));
                json_object_set_new(ex, "allocationMode", json_string(s->mode));
                json_object_set_new(ex, "count", json_integer(s->count));
                json_t *rq = json_object();
                json_object_set_new(rq, "name", json_string(c->reqs[i].name));
                json_object_set_new(rq, "exactly", ex);
                json_array_append_new(reqs, rq);
            }
            json_object_set_new(devs, "requests", reqs);
            json_object_set_new(spec, "devices", devs);
        }
        json_object_set_new(o, "spec", spec);
    }
    dra_claim_json_set_allocation(o, r);
    return o;
}

/* ---- the pod ------------------------------------------------------------------------------- */

const dra_pod *dra_extres_find_pod(const dra_world *w, const char *ns, const char *name) {
    dra_pod key = {.ns = ns, .name = name};
    for (size_t i = 0; i < w->pods.n; i++)
        if (same_pod(w->pods.v[i], &key)) return w->pods.v[i];
    return NULL;
}

const dra_claim *dra_extres_pod_claim(dra_world *w, const dra_pod *pod, const dra_pod_claim *pc) {
    const dra_claim *c = NULL;
    if (pc->claim_name) c = dra_world_find_claim(w, pod->ns, pc->claim_name);
    else if (pc->generated_name) c = dra_world_find_claim(w, pod->ns, pc->generated_name);
    if (!c && pc->template_name) {
        const dra_claim_template *t = dra_world_find_template(w, pod->ns, pc->template_name);
        if (t) {
            char nm[512];
            snprintf(nm, sizeof nm, "%s-%s", pod->name, pc->name ? pc->name : "claim");
            c = dra_world_claim_from_template(w, t, pod->ns, nm);
        }
    }
    return c;
}

static const char *group_name(const dra_pod *pod) {
    static __thread char buf[256];
    json_t *o = pod->raw_json ? json_loads(pod->raw_json, 0, NULL) : NULL;
    const char *g = json_string_value(
        json_object_get(json_object_get(json_object_get(o, "spec"), "schedulingGroup"), "podGroupName"));
    if (g) snprintf(buf, sizeof buf, "%s", g);
    json_decref(o);
    return g ? buf : NULL;
}

/* The implicit claim with one ExactCount request per container and DRA-backed
 * resource; NULL when the pod has none. */
static dra_claim *implicit_claim(dra_world *w, const dra_pod *pod, const podres *p, const dra_class *const *cls) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nc; i++) n += p->c[i].nres;
    n += p->n;   /* init excess requests */
    dra_request *reqs = ARENA_NEWN(&w->mem, dra_request, n ? n : 1);
    uint32_t nr = 0;
    for (uint32_t i = 0; i < p->nc; i++) {
        const cont *k = &p->c[i];
        const char *sorted[MAX_RES];
        uint32_t ns = 0;
        for (uint32_t j = 0; j < k->nres; j++)
            if (cls[res_index(p, k->res[j])]) sorted[ns++] = k->res[j];
        qsort(sorted, ns, sizeof *sorted, cmp_cstr);
        for (uint32_t j = 0; j < ns; j++) {
            int r = res_index(p, sorted[j]);
            int64_t count = k->init && !k->sidecar ? (p->peak_at[r] == i ? p->peak[r] - p->steady[r] : 0)
                                                   : cont_count(k, sorted[j]);
            if (count <= 0) continue;
            dra_request *q = &reqs[nr++];
            q->name = arena_printf(&w->mem, "container-%u-request-%u", i, j);
            q->has_exactly = true;
            q->exactly.name = q->name;
            q->exactly.class_name = cls[r]->name;
            q->exactly.mode = "ExactCount";
            q->exactly.count = count;
            q->exactly.has_count = true;
            q->exactly.admin_access = -1;
        }
    }
    if (!nr) return NULL;
    dra_claim *c = ARENA_NEW(&w->mem, dra_claim);
    c->ns = pod->ns;
    c->name = arena_printf(&w->mem, "%s-extended-resources", pod->name);
    c->has_spec = true;
    c->reqs = reqs;
    c->nreqs = nr;
    return c;
}

/* An allocated claim can only be used where its status.allocation.nodeSelector
 * allows (none: everywhere). */
static bool usable_on(dra_world *w, const dra_claim *c, const dra_node *node) {
    json_t *o = c->raw_json ? json_loads(c->raw_json, 0, NULL) : NULL;
    const json_t *sel = json_object_get(json_object_get(json_object_get(o, "status"), "allocation"), "nodeSelector");
    bool ok = true;
    if (sel) {
        err e;
        err_clear(&e);
        dctx dc;
        dra_dctx_init(&dc, &w->dec, &e, "ResourceClaim", o);
        dra_node_selector *ns = NULL;
        bool m = false;
        ok = dra_ddecode_node_selector(&dc, sel, &ns) && (!ns || (dra_node_matches(node, NULL, false, ns, &m, &e) && m));
    }
    json_decref(o);
    return ok;
}

static bool listed(const dra_claim *const *v, size_t n, const dra_claim *c) {
    for (size_t i = 0; i < n; i++)
        if (v[i] == c) return true;
    return false;
}

json_t *dra_pod_allocate(dra_world *w, const dra_pod *pod, const dra_node *node, const dra_features *f,
                         dra_allocated *st) {
    char buf[2048];
    const char *pns = pod->ns && *pod->ns ? pod->ns : "default";
    podres *p = xcalloc(1, sizeof *p);
    const dra_claim *todo[72];
    size_t ntodo = 0;
    json_t *reused = json_array(), *dp = json_object(), *out = NULL;
    err e;
    err_clear(&e);
    if (!pod_resources(pod->raw_json, p, &e)) {
        snprintf(buf, sizeof buf, "Pod %s/%s: %s", pns, pod->name, e.msg);
        out = outcome_error(buf);
        goto done;
    }
    /* extended resources: device plugin on this node, else DRA */
    const dra_class *cls[MAX_RES] = {0};
    for (uint32_t r = 0; r < p->n; r++) {
        const char *res = p->names[r];
        int64_t alloc;
        if (p->total[r] == 0) continue;
        if (node_allocatable(node, res, &alloc)) {
            int64_t used = node_in_use(w, node, pod, res);
            json_t *o = json_object();
            json_object_set_new(o, "allocatable", json_integer(alloc));
            json_object_set_new(o, "inUse", json_integer(used));
            json_object_set_new(o, "requested", json_integer(p->total[r]));
            json_object_set_new(dp, res, o);
            if (alloc - used < p->total[r]) {
                out = outcome_unsat("Insufficient %s: node %s has %lld allocatable, %lld in use, pod requests %lld", res,
                                    node->name, (long long)alloc, (long long)used, (long long)p->total[r]);
                goto done;
            }
            continue;
        }
        cls[r] = f->extended_resource ? class_for(w, res) : NULL;
        if (!cls[r]) {
            if (!strncmp(res, DC_PREFIX, strlen(DC_PREFIX)))
                out = outcome_unsat("Insufficient %s: no DeviceClass %s and no device plugin on node %s", res,
                                    res + strlen(DC_PREFIX), node->name);
            else
                out = outcome_unsat("Insufficient %s: no device plugin on node %s and no DeviceClass with "
                                    "extendedResourceName %s%s",
                                    res, node->name, res, f->extended_resource ? "" : " (DRAExtendedResource is disabled)");
            goto done;
        }
    }
    /* the pod's claims */
    const char *gname = f->workload_claims ? group_name(pod) : NULL;
    const dra_podgroup *g = gname ? dra_podgroup_find(w, pod->ns, gname) : NULL;
    if (gname && !g) {
        snprintf(buf, sizeof buf, "Pod %s/%s: PodGroup %s/%s not found", pns, pod->name, pns, gname);
        out = outcome_unsat("%s", buf);
        goto done;
    }
    for (uint32_t k = 0; k < pod->nclaims; k++) {
        const dra_pod_claim *pc = &pod->claims[k];
        const dra_claim *c = NULL;
        const char *what = pc->claim_name ? pc->claim_name : pc->template_name ? pc->template_name : "?";
        if (g && dra_podgroup_claim(w, g, pc, &c)) {
            if (!c) {
                snprintf(buf, sizeof buf, "Pod %s/%s: claim %s of PodGroup %s: ResourceClaim or template %s not found", pns,
                         pod->name, pc->name ? pc->name : "?", gname, what);
                out = outcome_unsat("%s", buf);
                goto done;
            }
        } else {
            c = dra_extres_pod_claim(w, pod, pc);
            if (!c) {
                snprintf(buf, sizeof buf, "Pod %s/%s: claim %s: ResourceClaim or template %s not found", pns, pod->name,
                         pc->name ? pc->name : "?", what);
                out = outcome_unsat("%s", buf);
                goto done;
            }
        }
        if (c->allocated) {
            char ref[600];
            claim_ref(c, ref, sizeof ref);
            if (!usable_on(w, c, node)) {
                out = outcome_unsat("ResourceClaim %s is allocated for other nodes than %s", ref, node->name);
                goto done;
            }
            json_array_append_new(reused, json_string(ref));
        } else if (!listed(todo, ntodo, c) && ntodo < 64) {
            todo[ntodo++] = c;
        }
    }
    size_t nown = ntodo;
    const dra_claim *imp = implicit_claim(w, pod, p, cls);
    if (imp) todo[ntodo++] = imp;
    json_t *claims = json_array(), *allocs = json_array();
    if (ntodo) {
        dra_nodeview *v = dra_nodeview_new(w, node, f, &e);
        if (!v) {
            json_decref(claims);
            json_decref(allocs);
            out = outcome_unsat("%s", e.msg);
            goto done;
        }
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        dra_alloc_result *res;
        err ae;
        err_clear(&ae);
        dra_alloc_status s = dra_allocate(x, v, st, todo, ntodo, &res, &ae);
        if (s == DRA_ALLOC_OK) {
            for (size_t i = 0; i < ntodo; i++) {
                json_array_append_new(claims, claim_object(todo[i], i >= nown, &res[i]));
                json_array_append_new(allocs, dra_alloc_result_to_json(&res[i]));
                if (st) dra_allocated_add_result(st, &res[i], f->consumable_capacity);
            }
        } else if (s == DRA_ALLOC_UNSAT) {
            out = outcome_unsat("cannot allocate all claims of Pod %s/%s on node %s", pns, pod->name, node->name);
        } else if (s == DRA_ALLOC_NODE_ERROR) {
            out = outcome_unsat("%s", ae.msg);
        } else {
            out = outcome_error(ae.msg);
        }
        dra_alloc_ctx_free(x);
        dra_nodeview_free(v);
    }
    if (out) {
        json_decref(claims);
        json_decref(allocs);
        goto done;
    }
    out = json_object();
    json_object_set_new(out, "claims", claims);
    json_object_set_new(out, "allocations", allocs);
    json_object_set(out, "reused", reused);
    json_object_set(out, "devicePlugin", dp);
done:
    json_decref(reused);
    json_decref(dp);
    json_decref(p->doc);
    free(p);
    return out;
}
