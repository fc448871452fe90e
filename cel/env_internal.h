/* env_internal.h — environments, checked declarations and programs (private to
 * cel/, its tests and the conformance runner).
 *
 * An environment holds the parsed signatures of every overload of every library
 * (sorted by function name for lookup), the declared variables and the language
 * options. The DRA environment declares `device`; test environments (the
 * conformance runner) declare arbitrary variables and may turn the checker off. */
#ifndef DRA_CEL_ENV_INTERNAL_H
#define DRA_CEL_ENV_INTERNAL_H

#include "cel/ast.h"
#include "cel/cel.h"
#include "cel/functions.h"
#include "cel/types.h"

typedef struct cel_fn_decl {
    const cel_overload *ov;
    const cel_type *args[CEL_MAX_ARGS];
    const cel_type *result;
    int8_t kinds[CEL_MAX_ARGS];   /* runtime cel_kind each argument must have, -1 any */
    uint32_t kmask[CEL_MAX_ARGS]; /* the same as a bit set of accepted cel_kinds (dispatch) */
    bool opaque;                  /* some argument is a library opaque type: compare names too */
} cel_fn_decl;

typedef struct cel_var_decl {
    const char *name;
    const cel_type *type;
} cel_var_decl;

typedef struct cel_env_opts {
    bool dra;            /* declare `device`; result must be bool or dyn (unless any_result) */
    bool any_result;
    bool no_check;       /* skip static type checking (names still resolve; type errors surface at run time) */
    bool heterogeneous;  /* allow mixed-type list/map literals (cel-spec default; Kubernetes forbids) */
    bool no_fuse;        /* keep the trees compile.c's fused instructions replace (the tests' differential) */
    const char *container;
} cel_env_opts;

struct cel_env {
    arena a;
    intern_table *names;
    cel_env_opts opts;
    cel_fn_decl *fns;      /* sorted by ov->name */
    size_t nfns;
    cel_var_decl *vars;
    size_t nvars, capvars;
};

cel_env *cel__env_new_opts(intern_table *names, const cel_env_opts *o);
/* Declares a variable (index = declaration order, the slot in the activation passed
 * to cel__eval_value). Type text as in functions.h; NULL → dyn. */
int cel__env_add_var(cel_env *env, const char *name, const cel_type *t);
const cel_type *cel__env_type(cel_env *env, const char *text);

/* All overloads named `name` as [*first, *first + count). */
size_t cel__env_find_fns(const cel_env *env, const char *name, const cel_fn_decl **first);

/* Type-checks (or, with no_check, only resolves) the tree in place. Errors in e as
 * cel-go formats them. `a` is the program arena. */
typedef struct cel_check_result {
    const cel_type *type;
    int nslots;
} cel_check_result;
bool cel__check(const cel_env *env, cel_node *root, const char *src, size_t n, arena *a, cel_check_result *out, strbuf *d);

/* Evaluates with an activation (vars[i] for the i-th declared variable) and returns
 * the raw value (errors as CV_ERROR); the value lives in the context's arena until
 * the next evaluation. */
cel_value cel__eval_value(const cel_program *p, const cel_device *d, const cel_value *vars, cel_eval_ctx *x);
arena *cel__eval_ctx_arena(cel_eval_ctx *x);
const cel_type *cel__program_type(const cel_program *p);

#endif
