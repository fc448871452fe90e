/* nodesel.c — node access as Kubernetes decides it: `nodeName`, `allNodes`, or a
 * core/v1 NodeSelector (terms ORed, requirements inside a term ANDed; matchExpressions
 * on node labels with In/NotIn/Exists/DoesNotExist/Gt/Lt, matchFields only on
 * `metadata.name`). A selector Kubernetes could not parse is an error, not a
 * mismatch. */
#include "engine/world/world.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *label_of(const dra_node *n, const char *key) {
    for (uint32_t i = 0; i < n->nlabels; i++)
        if (!strcmp(n->labels[i].key, key)) return n->labels[i].value;
    return NULL;
}

static bool in_values(const dra_strs *vs, const char *v) {
    for (uint32_t i = 0; i < vs->n; i++)
        if (!strcmp(vs->v[i], v)) return true;
    return false;
}

static bool parse_i64(const char *s, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

/* Validates and evaluates one requirement against a value (NULL = absent). */
static bool req_matches(const dra_ns_req *r, const char *val, bool *match, err *e) {
    switch (r->op) {
    case DRA_NS_IN:
    case DRA_NS_NOT_IN:
        if (r->values.n == 0)
            return err_set(e, "%s: for 'in', 'notin' operators, values set can't be empty", r->key);
        *match = val && in_values(&r->values, val);
        if (r->op == DRA_NS_NOT_IN) *match = !*match;
        return true;
    case DRA_NS_EXISTS:
    case DRA_NS_DOES_NOT_EXIST:
        if (r->values.n != 0) return err_set(e, "%s: values set must be empty for exists and does not exist", r->key);
        *match = (val != NULL) == (r->op == DRA_NS_EXISTS);
        return true;
    case DRA_NS_GT:
    case DRA_NS_LT: {
        int64_t want, have;
        if (r->values.n != 1) return err_set(e, "%s: for 'Gt', 'Lt' operators, exactly one value is required", r->key);
        if (!parse_i64(r->values.v[0], &want))
            return err_set(e, "%s: for 'Gt', 'Lt' operators, the value must be an integer", r->key);
        *match = val && parse_i64(val, &have) && (r->op == DRA_NS_GT ? have > want : have < want);
        return true;
    }
    default:
        return err_set(e, "\"%s\" is not a valid node selector operator", r->op_text ? r->op_text : "");
    }
}

static bool term_matches(const dra_node *n, const dra_ns_term *t, bool *match, err *e) {
    *match = false;
    if (t->nexprs == 0 && t->nfields == 0) return true;   /* an empty term matches nothing */
    bool all = true;
    for (uint32_t i = 0; i < t->nexprs; i++) {
        bool m;
        if (!req_matches(&t->exprs[i], label_of(n, t->exprs[i].key), &m, e)) return false;
        all = all && m;
    }
    for (uint32_t i = 0; i < t->nfields; i++) {
        const dra_ns_req *r = &t->fields[i];
        if (strcmp(r->key, "metadata.name"))
            return err_set(e, "%s: not a valid field selector key (only metadata.name is supported)", r->key);
        if ((r->op != DRA_NS_IN && r->op != DRA_NS_NOT_IN) || r->values.n != 1)
            return err_set(e, "%s: only In and NotIn with exactly one value are supported for fields", r->key);
        bool m;
        if (!req_matches(r, n->name, &m, e)) return false;
        all = all && m;
    }
    *match = all;
    return true;
}

bool dra__node_matches(const dra_node *n, const char *node_name, bool all_nodes, const dra_node_selector *sel,
                      bool *match, err *e) {
    *match = false;
    if (node_name && *node_name) {
        *match = n && !strcmp(n->name, node_name);
        return true;
    }
    if (all_nodes) {
        *match = true;
        return true;
    }
    if (!sel) return true;
    bool any = false;
    for (uint32_t i = 0; i < sel->nterms; i++) {
        bool m;
        if (!term_matches(n, &sel->terms[i], &m, e)) return false;
        any = any || m;
    }
    *match = any;
    return true;
}
