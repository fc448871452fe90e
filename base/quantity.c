/* quantity.c — Kubernetes resource.Quantity in C: the apimachinery scanner and
 * suffix table, the int64 fast path and the inf.Dec slow path of ParseQuantity
 * (with nano round-up in magnitude and the 2^63-1 cap for BinarySI), exact
 * comparison and arithmetic on mant × 10^exp with a 128-bit mantissa, and
 * canonical printing as CanonicalizeBytes does it.
 *
 * The value is always exact; the representation follows Kubernetes where it can
 * (fast path: the digits as written and their scale; slow path: a mantissa at
 * scale 10^-9), because AsApproximateFloat64 and AsInt64 observe it. Intermediate
 * steps that do not fit 128 bits (binary suffixes on long fractions, exact
 * division) use `qbig`, a small fixed-size natural number on the stack. */
#include "base/quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
typedef __int128 i128;

/* Magnitudes stay within 2^127-1 so that negation never overflows. */
#define QTY_MANT_MAX (((u128)1 << 127) - 1)

static const char QTY_ERR_FORMAT[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
static const char QTY_ERR_NUMERIC[] = "unable to parse numeric part of quantity";
static const char QTY_ERR_SUFFIX[] = "unable to parse quantity's suffix";
/* Not a Kubernetes text: Kubernetes has arbitrary precision; we stop at 128 bits. */
static const char QTY_ERR_RANGE[] = "quantity out of range: more than 38 significant digits";

static const u128 POW10[39] = {
    (u128)1ULL,
    (u128)10ULL,
    (u128)100ULL,
    (u128)1000ULL,
    (u128)10000ULL,
    (u128)100000ULL,
    (u128)1000000ULL,
    (u128)10000000ULL,
    (u128)100000000ULL,
    (u128)1000000000ULL,
    (u128)10000000000ULL,
    (u128)100000000000ULL,
    (u128)1000000000000ULL,
    (u128)10000000000000ULL,
    (u128)100000000000000ULL,
    (u128)1000000000000000ULL,
    (u128)10000000000000000ULL,
    (u128)100000000000000000ULL,
    (u128)1000000000000000000ULL,
    (u128)10000000000000000000ULL,
    (u128)10000000000000000000ULL * 10ULL,
    (u128)10000000000000000000ULL * 100ULL,
    (u128)10000000000000000000ULL * 1000ULL,
    (u128)10000000000000000000ULL * 10000ULL,
    (u128)10000000000000000000ULL * 100000ULL,
    (u128)10000000000000000000ULL * 1000000ULL,
    (u128)10000000000000000000ULL * 10000000ULL,
    (u128)10000000000000000000ULL * 100000000ULL,
    (u128)10000000000000000000ULL * 1000000000ULL,
    (u128)10000000000000000000ULL * 10000000000ULL,
    (u128)10000000000000000000ULL * 100000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000ULL,
    (u128)10000000000000000000ULL * 100000000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000000ULL,
    (u128)10000000000000000000ULL * 100000000000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000000000ULL,
};

/* ---- small helpers ------------------------------------------------------- */

static bool qty_fail(err *e, const char *msg) {
    err_set(e, "%s", msg);
    return false;
}

static inline bool qty_isdigit(char c) { return c >= '0' && c <= '9'; }

/* |v| without the undefined negation of the most negative value. */
static inline u128 qty_uabs(i128 v) { return v < 0 ? (u128)0 - (u128)v : (u128)v; }

/* Two's-complement wrap to int32, as Go's int32(x) conversion does. */
static inline int32_t qty_wrap32(int64_t v) {
    uint32_t u = (uint32_t)(uint64_t)v;
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(int64_t)((int64_t)u - 4294967296LL);
}

static int qty_ndigits(u128 v) {
    int d = 1;
    while (d < 39 && v >= POW10[d]) d++;
    return d;
}

/* m × 10^k within QTY_MANT_MAX. */
static bool qty_mul_pow10(u128 m, int64_t k, u128 *out) {
    if (m == 0) { *out = 0; return true; }
    if (k < 0 || k > 38) return false;
    if (m > QTY_MANT_MAX / POW10[k]) return false;
    *out = m * POW10[k];
    return true;
}

static bool qty_fits64(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

/* ---- qbig: a fixed-size natural number for the few steps beyond 128 bits -- */

#define QB_LIMBS 24 /* 768 bits: enough for every use below, which bound their inputs */

typedef struct qbig {
    uint32_t l[QB_LIMBS]; /* little-endian 32-bit limbs */
    int n;                /* limbs in use; the top one is non-zero */
} qbig;

static void qb_set(qbig *b, u128 v) {
    b->n = 0;
    while (v) {
        b->l[b->n++] = (uint32_t)v;
        v >>= 32;
    }
}

/* Appends c, the carry out of the top limb, as a new limb when it is not zero;
 * false when b has no room for it. The common end of qb_mul and qb_add. */
static bool qb_carry_out(qbig *b, uint64_t c) {
    if (!c) return true;
    if (b->n == QB_LIMBS) return false;
    b->l[b->n++] = (uint32_t)c;
    return true;
}

static bool qb_mul(qbig *b, uint32_t m) {
    if (m == 0) { b->n = 0; return true; }
    uint64_t c = 0;
    for (int i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->l[i] * m + c;
        b->l[i] = (uint32_t)t;
        c = t >> 32;
    }
    return qb_carry_out(b, c);
}

static bool qb_add(qbig *b, uint32_t a) {
    uint64_t c = a;
    for (int i = 0; i < b->n && c; i++) {
        uint64_t t = (uint64_t)b->l[i] + c;
        b->l[i] = (uint32_t)t;
        c = t >> 32;
    }
    return qb_carry_out(b, c);
}

/* b /= d, returns the remainder. */
static uint32_t qb_div(qbig *b, uint32_t d) {
    uint64_t r = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        uint64_t cur = (r << 32) | b->l[i];
        b->l[i] = (uint32_t)(cur / d);
        r = cur % d;
    }
    while (b->n && b->l[b->n - 1] == 0) b->n--;
    return (uint32_t)r;
}

static bool qb_mul_pow10(qbig *b, int64_t k) {
    for (; k >= 9; k -= 9)
        if (!qb_mul(b, 1000000000u)) return false;
    return qb_mul(b, (uint32_t)POW10[k]);
}

/* b /= 10^k; returns whether anything non-zero was divided away. */
static bool qb_div_pow10(qbig *b, int64_t k) {
    bool rem = false;
    for (; k >= 9; k -= 9) rem |= qb_div(b, 1000000000u) != 0;
    if (k) rem |= qb_div(b, (uint32_t)POW10[k]) != 0;
    return rem;
}

static int qb_bitlen(const qbig *b) {
    if (b->n == 0) return 0;
    return (b->n - 1) * 32 + (32 - __builtin_clz(b->l[b->n - 1]));
}

static bool qb_shl(qbig *b, unsigned s) {
    if (b->n == 0) return true;
    if ((unsigned)qb_bitlen(b) + s > 32u * QB_LIMBS) return false;
    unsigned w = s / 32, r = s % 32;
    uint32_t out[QB_LIMBS] = {0};
    for (int i = 0; i < b->n; i++) {
        uint64_t v = (uint64_t)b->l[i] << r;
        out[(unsigned)i + w] |= (uint32_t)v;
        if ((unsigned)i + w + 1 < QB_LIMBS) out[(unsigned)i + w + 1] |= (uint32_t)(v >> 32);
    }
    memcpy(b->l, out, sizeof out);
    b->n = QB_LIMBS;
    while (b->n && b->l[b->n - 1] == 0) b->n--;
    return true;
}

static void qb_shr1(qbig *b) {
    for (int i = 0; i < b->n; i++) {
        b->l[i] >>= 1;
        if (i + 1 < b->n) b->l[i] |= b->l[i + 1] << 31;
    }
    while (b->n && b->l[b->n - 1] == 0) b->n--;
}

static int qb_cmp(const qbig *a, const qbig *b) {
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->l[i] != b->l[i]) return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

/* a -= b, requires a >= b. */
static void qb_sub(qbig *a, const qbig *b) {
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->l[i] - (i < b->n ? (int64_t)b->l[i] : 0) - borrow;
        borrow = t < 0;
        a->l[i] = (uint32_t)(t + (borrow ? (int64_t)1 << 32 : 0));
    }
    while (a->n && a->l[a->n - 1] == 0) a->n--;
}

static bool qb_get(const qbig *b, u128 *v) {
    if (b->n > 4) return false;
    u128 r = 0;
    for (int i = b->n - 1; i >= 0; i--) r = (r << 32) | b->l[i];
    *v = r;
    return true;
}

/* Quotient N / D (N keeps the remainder); false when the quotient needs 64+ bits. */
static bool qb_divq64(qbig *N, const qbig *D, uint64_t *q) {
    qbig t = *D;
    if (qb_shl(&t, 64) && qb_cmp(N, &t) >= 0) return false;
    t = *D;
    if (!qb_shl(&t, 63)) return false;
    uint64_t r = 0;
    for (int bit = 63; bit >= 0; bit--) {
        if (qb_cmp(N, &t) >= 0) {
            qb_sub(N, &t);
            r |= (uint64_t)1 << bit;
        }
        qb_shr1(&t);
    }
    *q = r;
    return true;
}

/* Decimal digits of b into out (no sign); returns the length. b is consumed. */
static size_t qb_str(qbig *b, char *out) {
    char rev[QB_LIMBS * 10 + 2];
    size_t n = 0;
    if (b->n == 0) rev[n++] = '0';
    while (b->n) {
        uint32_t chunk = qb_div(b, 1000000000u);
        for (int i = 0; i < 9; i++) {
            rev[n++] = (char)('0' + chunk % 10);
            chunk /= 10;
            if (b->n == 0 && chunk == 0) break;
        }
    }
    for (size_t i = 0; i < n; i++) out[i] = rev[n - 1 - i];
    return n;
}

static size_t qty_u128_str(u128 v, char *out) {
    char rev[48];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) out[i] = rev[n - 1 - i];
    return n;
}

/* ---- suffixes (suffix.go) ------------------------------------------------ */

typedef struct qty_suffix {
    int base;       /* 10 or 2 */
    int32_t exp;    /* power of the base */
    quantity_fmt fmt;
} qty_suffix;

/* Go's strconv.ParseInt(s, 10, 64): optional sign, at least one digit, no overflow. */
static bool qty_go_parse_int64(const char *s, size_t n, int64_t *out) {
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (!qty_isdigit(s[i])) return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static bool qty_suffix_interpret(const char *s, size_t n, qty_suffix *o) {
    if (n == 0) { *o = (qty_suffix){10, 0, QTY_DECIMAL_SI}; return true; }
    if (n == 1) {
        int32_t x;
        switch (s[0]) {
        case 'n': x = -9; break;
        case 'u': x = -6; break;
        case 'm': x = -3; break;
        case 'k': x = 3; break;
        case 'M': x = 6; break;
        case 'G': x = 9; break;
        case 'T': x = 12; break;
        case 'P': x = 15; break;
        case 'E': x = 18; break;
        default: return false;
        }
        *o = (qty_suffix){10, x, QTY_DECIMAL_SI};
        return true;
    }
    if (n == 2 && s[1] == 'i') {
        static const char letters[] = "KMGTPE";
        const char *p = memchr(letters, s[0], 6);
        if (p) {
            *o = (qty_suffix){2, (int32_t)(10 * (p - letters + 1)), QTY_BINARY_SI};
            return true;
        }
    }
    if (s[0] == 'e' || s[0] == 'E') {
        int64_t v;
        if (!qty_go_parse_int64(s + 1, n - 1, &v)) return false;
        /* Kubernetes narrows the parsed exponent with int32(), wrapping. */
        *o = (qty_suffix){10, qty_wrap32(v), QTY_DECIMAL_EXPONENT};
        return true;
    }
    return false;
}

/* ---- parsing ------------------------------------------------------------- */

/* The digits of the number: num (leading zeros stripped) then denom. */
typedef struct qty_digits {
    const char *num, *den;
    size_t num_len, den_len;
} qty_digits;

static inline char qty_digit_at(const qty_digits *d, size_t i) {
    return i < d->num_len ? d->num[i] : d->den[i - d->num_len];
}

/* The slow path (Kubernetes' inf.Dec branch): value = D × 10^E (× 2^bits), rounded
 * up in magnitude to 10^-9, BinarySI capped at 2^63-1. */
static bool qty_parse_slow(const qty_digits *dg, int64_t E, const qty_suffix *sx, bool positive,
                           quantity *out, err *e) {
    size_t total = dg->num_len + dg->den_len, z = 0;
    while (z < total && qty_digit_at(dg, z) == '0') z++;
    size_t L = total - z; /* significant digits */
    quantity q = {.mant = 0, .exp = 0, .format = (uint8_t)sx->fmt, .big = 1};

    if (L == 0) {
        /* zero: not rounded; keep a scale only when it is harmless */
        q.exp = (E >= INT32_MIN && E <= INT32_MAX) ? (int32_t)E : 0;
        *out = q;
        return true;
    }

    if (sx->base == 10) {
        if (E >= -9) {
            size_t last = total;
            while (qty_digit_at(dg, last - 1) == '0') last--;
            size_t sig = last - z;
            int64_t ee = E + (int64_t)(total - last);
            if (sig > 39) return qty_fail(e, QTY_ERR_RANGE);
            u128 m = 0;
            for (size_t i = z; i < last; i++) {
                unsigned d = (unsigned)(qty_digit_at(dg, i) - '0');
                if (m > (QTY_MANT_MAX - d) / 10) return qty_fail(e, QTY_ERR_RANGE);
                m = m * 10 + d;
            }
            u128 m9;
            if (qty_mul_pow10(m, ee + 9, &m9)) {
                q.mant = (i128)m9;
                q.exp = -9;
            } else {
                if (ee > INT32_MAX) return qty_fail(e, QTY_ERR_RANGE);
                q.mant = (i128)m;
                q.exp = (int32_t)ee;
            }
        } else {
            /* digits below 10^-9 only decide whether to round up */
            uint64_t k = (uint64_t)(-9 - E);
            u128 hi = 0;
            bool sticky = false;
            size_t keep = (uint64_t)L > k ? L - (size_t)k : 0;
            if (keep > 39) return qty_fail(e, QTY_ERR_RANGE);
            for (size_t i = 0; i < L; i++) {
                char c = qty_digit_at(dg, z + i);
                if (i < keep) {
                    unsigned d = (unsigned)(c - '0');
                    if (hi > (QTY_MANT_MAX - d) / 10) return qty_fail(e, QTY_ERR_RANGE);
                    hi = hi * 10 + d;
                } else if (c != '0') {
                    sticky = true;
                    break;
                }
            }
            if (sticky) {
                if (hi == QTY_MANT_MAX) return qty_fail(e, QTY_ERR_RANGE);
                hi++;
            }
            q.mant = (i128)hi;
            q.exp = -9;
        }
    } else {
        /* BinarySI: E = -len(denom) <= 0, bits = sx->exp in 10..60. A value of
         * 10^19 or more is certainly above the cap. */
        const u128 cap = (u128)INT64_MAX * 1000000000u; /* (2^63-1) at scale 10^-9 */
        bool capped = (int64_t)L + E >= 20;
        u128 N = 0;
        if (!capped) {
            /* Keep 64 digits below the nano position (>= 60 bits of shift, which
             * makes the dropped tail act only as a round-up flag), the rest sticky. */
            enum { KEEP_BELOW = 64 };
            int64_t k = -9 - E; /* digits below 10^-9 */
            size_t use = L;
            bool sticky = false;
            if (k > KEEP_BELOW) {
                uint64_t drop = (uint64_t)(k - KEEP_BELOW);
                use = (uint64_t)L > drop ? L - (size_t)drop : 0;
                for (size_t i = use; i < L && !sticky; i++) sticky = qty_digit_at(dg, z + i) != '0';
                k = KEEP_BELOW;
            }
            qbig X;
            qb_set(&X, 0);
            for (size_t i = 0; i < use; i++) {
                qb_mul(&X, 10);
                qb_add(&X, (uint32_t)(qty_digit_at(dg, z + i) - '0'));
            }
            qb_shl(&X, (unsigned)sx->exp);
            bool rem = false;
            if (k <= 0) qb_mul_pow10(&X, -k);
            else rem = qb_div_pow10(&X, k);
            if (rem || sticky) qb_add(&X, 1);
            if (!qb_get(&X, &N) || N > cap) capped = true;
        }
        if (capped) {
            q.mant = INT64_MAX;
            q.exp = 0;
        } else {
            q.mant = (i128)N;
            q.exp = -9;
            /* 0 < value < 1: Kubernetes switches to DecimalSI "to avoid rounding" */
            if (N < 1000000000u) q.format = QTY_DECIMAL_SI;
        }
    }
    if (!positive) q.mant = -q.mant;
    *out = q;
    return true;
}

bool quantity_parse(const char *s, size_t n, quantity *out, err *e) {
    if (n == 0 || n > INT32_MAX) return qty_fail(e, QTY_ERR_FORMAT);
    if (n == 1 && s[0] == '0') {
        *out = (quantity){.mant = 0, .exp = 0, .format = QTY_DECIMAL_SI, .big = 0};
        return true;
    }

    /* The scanner (parseQuantityString): sign, leading zeros, numerator,
     * optional '.' and denominator, then a suffix of [eEinumkKMGTP]* [+-]? [0-9]*. */
    bool positive = true, has_digits = false;
    size_t pos = 0;
    if (s[0] == '-') { positive = false; pos++; }
    else if (s[0] == '+') pos++;
    qty_digits dg = {.num = "0", .den = "", .num_len = 1, .den_len = 0};
    const char *suf = s + n;
    size_t suf_len = 0;

    size_t zs = pos;
    while (pos < n && s[pos] == '0') pos++;
    has_digits = pos > zs;
    if (pos >= n) { has_digits = true; goto interpret; } /* Kubernetes: num = value = "0" */

    size_t ns = pos;
    while (pos < n && qty_isdigit(s[pos])) pos++;
    if (pos > ns) {
        dg.num = s + ns;
        dg.num_len = pos - ns;
        has_digits = true;
    }
    if (pos >= n) goto interpret;

    if (s[pos] == '.') {
        size_t ds = ++pos;
        while (pos < n && qty_isdigit(s[pos])) pos++;
        dg.den = s + ds;
        dg.den_len = pos - ds;
        if (dg.den_len) has_digits = true;
        if (pos >= n) goto interpret;
    }

    size_t ss = pos;
    while (pos < n && memchr("eEinumkKMGTP", s[pos], 12)) pos++;
    if (pos < n) {
        if (s[pos] == '-' || s[pos] == '+') pos++;
        while (pos < n && qty_isdigit(s[pos])) pos++;
        if (pos < n) return qty_fail(e, QTY_ERR_FORMAT);
    }
    suf = s + ss;
    suf_len = n - ss;

interpret:;
    qty_suffix sx;
    if (!qty_suffix_interpret(suf, suf_len, &sx)) return qty_fail(e, QTY_ERR_SUFFIX);

    /* Fast path: the digits fit int64 and the scale is at least nano, so the value
     * is exact as written (Kubernetes keeps int64Amount{digits, scale}). */
    int64_t ndig = (int64_t)(dg.num_len + dg.den_len);
    if (sx.base == 10) {
        if (18 - ndig >= 0) {
            int32_t scale = qty_wrap32((int64_t)sx.exp - (int64_t)qty_wrap32((int64_t)dg.den_len));
            if (scale >= -9) {
                int64_t v = 0;
                for (int64_t i = 0; i < ndig; i++) v = v * 10 + (qty_digit_at(&dg, (size_t)i) - '0');
                *out = (quantity){.mant = positive ? v : -v, .exp = scale, .format = (uint8_t)sx.fmt, .big = 0};
                return true;
            }
        }
    } else if (dg.den_len == 0) {
        int64_t precision = 15 - (int64_t)dg.num_len - (int64_t)sx.exp * 3 / 10 - 1;
        if (precision >= 0) {
            int64_t v = 0, r;
            for (size_t i = 0; i < dg.num_len; i++) v = v * 10 + (dg.num[i] - '0');
            if (!__builtin_mul_overflow(v, (int64_t)1 << sx.exp, &r)) {
                *out = (quantity){.mant = positive ? r : -r, .exp = 0, .format = QTY_BINARY_SI, .big = 0};
                return true;
            }
        }
    }

    /* Slow path: inf.Dec's SetString needs at least one digit in the number text. */
    if (!has_digits) return qty_fail(e, QTY_ERR_NUMERIC);
    int64_t E;
    if (sx.base == 10) {
        /* inf scale = int32(len(denom)) + int32(-exponent), all in wrapping int32 */
        int32_t inf_scale = qty_wrap32((int64_t)qty_wrap32((int64_t)dg.den_len) +
                                       (int64_t)qty_wrap32(-(int64_t)sx.exp));
        E = -(int64_t)inf_scale;
    } else {
        E = -(int64_t)dg.den_len;
    }
    return qty_parse_slow(&dg, E, &sx, positive, out, e);
}

quantity quantity_must(const char *s) {
    quantity q;
    err e;
    err_clear(&e);
    if (!quantity_parse(s, strlen(s), &q, &e)) {
        fprintf(stderr, "quantity_must(\"%s\"): %s\n", s, e.msg);
        abort();
    }
    return q;
}

quantity quantity_from_int(int64_t v, quantity_fmt f) {
    return (quantity){.mant = v, .exp = 0, .format = (uint8_t)f, .big = 0};
}

/* ---- comparison ---------------------------------------------------------- */

int quantity_sign(const quantity *q) { return q->mant < 0 ? -1 : q->mant > 0; }
bool quantity_is_zero(const quantity *q) { return q->mant == 0; }

/* Compares ma × 10^ea with mb × 10^eb, both magnitudes non-zero. */
static int qty_cmp_mag(u128 ma, int64_t ea, u128 mb, int64_t eb) {
    if (ea == eb) return ma < mb ? -1 : ma > mb;
    /* the common case: both mantissas within 64 bits and scales at most 10^18
     * apart, so aligning them cannot overflow 128 bits */
    if ((ma >> 64) == 0 && (mb >> 64) == 0 && ea - eb <= 18 && eb - ea <= 18) {
        if (ea > eb) ma *= POW10[ea - eb];
        else mb *= POW10[eb - ea];
        return ma < mb ? -1 : ma > mb;
    }
    int64_t la = qty_ndigits(ma) + ea, lb = qty_ndigits(mb) + eb;
    if (la != lb) return la < lb ? -1 : 1;
    /* same order of magnitude, so |ea - eb| <= 38: divide the finer one down */
    if (ea > eb) {
        u128 p = POW10[ea - eb], qt = mb / p, r = mb % p;
        if (ma != qt) return ma < qt ? -1 : 1;
        return r ? -1 : 0;
    }
    u128 p = POW10[eb - ea], qt = ma / p, r = ma % p;
    if (qt != mb) return qt < mb ? -1 : 1;
    return r ? 1 : 0;
}

int quantity_cmp(const quantity *a, const quantity *b) {
    int sa = quantity_sign(a), sb = quantity_sign(b);
    if (sa != sb) return sa < sb ? -1 : 1;
    if (sa == 0) return 0;
    int c = qty_cmp_mag(qty_uabs(a->mant), a->exp, qty_uabs(b->mant), b->exp);
    return sa > 0 ? c : -c;
}

/* ---- arithmetic ---------------------------------------------------------- */

/* v × 10^k fits int64 (Kubernetes' positiveScaleInt64). */
static bool qty_scale64_ok(int64_t v, int64_t k) {
    if (v == 0) return true;
    if (k > 18) return false;
    int64_t r;
    return !__builtin_mul_overflow(v, (int64_t)POW10[k], &r);
}

/* Would Kubernetes' int64Amount.Add succeed (and so stay off inf.Dec)? */
static bool qty_int64_add_ok(i128 av, int64_t as, i128 bv, int64_t bs) {
    if (!qty_fits64(av) || !qty_fits64(bv)) return false;
    int64_t a = (int64_t)av, b = (int64_t)bv, c;
    if (a == 0 || b == 0) return true;
    if (as == bs) return !__builtin_add_overflow(a, b, &c);
    if (as > bs) {
        if (!qty_scale64_ok(a, as - bs)) return false;
        return !__builtin_add_overflow(a * (int64_t)POW10[as - bs], b, &c);
    }
    if (!qty_scale64_ok(b, bs - as)) return false;
    return !__builtin_add_overflow(a, b * (int64_t)POW10[bs - as], &c);
}

static bool qty_add_signed(const quantity *a, i128 bm, int32_t be, uint8_t bfmt, bool bbig, bool b_was_min64,
                           quantity *out) {
    quantity r;
    /* Kubernetes: a zero receiver takes the other operand's format */
    r.format = a->mant == 0 ? bfmt : a->format;
    r.big = a->big || bbig || b_was_min64 || !qty_int64_add_ok(a->mant, a->exp, bm, be);
    if (bm == 0) {
        r.mant = a->mant;
        r.exp = a->exp;
    } else if (a->mant == 0) {
        r.mant = bm;
        r.exp = be;
    } else {
        i128 x = a->mant, y = bm;
        int32_t ex = a->exp;
        if (a->exp > be) {
            u128 m;
            if (!qty_mul_pow10(qty_uabs(x), (int64_t)a->exp - be, &m)) return false;
            x = x < 0 ? -(i128)m : (i128)m;
            ex = be;
        } else if (be > a->exp) {
            u128 m;
            if (!qty_mul_pow10(qty_uabs(y), (int64_t)be - a->exp, &m)) return false;
            y = y < 0 ? -(i128)m : (i128)m;
        }
        i128 s;
        if (__builtin_add_overflow(x, y, &s) || qty_uabs(s) > QTY_MANT_MAX) return false;
        r.mant = s;
        r.exp = ex;
    }
    *out = r;
    return true;
}

bool quantity_add(const quantity *a, const quantity *b, quantity *out) {
    if (qty_uabs(a->mant) > QTY_MANT_MAX || qty_uabs(b->mant) > QTY_MANT_MAX) return false;
    return qty_add_signed(a, b->mant, b->exp, b->format, b->big, false, out);
}

bool quantity_sub(const quantity *a, const quantity *b, quantity *out) {
    if (qty_uabs(a->mant) > QTY_MANT_MAX || qty_uabs(b->mant) > QTY_MANT_MAX) return false;
    /* -mostNegative does not fit int64: Kubernetes moves to inf.Dec */
    bool min64 = !b->big && b->mant == INT64_MIN;
    return qty_add_signed(a, -b->mant, b->exp, b->format, b->big, min64, out);
}

bool quantity_mul_int(const quantity *a, int64_t k, quantity *out) {
    if (qty_uabs(a->mant) > QTY_MANT_MAX) return false;
    quantity r = *a;
    if (a->mant == 0) { *out = r; return true; }
    /* Kubernetes' int64Amount.Mul, to know whether the result leaves the int64 form */
    bool int_ok = false;
    if (!a->big && k == 0) {
        int_ok = true;
    } else if (!a->big && qty_fits64(a->mant)) {
        int64_t c;
        if (!__builtin_mul_overflow((int64_t)a->mant, k, &c)) {
            if (a->exp == 0) int_ok = true;
            else if (a->exp > 0) int_ok = qty_scale64_ok(c, a->exp);
            else int_ok = -(int64_t)a->exp <= 18 && c % (int64_t)POW10[-(int64_t)a->exp] == 0;
        }
    }
    i128 m;
    if (__builtin_mul_overflow(a->mant, (i128)k, &m) || qty_uabs(m) > QTY_MANT_MAX) return false;
    r.mant = m;
    if (k == 0 && int_ok) r.exp = 0;
    r.big = !int_ok;
    *out = r;
    return true;
}

bool quantity_div_ceil(const quantity *a, const quantity *b, int64_t *out) {
    if (b->mant <= 0) return false;
    if (a->mant == 0) { *out = 0; return true; }
    bool neg = a->mant < 0;
    u128 ma = qty_uabs(a->mant), mb = qty_uabs(b->mant);
    int64_t d = (int64_t)a->exp - b->exp;
    uint64_t q;
    bool rem;
    if (d >= 58) return false; /* |a/b| >= 10^58 / 2^128 > 2^63 */
    if (d <= -40) {            /* 0 < |a/b| < 1 */
        q = 0;
        rem = true;
    } else if (d >= 0 && d <= 38 && ma <= ~(u128)0 / POW10[d]) {
        u128 N = ma * POW10[d], qq = N / mb;
        if (qq > UINT64_MAX) return false;
        q = (uint64_t)qq;
        rem = N % mb != 0;
    } else if (d < 0 && -d <= 38 && mb <= ~(u128)0 / POW10[-d]) {
        u128 D = mb * POW10[-d], qq = ma / D;
        if (qq > UINT64_MAX) return false;
        q = (uint64_t)qq;
        rem = ma % D != 0;
    } else {
        qbig N, D;
        qb_set(&N, ma);
        qb_set(&D, mb);
        if (d > 0) qb_mul_pow10(&N, d);
        else qb_mul_pow10(&D, -d);
        if (!qb_divq64(&N, &D, &q)) return false;
        rem = N.n != 0;
    }
    if (!neg) {
        if (q > (uint64_t)INT64_MAX - (rem ? 1 : 0)) return false;
        *out = (int64_t)q + (rem ? 1 : 0);
    } else {
        /* ceil of a negative quotient drops the fraction */
        if (q > (uint64_t)INT64_MAX + 1) return false;
        *out = q == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)q;
    }
    return true;
}

static u128 qty_gcd(u128 a, u128 b) {
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

bool quantity_is_multiple(const quantity *a, const quantity *b) {
    if (b->mant == 0) return false;
    if (a->mant == 0) return true;
    u128 ma = qty_uabs(a->mant), mb = qty_uabs(b->mant);
    int64_t d = (int64_t)a->exp - b->exp;
    if (d >= 0) {
        /* mb | ma × 10^d  ⇔  what is left of mb after gcd(mb, ma) is 2^x 5^y, x,y <= d */
        u128 t = mb / qty_gcd(mb, ma);
        int64_t x = 0, y = 0;
        while (t % 2 == 0) { t /= 2; x++; }
        while (t % 5 == 0) { t /= 5; y++; }
        return t == 1 && x <= d && y <= d;
    }
    u128 D;
    if (!qty_mul_pow10(mb, -d, &D)) return false; /* mb × 10^-d > ma */
    return ma % D == 0;
}

bool quantity_to_int64(const quantity *q, int64_t *out) {
    if (q->big || !qty_fits64(q->mant)) return false;
    int64_t v = (int64_t)q->mant;
    if (q->exp == 0) { *out = v; return true; }
    if (q->exp < 0) return false;
    if (!qty_scale64_ok(v, q->exp)) return false;
    *out = v == 0 ? 0 : v * (int64_t)POW10[q->exp];
    return true;
}

bool quantity_value_int64(const quantity *q, int64_t *out) {
    if (q->mant == 0) { *out = 0; return true; }
    u128 m = qty_uabs(q->mant);
    if (q->exp < 0) {
        if (-(int64_t)q->exp > 38) return false;
        u128 p = POW10[-(int64_t)q->exp];
        if (m % p) return false;
        m /= p;
    } else if (q->exp > 0) {
        if (q->exp > 18 || m > ((u128)1 << 64) / POW10[q->exp]) return false;
        m *= POW10[q->exp];
    }
    if (q->mant > 0) {
        if (m > INT64_MAX) return false;
        *out = (int64_t)m;
    } else {
        if (m > (u128)INT64_MAX + 1) return false;
        *out = m == (u128)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
    }
    return true;
}

/* Go's math.Pow10, table for table, so products round exactly as Kubernetes'. */
static double qty_go_pow10(int64_t n) {
    static const double tab[32] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10,
                                   1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
                                   1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31};
    static const double pos32[10] = {1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288};
    static const double neg32[11] = {1e-0,   1e-32,  1e-64,  1e-96,  1e-128, 1e-160,
                                     1e-192, 1e-224, 1e-256, 1e-288, 1e-320};
    if (n >= 0 && n <= 308) return pos32[n / 32] * tab[n % 32];
    if (n >= -323 && n <= 0) return neg32[-n / 32] / tab[-n % 32];
    return n > 0 ? INFINITY : 0.0;
}

double quantity_to_double(const quantity *q) {
    double base = (double)q->mant;
    if (q->exp == 0) return base;
    return base * qty_go_pow10(q->exp);
}

/* ---- canonical printing (CanonicalizeBytes) ------------------------------ */

static size_t qty_emit(const char *tmp, size_t len, char *buf, size_t n) {
    if (n) {
        size_t c = len < n - 1 ? len : n - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return len;
}

/* BinarySI form: the value must be a whole number; printed as m × 1024^k. */
static bool qty_format_binary(u128 m, int64_t e, char *tmp, size_t *len) {
    qbig v;
    if (e < 0) {
        if (-e > 38 || m % POW10[-e]) return false; /* not whole: show as DecimalSI */
        qb_set(&v, m / POW10[-e]);
    } else {
        qb_set(&v, m);
        if (e > 150 || !qb_mul_pow10(&v, e)) return false;
    }
    int k = 0;
    while ((v.n > 1 || (v.n == 1 && v.l[0] >= 1024)) && (v.l[0] & 1023) == 0) {
        qb_div(&v, 1024);
        k++;
    }
    *len += qb_str(&v, tmp + *len);
    /* Kubernetes has no suffix past Ei (and then prints the bare mantissa) */
    static const char *const suf[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    if (k <= 6) {
        size_t sl = strlen(suf[k]);
        memcpy(tmp + *len, suf[k], sl);
        *len += sl;
    }
    return true;
}

size_t quantity_format(const quantity *q, char *buf, size_t n) {
    char tmp[QB_LIMBS * 10 + 64];
    size_t len = 0;
    if (q->mant == 0) return qty_emit("0", 1, buf, n);
    u128 m = qty_uabs(q->mant);
    int64_t e = q->exp;
    if (q->mant < 0) tmp[len++] = '-';
    int f = q->format;
    if (f != QTY_BINARY_SI && f != QTY_DECIMAL_SI) f = QTY_DECIMAL_EXPONENT;
    if (f == QTY_BINARY_SI) {
        /* -1024 < v < 1024 prints as DecimalSI "to avoid rounding"; so does a
         * value with a fraction */
        if (qty_cmp_mag(m, e, 1024, 0) < 0 || !qty_format_binary(m, e, tmp, &len)) f = QTY_DECIMAL_SI;
        else return qty_emit(tmp, len, buf, n);
    }
    /* all factors of ten into the exponent, then down to a multiple of three */
    while (m % 10 == 0) {
        m /= 10;
        e++;
    }
    int64_t r = ((e % 3) + 3) % 3;
    e -= r;
    len += qty_u128_str(m, tmp + len);
    while (r-- > 0) tmp[len++] = '0';
    static const char si[] = "num kMGTPE";
    if (f == QTY_DECIMAL_SI && e >= -9 && e <= 18) {
        char c = si[(e + 9) / 3];
        if (c != ' ') tmp[len++] = c;
    } else if (e != 0) {
        /* DecimalExponent, and DecimalSI beyond E (Kubernetes falls back to "e") */
        len += (size_t)snprintf(tmp + len, sizeof tmp - len, "e%lld", (long long)e);
    }
    return qty_emit(tmp, len, buf, n);
}

/* ParseQuantity keeps the input as the cached String() when it looks canonical:
 * fast path, and for decimal forms a scale that is a multiple of 3 with digits not
 * ending in "000" and not starting with '0'; for binary ones a multiplier that is
 * not a multiple of 8 (value & 7 != 0). */
bool quantity_keeps_text(const char *s, size_t len, const quantity *q) {
    if (len == 1 && s[0] == '0') return true;
    if (q->big || len == 0 || len > INT32_MAX) return false;
    /* re-scan just enough to find the digits and the suffix */
    size_t pos = 0;
    if (s[0] == '-' || s[0] == '+') pos++;
    while (pos < len && s[pos] == '0') pos++;
    size_t ns = pos;
    while (pos < len && qty_isdigit(s[pos])) pos++;
    size_t num_len = pos - ns, den_start = pos, den_len = 0;
    if (pos < len && s[pos] == '.') {
        den_start = ++pos;
        while (pos < len && qty_isdigit(s[pos])) pos++;
        den_len = pos - den_start;
    }
    qty_suffix sx;
    if (!qty_suffix_interpret(s + pos, len - pos, &sx)) return false;
    /* shifted = num + denom; num empty means Kubernetes used "0", which starts with '0' */
    if (num_len == 0 || num_len + den_len > 18) return false;
    char shifted[20];
    memcpy(shifted, s + ns, num_len);
    memcpy(shifted + num_len, s + den_start, den_len);
    size_t sl = num_len + den_len;
    if (sx.base == 2) {
        if (den_len) return false;
        /* not a multiple of 8 ⇔ its last three digits are not */
        unsigned last3 = 0;
        for (size_t i = sl > 3 ? sl - 3 : 0; i < sl; i++) last3 = last3 * 10 + (unsigned)(shifted[i] - '0');
        return last3 % 8 != 0;
    }
    int32_t scale = qty_wrap32((int64_t)sx.exp - (int64_t)den_len);
    return scale % 3 == 0 && !(sl >= 3 && memcmp(shifted + sl - 3, "000", 3) == 0);
}

size_t quantity_format_parsed(const char *s, size_t len, const quantity *q, char *buf, size_t n) {
    if (quantity_keeps_text(s, len, q)) return qty_emit(s, len, buf, n);
    return quantity_format(q, buf, n);
}

bool quantity_scaled_value(const quantity *q, int32_t scale, int64_t *out) {
    if (q->mant == 0) { *out = 0; return true; }
    u128 m = qty_uabs(q->mant);
    int64_t d = (int64_t)q->exp - scale;
    if (d >= 0) {
        if (d > 18 || m > ((u128)1 << 64) / POW10[d]) return false;
        m *= POW10[d];
    } else if (-d > 38) {
        m = 1; /* 0 < |value| < 1 rounds up to 1 */
    } else {
        u128 p = POW10[-d];
        m = m / p + (m % p != 0);
    }
    if (q->mant > 0) {
        if (m > INT64_MAX) return false;
        *out = (int64_t)m;
    } else {
        if (m > (u128)INT64_MAX + 1) return false;
        *out = m == (u128)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
    }
    return true;
}
