/* types.h — static CEL types for the checker (private to cel/).
 *
 * A cel_type is an immutable node: primitives are static singletons, composite
 * types (list, map, optional, type-of) are built in an arena. Type parameters
 * (T_PARAM, named A, B, K, V, ...) only occur in function signatures; the checker
 * binds them per call. `dyn` is assignable to and from everything (gradual typing).
 *
 * Signatures in the function registry are written as text ("list(A)",
 * "map(string, dyn)", "optional(V)", "Quantity") and parsed once when an
 * environment is built (cel__type_parse). */
#ifndef DRA_CEL_TYPES_H
#define DRA_CEL_TYPES_H

#include "base/arena.h"
#include "base/base.h"

typedef enum cel_tkind {
    TY_DYN, TY_NULL, TY_BOOL, TY_INT, TY_UINT, TY_DOUBLE, TY_STRING, TY_BYTES,
    TY_LIST, TY_MAP, TY_TYPE, TY_OPTIONAL,
    TY_OPAQUE,   /* named library type: kubernetes.Quantity, kubernetes.Semver, net.IP, ... */
    TY_DEVICE,   /* kubernetes.DRADevice */
    TY_PARAM,    /* type parameter in a signature; name = "A" ... */
    TY_ERROR,
} cel_tkind;

typedef struct cel_type cel_type;
struct cel_type {
    uint8_t kind;
    const char *name;          /* TY_OPAQUE and TY_PARAM */
    const cel_type *p0, *p1;   /* list elem / map key,value / optional elem / type param */
};

extern const cel_type cel_t_dyn, cel_t_null, cel_t_bool, cel_t_int, cel_t_uint, cel_t_double,
    cel_t_string, cel_t_bytes, cel_t_error, cel_t_device, cel_t_quantity, cel_t_semver, cel_t_timestamp,
    cel_t_duration, cel_t_type_dyn,
    cel_t_list_dyn, cel_t_map_dyn;

const cel_type *cel__type_list(arena *a, const cel_type *elem);
const cel_type *cel__type_map(arena *a, const cel_type *k, const cel_type *v);
const cel_type *cel__type_optional(arena *a, const cel_type *elem);
const cel_type *cel__type_type(arena *a, const cel_type *of);

/* Parses "int", "list(A)", "map(string, list(int))", "optional(dyn)", "type(A)",
 * "Quantity"/"kubernetes.Quantity", "Semver", any other dotted name → an opaque type.
 * Single upper-case letters are type parameters. NULL on malformed text. */
const cel_type *cel__type_parse(arena *a, const char *text);

/* Writes the type as cel-go prints it ("list(int)", "map(string, dyn)"). */
void cel__type_str(const cel_type *t, char *buf, size_t n);
bool cel__type_equal(const cel_type *a, const cel_type *b);
bool cel__type_is_dyn(const cel_type *t);

/* Type-parameter bindings for one overload attempt. */
#define CEL_MAX_TPARAMS 4
typedef struct cel_subst {
    const char *names[CEL_MAX_TPARAMS];
    const cel_type *types[CEL_MAX_TPARAMS];
    int n;
} cel_subst;

/* Is a value of type `arg` acceptable where the signature says `param`? Binds type
 * parameters in s. */
bool cel__type_assignable(arena *a, cel_subst *s, const cel_type *param, const cel_type *arg);
/* The signature type with bound parameters substituted (unbound → dyn). */
const cel_type *cel__type_subst(arena *a, const cel_subst *s, const cel_type *t);

/* The runtime value kind (cel_kind) a type admits, or -1 when any kind may occur. */
int cel__type_value_kind(const cel_type *t);

#endif
