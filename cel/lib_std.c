/* lib_std.c — the CEL standard library: operator overloads, size, string
 * predicates and type conversions, with cel-go's error behaviour (int64/uint64
 * overflow and division errors, range-checked conversions, Go's number parsing
 * and float printing).
 *
 * The logical operators, comparisons, `in` and indexing are declared here for the
 * checker; the evaluator runs them as dedicated instructions (compile.c) and the
 * implementations below serve unchecked dispatch and tests. */
#include "cel/functions.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cel_value overflow(void) { return cel_error_static("integer overflow"); }
/* cel-go's errUintOverflow (common/types/err.go): uint arithmetic and conversions to uint */
static cel_value uoverflow(void) { return cel_error_static("unsigned integer overflow"); }

/* ---- arithmetic ----------------------------------------------------------------- */

static cel_value concat(cel_call *c, const cel_value *a, const cel_value *b) {
    if (a->kind == CV_LIST) {
        /* add_list costs cel-go 1 whatever the sizes; the copy is hidden work */
        uint32_t n = a->u.list->n + b->u.list->n;
        if (!cel_call_work(c, (uint64_t)n * sizeof(cel_value))) return cel__cost_exceeded();
        cel_list *l = cel__list_new(c->arena, n);
        if (a->u.list->n) memcpy(l->items, a->u.list->items, sizeof(cel_value) * a->u.list->n);
        if (b->u.list->n) memcpy(l->items + a->u.list->n, b->u.list->items, sizeof(cel_value) * b->u.list->n);
        l->n = n;
        return cel_list_value(l);
    }
    size_t n = (size_t)a->len + b->len;
    if (n > UINT32_MAX / 2) return cel_error_static("string too long");
    /* add_string / add_bytes: ceil(0.1 × (size + size)), sizes in code points for
     * strings (cel-go interpreter/runtimecost.go) */
    if (!cel_call_cost(c, cel__cost_factor(cel__value_size(a) + cel__value_size(b), CEL_STRING_TRAVERSAL)))
        return cel__cost_exceeded();
    char *s = arena_alloc(c->arena, n + 1);
    if (a->len) memcpy(s, a->u.s, a->len);
    if (b->len) memcpy(s + a->len, b->u.s, b->len);
    s[n] = '\0';
    return a->kind == CV_STRING ? cel_string(s, n) : cel_bytes(s, n);
}

/* The int and uint arms of +, - and * (one switch arm each): Go's checked
 * arithmetic, where overflow is CEL's "return error for overflow". A macro because
 * the __builtin_*_overflow family is type-generic and cannot be passed as a
 * function; one definition keeps the three operators from drifting apart. */
#define STD_CHECKED_ARMS(builtin)                                \
    case CV_INT: {                                               \
        int64_t r;                                               \
        if (builtin(a[0].u.i, a[1].u.i, &r)) return overflow();  \
        return cel_int(r);                                       \
    }                                                            \
    case CV_UINT: {                                              \
        uint64_t r;                                              \
        if (builtin(a[0].u.u, a[1].u.u, &r)) return uoverflow(); \
        return cel_uint(r);                                      \
    }

static cel_value std_add(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    switch (a[0].kind) {
    STD_CHECKED_ARMS(__builtin_add_overflow)
    case CV_DOUBLE: return cel_double(a[0].u.d + a[1].u.d);
    default: return concat(c, &a[0], &a[1]);
    }
}

static cel_value std_sub(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    switch (a[0].kind) {
    STD_CHECKED_ARMS(__builtin_sub_overflow)
    default: return cel_double(a[0].u.d - a[1].u.d);
    }
}

static cel_value std_mul(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    switch (a[0].kind) {
    STD_CHECKED_ARMS(__builtin_mul_overflow)
    default: return cel_double(a[0].u.d * a[1].u.d);
    }
}

static cel_value std_div(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    switch (a[0].kind) {
    case CV_INT:
        if (a[1].u.i == 0) return cel_error_static("division by zero");
        if (a[0].u.i == INT64_MIN && a[1].u.i == -1) return overflow();
        return cel_int(a[0].u.i / a[1].u.i);
    case CV_UINT:
        if (a[1].u.u == 0) return cel_error_static("division by zero");
        return cel_uint(a[0].u.u / a[1].u.u);
    default: return cel_double(a[0].u.d / a[1].u.d);
    }
}

static cel_value std_mod(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (a[0].kind == CV_INT) {
        if (a[1].u.i == 0) return cel_error_static("modulus by zero");
        if (a[0].u.i == INT64_MIN && a[1].u.i == -1) return overflow();
        return cel_int(a[0].u.i % a[1].u.i);
    }
    if (a[1].u.u == 0) return cel_error_static("modulus by zero");
    return cel_uint(a[0].u.u % a[1].u.u);
}

static cel_value std_neg(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (a[0].kind == CV_INT) {
        if (a[0].u.i == INT64_MIN) return overflow();
        return cel_int(-a[0].u.i);
    }
    return cel_double(-a[0].u.d);
}

/* ---- logic, comparison, membership (see header comment) ------------------------ */

static cel_value std_not(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(!a[0].u.b);
}
static cel_value std_and(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(a[0].u.b && a[1].u.b);
}
static cel_value std_or(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(a[0].u.b || a[1].u.b);
}
static cel_value std_cond(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return a[0].u.b ? a[1] : a[2];
}
static cel_value std_nsf(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(!(a[0].kind == CV_BOOL && !a[0].u.b));
}
static cel_value std_eq(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(cel__value_equal(&a[0], &a[1]));
}
static cel_value std_ne(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(!cel__value_equal(&a[0], &a[1]));
}
static cel_value cmp_result(const cel_value *a, int want_lo, int want_hi) {
    int r;
    if (!cel__value_compare(&a[0], &a[1], &r)) return cel_error_static("no such overload");
    return cel_bool(r >= want_lo && r <= want_hi);
}
static cel_value std_lt(cel_call *c, const cel_value *a, uint32_t n) { (void)c, (void)n; return cmp_result(a, -1, -1); }
static cel_value std_le(cel_call *c, const cel_value *a, uint32_t n) { (void)c, (void)n; return cmp_result(a, -1, 0); }
static cel_value std_gt(cel_call *c, const cel_value *a, uint32_t n) { (void)c, (void)n; return cmp_result(a, 1, 1); }
static cel_value std_ge(cel_call *c, const cel_value *a, uint32_t n) { (void)c, (void)n; return cmp_result(a, 0, 1); }

static cel_value std_in(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (a[1].kind == CV_LIST) {
        for (uint32_t i = 0; i < a[1].u.list->n; i++)
            if (cel__value_equal(&a[0], &a[1].u.list->items[i])) return cel_bool(true);
        return cel_bool(false);
    }
    cel_value out;
    return cel_bool(cel__map_find(c->arena, c->names, &a[1], &a[0], &out));
}

static cel_value std_index(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (a[0].kind == CV_LIST) {
        int64_t i = a[1].u.i;
        if (i < 0 || i >= (int64_t)a[0].u.list->n) return cel__call_error(c, "index out of bounds: %lld", (long long)i);
        return a[0].u.list->items[i];
    }
    cel_value out;
    if (cel__map_find(c->arena, c->names, &a[0], &a[1], &out)) return out;
    return cel__call_error(c, "no such key");
}

/* ---- size and strings ------------------------------------------------------------ */

static cel_value std_size(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    switch (a[0].kind) {
    case CV_STRING:
        if (!cel_call_work(c, a[0].len)) return cel__cost_exceeded();
        return cel_int((int64_t)cel__utf8_len(a[0].u.s, a[0].len));
    case CV_BYTES: return cel_int(a[0].len);
    case CV_LIST: return cel_int(a[0].u.list->n);
    default: return cel_int(cel__map_size(&a[0]));
    }
}

static bool has_sub(const cel_value *s, const cel_value *t) {
    if (t->len == 0) return true;
    if (t->len > s->len) return false;
    return memmem(s->u.s, s->len, t->u.s, t->len) != NULL;
}

/* contains_string: ceil(0.1 × size(s)) × ceil(0.1 × size(sub)) (cel-go
 * interpreter/runtimecost.go). */
static cel_value str_contains(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    uint64_t cost = cel__cost_factor(cel__value_size(&a[0]), CEL_STRING_TRAVERSAL) *
                    cel__cost_factor(cel__value_size(&a[1]), CEL_STRING_TRAVERSAL);
    if (!cel_call_cost(c, cost)) return cel__cost_exceeded();
    return cel_bool(has_sub(&a[0], &a[1]));
}
/* starts_with_string / ends_with_string: ceil(0.1 × size of the prefix or suffix),
 * the call's second argument (cel-go interpreter/runtimecost.go, actualSize(args[1])). */
static cel_value str_starts(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!cel_call_cost(c, cel_str_tenth_cost(a[1].u.s, a[1].len))) return cel__cost_exceeded();
    return cel_bool(a[1].len <= a[0].len && cel_bytes_eq(a[0].u.s, a[1].u.s, a[1].len));
}
static cel_value str_ends(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!cel_call_cost(c, cel_str_tenth_cost(a[1].u.s, a[1].len))) return cel__cost_exceeded();
    return cel_bool(a[1].len <= a[0].len && cel_bytes_eq(a[0].u.s + a[0].len - a[1].len, a[1].u.s, a[1].len));
}

/* ---- conversions ---------------------------------------------------------------- */

/* The unsigned decimal digits both parsers below accept: at least one, nothing
 * else, no overflow of uint64. */
static bool parse_digits(const char *s, size_t n, uint64_t *out) {
    if (n == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Go's strconv.ParseInt(s, 10, 64) / ParseUint: optional sign (signed only), digits only. */
static bool parse_i64(const char *s, size_t n, int64_t *out) {
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t v;
    if (!parse_digits(s + i, n - i, &v)) return false;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return false;
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)v;
    }
    return true;
}

/* String.ConvertToType's failure (cel-go common/types/string.go): the text is not quoted */
static cel_value string_conv_error(const char *to) {
    if (!strcmp(to, "int")) return cel_error_static("type conversion error from 'string' to 'int'");
    if (!strcmp(to, "uint")) return cel_error_static("type conversion error from 'string' to 'uint'");
    if (!strcmp(to, "double")) return cel_error_static("type conversion error from 'string' to 'double'");
    return cel_error_static("type conversion error from 'string' to 'bool'");
}

static bool parse_u64(const char *s, size_t n, uint64_t *out) {
    size_t i = 0;
    if (i < n && s[i] == '+') i++;
    return parse_digits(s + i, n - i, out);
}

static cel_value conv_int(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    switch (a[0].kind) {
    case CV_INT: return a[0];
    case CV_UINT:
        if (a[0].u.u > (uint64_t)INT64_MAX) return overflow();
        return cel_int((int64_t)a[0].u.u);
    case CV_DOUBLE: {
        double d = a[0].u.d;
        if (isnan(d) || isinf(d) || d <= -9223372036854775808.0 || d >= 9223372036854775808.0) return overflow();
        return cel_int((int64_t)d);
    }
    case CV_STRING: {
        int64_t v;
        if (!parse_i64(a[0].u.s, a[0].len, &v))
            return string_conv_error("int");
        return cel_int(v);
    }
    default: return cel_error_static("no such overload");
    }
}

static cel_value conv_uint(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    switch (a[0].kind) {
    case CV_UINT: return a[0];
    case CV_INT:
        if (a[0].u.i < 0) return uoverflow();
        return cel_uint((uint64_t)a[0].u.i);
    case CV_DOUBLE: {
        double d = a[0].u.d;
        if (isnan(d) || isinf(d) || d < 0 || d >= 18446744073709551616.0) return uoverflow();
        return cel_uint((uint64_t)d);
    }
    case CV_STRING: {
        uint64_t v;
        if (!parse_u64(a[0].u.s, a[0].len, &v))
            return string_conv_error("uint");
        return cel_uint(v);
    }
    default: return cel_error_static("no such overload");
    }
}

/* Go's strconv.ParseFloat(s, 64): no surrounding space, accepts inf/infinity/nan. */
static bool parse_double(const char *s, size_t n, double *out) {
    char buf[128];
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\n' || buf[0] == '\r' || buf[0] == '\f' || buf[0] == '\v')
        return false;
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (*end) return false;
    if (errno == ERANGE && isinf(d)) return false;
    *out = d;
    return true;
}

static cel_value conv_double(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    switch (a[0].kind) {
    case CV_DOUBLE: return a[0];
    case CV_INT: return cel_double((double)a[0].u.i);
    case CV_UINT: return cel_double((double)a[0].u.u);
    case CV_STRING: {
        double d;
        if (!parse_double(a[0].u.s, a[0].len, &d))
            return string_conv_error("double");
        return cel_double(d);
    }
    default: return cel_error_static("no such overload");
    }
}

static bool valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) { i++; continue; }
        if ((c & 0xE0) == 0xC0) k = 1, cp = c & 0x1F;
        else if ((c & 0xF0) == 0xE0) k = 2, cp = c & 0x0F;
        else if ((c & 0xF8) == 0xF0) k = 3, cp = c & 0x07;
        else return false;
        if (i + k >= n) return false;
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp < 0xE000))
            return false;
        i += k + 1;
    }
    return true;
}

static cel_value conv_string(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    char buf[64];
    switch (a[0].kind) {
    case CV_STRING: return a[0];
    case CV_BOOL: return a[0].u.b ? cel_string("true", 4) : cel_string("false", 5);
    case CV_INT: snprintf(buf, sizeof buf, "%lld", (long long)a[0].u.i); break;
    case CV_UINT: snprintf(buf, sizeof buf, "%llu", (unsigned long long)a[0].u.u); break;
    case CV_DOUBLE: cel__format_double(a[0].u.d, buf, sizeof buf); break;
    case CV_BYTES:
        /* bytes_to_string: ceil(0.1 × size) (cel-go interpreter/runtimecost.go) */
        if (!cel_call_cost(c, cel__cost_factor(a[0].len, CEL_STRING_TRAVERSAL))) return cel__cost_exceeded();
        if (!valid_utf8((const unsigned char *)a[0].u.s, a[0].len)) return cel_error_static("invalid UTF-8 in bytes, cannot convert to string");
        return cel_string(a[0].u.s, a[0].len);
    default: return cel_error_static("no such overload");
    }
    return cel__string_copy(c->arena, buf, strlen(buf));
}

static cel_value conv_bytes(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    /* string_to_bytes: ceil(0.1 × size in code points) (cel-go interpreter/runtimecost.go) */
    if (a[0].kind == CV_STRING &&
        !cel_call_cost(c, cel__cost_factor(cel__value_size(&a[0]), CEL_STRING_TRAVERSAL)))
        return cel__cost_exceeded();
    return cel_bytes(a[0].u.s, a[0].len);
}

static cel_value conv_bool(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (a[0].kind == CV_BOOL) return a[0];
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
        if (a[0].len == strlen(t[i]) && !memcmp(a[0].u.s, t[i], a[0].len)) return cel_bool(true);
        if (a[0].len == strlen(f[i]) && !memcmp(a[0].u.s, f[i], a[0].len)) return cel_bool(false);
    }
    return string_conv_error("bool");
}

static cel_value conv_dyn(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return a[0];
}

static cel_value conv_type(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_type_value(cel__kind_type_name(&a[0]));
}

#define G CEL_GLOBAL
#define R CEL_RECEIVER
#define F CEL_FN_FOLD

/* cel.@mapInsert is emitted by the transformMap macros and runs as an instruction. */
static cel_value map_insert_stub(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)a, (void)n;
    return cel_error_static("no such overload");
}

static const cel_overload std_overloads[] = {
    {"cel.@mapInsert", "cel_@mapInsert_map_key_value", G, 3, 0, {"map(K, V)", "K", "V"}, "map(K, V)", map_insert_stub, 1, NULL, NULL},
    {"cel.@mapInsert", "cel_@mapInsert_map_map", G, 2, 0, {"map(K, V)", "map(K, V)"}, "map(K, V)", map_insert_stub, 1, NULL, NULL},
    {"_+_", "add_int64", G, 2, F, {"int", "int"}, "int", std_add, 1, NULL, NULL},
    {"_+_", "add_uint64", G, 2, F, {"uint", "uint"}, "uint", std_add, 1, NULL, NULL},
    {"_+_", "add_double", G, 2, F, {"double", "double"}, "double", std_add, 1, NULL, NULL},
    {"_+_", "add_string", G, 2, F, {"string", "string"}, "string", std_add, 1, NULL, NULL},
    {"_+_", "add_bytes", G, 2, F, {"bytes", "bytes"}, "bytes", std_add, 1, NULL, NULL},
    {"_+_", "add_list", G, 2, F, {"list(A)", "list(A)"}, "list(A)", std_add, 1, NULL, NULL},
    {"_-_", "subtract_int64", G, 2, F, {"int", "int"}, "int", std_sub, 1, NULL, NULL},
    {"_-_", "subtract_uint64", G, 2, F, {"uint", "uint"}, "uint", std_sub, 1, NULL, NULL},
    {"_-_", "subtract_double", G, 2, F, {"double", "double"}, "double", std_sub, 1, NULL, NULL},
    {"_*_", "multiply_int64", G, 2, F, {"int", "int"}, "int", std_mul, 1, NULL, NULL},
    {"_*_", "multiply_uint64", G, 2, F, {"uint", "uint"}, "uint", std_mul, 1, NULL, NULL},
    {"_*_", "multiply_double", G, 2, F, {"double", "double"}, "double", std_mul, 1, NULL, NULL},
    {"_/_", "divide_int64", G, 2, F, {"int", "int"}, "int", std_div, 1, NULL, NULL},
    {"_/_", "divide_uint64", G, 2, F, {"uint", "uint"}, "uint", std_div, 1, NULL, NULL},
    {"_/_", "divide_double", G, 2, F, {"double", "double"}, "double", std_div, 1, NULL, NULL},
    {"_%_", "modulo_int64", G, 2, F, {"int", "int"}, "int", std_mod, 1, NULL, NULL},
    {"_%_", "modulo_uint64", G, 2, F, {"uint", "uint"}, "uint", std_mod, 1, NULL, NULL},
    /* cel-go declares negate_double first: the first overload to match binds a free type
     * variable (`-[][0]` is a double) */
    {"-_", "negate_double", G, 1, F, {"double"}, "double", std_neg, 1, NULL, NULL},
    {"-_", "negate_int64", G, 1, F, {"int"}, "int", std_neg, 1, NULL, NULL},
    {"!_", "logical_not", G, 1, F, {"bool"}, "bool", std_not, 1, NULL, NULL},
    {"_&&_", "logical_and", G, 2, 0, {"bool", "bool"}, "bool", std_and, 0, NULL, NULL},
    {"_||_", "logical_or", G, 2, 0, {"bool", "bool"}, "bool", std_or, 0, NULL, NULL},
    {"_?_:_", "conditional", G, 3, 0, {"bool", "A", "A"}, "A", std_cond, 0, NULL, NULL},
    {"@not_strictly_false", "not_strictly_false", G, 1, CEL_FN_NONSTRICT, {"bool"}, "bool", std_nsf, 0, NULL, NULL},
    {"_==_", "equals", G, 2, F, {"A", "A"}, "bool", std_eq, 1, NULL, NULL},
    {"_!=_", "not_equals", G, 2, F, {"A", "A"}, "bool", std_ne, 1, NULL, NULL},
#define CMP(op, name, fn)                                                                         \
    {op, name "_bool", G, 2, F, {"bool", "bool"}, "bool", fn, 1, NULL, NULL},                    \
    {op, name "_int64", G, 2, F, {"int", "int"}, "bool", fn, 1, NULL, NULL},                     \
    {op, name "_uint64", G, 2, F, {"uint", "uint"}, "bool", fn, 1, NULL, NULL},                  \
    {op, name "_double", G, 2, F, {"double", "double"}, "bool", fn, 1, NULL, NULL},              \
    {op, name "_string", G, 2, F, {"string", "string"}, "bool", fn, 1, NULL, NULL},              \
    {op, name "_bytes", G, 2, F, {"bytes", "bytes"}, "bool", fn, 1, NULL, NULL},                 \
    {op, name "_int64_uint64", G, 2, F, {"int", "uint"}, "bool", fn, 1, NULL, NULL},             \
    {op, name "_int64_double", G, 2, F, {"int", "double"}, "bool", fn, 1, NULL, NULL},           \
    {op, name "_uint64_int64", G, 2, F, {"uint", "int"}, "bool", fn, 1, NULL, NULL},             \
    {op, name "_uint64_double", G, 2, F, {"uint", "double"}, "bool", fn, 1, NULL, NULL},         \
    {op, name "_double_int64", G, 2, F, {"double", "int"}, "bool", fn, 1, NULL, NULL},           \
    {op, name "_double_uint64", G, 2, F, {"double", "uint"}, "bool", fn, 1, NULL, NULL}
    CMP("_<_", "less", std_lt),
    CMP("_<=_", "less_equals", std_le),
    CMP("_>_", "greater", std_gt),
    CMP("_>=_", "greater_equals", std_ge),
#undef CMP
    {"@in", "in_list", G, 2, F, {"A", "list(A)"}, "bool", std_in, 1, NULL, NULL},
    {"@in", "in_map", G, 2, F, {"A", "map(A, B)"}, "bool", std_in, 1, NULL, NULL},
    {"_[_]", "index_list", G, 2, F, {"list(A)", "int"}, "A", std_index, 1, NULL, NULL},
    {"_[_]", "index_map", G, 2, F, {"map(A, B)", "A"}, "B", std_index, 1, NULL, NULL},
    {"size", "size_string", G, 1, F, {"string"}, "int", std_size, 1, NULL, NULL},
    {"size", "size_bytes", G, 1, F, {"bytes"}, "int", std_size, 1, NULL, NULL},
    {"size", "size_list", G, 1, F, {"list(A)"}, "int", std_size, 1, NULL, NULL},
    {"size", "size_map", G, 1, F, {"map(A, B)"}, "int", std_size, 1, NULL, NULL},
    {"size", "string_size", R, 1, F, {"string"}, "int", std_size, 1, NULL, NULL},
    {"size", "bytes_size", R, 1, F, {"bytes"}, "int", std_size, 1, NULL, NULL},
    {"size", "list_size", R, 1, F, {"list(A)"}, "int", std_size, 1, NULL, NULL},
    {"size", "map_size", R, 1, F, {"map(A, B)"}, "int", std_size, 1, NULL, NULL},
    {"contains", "contains_string", R, 2, F, {"string", "string"}, "bool", str_contains, 1, NULL, NULL},
    {"startsWith", "starts_with_string", R, 2, F, {"string", "string"}, "bool", str_starts, 1, NULL, NULL},
    {"endsWith", "ends_with_string", R, 2, F, {"string", "string"}, "bool", str_ends, 1, NULL, NULL},
    {"int", "int64_to_int64", G, 1, F, {"int"}, "int", conv_int, 1, NULL, NULL},
    {"int", "uint64_to_int64", G, 1, F, {"uint"}, "int", conv_int, 1, NULL, NULL},
    {"int", "double_to_int64", G, 1, F, {"double"}, "int", conv_int, 1, NULL, NULL},
    {"int", "string_to_int64", G, 1, F, {"string"}, "int", conv_int, 1, NULL, NULL},
    {"uint", "uint64_to_uint64", G, 1, F, {"uint"}, "uint", conv_uint, 1, NULL, NULL},
    {"uint", "int64_to_uint64", G, 1, F, {"int"}, "uint", conv_uint, 1, NULL, NULL},
    {"uint", "double_to_uint64", G, 1, F, {"double"}, "uint", conv_uint, 1, NULL, NULL},
    {"uint", "string_to_uint64", G, 1, F, {"string"}, "uint", conv_uint, 1, NULL, NULL},
    {"double", "double_to_double", G, 1, F, {"double"}, "double", conv_double, 1, NULL, NULL},
    {"double", "int64_to_double", G, 1, F, {"int"}, "double", conv_double, 1, NULL, NULL},
    {"double", "uint64_to_double", G, 1, F, {"uint"}, "double", conv_double, 1, NULL, NULL},
    {"double", "string_to_double", G, 1, F, {"string"}, "double", conv_double, 1, NULL, NULL},
    {"string", "string_to_string", G, 1, F, {"string"}, "string", conv_string, 1, NULL, NULL},
    {"string", "bool_to_string", G, 1, F, {"bool"}, "string", conv_string, 1, NULL, NULL},
    {"string", "int64_to_string", G, 1, F, {"int"}, "string", conv_string, 1, NULL, NULL},
    {"string", "uint64_to_string", G, 1, F, {"uint"}, "string", conv_string, 1, NULL, NULL},
    {"string", "double_to_string", G, 1, F, {"double"}, "string", conv_string, 1, NULL, NULL},
    {"string", "bytes_to_string", G, 1, F, {"bytes"}, "string", conv_string, 1, NULL, NULL},
    {"bytes", "bytes_to_bytes", G, 1, F, {"bytes"}, "bytes", conv_bytes, 1, NULL, NULL},
    {"bytes", "string_to_bytes", G, 1, F, {"string"}, "bytes", conv_bytes, 1, NULL, NULL},
    {"bool", "bool_to_bool", G, 1, F, {"bool"}, "bool", conv_bool, 1, NULL, NULL},
    {"bool", "string_to_bool", G, 1, F, {"string"}, "bool", conv_bool, 1, NULL, NULL},
    {"dyn", "to_dyn", G, 1, F, {"A"}, "dyn", conv_dyn, 1, NULL, NULL},
    {"type", "type", G, 1, F, {"A"}, "type(A)", conv_type, 1, NULL, NULL},
};

const cel_library cel_lib_std = {"std", std_overloads, ARRAY_SIZE(std_overloads)};
