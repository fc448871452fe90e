/* functions.h — the CEL function registry: how a library of functions plugs into
 * the checker and the evaluator.
 *
 * HOW TO ADD A LIBRARY (e.g. cel/lib_strings.c):
 *   1. Write the implementations as `cel_value fn(cel_call *c, const cel_value *args,
 *      uint32_t nargs)`. For a receiver-style function (`s.startsWith(x)`) args[0] is
 *      the receiver. Arguments already have the kinds the signature promises (the
 *      evaluator dispatches on runtime kinds; `dyn` admits any kind) and are never
 *      errors unless the overload is CEL_FN_NONSTRICT. Build results with the
 *      constructors of cel/value.h, allocating only from c->arena (reset before each
 *      evaluation; never malloc). Fail by returning cel__call_error(c, "...") (the text
 *      is what the user sees, e.g. "no such key: x"). A function whose cel-go cost
 *      depends on its arguments sets it with cel_call_cost(c, total) before doing the
 *      work (see "cel-go's runtime cost of a call" below); work beyond what that
 *      cost pays for goes to cel_call_work(c, bytes), so that no expression within
 *      the cost limit runs long.
 *   2. Describe each overload in a const table of cel_overload:
 *        {"startsWith", "string_starts_with", CEL_RECEIVER, 2, 0, {"string", "string"},
 *         "bool", str_starts_with, 1}
 *      Type text: int uint double bool string bytes null dyn list(T) map(K, V)
 *      optional(T) type(T) Quantity Semver timestamp duration, or any dotted name for your own opaque
 *      type; single capital letters are type parameters, bound per call (so
 *      "list(A)", "A" → A is the element type). Qualified global functions are
 *      written with their namespace: "strings.quote", "sets.contains".
 *   3. Export `const cel_library cel_lib_<name> = {"<name>", table, ARRAY_SIZE(table)};`
 *      and add ONE line `&cel_lib_<name>,` to the list in cel/libraries.c (and the
 *      extern declaration at the end of this header).
 * Optional per overload: `prepare` runs at compile time with the constant arguments
 * (others are CV_ERROR placeholders with is_const false) when the call resolved to
 * that single overload, e.g. to precompile a regex
 * and to reject a bad literal pattern as a compile error; its result arrives as
 * c->prepared at each call and is released with `release` when the program is freed.
 * Flag CEL_FN_FOLD marks a pure function whose call with constant arguments is
 * evaluated once at compile time (quantity("40Gi") becomes a constant).
 *
 * The registry is const data: no registration at run time, no global state. */
#ifndef DRA_CEL_FUNCTIONS_H
#define DRA_CEL_FUNCTIONS_H

#include <assert.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/intern.h"
#include "cel/value.h"

#define CEL_MAX_ARGS 4   /* including the receiver */

/* What an implementation sees of the evaluation. */
typedef struct cel_call {
    arena *arena;                 /* per-evaluation memory; reset before each evaluation */
    const intern_table *names;    /* the environment's intern table (device names) */
    uint64_t *cost;               /* running cost of this evaluation */
    uint64_t cost_limit;
    const void *prepared;         /* result of the overload's prepare(), or NULL */
    uint64_t *work;               /* hidden work of this evaluation (see cel_call_work), or NULL */
    uint32_t charged;             /* fixed cost the evaluator charged before the call (see cel_call_cost) */
    bool overload_unknown;        /* the checker left several overloads: cel-go's planner has no
                                   * overload id, so costs by overload id do not apply */
} cel_call;

typedef cel_value (*cel_fn)(cel_call *c, const cel_value *args, uint32_t nargs);
typedef bool (*cel_prepare_fn)(const cel_value *args, const bool *is_const, uint32_t nargs, void **out, err *e);

typedef enum cel_call_style {
    CEL_GLOBAL = 0,    /* f(a, b) */
    CEL_RECEIVER = 1,  /* a.f(b): args[0] is the receiver */
} cel_call_style;

enum cel_fn_flags {
    CEL_FN_FOLD = 1 << 0,       /* pure: fold at compile time when all arguments are constant */
    CEL_FN_NONSTRICT = 1 << 1,  /* receives error arguments instead of propagating them */
    CEL_FN_MIXED_LITERALS = 1 << 2, /* list/map literals anywhere inside the arguments may mix
                                     * element types (exempt from Kubernetes' homogeneous
                                     * aggregate literal rule, e.g. "%s %d".format([a, 1])) */
};

typedef struct cel_overload {
    const char *name;             /* CEL function name: "startsWith", "_+_", "sets.contains" */
    const char *id;               /* unique overload id: "string_starts_with" */
    uint8_t style;                /* cel_call_style */
    uint8_t nargs;                /* number of arguments including the receiver */
    uint16_t flags;               /* cel_fn_flags */
    const char *args[CEL_MAX_ARGS];
    const char *result;
    cel_fn fn;
    uint32_t cost;                /* charged before each call: cel-go's cost when fixed (1 by
                                   * default); size-dependent functions reset it (cel_call_cost) */
    cel_prepare_fn prepare;       /* optional */
    void (*release)(void *prepared);
} cel_overload;

typedef struct cel_library {
    const char *name;
    const cel_overload *overloads;
    size_t count;
} cel_library;

/* ---- helpers for implementations -------------------------------------------- */

cel_value cel__call_error(cel_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cel_value cel__cost_exceeded(void);

/* ---- cel-go's runtime cost of a call -----------------------------------------
 *
 * cel-go charges each call what interpreter/runtimecost.go's costCall returns: an
 * overload tracker of the library (ext lists, sets), else Kubernetes' CallCost
 * (apiserver pkg/cel/library/cost.go, by function name), else cel-go's default (a
 * size-dependent rule for a few standard overloads, 1 for everything else). Sizes
 * are cel-go's actualSize (cel__value_size). A function whose cost depends on its
 * arguments computes that figure and passes it to cel_call_cost, which replaces the
 * fixed cost the evaluator charged before the call (the overload's `cost`). */

#define CEL_STRING_TRAVERSAL 0.1   /* cel-go common.StringTraversalCostFactor */
#define CEL_REGEX_LENGTH 0.25      /* common.RegexStringLengthCostFactor */
#define CEL_LIST_CREATE 10         /* common.ListCreateBaseCost */
#define CEL_MAP_CREATE 30          /* common.MapCreateBaseCost */
/* Sets this call's cost to `total`: charges the difference to what the evaluator
 * charged already (c->charged), or gives back the excess. False once the running
 * cost is past the limit (the caller returns cel__cost_exceeded()). Charged before
 * the work it pays for, so an expensive call past the limit is never done. */
static inline bool cel_call_cost(cel_call *c, uint64_t total) {
    if (total >= c->charged) {
        *c->cost += total - c->charged;
    } else {
        assert(*c->cost >= c->charged - total);
        *c->cost -= c->charged - total;
    }
    c->charged = (uint32_t)(total < UINT32_MAX ? total : UINT32_MAX);
    return *c->cost <= c->cost_limit;
}

/* Some calls cost cel-go a constant while their real work grows with the input:
 * `size()` of a string counts code points in O(n) and is charged 1. Charged exactly as
 * cel-go does, an expression could run for tens of seconds inside the cost budget
 * (where Kubernetes' scheduler would hit its filter timeout instead). Such work is
 * counted here, apart from the CEL cost so that cost figures stay cel-go's, and an
 * evaluation that exceeds CEL_MAX_WORK bytes of it stops with the cost-limit error. */
#define CEL_MAX_WORK ((uint64_t)1 << 30)
/* The same backstop for memory: cel-go builds some results lazily (`l + l` is O(1)
 * and costs 1) that this evaluator copies, so an evaluation whose arena would pass
 * CEL_MAX_ARENA bytes also stops with the cost-limit error. Work units of
 * allocating calls are the bytes they are about to allocate. */
#define CEL_MAX_ARENA ((uint64_t)1 << 28)
static inline bool cel_call_work(cel_call *c, uint64_t n) {
    if (!c->work) return true;
    *c->work += n;
    if (*c->work <= CEL_MAX_WORK && c->arena->total + n <= CEL_MAX_ARENA) return true;
    /* past the budget the evaluation fails as over the cost limit, whatever operator
     * the error value then meets (`false && x` must not absorb it) */
    *c->cost = c->cost_limit + 1;
    return false;
}
#define CEL_COST_EXCEEDED_MSG "operation cancelled: actual cost limit exceeded"

/* ---- the libraries (listed in cel/libraries.c) ------------------------------ */

extern const cel_library *const cel_libraries[];
extern const size_t cel_nlibraries;

extern const cel_library cel_lib_std;        /* operators, size, conversions, string basics */
extern const cel_library cel_lib_quantity;   /* Kubernetes quantity library */
extern const cel_library cel_lib_semver;     /* Kubernetes semver library */
extern const cel_library cel_lib_optional;   /* optional types */
extern const cel_library cel_lib_dra;        /* includes() */
extern const cel_library cel_lib_time;       /* timestamp, duration */
extern const cel_library cel_lib_regex;      /* matches, find, findAll (RE2) */
extern const cel_library cel_lib_strings;    /* cel-go ext.Strings v2 */
extern const cel_library cel_lib_lists;      /* Kubernetes lists + cel-go ext.Lists v3 */
extern const cel_library cel_lib_sets;       /* cel-go ext.Sets */
extern const cel_library cel_lib_net;        /* Kubernetes IP and CIDR */
extern const cel_library cel_lib_url;        /* Kubernetes URLs */
extern const cel_library cel_lib_format;     /* Kubernetes named formats */

#endif
