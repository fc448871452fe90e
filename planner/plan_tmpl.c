/* plan_tmpl.c — a pod template checked against the PodTemplateSpec schema
 * (plan_tmpl.h): one recursive walk carrying two paths, the one users read
 * ("spec.containers[0].resources") and the one Go's decoder writes into its errors
 * ("ResourceRequirements" + ".spec.containers.resources": no indices, embedded
 * struct names included), so a wrong type is reported in both. */
#include "planner/plan_tmpl.h"

#include "base/quantity.h"
#include "planner/plan_suggest.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_PATH_MAX 512

typedef struct pt_walk {
    char path[PT_PATH_MAX], gopath[PT_PATH_MAX];
    size_t len, golen;
    const char *owner;  /* the Go struct of the last field entered; NULL at the root */
    plan_tmpl_unknown_fn unknown;
    void *arg;
    err *e;
    bool failed;        /* the first wrong type is kept; later ones are not reported */
} pt_walk;

/* Appends to a path buffer, truncating (a path that long is still a useful prefix). */
static size_t pt_push(char *buf, size_t *len, const char *fmt, const char *a, const char *b) {
    size_t before = *len;
    if (*len < PT_PATH_MAX - 1) {
        int n = snprintf(buf + *len, PT_PATH_MAX - *len, fmt, a, b);
        if (n > 0) *len += (size_t)n;
        if (*len > PT_PATH_MAX - 1) *len = PT_PATH_MAX - 1;
    }
    return before;
}

static const char *pt_json_word(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    default: return "bool";
    }
}

static const char *pt_expected(plan_tmpl_kind k) {
    switch (k) {
    case PT_OBJECT: return "object";
    case PT_MAP: return "map";
    case PT_LIST: return "list";
    case PT_BYTES: return "base64 string";
    case PT_BOOL: return "bool";
    case PT_INT32:
    case PT_INT64: return "integer";
    case PT_FLOAT: return "number";
    case PT_INT_OR_STRING: return "integer or string";
    default: return "string";
    }
}

/* A number as Go's decoder quotes it ("number 8.5"): the shortest text that reads back. */
static void pt_number(const json_t *v, char *buf, size_t n) {
    if (json_is_integer(v)) {
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    }
    double d = json_real_value(v);
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, d);
        double back;
        if (sscanf(buf, "%lf", &back) == 1 && back == d) return;
    }
}

/* The first wrong type: the user's path, what was expected, and Go's UnmarshalTypeError
 * (a number aimed at an integer quoted, as Go quotes it). */
static bool pt_mismatch(pt_walk *w, const json_t *v, const plan_tmpl_type *t) {
    if (w->failed) return false;
    w->failed = true;
    char got[64];
    snprintf(got, sizeof got, "%s", pt_json_word(v));
    bool int_target = t->kind == PT_INT32 || t->kind == PT_INT64 || t->kind == PT_INT_OR_STRING;
    if (json_is_number(v) && int_target) {
        char num[40];
        pt_number(v, num, sizeof num);
        snprintf(got, sizeof got, "number %s", num);
    }
    const char *what = json_is_array(v) ? "list" : pt_json_word(v);
    if (w->owner)
        err_set(w->e, "%s: expected %s, got %s (json: cannot unmarshal %s into Go struct field %s%s of type %s)",
                w->path, pt_expected(t->kind), what, got, w->owner, w->gopath, t->go);
    else
        err_set(w->e, "expected %s, got %s (json: cannot unmarshal %s into Go value of type %s)", pt_expected(t->kind),
                what, got, t->go);
    return false;
}

static const plan_tmpl_field *pt_find(const plan_tmpl_type *t, const char *k) {
    size_t lo = t->first, hi = (size_t)t->first + t->nfields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(k, plan_tmpl_fields[mid].name);
        if (!c) return &plan_tmpl_fields[mid];
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return NULL;
}

static const char *pt_nearest(const plan_tmpl_type *t, const char *k) {
    size_t best = PLAN_SUGGEST_MAX + 1;
    const char *name = NULL;
    for (size_t i = t->first; i < (size_t)t->first + t->nfields; i++) {
        size_t d = plan_suggest_distance(k, plan_tmpl_fields[i].name);
        if (d < best) best = d, name = plan_tmpl_fields[i].name;
    }
    return name;
}

/* Quantity.UnmarshalJSON: the text between the quotes, or the raw JSON of anything
 * else (a bool, an object), space-trimmed, through ParseQuantity's grammar. */
static bool pt_quantity(pt_walk *w, const json_t *v) {
    char *raw = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    const char *s = json_is_string(v) ? json_string_value(v) : raw ? raw : "";
    size_t n = json_is_string(v) ? json_string_length(v) : strlen(s);
    while (n && s[0] && strchr(" \t\n\r\v\f", s[0])) s++, n--;
    while (n && s[n - 1] && strchr(" \t\n\r\v\f", s[n - 1])) n--;
    err qe;
    err_clear(&qe);
    quantity q;
    bool ok = quantity_parse(s, n, &q, &qe);
    free(raw);
    if (ok) return true;
    if (!w->failed) err_set(w->e, "%s: %s", w->path, qe.msg);
    w->failed = true;
    return false;
}

static bool pt_walk_value(pt_walk *w, const json_t *v, uint16_t ti);

static bool pt_object(pt_walk *w, const json_t *v, const plan_tmpl_type *t) {
    const char *k;
    json_t *x;
    bool ok = true;
    json_object_foreach((json_t *)v, k, x) {
        const plan_tmpl_field *f = pt_find(t, k);
        size_t p = pt_push(w->path, &w->len, w->len ? ".%s%s" : "%s%s", k, "");
        if (!f) {
            if (w->unknown) w->unknown(w->arg, w->path, pt_nearest(t, k));
        } else {
            size_t gp = pt_push(w->gopath, &w->golen, ".%s%s", f->via, f->name);
            const char *owner = w->owner;
            w->owner = f->owner;
            ok &= pt_walk_value(w, x, f->type);
            w->owner = owner;
            w->gopath[w->golen = gp] = '\0';
        }
        w->path[w->len = p] = '\0';
    }
    return ok;
}

static bool pt_walk_value(pt_walk *w, const json_t *v, uint16_t ti) {
    assert(ti < plan_tmpl_ntypes);
    const plan_tmpl_type *t = &plan_tmpl_types[ti];
    if (json_is_null(v)) return true;  /* Go leaves the field unset */
    switch (t->kind) {
    case PT_OBJECT:
        return json_is_object(v) ? pt_object(w, v, t) : pt_mismatch(w, v, t);
    case PT_MAP: {
        if (!json_is_object(v)) return pt_mismatch(w, v, t);
        const char *k;
        json_t *x;
        bool ok = true;
        json_object_foreach((json_t *)v, k, x) {
            size_t p = pt_push(w->path, &w->len, "[%s]%s", k, "");
            ok &= pt_walk_value(w, x, t->elem);
            w->path[w->len = p] = '\0';
        }
        return ok;
    }
    case PT_LIST: {
        if (!json_is_array(v)) return pt_mismatch(w, v, t);
        size_t i;
        json_t *x;
        bool ok = true;
        json_array_foreach(v, i, x) {
            char idx[24];
            snprintf(idx, sizeof idx, "%zu", i);
            size_t p = pt_push(w->path, &w->len, "[%s]%s", idx, "");
            ok &= pt_walk_value(w, x, t->elem);
            w->path[w->len = p] = '\0';
        }
        return ok;
    }
    case PT_STRING:
    case PT_BYTES:
    case PT_TIME:
        return json_is_string(v) || pt_mismatch(w, v, t);
    case PT_BOOL:
        return json_is_boolean(v) || pt_mismatch(w, v, t);
    case PT_INT32:
        return (json_is_integer(v) && json_integer_value(v) >= INT32_MIN && json_integer_value(v) <= INT32_MAX) ||
               pt_mismatch(w, v, t);
    case PT_INT64:
        return json_is_integer(v) || pt_mismatch(w, v, t);
    case PT_FLOAT:
        return json_is_number(v) || pt_mismatch(w, v, t);
    case PT_INT_OR_STRING:
        return json_is_string(v) ||
               (json_is_integer(v) && json_integer_value(v) >= INT32_MIN && json_integer_value(v) <= INT32_MAX) ||
               pt_mismatch(w, v, t);
    case PT_QUANTITY:
        return pt_quantity(w, v);
    case PT_ANY:
        return true;
    }
    assert(!"a kind the schema does not use");
    return false;
}

bool plan_tmpl_check(const json_t *tmpl, plan_tmpl_unknown_fn unknown, void *arg, err *e) {
    static pt_walk zero;
    pt_walk w = zero;
    w.unknown = unknown;
    w.arg = arg;
    w.e = e;
    pt_walk_value(&w, tmpl, 0);
    return !w.failed;
}
