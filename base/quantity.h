/* quantity.h — Kubernetes resource.Quantity: exact decimal values such as "40Gi",
 * "1500m", "1e3", parsed with the full apimachinery grammar, compared and added
 * exactly (no floating point), and printed in canonical form exactly as
 * Kubernetes prints them ("1.5Gi" → "1536Mi", "0.5" → "500m").
 *
 * Representation: value = mant × 10^exp with a 128-bit mantissa. Like Kubernetes,
 * non-zero values are rounded up in magnitude to nano precision (exp >= -9) when
 * parsed. `format` remembers the suffix family the value was written in
 * (BinarySI, DecimalSI, DecimalExponent), which canonical printing needs.
 * Values too large for the mantissa are rejected with an error, never wrapped.
 * The split between mant and exp follows Kubernetes' own (the digits as written on
 * its int64 fast path, a 10^-9 scale on its inf.Dec slow path), because AsInt64 and
 * AsApproximateFloat64 observe it: equal values can have different fields, so compare
 * with quantity_cmp, never field by field. */
#ifndef DRA_QUANTITY_H
#define DRA_QUANTITY_H

#include "base/base.h"
#include "base/error.h"

typedef enum quantity_fmt {
    QTY_DECIMAL_EXPONENT = 0,  /* 1e3, 1E-3 */
    QTY_BINARY_SI = 1,         /* Ki Mi Gi Ti Pi Ei */
    QTY_DECIMAL_SI = 2,        /* n u m "" k M G T P E */
} quantity_fmt;

typedef struct quantity {
    __int128 mant;
    int32_t exp;               /* power of ten, >= -9 for parsed values */
    uint8_t format;            /* quantity_fmt */
    /* 1 when Kubernetes would hold this value in its inf.Dec form rather than its
     * int64-with-scale fast form (parse took the slow path, or arithmetic overflowed
     * int64). Only quantity_to_int64 (AsInt64, CEL isInteger/asInteger) and
     * quantity_keeps_text look at it; 0 — what a zero-initialised struct has — is the
     * int64 form. Added after the other fields, inside what used to be padding. */
    uint8_t big;
} quantity;

/* Parses s[0..n). On failure fills e->msg with Kubernetes' text:
 *   "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
 *   "unable to parse quantity's suffix" / "unable to parse numeric part of quantity".
 * A value needing more than 38 significant digits (Kubernetes would accept it) fails
 * with "quantity out of range: more than 38 significant digits". */
bool quantity_parse(const char *s, size_t n, quantity *out, err *e);
/* Convenience for constants in code and tests; aborts on a bad literal. */
quantity quantity_must(const char *s);
quantity quantity_from_int(int64_t v, quantity_fmt f);

int quantity_cmp(const quantity *a, const quantity *b);   /* -1, 0, 1; exact */
int quantity_sign(const quantity *q);                     /* -1, 0, 1 */
bool quantity_is_zero(const quantity *q);
/* a + b and a - b, exact; false on overflow of the representation. The result
 * keeps a's format, or takes b's when a is zero (as Kubernetes' Add/Sub do). out may
 * alias a or b. */
bool quantity_add(const quantity *a, const quantity *b, quantity *out);
bool quantity_sub(const quantity *a, const quantity *b, quantity *out);
/* a × k, exact; false on overflow. Keeps a's format. */
bool quantity_mul_int(const quantity *a, int64_t k, quantity *out);
/* ceil(a / b) for b > 0, as an integer; false when b <= 0 or the quotient overflows. */
bool quantity_div_ceil(const quantity *a, const quantity *b, int64_t *out);
/* true when a is an exact integer multiple of b (b != 0). */
bool quantity_is_multiple(const quantity *a, const quantity *b);
/* Kubernetes' AsInt64, which CEL isInteger()/asInteger() use: true and *out set only
 * when Kubernetes holds the value as int64 × 10^scale with scale >= 0 and the product
 * fits int64. So, as in Kubernetes, "1000m", "0m", "100Ti" (parsed on the slow path)
 * and "1.5Gi" are NOT integers here although their values are whole numbers. */
bool quantity_to_int64(const quantity *q, int64_t *out);
/* The mathematical test: true and *out set when the value is a whole number that
 * fits int64, whatever its representation ("1000m" → 1, "1.5Gi" → 1610612736). */
bool quantity_value_int64(const quantity *q, int64_t *out);
/* Kubernetes' ScaledValue(scale): the value in units of 10^scale, rounded up in
 * magnitude (Value() is scale 0, MilliValue() scale -3). Kubernetes silently
 * overflows; this returns false instead. */
bool quantity_scaled_value(const quantity *q, int32_t scale, int64_t *out);
/* Whether ParseQuantity keeps s[0..len) as the cached String() of its result q (the
 * fast path on text that already looks canonical). Go's `==` on two Quantity values
 * compares that cached text too, besides the int64 form (mant, exp), the format, and
 * — for the inf.Dec form (`big`) — a pointer, so it never holds between two parses. */
bool quantity_keeps_text(const char *s, size_t len, const quantity *q);
/* Kubernetes' String() of a quantity just parsed from s[0..n): ParseQuantity keeps the
 * input text when it is already canonical-looking (e.g. "+1", "007", "1.500", "1E3"
 * come back verbatim), otherwise this is quantity_format. q must be the parse of s. */
size_t quantity_format_parsed(const char *s, size_t len, const quantity *q, char *buf, size_t n);
/* Kubernetes' AsApproximateFloat64: (double)mant × Go's math.Pow10(exp), so the
 * result rounds exactly as Kubernetes' does; ±Inf on overflow. */
double quantity_to_double(const quantity *q);

/* Canonical form as Kubernetes' Quantity.String() prints it. Returns the length
 * (snprintf semantics; 64 bytes always suffice for canonical forms of in-range values). */
size_t quantity_format(const quantity *q, char *buf, size_t n);
#define QUANTITY_STR_MAX 96

#endif
