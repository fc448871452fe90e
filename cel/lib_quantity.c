/* lib_quantity.c — Kubernetes' CEL quantity library (apiserver pkg/cel/library/
 * quantity.go) over base/quantity.h: quantity(), isQuantity(), sign(), and the
 * Quantity methods isGreaterThan/isLessThan/compareTo/asApproximateFloat/
 * asInteger/isInteger/add/sub. There are no <, > or + operators on quantities;
 * == and != compare numerically (value.c). quantity() with a constant argument is
 * folded at compile time. */
#include "cel/functions.h"

#include <string.h>

static cel_value new_q(cel_call *c, const quantity *q) {
    quantity *p = arena_alloc(c->arena, sizeof *p);
    *p = *q;
    return cel_quantity_value(p);
}

static cel_value q_parse(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    quantity q;
    err e;
    err_clear(&e);
    /* Kubernetes' CallCost: quantity/isQuantity ceil(0.1 × size) */
    if (!cel_call_cost(c, cel__cost_factor(cel__value_size(&a[0]), CEL_STRING_TRAVERSAL))) return cel__cost_exceeded();
    if (!quantity_parse(a[0].u.s, a[0].len, &q, &e)) return cel__call_error(c, "%s", e.msg);
    return new_q(c, &q);
}

static cel_value q_is(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!cel_call_cost(c, cel__cost_factor(cel__value_size(&a[0]), CEL_STRING_TRAVERSAL))) return cel__cost_exceeded();
    quantity q;
    return cel_bool(quantity_parse(a[0].u.s, a[0].len, &q, NULL));
}

static cel_value q_sign(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int(quantity_sign(a[0].u.q));
}

static cel_value q_gt(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(quantity_cmp(a[0].u.q, a[1].u.q) > 0);
}

static cel_value q_lt(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(quantity_cmp(a[0].u.q, a[1].u.q) < 0);
}

static cel_value q_cmp(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int(quantity_cmp(a[0].u.q, a[1].u.q));
}

static cel_value q_float(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_double(quantity_to_double(a[0].u.q));
}

static cel_value q_asint(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    int64_t v;
    if (!quantity_to_int64(a[0].u.q, &v)) return cel_error_static("cannot convert value to integer");
    return cel_int(v);
}

static cel_value q_isint(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    int64_t v;
    return cel_bool(quantity_to_int64(a[0].u.q, &v));
}

static cel_value q_addsub(cel_call *c, const cel_value *a, bool add) {
    quantity rhs, out;
    if (a[1].kind == CV_INT) rhs = quantity_from_int(a[1].u.i, QTY_DECIMAL_EXPONENT);
    else rhs = *a[1].u.q;
    bool ok = add ? quantity_add(a[0].u.q, &rhs, &out) : quantity_sub(a[0].u.q, &rhs, &out);
    if (!ok) return cel_error_static("quantity overflow");
    return new_q(c, &out);
}

static cel_value q_add(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return q_addsub(c, a, true);
}

static cel_value q_sub(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return q_addsub(c, a, false);
}

#define G CEL_GLOBAL
#define R CEL_RECEIVER
#define F CEL_FN_FOLD

static const cel_overload quantity_overloads[] = {
    {"quantity", "string_to_quantity", G, 1, F, {"string"}, "Quantity", q_parse, 1, NULL, NULL},
    {"isQuantity", "is_quantity_string", G, 1, F, {"string"}, "bool", q_is, 1, NULL, NULL},
    {"sign", "quantity_sign", G, 1, F, {"Quantity"}, "int", q_sign, 1, NULL, NULL},
    {"sign", "quantity_sign_receiver", R, 1, F, {"Quantity"}, "int", q_sign, 1, NULL, NULL},
    {"isGreaterThan", "quantity_is_greater_than", R, 2, F, {"Quantity", "Quantity"}, "bool", q_gt, 1, NULL, NULL},
    {"isLessThan", "quantity_is_less_than", R, 2, F, {"Quantity", "Quantity"}, "bool", q_lt, 1, NULL, NULL},
    {"compareTo", "quantity_compare_to", R, 2, F, {"Quantity", "Quantity"}, "int", q_cmp, 1, NULL, NULL},
    {"asApproximateFloat", "quantity_get_float", R, 1, F, {"Quantity"}, "double", q_float, 1, NULL, NULL},
    {"asInteger", "quantity_get_int", R, 1, F, {"Quantity"}, "int", q_asint, 1, NULL, NULL},
    {"isInteger", "quantity_is_integer", R, 1, F, {"Quantity"}, "bool", q_isint, 1, NULL, NULL},
    {"add", "quantity_add", R, 2, F, {"Quantity", "Quantity"}, "Quantity", q_add, 1, NULL, NULL},
    {"add", "quantity_add_int", R, 2, F, {"Quantity", "int"}, "Quantity", q_add, 1, NULL, NULL},
    {"sub", "quantity_sub", R, 2, F, {"Quantity", "Quantity"}, "Quantity", q_sub, 1, NULL, NULL},
    {"sub", "quantity_sub_int", R, 2, F, {"Quantity", "int"}, "Quantity", q_sub, 1, NULL, NULL},
};

const cel_library cel_lib_quantity = {"quantity", quantity_overloads, ARRAY_SIZE(quantity_overloads)};
