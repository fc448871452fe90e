/* lib_strings.c — cel-go's string extension library (`ext.Strings`) at the version
 * Kubernetes enables (StringsVersion(2)): charAt, indexOf, lastIndexOf, lowerAscii,
 * upperAscii, replace, split, substring, trim, join (version 0), format and
 * strings.quote (version 1).
 *
 * Indices are code points, computed the way cel-go does it (decode the string into
 * runes, Go's `[]rune(s)`, where an invalid byte is one U+FFFD), and the corner
 * cases follow cel-go's code rather than intuition: `indexOf('')` returns the
 * offset even when it is out of range, `''.lastIndexOf('x')` is an "index out of
 * range: -1" error, `charAt(len)` is "". replace and split are Go's
 * strings.Replace/SplitN (an empty separator works on code points); trim is
 * strings.TrimSpace (Unicode White_Space, not the zero-width characters).
 *
 * format(list) implements the clause syntax %s %d %f %e %b %x %X %o with an
 * optional precision (`%.3f`) and `%%`, with cel-go's error texts. Its value
 * formatting follows the cel-spec strings extension (cel-go's formatter v2, which
 * the conformance corpus encodes): lists and maps print their elements unquoted
 * (`[a, 1]`, `{k: v}` sorted by key), doubles print shortest ("2.5", "NaN",
 * "Infinity"), and %d also accepts doubles. Kubernetes' version-2 library still
 * runs cel-go's first formatter, which quotes strings inside lists, locale-formats
 * %f and %e (en-US digit grouping, "2.718280 × 10⁰⁰") and rejects doubles for %d;
 * those differences are deliberate and listed in the library report. A precision is
 * what strconv.Atoi takes (leading zeros, up to 2^63-1); cel-go then hands "%.<p>f" to
 * Go's fmt, which prints a precision up to 10,000,009 and past it
 * "%!(NOVERB)%!(EXTRA float64=<value>)" (GO_FMT_PREC_MAX), as here. */
#include "base/goquote.h"
#include "cel/lib_support.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* ---- indexing ------------------------------------------------------------------ */

static cel_value str_char_at(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    /* charAt costs cel-go 1 (no tracker, no Kubernetes rule); decoding is hidden work */
    if (!cel_call_work(c, a[0].len)) return cel__cost_exceeded();
    int64_t i = a[1].u.i;
    size_t k;
    uint32_t *r = lib_runes(c->arena, a[0].u.s, a[0].len, &k);
    if (i < 0 || (uint64_t)i > k) return cel__call_error(c, "index out of range: %" PRId64, i);
    if ((uint64_t)i == k) return cel_string("", 0);
    return lib_runes_string(c->arena, &r[i], 1);
}

static bool runes_at(const uint32_t *r, const uint32_t *sub, size_t m) {
    for (size_t j = 0; j < m; j++)
        if (r[j] != sub[j]) return false;
    return true;
}

/* What indexOf and lastIndexOf with an offset share: the cost, the answer for an
 * empty substring, both strings as code points, the offset's range. False with *out
 * the answer when that already decides it. */
typedef struct runes_pair {
    uint32_t *r, *q;   /* the string's and the substring's code points */
    size_t k, m;       /* their counts */
} runes_pair;

static bool index_prepare(cel_call *c, const cel_value *s, const cel_value *sub, int64_t off, runes_pair *p,
                          cel_value *out) {
    if (!cel_call_cost(c, cel__lib_traversal_cost(s))) return *out = cel__cost_exceeded(), false;
    /* cel-go v0.29 ext/strings.go indexOfOffset/lastIndexOfOffset: a negative offset
     * is an error; the empty substring matches at the offset clamped to the end; an
     * offset at or past the end finds nothing (-1), it is not an error */
    if (off < 0) return *out = cel__call_error(c, "index out of range: %" PRId64, off), false;
    if (sub->len == 0) {
        uint64_t k = cel__utf8_len(s->u.s, s->len);
        return *out = cel_int((uint64_t)off > k ? (int64_t)k : off), false;
    }
    if (!cel_call_work(c, (uint64_t)s->len * (sub->len < 64 ? sub->len : 64))) return *out = cel__cost_exceeded(), false;
    p->r = lib_runes(c->arena, s->u.s, s->len, &p->k);
    p->q = lib_runes(c->arena, sub->u.s, sub->len, &p->m);
    if ((uint64_t)off >= p->k) return *out = cel_int(-1), false;
    return true;
}

/* cel-go indexOfOffset */
static cel_value index_of(cel_call *c, const cel_value *s, const cel_value *sub, int64_t off) {
    runes_pair p;
    cel_value out;
    if (!index_prepare(c, s, sub, off, &p, &out)) return out;
    uint32_t *r = p.r, *q = p.q;
    size_t k = p.k, m = p.m;
    for (int64_t i = off; i < (int64_t)k - ((int64_t)m - 1); i++)
        if (runes_at(r + i, q, m)) return cel_int(i);
    return cel_int(-1);
}

static cel_value str_index_of(cel_call *c, const cel_value *a, uint32_t n) {
    return index_of(c, &a[0], &a[1], n > 2 ? a[2].u.i : 0);
}

/* cel-go lastIndexOfOffset */
static cel_value last_index_of(cel_call *c, const cel_value *s, const cel_value *sub, int64_t off) {
    runes_pair p;
    cel_value out;
    if (!index_prepare(c, s, sub, off, &p, &out)) return out;
    uint32_t *r = p.r, *q = p.q;
    size_t k = p.k, m = p.m;
    if (off > (int64_t)k - (int64_t)m) off = (int64_t)k - (int64_t)m;
    for (int64_t i = off; i >= 0; i--)
        if (runes_at(r + i, q, m)) return cel_int(i);
    return cel_int(-1);
}

static cel_value str_last_index_of(cel_call *c, const cel_value *a, uint32_t n) {
    if (n > 2) return last_index_of(c, &a[0], &a[1], a[2].u.i);
    if (!cel_call_cost(c, cel__lib_traversal_cost(&a[0]))) return cel__cost_exceeded();
    int64_t k = (int64_t)cel__utf8_len(a[0].u.s, a[0].len);
    if (a[1].len == 0) return cel_int(k);
    if (a[0].len < a[1].len) return cel_int(-1);   /* cel-go compares byte lengths here */
    return last_index_of(c, &a[0], &a[1], k - 1);
}

/* ---- case, trim ------------------------------------------------------------------- */

static cel_value ascii_case(cel_call *c, const cel_value *s, bool upper) {
    LIB_CALL_COST(c, lib_size_cost(s, 1));
    /* Go rebuilds the string from its runes, so invalid bytes come back as U+FFFD */
    size_t k;
    uint32_t *r = lib_runes(c->arena, s->u.s, s->len, &k);
    for (size_t i = 0; i < k; i++) {
        if (upper && r[i] >= 'a' && r[i] <= 'z') r[i] -= 32;
        if (!upper && r[i] >= 'A' && r[i] <= 'Z') r[i] += 32;
    }
    return lib_runes_string(c->arena, r, k);
}

static cel_value str_lower(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return ascii_case(c, &a[0], false);
}

static cel_value str_upper(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return ascii_case(c, &a[0], true);
}

/* Go's unicode.IsSpace: the White_Space property. */
static bool is_space(uint32_t r) {
    switch (r) {
    case '\t': case '\n': case '\v': case '\f': case '\r': case ' ': case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return r >= 0x2000 && r <= 0x200A;
    }
}

static cel_value str_trim(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    const char *s = a[0].u.s;
    size_t len = a[0].len, b = 0, e = len;
    while (b < e) {
        uint32_t r;
        size_t w = lib_utf8_decode(s + b, e - b, &r);
        if (!is_space(r)) break;
        b += w;
    }
    while (e > b) {
        /* step back to the start of the last code point (at most 4 bytes) */
        size_t st = e - 1;
        while (st > b && e - st < 4 && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
        uint32_t r;
        size_t w = lib_utf8_decode(s + st, e - st, &r);
        if (st + w != e) { st = e - 1; r = CEL_RUNE_ERROR; }
        if (!is_space(r)) break;
        e = st;
    }
    return cel_string(s + b, e - b);
}

/* ---- replace, split ---------------------------------------------------------------- */

static size_t find_bytes(const char *s, size_t n, const char *sub, size_t m) {
    if (m == 0) return 0;
    if (m > n) return (size_t)-1;
    const char *p = memmem(s, n, sub, m);
    return p ? (size_t)(p - s) : (size_t)-1;
}

/* strings.Count */
static size_t count_sub(const char *s, size_t n, const char *sub, size_t m) {
    if (m == 0) return cel__utf8_len(s, n) + 1;
    size_t cnt = 0, i = 0;
    for (;;) {
        size_t j = find_bytes(s + i, n - i, sub, m);
        if (j == (size_t)-1) return cnt;
        cnt++;
        i += j + m;
    }
}

/* strings.Replace(s, old, new, lim) */
static cel_value replace_n(cel_call *c, const cel_value *s, const cel_value *old, const cel_value *nw, int64_t lim) {
    LIB_CALL_COST(c, lib_size_cost(s, 2));
    if (lim == 0 || (old->len == nw->len && memcmp(old->u.s, nw->u.s, old->len) == 0)) return *s;
    size_t m = count_sub(s->u.s, s->len, old->u.s, old->len);
    if (m == 0) return *s;
    if (lim < 0 || (uint64_t)lim > m) lim = (int64_t)m;
    uint64_t out_len = s->len + (uint64_t)lim * nw->len;
    if (!cel_call_work(c, out_len)) return cel__cost_exceeded();
    abuf b;
    abuf_init(&b, c->arena, out_len + 1);
    size_t start = 0;
    for (int64_t i = 0; i < lim; i++) {
        size_t j = start;
        if (old->len == 0) {
            if (i > 0 && start < s->len) {
                uint32_t r;
                j += lib_utf8_decode(s->u.s + start, s->len - start, &r);
            }
        } else {
            j += find_bytes(s->u.s + start, s->len - start, old->u.s, old->len);
        }
        abuf_add(&b, s->u.s + start, j - start);
        abuf_add(&b, nw->u.s, nw->len);
        start = j + old->len;
    }
    abuf_add(&b, s->u.s + start, s->len - start);
    return abuf_string(&b);
}

static cel_value str_replace(cel_call *c, const cel_value *a, uint32_t n) {
    return replace_n(c, &a[0], &a[1], &a[2], n > 3 ? a[3].u.i : -1);
}

/* strings.SplitN(s, sep, lim) */
static cel_value split_n(cel_call *c, const cel_value *s, const cel_value *sep, int64_t lim) {
    LIB_CALL_COST(c, lib_size_cost(s, 2));
    cel_list *l;
    if (lim == 0) return cel_list_value(cel__list_new(c->arena, 0));
    const char *p = s->u.s;
    size_t len = s->len;
    if (sep->len == 0) {
        /* explode into code points; the last piece takes the remainder */
        size_t k = cel__utf8_len(p, len);
        if (lim < 0 || (uint64_t)lim > k) lim = (int64_t)k;
        l = cel__list_new(c->arena, (uint32_t)lim);
        for (int64_t i = 0; i < lim - 1; i++) {
            uint32_t r;
            size_t w = lib_utf8_decode(p, len, &r);
            l->items[l->n++] = cel_string(p, w);
            p += w;
            len -= w;
        }
        if (lim > 0) l->items[l->n++] = cel_string(p, len);
        return cel_list_value(l);
    }
    if (lim < 0) lim = (int64_t)count_sub(p, len, sep->u.s, sep->len) + 1;
    if ((uint64_t)lim > len + 1) lim = (int64_t)len + 1;
    l = cel__list_new(c->arena, (uint32_t)lim);
    int64_t i = 0;
    while (i < lim - 1) {
        size_t m = find_bytes(p, len, sep->u.s, sep->len);
        if (m == (size_t)-1) break;
        l->items[l->n++] = cel_string(p, m);
        p += m + sep->len;
        len -= m + sep->len;
        i++;
    }
    l->items[l->n++] = cel_string(p, len);
    return cel_list_value(l);
}

static cel_value str_split(cel_call *c, const cel_value *a, uint32_t n) {
    return split_n(c, &a[0], &a[1], n > 2 ? a[2].u.i : -1);
}

/* ---- substring -------------------------------------------------------------------- */

static cel_value str_substring(cel_call *c, const cel_value *a, uint32_t n) {
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    size_t k;
    uint32_t *r = lib_runes(c->arena, a[0].u.s, a[0].len, &k);
    int64_t start = a[1].u.i, end = (int64_t)k;
    if (n > 2) {
        end = a[2].u.i;
        if (start > end)
            return cel__call_error(c, "invalid substring range. start: %" PRId64 ", end: %" PRId64, start, end);
    }
    if (start < 0 || (uint64_t)start > k) return cel__call_error(c, "index out of range: %" PRId64, start);
    if (n > 2 && (end < 0 || (uint64_t)end > k)) return cel__call_error(c, "index out of range: %" PRId64, end);
    return lib_runes_string(c->arena, r + start, (size_t)(end - start));
}

/* ---- join, quote ------------------------------------------------------------------ */

static cel_value list_join(cel_call *c, const cel_value *a, uint32_t n) {
    const cel_list *l = a[0].u.list;
    const cel_value *sep = n > 1 ? &a[1] : NULL;
    uint64_t total = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != CV_STRING)
            return cel__call_error(c, "type conversion error from '%s' to 'string'", cel__kind_type_name(&l->items[i]));
        total += l->items[i].len;
    }
    if (sep && l->n > 1) total += (uint64_t)sep->len * (l->n - 1);
    if (!cel_call_work(c, total + l->n)) return cel__cost_exceeded();
    abuf b;
    abuf_init(&b, c->arena, total + 1);
    for (uint32_t i = 0; i < l->n; i++) {
        if (i && sep) abuf_add(&b, sep->u.s, sep->len);
        abuf_add(&b, l->items[i].u.s, l->items[i].len);
    }
    cel_value r = abuf_string(&b);
    /* Kubernetes' join: ceil(0.2 × size of the result), known once it is built */
    LIB_CALL_COST(c, lib_size_cost(&r, 2));
    return r;
}

static cel_value strings_quote(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));   /* cel-go ExtQuoteString */
    const char *s = a[0].u.s;
    size_t len = a[0].len;
    abuf b;
    abuf_init(&b, c->arena, len + len / 4 + 3);
    abuf_addc(&b, '"');
    for (size_t i = 0; i < len;) {
        uint32_t r;
        size_t w = lib_utf8_decode(s + i, len - i, &r);
        const char *esc = goquote_escape(r);
        if (esc) {
            abuf_adds(&b, esc);
        } else {
            /* re-encode so invalid bytes become U+FFFD (cel-go's sanitize) */
            char tmp[4];
            abuf_add(&b, tmp, lib_utf8_encode(r, tmp));
        }
        i += w;
    }
    abuf_addc(&b, '"');
    return abuf_string(&b);
}

/* ---- format ------------------------------------------------------------------------ */

/* Formatting state: the output buffer and the first error. */
typedef struct fmt_ctx {
    cel_call *c;
    abuf out;
    const char *err;   /* arena-owned message, NULL while fine */
} fmt_ctx;

static bool fmt_fail(fmt_ctx *f, const char *what, const cel_value *v) {
    f->err = arena_printf(f->c->arena, "%s, was given %s", what, cel__kind_type_name(v));
    return false;
}

/* strconv.FormatFloat(d, 'f', -1, 64): the shortest digits that round-trip, laid
 * out without an exponent. */
static void add_double_shortest(abuf *b, double d) {
    if (isnan(d)) { abuf_adds(b, "NaN"); return; }
    if (isinf(d)) { abuf_adds(b, d > 0 ? "Infinity" : "-Infinity"); return; }
    char e[64];
    cel__shortest_e(d, e, sizeof e);
    /* e = [-]D.DDDDe±XX: collect the digits and the decimal exponent */
    char digits[32];
    int nd = 0;
    const char *q = e;
    bool neg = *q == '-';
    if (neg) q++;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') digits[nd++] = *q;
    int exp = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    if (neg) abuf_addc(b, '-');
    int point = exp + 1;   /* digits before the decimal point */
    if (point <= 0) {
        abuf_adds(b, "0");
        if (!(nd == 1 && digits[0] == '0')) {
            abuf_addc(b, '.');
            for (int i = 0; i < -point; i++) abuf_addc(b, '0');
            abuf_add(b, digits, (size_t)nd);
        }
        return;
    }
    for (int i = 0; i < point; i++) abuf_addc(b, i < nd ? digits[i] : '0');
    if (nd > point) {
        abuf_addc(b, '.');
        abuf_add(b, digits + point, (size_t)(nd - point));
    }
}

/* Go's strconv.FormatInt/FormatUint in bases 2, 8, 16 (a minus sign, never two's
 * complement). */
static void add_radix(abuf *b, bool neg, uint64_t mag, unsigned base, bool upper) {
    char tmp[72];
    int i = (int)sizeof tmp;
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[--i] = dig[mag % base];
        mag /= base;
    } while (mag);
    if (neg) tmp[--i] = '-';
    abuf_add(b, tmp + i, sizeof tmp - (size_t)i);
}

static void add_radix_value(abuf *b, const cel_value *v, unsigned base, bool upper) {
    if (v->kind == CV_INT) {
        bool neg = v->u.i < 0;
        uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v->u.i : (uint64_t)v->u.i;
        add_radix(b, neg, mag, base, upper);
    } else {
        add_radix(b, false, v->u.u, base, upper);
    }
}

typedef struct map_ent {
    const char *k;
    size_t kn;
    const char *v;
    size_t vn;
} map_ent;

static int ent_cmp(const void *x, const void *y) {
    const map_ent *a = x, *b = y;
    size_t n = a->kn < b->kn ? a->kn : b->kn;
    int r = n ? memcmp(a->k, b->k, n) : 0;
    if (r) return r;
    if (a->kn != b->kn) return a->kn < b->kn ? -1 : 1;
    return a < b ? -1 : (a > b);   /* stable: keep iteration order on ties */
}

static bool format_string(fmt_ctx *f, abuf *b, const cel_value *v, int depth);

/* Formats v alone into a fresh arena string (map keys and values are formatted
 * separately so that entries can be sorted by their key text). */
static bool format_alone(fmt_ctx *f, const cel_value *v, int depth, const char **s, size_t *n) {
    abuf t;
    abuf_init(&t, f->c->arena, 16);
    if (!format_string(f, &t, v, depth)) return false;
    *s = t.p;
    *n = t.n;
    return true;
}

/* The %s clause (cel-go FormatString). */
static bool format_string(fmt_ctx *f, abuf *b, const cel_value *v, int depth) {
    if (depth > 100) {
        f->err = "format: value nests too deeply";
        return false;
    }
    if (!cel_call_work(f->c, sizeof(cel_value))) {
        f->err = CEL_COST_EXCEEDED_MSG;
        return false;
    }
    switch ((cel_kind)v->kind) {
    case CV_BOOL: abuf_adds(b, v->u.b ? "true" : "false"); return true;
    case CV_INT: abuf_addf(b, "%" PRId64, v->u.i); return true;
    case CV_UINT: abuf_addf(b, "%" PRIu64, v->u.u); return true;
    case CV_DOUBLE: add_double_shortest(b, v->u.d); return true;
    case CV_STRING:
    case CV_BYTES:
    case CV_TYPE: abuf_add(b, v->u.s, v->len); return true;
    case CV_NULL: abuf_adds(b, "null"); return true;
    case CV_TIMESTAMP:
    case CV_DURATION: {
        /* RFC 3339 in UTC / seconds with an "s", as cel-go's string() prints them */
        char t[64];
        if (v->kind == CV_TIMESTAMP) cel__format_timestamp(v->u.i, v->len, t, sizeof t);
        else cel__format_duration(v->u.i, v->len, t, sizeof t);
        abuf_adds(b, t);
        return true;
    }
    case CV_LIST: {
        const cel_list *l = v->u.list;
        abuf_addc(b, '[');
        for (uint32_t i = 0; i < l->n; i++) {
            if (i) abuf_adds(b, ", ");
            if (!format_string(f, b, &l->items[i], depth + 1)) return false;
        }
        abuf_addc(b, ']');
        return true;
    }
    case CV_MAP:
    case CV_DEVMAP:
    case CV_DEVDOMAIN: {
        const cel_map *m = v->kind == CV_MAP ? v->u.map : cel__devmap_materialize(f->c->arena, f->c->names, v);
        map_ent *ents = arena_alloc(f->c->arena, sizeof(map_ent) * (m->n ? m->n : 1));
        for (uint32_t i = 0; i < m->n; i++) {
            if (!format_alone(f, &m->keys[i], depth + 1, &ents[i].k, &ents[i].kn)) return false;
            if (!format_alone(f, &m->vals[i], depth + 1, &ents[i].v, &ents[i].vn)) return false;
        }
        if (m->n > 1) qsort(ents, m->n, sizeof(map_ent), ent_cmp);
        abuf_addc(b, '{');
        for (uint32_t i = 0; i < m->n; i++) {
            if (i) abuf_adds(b, ", ");
            abuf_add(b, ents[i].k, ents[i].kn);
            abuf_adds(b, ": ");
            abuf_add(b, ents[i].v, ents[i].vn);
        }
        abuf_addc(b, '}');
        return true;
    }
    default:
        return fmt_fail(f, "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
                           "types, durations, and timestamps", v);
    }
}

/* FMT_EXACT_DIGITS: past this many digits after the point, a double's exact decimal
 * expansion (which both glibc's printf and Go's strconv.FormatFloat print) has only
 * zeros: 2^-1074 has 1,074 fractional digits, and %e's 767 significant digits at
 * most are fewer. glibc spends about 40 ns per digit beyond it ("%.83333333f" took
 * 3.2 s, a fuzzer's find), so the rest is appended as zeros, the same text. */
#define FMT_EXACT_DIGITS 1100

/* The largest precision Go's fmt honours: its parsenum stops (as an overflow) when
 * the digits read so far, before another one, exceed 1e6; "10000009" is the last
 * number whose first seven digits do not. */
#define GO_FMT_PREC_MAX 10000009

static void format_fixed(abuf *b, char verb, int prec, double d) {
    int p = prec < FMT_EXACT_DIGITS ? prec : FMT_EXACT_DIGITS;
    size_t at = b->n;
    abuf_addf(b, verb == 'f' ? "%.*f" : "%.*e", p, d);
    if (p == prec) return;
    size_t pad = (size_t)(prec - p), tail = 0;
    if (verb == 'e') {   /* the zeros go before the exponent: 2.50…0e+00 */
        const char *ex = memchr(b->p + at, 'e', b->n - at);
        assert(ex);
        tail = b->n - (size_t)(ex - b->p);
    }
    abuf_reserve(b, pad);
    char *ins = b->p + b->n - tail;
    memmove(ins + pad, ins, tail);
    memset(ins, '0', pad);
    b->n += pad;
}

static bool format_clause(fmt_ctx *f, char verb, int64_t prec, const cel_value *v) {
    abuf *b = &f->out;
    switch (verb) {
    case 's': return format_string(f, b, v, 0);
    case 'd':
        if (v->kind == CV_INT || v->kind == CV_UINT || v->kind == CV_DOUBLE) return format_string(f, b, v, 0);
        return fmt_fail(f, "decimal clause can only be used on integers", v);
    case 'f':
    case 'e': {
        double d;
        if (v->kind == CV_DOUBLE) d = v->u.d;
        else if (v->kind == CV_INT) d = (double)v->u.i;
        else if (v->kind == CV_UINT) d = (double)v->u.u;
        else return fmt_fail(f, verb == 'f' ? "fixed-point clause can only be used on doubles"
                                            : "scientific clause can only be used on doubles", v);
        if (isnan(d) || isinf(d)) {
            add_double_shortest(b, d);
            return true;
        }
        if (prec > GO_FMT_PREC_MAX) {
            /* cel-go hands "%.<prec>f" to Go's fmt.Sprintf, whose parser gives up on a
             * number past a million (fmt/print.go parsenum, tooLarge): the rest of the
             * format is taken as read, and the value goes out as an unused operand */
            char g[64];
            cel__format_double(d, g, sizeof g);
            abuf_addf(b, "%%!(NOVERB)%%!(EXTRA float64=%s)", g);
            return true;
        }
        if (!cel_call_work(f->c, (uint64_t)prec)) {
            f->err = CEL_COST_EXCEEDED_MSG;
            return false;
        }
        format_fixed(b, verb, (int)prec, d);
        return true;
    }
    case 'b':
        if (v->kind == CV_BOOL) {
            abuf_addc(b, v->u.b ? '1' : '0');
            return true;
        }
        if (v->kind == CV_INT || v->kind == CV_UINT) {
            add_radix_value(b, v, 2, false);
            return true;
        }
        return fmt_fail(f, "only integers and bools can be formatted as binary", v);
    case 'o':
        if (v->kind == CV_INT || v->kind == CV_UINT) {
            add_radix_value(b, v, 8, false);
            return true;
        }
        return fmt_fail(f, "octal clause can only be used on integers", v);
    case 'x':
    case 'X': {
        bool up = verb == 'X';
        if (v->kind == CV_INT || v->kind == CV_UINT) {
            add_radix_value(b, v, 16, up);
            return true;
        }
        if (v->kind == CV_STRING || v->kind == CV_BYTES) {
            const char *dig = up ? "0123456789ABCDEF" : "0123456789abcdef";
            abuf_reserve(b, (size_t)v->len * 2);
            for (uint32_t i = 0; i < v->len; i++) {
                unsigned char ch = (unsigned char)v->u.s[i];
                b->p[b->n++] = dig[ch >> 4];
                b->p[b->n++] = dig[ch & 15];
            }
            return true;
        }
        return fmt_fail(f, "only integers, byte buffers, and strings can be formatted as hex", v);
    }
    default: return false;
    }
}

/* The clause syntax at s[i] == '%' (not "%%"): sets *verb, *prec and *end (the
 * index after the clause); on a syntax error returns the error text (arena). */
static const char *parse_clause(arena *a, const char *s, size_t len, size_t i, char *verb, int64_t *prec,
                                size_t *end) {
    size_t j = i + 1;
    *prec = 6;
    if (s[j] == '.') {
        j++;
        size_t d0 = j;
        uint64_t v = 0;
        bool range = true;   /* strconv.Atoi on a 64-bit int: leading zeros are fine */
        for (;;) {
            if (j >= len)
                return "could not parse formatting clause: error while parsing precision: could not find end of "
                       "precision specifier";
            if (s[j] < '0' || s[j] > '9') break;
            if (range) {
                v = v * 10 + (uint64_t)(s[j] - '0');
                range = v <= INT64_MAX;
            }
            j++;
        }
        if (j == d0 || !range)
            return arena_printf(a,
                                "could not parse formatting clause: error while parsing precision: error while "
                                "converting precision to integer: strconv.Atoi: parsing \"%.*s\": %s",
                                (int)(j - d0), s + d0, j == d0 ? "invalid syntax" : "value out of range");
        *prec = (int64_t)v;
    }
    *verb = s[j];
    switch (*verb) {
    case 's': case 'd': case 'f': case 'e': case 'b': case 'x': case 'X': case 'o': break;
    default: {
        /* Go prints the byte as a rune (%c of rune(formatStr[i])) */
        char tmp[4];
        size_t w = lib_utf8_encode((unsigned char)*verb, tmp);
        return arena_printf(a, "could not parse formatting clause: unrecognized formatting clause \"%.*s\"", (int)w,
                            tmp);
    }
    }
    *end = j + 1;
    return NULL;
}

/* cel-go parseFormatString. */
static cel_value str_format(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const char *s = a[0].u.s;
    size_t len = a[0].len;
    const cel_list *args = a[1].u.list;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));   /* cel-go ExtFormatString: the format string */
    fmt_ctx f = {.c = c};
    abuf_init(&f.out, c->arena, len + 16);
    size_t i = 0;
    uint32_t argi = 0;
    while (i < len) {
        if (s[i] != '%') {
            abuf_addc(&f.out, s[i++]);
            continue;
        }
        if (i + 1 < len && s[i + 1] == '%') {
            abuf_addc(&f.out, '%');
            i += 2;
            continue;
        }
        if (argi >= args->n) return cel__call_error(c, "index %u out of range", argi);
        if (i + 1 >= len) return cel__call_error(c, "unexpected end of string");
        /* set by parse_clause on success; initialised because GCC's -O2 flow analysis
         * cannot see that (-Wmaybe-uninitialized with -Werror in Release) */
        char verb = 0;
        int64_t prec = 0;
        size_t end = i;
        const char *perr = parse_clause(c->arena, s, len, i, &verb, &prec, &end);
        if (perr) return cel_error_static(perr);
        if (!format_clause(&f, verb, prec, &args->items[argi])) {
            if (!strcmp(f.err, CEL_COST_EXCEEDED_MSG)) return cel__cost_exceeded();
            return cel__call_error(c, "error during formatting: %s", f.err);
        }
        i = end;
        argi++;
    }
    if (!cel_call_work(c, f.out.n)) return cel__cost_exceeded();
    return abuf_string(&f.out);
}

/* cel-go's string.format validator, the part that does not need static types: a
 * constant format string with a bad clause, too few or too many arguments in a
 * constant list, is a compile error. (Argument types are checked when formatting.) */
static bool format_prepare(const cel_value *args, const bool *is_const, uint32_t nargs, void **out, err *e) {
    *out = NULL;
    /* like cel-go, only a literal format string with a literal list is checked */
    if (nargs < 2 || !is_const[0] || args[0].kind != CV_STRING || !is_const[1] || args[1].kind != CV_LIST) return true;
    const bool have_list = true;
    const char *s = args[0].u.s;
    size_t len = args[0].len, i = 0;
    uint32_t clauses = 0;
    arena tmp;
    arena_init(&tmp, 512);
    bool ok = true;
    while (i < len && ok) {
        if (s[i] != '%') {
            i++;
            continue;
        }
        if (i + 1 < len && s[i + 1] == '%') {
            i += 2;
            continue;
        }
        if (have_list && clauses >= args[1].u.list->n) {
            err_set(e, "index %u out of range", clauses);
            ok = false;
            break;
        }
        if (i + 1 >= len) {
            err_set(e, "unexpected end of string");
            ok = false;
            break;
        }
        /* set by parse_clause on success; initialised because GCC's -O2 flow analysis
         * cannot see that (-Wmaybe-uninitialized with -Werror in Release) */
        char verb = 0;
        int64_t prec = 0;
        size_t end = i;
        const char *perr = parse_clause(&tmp, s, len, i, &verb, &prec, &end);
        if (perr) {
            err_set(e, "%s", perr);
            ok = false;
            break;
        }
        clauses++;
        i = end;
    }
    if (ok && have_list && args[1].u.list->n > clauses) {
        err_set(e, "too many arguments supplied to string.format (expected %u, got %u)", clauses, args[1].u.list->n);
        ok = false;
    }
    arena_free(&tmp);
    return ok;
}

/* ---- the library ------------------------------------------------------------------- */

#define R CEL_RECEIVER
#define G CEL_GLOBAL
#define F CEL_FN_FOLD

static const cel_overload strings_overloads[] = {
    {"charAt", "string_char_at_int", R, 2, F, {"string", "int"}, "string", str_char_at, 1, NULL, NULL},
    {"indexOf", "string_index_of_string", R, 2, F, {"string", "string"}, "int", str_index_of, 1, NULL, NULL},
    {"indexOf", "string_index_of_string_int", R, 3, F, {"string", "string", "int"}, "int", str_index_of, 1, NULL, NULL},
    {"lastIndexOf", "string_last_index_of_string", R, 2, F, {"string", "string"}, "int", str_last_index_of, 1, NULL, NULL},
    {"lastIndexOf", "string_last_index_of_string_int", R, 3, F, {"string", "string", "int"}, "int", str_last_index_of, 1,
     NULL, NULL},
    {"lowerAscii", "string_lower_ascii", R, 1, F, {"string"}, "string", str_lower, 1, NULL, NULL},
    {"upperAscii", "string_upper_ascii", R, 1, F, {"string"}, "string", str_upper, 1, NULL, NULL},
    {"replace", "string_replace_string_string", R, 3, F, {"string", "string", "string"}, "string", str_replace, 1, NULL,
     NULL},
    {"replace", "string_replace_string_string_int", R, 4, F, {"string", "string", "string", "int"}, "string",
     str_replace, 1, NULL, NULL},
    {"split", "string_split_string", R, 2, F, {"string", "string"}, "list(string)", str_split, 1, NULL, NULL},
    {"split", "string_split_string_int", R, 3, F, {"string", "string", "int"}, "list(string)", str_split, 1, NULL,
     NULL},
    {"substring", "string_substring_int", R, 2, F, {"string", "int"}, "string", str_substring, 1, NULL, NULL},
    {"substring", "string_substring_int_int", R, 3, F, {"string", "int", "int"}, "string", str_substring, 1, NULL,
     NULL},
    {"trim", "string_trim", R, 1, F, {"string"}, "string", str_trim, 1, NULL, NULL},
    {"join", "list_join", R, 1, F, {"list(string)"}, "string", list_join, 1, NULL, NULL},
    {"join", "list_join_string", R, 2, F, {"list(string)", "string"}, "string", list_join, 1, NULL, NULL},
    {"format", "string_format", R, 2, F | CEL_FN_MIXED_LITERALS, {"string", "list(dyn)"}, "string", str_format, 1,
     format_prepare, NULL},
    {"strings.quote", "strings_quote", G, 1, F, {"string"}, "string", strings_quote, 1, NULL, NULL},
};

const cel_library cel_lib_strings = {"strings", strings_overloads, ARRAY_SIZE(strings_overloads)};
