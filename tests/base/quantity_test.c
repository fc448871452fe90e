/* quantity_test.c — resource.Quantity: the parse grammar and its three error texts,
 * nano round-up, the BinarySI cap, canonical printing (vectors from apimachinery's
 * quantity_test.go), exact comparison, arithmetic and its overflow edges, and the
 * two int64 conversions. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/quantity.h"

#define FMT_ERR "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define SUF_ERR "unable to parse quantity's suffix"
#define NUM_ERR "unable to parse numeric part of quantity"

static quantity P(const char *s) {
    quantity q;
    err e;
    err_clear(&e);
    cr_assert(quantity_parse(s, strlen(s), &q, &e), "parse %s: %s", s, e.msg);
    return q;
}

static void expect_canon(const char *in, const char *want) {
    quantity q = P(in);
    char buf[QUANTITY_STR_MAX];
    size_t n = quantity_format(&q, buf, sizeof buf);
    cr_expect_str_eq(buf, want, "%s: got %s want %s", in, buf, want);
    cr_expect_eq(n, strlen(want), "%s: length", in);
    /* the canonical form parses back to the same value and prints the same */
    quantity r = P(buf);
    cr_expect_eq(quantity_cmp(&q, &r), 0, "%s: round trip of %s changed the value", in, buf);
    char again[QUANTITY_STR_MAX];
    quantity_format(&r, again, sizeof again);
    cr_expect_str_eq(again, buf, "%s: canonical %s is not stable (%s)", in, buf, again);
    /* the same with an explicit sign in front (as quantity_test.go does) */
    if (in[0] != '-' && in[0] != '+') {
        char signed_in[128], want_neg[128];
        snprintf(signed_in, sizeof signed_in, "+%s", in);
        quantity p = P(signed_in);
        quantity_format(&p, again, sizeof again);
        cr_expect_str_eq(again, want, "%s: got %s", signed_in, again);
        cr_expect_eq(p.format, q.format, "%s: format", signed_in);
        snprintf(signed_in, sizeof signed_in, "-%s", in);
        snprintf(want_neg, sizeof want_neg, "%s%s", strcmp(want, "0") ? "-" : "", want);
        p = P(signed_in);
        quantity_format(&p, again, sizeof again);
        cr_expect_str_eq(again, want_neg, "%s: got %s", signed_in, again);
        cr_expect_eq(p.format, q.format, "%s: format", signed_in);
        cr_expect_eq(quantity_sign(&p), -quantity_sign(&q), "%s: sign", signed_in);
    }
}

static void expect_error(const char *in, const char *msg) {
    quantity q;
    err e;
    err_clear(&e);
    cr_expect_not(quantity_parse(in, strlen(in), &q, &e), "%s parsed unexpectedly", in);
    cr_expect_str_eq(e.msg, msg, "%s: message %s", in, e.msg);
}

static int C(const char *a, const char *b) {
    quantity x = P(a), y = P(b);
    return quantity_cmp(&x, &y);
}

/* Parameters are copied into the test process by value (criterion re-executes the
 * binary, so pointers into it would not survive): strings are held inline. */
typedef struct canon_case {
    char in[96], want[48];
} canon_case;

/* Parse, then print canonically (and the same with "+" and "-" in front). */
ParameterizedTestParameters(quantity, canonical) {
    static canon_case cases[] = {
        /* canonical plain and decimal si */
        {"0", "0"},
        {"0n", "0"},
        {"0Ki", "0"},
        {"-0", "0"},
        {"1", "1"},
        {"9", "9"},
        {"5n", "5n"},
        {"4u", "4u"},
        {"3m", "3m"},
        {"8k", "8k"},
        {"50k", "50k"},
        {"7M", "7M"},
        {"6G", "6G"},
        {"5T", "5T"},
        {"40T", "40T"},
        {"300T", "300T"},
        {"2P", "2P"},
        {"1E", "1E"},
        {"12E", "12E"},
        {"1000", "1k"},
        {"1000M", "1G"},
        {"100m", "100m"},
        {"1080m", "1080m"},
        {"1.08", "1080m"},
        {"1234567M", "1234567M"},
        /* canonical fractions */
        {"0.5", "500m"},
        {"1.5", "1500m"},
        {"9.01", "9010m"},
        {"0.001", "1m"},
        {"0.0005k", "500m"},
        {"0.00050k", "500m"},
        {"0.00500", "5m"},
        {"0.05000", "50m"},
        {"100.035k", "100035"},
        {"10.035M", "10035k"},
        {"8.1k", "8100"},
        {"7.123456M", "7123456"},
        {"6.987654321G", "6987654321"},
        {"5.444T", "5444G"},
        {"40.1T", "40100G"},
        {"2.5P", "2500T"},
        {"1.01E", "1010P"},
        {".001", "1m"},
        {".0001k", "100m"},
        {"1.", "1"},
        {"1.G", "1G"},
        {"+1.5", "1500m"},
        {"-1.5", "-1500m"},
        {"-9.01", "-9010m"},
        {"000123", "123"},
        /* canonical decimal exponent */
        {"1e3", "1e3"},
        {"1E3", "1e3"},
        {"1E-3", "1e-3"},
        {"1E6", "1e6"},
        {"1e9", "1e9"},
        {"1E18", "1e18"},
        {"1e14", "100e12"},
        {"1e13", "10e12"},
        {"0.5e0", "500e-3"},
        {"0.5e-1", "50e-3"},
        {"0.5e-2", "5e-3"},
        {"1.2e3", "1200"},
        {"1.3E+6", "1300e3"},
        {"1.40e9", "1400e6"},
        {"1.53E12", "1530e9"},
        {"1.7E18", "1700e15"},
        {"80e-3", "80e-3"},
        {"-1e3", "-1e3"},
        /* canonical binary si */
        {"1Ki", "1Ki"},
        {"8Ki", "8Ki"},
        {"7Mi", "7Mi"},
        {"6Gi", "6Gi"},
        {"5Ti", "5Ti"},
        {"4Pi", "4Pi"},
        {"3Ei", "3Ei"},
        {"100Ti", "100Ti"},
        {"1024Mi", "1Gi"},
        {"1.5Gi", "1536Mi"},
        {"-1.5Gi", "-1536Mi"},
        {"0.5Mi", "512Ki"},
        {"1025Ki", "1025Ki"},
        {"307200Ki", "300Mi"},
        {"1025024Mi", "1001Gi"},
        /* not whole numbers of bytes, or below 1024: printed as DecimalSI */
        {"100.035Ki", "102435840m"},
        {"0.05Gi", "53687091200m"},
        {".001Ki", "1024m"},
        {".000001Ki", "1024u"},
        {".000000001Ki", "1024n"},
        {"-.001Ki", "-1024m"},
        /* nano round up in magnitude */
        {"0.1n", "1n"},
        {"0.9n", "1n"},
        {"3.001n", "4n"},
        {"-3.001n", "-4n"},
        {"1.1E-9", "2e-9"},
        {"0.0000000001", "1n"},
        {"0.00000000050", "1n"},
        {"0.5e-9", "1e-9"},
        {"0.00000012345", "124n"},
        {"0.00000012354", "124n"},
        {"0.000000000001Ki", "2n"},
        {".000000000001Ki", "2n"},
        {"1e-1000", "1e-9"},
        /* a long tail below nano only decides the round-up */
        {"1.0000000000000000000000000000000000000000000000000000000001", "1000000001n"},
        {"1.0000000000000000000000000000000000000000000000000000000000", "1"},
        /* a binary fraction far below nano still rounds the result up */
        {"1.000000000000000000000000000000000000000000000000000000000000000000000000000001Ki", "1024000000001n"},
        {"1.000000000000000000000000000000000000000000000000000000000000000000000000000000Ki", "1Ki"},
        /* binary si cap */
        {"9Ei", "9223372036854775807"},
        {"8Ei", "9223372036854775807"},
        {"9223372036854775807Ki", "9223372036854775807"},
        {"7Ei", "7Ei"},
        /* decimal values are not capped */
        {"18446744073709551616", "18446744073709551616"},
        {"9999999999999999999999999999999999999G", "9999999999999999999999999999999999999G"},
        {"1000E", "1e21"},
        {"5000E", "5e21"},
        /* odd but valid forms */
        {".", "0"},
        {"-.", "0"},
        {"+", "0"},
        {"-", "0"},
        {"Ki", "0"},
        {"e3", "0"},
        {"0.0", "0"},
    };
    return cr_make_param_array(canon_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(canon_case *c, quantity, canonical) { expect_canon(c->in, c->want); }







typedef struct error_case {
    char in[32], msg[128];
} error_case;

ParameterizedTestParameters(quantity, invalid) {
    static error_case cases[] = {
        {"", FMT_ERR},
        {"1.1.M", FMT_ERR},
        {"1+1.0M", FMT_ERR},
        {"0.1am", FMT_ERR},
        {"aoeu", FMT_ERR},
        {" 1", FMT_ERR},
        {"1 ", FMT_ERR},
        {"10Mo", FMT_ERR},
        {"1e3x", FMT_ERR},
        {"0.1mi", SUF_ERR},
        {".5i", SUF_ERR},
        {"1i", SUF_ERR},
        {"-3.01i", SUF_ERR},
        {"-3.01e-", SUF_ERR},
        {"200K", SUF_ERR},
        {"1ki", SUF_ERR},
        {"1Mm", SUF_ERR},
        {"1e", SUF_ERR},
        {"1Ee3", SUF_ERR},
        {"1e99999999999999999999", SUF_ERR},
        {"1m5", SUF_ERR},
        /* no digit at all and a scale finer than nano: inf.Dec cannot read "." */
        {".e-10", NUM_ERR},
        {"-e-10", NUM_ERR},
    };
    return cr_make_param_array(error_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(error_case *c, quantity, invalid) { expect_error(c->in, c->msg); }

Test(quantity, exact_comparison) {
    cr_expect_eq(C("200M", "0.2G"), 0);
    cr_expect_eq(C("50M", "50Mi"), -1);
    cr_expect_eq(C("50Mi", "50M"), 1);
    cr_expect_eq(C("10000T", "100Gi"), 1);
    cr_expect_eq(C("100m", "50m"), 1);
    cr_expect_eq(C("1e3", "1k"), 0);
    cr_expect_eq(C("1Ki", "1024"), 0);
    cr_expect_eq(C("1.5Gi", "1536Mi"), 0);
    cr_expect_eq(C("-1", "0"), -1);
    cr_expect_eq(C("-2", "-1"), -1);
    cr_expect_eq(C("-1n", "-1"), 1);
    cr_expect_eq(C("1n", "0"), 1);
    cr_expect_eq(C("0", "-0"), 0);
    cr_expect_eq(C("0m", "0Ki"), 0);
    cr_expect_eq(C("1e30", "1n"), 1);
    cr_expect_eq(C("1e-1000", "1n"), 0);
    cr_expect_eq(C("9999999999999999999999999999999999999G", "1E"), 1);
    cr_expect_eq(C("1000000000000000000000000000000000001", "1e36"), 1);
    cr_expect_eq(C("100000000000000000000000000000000000000n", "1e29"), 0);
    cr_expect_eq(C("99999999999999999999999999999999999999n", "1e29"), -1);
    cr_expect_eq(C("-99999999999999999999999999999999999999n", "-1e29"), 1);
    cr_expect_eq(C("1e2147483647", "1e2147483646"), 1);
    cr_expect_eq(C("9Ei", "8Ei"), 0); /* both capped */
}

Test(quantity, add_sub_exact_and_formats) {
    quantity a = P("1Gi"), b = P("1Gi"), r;
    char buf[QUANTITY_STR_MAX];
    cr_assert(quantity_add(&a, &b, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "2Gi");

    a = P("1");
    b = P("1.5");
    cr_assert(quantity_sub(&a, &b, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "-500m");

    /* the result keeps the receiver's format ... */
    a = P("10Ki");
    b = P("1");
    cr_assert(quantity_sub(&a, &b, &r));
    cr_expect_eq(r.format, QTY_BINARY_SI);
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "10239");
    /* ... unless the receiver is zero, then it takes the operand's */
    a = P("0");
    b = P("1Gi");
    cr_assert(quantity_add(&a, &b, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "1Gi");
    cr_assert(quantity_sub(&a, &b, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "-1Gi");
    a = P("100m");
    b = P("0");
    cr_assert(quantity_add(&a, &b, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "100m");

    /* exact across scales: 1e18 + 1n needs 28 digits, fine in 128 bits */
    a = P("1E");
    b = P("1n");
    cr_assert(quantity_add(&a, &b, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "1000000000000000000000000001n");
    cr_assert(quantity_sub(&r, &b, &r)); /* out may alias an input */
    cr_expect_eq(quantity_cmp(&r, &a), 0);

    /* x + y - y == x for many values across scales */
    const char *vals[] = {"1", "1n", "3.7Gi", "-12k", "0.5e-3", "99E", "123456789012345678", "7Mi"};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        for (size_t j = 0; j < sizeof vals / sizeof *vals; j++) {
            quantity x = P(vals[i]), y = P(vals[j]), s, d;
            cr_assert(quantity_add(&x, &y, &s), "%s + %s", vals[i], vals[j]);
            cr_assert(quantity_sub(&s, &y, &d));
            cr_expect_eq(quantity_cmp(&d, &x), 0, "%s + %s - %s", vals[i], vals[j], vals[j]);
            cr_expect_eq(quantity_cmp(&s, &x), quantity_sign(&y), "%s + %s vs %s", vals[i], vals[j], vals[i]);
        }
}

Test(quantity, arithmetic_overflow_is_reported) {
    quantity a = P("1e30"), b = P("1n"), r;
    /* 1e30 + 1e-9 needs 40 significant digits */
    cr_expect_not(quantity_add(&a, &b, &r));
    cr_expect_not(quantity_sub(&a, &b, &r));
    /* 38 nines at nano scale plus a bit more */
    /* 38 nines at nano scale: fits 2^127-1 (1.7e38) once, not twice */
    quantity big = P("99999999999999999999999999999999999999n");
    cr_expect_not(quantity_add(&big, &big, &r));
    quantity neg = P("-99999999999999999999999999999999999999n");
    cr_expect_not(quantity_sub(&neg, &big, &r));
    cr_assert(quantity_sub(&big, &big, &r));
    cr_expect(quantity_is_zero(&r));
    /* a mantissa beyond 128 bits is rejected at parse time, never wrapped */
    quantity q;
    err e;
    err_clear(&e);
    cr_expect_not(quantity_parse("123456789012345678901234567890123456789012", 42, &q, &e));
    cr_expect(e.set);
}

Test(quantity, mul_int) {
    quantity a = P("100m"), r;
    char buf[QUANTITY_STR_MAX];
    cr_assert(quantity_mul_int(&a, 3, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "300m");
    a = P("1Gi");
    cr_assert(quantity_mul_int(&a, -4, &r));
    quantity_format(&r, buf, sizeof buf);
    cr_expect_str_eq(buf, "-4Gi");
    cr_assert(quantity_mul_int(&a, 0, &r));
    cr_expect(quantity_is_zero(&r));
    quantity m = quantity_from_int(INT64_MAX, QTY_DECIMAL_SI);
    cr_assert(quantity_mul_int(&m, INT64_MAX, &r)); /* (2^63-1)^2 < 2^126 */
    quantity r2;
    cr_assert(quantity_mul_int(&r, 2, &r2));        /* still below 2^127 */
    cr_expect_not(quantity_mul_int(&r, 4, &r2));
    cr_expect_not(quantity_mul_int(&r, INT64_MIN, &r2));
}

Test(quantity, div_ceil) {
    quantity a, b;
    int64_t q;
    a = P("10Gi"), b = P("1Gi");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 10);
    a = P("10.5"), b = P("1");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 11);
    a = P("-10.5");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, -10);
    a = P("1"), b = P("3");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 1);
    a = P("1n"), b = P("1E");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 1);
    a = P("0"), b = P("5");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 0);
    a = P("1500m"), b = P("500m");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 3);
    a = P("9223372036854775807"), b = P("1");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, INT64_MAX);
    a = P("9223372036854775808");
    cr_expect_not(quantity_div_ceil(&a, &b, &q));
    a = P("1e30"), b = P("1n");
    cr_expect_not(quantity_div_ceil(&a, &b, &q));
    /* needs the wide path: 38-digit operands at very different scales */
    a = P("12345678901234567890123456789012345678e5");
    b = P("12345678901234567890123456789012345678e-5");
    cr_assert(quantity_div_ceil(&a, &b, &q));
    cr_expect_eq(q, 10000000000LL);
    b = P("0");
    cr_expect_not(quantity_div_ceil(&a, &b, &q));
    b = P("-1");
    cr_expect_not(quantity_div_ceil(&a, &b, &q));
}

Test(quantity, is_multiple) {
    quantity a, b;
    a = P("1Gi"), b = P("1Mi");
    cr_expect(quantity_is_multiple(&a, &b));
    a = P("1.5Gi"), b = P("512Mi");
    cr_expect(quantity_is_multiple(&a, &b));
    a = P("1G"), b = P("1Gi");
    cr_expect_not(quantity_is_multiple(&a, &b));
    a = P("3"), b = P("1500m");
    cr_expect(quantity_is_multiple(&a, &b));
    a = P("1"), b = P("3");
    cr_expect_not(quantity_is_multiple(&a, &b));
    a = P("1e30"), b = P("1n");
    cr_expect(quantity_is_multiple(&a, &b));
    a = P("1e30"), b = P("7");
    cr_expect_not(quantity_is_multiple(&a, &b));
    a = P("0"), b = P("7");
    cr_expect(quantity_is_multiple(&a, &b));
    a = P("1n"), b = P("1");
    cr_expect_not(quantity_is_multiple(&a, &b));
    a = P("-6"), b = P("2");
    cr_expect(quantity_is_multiple(&a, &b));
    b = P("0");
    cr_expect_not(quantity_is_multiple(&a, &b));
}

Test(quantity, to_int64_follows_kubernetes_as_int64) {
    int64_t v;
    cr_assert(quantity_to_int64(&(quantity){0}, &v));
    quantity q = P("5");
    cr_assert(quantity_to_int64(&q, &v));
    cr_expect_eq(v, 5);
    q = P("1k");
    cr_assert(quantity_to_int64(&q, &v));
    cr_expect_eq(v, 1000);
    q = P("10Ti");
    cr_assert(quantity_to_int64(&q, &v));
    cr_expect_eq(v, 10LL << 40);
    q = P("-922337203685477580");
    cr_assert(quantity_to_int64(&q, &v));
    cr_expect_eq(v, -922337203685477580LL);
    /* whole numbers Kubernetes does not hold as int64 at scale >= 0 */
    const char *no[] = {"1000m", "0m", "1.5Gi", "100Ti", "9223372036854775807", "9Ei", "1n", "10E"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        q = P(no[i]);
        cr_expect_not(quantity_to_int64(&q, &v), "%s", no[i]);
    }
    /* arithmetic that overflows int64 leaves the int64 form for good */
    quantity a = quantity_from_int(INT64_MAX, QTY_DECIMAL_SI), one = quantity_from_int(1, QTY_DECIMAL_SI), r;
    cr_assert(quantity_add(&a, &one, &r));
    cr_assert(quantity_sub(&r, &one, &r));
    cr_expect_eq(quantity_cmp(&r, &a), 0);
    cr_expect_not(quantity_to_int64(&r, &v));
    cr_assert(quantity_to_int64(&a, &v));
    cr_expect_eq(v, INT64_MAX);
}

Test(quantity, value_int64_is_mathematical) {
    int64_t v;
    quantity q = P("1000m");
    cr_assert(quantity_value_int64(&q, &v));
    cr_expect_eq(v, 1);
    q = P("1.5Gi");
    cr_assert(quantity_value_int64(&q, &v));
    cr_expect_eq(v, 1610612736);
    q = P("9223372036854775807");
    cr_assert(quantity_value_int64(&q, &v));
    cr_expect_eq(v, INT64_MAX);
    q = P("-9223372036854775808");
    cr_assert(quantity_value_int64(&q, &v));
    cr_expect_eq(v, INT64_MIN);
    q = P("9223372036854775808");
    cr_expect_not(quantity_value_int64(&q, &v));
    q = P("1500m");
    cr_expect_not(quantity_value_int64(&q, &v));
    q = P("10E");
    cr_expect_not(quantity_value_int64(&q, &v));
}

Test(quantity, approximate_float) {
    quantity q = P("1.1Ki");
    cr_expect_eq(quantity_to_double(&q), 1126.4);
    q = P("2Ki");
    cr_expect_eq(quantity_to_double(&q), 2048.0);
    q = P("2Gi");
    cr_expect_eq(quantity_to_double(&q), 2147483648.0);
    q = P("12E");
    cr_expect_eq(quantity_to_double(&q), 1.2e19);
    q = P("0.5");
    cr_expect_eq(quantity_to_double(&q), 0.5);
    q = P("-1e400");
    cr_expect(isinf(quantity_to_double(&q)) && quantity_to_double(&q) < 0);
    q = P("1e-400");
    cr_expect_eq(quantity_to_double(&q), 1e-9); /* rounded up to 1n first */
}

Test(quantity, string_as_parsed_keeps_canonical_looking_input) {
    struct { const char *in, *out; } t[] = {
        {"+1", "+1"},       {"007", "007"},     {"1.500", "1.500"}, {"1E3", "1E3"},   {"1e+3", "1e+3"},
        {"100m", "100m"},   {"1Ki", "1Ki"},     {"+1Ki", "+1Ki"},   {"1000", "1k"},   {"0.5", "500m"},
        {"1024Ki", "1Mi"},  {"1.5Gi", "1536Mi"}, {"8Ki", "8Ki"},    {"0", "0"},       {"00", "0"},
        {"1.5", "1500m"},   {"100Ti", "100Ti"}, {"1.100e3", "1.100e3"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        quantity q = P(t[i].in);
        char buf[QUANTITY_STR_MAX];
        quantity_format_parsed(t[i].in, strlen(t[i].in), &q, buf, sizeof buf);
        cr_expect_str_eq(buf, t[i].out, "%s", t[i].in);
    }
}

Test(quantity, format_truncates_like_snprintf) {
    quantity q = P("1536Mi");
    char small[4];
    size_t n = quantity_format(&q, small, sizeof small);
    cr_expect_eq(n, 6);
    cr_expect_str_eq(small, "153");
    cr_expect_eq(quantity_format(&q, NULL, 0), 6);
}

Test(quantity, from_int_and_sign) {
    quantity q = quantity_from_int(1024, QTY_BINARY_SI);
    char buf[QUANTITY_STR_MAX];
    quantity_format(&q, buf, sizeof buf);
    cr_expect_str_eq(buf, "1Ki");
    q = quantity_from_int(1000000, QTY_DECIMAL_EXPONENT);
    quantity_format(&q, buf, sizeof buf);
    cr_expect_str_eq(buf, "1e6");
    q = quantity_from_int(-1234000, QTY_DECIMAL_SI);
    quantity_format(&q, buf, sizeof buf);
    cr_expect_str_eq(buf, "-1234k");
    cr_expect_eq(quantity_sign(&q), -1);
    q = quantity_from_int(0, QTY_BINARY_SI);
    cr_expect_eq(quantity_sign(&q), 0);
    cr_expect(quantity_is_zero(&q));
}

static void expect_struct(__int128 mant, int32_t exp, quantity_fmt f, const char *want) {
    quantity q = {.mant = mant, .exp = exp, .format = (uint8_t)f};
    char buf[QUANTITY_STR_MAX];
    quantity_format(&q, buf, sizeof buf);
    cr_expect_str_eq(buf, want, "(%lld, %d, %d): got %s", (long long)mant, exp, (int)f, buf);
    if (mant != 0) {
        q.mant = -mant;
        char neg[QUANTITY_STR_MAX + 1];
        snprintf(neg, sizeof neg, "-%s", want);
        quantity_format(&q, buf, sizeof buf);
        cr_expect_str_eq(buf, neg, "negated (%lld, %d): got %s", (long long)mant, exp, buf);
    }
}

/* TestQuantityString of apimachinery, on values built directly */
Test(quantity, canonical_of_built_values) {
    expect_struct(1024 * 1024 * 1024, 0, QTY_BINARY_SI, "1Gi");
    expect_struct(300 * 1024 * 1024, 0, QTY_BINARY_SI, "300Mi");
    expect_struct(6 * 1024, 0, QTY_BINARY_SI, "6Ki");
    expect_struct(1001LL * 1024 * 1024 * 1024, 0, QTY_BINARY_SI, "1001Gi");
    expect_struct(1024LL * 1024 * 1024 * 1024, 0, QTY_BINARY_SI, "1Ti");
    expect_struct(5, 0, QTY_BINARY_SI, "5");
    expect_struct(500, -3, QTY_BINARY_SI, "500m");
    expect_struct(1, 9, QTY_DECIMAL_SI, "1G");
    expect_struct(1000, 6, QTY_DECIMAL_SI, "1G");
    expect_struct(1000000, 3, QTY_DECIMAL_SI, "1G");
    expect_struct(1000000000, 0, QTY_DECIMAL_SI, "1G");
    expect_struct(1, -3, QTY_DECIMAL_SI, "1m");
    expect_struct(80, -3, QTY_DECIMAL_SI, "80m");
    expect_struct(1080, -3, QTY_DECIMAL_SI, "1080m");
    expect_struct(108, -2, QTY_DECIMAL_SI, "1080m");
    expect_struct(10800, -4, QTY_DECIMAL_SI, "1080m");
    expect_struct(300, 6, QTY_DECIMAL_SI, "300M");
    expect_struct(1, 12, QTY_DECIMAL_SI, "1T");
    expect_struct(1, 18, QTY_DECIMAL_SI, "1E");
    expect_struct(1, 21, QTY_DECIMAL_SI, "1e21");
    expect_struct(5, 21, QTY_DECIMAL_SI, "5e21");
    expect_struct(1, 24, QTY_DECIMAL_SI, "1e24");
    expect_struct(1234567, 6, QTY_DECIMAL_SI, "1234567M");
    expect_struct(1234567, -3, QTY_BINARY_SI, "1234567m");
    expect_struct(3, 3, QTY_DECIMAL_SI, "3k");
    expect_struct(1025, 0, QTY_BINARY_SI, "1025");
    expect_struct(0, 0, QTY_DECIMAL_SI, "0");
    expect_struct(0, 0, QTY_BINARY_SI, "0");
    expect_struct(0, 5, QTY_DECIMAL_EXPONENT, "0");
    expect_struct(1, 9, QTY_DECIMAL_EXPONENT, "1e9");
    expect_struct(1, -3, QTY_DECIMAL_EXPONENT, "1e-3");
    expect_struct(1, -9, QTY_DECIMAL_EXPONENT, "1e-9");
    expect_struct(80, -3, QTY_DECIMAL_EXPONENT, "80e-3");
    expect_struct(300, 6, QTY_DECIMAL_EXPONENT, "300e6");
    expect_struct(1, 12, QTY_DECIMAL_EXPONENT, "1e12");
    expect_struct(3, 3, QTY_DECIMAL_EXPONENT, "3e3");
    expect_struct(1, -9, QTY_DECIMAL_SI, "1n");
    expect_struct(80, -9, QTY_DECIMAL_SI, "80n");
    expect_struct(1080, -9, QTY_DECIMAL_SI, "1080n");
    expect_struct(108, -8, QTY_DECIMAL_SI, "1080n");
    expect_struct(10800, -10, QTY_DECIMAL_SI, "1080n");
    expect_struct(1, -6, QTY_DECIMAL_SI, "1u");
    expect_struct(80, -6, QTY_DECIMAL_SI, "80u");
    expect_struct(1080, -6, QTY_DECIMAL_SI, "1080u");
    /* NewMilliQuantity(1024, BinarySI) and an unknown format (→ DecimalExponent) */
    expect_struct(1024, -3, QTY_BINARY_SI, "1024m");
    expect_struct(1000000, -3, (quantity_fmt)7, "1e3");
    /* 2^63 as BinarySI (Kubernetes: zero.Sub(mostNegative) prints "8Ei") */
    expect_struct((__int128)1 << 63, 0, QTY_BINARY_SI, "8Ei");
    /* Kubernetes parity, not a nice result: base-1024 exponents past Ei have no
     * suffix and Kubernetes prints the bare multiplier */
    expect_struct((__int128)1 << 70, 0, QTY_BINARY_SI, "1");
    /* the widest mantissa */
    expect_struct((__int128)((((unsigned __int128)1) << 127) - 1), 0, QTY_DECIMAL_SI, "170141183460469231731687303715884105727");
    expect_struct((__int128)((((unsigned __int128)1) << 127) - 1), 0, QTY_BINARY_SI, "170141183460469231731687303715884105727");
}

static uint64_t qrnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static quantity random_quantity(uint64_t *s) {
    uint64_t r = qrnd(s);
    int64_t digits = (int64_t)(r % 19);
    int64_t m = (int64_t)(qrnd(s) % 1000000000000000000ULL);
    int64_t p = 1;
    for (int i = 0; i < digits; i++) p *= 10;
    m %= p ? p : 1;
    if (r & 1) m = -m;
    int32_t e = (int32_t)((r >> 8) % 40) - 9;
    quantity_fmt f = (quantity_fmt)((r >> 16) % 3);
    if (f == QTY_BINARY_SI && e > 0) e = 0; /* stay below the 2^63 BinarySI parse cap */
    return (quantity){.mant = m, .exp = e, .format = (uint8_t)f};
}

/* Every canonical string parses back to the same value and prints the same. */
Test(quantity, random_canonical_round_trip) {
    uint64_t s = 42;
    for (int i = 0; i < 20000; i++) {
        quantity q = random_quantity(&s);
        char buf[QUANTITY_STR_MAX], again[QUANTITY_STR_MAX];
        quantity_format(&q, buf, sizeof buf);
        quantity r;
        err e;
        err_clear(&e);
        cr_assert(quantity_parse(buf, strlen(buf), &r, &e), "%s: %s", buf, e.msg);
        cr_assert_eq(quantity_cmp(&q, &r), 0, "%s does not parse back to its value", buf);
        quantity_format(&r, again, sizeof again);
        /* the text keeps the value, not the format: a BinarySI value printed
         * without an "i" suffix comes back as DecimalSI (so in Kubernetes too) */
        if (q.format != QTY_BINARY_SI || strchr(buf, 'i')) cr_assert_str_eq(again, buf);
        quantity r2;
        cr_assert(quantity_parse(again, strlen(again), &r2, &e));
        cr_assert_eq(quantity_cmp(&q, &r2), 0);
        quantity_format(&r2, buf, sizeof buf);
        cr_assert_str_eq(again, buf, "second round trip not stable");
    }
}

/* Comparison and addition against plain 128-bit arithmetic on aligned values. */
Test(quantity, random_cmp_add_against_aligned_reference) {
    uint64_t s = 7;
    for (int i = 0; i < 50000; i++) {
        quantity a = random_quantity(&s), b = random_quantity(&s);
        int32_t e = a.exp < b.exp ? a.exp : b.exp;
        /* only pairs whose aligned values stay well inside 128 bits */
        if (a.exp - e > 19 || b.exp - e > 19) continue;
        __int128 x = a.mant, y = b.mant;
        for (int32_t k = e; k < a.exp; k++) x *= 10;
        for (int32_t k = e; k < b.exp; k++) y *= 10;
        int want = x < y ? -1 : x > y;
        cr_assert_eq(quantity_cmp(&a, &b), want, "cmp #%d", i);
        cr_assert_eq(quantity_cmp(&b, &a), -want);
        quantity r;
        cr_assert(quantity_add(&a, &b, &r));
        __int128 z = r.mant;
        cr_assert_geq(r.exp, e);
        for (int32_t k = e; k < r.exp; k++) z *= 10;
        cr_assert(z == x + y, "add #%d", i);
        cr_assert(quantity_sub(&a, &b, &r));
        z = r.mant;
        for (int32_t k = e; k < r.exp; k++) z *= 10;
        cr_assert(z == x - y, "sub #%d", i);
    }
}

/* The format each parse remembers (the expectations of quantity_test.go). */
Test(quantity, parsed_format) {
    struct { const char *in; quantity_fmt f; } t[] = {
        {"0", QTY_DECIMAL_SI},         {"0Ki", QTY_BINARY_SI},        {"1", QTY_DECIMAL_SI},
        {"1Ki", QTY_BINARY_SI},        {"5n", QTY_DECIMAL_SI},        {"1E", QTY_DECIMAL_SI},
        {"1E-3", QTY_DECIMAL_EXPONENT}, {"1e3", QTY_DECIMAL_EXPONENT}, {"0.5e0", QTY_DECIMAL_EXPONENT},
        {"1.1E-9", QTY_DECIMAL_EXPONENT}, {"9Ei", QTY_BINARY_SI},     {"100.035Ki", QTY_BINARY_SI},
        {"0.5Mi", QTY_BINARY_SI},      {"0.025Ti", QTY_BINARY_SI},
        /* a BinarySI value strictly between 0 and 1 becomes DecimalSI */
        {"0.000000000001Ki", QTY_DECIMAL_SI}, {".0001Ki", QTY_DECIMAL_SI}, {"-.0001Ki", QTY_DECIMAL_SI},
        {".001Ki", QTY_BINARY_SI}, /* 1.024 */
        {"0.0Ki", QTY_BINARY_SI},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        quantity q = P(t[i].in);
        cr_expect_eq(q.format, t[i].f, "%s: format %d", t[i].in, q.format);
    }
}

Test(quantity, scaled_value_rounds_up_in_magnitude) {
    struct { const char *in; int32_t scale; int64_t want; } t[] = {
        {"1n", -9, 1},       {"1n", -6, 1},        {"1n", 0, 1},          {"1u", -9, 1000},
        {"1m", -6, 1000},    {"1", -9, 1000000000}, {"1k", -3, 1000000},  {"1", 2, 1},
        {"100", 2, 1},       {"101", 2, 2},        {"9.01", 0, 10},       {"-9.01", 0, -10},
        {"1.5Gi", 0, 1610612736}, {"1.1Ki", 0, 1127}, {"1Ki", -3, 1024000}, {"0", 5, 0},
        {"9223372036854775807", 0, INT64_MAX}, {"-9223372036854775808", 0, INT64_MIN},
        {"1e-100", 0, 1},    {"-1e-100", 0, -1},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        quantity q = P(t[i].in);
        int64_t v;
        cr_assert(quantity_scaled_value(&q, t[i].scale, &v), "%s at %d", t[i].in, t[i].scale);
        cr_expect_eq(v, t[i].want, "%s at %d: %lld", t[i].in, t[i].scale, (long long)v);
    }
    int64_t v;
    quantity q = P("9223372036854775808");
    cr_expect_not(quantity_scaled_value(&q, 0, &v));
    q = P("10E");
    cr_expect_not(quantity_scaled_value(&q, 0, &v));
    q = P("1G");
    cr_expect_not(quantity_scaled_value(&q, -12, &v));
}

Test(quantity, keeps_text_as_kubernetes_caches_it) {
    struct { const char *in; bool keep; } t[] = {
        {"0", true},      {"1", true},       {"+1", true},     {"007", true},    {"100m", true},
        {"1Ki", true},    {"9Ki", true},     {"1025Ki", true}, {"1E", true},     {"1e3", true},
        {"1.500", true},  {"1.100e3", true},
        {"1000", false},  {"0.5", false},    {"8Ki", false},   {"1024Ki", false}, {"1.5", false},
        {"1.5Gi", false}, {"100Ti", false},  {"-0", false},    {"00", false},    {"15e2", false},
        {"1234567890123456789", false},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        quantity q = P(t[i].in);
        cr_expect_eq(quantity_keeps_text(t[i].in, strlen(t[i].in), &q), t[i].keep, "%s", t[i].in);
    }
}
