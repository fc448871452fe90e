/* lib_sets.c — cel-go's `ext.Sets`: set relations over lists, with CEL equality
 * (so 1, 1u and 1.0 are the same element, and lists/maps compare deeply).
 *
 *   sets.contains(a, b)    every element of b is in a (true when b is empty)
 *   sets.equivalent(a, b)  contains both ways (sizes and duplicates do not matter)
 *   sets.intersects(a, b)  some element of a is in b (false when either is empty)
 *
 * Membership is a linear scan, so each call is O(|a|·|b|) comparisons, charged as
 * cel-go's ext/sets.go tracker does: 1 + |a|·|b| (equivalent: 1 + 2·|a|·|b|). */
#include "cel/lib_support.h"

static bool list_has(const cel_list *l, const cel_value *v) {
    for (uint32_t i = 0; i < l->n; i++)
        if (cel__value_equal(&l->items[i], v)) return true;
    return false;
}

static bool contains_all(const cel_list *l, const cel_list *sub) {
    for (uint32_t i = 0; i < sub->n; i++)
        if (!list_has(l, &sub->items[i])) return false;
    return true;
}

static cel_value sets_contains(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, 1 + (uint64_t)a[0].u.list->n * a[1].u.list->n);
    return cel_bool(contains_all(a[0].u.list, a[1].u.list));
}

static cel_value sets_equivalent(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, 1 + 2 * (uint64_t)a[0].u.list->n * a[1].u.list->n);
    return cel_bool(contains_all(a[0].u.list, a[1].u.list) && contains_all(a[1].u.list, a[0].u.list));
}

static cel_value sets_intersects(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, 1 + (uint64_t)a[0].u.list->n * a[1].u.list->n);
    const cel_list *x = a[0].u.list, *y = a[1].u.list;
    for (uint32_t i = 0; i < x->n; i++)
        if (list_has(y, &x->items[i])) return cel_bool(true);
    return cel_bool(false);
}

static const cel_overload sets_overloads[] = {
    {"sets.contains", "sets_contains_list_list", CEL_GLOBAL, 2, CEL_FN_FOLD, {"list(T)", "list(T)"}, "bool",
     sets_contains, 1, NULL, NULL},
    {"sets.equivalent", "sets_equivalent_list_list", CEL_GLOBAL, 2, CEL_FN_FOLD, {"list(T)", "list(T)"}, "bool",
     sets_equivalent, 1, NULL, NULL},
    {"sets.intersects", "sets_intersects_list_list", CEL_GLOBAL, 2, CEL_FN_FOLD, {"list(T)", "list(T)"}, "bool",
     sets_intersects, 1, NULL, NULL},
};

const cel_library cel_lib_sets = {"sets", sets_overloads, ARRAY_SIZE(sets_overloads)};
