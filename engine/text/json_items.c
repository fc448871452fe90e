/* json_items.c — the extents of a JSON List's (or array's) items, found by scanning
 * the bytes, so a large cluster file is parsed one item at a time (json_items.h). */
#include "engine/text/json_items.h"

#include "base/base.h"

#include <string.h>

/* Items nest at most this deep (jansson's limit is 2048 for the whole document, which
 * adds the list's two levels); digits in a row that may not fit an int64 (jansson:
 * "too big", which dra_json_load answers by reading the document as YAML). */
enum { ITEM_DEPTH_MAX = 2000, DIGITS_MAX = 18 };

typedef struct scan {
    const char *s;
    size_t n, i;
} scan;

static void skip_ws(scan *c) {
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r')) c->i++;
}

/* Past the string opening at c->i; false when it does not end. *escaped: it holds a
 * backslash. */
static bool skip_string(scan *c, bool *escaped) {
    size_t i = c->i + 1;
    for (;;) {
        const char *q = i < c->n ? memchr(c->s + i, '"', c->n - i) : NULL;
        if (!q) return false;
        size_t at = (size_t)(q - c->s), bs = 0;
        while (at - bs > i && c->s[at - bs - 1] == '\\') bs++;
        if (escaped && memchr(c->s + i, '\\', at - i)) *escaped = true;
        i = at + 1;
        if (bs % 2 == 0) break;   /* an escaped quote when the backslashes before it are odd */
    }
    c->i = i;
    return true;
}

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool ends_scalar(char ch) {
    return ch == ',' || ch == ']' || ch == '}' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Past the digits at c->i; false when there are too many of them. */
static bool skip_digits(scan *c) {
    size_t k = c->i;
    while (k < c->n && is_digit(c->s[k])) k++;
    if (k - c->i > DIGITS_MAX) return false;
    c->i = k;
    return true;
}

/* Past one value (an object, array, string or scalar) at c->i. Only its extent is
 * found: what is inside is jansson's to judge. */
static bool skip_value(scan *c) {
    if (c->i >= c->n) return false;
    char first = c->s[c->i];
    if (first == '"') return skip_string(c, NULL);
    if (first != '{' && first != '[') {   /* a number, true, false, null (or bad text) */
        while (c->i < c->n && !ends_scalar(c->s[c->i]))
            if (is_digit(c->s[c->i])) {
                if (!skip_digits(c)) return false;
            } else {
                c->i++;
            }
        return true;
    }
    size_t depth = 0;
    do {
        if (c->i >= c->n) return false;
        char ch = c->s[c->i];
        if (ch == '"') {
            if (!skip_string(c, NULL)) return false;
            continue;
        }
        if (is_digit(ch)) {
            if (!skip_digits(c)) return false;
            continue;
        }
        if (ch == '{' || ch == '[') {
            if (++depth > ITEM_DEPTH_MAX) return false;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
        c->i++;
    } while (depth > 0);
    return true;
}

static void push(dra_json_items *it, size_t off, size_t len) {
    if (it->n == it->cap) {
        it->cap = it->cap ? it->cap * 2 : 256;
        it->v = xrealloc(it->v, it->cap * sizeof *it->v);
    }
    it->v[it->n++] = (dra_json_span){off, len};
}

/* The array opening at c->i: each element's extent; past its ']'. */
static bool scan_array(scan *c, dra_json_items *it) {
    it->open = c->i++;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == ']') {
        it->close = c->i++;
        return true;
    }
    for (;;) {
        size_t at = c->i;
        if (!skip_value(c)) return false;
        push(it, at, c->i - at);
        skip_ws(c);
        if (c->i >= c->n) return false;
        if (c->s[c->i] == ']') {
            it->close = c->i++;
            return true;
        }
        if (c->s[c->i] != ',') return false;
        c->i++;
        skip_ws(c);
        if (c->i >= c->n || c->s[c->i] == ']') return false;   /* a trailing comma: jansson's error */
    }
}

/* The object opening at c->i, with its "items" array; past its '}'. */
static bool scan_object(scan *c, dra_json_items *it) {
    bool found = false;
    c->i++;
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == '}') return false;
    for (;;) {
        if (c->i >= c->n || c->s[c->i] != '"') return false;
        size_t key = c->i + 1;
        bool escaped = false;
        if (!skip_string(c, &escaped) || escaped) return false;   /* "it\u0065ms" is items too: read whole */
        bool items = c->i - 1 - key == 5 && !memcmp(c->s + key, "items", 5);
        skip_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') return false;
        c->i++;
        skip_ws(c);
        if (items) {
            /* a second "items" replaces the first in jansson's reading: read whole */
            if (found || c->i >= c->n || c->s[c->i] != '[' || !scan_array(c, it)) return false;
            found = true;
        } else if (!skip_value(c)) {
            return false;
        }
        skip_ws(c);
        if (c->i >= c->n) return false;
        if (c->s[c->i] == '}') {
            c->i++;
            return found;
        }
        if (c->s[c->i] != ',') return false;
        c->i++;
        skip_ws(c);
    }
}

bool dra__json_items_scan(const char *text, size_t len, dra_json_items *out) {
    memset(out, 0, sizeof *out);
    scan c = {text, len, 0};
    skip_ws(&c);
    bool ok = false;
    if (c.i < c.n && text[c.i] == '[') {
        out->top_array = true;
        ok = scan_array(&c, out);
    } else if (c.i < c.n && text[c.i] == '{') {
        ok = scan_object(&c, out);
    }
    skip_ws(&c);
    if (ok && c.i == c.n) return true;   /* nothing but whitespace after the document */
    dra__json_items_free(out);
    return false;
}

json_t *dra__json_items_envelope(const char *text, size_t len, const dra_json_items *it) {
    size_t head = it->open + 1, tail = len - it->close;
    char *buf = xmalloc(head + tail);
    memcpy(buf, text, head);
    memcpy(buf + head, text + it->close, tail);
    json_error_t je;
    json_t *env = json_loadb(buf, head + tail, 0, &je);
    free(buf);
    return env;
}

void dra__json_items_free(dra_json_items *it) {
    free(it->v);
    memset(it, 0, sizeof *it);
}
