/* lib_regex.c — regular-expression functions: CEL's standard `matches` (global
 * `matches(s, re)` and receiver `s.matches(re)`, true when some substring matches)
 * and Kubernetes' regex library, `s.find(re) → string` (the leftmost match, "" when
 * none) and `s.findAll(re[, n]) → list(string)` (Go's FindAllString: successive
 * non-overlapping matches, at most n when n >= 0; an empty match right after a
 * match is skipped, so "123 abc".findAll('[0-9]*') is ["123", "", "", "", ""]).
 *
 * Patterns are RE2 (cel/regex.h). A constant pattern is compiled once, when the
 * expression is compiled (the overload's prepare hook), and a bad constant pattern
 * is a program construction error (cel-go's regex optimizations compile it then:
 * "program instantiation failed: error parsing regexp: ..."); a literal pattern of
 * `s.matches(re)` is caught before that by the regex literal validator (checker.c,
 * "invalid matches argument" at the literal). A pattern computed at run time is compiled for
 * the call and freed after it; its error is a runtime error with cel-go's text.
 *
 * Cost: cel-go's tracker for matches, ceil((1 + len(s)) × 0.1) × ceil(len(re) × 0.25)
 * on top of the call, applied to find and findAll too. */
#include "cel/lib_support.h"
#include "cel/regex.h"

#include <stdlib.h>

typedef enum { RX_MATCHES, RX_FIND, RX_FIND_ALL } rx_kind;

/* matches (cel-go interpreter/runtimecost.go) and find/findAll (Kubernetes'
 * CallCost): ceil(0.1 × (1 + size(text))) × ceil(0.25 × size(pattern)), sizes in
 * code points. */
static uint64_t rx_cost(const cel_value *text, const cel_value *pat) {
    uint64_t s = cel__cost_factor(1 + cel__value_size(text), CEL_STRING_TRAVERSAL);
    uint64_t r = cel__cost_factor(cel__value_size(pat), CEL_REGEX_LENGTH);
    return s * r;
}

static bool rx_prepare(rx_kind k, const cel_value *args, const bool *is_const, uint32_t nargs, void **out, err *e) {
    *out = NULL;
    if (nargs < 2 || !is_const[1] || args[1].kind != CV_STRING) return true;
    char msg[512];
    cel_regex *re = cel__regex_compile(args[1].u.s, args[1].len, msg, sizeof msg);
    if (!re) {
        /* cel-go's regex optimizations (interpreter.MatchesRegexOptimization,
         * Kubernetes' find/findAll) compile the pattern when the program is built */
        (void)k;
        err_set(e, "program instantiation failed: %s", msg);
        return false;
    }
    *out = re;
    return true;
}

static bool matches_prepare(const cel_value *a, const bool *c, uint32_t n, void **out, err *e) {
    return rx_prepare(RX_MATCHES, a, c, n, out, e);
}

static bool find_prepare(const cel_value *a, const bool *c, uint32_t n, void **out, err *e) {
    return rx_prepare(RX_FIND, a, c, n, out, e);
}

static void rx_release(void *p) { cel__regex_free(p); }

/* The prepared regex, or one compiled for this call (*owned set; the caller frees). */
static const cel_regex *rx_get(cel_call *c, rx_kind k, const cel_value *pat, cel_regex **owned, cel_value *errv) {
    *owned = NULL;
    if (c->prepared) return c->prepared;
    char msg[512];
    cel_regex *re = cel__regex_compile(pat->u.s, pat->len, msg, sizeof msg);
    if (!re) {
        *errv = k == RX_MATCHES ? cel__call_error(c, "%s", msg) : cel__call_error(c, "Illegal regex: %s", msg);
        return NULL;
    }
    *owned = re;
    return re;
}

static cel_value rx_matches(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, rx_cost(&a[0], &a[1]));
    cel_regex *owned;
    cel_value ev;
    const cel_regex *re = rx_get(c, RX_MATCHES, &a[1], &owned, &ev);
    if (!re) return ev;
    bool m = cel__regex_partial_match(re, a[0].u.s, a[0].len);
    cel__regex_free(owned);
    return cel_bool(m);
}

static cel_value rx_find(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, rx_cost(&a[0], &a[1]));
    cel_regex *owned;
    cel_value ev;
    const cel_regex *re = rx_get(c, RX_FIND, &a[1], &owned, &ev);
    if (!re) return ev;
    size_t s, e;
    bool m = cel__regex_find(re, a[0].u.s, a[0].len, 0, &s, &e);
    cel__regex_free(owned);
    if (!m) return cel_string("", 0);
    return cel_string(a[0].u.s + s, e - s);
}

typedef struct find_all_ctx {
    arena *a;
    cel_list *l;
    const char *text;
} find_all_ctx;

static bool find_all_emit(void *ctx, size_t start, size_t end) {
    find_all_ctx *f = ctx;
    cel__list_push(f->a, f->l, cel_string(f->text + start, end - start));
    return true;
}

static cel_value rx_find_all(cel_call *c, const cel_value *a, uint32_t n) {
    LIB_CALL_COST(c, rx_cost(&a[0], &a[1]));
    int64_t lim = n > 2 ? a[2].u.i : -1;
    cel_regex *owned;
    cel_value ev;
    const cel_regex *re = rx_get(c, RX_FIND_ALL, &a[1], &owned, &ev);
    if (!re) return ev;
    find_all_ctx f = {c->arena, cel__list_new(c->arena, 4), a[0].u.s};
    if (lim != 0) cel__regex_find_all(re, a[0].u.s, a[0].len, lim, find_all_emit, &f);
    cel__regex_free(owned);
    return cel_list_value(f.l);
}

#define R CEL_RECEIVER
#define G CEL_GLOBAL

static const cel_overload regex_overloads[] = {
    {"matches", "matches", G, 2, 0, {"string", "string"}, "bool", rx_matches, 1, matches_prepare, rx_release},
    {"matches", "matches_string", R, 2, 0, {"string", "string"}, "bool", rx_matches, 1, matches_prepare, rx_release},
    {"find", "string_find_string", R, 2, 0, {"string", "string"}, "string", rx_find, 1, find_prepare, rx_release},
    {"findAll", "string_find_all_string", R, 2, 0, {"string", "string"}, "list(string)", rx_find_all, 1, find_prepare,
     rx_release},
    {"findAll", "string_find_all_string_int", R, 3, 0, {"string", "string", "int"}, "list(string)", rx_find_all, 1,
     find_prepare, rx_release},
};

const cel_library cel_lib_regex = {"regex", regex_overloads, ARRAY_SIZE(regex_overloads)};
