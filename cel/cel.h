/* cel.h — the public contract of the CEL layer: compile DRA selector expressions
 * once, evaluate them per device many times.
 *
 * CEL (Common Expression Language) is what DeviceClass and ResourceClaim selectors
 * are written in. This module implements the language (lexer, parser, checker,
 * compiler to a flat program, evaluator) with the environment Kubernetes builds
 * for DRA: the `device` variable and the libraries Kubernetes enables (quantity,
 * semver, strings v2, regex, lists, sets, optionals, two-variable comprehensions,
 * cel.bind, includes, url/ip/cidr/format), with the StoredExpressions flavour the
 * scheduler uses (every field and function available regardless of feature gates).
 *
 * Threading: a cel_env and every cel_program are immutable once built and may be
 * shared by any number of threads. cel_cache is internally locked. A cel_eval_ctx
 * is per-thread scratch and must not be shared.
 *
 * Devices are seen through `cel_device`, a read-only view the engine builds once per
 * device at ingest (attribute names interned, versions pre-parsed, quantities
 * parsed), so evaluation never parses or allocates for ordinary selectors. The
 * view's layout is a contract for speed; see "the device view" below.
 *
 * Everything else in cel/ (*_internal.h, ast.h, value.h, …) is private to cel/ and to
 * the tests. */
#ifndef DRA_CEL_H
#define DRA_CEL_H

#include "base/arena.h"
#include "base/base.h"
#include "base/error.h"
#include "base/intern.h"
#include "base/quantity.h"
#include "base/semver.h"

/* ---- the device view -------------------------------------------------------
 *
 * Layout contract, and why. Filtering a large device set runs one selector over
 * many devices in a row; beyond the caches (about 10k devices here) the time per
 * device is the memory it touches, not the evaluator: E1 of bench/ (one string
 * attribute) costs ~12 ns on cached devices and took 57 ns at 100k devices with
 * 64-byte attributes. What a lookup reads must therefore be small and dense:
 *
 *   - cel_attr is 16 bytes: key (domain, a 24-bit name), kind and one 8-byte
 *     value. Scalars that fit (int, bool) are held; everything else — strings,
 *     versions, lists with their count — is referred to. At 24 bytes (the count
 *     beside the kind) the attribute arrays of 100k devices were 22.5 MiB, which
 *     with the views did not fit a 32 MiB L3: E1's plain-C floor took 9.0 ns per
 *     device and E1 11.3–11.9; at 16 bytes (15.7 MiB) 6.6 and 9.3–9.6
 *     (`dralloc bench cel --devices 100000`).
 *     cel_capacity is 16 bytes (key + pointer).
 *     A lookup scans the keys from the first attribute on, so a device's
 *     attributes are one array, and so are its capacities (in any order; the
 *     evaluator relies on none).
 *   - Referred-to values are immutable and owned by whoever built the view (its
 *     arena); equal values should be shared (one cel_str for every "NVIDIA
 *     H100", one semver for a driverVersion, one quantity for "80Gi"): shared
 *     values stay cached however many devices refer to them.
 *   - Builders of many views put the attribute arrays of consecutive devices back
 *     to back in one region and the capacity arrays in another, with per-device
 *     values that are not shared (e.g. a uuid string) elsewhere. A selector that
 *     reads one attribute then touches consecutive cache lines from device to
 *     device, which the hardware prefetcher follows; mixed into one region, the
 *     first attribute of each device is a lone line several lines from the
 *     previous one, and each costs a memory latency (E2 67 ns → 20 ns at 100k
 *     devices once the capacities had their own region). cel_eval_bool requests a
 *     device's first capacity line up front when the program reads capacities,
 *     which keeps that region a dense stream even for selectors that reach the
 *     capacity on few devices (E5 28 → 21 ns).
 *
 * Evaluation never writes to a view; views and everything they refer to may be
 * shared by threads. */

typedef struct cel_str {
    const char *s;
    uint32_t len;
    /* Code points of s when the builder counted them (cel_str_of), else 0: the cost
     * of startsWith / endsWith is a tenth of them, and counting them on every
     * evaluation was a quarter of E4's time (19 → 14 ns at 100k devices). Filled in
     * the struct's padding, so that {s, len} initialisers stay right (uncounted). */
    uint32_t runes;
} cel_str;

/* {s, n, code points of s}: what builders of views put in a cel_str. */
cel_str cel_str_of(const char *s, uint32_t n);

typedef enum cel_attr_kind {
    CEL_ATTR_NONE = 0,     /* attribute present but with no value set (`{}` in the slice) */
    CEL_ATTR_INT,
    CEL_ATTR_BOOL,
    CEL_ATTR_STRING,
    CEL_ATTR_VERSION,
    CEL_ATTR_INTS,         /* list-type attributes (DRAListTypeAttributes) */
    CEL_ATTR_BOOLS,
    CEL_ATTR_STRINGS,
    CEL_ATTR_VERSIONS,
} cel_attr_kind;

/* The elements of a list-type attribute: referred to from its cel_attr (lists are
 * rare, and keeping their count out of cel_attr is what makes it 16 bytes). */
typedef struct cel_attr_list {
    uint32_t count;
    union {
        const int64_t *ints;
        const bool *bools;
        const cel_str *strs;
        const semver *vers;
    };
} cel_attr_list;

/* The largest attribute name id a cel_attr holds: ids are the intern table's, which
 * gives them in insertion order; builders refuse a larger one (dra's decoder with an
 * error naming the attribute) rather than truncate it. */
#define CEL_ATTR_NAME_BITS 24
#define CEL_ATTR_NAME_MAX ((UINT32_C(1) << CEL_ATTR_NAME_BITS) - 1)

typedef struct cel_attr {   /* 16 bytes, see the layout contract above */
    uint32_t domain;                       /* interned domain; an unqualified name gets the driver's name */
    uint32_t name : CEL_ATTR_NAME_BITS;    /* interned attribute id within the domain, <= CEL_ATTR_NAME_MAX */
    uint32_t kind : 8;                     /* cel_attr_kind */
    union {
        int64_t i;
        bool b;
        const cel_str *s;            /* owned by whoever built the view; may be shared */
        const semver *v;             /* owned by whoever built the view; may be shared */
        const cel_attr_list *list;   /* the list kinds; owned likewise */
    } u;
} cel_attr;

typedef struct cel_capacity {   /* 16 bytes */
    uint32_t domain;
    uint32_t name;
    const quantity *value; /* owned by whoever built the view; may be shared */
} cel_capacity;

/* 56 bytes: pointers first, then the 32-bit fields, so that nothing is padding. */
typedef struct cel_device {
    cel_str driver;
    const cel_attr *attrs;          /* nattrs */
    const cel_capacity *caps;       /* ncaps */
    /* When the device cannot be converted for CEL at all — an attribute without a
     * value ("attribute NAME: unsupported attribute value") or a version that does
     * not parse ("attribute NAME: parse semantic version: ...") — every evaluation
     * on it fails with this text, as in Kubernetes, where conversion precedes
     * evaluation. NULL when the device is fine. */
    const char *conv_error;
    uint32_t driver_id;             /* interned driver name */
    uint32_t nattrs;
    uint32_t ncaps;
    bool allow_multiple_allocations;
} cel_device;

_Static_assert(sizeof(void *) != 8 || sizeof(cel_attr) == 16, "cel_attr layout contract");
_Static_assert(sizeof(void *) != 8 || sizeof(cel_capacity) == 16, "cel_capacity layout contract");
_Static_assert(sizeof(void *) != 8 || sizeof(cel_device) == 56, "cel_device layout contract");

/* ---- environment, programs, cache ------------------------------------------ */

typedef struct cel_env cel_env;           /* opaque, immutable after creation */
typedef struct cel_program cel_program;   /* opaque, immutable, shareable */
typedef struct cel_cache cel_cache;       /* opaque, thread-safe */
typedef struct cel_eval_ctx cel_eval_ctx; /* opaque, one per thread */

#define CEL_MAX_EXPRESSION_LEN (10 * 1024)   /* CELSelectorExpressionMaxLength */
#define CEL_MAX_COST 1000000                 /* CELSelectorExpressionMaxCost */

/* The DRA selector environment over the given intern table (the same table the
 * engine interns attribute names with, so compiled programs look names up by id). */
cel_env *cel_env_new_dra(intern_table *names);
/* The same environment without the selector rule that the result be bool (or dyn):
 * for derived attribute expressions (cel_eval_attr) and `dralloc cel eval`. */
cel_env *cel_env_new_dra_any(intern_table *names);
void cel_env_free(cel_env *env);

/* Compiles an expression (parse, check, compile). On failure returns NULL and fills
 * e->msg with the CEL error text as Kubernetes reports it, e.g.
 *   "ERROR: <input>:1:8: undeclared reference to 'x' (in container '')"
 * The text can be far longer than e->msg holds (ERR_MSG_MAX): cel-go lists every issue,
 * up to 100 and a count of the rest, each with its source line and a caret line — up
 * to about 4 MiB for a 10 KiB expression. e->msg gets its first ERR_MSG_MAX-1 bytes,
 * enough for a verdict or the first issue; a caller that shows the error uses
 * cel_compile_text, whose *text (when text is non-NULL) receives the whole of it
 * (malloc'd, the caller frees; NULL on success). */
cel_program *cel_compile(const cel_env *env, const char *expr, size_t len, err *e);
cel_program *cel_compile_text(const cel_env *env, const char *expr, size_t len, err *e, char **text);
void cel_program_free(cel_program *p);
/* True when the program's static result type is bool (a selector); derived attribute
 * expressions may also have other types. */
bool cel__program_returns_bool(const cel_program *p);
/* Kubernetes' rule for an expression evaluated for its value (a derived attribute:
 * dynamic-resource-allocation cel/compile.go validateOutputType): its static type is a
 * primitive scalar (bool, int, string, semver, dyn) or a list of one. False with msg
 * set to upstream's words ("must evaluate to a primitive scalar ..., not map(string,
 * dyn)") otherwise. */
bool cel_program_value_type_ok(const cel_program *p, char *msg, size_t n);
/* The estimated worst-case cost Kubernetes computes at compile time (cel-go's
 * EstimateCost with the apiserver's function estimates and the DRA size estimator:
 * the max of the {min, max} estimate; cel/cost_estimate.c). */
uint64_t cel_program_estimated_cost(const cel_program *p);
/* Kubernetes' API validation of a selector expression: the compile errors of
 * cel_compile, and for an expression whose estimated cost exceeds CEL_MAX_COST
 * e->msg = CEL_TOO_COMPLEX_MSG (the body of the field.Forbidden error Kubernetes
 * reports as "<field>.cel.expression: Forbidden: too complex, exceeds cost limit"). */
#define CEL_TOO_COMPLEX_MSG "Forbidden: too complex, exceeds cost limit"
bool cel__validate_selector(const cel_env *env, const char *expr, size_t len, err *e);

/* Expression text → compiled program, compiled once while anything holds it. Only
 * successful compilations are cached (as Kubernetes does); a failing expression is
 * recompiled and fails again. Each cel_cache_get that returns a program is one
 * reference to it; cel_cache_release gives it back, and the last release frees the
 * program (and the names it interned). */
cel_cache *cel_cache_new(const cel_env *env);
void cel_cache_free(cel_cache *c);
const cel_program *cel_cache_get(cel_cache *c, const char *expr, size_t len, err *e);
/* The same with a failure's whole text in *text, as cel_compile_text. */
const cel_program *cel_cache_get_text(cel_cache *c, const char *expr, size_t len, err *e, char **text);
void cel_cache_release(cel_cache *c, const cel_program *p);
/* Programs held, and the bytes they take (text, compiled form). */
void cel_cache_stats(cel_cache *c, size_t *programs, size_t *bytes);

/* ---- evaluation ------------------------------------------------------------- */

cel_eval_ctx *cel_eval_ctx_new(void);
void cel_eval_ctx_free(cel_eval_ctx *x);
/* The runtime cost the last evaluation on x charged (`dralloc cel eval -o json`'s
 * "cost"): cel-go's ActualCost as Kubernetes computes it for DRA selectors (the
 * interpreter's cost tracker, planned with OptOptimize and PresenceTestHasCost(false),
 * and the apiserver's CallCost): identifiers and qualifiers 1 each when reached,
 * planner constants free, calls by overload and by their arguments' sizes, failed
 * arguments included (compile.c, eval.c). tests/upstream compares it exactly with
 * the oracle's (tests/cel-divergences.md: equal on every evaluated question of the
 * last campaign). Past the limit it is only known to exceed CEL_MAX_COST: cel-go
 * stops at the node that crossed it, this evaluator may stop a little later. */
uint64_t cel_eval_ctx_cost(const cel_eval_ctx *x);

typedef enum cel_result {
    CEL_ERROR = -1,
    CEL_FALSE = 0,
    CEL_TRUE = 1,
} cel_result;

/* Evaluates a selector on a device. CEL_ERROR fills e->msg with the runtime error
 * ("no such key: memory", "operation cancelled: actual cost limit exceeded",
 * "CEL result of type int could not be converted to bool", …); the caller adds the
 * "claim X: selector #i on device D/P/N: CEL runtime error: " context. */
cel_result cel_eval_bool(const cel_program *p, const cel_device *d, cel_eval_ctx *x, err *e);

/* Kubernetes' EnhanceRuntimeError (dynamic-resource-allocation cel/errors.go), which
 * the allocator applies to selector runtime errors before adding its context: a
 * message containing "no such key:" gets ". consider using CEL optional chaining
 * (.? followed by orValue()) or guarding the check with has() for optional fields"
 * appended (once: calling it again changes nothing). Other messages are unchanged. */
void cel_enhance_runtime_error(err *e);

/* Evaluates a selector on devs[0..n) (an array of views), writing out[i]. Same
 * results as n calls of cel_eval_bool, and as fast: it used to prefetch the next
 * devices' views and attribute arrays, which was slower on every expression of
 * `dralloc bench cel` at 100k devices once the predicate path stopped branching on
 * each device's outcome (E1 batch min 13.5–15.2 ns with the prefetches, 10.9–13.4
 * without; the hardware prefetcher follows the layout above on its own).
 * When out[i] is CEL_ERROR and e is not NULL, e holds the error of the first such
 * device (its index in *first_error, when not NULL). Returns the number of CEL_TRUE. */
size_t cel_eval_bool_many(const cel_program *p, const cel_device *devs, size_t n, cel_eval_ctx *x, cel_result *out,
                          err *e, size_t *first_error);

/* Evaluates an expression for a derived attribute: the result must be a scalar (int,
 * bool, string, semver) or, when allow_lists, a list of one scalar kind. The value is
 * written to *out (name/domain left 0); element arrays and strings are copied into
 * `out_arena`. Returns false with e->msg on a runtime error or a result of another type. */
bool cel_eval_attr(const cel_program *p, const cel_device *d, cel_eval_ctx *x, bool allow_lists,
                   arena *out_arena, cel_attr *out, err *e);

/* Evaluates on a device and prints the typed result as CEL literal text
 * ("true", "42", "\"abc\"", "[1, 2]", "quantity(\"1Gi\")", "semver(\"1.2.3\")") into buf;
 * for `dralloc cel eval`. Returns false with e->msg on error. */
bool cel__eval_format(const cel_program *p, const cel_device *d, cel_eval_ctx *x,
                     char *buf, size_t n, err *e);
/* The same text, whole however long, in a malloc'd string the caller frees; NULL with
 * e->msg on error. */
char *cel_eval_format_alloc(const cel_program *p, const cel_device *d, cel_eval_ctx *x, err *e);

#endif
