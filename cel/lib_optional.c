/* lib_optional.c — CEL optional types (cel-go OptionalTypes): optional.of,
 * optional.ofNonZeroValue, optional.none, hasValue, value, or, orValue,
 * optional.unwrap / unwrapOpt, list first/last, and the optional forms of
 * indexing. `.?f` and `[?k]` are instructions (eval.c); optMap/optFlatMap are
 * macros (parser.c). `or` and `orValue` do not evaluate... they are declared
 * non-strict so that an error in the alternative is ignored when the receiver
 * has a value, as cel-go's short-circuiting evaluation does. They cost nothing:
 * cel-go plans them as evalOptionalOr/evalOptionalOrValue (cel/library.go), which
 * the cost tracker does not see as calls. */
#include "cel/functions.h"

static cel_value opt_of(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return cel__optional_of(c->arena, a[0]);
}

static bool is_zero(const cel_value *v) {
    switch (v->kind) {
    case CV_NULL: return true;
    case CV_BOOL: return !v->u.b;
    case CV_INT: return v->u.i == 0;
    case CV_UINT: return v->u.u == 0;
    case CV_DOUBLE: return v->u.d == 0;
    case CV_STRING:
    case CV_BYTES: return v->len == 0;
    case CV_LIST: return v->u.list->n == 0;
    case CV_MAP:
    case CV_DEVMAP:
    case CV_DEVDOMAIN: return cel__map_size(v) == 0;
    case CV_OPTIONAL: return v->u.opt == NULL;
    default: return false;
    }
}

static cel_value opt_of_nonzero(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (is_zero(&a[0])) return cel_optional_none();
    return cel__optional_of(c->arena, a[0]);
}

static cel_value opt_none(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)a, (void)n;
    return cel_optional_none();
}

static cel_value opt_has(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(a[0].u.opt != NULL);
}

static cel_value opt_value(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (!a[0].u.opt) return cel_error_static("optional.none() dereference");
    return *a[0].u.opt;
}

static cel_value opt_or(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (a[0].kind == CV_ERROR) return a[0];
    if (a[0].kind != CV_OPTIONAL) return cel_error_static("no such overload");
    if (a[0].u.opt) return a[0];
    if (a[1].kind != CV_OPTIONAL && a[1].kind != CV_ERROR) return cel_error_static("no such overload");
    return a[1];
}

static cel_value opt_or_value(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (a[0].kind == CV_ERROR) return a[0];
    if (a[0].kind != CV_OPTIONAL) return cel_error_static("no such overload");
    if (a[0].u.opt) return *a[0].u.opt;
    return a[1];
}

static cel_value opt_unwrap(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    cel_list *out = cel__list_new(c->arena, l->n);
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != CV_OPTIONAL) return cel_error_static("no such overload");
        if (l->items[i].u.opt) out->items[out->n++] = *l->items[i].u.opt;
    }
    return cel_list_value(out);
}

static cel_value list_first(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!a[0].u.list->n) return cel_optional_none();
    return cel__optional_of(c->arena, a[0].u.list->items[0]);
}

static cel_value list_last(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!a[0].u.list->n) return cel_optional_none();
    return cel__optional_of(c->arena, a[0].u.list->items[a[0].u.list->n - 1]);
}

/* Index on an optional container or optional index ([?]); the evaluator handles
 * these as instructions, so these bodies only serve unchecked dispatch. */
static cel_value opt_index_stub(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)a, (void)n;
    return cel_error_static("no such overload");
}

#define G CEL_GLOBAL
#define R CEL_RECEIVER
#define F CEL_FN_FOLD
#define NS CEL_FN_NONSTRICT

static const cel_overload optional_overloads[] = {
    {"optional.of", "optional_of", G, 1, F, {"A"}, "optional(A)", opt_of, 1, NULL, NULL},
    {"optional.ofNonZeroValue", "optional_ofNonZeroValue", G, 1, F, {"A"}, "optional(A)", opt_of_nonzero, 1, NULL, NULL},
    {"optional.none", "optional_none", G, 0, F, {NULL}, "optional(A)", opt_none, 1, NULL, NULL},
    {"hasValue", "optional_hasValue", R, 1, F, {"optional(A)"}, "bool", opt_has, 1, NULL, NULL},
    {"value", "optional_value", R, 1, F, {"optional(A)"}, "A", opt_value, 1, NULL, NULL},
    {"or", "optional_or_optional", R, 2, NS, {"optional(A)", "optional(A)"}, "optional(A)", opt_or, 0, NULL, NULL},
    {"orValue", "optional_orValue_value", R, 2, NS, {"optional(A)", "A"}, "A", opt_or_value, 0, NULL, NULL},
    {"optional.unwrap", "optional_unwrap_list", G, 1, F, {"list(optional(A))"}, "list(A)", opt_unwrap, 1, NULL, NULL},
    {"unwrapOpt", "optional_unwrapOpt_list", R, 1, F, {"list(optional(A))"}, "list(A)", opt_unwrap, 1, NULL, NULL},
    {"first", "list_first", R, 1, F, {"list(A)"}, "optional(A)", list_first, 1, NULL, NULL},
    {"last", "list_last", R, 1, F, {"list(A)"}, "optional(A)", list_last, 1, NULL, NULL},
    {"_[?_]", "list_optindex_optional_int", G, 2, 0, {"list(A)", "int"}, "optional(A)", opt_index_stub, 1, NULL, NULL},
    {"_[?_]", "map_optindex_optional_value", G, 2, 0, {"map(K, V)", "K"}, "optional(V)", opt_index_stub, 1, NULL, NULL},
    {"_[?_]", "optional_list_optindex_optional_int", G, 2, 0, {"optional(list(A))", "int"}, "optional(A)", opt_index_stub, 1, NULL, NULL},
    {"_[?_]", "optional_map_optindex_optional_value", G, 2, 0, {"optional(map(K, V))", "K"}, "optional(V)", opt_index_stub, 1, NULL, NULL},
    {"_[_]", "optional_list_index_int", G, 2, 0, {"optional(list(A))", "int"}, "optional(A)", opt_index_stub, 1, NULL, NULL},
    {"_[_]", "optional_map_index_value", G, 2, 0, {"optional(map(K, V))", "K"}, "optional(V)", opt_index_stub, 1, NULL, NULL},
};

const cel_library cel_lib_optional = {"optional", optional_overloads, ARRAY_SIZE(optional_overloads)};
