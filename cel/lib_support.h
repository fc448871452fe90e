/* lib_support.h — small helpers shared by the library files (cel/lib_strings.c,
 * lib_regex.c, lib_lists.c, lib_sets.c, lib_net.c, lib_url.c, lib_format.c);
 * private to them.
 *
 * Two things every library needs and value.h does not offer: a growable byte
 * buffer whose memory comes from the evaluation arena (results are built there and
 * the arena is reset before the next evaluation, so the abandoned smaller copies
 * cost nothing to free), and UTF-8 decoding with Go's rules (an invalid byte decodes
 * as U+FFFD of width 1), because the cel-go functions we port index strings in code
 * points exactly as Go's `[]rune(s)` does. */
#ifndef DRA_CEL_LIB_SUPPORT_H
#define DRA_CEL_LIB_SUPPORT_H

#include "cel/functions.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- arena byte buffer ---------------------------------------------------------- */

typedef struct abuf {
    arena *a;
    char *p;
    size_t n, cap;
} abuf;

static inline void abuf_init(abuf *b, arena *a, size_t cap) {
    b->a = a;
    b->n = 0;
    b->cap = cap < 16 ? 16 : cap;
    b->p = arena_alloc(a, b->cap);
}

static inline void abuf_reserve(abuf *b, size_t extra) {
    if (b->n + extra + 1 <= b->cap) return;
    size_t nc = b->cap * 2;
    while (nc < b->n + extra + 1) nc *= 2;
    char *np = arena_alloc(b->a, nc);
    if (b->n) memcpy(np, b->p, b->n);
    b->p = np;
    b->cap = nc;
}

static inline void abuf_add(abuf *b, const char *s, size_t n) {
    if (!n) return;
    abuf_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static inline void abuf_addc(abuf *b, char c) {
    abuf_reserve(b, 1);
    b->p[b->n++] = c;
}

static inline void abuf_adds(abuf *b, const char *s) { abuf_add(b, s, strlen(s)); }

static inline void abuf_addf(abuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void abuf_addf(abuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k > 0) {
        abuf_reserve(b, (size_t)k);
        vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap2);
        b->n += (size_t)k;
    }
    va_end(ap2);
}

/* The buffer as a NUL-terminated CEL string (the buffer must not be used after). */
static inline cel_value abuf_string(abuf *b) {
    abuf_reserve(b, 0);
    b->p[b->n] = '\0';
    return cel_string(b->p, b->n);
}

/* ---- UTF-8 as Go decodes it -------------------------------------------------------- */

#define CEL_RUNE_ERROR 0xFFFD

/* Decodes the code point at s[0..n) (n > 0) into *r and returns its width; an invalid
 * or truncated sequence, a surrogate or an overlong form gives U+FFFD, width 1
 * (utf8.DecodeRuneInString). */
static inline size_t lib_utf8_decode(const char *s, size_t n, uint32_t *r) {
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[0];
    if (c < 0x80) { *r = c; return 1; }
    size_t w;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) { w = 2; v = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { w = 3; v = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { w = 4; v = c & 0x07; min = 0x10000; }
    else { *r = CEL_RUNE_ERROR; return 1; }
    if (n < w) { *r = CEL_RUNE_ERROR; return 1; }
    for (size_t i = 1; i < w; i++) {
        if ((u[i] & 0xC0) != 0x80) { *r = CEL_RUNE_ERROR; return 1; }
        v = (v << 6) | (u[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) { *r = CEL_RUNE_ERROR; return 1; }
    *r = v;
    return w;
}

/* Writes r as UTF-8 into out (4 bytes room); returns the length. Invalid code points
 * are written as U+FFFD, as Go's string(rune) does. */
static inline size_t lib_utf8_encode(uint32_t r, char *out) {
    if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = CEL_RUNE_ERROR;
    if (r < 0x80) { out[0] = (char)r; return 1; }
    if (r < 0x800) {
        out[0] = (char)(0xC0 | (r >> 6));
        out[1] = (char)(0x80 | (r & 0x3F));
        return 2;
    }
    if (r < 0x10000) {
        out[0] = (char)(0xE0 | (r >> 12));
        out[1] = (char)(0x80 | ((r >> 6) & 0x3F));
        out[2] = (char)(0x80 | (r & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (r >> 18));
    out[1] = (char)(0x80 | ((r >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((r >> 6) & 0x3F));
    out[3] = (char)(0x80 | (r & 0x3F));
    return 4;
}

/* A string decoded into code points in the arena (Go's []rune(s)). */
static inline uint32_t *lib_runes(arena *a, const char *s, size_t n, size_t *count) {
    uint32_t *r = arena_alloc(a, sizeof(uint32_t) * (n ? n : 1));
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        i += lib_utf8_decode(s + i, n - i, &r[k]);
        k++;
    }
    *count = k;
    return r;
}

/* The runes r[0..k) encoded back to a CEL string (Go's string(runes)). */
static inline cel_value lib_runes_string(arena *a, const uint32_t *r, size_t k) {
    abuf b;
    abuf_init(&b, a, k * 4 + 1);
    for (size_t i = 0; i < k; i++) {
        char tmp[4];
        abuf_add(&b, tmp, lib_utf8_encode(r[i], tmp));
    }
    return abuf_string(&b);
}

/* ---- shared between library files ------------------------------------------------- */

/* Go's url.ParseRequestURI(s) error text (`parse "x": invalid URI for request`), or
 * NULL when s parses (lib_url.c; the format library's "uri" uses it). */
const char *cel__lib_url_request_uri_error(arena *a, const char *s, size_t n);

/* Sets the call's cost to cel-go's figure (cel_call_cost), returning the cost-limit
 * error when it is past the limit. */
#define LIB_CALL_COST(c, n)                                  \
    do {                                                     \
        if (!cel_call_cost((c), (n))) return cel__cost_exceeded(); \
    } while (0)

/* The string rule of Kubernetes' CallCost and of cel-go's defaults:
 * uint64(math.Ceil(float64(actualSize(v)) * k * StringTraversalCostFactor)) for k = 1
 * (lowerAscii, substring, quantity, ip, ...) or 2 (replace, split, join). */
static inline uint64_t lib_size_cost(const cel_value *v, unsigned k) {
    return cel__cost_factor(cel__value_size(v) * k, CEL_STRING_TRAVERSAL);
}

/* Kubernetes' traversalCost (apiserver pkg/cel/library/cost.go), the cost of
 * isSorted, sum, max, min, indexOf, lastIndexOf: a string or bytes value
 * uint64(float64(len in bytes) × 0.1), truncated; a list the sum over its elements, a
 * map over its keys and values; anything else 1. */
uint64_t cel__lib_traversal_cost(const cel_value *v);

#endif
