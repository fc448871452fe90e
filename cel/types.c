/* types.c — static types: construction, parsing of signature text, printing and
 * assignability with type-parameter binding (see types.h). */
#include "cel/types.h"

#include "cel/value.h"

#include <stdio.h>
#include <string.h>

const cel_type cel_t_dyn = {TY_DYN, NULL, NULL, NULL};
const cel_type cel_t_null = {TY_NULL, NULL, NULL, NULL};
const cel_type cel_t_bool = {TY_BOOL, NULL, NULL, NULL};
const cel_type cel_t_int = {TY_INT, NULL, NULL, NULL};
const cel_type cel_t_uint = {TY_UINT, NULL, NULL, NULL};
const cel_type cel_t_double = {TY_DOUBLE, NULL, NULL, NULL};
const cel_type cel_t_string = {TY_STRING, NULL, NULL, NULL};
const cel_type cel_t_bytes = {TY_BYTES, NULL, NULL, NULL};
const cel_type cel_t_error = {TY_ERROR, NULL, NULL, NULL};
const cel_type cel_t_device = {TY_DEVICE, "kubernetes.DRADevice", NULL, NULL};
const cel_type cel_t_quantity = {TY_OPAQUE, "kubernetes.Quantity", NULL, NULL};
const cel_type cel_t_semver = {TY_OPAQUE, "kubernetes.Semver", NULL, NULL};
const cel_type cel_t_timestamp = {TY_OPAQUE, "google.protobuf.Timestamp", NULL, NULL};
const cel_type cel_t_duration = {TY_OPAQUE, "google.protobuf.Duration", NULL, NULL};
const cel_type cel_t_type_dyn = {TY_TYPE, NULL, &cel_t_dyn, NULL};
const cel_type cel_t_list_dyn = {TY_LIST, NULL, &cel_t_dyn, NULL};
const cel_type cel_t_map_dyn = {TY_MAP, NULL, &cel_t_dyn, &cel_t_dyn};

static const cel_type *mk(arena *a, cel_tkind k, const cel_type *p0, const cel_type *p1) {
    cel_type *t = ARENA_NEW(a, cel_type);
    t->kind = (uint8_t)k;
    t->p0 = p0;
    t->p1 = p1;
    return t;
}

const cel_type *cel__type_list(arena *a, const cel_type *e) {
    if (e->kind == TY_DYN) return &cel_t_list_dyn;
    return mk(a, TY_LIST, e, NULL);
}
const cel_type *cel__type_map(arena *a, const cel_type *k, const cel_type *v) {
    if (k->kind == TY_DYN && v->kind == TY_DYN) return &cel_t_map_dyn;
    return mk(a, TY_MAP, k, v);
}
const cel_type *cel__type_optional(arena *a, const cel_type *e) { return mk(a, TY_OPTIONAL, e, NULL); }
const cel_type *cel__type_type(arena *a, const cel_type *of) { return mk(a, TY_TYPE, of, NULL); }

bool cel__type_is_dyn(const cel_type *t) { return !t || t->kind == TY_DYN || t->kind == TY_ERROR; }

/* ---- parsing ------------------------------------------------------------------- */

typedef struct tp {
    const char *s;
    arena *a;
    bool bad;
} tp;

static void ws(tp *p) {
    while (*p->s == ' ') p->s++;
}

static const cel_type *parse_t(tp *p) {
    ws(p);
    const char *st = p->s;
    while ((*p->s >= 'a' && *p->s <= 'z') || (*p->s >= 'A' && *p->s <= 'Z') || (*p->s >= '0' && *p->s <= '9') ||
           *p->s == '_' || *p->s == '.')
        p->s++;
    size_t n = (size_t)(p->s - st);
    if (!n) {
        p->bad = true;
        return &cel_t_dyn;
    }
#define IS(w) (n == strlen(w) && !memcmp(st, w, n))
    const cel_type *args[2] = {NULL, NULL};
    int na = 0;
    ws(p);
    if (*p->s == '(') {
        p->s++;
        for (;;) {
            if (na < 2) args[na++] = parse_t(p);
            else parse_t(p), p->bad = true;
            ws(p);
            if (*p->s == ',') {
                p->s++;
                continue;
            }
            if (*p->s == ')') {
                p->s++;
                break;
            }
            p->bad = true;
            break;
        }
    }
    if (IS("dyn") || IS("any")) return &cel_t_dyn;
    if (IS("null") || IS("null_type")) return &cel_t_null;
    if (IS("bool")) return &cel_t_bool;
    if (IS("int")) return &cel_t_int;
    if (IS("uint")) return &cel_t_uint;
    if (IS("double")) return &cel_t_double;
    if (IS("string")) return &cel_t_string;
    if (IS("bytes")) return &cel_t_bytes;
    if (IS("list")) return cel__type_list(p->a, na >= 1 ? args[0] : &cel_t_dyn);
    if (IS("map")) return cel__type_map(p->a, na >= 1 ? args[0] : &cel_t_dyn, na >= 2 ? args[1] : &cel_t_dyn);
    if (IS("optional") || IS("optional_type")) return cel__type_optional(p->a, na >= 1 ? args[0] : &cel_t_dyn);
    if (IS("type")) return cel__type_type(p->a, na >= 1 ? args[0] : &cel_t_dyn);
    if (IS("Quantity") || IS("kubernetes.Quantity")) return &cel_t_quantity;
    if (IS("Semver") || IS("kubernetes.Semver")) return &cel_t_semver;
    if (IS("kubernetes.DRADevice")) return &cel_t_device;
    if (IS("timestamp") || IS("google.protobuf.Timestamp")) return &cel_t_timestamp;
    if (IS("duration") || IS("google.protobuf.Duration")) return &cel_t_duration;
    if (n == 1 && st[0] >= 'A' && st[0] <= 'Z') {
        cel_type *t = ARENA_NEW(p->a, cel_type);
        t->kind = TY_PARAM;
        t->name = arena_strndup(p->a, st, 1);
        return t;
    }
#undef IS
    cel_type *t = ARENA_NEW(p->a, cel_type);
    t->kind = TY_OPAQUE;
    t->name = arena_strndup(p->a, st, n);
    t->p0 = args[0];
    return t;
}

const cel_type *cel__type_parse(arena *a, const char *text) {
    tp p = {text, a, false};
    const cel_type *t = parse_t(&p);
    ws(&p);
    if (p.bad || *p.s) return NULL;
    return t;
}

/* ---- printing ------------------------------------------------------------------ */

static size_t tstr(const cel_type *t, char *b, size_t n) {
    char x[256], y[256];
    if (!t) return (size_t)snprintf(b, n, "dyn");
    switch ((cel_tkind)t->kind) {
    case TY_DYN: return (size_t)snprintf(b, n, "dyn");
    case TY_NULL: return (size_t)snprintf(b, n, "null");
    case TY_BOOL: return (size_t)snprintf(b, n, "bool");
    case TY_INT: return (size_t)snprintf(b, n, "int");
    case TY_UINT: return (size_t)snprintf(b, n, "uint");
    case TY_DOUBLE: return (size_t)snprintf(b, n, "double");
    case TY_STRING: return (size_t)snprintf(b, n, "string");
    case TY_BYTES: return (size_t)snprintf(b, n, "bytes");
    case TY_ERROR: return (size_t)snprintf(b, n, "*error*");
    case TY_LIST: tstr(t->p0, x, sizeof x); return (size_t)snprintf(b, n, "list(%s)", x);
    case TY_MAP:
        tstr(t->p0, x, sizeof x);
        tstr(t->p1, y, sizeof y);
        return (size_t)snprintf(b, n, "map(%s, %s)", x, y);
    case TY_OPTIONAL: tstr(t->p0, x, sizeof x); return (size_t)snprintf(b, n, "optional_type(%s)", x);
    case TY_TYPE: tstr(t->p0, x, sizeof x); return (size_t)snprintf(b, n, "type(%s)", x);
    case TY_OPAQUE:
        /* the well-known protobuf types print as cel-go prints them */
        if (!strcmp(t->name, "google.protobuf.Timestamp")) return (size_t)snprintf(b, n, "timestamp");
        if (!strcmp(t->name, "google.protobuf.Duration")) return (size_t)snprintf(b, n, "duration");
        return (size_t)snprintf(b, n, "%s", t->name);
    case TY_DEVICE:
    case TY_PARAM: return (size_t)snprintf(b, n, "%s", t->name);
    }
    return 0;
}

void cel__type_str(const cel_type *t, char *buf, size_t n) { tstr(t, buf, n); }

bool cel__type_equal(const cel_type *a, const cel_type *b) {
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind) return false;
    switch ((cel_tkind)a->kind) {
    case TY_LIST:
    case TY_OPTIONAL:
    case TY_TYPE: return cel__type_equal(a->p0, b->p0);
    case TY_MAP: return cel__type_equal(a->p0, b->p0) && cel__type_equal(a->p1, b->p1);
    case TY_OPAQUE:
    case TY_PARAM: return !strcmp(a->name, b->name) && ((!a->p0 && !b->p0) || cel__type_equal(a->p0, b->p0));
    default: return true;
    }
}

/* ---- assignability ------------------------------------------------------------- */

static int find_param(cel_subst *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name)) return i;
    return -1;
}

/* The more specific of two compatible types (dyn yields to the other). */
static const cel_type *join(arena *a, const cel_type *x, const cel_type *y) {
    if (cel__type_is_dyn(x)) return y;
    if (cel__type_is_dyn(y)) return x;
    if (x->kind == TY_LIST && y->kind == TY_LIST) return cel__type_list(a, join(a, x->p0, y->p0));
    if (x->kind == TY_MAP && y->kind == TY_MAP) return cel__type_map(a, join(a, x->p0, y->p0), join(a, x->p1, y->p1));
    return x;
}

static bool compatible(arena *a, cel_subst *s, const cel_type *x, const cel_type *y);

bool cel__type_assignable(arena *a, cel_subst *s, const cel_type *param, const cel_type *arg) {
    if (param->kind == TY_PARAM) {
        int i = find_param(s, param->name);
        if (i < 0) {
            if (s->n >= CEL_MAX_TPARAMS) return false;
            s->names[s->n] = param->name;
            s->types[s->n] = arg;
            s->n++;
            return true;
        }
        if (!compatible(a, s, s->types[i], arg)) return false;
        s->types[i] = join(a, s->types[i], arg);
        return true;
    }
    if (cel__type_is_dyn(param) || cel__type_is_dyn(arg)) return true;
    /* null is assignable to optional? no; to nothing but null and dyn */
    if (param->kind != arg->kind) return false;
    switch ((cel_tkind)param->kind) {
    case TY_TYPE: return true;   /* type values of any type compare (type(1) == type(1u)) */
    case TY_LIST:
    case TY_OPTIONAL: return cel__type_assignable(a, s, param->p0, arg->p0);
    case TY_MAP: return cel__type_assignable(a, s, param->p0, arg->p0) && cel__type_assignable(a, s, param->p1, arg->p1);
    case TY_OPAQUE: return !strcmp(param->name, arg->name);
    default: return true;
    }
}

/* Both directions: used when a parameter is already bound. */
static bool compatible(arena *a, cel_subst *s, const cel_type *x, const cel_type *y) {
    if (cel__type_is_dyn(x) || cel__type_is_dyn(y)) return true;
    if (x->kind == TY_PARAM || y->kind == TY_PARAM) return true;
    if (x->kind != y->kind) return false;
    switch ((cel_tkind)x->kind) {
    case TY_TYPE: return true;
    case TY_LIST:
    case TY_OPTIONAL: return compatible(a, s, x->p0, y->p0);
    case TY_MAP: return compatible(a, s, x->p0, y->p0) && compatible(a, s, x->p1, y->p1);
    case TY_OPAQUE: return !strcmp(x->name, y->name);
    default: return true;
    }
}

const cel_type *cel__type_subst(arena *a, const cel_subst *s, const cel_type *t) {
    switch ((cel_tkind)t->kind) {
    case TY_PARAM:
        for (int i = 0; i < s->n; i++)
            if (!strcmp(s->names[i], t->name)) return s->types[i]->kind == TY_PARAM ? &cel_t_dyn : s->types[i];
        return &cel_t_dyn;
    case TY_LIST: return cel__type_list(a, cel__type_subst(a, s, t->p0));
    case TY_MAP: return cel__type_map(a, cel__type_subst(a, s, t->p0), cel__type_subst(a, s, t->p1));
    case TY_OPTIONAL: return cel__type_optional(a, cel__type_subst(a, s, t->p0));
    case TY_TYPE: return cel__type_type(a, cel__type_subst(a, s, t->p0));
    default: return t;
    }
}

int cel__type_value_kind(const cel_type *t) {
    switch ((cel_tkind)t->kind) {
    case TY_NULL: return CV_NULL;
    case TY_BOOL: return CV_BOOL;
    case TY_INT: return CV_INT;
    case TY_UINT: return CV_UINT;
    case TY_DOUBLE: return CV_DOUBLE;
    case TY_STRING: return CV_STRING;
    case TY_BYTES: return CV_BYTES;
    case TY_LIST: return CV_LIST;
    case TY_MAP: return CV_MAP;
    case TY_TYPE: return CV_TYPE;
    case TY_OPTIONAL: return CV_OPTIONAL;
    case TY_DEVICE: return CV_DEVICE;
    case TY_OPAQUE:
        if (!strcmp(t->name, "kubernetes.Quantity")) return CV_QUANTITY;
        if (!strcmp(t->name, "kubernetes.Semver")) return CV_SEMVER;
        if (!strcmp(t->name, "google.protobuf.Timestamp")) return CV_TIMESTAMP;
        if (!strcmp(t->name, "google.protobuf.Duration")) return CV_DURATION;
        return CV_OPAQUE;
    default: return -1;
    }
}
