/* decode_claim.c — DeviceClass, ResourceClaim (spec and status.allocation),
 * ResourceClaimTemplate (core/v1 Nodes and Pods: decode_core.c).
 * Requests keep every v1 field (exactly / firstAvailable, selectors, allocationMode,
 * count, adminAccess, tolerations, capacity requests), so features that are still
 * off in the allocator only need logic, not decoding. Each public decoder runs
 * engine/decode/validate.h's steps first (apiVersion, v1beta1 → v1, unknown fields, the API
 * server's validation) and decodes the v1 object. */
#include "engine/decode/decode_util.h"
#include "engine/decode/validate.h"

#include <stdlib.h>
#include <string.h>

static bool decode_selector(dctx *c, const json_t *s, void *elem, void *ud) {
    (void)ud;
    dra_selector *sel = elem;
    const json_t *cel;
    if (!dra__dget_obj(c, s, "cel", &cel)) return false;
    if (!cel) return true;
    size_t m = dra__dpush_key(c, "cel");
    if (!dra__dget_str(c, cel, "expression", &sel->cel)) return false;
    if (!sel->cel) sel->cel = "";
    dpop(c, m);
    /* compiled now, held by the object; the allocator reports a compile error
     * where Kubernetes does: when a device reaches the selector */
    err ce;
    err_clear(&ce);
    char *text;
    sel->prog = dra__cat_compile(c->d->cat, c->d->holds, false, sel->cel, strlen(sel->cel), &ce, &text);
    if (!sel->prog) sel->compile_error = dra__dstrdup(c, text ? text : ce.msg);
    free(text);
    return true;
}

static bool decode_config(dctx *c, const json_t *cf, void *elem, void *ud) {
    (void)ud;
    dra_config *x = elem;
    if (!dra__dget_strs(c, cf, "requests", &x->requests)) return false;
    const json_t *op;
    if (!dra__dget_obj(c, cf, "opaque", &op)) return false;
    if (op) {
        x->has_opaque = true;
        size_t m = dra__dpush_key(c, "opaque");
        if (!dra__dget_str(c, op, "driver", &x->driver)) return false;
        const json_t *p = json_object_get(op, "parameters");
        /* kept by every store: kube-scheduler copies it into the allocation result */
        if (p) x->params_json = dra__djson_part(c, p);
        dpop(c, m);
    }
    return true;
}

static bool decode_toleration(dctx *c, const json_t *t, void *elem, void *ud) {
    (void)ud;
    dra_toleration *x = elem;
    return dra__dget_str(c, t, "key", &x->key) && dra__dget_str(c, t, "operator", &x->op) &&
           dra__dget_str(c, t, "value", &x->value) && dra__dget_str(c, t, "effect", &x->effect) &&
           dra__dget_int(c, t, "tolerationSeconds", &x->seconds, &x->has_seconds);
}

/* One of derivedAttributes (derived.h: validated and evaluated by the allocator,
 * which reports their errors where Kubernetes' validation does). */
static bool decode_derived(dctx *c, const json_t *da, void *elem, void *ud) {
    (void)ud;
    dra_derived_attr *x = elem;
    if (!dra__dget_str(c, da, "name", &x->name) || !dra__dget_str(c, da, "expression", &x->expression)) return false;
    if (!x->name) x->name = "";
    if (!x->expression) x->expression = "";
    /* compiled now, held by the claim; prepare reports a compile error (or a
     * missing or too long expression) as Kubernetes' validation words it */
    size_t len = strlen(x->expression);
    if (len && len <= CEL_MAX_EXPRESSION_LEN) {
        err ce;
        err_clear(&ce);
        char *text;
        x->prog = dra__cat_compile(c->d->cat, c->d->holds, true, x->expression, len, &ce, &text);
        if (!x->prog) x->compile_error = dra__dstrdup(c, text ? text : ce.msg);
        free(text);
    }
    dra__split_qualified(c->d, x->name, 0, &x->domain, &x->id);   /* domain 0: unqualified */
    if (x->id > CEL_ATTR_NAME_MAX) {
        dra__dpush_key(c, "name");
        return dra__dfail(c, "the attribute name is past the %u distinct names a device view holds",
                         CEL_ATTR_NAME_MAX + 1u);
    }
    return true;
}

static bool decode_request_spec(dctx *c, const json_t *o, dra_request_spec *r, bool sub) {
    if (!dra__dget_str(c, o, "name", &r->name)) return false;
    if (!dra__dget_str(c, o, "deviceClassName", &r->class_name)) return false;
    if (!r->class_name) r->class_name = "";
    if (!DRA_DGET_OBJS(c, o, "selectors", &r->selectors, &r->nselectors, decode_selector, NULL)) return false;
    if (!dra__dget_str(c, o, "allocationMode", &r->mode)) return false;
    if (!dra__dget_int(c, o, "count", &r->count, &r->has_count)) return false;
    if (c->d->apply_defaults) {
        if (!r->mode || !*r->mode) r->mode = "ExactCount";
        /* SetDefaults_ExactDeviceRequest: Count is a plain int64, so an explicit 0
         * is indistinguishable from unset and becomes 1 as well */
        if ((!r->has_count || r->count == 0) && !strcmp(r->mode, "ExactCount")) r->count = 1, r->has_count = true;
    }
    if (!r->mode) r->mode = "";
    r->admin_access = -1;
    if (!sub && !dra__dget_bool(c, o, "adminAccess", &r->admin_access)) return false;
    if (!DRA_DGET_OBJS(c, o, "tolerations", &r->tols, &r->ntols, decode_toleration, NULL)) return false;
    const json_t *cap;
    if (!dra__dget_obj(c, o, "capacity", &cap)) return false;
    if (cap) {
        r->has_capacity = true;
        size_t m = dra__dpush_key(c, "capacity");
        const json_t *reqs;
        if (!dra__dget_obj(c, cap, "requests", &reqs)) return false;
        if (reqs) {
            size_t n = json_object_size(reqs);
            r->caps = ARENA_NEWN(c->d->a, dra_cap_request, n ? n : 1);
            size_t m2 = dra__dpush_key(c, "requests");
            const char *k;
            const json_t *v;
            json_object_foreach((json_t *)reqs, k, v) {
                size_t m3 = dra__dpush_mapkey(c, k);
                dra_cap_request *q = &r->caps[r->ncaps++];
                q->key = dra__dstrdup(c, k);
                if (!dra__dqty(c, v, &q->value)) return false;
                dpop(c, m3);
            }
            dpop(c, m2);
        }
        dpop(c, m);
    }
    return DRA_DGET_OBJS(c, o, "derivedAttributes", &r->derived, &r->nderived, decode_derived, NULL);
}

static bool decode_sub_request(dctx *c, const json_t *sr, void *elem, void *ud) {
    (void)ud;
    dra_request_spec *r = elem;
    if (!decode_request_spec(c, sr, r, true)) return false;
    if (!r->name) r->name = "";
    return true;
}

static bool decode_request(dctx *c, const json_t *rq, void *elem, void *ud) {
    (void)ud;
    dra_request *r = elem;
    if (!dra__dget_str(c, rq, "name", &r->name)) return false;
    if (!r->name) r->name = "";
    const json_t *ex;
    if (!dra__dget_obj(c, rq, "exactly", &ex)) return false;
    if (ex) {
        r->has_exactly = true;
        size_t m = dra__dpush_key(c, "exactly");
        if (!decode_request_spec(c, ex, &r->exactly, false)) return false;
        dpop(c, m);
    }
    r->exactly.name = r->name;
    if (!ex) r->exactly.admin_access = -1, r->exactly.class_name = "", r->exactly.mode = "";
    return DRA_DGET_OBJS(c, rq, "firstAvailable", &r->subs, &r->nsubs, decode_sub_request, NULL);
}

static bool decode_constraint(dctx *c, const json_t *k, void *elem, void *ud) {
    (void)ud;
    dra_constraint *x = elem;
    if (!dra__dget_strs(c, k, "requests", &x->requests) || !dra__dget_str(c, k, "matchAttribute", &x->match_attr) ||
        !dra__dget_str(c, k, "distinctAttribute", &x->distinct_attr))
        return false;
    const char *an = x->match_attr ? x->match_attr : x->distinct_attr;
    if (an) dra__split_qualified(c->d, an, 0, &x->attr_domain, &x->attr_id);
    return true;
}

static bool decode_claim_spec(dctx *c, const json_t *spec, dra_claim *cl) {
    cl->has_spec = true;
    const json_t *devs;
    if (!dra__dget_obj(c, spec, "devices", &devs)) return false;
    if (!devs) return true;
    size_t m = dra__dpush_key(c, "devices");
    if (!DRA_DGET_OBJS(c, devs, "requests", &cl->reqs, &cl->nreqs, decode_request, NULL) ||
        !DRA_DGET_OBJS(c, devs, "constraints", &cl->constraints, &cl->nconstraints, decode_constraint, NULL) ||
        !DRA_DGET_OBJS(c, devs, "config", &cl->configs, &cl->nconfigs, decode_config, NULL))
        return false;
    dpop(c, m);
    return true;
}

/* dra__dget_str for a name every claim of a fleet repeats (a result's request, driver,
 * pool, device): the catalog's interned copy, held by this object as every name it
 * interns (as decode_slice.c names its devices), not one in the object's arena — at
 * 100,000 nodes, 17 results a claim, ~40 bytes each, times 170,000 claims. */
static bool dget_name(dctx *c, const json_t *o, const char *key, const char **out) {
    const json_t *v = json_object_get(o, key);
    if (json_is_string(v)) {
        uint32_t id = dra__dec_intern(c->d, json_string_value(v), json_string_length(v));
        if ((*out = id ? intern_str(c->d->cat->names, id) : NULL)) return true;
    }
    return dra__dget_str(c, o, key, out);
}

static bool decode_result(dctx *c, const json_t *r, void *elem, void *ud) {
    (void)ud;
    dra_claim_result *x = elem;
    if (!dget_name(c, r, "request", &x->request) || !dget_name(c, r, "driver", &x->driver) ||
        !dget_name(c, r, "pool", &x->pool) || !dget_name(c, r, "device", &x->device) ||
        !dra__dget_bool(c, r, "adminAccess", &x->admin_access) || !dra__dget_str(c, r, "shareID", &x->share_id))
        return false;
    if (!x->driver || !x->pool || !x->device) return dra__dfail(c, "driver, pool and device are required");
    x->key = dra__result_key_intern(c->d, x->driver, x->pool, x->device);
    const json_t *cc;
    if (!dra__dget_obj(c, r, "consumedCapacity", &cc)) return false;
    if (cc) {
        size_t nc = json_object_size(cc);
        x->consumed = ARENA_NEWN(c->d->a, dra_cap_value, nc ? nc : 1);
        size_t m = dra__dpush_key(c, "consumedCapacity");
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)cc, k, v) {
            size_t m2 = dra__dpush_mapkey(c, k);
            dra_cap_value *cv = &x->consumed[x->nconsumed++];
            cv->key = dra__dstrdup(c, k);
            cv->key_id = dra_dec_intern_cstr(c->d, k);
            if (!dra__dqty(c, v, &cv->value)) return false;
            dpop(c, m2);
        }
        dpop(c, m);
    }
    return true;
}

static bool decode_allocation(dctx *c, const json_t *al, dra_claim *cl) {
    cl->allocated = true;
    const json_t *devs;
    if (!dra__dget_obj(c, al, "devices", &devs)) return false;
    if (!devs) return true;
    size_t m = dra__dpush_key(c, "devices");
    if (!DRA_DGET_OBJS(c, devs, "results", &cl->alloc_results, &cl->nalloc_results, decode_result, NULL)) return false;
    dpop(c, m);
    return true;
}

/* The keys a result may carry for its text to be left out of raw_json, in the order
 * the API server writes them (DeviceRequestAllocationResult's fields: Request, Driver,
 * Pool, Device, AdminAccess, ..., ShareID): the first four required, the other two
 * optional. Put back by dra_claim_object, they give the same JSON value. */
static const char *const ELIDE_KEYS[] = {"request", "driver", "pool", "device", "adminAccess", "shareID"};

/* Whether status.allocation.devices.results (`res`, decoded into cl) can be left out
 * of the kept text: every result holds exactly what decode_result read, as strings (a
 * bool for adminAccess), its keys in ELIDE_KEYS' order — anything else (tolerations,
 * binding conditions, consumed capacity, another order) and the text stays whole. */
static bool results_elidable(const json_t *res, const dra_claim *cl) {
    if (!json_is_array(res) || !json_array_size(res) || json_array_size(res) != cl->nalloc_results) return false;
    size_t i;
    const json_t *r;
    json_array_foreach(res, i, r) {
        if (!json_is_object(r)) return false;
        size_t k = 0;
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)r, key, v) {
            while (k < 6 && strcmp(key, ELIDE_KEYS[k])) {
                if (k < 4) return false;   /* a required key missing, or out of order */
                k++;
            }
            if (k == 6 || (k == 4 ? !json_is_boolean(v)
                                  : !json_is_string(v) || json_string_length(v) != strlen(json_string_value(v))))
                return false;   /* (a string with a NUL in it decodes shorter than it reads) */
            k++;
        }
        if (k < 4) return false;
    }
    return true;
}

/* The claim's text for raw_json: whole, or with its results as null when they can be
 * put back from the decoded ones (results_elidable) — at 100,000 nodes of 8 GPUs and 8
 * NICs a claim's 17 results are ~1 KB of its 1.3 KB, times 170,000 claims. obj is not
 * changed: the text is made from shallow copies along status.allocation.devices. */
static const char *claim_text(dctx *c, const json_t *obj, dra_claim *cl) {
    json_t *st = json_object_get(obj, "status"), *al = json_object_get(st, "allocation"),
           *devs = json_object_get(al, "devices"), *res = json_object_get(devs, "results");
    if (c->d->no_raw_text || !cl->allocated || !results_elidable(res, cl)) return dra__djson_text(c, obj);
    json_t *o2 = json_copy((json_t *)obj), *st2 = json_copy(st), *al2 = json_copy(al), *devs2 = json_copy(devs);
    const char *t = NULL;
    if (o2 && st2 && al2 && devs2 && !json_object_set(devs2, "results", json_null()) &&
        !json_object_set(al2, "devices", devs2) && !json_object_set(st2, "allocation", al2) &&
        !json_object_set(o2, "status", st2)) {
        t = dra__djson_text(c, o2);
        cl->raw_results_elided = t != NULL;
    }
    json_decref(devs2);
    json_decref(al2);
    json_decref(st2);
    json_decref(o2);
    return t ? t : dra__djson_text(c, obj);
}

static bool decode_class_v1(const dra_decoder *d, const json_t *obj, void *out, err *e) {
    dra_class *cl = out;
    dctx c;
    dra__dctx_init(&c, d, e, "DeviceClass", obj);
    memset(cl, 0, sizeof *cl);
    const char *ns;
    if (!dra__ddecode_meta(&c, obj, &ns, &cl->name)) return false;
    if (!cl->name) cl->name = "";
    cl->name_id = dra_dec_intern_cstr(d, cl->name);
    const json_t *meta = json_object_get(obj, "metadata");
    if (json_is_object(meta) && !dra__dget_str(&c, meta, "creationTimestamp", &cl->creation_timestamp)) return false;
    const json_t *spec;
    if (!dra__dget_obj(&c, obj, "spec", &spec)) return false;
    if (!spec) return true;
    dra__dpush_key(&c, "spec");
    if (!DRA_DGET_OBJS(&c, spec, "selectors", &cl->selectors, &cl->nselectors, decode_selector, NULL)) return false;
    if (!DRA_DGET_OBJS(&c, spec, "config", &cl->configs, &cl->nconfigs, decode_config, NULL)) return false;
    return dra__dget_str(&c, spec, "extendedResourceName", &cl->extended_resource_name);
}

static bool decode_claim_v1(const dra_decoder *d, const json_t *obj, void *out, err *e) {
    dra_claim *cl = out;
    dctx c;
    dra__dctx_init(&c, d, e, "ResourceClaim", obj);
    memset(cl, 0, sizeof *cl);
    if (!dra__ddecode_meta(&c, obj, &cl->ns, &cl->name)) return false;
    if (!cl->name) cl->name = "";
    const json_t *meta = json_object_get(obj, "metadata");
    if (meta && !dra__dget_str(&c, meta, "uid", &cl->uid)) return false;
    const json_t *spec, *status;
    if (!dra__dget_obj(&c, obj, "spec", &spec)) return false;
    if (spec) {
        size_t m = dra__dpush_key(&c, "spec");
        if (!decode_claim_spec(&c, spec, cl)) return false;
        dpop(&c, m);
    }
    if (!dra__dget_obj(&c, obj, "status", &status)) return false;
    if (status) {
        size_t m = dra__dpush_key(&c, "status");
        const json_t *al;
        if (!dra__dget_obj(&c, status, "allocation", &al)) return false;
        if (al) {
            size_t m2 = dra__dpush_key(&c, "allocation");
            if (!decode_allocation(&c, al, cl)) return false;
            /* status.allocation.nodeSelector: a selector that does not parse does not
             * stop the claim from loading; pods using it are told (podplan.c) */
            const json_t *sel = json_object_get(al, "nodeSelector");
            if (sel && !json_is_null(sel)) {
                err se;
                err_clear(&se);
                dctx sc;
                dra__dctx_init(&sc, d, &se, "ResourceClaim", obj);
                if (!dra__ddecode_node_selector(&sc, sel, &cl->alloc_node_selector)) {
                    cl->alloc_node_selector = NULL;
                    cl->alloc_node_selector_error = dra__dstrdup(&c, se.msg);
                }
            }
            dpop(&c, m2);
        }
        dpop(&c, m);
    }
    cl->spec_hash = dra__dspec_hash(spec);   /* claims with one spec share fit answers (podfit.c) */
    cl->raw_json = claim_text(&c, obj, cl);
    return true;
}

static bool decode_claim_template_v1(const dra_decoder *d, const json_t *obj, void *out, err *e) {
    dra_claim_template *t = out;
    dctx c;
    dra__dctx_init(&c, d, e, "ResourceClaimTemplate", obj);
    memset(t, 0, sizeof *t);
    if (!dra__ddecode_meta(&c, obj, &t->ns, &t->name)) return false;
    if (!t->name) t->name = "";
    const json_t *spec, *inner;
    if (!dra__dget_obj(&c, obj, "spec", &spec)) return false;
    if (!spec) return true;
    dra__dpush_key(&c, "spec");
    /* spec.metadata: the labels and annotations the ResourceClaim controller copies */
    const json_t *meta = json_object_get(spec, "metadata");
    if (json_is_object(meta) && json_object_size(meta)) t->meta_json = dra__djson_text(&c, meta);
    if (!dra__dget_obj(&c, spec, "spec", &inner)) return false;
    if (!inner) return true;
    t->spec.spec_hash = dra__dspec_hash(inner);   /* the claims made from it share fit answers */
    dra__dpush_key(&c, "spec");
    t->spec.raw_json = dra__djson_text(&c, inner);   /* the claim spec, for printing generated claims */
    return decode_claim_spec(&c, inner, &t->spec);
}

bool dra__decode_class(const dra_decoder *d, const json_t *obj, dra_class *out, err *e) {
    return dra__input_decode(d, "DeviceClass", obj, decode_class_v1, out, e);
}

bool dra__decode_claim(const dra_decoder *d, const json_t *obj, dra_claim *out, err *e) {
    return dra__input_decode(d, "ResourceClaim", obj, decode_claim_v1, out, e);
}

bool dra__decode_claim_template(const dra_decoder *d, const json_t *obj, dra_claim_template *out, err *e) {
    return dra__input_decode(d, "ResourceClaimTemplate", obj, decode_claim_template_v1, out, e);
}

