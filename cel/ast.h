/* ast.h — the parsed form of a CEL expression (private to cel/).
 *
 * The parser produces a tree of cel_node in an arena, with macros already expanded
 * the way cel-go expands them (has() → a test-only select; all/exists/exists_one/
 * map/filter and the two-variable forms → comprehensions; cel.bind → a BIND node;
 * optMap/optFlatMap → a conditional around a BIND, its target shared by both
 * branches, see `shared`). Every node records the byte
 * offset where it starts, for error positions. The checker then annotates nodes in
 * place (type, resolved name, candidate overloads), and compile.c turns the
 * annotated tree into the flat program the evaluator runs. */
#ifndef DRA_CEL_AST_H
#define DRA_CEL_AST_H

#include <stdarg.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "cel/value.h"

typedef enum cel_node_kind {
    N_CONST,      /* val */
    N_IDENT,      /* name */
    N_SELECT,     /* target.name; test_only for has(), optional for .? */
    N_INDEX,      /* target[args[0]]; optional for [?] */
    N_CALL,       /* name(args...) or target.name(args...) */
    N_LIST,       /* [args...]; opt_mask[i] for `?e` elements */
    N_MAP,        /* {args[2i]: args[2i+1]}; opt_mask[i] for `?k: v` entries */
    N_STRUCT,     /* name{fields[i]: args[i]} (message construction; parsed, not supported) */
    N_COMPREHENSION,
    N_BIND,       /* cel.bind(var, args[0], args[1]) */
} cel_node_kind;

struct cel_type;
struct cel_overload;

typedef struct cel_node cel_node;
struct cel_node {
    uint8_t kind;
    bool test_only;          /* N_SELECT from has() */
    bool optional;           /* N_SELECT `.?`, N_INDEX `[?]` */
    bool absolute;           /* N_IDENT/N_CALL written with a leading '.' */
    /* Referenced twice, in one scope: optMap/optFlatMap's target, under hasValue() and
     * value(). cel-go copies it; we share it, so every walk must treat the tree as
     * the copied one (each use counts) while visiting the node once: a chain of n
     * optMaps is 2^n nodes to cel-go and n here. */
    bool shared;
    uint32_t pos;            /* byte offset in the source */
    uint32_t nargs;
    const char *name;        /* identifier, field, function or struct name (NUL-terminated) */
    cel_node *target;        /* select operand, index operand, call receiver */
    cel_node **args;
    uint8_t *opt_mask;       /* N_LIST / N_MAP optional entries, NULL when none */
    const char **fields;     /* N_STRUCT field names */
    cel_value val;           /* N_CONST */
    /* N_COMPREHENSION (iter_var2 NULL for one-variable forms); N_BIND uses iter_var */
    const char *iter_var, *iter_var2, *accu_var;
    cel_node *range, *accu_init, *cond, *step, *result;

    /* ---- filled by the checker ---- */
    const struct cel_type *type;
    const char *resolved;              /* fully qualified ident or function name */
    const struct cel_overload **ovs;   /* candidate overloads of a call */
    uint32_t novs;
    int32_t slot;                      /* variable slot for idents, comprehension & bind vars */
    int32_t slot2;                     /* second iteration variable / accumulator slot */
    int32_t accu_slot;

    /* ---- filled by compile.c, for shared nodes: the instruction built for them ---- */
    const struct cel_inst *inst;
};

typedef struct cel_parse_opts {
    int max_depth;           /* nesting limit; 0 → 250 (cel-go's default) */
    bool no_macros;
} cel_parse_opts;

/* Parses src[0..n) into *root (nodes in `a`). On failure returns false with the
 * error text appended to d (may be NULL) in cel-go's format
 * ("ERROR: <input>:1:5: Syntax error: ...\n | src\n | ....^"). Compile errors are
 * written to a growable buffer, not an err: cel-go lists every issue (up to 100, each
 * with its source line), which for a 10 KiB expression runs to megabytes. */
bool cel__parse(const char *src, size_t n, const cel_parse_opts *opts, arena *a, cel_node **root, strbuf *d);

/* Appends one formatted error ("ERROR: <input>:L:C: msg" plus the snippet lines) to
 * d (joined with '\n' after a previous one); d NULL: nothing. */
void cel__error_at(strbuf *d, const char *src, size_t n, uint32_t pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The same with a va_list, for a variadic reporter of its own (the checker's cfail). */
void cel__error_atv(strbuf *d, const char *src, size_t n, uint32_t pos, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

#endif
