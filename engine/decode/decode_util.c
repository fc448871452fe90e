/* decode_util.c — the type-checked field getters of decode_util.h, plus the core/v1
 * NodeSelector decoder that slices, devices and results share, and the claim-list
 * decoders that Pods and PodGroups share. */
#include "engine/decode/decode_util.h"

#include "base/hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *meta_str(const json_t *obj, const char *key) {
    const json_t *m = json_object_get(obj, "metadata");
    const json_t *v = m ? json_object_get(m, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

void dra__dctx_init(dctx *c, const dra_decoder *d, err *e, const char *kind, const json_t *obj) {
    c->d = d;
    c->e = e;
    c->p.len = 0;
    c->p.text[0] = '\0';
    const char *ns = meta_str(obj, "namespace");
    const char *name = meta_str(obj, "name");
    if (ns && *ns) snprintf(c->object, sizeof c->object, "%s %s/%s", kind, ns, name ? name : "");
    else snprintf(c->object, sizeof c->object, "%s %s", kind, name ? name : "<unnamed>");
}

bool dra__dfail(dctx *c, const char *fmt, ...) {
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_at(c->e, c->object, dra__dpath_str(c), "%s", msg);
}

/* Appends the parts of one segment, cut at the buffer's end as errpath_push cut. */
static void path_put(char *buf, size_t *len, size_t cap, const char *a, const char *b, size_t nb, const char *z) {
    size_t room = cap - 1;
    const char *part[3] = {a, b, z};
    size_t plen[3] = {strlen(a), nb, strlen(z)};
    for (int k = 0; k < 3 && *len < room; k++) {
        size_t n = plen[k] < room - *len ? plen[k] : room - *len;
        memcpy(buf + *len, part[k], n);
        *len += n;
    }
    buf[*len] = '\0';
}

const char *dra__dpath_str(dctx *c) {
    char *buf = c->p.text;
    size_t len = 0, n = c->p.len < DPATH_SEGS ? c->p.len : DPATH_SEGS;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const dpath_seg *g = &c->p.seg[i];
        if (g->kind == DSEG_KEY) {
            path_put(buf, &len, sizeof c->p.text, len ? "." : "", g->key, strlen(g->key), "");
        } else if (g->kind == DSEG_MAPKEY) {
            path_put(buf, &len, sizeof c->p.text, "[\"", g->key, strlen(g->key), "\"]");
        } else {
            char d[24];
            size_t k = sizeof d, x = g->idx;
            do d[--k] = (char)('0' + x % 10);
            while ((x /= 10));
            path_put(buf, &len, sizeof c->p.text, "[", d + k, sizeof d - k, "]");
        }
    }
    return buf;
}

const char *dra__dstrdup(dctx *c, const char *s) { return s ? arena_strdup(c->d->a, s) : NULL; }

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static bool wrong_type(dctx *c, const char *key, const char *want, const json_t *v) {
    size_t m = key ? dra__dpush_key(c, key) : c->p.len;
    dra__dfail(c, "expected %s, got %s", want, type_name(v));
    dpop(c, m);
    return false;
}

bool dra__dget_str(dctx *c, const json_t *o, const char *key, const char **out) {
    return dra__dval_str(c, key, json_object_get(o, key), out);
}

bool dra__dval_str(dctx *c, const char *key, const json_t *v, const char **out) {
    *out = NULL;
    if (!v || json_is_null(v)) return true;
    if (json_is_string(v)) {
        *out = arena_strndup(c->d->a, json_string_value(v), json_string_length(v));
        return true;
    }
    if (json_is_integer(v)) {   /* unquoted YAML number in a string field */
        *out = arena_printf(c->d->a, "%lld", (long long)json_integer_value(v));
        return true;
    }
    if (json_is_boolean(v)) {
        *out = json_is_true(v) ? "true" : "false";
        return true;
    }
    return wrong_type(c, key, "string", v);
}

bool dra__dget_bool(dctx *c, const json_t *o, const char *key, int8_t *out) {
    *out = -1;
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return true;
    if (!json_is_boolean(v)) return wrong_type(c, key, "boolean", v);
    *out = json_is_true(v) ? 1 : 0;
    return true;
}

bool dra__dget_int(dctx *c, const json_t *o, const char *key, int64_t *out, bool *has) {
    *out = 0;
    if (has) *has = false;
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) return true;
    /* As encoding/json into an int64: a whole number in range (YAML's 1e3 arrives as
     * one); a string ("3"), a fraction or a number beyond int64 is an error. */
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0) || x != (double)(int64_t)x) {
            dra__dpush_key(c, key);
            return dra__dfail(c, "cannot unmarshal number %.17g into a value of type int64", x);
        }
        *out = (int64_t)x;
    } else {
        return wrong_type(c, key, "integer", v);
    }
    if (has) *has = true;
    return true;
}

const json_t *dra__dmember(const json_t *o, const char *key) {
    if (json_object_size(o) > 2) return json_object_get(o, key);
    for (void *it = json_object_iter((json_t *)o); it; it = json_object_iter_next((json_t *)o, it))
        if (!strcmp(json_object_iter_key(it), key)) return json_object_iter_value(it);
    return NULL;
}

size_t dra__dmembers(const json_t *o, const char *const *keys, size_t n, const json_t **out) {
    for (size_t i = 0; i < n; i++) out[i] = NULL;
    size_t others = 0;
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)o, k, x) {
        size_t i = 0;
        while (i < n && (k[0] != keys[i][0] || strcmp(k, keys[i]))) i++;
        if (i < n) out[i] = x;
        else others++;
    }
    return others;
}

bool dra__dget_obj(dctx *c, const json_t *o, const char *key, const json_t **out) {
    return dra__dval_obj(c, key, json_object_get(o, key), out);
}

bool dra__dval_obj(dctx *c, const char *key, const json_t *v, const json_t **out) {
    *out = NULL;
    if (!v || json_is_null(v)) return true;
    if (!json_is_object(v)) return wrong_type(c, key, "object", v);
    *out = v;
    return true;
}

bool dra__dget_arr(dctx *c, const json_t *o, const char *key, const json_t **out) {
    return dra__dval_arr(c, key, json_object_get(o, key), out);
}

bool dra__dval_arr(dctx *c, const char *key, const json_t *v, const json_t **out) {
    *out = NULL;
    if (!v || json_is_null(v)) return true;
    if (!json_is_array(v)) return wrong_type(c, key, "array", v);
    *out = v;
    return true;
}

bool dra__dget_objs(dctx *c, const json_t *o, const char *key, size_t size, void *out, uint32_t *n, dra_ditem_fn each,
                   void *ud) {
    return dra__dval_objs(c, key, json_object_get(o, key), size, out, n, each, ud);
}

bool dra__dval_objs(dctx *c, const char *key, const json_t *v, size_t size, void *out, uint32_t *n, dra_ditem_fn each,
                    void *ud) {
    const json_t *arr;
    char *elems = NULL;
    memcpy(out, &elems, sizeof elems);   /* out is a T **: memcpy sets it whatever T is */
    *n = 0;
    if (!dra__dval_arr(c, key, v, &arr)) return false;
    if (!arr) return true;
    size_t cnt = json_array_size(arr);
    elems = arena_zalloc(c->d->a, size * (cnt ? cnt : 1));
    size_t m = dra__dpush_key(c, key);
    for (size_t i = 0; i < cnt; i++) {
        const json_t *item = json_array_get(arr, i);
        size_t m2 = dra__dpush_idx(c, i);
        if (!json_is_object(item)) return dra__dfail(c, "expected object");
        if (!each(c, item, elems + i * size, ud)) return false;
        dpop(c, m2);
    }
    dpop(c, m);
    memcpy(out, &elems, sizeof elems);
    *n = (uint32_t)cnt;
    return true;
}

bool dra__dget_strs(dctx *c, const json_t *o, const char *key, dra_strs *out) {
    out->v = NULL;
    out->n = 0;
    const json_t *arr;
    if (!dra__dget_arr(c, o, key, &arr)) return false;
    if (!arr) return true;
    size_t n = json_array_size(arr);
    out->v = ARENA_NEWN(c->d->a, const char *, n ? n : 1);
    size_t m = dra__dpush_key(c, key);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(arr, i);
        if (!json_is_string(s)) {
            size_t m2 = dra__dpush_idx(c, i);
            dra__dfail(c, "expected string, got %s", type_name(s));
            dpop(c, m2);
            return false;
        }
        out->v[out->n++] = arena_strndup(c->d->a, json_string_value(s), json_string_length(s));
    }
    dpop(c, m);
    return true;
}

bool dra__qty_text(const json_t *v, char buf[DRA_QTY_BUF], const char **out, size_t *len) {
    const char *s;
    size_t n;
    if (json_is_string(v)) {
        s = json_string_value(v);
        n = json_string_length(v);
    } else if (json_is_integer(v)) {
        /* digits by hand: snprintf was most of reading an unquoted `98` */
        long long x = json_integer_value(v);
        unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;
        char *p = buf + DRA_QTY_BUF;
        do *--p = (char)('0' + u % 10);
        while ((u /= 10));
        if (x < 0) *--p = '-';
        s = p;
        n = (size_t)(buf + DRA_QTY_BUF - p);
    } else if (json_is_real(v)) {
        n = (size_t)snprintf(buf, DRA_QTY_BUF, "%.17g", json_real_value(v));
        s = buf;
    } else {
        return false;
    }
    *out = s;
    *len = n;
    return true;
}

bool dra__dqty(dctx *c, const json_t *v, quantity *out) {
    char buf[DRA_QTY_BUF];
    const char *s;
    size_t n;
    if (!dra__qty_text(v, buf, &s, &n))
        return dra__dfail(c, "expected a quantity (string), got %s", v ? type_name(v) : "nothing");
    err qe;
    err_clear(&qe);
    if (!quantity_parse(s, n, out, &qe)) return dra__dfail(c, "%s", qe.msg);
    return true;
}

const char *dra__djson_text(dctx *c, const json_t *v) {
    if (c->d->no_raw_text) return NULL;
    return dra__djson_part(c, v);
}

const char *dra__djson_part(dctx *c, const json_t *v) {
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    if (!t) return NULL;
    const char *r = arena_strdup(c->d->a, t);
    free(t);
    return r;
}

static uint8_t ns_op(const char *s) {
    if (!s) return DRA_NS_INVALID;
    if (!strcmp(s, "In")) return DRA_NS_IN;
    if (!strcmp(s, "NotIn")) return DRA_NS_NOT_IN;
    if (!strcmp(s, "Exists")) return DRA_NS_EXISTS;
    if (!strcmp(s, "DoesNotExist")) return DRA_NS_DOES_NOT_EXIST;
    if (!strcmp(s, "Gt")) return DRA_NS_GT;
    if (!strcmp(s, "Lt")) return DRA_NS_LT;
    return DRA_NS_INVALID;
}

static bool decode_req(dctx *c, const json_t *r, void *elem, void *ud) {
    (void)ud;
    dra_ns_req *q = elem;
    if (!dra__dget_str(c, r, "key", &q->key) || !dra__dget_str(c, r, "operator", &q->op_text) ||
        !dra__dget_strs(c, r, "values", &q->values))
        return false;
    if (!q->key) q->key = "";
    q->op = ns_op(q->op_text);
    return true;
}

static bool decode_term(dctx *c, const json_t *t, void *elem, void *ud) {
    (void)ud;
    dra_ns_term *tt = elem;
    return DRA_DGET_OBJS(c, t, "matchExpressions", &tt->exprs, &tt->nexprs, decode_req, NULL) &&
           DRA_DGET_OBJS(c, t, "matchFields", &tt->fields, &tt->nfields, decode_req, NULL);
}

bool dra__ddecode_node_selector(dctx *c, const json_t *v, dra_node_selector **out) {
    *out = NULL;
    if (!v || json_is_null(v)) return true;
    if (!json_is_object(v)) return dra__dfail(c, "expected object");
    dra_node_selector *ns = ARENA_NEW(c->d->a, dra_node_selector);
    if (!DRA_DGET_OBJS(c, v, "nodeSelectorTerms", &ns->terms, &ns->nterms, decode_term, NULL)) return false;
    *out = ns;
    return true;
}

bool dra__ddecode_meta(dctx *c, const json_t *obj, const char **ns, const char **name) {
    const json_t *meta;
    if (!dra__dget_obj(c, obj, "metadata", &meta)) return false;
    *ns = *name = NULL;
    if (!meta) return true;
    size_t m = dra__dpush_key(c, "metadata");
    if (!dra__dget_str(c, meta, "namespace", ns) || !dra__dget_str(c, meta, "name", name)) return false;
    dpop(c, m);
    if (*ns && !**ns) *ns = NULL;
    return true;
}

uint64_t dra__dspec_hash(const json_t *spec) {
    if (!spec) return 0;
    char *t = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    uint64_t h = t ? hash_bytes(t, strlen(t)) | 1 : 0;
    free(t);
    return h;
}

uint32_t dra__dec_intern(const dra_decoder *d, const char *s, size_t n) { return dra__cat_intern(d->cat, d->holds, d->memo, s, n); }

uint64_t dra__result_key_intern(const dra_decoder *d, const char *driver, const char *pool, const char *device) {
    char stack[512];
    size_t len;
    char *buf = dra_pool_id(driver, pool, stack, sizeof stack, &len);
    uint32_t pk = dra__dec_intern(d, buf, len);
    if (buf != stack) free(buf);
    return dra_device_key(pk, dra_dec_intern_cstr(d, device));
}

void dra__split_qualified(const dra_decoder *d, const char *qname, uint32_t driver_id, uint32_t *domain, uint32_t *id) {
    const char *slash = strchr(qname, '/');
    if (slash) {
        *domain = dra__dec_intern(d, qname, (size_t)(slash - qname));
        *id = dra_dec_intern_cstr(d, slash + 1);
    } else {
        *domain = driver_id;
        *id = dra_dec_intern_cstr(d, qname);
    }
}

bool dra__ddecode_claim_ref(dctx *c, const json_t *pc, void *elem, void *ud) {
    (void)ud;
    dra_pod_claim *x = elem;
    return dra__dget_str(c, pc, "name", &x->name) && dra__dget_str(c, pc, "resourceClaimName", &x->claim_name) &&
           dra__dget_str(c, pc, "resourceClaimTemplateName", &x->template_name);
}

bool dra__ddecode_claim_statuses(dctx *c, const json_t *status, dra_pod_claim *claims, uint32_t n) {
    const json_t *arr;
    size_t m = dra__dpush_key(c, "status");
    if (!dra__dget_arr(c, status, "resourceClaimStatuses", &arr)) return false;
    for (size_t i = 0; arr && i < json_array_size(arr); i++) {
        const json_t *st = json_array_get(arr, i);
        if (!json_is_object(st)) continue;
        const char *name, *gen;
        if (!dra__dget_str(c, st, "name", &name) || !dra__dget_str(c, st, "resourceClaimName", &gen)) return false;
        for (uint32_t j = 0; name && j < n; j++)
            if (claims[j].name && !strcmp(claims[j].name, name)) claims[j].generated_name = gen;
    }
    dpop(c, m);
    return true;
}
