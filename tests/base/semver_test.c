/* semver_test.c — blang/semver v4 Parse (valid forms, each error text), SemVer 2.0
 * precedence (the semver.org chain, numeric vs alphanumeric identifiers, build
 * metadata ignored), formatting, and Kubernetes' CEL semver(s, true) normalisation. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "base/arena.h"
#include "base/semver.h"

static semver V(const char *s) {
    semver v;
    err e;
    err_clear(&e);
    cr_assert(semver_parse(s, strlen(s), &v, &e), "parse %s: %s", s, e.msg);
    return v;
}

static void expect_error(const char *s, const char *msg) {
    semver v;
    err e;
    err_clear(&e);
    cr_expect_not(semver_parse(s, strlen(s), &v, &e), "%s parsed unexpectedly", s);
    cr_expect_str_eq(e.msg, msg, "%s: got message %s", s, e.msg);
}

static void expect_roundtrip(const char *s) {
    semver v = V(s);
    char buf[128];
    size_t n = semver_format(&v, buf, sizeof buf);
    cr_expect_str_eq(buf, s);
    cr_expect_eq(n, strlen(s));
}

static int C(const char *a, const char *b) {
    semver x = V(a), y = V(b);
    return semver_cmp(&x, &y);
}

Test(semver, parse_fields) {
    semver v = V("1.2.3");
    cr_expect_eq(v.major, 1);
    cr_expect_eq(v.minor, 2);
    cr_expect_eq(v.patch, 3);
    cr_expect_null(v.pre);
    cr_expect_null(v.build);

    const char *s = "10.20.30-rc.1+build.5";
    v = V(s);
    cr_expect_eq(v.major, 10);
    cr_expect_eq(v.minor, 20);
    cr_expect_eq(v.patch, 30);
    cr_assert_not_null(v.pre);
    cr_expect_eq(v.pre_len, 4);
    cr_expect(memcmp(v.pre, "rc.1", 4) == 0);
    cr_expect_eq(v.pre, s + 9, "pre points into the input");
    cr_assert_not_null(v.build);
    cr_expect_eq(v.build_len, 7);
    cr_expect(memcmp(v.build, "build.5", 7) == 0);

    v = V("18446744073709551615.0.0");
    cr_expect_eq(v.major, UINT64_MAX);
    v = V("1.0.0+only-build");
    cr_expect_null(v.pre);
    cr_expect_eq(v.build_len, 10);
    /* a '-' after '+' belongs to the build metadata */
    v = V("1.0.0+build-1");
    cr_expect_null(v.pre);
}

/* Parameters are copied by value into the test process: strings are inline. */
typedef struct sv_case {
    char in[64], out[96];
} sv_case;

ParameterizedTestParameters(semver, valid_round_trip) {
    static sv_case cases[] = {
        {"0.0.0", ""},
        {"1.0.0-alpha", ""},
        {"1.0.0-alpha.1", ""},
        {"1.0.0-0.3.7", ""},
        {"1.0.0-x.7.z.92", ""},
        {"1.0.0-x-y-z.--", ""},
        {"1.0.0-alpha+001", ""},
        {"1.0.0+20130313144700", ""},
        {"1.0.0-beta+exp.sha.5114f85", ""},
        {"1.0.0+21AF26D3----117B344092BD", ""},
        {"1.2.3----RC-SNAPSHOT.12.9.1--.12+788", ""},
        {"1.0.0-0A.is.legal", ""},
        {"2.0.0-rc.1+build.123", ""},
        {"99999999999999999.99999999999999999.99999999999999999", ""},
    };
    return cr_make_param_array(sv_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(sv_case *c, semver, valid_round_trip) { expect_roundtrip(c->in); }

ParameterizedTestParameters(semver, invalid) {
    static sv_case cases[] = {
        /* structure errors */
        {"", "Version string empty"},
        {"1", "No Major.Minor.Patch elements found"},
        {"1.0", "No Major.Minor.Patch elements found"},
        {"200K", "No Major.Minor.Patch elements found"},
        {"v1.0.0", "Invalid character(s) found in major number \"v1\""},
        {" 1.2.3", "Invalid character(s) found in major number \" 1\""},
        {"1.a.3", "Invalid character(s) found in minor number \"a\""},
        {"1.2.x", "Invalid character(s) found in patch number \"x\""},
        {"1.2.3.4", "Invalid character(s) found in patch number \"3.4\""},
        {"1.2.3 ", "Invalid character(s) found in patch number \"3 \""},
        {"1.2.\t", "Invalid character(s) found in patch number \"\\t\""},
        /* number errors */
        {"01.2.3", "Major number must not contain leading zeroes \"01\""},
        {"1.02.3", "Minor number must not contain leading zeroes \"02\""},
        {"1.2.03", "Patch number must not contain leading zeroes \"03\""},
        {"18446744073709551616.0.0", "strconv.ParseUint: parsing \"18446744073709551616\": value out of range"},
        {".1.2", "strconv.ParseUint: parsing \"\": invalid syntax"},
        {"1..2", "strconv.ParseUint: parsing \"\": invalid syntax"},
        {"1.2.-rc", "strconv.ParseUint: parsing \"\": invalid syntax"},
        /* prerelease and build errors */
        {"1.2.3-", "Prerelease is empty"},
        {"1.2.3-rc..1", "Prerelease is empty"},
        {"1.2.3-+b", "Prerelease is empty"},
        {"1.2.3-01", "Numeric PreRelease version must not contain leading zeroes \"01\""},
        {"1.2.3-rc_1", "Invalid character(s) found in prerelease \"rc_1\""},
        {"1.2.3-a\"b", "Invalid character(s) found in prerelease \"a\\\"b\""},
        {"1.2.3-rc.99999999999999999999", "strconv.ParseUint: parsing \"99999999999999999999\": value out of range"},
        {"1.2.3+", "Build meta data is empty"},
        {"1.2.3+a..b", "Build meta data is empty"},
        {"1.2.3+a_b", "Invalid character(s) found in build meta data \"a_b\""},
        /* Go's %q: printable UTF-8 kept, invalid bytes as \x escapes */
        {"1.2.3-\xc3\xa9", "Invalid character(s) found in prerelease \"\xc3\xa9\""},
        {"1.2.3-a\xff", "Invalid character(s) found in prerelease \"a\\xff\""},
        /* checks run major, minor, patch, prerelease, build */
        {"1.2.x-01", "Invalid character(s) found in patch number \"x\""},
        {"1.2.3-01+a_b", "Numeric PreRelease version must not contain leading zeroes \"01\""},
    };
    return cr_make_param_array(sv_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(sv_case *c, semver, invalid) { expect_error(c->in, c->out); }

Test(semver, build_may_have_leading_zeros) {
    semver v = V("1.2.3+01.007");
    cr_expect_eq(v.build_len, 6);
    cr_expect_null(v.pre);
}



Test(semver, precedence_chain_from_semver_org) {
    const char *chain[] = {
        "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
        "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "2.1.0", "2.1.1",
        "10.0.0",
    };
    size_t n = sizeof chain / sizeof *chain;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int want = i < j ? -1 : i > j ? 1 : 0;
            cr_expect_eq(C(chain[i], chain[j]), want, "%s vs %s", chain[i], chain[j]);
        }
}

Test(semver, identifier_ordering) {
    cr_expect_eq(C("1.0.0-1", "1.0.0-a"), -1);         /* numeric below alphanumeric */
    cr_expect_eq(C("1.0.0-a", "1.0.0-B"), 1);          /* ASCII: 'B' < 'a' */
    cr_expect_eq(C("1.0.0-alpha", "1.0.0-alpha0"), -1); /* prefix is smaller */
    cr_expect_eq(C("1.0.0-9", "1.0.0-10"), -1);         /* numbers by value */
    cr_expect_eq(C("1.0.0-18446744073709551615", "1.0.0-9"), 1);
    cr_expect_eq(C("1.0.0-rc.1", "1.0.0-rc.1.0"), -1);  /* more identifiers wins */
    cr_expect_eq(C("1.0.0-a-b", "1.0.0-a"), 1);
    cr_expect_eq(C("1.0.0-1a", "1.0.0-2"), 1);          /* "1a" is alphanumeric */
    cr_expect_eq(C("18446744073709551615.0.0", "18446744073709551614.99.99"), 1);
    cr_expect_eq(C("0.10.0", "0.9.0"), 1);
}

Test(semver, build_metadata_ignored) {
    cr_expect_eq(C("1.0.0+a", "1.0.0+b"), 0);
    cr_expect_eq(C("1.0.0+a", "1.0.0"), 0);
    cr_expect_eq(C("1.0.0-rc.1+x.y", "1.0.0-rc.1"), 0);
    cr_expect_eq(C("1.0.0-rc.1+zzz", "1.0.0-rc.2+aaa"), -1);
}

/* Only the numeric fields and the error of *v / *e are used after the arena goes. */
static bool K(const char *s, bool norm, semver *v, err *e) {
    arena a;
    arena_init(&a, 0);
    err_clear(e);
    bool ok = semver_parse_k8s(s, strlen(s), norm, &a, v, e);
    arena_free(&a);
    return ok;
}

static void expect_norm(const char *in, const char *want) {
    semver v;
    err e;
    arena a;
    arena_init(&a, 0);
    err_clear(&e);
    cr_assert(semver_parse_k8s(in, strlen(in), true, &a, &v, &e), "%s: %s", in, e.msg);
    char buf[128];
    semver_format(&v, buf, sizeof buf);
    cr_expect_str_eq(buf, want, "%s normalised to %s", in, buf);
    arena_free(&a);
}

static void expect_norm_error(const char *in, const char *msg) {
    semver v;
    err e;
    cr_expect_not(K(in, true, &v, &e), "%s normalised unexpectedly", in);
    cr_expect_str_eq(e.msg, msg, "%s: %s", in, e.msg);
}

ParameterizedTestParameters(semver, normalize) {
    static sv_case cases[] = {
        {"v1", "1.0.0"},
        {"1", "1.0.0"},
        {"1.2", "1.2.0"},
        {"v1.2", "1.2.0"},
        {"01.02.03", "1.2.3"},
        {"v01.02.03", "1.2.3"},
        {"1.2.00", "1.2.0"},
        {"00", "0.0.0"},
        {"1.0.0", "1.0.0"},
        {"1.2.03-rc.1", "1.2.3-rc.1"},
        {"1.2.0-rc", "1.2.0-rc"},
        {"1.2.00-rc", "1.2.0-rc"},
        {"v1.2.3+build.7", "1.2.3+build.7"},
    };
    return cr_make_param_array(sv_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(sv_case *c, semver, normalize) { expect_norm(c->in, c->out); }

ParameterizedTestParameters(semver, normalize_invalid) {
    static sv_case cases[] = {
        {"1.0-rc", "short version cannot contain PreRelease/Build meta data"},
        {"1+b", "short version cannot contain PreRelease/Build meta data"},
        {"v2-alpha", "short version cannot contain PreRelease/Build meta data"},
        /* only the leading zeros of each part go, not those inside the prerelease */
        {"1.2.3-01", "Numeric PreRelease version must not contain leading zeroes \"01\""},
        /* one "v" only; and a part that does not start with a digit gets a "0" in
        * front (Kubernetes' normalizeAndParse does this too) */
        {"vv1.0.0", "Invalid character(s) found in major number \"0v1\""},
        {"", "strconv.ParseUint: parsing \"\": invalid syntax"},
        {"1.2.3.4", "Invalid character(s) found in patch number \"3.4\""},
    };
    return cr_make_param_array(sv_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(sv_case *c, semver, normalize_invalid) { expect_norm_error(c->in, c->out); }

Test(semver, k8s_without_normalize_is_strict) {
    semver v;
    err e;
    cr_expect_not(K("v1.0.0", false, &v, &e));
    cr_expect_str_eq(e.msg, "Invalid character(s) found in major number \"v1\"");
    cr_expect_not(K("01.1.1", false, &v, &e));
    cr_expect_str_eq(e.msg, "Major number must not contain leading zeroes \"01\"");
    cr_expect(K("1.1.1", false, &v, &e));
    cr_expect_eq(v.minor, 1);
}

Test(semver, format_truncates_like_snprintf) {
    semver v = V("123.456.789-rc.1+b");
    char small[6];
    size_t n = semver_format(&v, small, sizeof small);
    cr_expect_eq(n, strlen("123.456.789-rc.1+b"));
    cr_expect_str_eq(small, "123.4");
}
