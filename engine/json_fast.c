/* json_fast.c — a jansson tree from the plain JSON a cluster file is made of, lexed
 * here rather than by jansson (json_fast.h). jansson reads a byte at a time through a
 * stream callback and decodes UTF-8 as it goes: parsing was half of loading a fleet
 * (perf, issue 21), and its lexer most of that. This reader takes the common forms
 * only — ASCII strings with the short escapes, integers that fit, true, false, null —
 * and builds the tree with jansson's own constructors, so the tree is the one
 * json_loadb builds (members in order, a repeated key replacing the earlier value).
 * Anything else (\u escapes, non-ASCII text, a real number, bad syntax) makes it
 * give up on the item, which json_loadb then reads, errors and all. */
#include "engine/json_fast.h"

#include "base/base.h"

#include <string.h>

/* jansson's limit on nesting, counted the same way */
enum { FAST_DEPTH_MAX = 2048 };

typedef struct lex {
    const char *s, *end;
    char *tmp;   /* unescaped string text (grown as needed) */
    size_t tmp_cap;
} lex;

static void skip_ws(lex *x) {
    while (x->s < x->end && (*x->s == ' ' || *x->s == '\n' || *x->s == '\t' || *x->s == '\r')) x->s++;
}

static void tmp_put(lex *x, size_t at, char ch) {
    if (at + 1 >= x->tmp_cap) {
        x->tmp_cap = x->tmp_cap ? x->tmp_cap * 2 : 256;
        x->tmp = xrealloc(x->tmp, x->tmp_cap);
    }
    x->tmp[at] = ch;
}

/* The string opening at x->s (its text in *out, *n bytes: in place when it has no
 * escape, else unescaped into x->tmp); false to give up. */
static bool lex_string(lex *x, const char **out, size_t *n) {
    const char *start = x->s + 1, *p = start;
    while (p < x->end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80) p++;
    if (p < x->end && *p == '"') {
        *out = start;
        *n = (size_t)(p - start);
        x->s = p + 1;
        return true;
    }
    size_t len = 0;
    for (const char *q = start; q < p; q++) tmp_put(x, len++, *q);
    while (p < x->end && *p != '"') {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch >= 0x80) return false;   /* a control or non-ASCII byte: jansson's to judge */
        if (ch != '\\') {
            tmp_put(x, len++, (char)ch);
            p++;
            continue;
        }
        if (p + 1 >= x->end) return false;
        char r;
        switch (p[1]) {
        case '"': r = '"'; break;
        case '\\': r = '\\'; break;
        case '/': r = '/'; break;
        case 'b': r = '\b'; break;
        case 'f': r = '\f'; break;
        case 'n': r = '\n'; break;
        case 'r': r = '\r'; break;
        case 't': r = '\t'; break;
        default: return false;   /* \u: surrogates, NUL, UTF-8 — jansson's */
        }
        tmp_put(x, len++, r);
        p += 2;
    }
    if (p >= x->end) return false;
    *out = x->tmp;
    *n = len;
    x->s = p + 1;
    return true;
}

static json_t *lex_value(lex *x, int depth);

/* An integer as jansson reads it: -?(0|[1-9][0-9]*), no fraction or exponent, at most
 * 18 digits (always within int64); else give up. */
static json_t *lex_int(lex *x) {
    const char *p = x->s;
    bool neg = p < x->end && *p == '-';
    if (neg) p++;
    const char *d = p;
    while (p < x->end && *p >= '0' && *p <= '9') p++;
    size_t nd = (size_t)(p - d);
    if (!nd || nd > 18 || (nd > 1 && *d == '0')) return NULL;
    long long v = 0;
    for (const char *q = d; q < p; q++) v = v * 10 + (*q - '0');
    if (p < x->end && (*p == '.' || *p == 'e' || *p == 'E' || (*p >= 'a' && *p <= 'z'))) return NULL;
    x->s = p;
    return json_integer(neg ? -v : v);
}

static bool lex_word(lex *x, const char *w, size_t n) {
    if ((size_t)(x->end - x->s) < n || memcmp(x->s, w, n)) return false;
    const char *after = x->s + n;
    if (after < x->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
                           (*after >= '0' && *after <= '9') || *after == '_'))
        return false;
    x->s = after;
    return true;
}

static json_t *lex_object(lex *x, int depth) {
    json_t *o = json_object();
    x->s++;
    skip_ws(x);
    if (x->s < x->end && *x->s == '}') {
        x->s++;
        return o;
    }
    for (;;) {
        const char *k;
        size_t kn;
        if (x->s >= x->end || *x->s != '"' || !lex_string(x, &k, &kn) || memchr(k, '\0', kn)) break;
        /* the key is copied by jansson; an unescaped key in tmp would be overwritten by
         * the value's: keep escaped keys aside */
        char small[128], *key = (char *)k;
        if (k == x->tmp) key = kn < sizeof small ? small : xmalloc(kn + 1), memcpy(key, k, kn);
        skip_ws(x);
        json_t *v = NULL;
        if (x->s < x->end && *x->s == ':') {
            x->s++;
            skip_ws(x);
            v = lex_value(x, depth);
        }
        bool set = v && json_object_setn_new_nocheck(o, key, kn, v) == 0;
        if (key != k && key != small) free(key);
        if (!set) break;
        skip_ws(x);
        if (x->s >= x->end) break;
        if (*x->s == '}') {
            x->s++;
            return o;
        }
        if (*x->s != ',') break;
        x->s++;
        skip_ws(x);
    }
    json_decref(o);
    return NULL;
}

static json_t *lex_array(lex *x, int depth) {
    json_t *a = json_array();
    x->s++;
    skip_ws(x);
    if (x->s < x->end && *x->s == ']') {
        x->s++;
        return a;
    }
    for (;;) {
        json_t *v = lex_value(x, depth);
        if (!v || json_array_append_new(a, v)) break;
        skip_ws(x);
        if (x->s >= x->end) break;
        if (*x->s == ']') {
            x->s++;
            return a;
        }
        if (*x->s != ',') break;
        x->s++;
        skip_ws(x);
    }
    json_decref(a);
    return NULL;
}

static json_t *lex_value(lex *x, int depth) {
    if (x->s >= x->end) return NULL;
    switch (*x->s) {
    case '{': return depth + 1 > FAST_DEPTH_MAX ? NULL : lex_object(x, depth + 1);
    case '[': return depth + 1 > FAST_DEPTH_MAX ? NULL : lex_array(x, depth + 1);
    case '"': {
        const char *t;
        size_t n;
        if (!lex_string(x, &t, &n) || memchr(t, '\0', n)) return NULL;
        return json_stringn_nocheck(t, n);
    }
    case 't': return lex_word(x, "true", 4) ? json_true() : NULL;
    case 'f': return lex_word(x, "false", 5) ? json_false() : NULL;
    case 'n': return lex_word(x, "null", 4) ? json_null() : NULL;
    default: return lex_int(x);
    }
}

json_t *dra__json_fast_load(const char *text, size_t len) {
    lex x = {text, text + len, NULL, 0};
    skip_ws(&x);
    json_t *v = lex_value(&x, 0);
    skip_ws(&x);
    free(x.tmp);
    if (v && x.s != x.end) {   /* more after the value: jansson's error */
        json_decref(v);
        return NULL;
    }
    return v;
}
