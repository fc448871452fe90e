/* lib_lists.c — list functions: Kubernetes' lists library (isSorted, sum, min,
 * max, indexOf, lastIndexOf) and cel-go's `ext.Lists` at version 3 (slice,
 * flatten, sort, lists.range, reverse, distinct, and @sortByAssociatedKeys, the
 * function the sortBy macro expands to).
 *
 * Semantics are cel-go's, including its quirks: isSorted/min/max compare
 * neighbours with the type's Compare and ignore a comparison that fails (a NaN, or
 * mixed types in a dyn list) instead of erroring; sum adds with the element type's
 * `+` (so int overflow is "integer overflow") starting from the zero of the
 * overload the checker chose (hence one implementation per element type: the
 * runtime only sees "a list"); indexOf/lastIndexOf/distinct use CEL equality (1 ==
 * 1u == 1.0). sort() requires every element to have the first element's type.
 *
 * Comparable element types are int, uint, double, bool, string, bytes, duration and
 * timestamp; sum takes int, uint, double and duration. Costs are what Kubernetes
 * and cel-go charge at runtime: Kubernetes' traversalCost of the list for its
 * library (each element 1, a string element 0.1 × its bytes, truncated), cel-go's
 * ext.Lists trackers for the rest (1 + 10 for the new list, plus the output size
 * for slice/range/reverse, depth × input size for flatten, 2·n² — 2.1·n² for
 * strings and bytes — for sort and distinct). Element visits the cost does not
 * cover are hidden work (cel_call_work). */
#include "cel/lib_support.h"

#include <inttypes.h>

/* ---- comparisons --------------------------------------------------------------- */

/* cel-go Compare: -1/0/1, or 2 when the pair cannot be ordered (mixed non-numeric
 * kinds, NaN, kinds without an order). */
static int cmp(const cel_value *a, const cel_value *b) {
    int r;
    if (!cel__value_compare(a, b, &r)) return 2;
    return r;
}

static bool comparable_kind(uint8_t k) {
    return k == CV_INT || k == CV_UINT || k == CV_DOUBLE || k == CV_BOOL || k == CV_STRING || k == CV_BYTES ||
           k == CV_TIMESTAMP || k == CV_DURATION;
}

/* ---- Kubernetes lists library ------------------------------------------------------- */

uint64_t cel__lib_traversal_cost(const cel_value *v) {
    switch ((cel_kind)v->kind) {
    case CV_STRING:
    case CV_BYTES: return (uint64_t)((double)v->len * CEL_STRING_TRAVERSAL);
    case CV_LIST: {
        uint64_t c = 0;
        for (uint32_t i = 0; i < v->u.list->n; i++) c += cel__lib_traversal_cost(&v->u.list->items[i]);
        return c;
    }
    case CV_MAP: {
        uint64_t c = 0;
        for (uint32_t i = 0; i < v->u.map->n; i++)
            c += cel__lib_traversal_cost(&v->u.map->keys[i]) + cel__lib_traversal_cost(&v->u.map->vals[i]);
        return c;
    }
    default: return 1;
    }
}

/* The cost of Kubernetes' list functions (traversalCost of the receiver), with one
 * element visit of hidden work each. */
static bool k8s_list_cost(cel_call *c, const cel_value *l) {
    if (!cel_call_work(c, (uint64_t)l->u.list->n * sizeof(cel_value))) return false;
    return cel_call_cost(c, cel__lib_traversal_cost(l));
}
#define K8S_LIST_COST(c, l)                                       \
    do {                                                          \
        if (!k8s_list_cost((c), (l))) return cel__cost_exceeded(); \
    } while (0)

static cel_value list_is_sorted(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    for (uint32_t i = 1; i < l->n; i++)
        if (cmp(&l->items[i - 1], &l->items[i]) == 1) return cel_bool(false);
    return cel_bool(true);
}

static cel_value no_overload(cel_call *c) { return cel__call_error(c, "no such overload"); }

static cel_value list_sum_int(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    int64_t s = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != CV_INT) return no_overload(c);
        if (__builtin_add_overflow(s, l->items[i].u.i, &s)) return cel__call_error(c, "integer overflow");
    }
    return cel_int(s);
}

static cel_value list_sum_uint(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    uint64_t s = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != CV_UINT) return no_overload(c);
        if (__builtin_add_overflow(s, l->items[i].u.u, &s)) return cel__call_error(c, "unsigned integer overflow");
    }
    return cel_uint(s);
}

static cel_value list_sum_double(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    double s = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != CV_DOUBLE) return no_overload(c);
        s += l->items[i].u.d;
    }
    return cel_double(s);
}

/* Durations add as Go's time.Duration (int64 nanoseconds): "integer overflow" past it. */
static cel_value list_sum_duration(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    __int128 ns = 0;
    const __int128 lim = (__int128)INT64_MAX;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != CV_DURATION) return no_overload(c);
        ns += (__int128)l->items[i].u.i * 1000000000 + l->items[i].len;
        if (ns > lim || ns < -lim - 1) return cel__call_error(c, "integer overflow");
    }
    int64_t sec = (int64_t)(ns / 1000000000);
    int64_t rem = (int64_t)(ns % 1000000000);
    if (rem < 0) {
        rem += 1000000000;
        sec -= 1;
    }
    return cel_duration(sec, (uint32_t)rem);
}

/* cel-go's cmp(): keep the current result unless Compare says the next one is
 * preferred (result > next for min, result < next for max). */
static cel_value min_max(cel_call *c, const cel_value *a, bool is_min) {
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    if (l->n == 0) return cel__call_error(c, "%s called on empty list", is_min ? "min" : "max");
    const cel_value *r = &l->items[0];
    if (!comparable_kind(r->kind)) return no_overload(c);
    for (uint32_t i = 1; i < l->n; i++) {
        if (!comparable_kind(l->items[i].kind)) return no_overload(c);
        if (cmp(r, &l->items[i]) == (is_min ? 1 : -1)) r = &l->items[i];
    }
    return *r;
}

static cel_value list_min(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return min_max(c, a, true);
}

static cel_value list_max(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return min_max(c, a, false);
}

static cel_value list_index_of(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    for (uint32_t i = 0; i < l->n; i++)
        if (cel__value_equal(&l->items[i], &a[1])) return cel_int(i);
    return cel_int(-1);
}

static cel_value list_last_index_of(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    K8S_LIST_COST(c, &a[0]);
    for (uint32_t i = l->n; i-- > 0;)
        if (cel__value_equal(&l->items[i], &a[1])) return cel_int(i);
    return cel_int(-1);
}

/* ---- cel-go ext.Lists ------------------------------------------------------------- */

/* cel-go's trackAllocatingListCall: uint64(float64(size) × factor) + 1 for the call
 * + 10 for the new list (ext/lists.go). */
static uint64_t alloc_list_cost(double factor, uint64_t size) {
    double d = (double)size * factor;
    uint64_t c = d >= 1.8e19 ? UINT64_MAX / 2 : (uint64_t)d;
    return c + 1 + CEL_LIST_CREATE;
}

static cel_value list_slice(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    int64_t start = a[1].u.i, end = a[2].u.i;
    if (start < 0 || end < 0)
        return cel__call_error(c, "cannot slice(%" PRId64 ", %" PRId64 "), negative indexes not supported", start, end);
    if (start > end)
        return cel__call_error(c, "cannot slice(%" PRId64 ", %" PRId64 "), start index must be less than or equal to end index",
                              start, end);
    if ((int64_t)l->n < end)
        return cel__call_error(c, "cannot slice(%" PRId64 ", %" PRId64 "), list is length %u", start, end, l->n);
    uint32_t k = (uint32_t)(end - start);
    LIB_CALL_COST(c, alloc_list_cost(1, k));
    cel_list *r = cel__list_new(c->arena, k);
    if (k) memcpy(r->items, l->items + start, sizeof(cel_value) * k);
    r->n = k;
    return cel_list_value(r);
}

static bool flatten_into(cel_call *c, cel_list *out, const cel_list *l, int64_t depth) {
    for (uint32_t i = 0; i < l->n; i++) {
        const cel_value *v = &l->items[i];
        if (v->kind != CV_LIST || depth == 0) {
            cel__list_push(c->arena, out, *v);
            continue;
        }
        if (!cel_call_work(c, (uint64_t)v->u.list->n * sizeof(cel_value))) return false;
        if (!flatten_into(c, out, v->u.list, depth - 1)) return false;
    }
    return true;
}

static cel_value list_flatten(cel_call *c, const cel_value *a, uint32_t n) {
    int64_t depth = n > 1 ? a[1].u.i : 1;
    if (depth < 0) return cel__call_error(c, "level must be non-negative");
    const cel_list *l = a[0].u.list;
    LIB_CALL_COST(c, alloc_list_cost((double)depth, l->n));   /* trackListFlatten: depth × input size */
    cel_list *out = cel__list_new(c->arena, l->n);
    if (!flatten_into(c, out, l, depth)) return cel__cost_exceeded();
    return cel_list_value(out);
}

/* cel-go's tracker cost of sorting and distinct over l: 2·n² comparisons (2.1·n²
 * when the first element is a string or bytes, whose comparisons also traverse)
 * plus the list creation. */
static uint64_t quadratic_cost(const cel_list *l) {
    uint64_t sz = l->n;
    double factor = 2.0;
    if (sz && (l->items[0].kind == CV_STRING || l->items[0].kind == CV_BYTES)) factor += CEL_STRING_TRAVERSAL;
    return alloc_list_cost(factor, sz * sz);
}

/* Stable merge sort of indices by keys (cel-go's sort.Slice gives the same order
 * for the comparable types, where equal keys are equal values). */
static void merge_sort(uint32_t *idx, uint32_t *tmp, uint32_t n, const cel_value *keys) {
    if (n < 2) return;
    uint32_t h = n / 2;
    merge_sort(idx, tmp, h, keys);
    merge_sort(idx + h, tmp, n - h, keys);
    uint32_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        /* take from the right only when strictly less (Compare == -1) */
        if (cmp(&keys[idx[j]], &keys[idx[i]]) == -1) tmp[k++] = idx[j++];
        else tmp[k++] = idx[i++];
    }
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, sizeof(uint32_t) * n);
}

/* cel-go sortListByAssociatedKeys */
static cel_value sort_by_keys(cel_call *c, const cel_list *l, const cel_list *keys) {
    if (l->n != keys->n)
        return cel__call_error(c,
                              "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
                              "but got %u and %u elements respectively",
                              l->n, keys->n);
    LIB_CALL_COST(c, quadratic_cost(keys));
    if (l->n == 0) return cel_list_value(l);
    uint8_t k0 = keys->items[0].kind;
    if (!comparable_kind(k0)) return cel__call_error(c, "list elements must be comparable");
    for (uint32_t i = 1; i < keys->n; i++)
        if (keys->items[i].kind != k0) return cel__call_error(c, "list elements must have the same type");
    uint32_t *idx = arena_alloc(c->arena, sizeof(uint32_t) * l->n);
    uint32_t *tmp = arena_alloc(c->arena, sizeof(uint32_t) * l->n);
    for (uint32_t i = 0; i < l->n; i++) idx[i] = i;
    merge_sort(idx, tmp, l->n, keys->items);
    cel_list *r = cel__list_new(c->arena, l->n);
    for (uint32_t i = 0; i < l->n; i++) r->items[i] = l->items[idx[i]];
    r->n = l->n;
    return cel_list_value(r);
}

static cel_value list_sort(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return sort_by_keys(c, a[0].u.list, a[0].u.list);
}

static cel_value list_sort_by_keys(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return sort_by_keys(c, a[0].u.list, a[1].u.list);
}

/* lists.range allocates at most this many elements (cel-go's maxRangeSize). */
#define MAX_RANGE_SIZE 10000000

static cel_value lists_range(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    int64_t k = a[0].u.i;
    if (k < 0) return cel__call_error(c, "lists.range: size must be non-negative, got %" PRId64, k);
    if (k > MAX_RANGE_SIZE)
        return cel__call_error(c, "lists.range: size %" PRId64 " exceeds maximum allowed (%d)", k, MAX_RANGE_SIZE);
    LIB_CALL_COST(c, alloc_list_cost(1, (uint64_t)k));
    cel_list *r = cel__list_new(c->arena, (uint32_t)k);
    for (int64_t i = 0; i < k; i++) r->items[i] = cel_int(i);
    r->n = (uint32_t)k;
    return cel_list_value(r);
}

static cel_value list_reverse(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    LIB_CALL_COST(c, alloc_list_cost(1, l->n));
    cel_list *r = cel__list_new(c->arena, l->n);
    for (uint32_t i = 0; i < l->n; i++) r->items[i] = l->items[l->n - 1 - i];
    r->n = l->n;
    return cel_list_value(r);
}

static cel_value list_distinct(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const cel_list *l = a[0].u.list;
    LIB_CALL_COST(c, quadratic_cost(l));
    if (l->n == 0) return a[0];
    cel_list *r = cel__list_new(c->arena, l->n);
    for (uint32_t i = 0; i < l->n; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < r->n && !seen; j++) seen = cel__value_equal(&l->items[i], &r->items[j]);
        if (!seen) r->items[r->n++] = l->items[i];
    }
    return cel_list_value(r);
}

/* ---- the library ------------------------------------------------------------------ */

#define R CEL_RECEIVER
#define G CEL_GLOBAL
#define F CEL_FN_FOLD

/* One overload per comparable element type, as both libraries declare them:
 * `RES` is the result type text for the element type T. */
#define CMP_OV(name, id, T, RES, fn) {name, id, R, 1, F, {"list(" T ")"}, RES, fn, 1, NULL, NULL}
#define IS_SORTED_OVS                                                                  \
    CMP_OV("isSorted", "list_int_is_sorted_bool", "int", "bool", list_is_sorted),       \
    CMP_OV("isSorted", "list_uint_is_sorted_bool", "uint", "bool", list_is_sorted),     \
    CMP_OV("isSorted", "list_double_is_sorted_bool", "double", "bool", list_is_sorted), \
    CMP_OV("isSorted", "list_bool_is_sorted_bool", "bool", "bool", list_is_sorted),     \
    CMP_OV("isSorted", "list_string_is_sorted_bool", "string", "bool", list_is_sorted), \
    CMP_OV("isSorted", "list_bytes_is_sorted_bool", "bytes", "bool", list_is_sorted),   \
    CMP_OV("isSorted", "list_duration_is_sorted_bool", "duration", "bool", list_is_sorted), \
    CMP_OV("isSorted", "list_timestamp_is_sorted_bool", "timestamp", "bool", list_is_sorted)
#define MIN_MAX_OVS(name, fn)                                        \
    CMP_OV(name, "list_int_" name "_int", "int", "int", fn),          \
    CMP_OV(name, "list_uint_" name "_uint", "uint", "uint", fn),      \
    CMP_OV(name, "list_double_" name "_double", "double", "double", fn), \
    CMP_OV(name, "list_bool_" name "_bool", "bool", "bool", fn),      \
    CMP_OV(name, "list_string_" name "_string", "string", "string", fn), \
    CMP_OV(name, "list_bytes_" name "_bytes", "bytes", "bytes", fn),    \
    CMP_OV(name, "list_duration_" name "_duration", "duration", "duration", fn), \
    CMP_OV(name, "list_timestamp_" name "_timestamp", "timestamp", "timestamp", fn)

static const cel_overload lists_overloads[] = {
    /* Kubernetes lists library */
    IS_SORTED_OVS,
    {"sum", "list_int_sum_int", R, 1, F, {"list(int)"}, "int", list_sum_int, 1, NULL, NULL},
    {"sum", "list_uint_sum_uint", R, 1, F, {"list(uint)"}, "uint", list_sum_uint, 1, NULL, NULL},
    {"sum", "list_double_sum_double", R, 1, F, {"list(double)"}, "double", list_sum_double, 1, NULL, NULL},
    {"sum", "list_duration_sum_duration", R, 1, F, {"list(duration)"}, "duration", list_sum_duration, 1, NULL, NULL},
    MIN_MAX_OVS("min", list_min),
    MIN_MAX_OVS("max", list_max),
    {"indexOf", "list_a_index_of_int", R, 2, F, {"list(A)", "A"}, "int", list_index_of, 1, NULL, NULL},
    {"lastIndexOf", "list_a_last_index_of_int", R, 2, F, {"list(A)", "A"}, "int", list_last_index_of, 1, NULL, NULL},
    /* cel-go ext.Lists v3 */
    {"slice", "list_slice", R, 3, F, {"list(T)", "int", "int"}, "list(T)", list_slice, 1, NULL, NULL},
    {"flatten", "list_flatten", R, 1, F, {"list(list(T))"}, "list(T)", list_flatten, 1, NULL, NULL},
    {"flatten", "list_flatten_int", R, 2, F, {"list(dyn)", "int"}, "list(dyn)", list_flatten, 1, NULL, NULL},
    {"sort", "list_int_sort", R, 1, F, {"list(int)"}, "list(int)", list_sort, 1, NULL, NULL},
    {"sort", "list_uint_sort", R, 1, F, {"list(uint)"}, "list(uint)", list_sort, 1, NULL, NULL},
    {"sort", "list_double_sort", R, 1, F, {"list(double)"}, "list(double)", list_sort, 1, NULL, NULL},
    {"sort", "list_bool_sort", R, 1, F, {"list(bool)"}, "list(bool)", list_sort, 1, NULL, NULL},
    {"sort", "list_string_sort", R, 1, F, {"list(string)"}, "list(string)", list_sort, 1, NULL, NULL},
    {"sort", "list_bytes_sort", R, 1, F, {"list(bytes)"}, "list(bytes)", list_sort, 1, NULL, NULL},
    {"sort", "list_duration_sort", R, 1, F, {"list(duration)"}, "list(duration)", list_sort, 1, NULL, NULL},
    {"sort", "list_timestamp_sort", R, 1, F, {"list(timestamp)"}, "list(timestamp)", list_sort, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_int_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(int)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_uint_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(uint)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_double_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(double)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_bool_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(bool)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_string_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(string)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_bytes_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(bytes)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_duration_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(duration)"}, "list(T)",
     list_sort_by_keys, 1, NULL, NULL},
    {"@sortByAssociatedKeys", "list_timestamp_sortByAssociatedKeys", R, 2, F, {"list(T)", "list(timestamp)"},
     "list(T)", list_sort_by_keys, 1, NULL, NULL},
    {"lists.range", "lists_range", G, 1, F, {"int"}, "list(int)", lists_range, 1, NULL, NULL},
    {"reverse", "list_reverse", R, 1, F, {"list(T)"}, "list(T)", list_reverse, 1, NULL, NULL},
    {"distinct", "list_distinct", R, 1, F, {"list(T)"}, "list(T)", list_distinct, 1, NULL, NULL},
};

const cel_library cel_lib_lists = {"lists", lists_overloads, ARRAY_SIZE(lists_overloads)};
