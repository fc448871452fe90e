/* lexer.c — CEL tokens from source text (see lexer_internal.h).
 *
 * Follows the lexical grammar of cel-spec (CEL.g4 in cel-go): decimal and hex
 * integers with an optional u/U suffix, doubles with fraction and/or exponent
 * (".5" is a double, "1." is not), strings and bytes in single, double or
 * triple quotes with optional r/R (raw) and b/B prefixes, the escape set
 * \a \b \f \n \r \t \v \\ \' \" \` \? \xHH \uHHHH \UHHHHHHHH \ooo, `//` comments,
 * and backtick-quoted field names. */
#include "cel/lexer_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cel__lex_init(cel_lexer *lx, const char *src, size_t n, arena *a) {
    lx->src = src;
    lx->n = n;
    lx->i = 0;
    lx->a = a;
}

const char *cel__tok_text(cel_tok t) {
    static const char *const names[] = {
        [T_EOF] = "<EOF>", [T_ERROR] = "<error>", [T_INT] = "NUM_INT", [T_UINT] = "NUM_UINT",
        [T_DOUBLE] = "NUM_FLOAT", [T_STRING] = "STRING", [T_BYTES] = "BYTES", [T_IDENT] = "IDENTIFIER",
        [T_ESC_IDENT] = "ESC_IDENTIFIER", [T_TRUE] = "'true'", [T_FALSE] = "'false'", [T_NULL] = "'null'",
        [T_IN] = "'in'", [T_LBRACKET] = "'['", [T_RBRACKET] = "']'", [T_LBRACE] = "'{'",
        [T_RBRACE] = "'}'", [T_LPAREN] = "'('", [T_RPAREN] = "')'", [T_DOT] = "'.'", [T_COMMA] = "','",
        [T_MINUS] = "'-'", [T_EXCLAM] = "'!'", [T_QUESTION] = "'?'", [T_COLON] = "':'", [T_PLUS] = "'+'",
        [T_STAR] = "'*'", [T_SLASH] = "'/'", [T_PERCENT] = "'%'", [T_EQ] = "'=='", [T_NE] = "'!='",
        [T_LT] = "'<'", [T_LE] = "'<='", [T_GE] = "'>='", [T_GT] = "'>'", [T_AND] = "'&&'",
        [T_OR] = "'||'", [T_OPT_DOT] = "'.?'", [T_OPT_LBRACKET] = "'[?'",
    };
    return (unsigned)t < ARRAY_SIZE(names) && names[t] ? names[t] : "?";
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool is_ident_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }
static int hexval(int c) { return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

static cel_token tok(cel_tok k, size_t pos, size_t end) {
    cel_token t = {.kind = k, .pos = (uint32_t)pos, .end = (uint32_t)end};
    return t;
}

static cel_token tok_err(size_t pos, size_t end, const char *msg) {
    cel_token t = tok(T_ERROR, pos, end);
    t.msg = msg;
    return t;
}

static size_t utf8_put(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static cel_token lex_number(cel_lexer *lx) {
    const char *s = lx->src;
    size_t st = lx->i, i = st, n = lx->n;
    if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X') && i + 2 < n && is_hex(s[i + 2])) {
        i += 2;
        uint64_t v = 0;
        bool over = false;
        while (i < n && is_hex(s[i])) {
            if (v >> 60) over = true;
            v = v * 16 + (uint64_t)hexval(s[i]);
            i++;
        }
        bool u = i < n && (s[i] == 'u' || s[i] == 'U');
        if (u) i++;
        lx->i = i;
        cel_token t = tok(u ? T_UINT : T_INT, st, i);
        t.val = cel_uint(v);
        if (over) t.msg = u ? "invalid uint literal" : "invalid int literal";
        return t;
    }
    bool is_float = false;
    while (i < n && is_digit(s[i])) i++;
    if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) {
        is_float = true;
        i++;
        while (i < n && is_digit(s[i])) i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '+' || s[j] == '-')) j++;
        if (j < n && is_digit(s[j])) {
            is_float = true;
            i = j;
            while (i < n && is_digit(s[i])) i++;
        }
    }
    if (is_float) {
        char buf[128];
        size_t len = i - st < sizeof buf - 1 ? i - st : sizeof buf - 1;
        memcpy(buf, s + st, len);
        buf[len] = '\0';
        errno = 0;
        double d = strtod(buf, NULL);
        lx->i = i;
        cel_token t = tok(T_DOUBLE, st, i);
        t.val = cel_double(d);
        if (isinf(d) || errno == ERANGE) {
            if (isinf(d)) t.msg = "invalid double literal";
        }
        return t;
    }
    uint64_t v = 0;
    bool over = false;
    for (size_t k = st; k < i; k++) {
        uint64_t d = (uint64_t)(s[k] - '0');
        if (v > (UINT64_MAX - d) / 10) over = true;
        v = v * 10 + d;
    }
    bool u = i < n && (s[i] == 'u' || s[i] == 'U');
    if (u) i++;
    lx->i = i;
    cel_token t = tok(u ? T_UINT : T_INT, st, i);
    t.val = cel_uint(v);
    if (over) t.msg = u ? "invalid uint literal" : "invalid int literal";
    return t;
}

/* A string or bytes literal starting at lx->i with `prefix` chars of r/b before the
 * quote. */
static cel_token lex_string(cel_lexer *lx, size_t prefix) {
    const char *s = lx->src;
    size_t n = lx->n, st = lx->i, i = st;
    bool raw = false, bytes = false;
    for (size_t k = 0; k < prefix; k++) {
        if (s[i] == 'r' || s[i] == 'R') raw = true;
        else bytes = true;
        i++;
    }
    char q = s[i];
    bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
    i += triple ? 3 : 1;
    /* The decoded text is never longer than the literal: size the buffer by a
     * quick scan to the closing quote rather than by the rest of the source. */
    size_t e = i;
    while (e < n) {
        if (!raw && s[e] == '\\') {
            e += 2;
            continue;
        }
        if (s[e] == q && (!triple || (e + 2 < n && s[e + 1] == q && s[e + 2] == q))) break;
        if (!triple && (s[e] == '\n' || s[e] == '\r')) break;
        e++;
    }
    char *out = arena_alloc(lx->a, (e < n ? e : n) - i + 1);
    size_t o = 0;
    for (;;) {
        if (i >= n) return lx->i = n, tok_err(st, n, "token recognition error");
        char c = s[i];
        if (triple) {
            if (c == q && i + 2 < n && s[i + 1] == q && s[i + 2] == q) { i += 3; break; }
        } else {
            if (c == q) { i++; break; }
            if (c == '\n' || c == '\r') return lx->i = i, tok_err(st, i, "token recognition error");
        }
        if (c != '\\' || raw) {
            out[o++] = c;
            i++;
            continue;
        }
        if (i + 1 >= n) return lx->i = n, tok_err(st, n, "token recognition error");
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case 'a': out[o++] = '\a'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'v': out[o++] = '\v'; break;
        case '\\': case '\'': case '"': case '`': case '?': out[o++] = e; break;
        case 'x': case 'X': {
            if (i + 2 > n || !is_hex(s[i]) || !is_hex(s[i + 1])) return lx->i = i, tok_err(st, i, "token recognition error");
            uint32_t v = (uint32_t)(hexval(s[i]) * 16 + hexval(s[i + 1]));
            i += 2;
            if (bytes) out[o++] = (char)v;
            else o += utf8_put(out + o, v);
            break;
        }
        case 'u': case 'U': {
            int k = e == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int j = 0; j < k; j++) {
                if (i >= n || !is_hex(s[i])) return lx->i = i, tok_err(st, i, "token recognition error");
                v = v * 16 + (uint32_t)hexval(s[i++]);
            }
            if ((v >= 0xD800 && v < 0xE000) || v > 0x10FFFF) {
                lx->i = i;
                cel_token t = tok_err(st, i, "invalid unicode code point");
                return t;
            }
            o += utf8_put(out + o, v);
            break;
        }
        case '0': case '1': case '2': case '3': {
            if (i + 2 > n || s[i] < '0' || s[i] > '7' || s[i + 1] < '0' || s[i + 1] > '7')
                return lx->i = i, tok_err(st, i, "token recognition error");
            uint32_t v = (uint32_t)((e - '0') * 64 + (s[i] - '0') * 8 + (s[i + 1] - '0'));
            i += 2;
            if (bytes) out[o++] = (char)v;
            else o += utf8_put(out + o, v);
            break;
        }
        default: return lx->i = i, tok_err(st, i, "token recognition error");
        }
    }
    out[o] = '\0';
    lx->i = i;
    cel_token t = tok(bytes ? T_BYTES : T_STRING, st, i);
    t.val = bytes ? cel_bytes(out, o) : cel_string(out, o);
    return t;
}

cel_token cel__lex_next(cel_lexer *lx) {
    const char *s = lx->src;
    size_t n = lx->n;
    for (;;) {
        while (lx->i < n && (s[lx->i] == ' ' || s[lx->i] == '\t' || s[lx->i] == '\n' || s[lx->i] == '\r' ||
                             s[lx->i] == '\f' || s[lx->i] == '\v'))
            lx->i++;
        if (lx->i + 1 < n && s[lx->i] == '/' && s[lx->i + 1] == '/') {
            while (lx->i < n && s[lx->i] != '\n') lx->i++;
            continue;
        }
        break;
    }
    size_t st = lx->i;
    if (st >= n) return tok(T_EOF, n, n);
    char c = s[st];
    char c1 = st + 1 < n ? s[st + 1] : 0;
    if (is_digit(c) || (c == '.' && is_digit(c1))) return lex_number(lx);
    if (c == '"' || c == '\'') return lex_string(lx, 0);
    if (is_ident_start(c)) {
        /* string prefixes: r, b, rb, br (any case) */
        bool p1 = c == 'r' || c == 'R' || c == 'b' || c == 'B';
        if (p1 && (c1 == '"' || c1 == '\'')) return lex_string(lx, 1);
        if (p1 && st + 2 < n && (s[st + 2] == '"' || s[st + 2] == '\'')) {
            bool r0 = c == 'r' || c == 'R', r1 = c1 == 'r' || c1 == 'R';
            bool b1 = c1 == 'b' || c1 == 'B';
            if ((r0 && b1) || (!r0 && r1)) return lex_string(lx, 2);
        }
        size_t i = st;
        while (i < n && is_ident_char(s[i])) i++;
        lx->i = i;
        size_t len = i - st;
        if (len == 4 && !memcmp(s + st, "true", 4)) return tok(T_TRUE, st, i);
        if (len == 5 && !memcmp(s + st, "false", 5)) return tok(T_FALSE, st, i);
        if (len == 4 && !memcmp(s + st, "null", 4)) return tok(T_NULL, st, i);
        if (len == 2 && !memcmp(s + st, "in", 2)) return tok(T_IN, st, i);
        cel_token t = tok(T_IDENT, st, i);
        t.val = cel_string(arena_strndup(lx->a, s + st, len), len);
        return t;
    }
    if (c == '`') {
        size_t i = st + 1;
        while (i < n && (is_ident_char(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '/' || s[i] == ' ')) i++;
        if (i >= n || s[i] != '`' || i == st + 1) {
            lx->i = i + (i < n);
            return tok_err(st, i, "token recognition error");
        }
        lx->i = i + 1;
        cel_token t = tok(T_ESC_IDENT, st, i + 1);
        t.val = cel_string(arena_strndup(lx->a, s + st + 1, i - st - 1), i - st - 1);
        return t;
    }
    lx->i = st + 1;
    switch (c) {
    case '[': return tok(T_LBRACKET, st, st + 1);
    case ']': return tok(T_RBRACKET, st, st + 1);
    case '{': return tok(T_LBRACE, st, st + 1);
    case '}': return tok(T_RBRACE, st, st + 1);
    case '(': return tok(T_LPAREN, st, st + 1);
    case ')': return tok(T_RPAREN, st, st + 1);
    case '.': return tok(T_DOT, st, st + 1);
    case ',': return tok(T_COMMA, st, st + 1);
    case '-': return tok(T_MINUS, st, st + 1);
    case '?': return tok(T_QUESTION, st, st + 1);
    case ':': return tok(T_COLON, st, st + 1);
    case '+': return tok(T_PLUS, st, st + 1);
    case '*': return tok(T_STAR, st, st + 1);
    case '/': return tok(T_SLASH, st, st + 1);
    case '%': return tok(T_PERCENT, st, st + 1);
    case '!':
        if (c1 == '=') return lx->i = st + 2, tok(T_NE, st, st + 2);
        return tok(T_EXCLAM, st, st + 1);
    case '=':
        if (c1 == '=') return lx->i = st + 2, tok(T_EQ, st, st + 2);
        break;
    case '<':
        if (c1 == '=') return lx->i = st + 2, tok(T_LE, st, st + 2);
        return tok(T_LT, st, st + 1);
    case '>':
        if (c1 == '=') return lx->i = st + 2, tok(T_GE, st, st + 2);
        return tok(T_GT, st, st + 1);
    case '&':
        if (c1 == '&') return lx->i = st + 2, tok(T_AND, st, st + 2);
        break;
    case '|':
        if (c1 == '|') return lx->i = st + 2, tok(T_OR, st, st + 2);
        break;
    default: break;
    }
    /* ANTLR's lexer reads code points: an unexpected character is skipped whole */
    unsigned char uc = (unsigned char)c;
    size_t w = 1;
    if ((uc & 0xE0) == 0xC0) w = 2;
    else if ((uc & 0xF0) == 0xE0) w = 3;
    else if ((uc & 0xF8) == 0xF0) w = 4;
    for (size_t k = 1; k < w; k++)
        if (st + k >= n || ((unsigned char)s[st + k] & 0xC0) != 0x80) w = 1;
    lx->i = st + w;
    return tok_err(st, st + w, "token recognition error");
}
