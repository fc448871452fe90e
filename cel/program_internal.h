/* program_internal.h — the compiled form of an expression (private to cel/).
 *
 * A program is a tree of cel_inst laid out in one arena (a DAG where optMap shares
 * its target, evaluated once per use): each instruction has an opcode, up to three
 * direct children and immediate operands. compile.c chooses
 * specialised opcodes where the checked AST allows (device field access, attribute
 * lookups with interned (domain, name) ids, comparisons against constants,
 * constant-folded calls and literals); eval.c runs it with a switch per node. */
#ifndef DRA_CEL_PROGRAM_INTERNAL_H
#define DRA_CEL_PROGRAM_INTERNAL_H

#include "cel/env_internal.h"

typedef enum cel_op {
    OP_CONST,        /* k */
    OP_ERROR,        /* k is the error */
    OP_VAR,          /* global variable a */
    OP_LOCAL,        /* slot a */
    OP_DEVICE,
    OP_DRIVER,
    OP_ALLOW_MULTI,
    OP_DEVMAP,       /* a = CEL_DM_ATTRS / CEL_DM_CAPS */
    OP_DEVDOMAIN,    /* device.attributes["dom"]: a = flavour, b = domain id */
    OP_DEVATTR,      /* device.attributes["dom"].name: a = domain id, b = name id, k = name */
    OP_DEVCAP,       /* device.capacity["dom"].name */
    OP_HAS_DEVATTR,  /* has(device.attributes["dom"].name) */
    OP_HAS_DEVCAP,
    OP_HAS_DOMAIN,   /* "dom" in device.attributes / device.capacity: a = flavour, b = domain id */
    OP_SELECT,       /* x.k (k string) */
    OP_HAS,          /* has(x.k) */
    OP_OPT_SELECT,   /* x.?k */
    OP_INDEX,        /* x[y] */
    OP_OPT_INDEX,    /* x[?y] */
    OP_AND,
    OP_OR,
    OP_ANDN,         /* args[0] && args[1] && ... (a flattened chain) */
    OP_ORN,
    OP_NOT,
    OP_COND,         /* x ? y : z */
    OP_NSF,          /* @not_strictly_false(x) */
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    OP_EQ_STRK,      /* x == k (string constant) */
    OP_NE_STRK,
    OP_DRIVER_EQK,   /* device.driver == k */
    OP_DRIVER_NEK,
    OP_ATTR_EQK,     /* device.attributes["dom"].name == k (string): a, b as OP_DEVATTR; y = the lookup */
    OP_ATTR_NEK,
    OP_IN,
    OP_CALL,         /* args[0..nargs) */
    OP_LIST,         /* args; opt mask in flags array */
    OP_MAP,          /* args as k,v pairs */
    OP_COMP,
    OP_BIND,         /* slot a = x; then y */
    OP_APPEND,       /* accu slot a: append value of x (the map/filter step) */
    OP_MAPINSERT,    /* cel.@mapInsert(accu, k, v) or (accu, entries-map) */
    OP_TYPE_IDENT,   /* a type name as a value (k) */
    /* Fused selector shapes: one instruction where the tree would take three or four.
     * Each keeps the tree it replaces in x and evaluates that whenever its fast path
     * does not apply (a missing key, another kind of value), so errors, overload
     * resolution and cost are the tree's own; on the fast path it charges exactly
     * what the tree charges (compile.c). The walks see only x (weight 0). */
    OP_CAP_CMPK,     /* device.capacity["dom"].name.compareTo(k) <iv> iv2, isGreaterThan(k), isLessThan(k):
                      * a, b ids; k the quantity; iv the comparison (OP_EQ..OP_GE) of the
                      * quantity_cmp result with iv2 */
    OP_ATTR_VCMPK,   /* the same on a version attribute, k a semver */
    OP_ATTR_ICMPK,   /* device.attributes["dom"].name <iv> k (an int) */
    OP_ATTR_PREFIXK, /* device.attributes["dom"].name.startsWith(k) (a string) */
    OP_ATTR_SUFFIXK, /* .endsWith(k) */
    OP_ATTR_INK,     /* device.attributes["dom"].name in k (a list of strings) */
} cel_op;

/* cel_inst.flags of OP_CALL */
enum {
    CALL_TYPED = 1,        /* one overload, argument kinds proven by the checker */
    CALL_RECV_ATTR = 2,    /* args[0] is an OP_DEVATTR */
    CALL_RECV_CAP = 4,     /* args[0] is an OP_DEVCAP */
    CALL_ARGS_CONST = 8,   /* every argument after the receiver (or all, without one) is OP_CONST */
    /* How cel-go plans the call, for its cost: */
    CALL_VARARGS = 16,     /* as evalVarArgs (three arguments or more, a dispatcher over several
                            * overloads, matches with a constant pattern): arguments evaluated
                            * up to the first error, and then the call is not charged unless
                            * that was the last one */
    CALL_DEFAULT1 = 32,    /* several overloads, so no overload id: cel-go's size-based defaults
                            * (add_string, contains, ...) fall back to 1 */
};

/* cel_inst.flags of OP_CONST */
enum {
    CONST_FOLDED = 1,      /* computed at compile time; self = what evaluating it cost */
    CONST_PLAN = 2,        /* a constant to cel-go's planner too (literal, literal list or map of
                            * constants, conversion of a constant): free */
};

/* cel_inst.flags of the other instructions that charge by value (eval.c) */
enum {
    COND_Y_ATTR = 1,       /* OP_COND: the branch is an attribute, its own charge given back */
    COND_Z_ATTR = 2,
    IDX_KEY_QUAL = 1,      /* OP_INDEX, OP_OPT_INDEX: a constant key, charged 1 when applied */
    IDX_KEY_REL = 2,       /* the key is neither a constant nor an attribute (or is a ternary):
                            * wrapped in an attribute charged 1 when applied */
    IDX_KEY_ATTR = 4,      /* the key is an attribute, applied as the qualifier itself: an
                            * optional index that finds nothing gives its charge back */
    IN_SET = 1,            /* OP_IN: a set lookup in a constant list, free */
    ONE_OV = 2,            /* OP_IN, OP_LT..OP_GE: the checker left one overload, so cel-go's
                            * cost by overload id applies (in_list, less_string, ...); with
                            * several, the planner has no id and the call costs 1 */
    HAS_OF_ATTR = 1,       /* OP_HAS: the operand is an attribute, whose charge has() gives back */
};

typedef struct cel_inst cel_inst;
struct cel_inst {
    uint8_t op;
    uint8_t flags;
    uint16_t nargs;
    uint32_t a, b;
    uint32_t pos;
    /* Both in the instruction's first cache line, beside op, a, b and k, which is all
     * the predicate path reads of a test: */
    uint32_t cost;             /* the call's or literal's cost; a fused shape's whole charge */
    /* what cel-go charges for this node whatever the values (compile.c is_attr): the
     * device paths, identifiers, relative attributes, `!`, folded constants; charged
     * by whoever evaluates the instruction (eval, eval_leaf, the fast paths) */
    uint32_t self;
    cel_value k;
    const cel_inst *x, *y, *z;
    const cel_inst **args;
    const uint8_t *opt_mask;
    /* OP_CALL */
    const cel_fn_decl *const *ovs;
    uint32_t novs;
    cel_fn fn;                 /* the implementation when every candidate shares one */
    uint16_t fn_flags;
    uint8_t shared;            /* built from a shared node: reached twice (compile.c's walks memoise it) */
    const void *prepared;
    /* OP_COMP: x = range, y = init, z = cond, step, result */
    const cel_inst *step, *result;
    int32_t iv, iv2, accu;
};

typedef struct cel_prep {
    void *p;
    void (*release)(void *);
} cel_prep;

enum { CEL_TOUCH_ATTRS = 1, CEL_TOUCH_CAPS = 2 };

struct cel_program {
    arena a;
    const cel_env *env;
    const cel_inst *root;
    const cel_type *type;
    uint32_t nslots;
    uint8_t touches;          /* CEL_TOUCH_*: which device arrays evaluation may read (capacity prefetch) */
    bool pred;                /* cel_eval_bool may try the predicate path first (cel__pred_ok) */
    /* The predicate path's tests as one array beside their op codes (cel__pred_flatten):
     * dispatch reads the op from here instead of waiting on root->args[i]->op. */
    uint8_t pred_and;         /* 1: the tests are &&'d (or a single test), 0: ||'d */
    /* When every test is `device.driver ==/!= "..."` or `device.attributes[d].x ==/!=
     * "..."` and they are &&'d (a DeviceClass's usual selector): the same tests as
     * plain records, decided by a loop that calls nothing (eval.c, pred_eqs). */
    const struct cel_pred_eq *pred_eqs;
    uint16_t pred_n;
    const uint8_t *pred_ops;
    const cel_inst *const *pred_tests;
    cel_prep *preps;
    uint32_t npreps, cappreps;
    uint64_t est_cost;        /* cel-go's estimated worst-case cost (cost_estimate.c) */
    /* names the compiler interned (attribute domains and names, driver literals): one
     * reference each, given back by cel_program_free */
    uint32_t *names;
    uint32_t nnames, capnames;
};

/* cel-go's estimated maximum cost of a checked tree, with Kubernetes' function
 * estimates and the DRA size estimator (cost_estimate.c). */
uint64_t cel__estimate_cost(const cel_node *root);

/* Builds the program from a checked tree (compile.c). */
bool cel__program_build(cel_program *p, cel_node *root, int nslots, const char *src, size_t n, strbuf *d);

struct cel_eval_ctx {
    arena a;
    arena_mark base;
    uint64_t cost;
    uint64_t work;            /* hidden O(n) work (cel_call_work), reset per evaluation */
    cel_value *slots;
    uint32_t cap_slots;
    const cel_value *vars;
    const cel_device *dev;
    const cel_program *prog;
};

/* Evaluates one instruction (eval.c); used by compile.c for constant folding. */
cel_value cel__eval_inst(const cel_inst *n, cel_eval_ctx *x);

/* Whether a program rooted at `root` has the shape eval.c's predicate path decides
 * without values: device tests joined by && and ||. */
bool cel__pred_ok(const cel_inst *root);
/* Fills p's pred_* fields from p->root (cel__pred_ok true), in p's arena. */
void cel__pred_flatten(cel_program *p);

#endif
