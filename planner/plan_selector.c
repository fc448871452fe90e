/* plan_selector.c — Kubernetes label selectors as kubectl -l takes them (planner.h
 * plan_selector_*; k8s.io/apimachinery/pkg/labels Parse): requirements joined by
 * commas, each
 *   key            the label exists          !key           it does not
 *   key=v, key==v  it equals v               key!=v         it differs or is absent
 *   key in (a,b)   it is one of them         key notin (a,b) it is none of them or absent
 *   key>n, key<n   it is an integer greater / less than n
 * Every requirement must hold. Whitespace between tokens is ignored. */
#include "planner/planner.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { OP_EXISTS, OP_NOT_EXISTS, OP_EQ, OP_NE, OP_IN, OP_NOT_IN, OP_GT, OP_LT };

typedef struct req {
    char *key;
    int op;
    char **vals;
    size_t nvals;
} req;

struct plan_selector {
    req *r;
    size_t n;
};

typedef struct lex {
    const char *s, *p;
} lex;

static void skip(lex *l) {
    while (*l->p == ' ' || *l->p == '\t') l->p++;
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '/'; }

/* A key or value (possibly empty); malloc'd. */
static char *ident(lex *l) {
    skip(l);
    const char *b = l->p;
    while (ident_char(*l->p)) l->p++;
    return xstrndup(b, (size_t)(l->p - b));
}

static bool word(lex *l, const char *w) {
    skip(l);
    size_t n = strlen(w);
    if (strncmp(l->p, w, n) || ident_char(l->p[n])) return false;
    l->p += n;
    return true;
}

static bool fail(lex *l, err *e, const char *what) {
    return err_set(e, "label selector %s: %s at column %zu", l->s, what, (size_t)(l->p - l->s) + 1);
}

static void push_val(req *r, char *v) {
    r->vals = xrealloc(r->vals, (r->nvals + 1) * sizeof *r->vals);
    r->vals[r->nvals++] = v;
}

static bool requirement(lex *l, req *r, err *e) {
    skip(l);
    if (*l->p == '!') {
        l->p++;
        r->key = ident(l);
        r->op = OP_NOT_EXISTS;
        return *r->key ? true : fail(l, e, "want a label key after '!'");
    }
    r->key = ident(l);
    if (!*r->key) return fail(l, e, "want a label key");
    skip(l);
    if (!*l->p || *l->p == ',') {
        r->op = OP_EXISTS;
        return true;
    }
    if (!strncmp(l->p, "==", 2)) l->p += 2, r->op = OP_EQ;
    else if (!strncmp(l->p, "!=", 2)) l->p += 2, r->op = OP_NE;
    else if (*l->p == '=') l->p++, r->op = OP_EQ;
    else if (*l->p == '>') l->p++, r->op = OP_GT;
    else if (*l->p == '<') l->p++, r->op = OP_LT;
    else if (word(l, "notin")) r->op = OP_NOT_IN;
    else if (word(l, "in")) r->op = OP_IN;
    else return fail(l, e, "want =, ==, !=, in, notin, < or > after the key");
    if (r->op == OP_IN || r->op == OP_NOT_IN) {
        skip(l);
        if (*l->p != '(') return fail(l, e, "want '(' after in/notin");
        l->p++;
        for (;;) {
            push_val(r, ident(l));
            skip(l);
            if (*l->p == ',') {
                l->p++;
                continue;
            }
            if (*l->p == ')') {
                l->p++;
                return true;
            }
            return fail(l, e, "want ',' or ')' in the value list");
        }
    }
    push_val(r, ident(l));
    if (r->op == OP_GT || r->op == OP_LT) {
        char *end;
        errno = 0;
        strtoll(r->vals[0], &end, 10);
        if (!*r->vals[0] || *end || errno) return fail(l, e, "want an integer after < or >");
    }
    return true;
}

plan_selector *plan_selector_parse(const char *text, err *e) {
    plan_selector *s = xcalloc(1, sizeof *s);
    lex l = {text, text};
    for (;;) {
        s->r = xrealloc(s->r, (s->n + 1) * sizeof *s->r);
        req *r = &s->r[s->n++];
        memset(r, 0, sizeof *r);
        if (!requirement(&l, r, e)) {
            plan_selector_free(s);
            return NULL;
        }
        skip(&l);
        if (!*l.p) break;
        if (*l.p != ',') {
            fail(&l, e, "want ',' between requirements");
            plan_selector_free(s);
            return NULL;
        }
        l.p++;
    }
    return s;
}

void plan_selector_free(plan_selector *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->r[i].key);
        for (size_t k = 0; k < s->r[i].nvals; k++) free(s->r[i].vals[k]);
        free(s->r[i].vals);
    }
    free(s->r);
    free(s);
}

static bool one_of(const req *r, const char *v) {
    for (size_t k = 0; k < r->nvals; k++)
        if (!strcmp(r->vals[k], v)) return true;
    return false;
}

bool plan_selector_matches(const plan_selector *s, const json_t *labels) {
    for (size_t i = 0; i < s->n; i++) {
        const req *r = &s->r[i];
        const char *v = json_string_value(json_object_get(labels, r->key));
        bool ok;
        switch (r->op) {
        case OP_EXISTS: ok = v != NULL; break;
        case OP_NOT_EXISTS: ok = v == NULL; break;
        case OP_EQ: ok = v && !strcmp(v, r->vals[0]); break;
        case OP_NE: ok = !v || strcmp(v, r->vals[0]); break;
        case OP_IN: ok = v && one_of(r, v); break;
        case OP_NOT_IN: ok = !v || !one_of(r, v); break;
        default: {   /* gt, lt: the label must be an integer */
            char *end;
            errno = 0;
            long long x = v ? strtoll(v, &end, 10) : 0, y = strtoll(r->vals[0], NULL, 10);
            ok = v && *v && !*end && !errno && (r->op == OP_GT ? x > y : x < y);
        }
        }
        if (!ok) return false;
    }
    return true;
}
