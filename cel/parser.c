/* parser.c — recursive-descent parser for the CEL grammar, producing the AST of
 * ast.h with macros expanded as cel-go expands them.
 *
 * Precedence, lowest first: ?: , ||, &&, relations (== != < <= > >= in, left
 * associative), + -, * / %, unary ! and -, member access (. .? [] [?] calls).
 * Chains of && and || are built as balanced trees (as cel-go does), so long
 * conjunctions do not nest deeply. An odd run of unary operators applies once, an
 * even run cancels (`!!x` is `x`), and `-` directly before a number literal is part
 * of the literal (so -9223372036854775808 is an int).
 *
 * Errors are reported cel-go style with line:column and a source snippet. The parser
 * stops consuming at the first syntax error, but, as ANTLR leaves every rule open at
 * an error in the parse tree and cel-go's visitor walks that tree, the constructs
 * open there are still built (their missing parts as placeholders) and the macros
 * among them still expanded: `has(a[` reports the has() argument as well as the
 * syntax error. Errors of macro expansion and literals (cel-go's visitor) do not stop
 * the parser. Nesting deeper than max_depth is an error. */
#include "cel/ast.h"
#include "cel/lexer_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACCU "__result__"

/* ANTLR's expected-token sets (in token-type order) where an expression may start:
 * alone, and where an optional element before it widens the set — a call's argument
 * list (or ')'), an index's '?', a list's or map's elements (or '?', ',' and the
 * closing token). */
#define FIRST_TAIL "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
#define FIRST_EXPR "{'[', '{', '(', '.', '-', '!', " FIRST_TAIL
#define FIRST_ARGS "{'[', '{', '(', ')', '.', '-', '!', " FIRST_TAIL
#define FIRST_INDEX "{'[', '{', '(', '.', '-', '!', '?', " FIRST_TAIL
#define FIRST_LIST "{'[', ']', '{', '(', '.', ',', '-', '!', '?', " FIRST_TAIL
#define FIRST_MAP "{'[', '{', '}', '(', '.', ',', '-', '!', '?', " FIRST_TAIL

typedef struct perror_rec {
    uint32_t pos;
    const char *msg;
} perror_rec;

typedef struct parser {
    cel_lexer lx;
    cel_token t, nx;      /* current and next token */
    arena *a;
    strbuf *d;            /* the error text (cel-go's Errors.ToDisplayString) */
    perror_rec *errs;     /* errors found, printed sorted at the end */
    uint32_t nerrs, caperrs;
    uint32_t open;        /* constructs open that need a closing token (or a ternary's ':') */
    bool failed;          /* a syntax error was reported: consume no further */
    bool aborted;         /* the nesting limit was hit: nothing is built any more */
    int depth, max_depth;
    bool no_macros;
    const char *src;
    size_t n;
} parser;

/* ---- error text ------------------------------------------------------------- */

/* Bytes of the UTF-8 sequence at s (1 for an invalid one, as Go's utf8.DecodeRune). */
static size_t utf8_width(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t w = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (w > n) return 1;
    for (size_t i = 1; i < w; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) return 1;
    return w;
}

void cel__error_at(strbuf *d, const char *src, size_t n, uint32_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cel__error_atv(d, src, n, pos, fmt, ap);
    va_end(ap);
}

/* cel-go's Error.ToDisplayString: the caret line has one dot per code point before the
 * column, a full-width dot (U+FF0E) for a multi-byte one so the caret stays under its
 * character in a terminal, and a full-width caret under a multi-byte character. */
void cel__error_atv(strbuf *d, const char *src, size_t n, uint32_t pos, const char *fmt, va_list ap) {
    if (!d) return;
    if (n == 0) {
        /* an empty source has no line 1 for cel-go's snippet, and ANTLR's end token
         * there is at column -1 (printed 0) */
        if (d->len) sbuf_addc(d, '\n');
        sbuf_adds(d, "ERROR: <input>:1:0: ");
        va_list aq;
        va_copy(aq, ap);
        char small[512];
        vsnprintf(small, sizeof small, fmt, aq);
        va_end(aq);
        sbuf_adds(d, small);
        return;
    }
    if (pos > n) pos = (uint32_t)n;
    int line = 1;
    size_t ls = 0;
    for (size_t i = 0; i < pos; i++)
        if (src[i] == '\n') line++, ls = i + 1;
    size_t col = cel__utf8_len(src + ls, pos - ls);
    size_t le = ls;
    while (le < n && src[le] != '\n') le++;
    if (d->len) sbuf_addc(d, '\n');
    sbuf_addf(d, "ERROR: <input>:%d:%zu: ", line, col + 1);
    va_list aq;
    va_copy(aq, ap);
    char small[256];
    int ml = vsnprintf(small, sizeof small, fmt, aq);
    va_end(aq);
    if (ml >= (int)sizeof small) {
        char *big = xmalloc((size_t)ml + 1);
        vsnprintf(big, (size_t)ml + 1, fmt, ap);
        sbuf_add(d, big, (size_t)ml);
        free(big);
    } else if (ml > 0) {
        sbuf_add(d, small, (size_t)ml);
    }
    /* cel-go leaves the snippet out of a line longer than 16384 bytes */
    if (le - ls > 16384) return;
    sbuf_adds(d, "\n | ");
    for (size_t i = ls; i < le; i++) sbuf_addc(d, src[i] == '\t' ? ' ' : src[i]);
    sbuf_adds(d, "\n | ");
    size_t i = ls;
    for (size_t k = 0; k < col && i < le; k++) {
        size_t w = utf8_width(src + i, le - i);
        sbuf_adds(d, w > 1 ? "\xef\xbc\x8e" : ".");
        i += w;
    }
    sbuf_adds(d, i < le && utf8_width(src + i, le - i) > 1 ? "\xef\xbc\xbe" : "^");
}

/* Records an error (kept in the order found; cel__parse prints them sorted by position,
 * as cel-go's Errors.ToDisplayString does). */
static void record(parser *p, uint32_t pos, const char *fmt, va_list ap) {
    va_list aq;
    va_copy(aq, ap);
    int len = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (len < 0) len = 0;
    char *msg = arena_alloc(p->a, (size_t)len + 1);
    vsnprintf(msg, (size_t)len + 1, fmt, ap);
    if (p->nerrs == p->caperrs) {
        uint32_t ncap = p->caperrs ? p->caperrs * 2 : 4;
        perror_rec *ne = ARENA_NEWN(p->a, perror_rec, ncap);
        if (p->nerrs) memcpy(ne, p->errs, sizeof *ne * p->nerrs);
        p->errs = ne;
        p->caperrs = ncap;
    }
    p->errs[p->nerrs++] = (perror_rec){pos, msg};
}

/* A syntax error: the parser consumes no further (failed is ANTLR's error-recovery
 * mode, which hides later syntax errors) until an enclosing expression matches the
 * operator it stopped at, which ANTLR's recovery would stop at too; the constructs open
 * return what they built. */
static void fail(parser *p, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(parser *p, uint32_t pos, const char *fmt, ...) {
    if (p->failed) return;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    record(p, pos, fmt, ap);
    va_end(ap);
}

/* An error of cel-go's visitor (a macro's argument, a literal, a reserved name): the
 * tree is complete and the parser goes on. */
static void semantic(parser *p, uint32_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void semantic(parser *p, uint32_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    record(p, pos, fmt, ap);
    va_end(ap);
}

/* A lexer error: ANTLR's lexer reports it, drops the text and goes on, so the parser
 * never sees it and parsing continues. */
static void lex_error(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lex_error(parser *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    record(p, p->nx.pos, fmt, ap);
    va_end(ap);
}

/* A token's text as ANTLR's getErrorDisplay shows it: whole, with \n \r \t escaped. */
static const char *tok_desc(parser *p, const cel_token *t) {
    if (t->kind == T_EOF) return "<EOF>";
    strbuf b;
    sbuf_init(&b);
    for (uint32_t i = t->pos; i < t->end; i++) {
        char c = p->src[i];
        if (c == '\n') sbuf_adds(&b, "\\n");
        else if (c == '\r') sbuf_adds(&b, "\\r");
        else if (c == '\t') sbuf_adds(&b, "\\t");
        else sbuf_addc(&b, c);
    }
    const char *r = arena_strndup(p->a, b.buf ? b.buf : "", b.len);
    sbuf_free(&b);
    return r;
}

static void syntax_error(parser *p, const char *expecting) {
    const char *d = tok_desc(p, &p->t);
    if (p->t.kind == T_ERROR) {
        if (!strcmp(p->t.msg, "token recognition error"))
            fail(p, p->t.pos, "Syntax error: token recognition error at: '%s'", d);
        else
            fail(p, p->t.pos, "%s", p->t.msg);
        return;
    }
    if (expecting) fail(p, p->t.pos, "Syntax error: mismatched input '%s' expecting %s", d, expecting);
    else fail(p, p->t.pos, "Syntax error: extraneous input '%s'", d);
}

/* ---- tokens ------------------------------------------------------------------- */

static void next_token(parser *p) {
    for (;;) {
        p->nx = cel__lex_next(&p->lx);
        if (p->nx.kind != T_ERROR || strcmp(p->nx.msg, "token recognition error")) break;
        lex_error(p, "Syntax error: token recognition error at: '%s'", tok_desc(p, &p->nx));
    }
}

static void advance(parser *p) {
    p->t = p->nx;
    next_token(p);
}

/* The closing token k of a construct (a call's ')', a nested expression's ')', an
 * index's or list's ']', a map's '}'). Where the input ends instead, ANTLR's inline
 * recovery inserts the token when what follows it — the end — is valid there, that
 * is when no enclosing construct is still open ("missing ')' at '<EOF>'"), and
 * reports the mismatch otherwise ("mismatched input '<EOF>' expecting ')'"). */
static bool delete_one(parser *p, cel_tok k, const char *what);

static bool expect_close(parser *p, cel_tok k, const char *tok, const char *what) {
    if (p->t.kind == k) {
        advance(p);
        return true;
    }
    if (delete_one(p, k, what)) return true;
    if (p->t.kind == T_EOF) {
        if (p->open == 1) fail(p, p->t.pos, "Syntax error: missing %s at '<EOF>'", tok);
        else fail(p, p->t.pos, "Syntax error: mismatched input '<EOF>' expecting %s", tok);
        return false;
    }
    syntax_error(p, what);
    return false;
}

static bool accept(parser *p, cel_tok k) {
    if (p->t.kind != k) return false;
    advance(p);
    return true;
}

/* ANTLR's single-token deletion: where the token after a wrong one is the one
 * expected, the wrong one is reported extraneous and dropped, and parsing goes on. */
static bool delete_one(parser *p, cel_tok k, const char *what) {
    if (p->nx.kind != k || p->t.kind == T_EOF || p->t.kind == T_ERROR) return false;
    fail(p, p->t.pos, "Syntax error: extraneous input '%s' expecting %s", tok_desc(p, &p->t), what);
    advance(p);
    advance(p);
    p->failed = false;
    return true;
}

static bool expect(parser *p, cel_tok k, const char *what) {
    if (p->t.kind == k) {
        advance(p);
        return true;
    }
    if (delete_one(p, k, what)) return true;
    syntax_error(p, what);
    return false;
}

/* ---- node construction ------------------------------------------------------- */

static cel_node *node(parser *p, cel_node_kind k, uint32_t pos) {
    cel_node *n = ARENA_NEW(p->a, cel_node);
    n->kind = (uint8_t)k;
    n->pos = pos;
    n->slot = n->slot2 = n->accu_slot = -1;
    return n;
}

static cel_node *mk_const(parser *p, uint32_t pos, cel_value v) {
    cel_node *n = node(p, N_CONST, pos);
    n->val = v;
    return n;
}

static cel_node *mk_ident(parser *p, uint32_t pos, const char *name) {
    cel_node *n = node(p, N_IDENT, pos);
    n->name = name;
    return n;
}

static cel_node *mk_call(parser *p, uint32_t pos, const char *fn, cel_node *target, int nargs, ...) {
    cel_node *n = node(p, N_CALL, pos);
    n->name = fn;
    n->target = target;
    n->nargs = (uint32_t)nargs;
    n->args = ARENA_NEWN(p->a, cel_node *, nargs ? nargs : 1);
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs; i++) n->args[i] = va_arg(ap, cel_node *);
    va_end(ap);
    return n;
}

/* Where a syntax error left out a part of a construct: cel-go's visitor makes an
 * expression of no kind there (neither a selection nor an identifier, which is all the
 * macros ask); a null constant here, as only errors are reported of such a tree. */
static cel_node *missing(parser *p) { return mk_const(p, p->t.pos, cel_null()); }

static cel_node *mk_list1(parser *p, uint32_t pos, cel_node *e) {
    cel_node *n = node(p, N_LIST, pos);
    n->nargs = 1;
    n->args = ARENA_NEWN(p->a, cel_node *, 1);
    n->args[0] = e;
    return n;
}

/* A growable array of node pointers in the arena. */
typedef struct nvec {
    cel_node **v;
    uint8_t *opt;
    uint32_t n, cap;
    bool any_opt;
} nvec;

static void nvec_push(parser *p, nvec *v, cel_node *x, bool opt) {
    if (v->n == v->cap) {
        uint32_t nc = v->cap ? v->cap * 2 : 4;
        cel_node **nv = ARENA_NEWN(p->a, cel_node *, nc);
        uint8_t *no = ARENA_NEWN(p->a, uint8_t, nc);
        if (v->n) {
            memcpy(nv, v->v, sizeof(cel_node *) * v->n);
            memcpy(no, v->opt, v->n);
        }
        v->v = nv;
        v->opt = no;
        v->cap = nc;
    }
    v->opt[v->n] = opt;
    v->any_opt |= opt;
    v->v[v->n++] = x;
}

/* ---- grammar ------------------------------------------------------------------ */

static cel_node *parse_expr(parser *p);
static cel_node *minus_fallback(parser *p, uint32_t last);

static const char *const reserved[] = {"as", "break", "const", "continue", "else", "for", "function", "if",
                                       "import", "let", "loop", "package", "namespace", "return", "var",
                                       "void", "while"};

static bool is_reserved(const char *s) {
    for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
        if (!strcmp(reserved[i], s)) return true;
    return false;
}

/* Parses `(args)` after the opening parenthesis was seen (current token is '('). */
static bool parse_args(parser *p, nvec *out) {
    if (!expect(p, T_LPAREN, "'('")) return false;
    if (accept(p, T_RPAREN)) return true;
    if (p->t.kind == T_EOF) {
        syntax_error(p, FIRST_ARGS);
        return false;
    }
    p->open++;
    for (;;) {
        cel_node *a = parse_expr(p);
        if (!a) return false;
        nvec_push(p, out, a, false);
        if (p->failed) break;
        if (accept(p, T_COMMA)) continue;
        /* exprList has no trailing ',': after it only ')' is expected */
        expect_close(p, T_RPAREN, "')'", "')'");
        break;
    }
    p->open--;
    return !p->failed;
}

static bool simple_ident(cel_node *n) { return n->kind == N_IDENT && !n->absolute; }

/* Comprehension with cel-go's shape. */
static cel_node *mk_comp(parser *p, uint32_t pos, const char *iv, const char *iv2, cel_node *range, cel_node *init,
                         cel_node *cond, cel_node *step, cel_node *result) {
    cel_node *n = node(p, N_COMPREHENSION, pos);
    n->iter_var = iv;
    n->iter_var2 = iv2;
    n->accu_var = ACCU;
    n->range = range;
    n->accu_init = init;
    n->cond = cond;
    n->step = step;
    n->result = result;
    return n;
}

static cel_node *accu(parser *p, uint32_t pos) { return mk_ident(p, pos, ACCU); }

static cel_node *empty_list(parser *p, uint32_t pos) {
    cel_node *n = node(p, N_LIST, pos);
    n->args = NULL;
    return n;
}

/* Expands receiver-style macros; returns NULL (no error) when `fn` with this arity
 * is not a macro. A macro's error (*err) is reported and leaves a placeholder, as
 * cel-go's visitor does, and parsing goes on. */
static cel_node *expand_macro(parser *p, uint32_t pos, cel_node *target, const char *fn, nvec *args, bool *err) {
    uint32_t na = args->n;
    cel_node **a = args->v;
    *err = false;
    bool two = false;
    int kind = -1;  /* 0 all, 1 exists, 2 exists_one, 3 map, 4 map3, 5 filter, 6 transformList, 7 transformMap, 8 transformMapEntry */
    if (!strcmp(fn, "all") && (na == 2 || na == 3)) kind = 0, two = na == 3;
    else if (!strcmp(fn, "exists") && (na == 2 || na == 3)) kind = 1, two = na == 3;
    else if ((!strcmp(fn, "exists_one") || !strcmp(fn, "existsOne")) && (na == 2 || na == 3)) kind = 2, two = na == 3;
    else if (!strcmp(fn, "map") && na == 2) kind = 3;
    else if (!strcmp(fn, "map") && na == 3) kind = 4;
    else if (!strcmp(fn, "filter") && na == 2) kind = 5;
    else if (!strcmp(fn, "transformList") && (na == 3 || na == 4)) kind = 6, two = true;
    else if (!strcmp(fn, "transformMap") && (na == 3 || na == 4)) kind = 7, two = true;
    else if (!strcmp(fn, "transformMapEntry") && (na == 3 || na == 4)) kind = 8, two = true;
    if (!strcmp(fn, "bind") && na == 3 && target->kind == N_IDENT && !strcmp(target->name, "cel")) {
        if (!simple_ident(a[0])) {
            semantic(p, a[0]->pos, "cel.bind() variable names must be simple identifiers");
            *err = true;
            return mk_const(p, pos, cel_null());
        }
        cel_node *b = node(p, N_BIND, pos);
        b->iter_var = a[0]->name;
        b->nargs = 2;
        b->args = ARENA_NEWN(p->a, cel_node *, 2);
        b->args[0] = a[1];
        b->args[1] = a[2];
        return b;
    }
    if (!strcmp(fn, "sortBy") && na == 2) {
        /* cel-go ext.Lists: l.sortBy(v, key) →
         * cel.bind(@__sortBy_input__, l, @__sortBy_input__.@sortByAssociatedKeys(
         *          @__sortBy_input__.map(v, key))) */
        if (!simple_ident(a[0])) {
            semantic(p, a[0]->pos, "sortBy(var, ...) variable name must be a simple identifier");
            *err = true;
            return mk_const(p, pos, cel_null());
        }
        const char *in = "@__sortBy_input__";
        cel_node *mapped = mk_comp(p, pos, a[0]->name, NULL, mk_ident(p, pos, in), empty_list(p, pos),
                                   mk_const(p, pos, cel_bool(true)),
                                   mk_call(p, pos, "_+_", NULL, 2, accu(p, pos), mk_list1(p, pos, a[1])), accu(p, pos));
        cel_node *b = node(p, N_BIND, pos);
        b->iter_var = in;
        b->nargs = 2;
        b->args = ARENA_NEWN(p->a, cel_node *, 2);
        b->args[0] = target;
        b->args[1] = mk_call(p, pos, "@sortByAssociatedKeys", mk_ident(p, pos, in), 1, mapped);
        return b;
    }
    if ((!strcmp(fn, "optMap") || !strcmp(fn, "optFlatMap")) && na == 2) {
        if (!simple_ident(a[0])) {
            semantic(p, a[0]->pos, "%s() variable name must be a simple identifier", fn);
            *err = true;
            return mk_const(p, pos, cel_null());
        }
        cel_node *b = node(p, N_BIND, pos);
        b->iter_var = a[0]->name;
        b->nargs = 2;
        b->args = ARENA_NEWN(p->a, cel_node *, 2);
        target->shared = true;   /* where cel-go copies it (meh.Copy) */
        b->args[0] = mk_call(p, pos, "value", target, 0);
        b->args[1] = a[1];
        cel_node *some = fn[3] == 'M' ? mk_call(p, pos, "optional.of", NULL, 1, b) : b;
        cel_node *none = mk_call(p, pos, "optional.none", NULL, 0);
        return mk_call(p, pos, "_?_:_", NULL, 3, mk_call(p, pos, "hasValue", target, 0), some, none);
    }
    if (kind < 0) return NULL;
    int nvars = two ? 2 : 1;
    for (int i = 0; i < nvars; i++) {
        if (!simple_ident(a[i])) {
            semantic(p, a[i]->pos, kind >= 3 && kind <= 5 ? "argument is not an identifier" : "argument must be a simple name");
            *err = true;
            return mk_const(p, pos, cel_null());
        }
        if (!strcmp(a[i]->name, ACCU)) {
            semantic(p, a[i]->pos, "iteration variable overwrites accumulator variable");
            *err = true;
            return mk_const(p, pos, cel_null());
        }
    }
    const char *iv = a[0]->name, *iv2 = two ? a[1]->name : NULL;
    if (two && !strcmp(iv, iv2)) {
        semantic(p, a[1]->pos, "duplicate variable name: %s", iv);
        *err = true;
        return NULL;
    }
    cel_node **rest = a + nvars;
    uint32_t nrest = na - (uint32_t)nvars;
    switch (kind) {
    case 0:
        return mk_comp(p, pos, iv, iv2, target, mk_const(p, pos, cel_bool(true)),
                       mk_call(p, pos, "@not_strictly_false", NULL, 1, accu(p, pos)),
                       mk_call(p, pos, "_&&_", NULL, 2, accu(p, pos), rest[0]), accu(p, pos));
    case 1:
        return mk_comp(p, pos, iv, iv2, target, mk_const(p, pos, cel_bool(false)),
                       mk_call(p, pos, "@not_strictly_false", NULL, 1, mk_call(p, pos, "!_", NULL, 1, accu(p, pos))),
                       mk_call(p, pos, "_||_", NULL, 2, accu(p, pos), rest[0]), accu(p, pos));
    case 2:
        return mk_comp(p, pos, iv, iv2, target, mk_const(p, pos, cel_int(0)), mk_const(p, pos, cel_bool(true)),
                       mk_call(p, pos, "_?_:_", NULL, 3, rest[0],
                               mk_call(p, pos, "_+_", NULL, 2, accu(p, pos), mk_const(p, pos, cel_int(1))), accu(p, pos)),
                       mk_call(p, pos, "_==_", NULL, 2, accu(p, pos), mk_const(p, pos, cel_int(1))));
    case 3:
    case 6:
        if (nrest == 1)
            return mk_comp(p, pos, iv, iv2, target, empty_list(p, pos), mk_const(p, pos, cel_bool(true)),
                           mk_call(p, pos, "_+_", NULL, 2, accu(p, pos), mk_list1(p, pos, rest[0])), accu(p, pos));
        /* fallthrough: filtered transformList */
        /* FALLTHROUGH */
    case 4:
        return mk_comp(p, pos, iv, iv2, target, empty_list(p, pos), mk_const(p, pos, cel_bool(true)),
                       mk_call(p, pos, "_?_:_", NULL, 3, rest[0],
                               mk_call(p, pos, "_+_", NULL, 2, accu(p, pos), mk_list1(p, pos, rest[1])), accu(p, pos)),
                       accu(p, pos));
    case 5:
        return mk_comp(p, pos, iv, iv2, target, empty_list(p, pos), mk_const(p, pos, cel_bool(true)),
                       mk_call(p, pos, "_?_:_", NULL, 3, rest[0],
                               mk_call(p, pos, "_+_", NULL, 2, accu(p, pos), mk_list1(p, pos, mk_ident(p, a[0]->pos, iv))),
                               accu(p, pos)),
                       accu(p, pos));
    case 7:
    case 8: {
        cel_node *m = node(p, N_MAP, pos);
        cel_node *ins;
        cel_node *val = nrest == 1 ? rest[0] : rest[1];
        if (kind == 7)
            ins = mk_call(p, pos, "cel.@mapInsert", NULL, 3, accu(p, pos), mk_ident(p, a[0]->pos, iv), val);
        else
            ins = mk_call(p, pos, "cel.@mapInsert", NULL, 2, accu(p, pos), val);
        cel_node *step = nrest == 1 ? ins : mk_call(p, pos, "_?_:_", NULL, 3, rest[0], ins, accu(p, pos));
        return mk_comp(p, pos, iv, iv2, target, m, mk_const(p, pos, cel_bool(true)), step, accu(p, pos));
    }
    default: return NULL;
    }
}

static bool depth_enter(parser *p) {
    if (++p->depth > p->max_depth) {
        p->aborted = true;
        if (!p->failed) {
            p->failed = true;
            if (p->d) {
                if (p->d->len) sbuf_addc(p->d, '\n');
                sbuf_addf(p->d, "ERROR: <input>:-1:0: expression recursion limit exceeded: %d", p->max_depth);
            }
        }
        return false;
    }
    return true;
}

static cel_node *parse_primary(parser *p) {
    cel_token t = p->t;
    switch (t.kind) {
    case T_INT:
        advance(p);
        if (t.msg || t.val.u.u > (uint64_t)INT64_MAX) {
            semantic(p, t.pos, "invalid int literal");
            return mk_const(p, t.pos, cel_null());
        }
        return mk_const(p, t.pos, cel_int((int64_t)t.val.u.u));
    case T_UINT:
        advance(p);
        if (t.msg) {
            semantic(p, t.pos, "invalid uint literal");
            return mk_const(p, t.pos, cel_null());
        }
        return mk_const(p, t.pos, t.val);
    case T_DOUBLE:
        advance(p);
        if (t.msg) {
            semantic(p, t.pos, "invalid double literal");
            return mk_const(p, t.pos, cel_null());
        }
        return mk_const(p, t.pos, t.val);
    case T_STRING:
    case T_BYTES:
        advance(p);
        return mk_const(p, t.pos, t.val);
    case T_TRUE: advance(p); return mk_const(p, t.pos, cel_bool(true));
    case T_FALSE: advance(p); return mk_const(p, t.pos, cel_bool(false));
    case T_NULL: advance(p); return mk_const(p, t.pos, cel_null());
    case T_MINUS:
        /* a negative number literal (unary '-' before anything else is handled by
         * parse_unary) */
        advance(p);
        if (p->t.kind == T_INT) {
            cel_token v = p->t;
            advance(p);
            if (v.msg || v.val.u.u > (uint64_t)INT64_MAX + 1) {
                semantic(p, t.pos, "invalid int literal");
                return mk_const(p, t.pos, cel_null());
            }
            return mk_const(p, t.pos, cel_int((int64_t)(0 - v.val.u.u)));
        }
        if (p->t.kind == T_DOUBLE) {
            cel_token v = p->t;
            advance(p);
            if (v.msg) {
                semantic(p, t.pos, "invalid double literal");
                return mk_const(p, t.pos, cel_null());
            }
            return mk_const(p, t.pos, cel_double(-v.val.u.d));
        }
        /* `!-x`: after '!' only a member may follow, and no primary starts with '-'
         * but a negative literal */
        return minus_fallback(p, t.pos);
    case T_LPAREN: {
        advance(p);
        p->open++;
        cel_node *e = parse_expr(p);
        if (!e) return NULL;
        if (!p->failed) expect_close(p, T_RPAREN, "')'", "')'");
        p->open--;
        return e;
    }
    case T_LBRACKET: {
        advance(p);
        nvec v = {0};
        if (p->t.kind == T_EOF) syntax_error(p, FIRST_LIST);
        p->open++;
        bool comma = false;
        while (!p->failed && p->t.kind != T_RBRACKET) {
            bool opt = accept(p, T_QUESTION);
            cel_node *e = parse_expr(p);
            if (!e) return NULL;
            nvec_push(p, &v, e, opt);
            if (p->failed || !(comma = accept(p, T_COMMA))) break;
            /* `[a,` at the end: ANTLR takes the comma as the optional trailing one */
            if (p->t.kind == T_EOF) break;
        }
        if (!p->failed) {
            if (comma) expect_close(p, T_RBRACKET, "']'", "']'");
            else expect(p, T_RBRACKET, "{']', ','}");
        }
        p->open--;
        cel_node *l = node(p, N_LIST, t.pos);
        l->args = v.v;
        l->nargs = v.n;
        l->opt_mask = v.any_opt ? v.opt : NULL;
        return l;
    }
    case T_LBRACE: {
        advance(p);
        nvec v = {0};
        nvec opts = {0};
        if (p->t.kind == T_EOF) syntax_error(p, FIRST_MAP);
        p->open++;
        bool comma = false;
        while (!p->failed && p->t.kind != T_RBRACE) {
            bool opt = accept(p, T_QUESTION);
            if (p->t.kind == T_COLON) {
                syntax_error(p, NULL);
                break;
            }
            cel_node *k = parse_expr(p);
            if (!k) return NULL;
            cel_node *val = missing(p);
            if (!p->failed && expect(p, T_COLON, "':'")) {
                val = parse_expr(p);
                if (!val) return NULL;
            }
            nvec_push(p, &v, k, opt);
            nvec_push(p, &v, val, opt);
            nvec_push(p, &opts, k, opt);
            if (p->failed || !(comma = accept(p, T_COMMA))) break;
            if (p->t.kind == T_EOF) break;
        }
        if (!p->failed) {
            if (comma) expect_close(p, T_RBRACE, "'}'", "'}'");
            else expect(p, T_RBRACE, "{'}', ','}");
        }
        p->open--;
        cel_node *m = node(p, N_MAP, t.pos);
        m->args = v.v;
        m->nargs = v.n;
        m->opt_mask = opts.any_opt ? opts.opt : NULL;
        return m;
    }
    case T_DOT:
    case T_IDENT: {
        bool absolute = false;
        if (t.kind == T_DOT) {
            advance(p);
            absolute = true;
            if (p->t.kind != T_IDENT) {
                syntax_error(p, "IDENTIFIER");
                return missing(p);
            }
            t = p->t;
        }
        advance(p);
        const char *name = t.val.u.s;
        bool reserved_name = is_reserved(name);
        if (reserved_name) semantic(p, t.pos, "reserved identifier: %s", name);
        if (p->t.kind == T_LPAREN) {
            uint32_t open = p->t.pos;   /* cel-go places a call at its '(' */
            nvec args = {0};
            parse_args(p, &args);
            if (p->aborted) return NULL;
            if (reserved_name) return mk_const(p, t.pos, cel_null());
            /* has() of one argument is the macro (of another count a plain call, which
             * the checker does not know) */
            if (!absolute && !p->no_macros && !strcmp(name, "has") && args.n == 1) {
                if (args.v[0]->kind != N_SELECT || args.v[0]->optional) {
                    semantic(p, args.v[0]->pos, "invalid argument to has() macro");
                    return mk_const(p, args.v[0]->pos, cel_null());
                }
                args.v[0]->test_only = true;
                return args.v[0];
            }
            cel_node *c = node(p, N_CALL, open);
            c->name = name;
            c->absolute = absolute;
            c->args = args.v;
            c->nargs = args.n;
            return c;
        }
        if (reserved_name) return mk_const(p, t.pos, cel_null());
        cel_node *id = mk_ident(p, t.pos, name);
        id->absolute = absolute;
        return id;
    }
    default:
        syntax_error(p, FIRST_EXPR);
        return missing(p);
    }
}

/* `Name.Qualified{field: value, ...}` — the current token is '{'. */
static cel_node *parse_struct(parser *p, cel_node *type_expr) {
    char name[512];
    size_t len = 0;
    /* rebuild the qualified name from the ident/select chain */
    cel_node *chain[64];
    int nc = 0;
    for (cel_node *x = type_expr; x && nc < 64; x = x->kind == N_SELECT ? x->target : NULL) chain[nc++] = x;
    name[0] = '\0';
    if (chain[nc - 1]->absolute) name[len++] = '.';
    for (int i = nc - 1; i >= 0; i--) {
        len += (size_t)snprintf(name + len, sizeof name - len, "%s%s", i == nc - 1 ? "" : ".", chain[i]->name);
        if (len >= sizeof name) len = sizeof name - 1;
    }
    uint32_t pos = p->t.pos;
    advance(p);
    nvec vals = {0};
    const char **fields = NULL;
    uint32_t nf = 0, cap = 0;
    while (p->t.kind != T_RBRACE) {
        bool opt = accept(p, T_QUESTION);
        if (p->t.kind != T_IDENT && p->t.kind != T_ESC_IDENT) {
            syntax_error(p, "{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}");
            return missing(p);
        }
        const char *f = p->t.val.u.s;
        advance(p);
        if (!expect(p, T_COLON, "':'")) return missing(p);
        cel_node *v = parse_expr(p);
        if (!v) return NULL;
        if (p->failed) return missing(p);
        if (nf == cap) {
            uint32_t ncap = cap ? cap * 2 : 4;
            const char **nfields = ARENA_NEWN(p->a, const char *, ncap);
            if (nf) memcpy(nfields, fields, sizeof(char *) * nf);
            fields = nfields;
            cap = ncap;
        }
        fields[nf++] = f;
        nvec_push(p, &vals, v, opt);
        if (!accept(p, T_COMMA)) break;
    }
    if (!expect(p, T_RBRACE, "{'}', ','}")) return missing(p);
    cel_node *s = node(p, N_STRUCT, pos);
    s->name = arena_strndup(p->a, name, len);
    s->fields = fields;
    s->args = vals.v;
    s->nargs = vals.n;
    s->opt_mask = vals.any_opt ? vals.opt : NULL;
    return s;
}

static bool is_name_chain(cel_node *x) {
    while (x->kind == N_SELECT && !x->optional && !x->test_only) x = x->target;
    return x->kind == N_IDENT;
}

/* Whether an expression may start with a token of kind k (ANTLR's FIRST_EXPR). */
static bool starts_expr(cel_tok k) {
    switch (k) {
    case T_LBRACKET: case T_LBRACE: case T_LPAREN: case T_DOT: case T_MINUS: case T_EXCLAM:
    case T_TRUE: case T_FALSE: case T_NULL: case T_DOUBLE: case T_INT: case T_UINT:
    case T_STRING: case T_BYTES: case T_IDENT:
        return true;
    default: return false;
    }
}

/* A member chain. A syntax error in it ends the chain (the ANTLR rule member exits)
 * with what was built so far, the selection or index being built included. */
static cel_node *parse_member(parser *p) {
    cel_node *e = parse_primary(p);
    int entered = 0;
    while (e && !p->failed) {
        if (p->t.kind == T_DOT) {
            uint32_t dpos = p->t.pos;
            advance(p);
            bool opt = false;
            if (p->t.kind == T_QUESTION) {
                opt = true;
                advance(p);
            }
            if (p->t.kind != T_IDENT && p->t.kind != T_ESC_IDENT) {
                if (p->t.kind == T_ERROR) syntax_error(p, NULL);
                else if (opt) {
                    /* `.?` chose the selection: its escapeIdent fails, and cel-go's visitor
                     * then finds an identifier of no kind */
                    fail(p, p->t.pos, "Syntax error: mismatched input '%s' expecting {IDENTIFIER, ESC_IDENTIFIER}",
                         tok_desc(p, &p->t));
                    semantic(p, p->t.pos, "unsupported ident kind");
                    cel_node *s = node(p, N_SELECT, dpos);
                    s->target = e;
                    s->name = "";
                    s->optional = true;
                    e = s;
                } else if (p->t.kind == T_EOF) {
                    /* `.` at the end: ANTLR cannot tell a selection from a member call */
                    fail(p, p->t.pos, "Syntax error: no viable alternative at input '.'");
                } else {
                    const char *d = tok_desc(p, &p->t);
                    if (p->t.kind == T_TRUE || p->t.kind == T_FALSE || p->t.kind == T_NULL || p->t.kind == T_IN)
                        fail(p, p->t.pos, "Syntax error: mismatched input '%s' expecting IDENTIFIER", d);
                    else {
                        /* reported at the token after the '.', with the source's text
                         * from the '.' to it */
                        cel_token span = {.kind = T_IDENT, .pos = dpos, .end = p->t.end};
                        fail(p, p->t.pos, "Syntax error: no viable alternative at input '%s'", tok_desc(p, &span));
                    }
                }
                break;
            }
            cel_token id = p->t;
            advance(p);
            if (!depth_enter(p)) return NULL;
            entered++;
            if (p->t.kind == T_LPAREN && id.kind == T_IDENT && !opt) {
                uint32_t open = p->t.pos;
                nvec args = {0};
                parse_args(p, &args);
                if (p->aborted) return NULL;
                cel_node *m = NULL;
                if (!p->no_macros) {
                    bool merr;
                    m = expand_macro(p, open, e, id.val.u.s, &args, &merr);
                }
                if (!m) {
                    m = node(p, N_CALL, open);
                    m->name = id.val.u.s;
                    m->target = e;
                    m->args = args.v;
                    m->nargs = args.n;
                }
                e = m;
                continue;
            }
            cel_node *s = node(p, N_SELECT, dpos);
            s->target = e;
            s->name = id.val.u.s;
            s->optional = opt;
            e = s;
        } else if (p->t.kind == T_LBRACKET) {
            uint32_t bpos = p->t.pos;
            advance(p);
            cel_node *x = node(p, N_INDEX, bpos);
            x->target = e;
            x->nargs = 1;
            x->args = ARENA_NEWN(p->a, cel_node *, 1);
            e = x;
            /* ANTLR syncs before the optional '?': its set is the expected one */
            if (!starts_expr(p->t.kind) && p->t.kind != T_QUESTION) {
                syntax_error(p, FIRST_INDEX);
                x->args[0] = missing(p);
                break;
            }
            x->optional = accept(p, T_QUESTION);
            if (!depth_enter(p)) return NULL;
            entered++;
            p->open++;
            cel_node *idx = parse_expr(p);
            if (!idx) return NULL;
            x->args[0] = idx;
            if (!p->failed) expect_close(p, T_RBRACKET, "']'", "']'");
            p->open--;
        } else if (p->t.kind == T_LBRACE && is_name_chain(e)) {
            e = parse_struct(p, e);
        } else {
            break;
        }
    }
    p->depth -= entered;
    return e;
}

static cel_node *parse_unary(parser *p);

/* A '-' (at `last`) that neither starts a negative literal nor negates a member:
 * ANTLR's prediction fails over it and the token after it ("no viable alternative",
 * their text as the source has it), its recovery stops at the '-' (an operator of
 * calc), and calc takes it for a subtraction whose right operand is parsed anew. */
static cel_node *minus_fallback(parser *p, uint32_t last) {
    uint32_t end = p->t.kind == T_EOF ? (uint32_t)p->n : p->t.end;
    cel_token span = {.kind = T_IDENT, .pos = last, .end = end};
    fail(p, p->t.pos, "Syntax error: no viable alternative at input '%s'", tok_desc(p, &span));
    p->failed = false;   /* the '-' matched as the operator */
    if (!depth_enter(p)) return NULL;
    cel_node *r = parse_unary(p);
    p->depth--;
    if (!r) return NULL;
    return mk_call(p, last, "_-_", NULL, 2, mk_const(p, last, cel_null()), r);
}

static cel_node *parse_unary(parser *p) {
    cel_token t = p->t;
    if (t.kind == T_EXCLAM || t.kind == T_MINUS) {
        int count = 0;
        cel_tok k = t.kind;
        /* '-' directly before a number is a negative literal */
        if (k == T_MINUS && (p->nx.kind == T_INT || p->nx.kind == T_DOUBLE)) return parse_member(p);
        /* every '-' of a run of two or more is an operator, the number after them
         * unsigned: cel-go's grammar takes (ops+='-')+ greedily and VisitNegate drops
         * an even count, so `--2` is the literal 2 and `---2` is -_(2) (found by
         * tests/upstream: the estimated costs differed) */
        uint32_t last = t.pos;
        while (p->t.kind == k) {
            last = p->t.pos;
            advance(p);
            count++;
        }
        if (p->t.kind != T_ERROR && (!starts_expr(p->t.kind) || p->t.kind == T_EXCLAM)) {
            if (k == T_EXCLAM) {
                /* ANTLR syncs at the loop back of ('!')+ and drops the token */
                fail(p, p->t.pos, "Syntax error: extraneous input '%s' expecting " FIRST_EXPR, tok_desc(p, &p->t));
                return mk_call(p, t.pos, "!_", NULL, 1, missing(p));
            }
            return minus_fallback(p, last);
        }
        if (!depth_enter(p)) return NULL;
        cel_node *m = parse_member(p);
        p->depth--;
        if (!m) return NULL;
        if (count % 2 == 0) return m;
        return mk_call(p, t.pos, k == T_EXCLAM ? "!_" : "-_", NULL, 1, m);
    }
    return parse_member(p);
}

static cel_node *parse_mul(parser *p) {
    cel_node *l = parse_unary(p);
    int entered = 0;
    while (l && (p->t.kind == T_STAR || p->t.kind == T_SLASH || p->t.kind == T_PERCENT)) {
        cel_token op = p->t;
        advance(p);
        p->failed = false;   /* ANTLR's recovery stops at an operator, which calc matches */
        /* operator chains nest (left-associated), so they count toward the depth limit */
        if (!depth_enter(p)) return NULL;
        entered++;
        cel_node *r = parse_unary(p);
        if (!r) return NULL;
        l = mk_call(p, op.pos, op.kind == T_STAR ? "_*_" : op.kind == T_SLASH ? "_/_" : "_%_", NULL, 2, l, r);
    }
    p->depth -= entered;
    return l;
}

static cel_node *parse_add(parser *p) {
    cel_node *l = parse_mul(p);
    int entered = 0;
    while (l && (p->t.kind == T_PLUS || p->t.kind == T_MINUS)) {
        cel_token op = p->t;
        advance(p);
        p->failed = false;   /* ANTLR's recovery stops at an operator, which calc matches */
        /* operator chains nest (left-associated), so they count toward the depth limit */
        if (!depth_enter(p)) return NULL;
        entered++;
        cel_node *r = parse_mul(p);
        if (!r) return NULL;
        l = mk_call(p, op.pos, op.kind == T_PLUS ? "_+_" : "_-_", NULL, 2, l, r);
    }
    p->depth -= entered;
    return l;
}

static const char *relop(cel_tok k) {
    switch (k) {
    case T_EQ: return "_==_";
    case T_NE: return "_!=_";
    case T_LT: return "_<_";
    case T_LE: return "_<=_";
    case T_GT: return "_>_";
    case T_GE: return "_>=_";
    case T_IN: return "@in";
    default: return NULL;
    }
}

static cel_node *parse_rel(parser *p) {
    cel_node *l = parse_add(p);
    int entered = 0;
    while (l && relop(p->t.kind)) {
        cel_token op = p->t;
        advance(p);
        p->failed = false;   /* ANTLR's recovery stops at an operator, which calc matches */
        /* operator chains nest (left-associated), so they count toward the depth limit */
        if (!depth_enter(p)) return NULL;
        entered++;
        cel_node *r = parse_add(p);
        if (!r) return NULL;
        l = mk_call(p, op.pos, relop(op.kind), NULL, 2, l, r);
    }
    p->depth -= entered;
    return l;
}

/* Balanced tree over terms[lo..hi) joined by op (positions of the operators kept). */
static cel_node *balance(parser *p, const char *op, cel_node **terms, uint32_t *ops, uint32_t lo, uint32_t hi) {
    if (hi - lo == 1) return terms[lo];
    uint32_t mid = (lo + hi) / 2;
    cel_node *l = balance(p, op, terms, ops, lo, mid);
    cel_node *r = balance(p, op, terms, ops, mid, hi);
    return mk_call(p, ops[mid - 1], op, NULL, 2, l, r);
}

static cel_node *parse_logic(parser *p, bool is_or) {
    cel_node *first = is_or ? parse_logic(p, false) : parse_rel(p);
    cel_tok k = is_or ? T_OR : T_AND;
    if (!first || p->t.kind != k) return first;
    uint32_t cap = 8, n = 0;
    cel_node **terms = ARENA_NEWN(p->a, cel_node *, cap);
    uint32_t *ops = ARENA_NEWN(p->a, uint32_t, cap);
    terms[n++] = first;
    while (p->t.kind == k) {
        uint32_t opos = p->t.pos;
        advance(p);
        p->failed = false;
        cel_node *r = is_or ? parse_logic(p, false) : parse_rel(p);
        if (!r) return NULL;
        if (n == cap) {
            cel_node **nt = ARENA_NEWN(p->a, cel_node *, cap * 2);
            uint32_t *no = ARENA_NEWN(p->a, uint32_t, cap * 2);
            memcpy(nt, terms, sizeof(cel_node *) * n);
            memcpy(no, ops, sizeof(uint32_t) * n);
            terms = nt;
            ops = no;
            cap *= 2;
        }
        ops[n - 1] = opos;
        terms[n++] = r;
    }
    return balance(p, is_or ? "_||_" : "_&&_", terms, ops, 0, n);
}

static cel_node *parse_expr(parser *p) {
    if (!depth_enter(p)) return NULL;
    cel_node *c = parse_logic(p, true);
    if (c && p->t.kind == T_QUESTION) {
        uint32_t qpos = p->t.pos;
        advance(p);
        p->failed = false;
        p->open++;   /* the ':' is still to come */
        cel_node *a = parse_logic(p, true);
        if (!a) return NULL;
        bool colon = !p->failed && expect(p, T_COLON, "':'");
        p->open--;
        cel_node *b = colon ? parse_expr(p) : missing(p);
        if (!b) return NULL;
        c = mk_call(p, qpos, "_?_:_", NULL, 3, c, a, b);
    }
    p->depth--;
    return c;
}

bool cel__parse(const char *src, size_t n, const cel_parse_opts *opts, arena *a, cel_node **root, strbuf *d) {
    parser p = {0};
    p.a = a;
    p.d = d;
    p.src = src;
    p.n = n;
    p.max_depth = opts && opts->max_depth ? opts->max_depth : 250;
    p.no_macros = opts && opts->no_macros;
    cel__lex_init(&p.lx, src, n, a);
    next_token(&p);
    advance(&p);
    cel_node *r = parse_expr(&p);
    if (r && !p.failed && p.t.kind != T_EOF) {
        if (p.t.kind == T_ERROR) syntax_error(&p, NULL);
        /* ANTLR's single-token deletion: one stray token before the end is extraneous */
        else fail(&p, p.t.pos, "Syntax error: %s input '%s' expecting <EOF>",
                  p.nx.kind == T_EOF ? "extraneous" : "mismatched", tok_desc(&p, &p.t));
    }
    if (!p.failed && !p.nerrs && !r) fail(&p, p.t.pos, "Syntax error");
    /* ANTLR's lexer reaches the end whatever the parser found: its errors in the rest
     * of the input are reported too */
    while (p.failed && p.t.kind != T_EOF) advance(&p);
    if (p.nerrs) {
        /* stably sorted by position, as cel-go prints them */
        for (uint32_t i = 1; i < p.nerrs; i++) {
            perror_rec x = p.errs[i];
            uint32_t j = i;
            while (j > 0 && p.errs[j - 1].pos > x.pos) {
                p.errs[j] = p.errs[j - 1];
                j--;
            }
            p.errs[j] = x;
        }
        for (uint32_t i = 0; i < p.nerrs; i++) cel__error_at(p.d, p.src, p.n, p.errs[i].pos, "%s", p.errs[i].msg);
    }
    if (p.failed || p.nerrs || !r) return false;
    *root = r;
    return true;
}
