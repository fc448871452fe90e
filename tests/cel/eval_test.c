/* eval_test.c — the checker and the evaluator: compile-time errors (undeclared
 * references, undefined fields, overloads, result type, homogeneous literals),
 * runtime error paths (overflow, division, conversions, indexes), error absorption
 * of && and ||, the quantity and semver libraries, includes(), and the DRA rules
 * (missing domain → empty map, missing attribute → "no such key", conversion errors,
 * cost and length limits, the program cache). */
#include <criterion/criterion.h>

#include "tests/cel/cel_helpers.h"

#include <stdlib.h>

#define EXPECT(expr, want) cr_expect_str_eq(fx_eval(&f, expr), want, "%s", expr)
#define EXPECT_PREFIX(expr, want)                                                                    \
    do {                                                                                             \
        const char *got_ = fx_eval(&f, expr);                                                        \
        cr_expect(strncmp(got_, want, strlen(want)) == 0, "%s => %s (want %s...)", expr, got_, want); \
    } while (0)

Test(checker, compile_errors) {
    fixture f;
    fx_init(&f);
    EXPECT("x == 1", "compile: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^");
    EXPECT_PREFIX("device.foo", "compile: ERROR: <input>:1:7: undefined field 'foo'");
    EXPECT_PREFIX("1 + 'a'", "compile: ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'");
    EXPECT_PREFIX("'a'.startsWith(1)", "compile: ERROR: <input>:1:15: found no matching overload for 'startsWith' applied to 'string.(int)'");
    EXPECT_PREFIX("[1, 'a']", "compile: ERROR: <input>:1:5: expected type 'int' but found 'string'");
    EXPECT("[dyn(1), dyn('a')].size()", "2");
    EXPECT_PREFIX("foo(1)", "compile: ERROR: <input>:1:4: undeclared reference to 'foo'");
    EXPECT_PREFIX("quantity('1') < quantity('2')", "compile: ERROR");
    fx_fini(&f);
}

Test(checker, selector_result_must_be_bool) {
    fixture f;
    fx_init(&f);
    err e;
    cr_expect_eq(fx_sel(&f, "1", &e), -2);
    cr_expect_str_eq(e.msg, "must evaluate to bool or the unknown type, not int");
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com'].mig", &e), CEL_FALSE);
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com'].models", &e), CEL_ERROR);
    /* cel-go's error from ConvertToNative(bool) is kept as the suffix (apiserver
     * pkg/cel/library compile: "CEL result of type %s could not be converted to bool: %v"). */
    cr_expect_str_eq(e.msg, "CEL result of type list could not be converted to bool: type conversion error from list to 'bool'");
    fx_fini(&f);
}

Test(eval, arithmetic_errors) {
    fixture f;
    fx_init(&f);
    EXPECT("9223372036854775807 + 1", "error: integer overflow");
    EXPECT("-9223372036854775808 - 1", "error: integer overflow");
    EXPECT("-9223372036854775808 / -1", "error: integer overflow");
    EXPECT("1 / 0", "error: division by zero");
    EXPECT("1 % 0", "error: modulus by zero");
    EXPECT("0u - 1u", "error: unsigned integer overflow");
    EXPECT("1.0 / 0.0", "+Inf");
    EXPECT("7 / -2", "-3");
    EXPECT("-7 % 3", "-1");
    EXPECT("int(1e19)", "compile: program instantiation failed: integer overflow");
    EXPECT("uint(-1)", "compile: program instantiation failed: unsigned integer overflow");
    EXPECT_PREFIX("int('x')", "compile: program instantiation failed:");
    EXPECT("[1, 2][2]", "error: index out of bounds: 2");
    EXPECT("{'a': 1}['b']", "error: no such key: b");
    fx_fini(&f);
}

Test(eval, conversions_and_strings) {
    fixture f;
    fx_init(&f);
    EXPECT("string(1.5)", "\"1.5\"");
    EXPECT("string(1e21)", "\"1e+21\"");
    EXPECT("string(123456789.0)", "\"1.23456789e+08\"");
    EXPECT("int('-42') + int(3.9)", "-39");
    EXPECT("uint('7')", "7u");
    EXPECT("double('2.5')", "2.5");
    EXPECT("bytes('abc') == b'abc'", "true");
    EXPECT("string(b'\\xff')", "compile: program instantiation failed: invalid UTF-8 in bytes, cannot convert to string");
    EXPECT("type(1) == int && type('a') == string && type(type(1)) == type", "true");
    EXPECT("size('héllo') == 5 && size(b'h\\xc3\\xa9') == 3", "true");
    EXPECT("'hello'.contains('ell') && 'hello'.startsWith('he') && 'hello'.endsWith('lo')", "true");
    EXPECT("'abc'.matches('^a.c$') && !'abc'.matches('^b')", "true");
    EXPECT("dyn(1) == 1.0 && dyn(1u) == 1 && dyn(2) < 2.5 && 1 < 2.5", "true");
    EXPECT_PREFIX("1 == 1.0", "compile: ERROR: <input>:1:3: found no matching overload for '_==_'");
    EXPECT("[1, 2] + [3]", "[1, 2, 3]");
    EXPECT("'ab' + 'cd' < 'abd'", "true");
    fx_fini(&f);
}

Test(eval, logic_absorbs_errors) {
    fixture f;
    fx_init(&f);
    EXPECT("false && 1 / 0 == 1", "false");
    EXPECT("1 / 0 == 1 && false", "false");
    EXPECT("true || 1 / 0 == 1", "true");
    EXPECT("1 / 0 == 1 || true", "true");
    EXPECT("true && 1 / 0 == 1", "error: division by zero");
    EXPECT("false || 1 / 0 == 1", "error: division by zero");
    EXPECT("1 / 0 == 1 ? 1 : 2", "error: division by zero");
    EXPECT("[1, 0].exists(x, 1 / x == 1)", "true");
    fx_fini(&f);
}

Test(libs, quantity) {
    fixture f;
    fx_init(&f);
    EXPECT("quantity('200M') == quantity('0.2G')", "true");
    EXPECT("quantity('50M').compareTo(quantity('50Mi'))", "-1");
    EXPECT("quantity('50Mi').isGreaterThan(quantity('50M'))", "true");
    EXPECT("quantity('1Ki').isLessThan(quantity('1024'))", "false");
    EXPECT("quantity('1.5').isInteger()", "false");
    EXPECT("quantity('3k').asInteger()", "3000");
    EXPECT("quantity('1.5').asInteger()", "error: cannot convert value to integer");
    EXPECT("quantity('1.5').asApproximateFloat()", "1.5");
    EXPECT("quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi')", "true");
    EXPECT("quantity('1').sub(2) == quantity('-1')", "true");
    EXPECT("sign(quantity('-5m'))", "-1");
    EXPECT("isQuantity('10Mo') || isQuantity('')", "false");
    EXPECT_PREFIX("quantity('200K')", "error: ");
    EXPECT("device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0", "true");
    fx_fini(&f);
}

Test(libs, semver) {
    fixture f;
    fx_init(&f);
    EXPECT("semver('1.2.3').major() + semver('1.2.3').minor() + semver('1.2.3').patch()", "6");
    EXPECT("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))", "true");
    EXPECT("semver('1.0.0+build') == semver('1.0.0')", "true");
    EXPECT("semver('v1.2', true) == semver('1.2.0')", "true");
    EXPECT("isSemver('1.0') || isSemver('01.0.0')", "false");
    EXPECT("isSemver('v1', true)", "true");
    EXPECT_PREFIX("semver('1.0')", "error: ");
    EXPECT("device.attributes['gpu.example.com'].cc.isGreaterThan(semver('8.0.0'))", "true");
    EXPECT("device.attributes['gpu.example.com'].cc.compareTo(semver('9.0.0'))", "0");
    fx_fini(&f);
}

Test(libs, includes_and_optionals) {
    fixture f;
    fx_init(&f);
    EXPECT("device.attributes['gpu.example.com'].models.includes('h100')", "true");
    EXPECT("device.attributes['gpu.example.com'].type.includes('gpu')", "true");
    EXPECT("lists_dummy == 1", "compile: ERROR: <input>:1:1: undeclared reference to 'lists_dummy' (in container '')\n | lists_dummy == 1\n | ^");
    /* 49 elements */
    char buf[512] = "[";
    for (int i = 0; i < 49; i++) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? "," : "", i);
    strcat(buf, "].includes(3)");
    EXPECT(buf, "error: 'includes' function cannot be applied to lists longer than 48 values");
    EXPECT("optional.ofNonZeroValue(0).hasValue()", "false");
    EXPECT("optional.none().orValue(3)", "3");
    EXPECT("optional.of(1).or(optional.of(2)).value()", "1");
    EXPECT("optional.none().value()", "error: optional.none() dereference");
    EXPECT("[1, 2].first().value() + [1, 2].last().value()", "3");
    EXPECT("optional.unwrap([optional.of(1), optional.none()])", "[1]");
    fx_fini(&f);
}

Test(dra, device_maps) {
    fixture f;
    fx_init(&f);
    err e;
    cr_expect_eq(fx_sel(&f, "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].type == 'gpu'", &e),
                 CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com'].nope == 1", &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "no such key: nope");
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com']['nope'] == 1", &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "no such key: nope");
    /* an unknown domain is an empty map, not an error, but `in` tells the truth */
    cr_expect_eq(fx_sel(&f, "device.attributes['other.example.com'].size() == 0", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "'other.example.com' in device.attributes", &e), CEL_FALSE);
    cr_expect_eq(fx_sel(&f, "'resource.kubernetes.io' in device.attributes", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "device.attributes['other.example.com'].x == 1", &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "no such key: x");
    cr_expect_eq(fx_sel(&f, "has(device.attributes['gpu.example.com'].index)", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "has(device.attributes['gpu.example.com'].nope)", &e), CEL_FALSE);
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com'].?nope.orValue(1) == 1", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "'memory' in device.capacity['gpu.example.com']", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "device.driver == 'nic' && device.attributes['gpu.example.com'].nope", &e), CEL_FALSE);
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com'].exists_one(x, x == 'type')", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "device.attributes.exists(d, d == 'resource.kubernetes.io')", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "device.allowMultipleAllocations == false", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "cel.bind(d, device.attributes['gpu.example.com'], d.index < 4 && !d.mig)", &e), CEL_TRUE);
    cr_expect_eq(fx_sel(&f, "device.attributes['gpu.example.com'].index in [1, 3]", &e), CEL_TRUE);
    fx_fini(&f);
}

Test(dra, conversion_error_fails_every_evaluation) {
    fixture f;
    fx_init(&f);
    f.dev.conv_error = "attribute bad: unsupported attribute value";
    err e;
    cr_expect_eq(fx_sel(&f, "true", &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "attribute bad: unsupported attribute value");
    fx_fini(&f);
}

Test(dra, limits) {
    fixture f;
    fx_init(&f);
    err e;
    char *big = malloc(CEL_MAX_EXPRESSION_LEN + 2);
    memset(big, ' ', CEL_MAX_EXPRESSION_LEN + 1);
    big[0] = 't', big[1] = 'r', big[2] = 'u', big[3] = 'e';
    big[CEL_MAX_EXPRESSION_LEN + 1] = '\0';
    cr_expect_null(cel_compile(f.env, big, strlen(big), &e));
    cr_expect_str_eq(e.msg, "Too long: may not be more than 10240 bytes");
    big[CEL_MAX_EXPRESSION_LEN] = '\0';
    cel_program *p = cel_compile(f.env, big, strlen(big), &e);
    cr_expect_not_null(p);
    cel_program_free(p);
    free(big);
    const char *L = "[1,2,3,4,5,6,7,8,9,10]";
    char bomb[1024];
    snprintf(bomb, sizeof bomb, "%s.all(a, %s.all(b, %s.all(c, %s.all(d, %s.all(e, %s.all(f, %s.all(g, true)))))))", L, L,
             L, L, L, L, L);
    cr_expect_eq(fx_sel(&f, bomb, &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "operation cancelled: actual cost limit exceeded");
    snprintf(bomb, sizeof bomb, "%s.map(a, %s.map(b, %s.map(c, %s.map(d, %s.map(e, %s.map(f, 'xxxxxxxx')))))).size() > 0",
             L, L, L, L, L, L);
    cr_expect_eq(fx_sel(&f, bomb, &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "operation cancelled: actual cost limit exceeded");
    /* the error is not absorbed by && */
    snprintf(bomb, sizeof bomb, "false && %s.all(a, %s.all(b, %s.all(c, %s.all(d, %s.all(e, %s.all(f, %s.all(g, true)))))))",
             L, L, L, L, L, L, L);
    cr_expect_eq(fx_sel(&f, bomb, &e), CEL_FALSE);
    fx_fini(&f);
}

/* size() of a string is O(n) but costs 1 in cel-go: a long string sized in a long
 * loop stays inside the cost budget; the hidden work counter stops it quickly. */
Test(dra, size_of_long_string_in_long_loop_stops) {
    fixture f;
    fx_init(&f);
    err e;
    char expr[4096], inner[2048];
    snprintf(inner, sizeof inner, "lists.range(200000).map(i, v14.size()).size() > 0");
    for (int k = 14; k >= 1; k--) {
        char tmp[sizeof inner];
        int w = snprintf(tmp, sizeof tmp, "cel.bind(v%d, v%d + v%d, ", k, k - 1, k - 1);
        cr_assert(w > 0 && strlen(inner) + (size_t)w + 2 < sizeof tmp);
        memcpy(tmp + w, inner, strlen(inner));
        memcpy(tmp + w + strlen(inner), ")", 2);
        memcpy(inner, tmp, sizeof inner);
    }
    snprintf(expr, sizeof expr, "cel.bind(v0, '%s', %s)",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", inner);
    cr_expect_eq(fx_sel(&f, expr, &e), CEL_ERROR);
    cr_expect_str_eq(e.msg, "operation cancelled: actual cost limit exceeded");
    /* ordinary sizes are unaffected */
    cr_expect_eq(fx_sel(&f, "lists.range(1000).map(i, 'abc'.size()).size() == 1000", &e), CEL_TRUE);
    fx_fini(&f);
}

Test(dra, cache) {
    fixture f;
    fx_init(&f);
    cel_cache *c = cel_cache_new(f.env);
    err e;
    const char *s = "device.driver == 'gpu.example.com'";
    const cel_program *p1 = cel_cache_get(c, s, strlen(s), &e);
    const cel_program *p2 = cel_cache_get(c, s, strlen(s), &e);
    cr_expect_not_null(p1);
    cr_expect_eq(p1, p2);
    cr_expect(cel__program_returns_bool(p1));
    cr_expect_null(cel_cache_get(c, "nope", 4, &e));
    cr_expect(strstr(e.msg, "undeclared reference to 'nope'") != NULL);
    cr_expect_eq(cel_eval_bool(p1, &f.dev, f.ctx, &e), CEL_TRUE);
    cel_cache_free(c);
    fx_fini(&f);
}

Test(dra, eval_attr) {
    fixture f;
    fx_init(&f);
    arena a;
    arena_init(&a, 0);
    err e;
    const char *s = "device.attributes['gpu.example.com'].models.map(m, m + '-x')";
    cel_program *p = cel_compile(f.any, s, strlen(s), &e);
    cr_assert_not_null(p, "%s", e.msg);
    cel_attr out;
    cr_expect_not(cel_eval_attr(p, &f.dev, f.ctx, false, &a, &out, &e));
    cr_expect(cel_eval_attr(p, &f.dev, f.ctx, true, &a, &out, &e));
    cr_expect_eq(out.kind, CEL_ATTR_STRINGS);
    cr_expect_eq(out.u.list->count, 2);
    cr_expect_eq(out.u.list->strs[1].len, 6);
    cel_program_free(p);
    arena_free(&a);
    fx_fini(&f);
}

/* Many threads share one cache and one set of programs; each has its own context. */
#include <pthread.h>

typedef struct cache_job {
    fixture *f;
    cel_cache *cache;
    const cel_program *progs[20];
    int trues;
} cache_job;

static void *cache_worker(void *arg) {
    cache_job *j = arg;
    cel_eval_ctx *x = cel_eval_ctx_new();
    err e;
    for (int round = 0; round < 50; round++) {
        for (int k = 0; k < 20; k++) {
            char expr[128];
            snprintf(expr, sizeof expr, "device.attributes['gpu.example.com'].index < %d", k);
            const cel_program *p = cel_cache_get(j->cache, expr, strlen(expr), &e);
            if (round == 0) j->progs[k] = p;
            else if (p != j->progs[k]) j->trues = -1000000;
            if (cel_eval_bool(p, &j->f->dev, x, &e) == CEL_TRUE) j->trues++;
        }
    }
    cel_eval_ctx_free(x);
    return NULL;
}

Test(dra, cache_shared_by_threads) {
    fixture f;
    fx_init(&f);
    cel_cache *c = cel_cache_new(f.env);
    cache_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].f = &f;
        jobs[i].cache = c;
        pthread_create(&th[i], NULL, cache_worker, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(jobs[i].trues, 50 * 16, "thread %d", i);   /* index 3 < k for k = 4..19 */
        for (int k = 0; k < 20; k++) cr_expect_eq(jobs[i].progs[k], jobs[0].progs[k]);
    }
    cel_cache_free(c);
    fx_fini(&f);
}

Test(parser, long_operator_chains_hit_the_depth_limit) {
    fixture f;
    fx_init(&f);
    char buf[4096] = "1";
    for (int i = 0; i < 300; i++) strcat(buf, "+1");
    const char *r = fx_eval(&f, buf);
    cr_expect(strstr(r, "recursion limit") != NULL, "%s", r);
    char ok[1024] = "1";
    for (int i = 0; i < 100; i++) strcat(ok, "+1");
    cr_expect_str_eq(fx_eval(&f, ok), "101");
    fx_fini(&f);
}

Test(libs, timestamps_and_durations) {
    fixture f;
    fx_init(&f);
    EXPECT("timestamp('2009-02-13T23:31:30Z')", "timestamp(\"2009-02-13T23:31:30Z\")");
    EXPECT("int(timestamp('2009-02-13T23:31:30Z'))", "1234567890");
    EXPECT("string(timestamp('2009-02-13T23:31:30.120+01:00'))", "\"2009-02-13T22:31:30.12Z\"");
    EXPECT("string(duration('1h30m0.5s'))", "\"5400.5s\"");
    EXPECT("duration('-1.5s') < duration('0s')", "true");
    EXPECT("timestamp('2009-02-13T23:00:00Z') + duration('1h') == timestamp('2009-02-14T00:00:00Z')", "true");
    EXPECT("timestamp('2009-02-14T00:00:00Z') - timestamp('2009-02-13T23:00:00Z') == duration('3600s')", "true");
    EXPECT("timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", "5");
    EXPECT("timestamp('2009-02-13T23:31:30Z').getDayOfYear()", "43");
    EXPECT("timestamp('2009-02-13T23:31:30Z').getHours('-02:30')", "21");
    EXPECT("timestamp('2009-07-01T12:00:00Z').getHours('Asia/Kathmandu')", "17");
    /* beyond the zone file's transitions, the POSIX rule in its footer decides */
    EXPECT("timestamp('2040-07-01T12:00:00Z').getHours('America/New_York')", "8");
    EXPECT("timestamp('2040-01-01T12:00:00Z').getHours('America/New_York')", "7");
    EXPECT("timestamp('2040-01-01T00:00:00Z').getHours('Australia/Sydney')", "11");
    EXPECT("timestamp('2040-07-01T00:00:00Z').getHours('Australia/Sydney')", "10");
    EXPECT("timestamp('2040-07-01T00:00:00Z').getMinutes('Asia/Kathmandu')", "45");
    EXPECT("timestamp('2040-03-11T06:59:59Z').getHours('America/New_York')", "1");
    EXPECT("timestamp('2040-03-11T07:00:00Z').getHours('America/New_York')", "3");
    EXPECT("duration('3730s').getMinutes()", "62");
    EXPECT_PREFIX("timestamp('9999-12-31T23:59:59Z') + duration('1s')", "error: range error");
    EXPECT_PREFIX("timestamp('2009-02-30T00:00:00Z')", "compile: ERROR: <input>:1:11: invalid timestamp argument");
    EXPECT_PREFIX("duration('1d')", "compile: ERROR: <input>:1:10: invalid duration argument");
    EXPECT("type(duration('1s')) == google.protobuf.Duration", "true");
    fx_fini(&f);
}

Test(dra, enhance_runtime_error) {
    err e;
    err_clear(&e);
    err_set(&e, "no such key: memory");
    cel_enhance_runtime_error(&e);
    cel_enhance_runtime_error(&e);
    cr_expect_str_eq(e.msg, "no such key: memory. consider using CEL optional chaining (.? followed by orValue()) or "
                            "guarding the check with has() for optional fields");
    err_set(&e, "division by zero");
    cel_enhance_runtime_error(&e);
    cr_expect_str_eq(e.msg, "division by zero");
}

Test(dra, eval_bool_many_matches_single_evaluations) {
    fixture f;
    fx_init(&f);
    cel_device devs[9];
    for (int i = 0; i < 9; i++) {
        devs[i] = f.dev;
        if (i % 3 == 1) devs[i].nattrs = 1;                 /* only "type": index missing → error */
        if (i % 3 == 2) devs[i].driver_id = intern_cstr(f.names, "nic.example.com");
    }
    err e;
    const char *s = "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].index == 3";
    cel_program *p = cel_compile(f.env, s, strlen(s), &e);
    cr_assert_not_null(p, "%s", e.msg);
    cel_result out[9];
    size_t first = 99;
    err_clear(&e);
    size_t trues = cel_eval_bool_many(p, devs, 9, f.ctx, out, &e, &first);
    cr_expect_eq(trues, 3);
    cr_expect_eq(first, 1);
    cr_expect_str_eq(e.msg, "no such key: index");
    for (int i = 0; i < 9; i++) {
        err e2;
        cr_expect_eq(out[i], cel_eval_bool(p, &devs[i], f.ctx, &e2), "device %d", i);
    }
    cel_program_free(p);
    fx_fini(&f);
}

/* `dralloc cel eval` prints results whole: cel_eval_format_alloc sizes its buffer
 * from the text (cel__eval_format into a fixed buffer cut it at 16,383 bytes). */
Test(dra, format_alloc_prints_long_results_whole) {
    fixture f;
    fx_init(&f);
    err e;
    err_clear(&e);
    const char *expr = "lists.range(5000).map(i, 'abcdefgh')";
    cel_program *p = cel_compile(f.any, expr, strlen(expr), &e);
    cr_assert_not_null(p, "%s", e.msg);
    char *text = cel_eval_format_alloc(p, &f.dev, f.ctx, &e);
    cr_assert_not_null(text, "%s", e.msg);
    /* "[" + 5000 × "\"abcdefgh\"" + 4999 × ", " + "]" */
    cr_expect_eq(strlen(text), 1 + 5000 * 10 + 4999 * 2 + 1);
    cr_expect_eq(strncmp(text, "[\"abcdefgh\", ", 13), 0);
    cr_expect_eq(strcmp(text + strlen(text) - 13, ", \"abcdefgh\"]"), 0);
    free(text);
    cel_program_free(p);
    expr = "1 / 0";
    p = cel_compile(f.any, expr, strlen(expr), &e);
    cr_expect_null(cel_eval_format_alloc(p, &f.dev, f.ctx, &e));
    cr_expect_str_eq(e.msg, "division by zero");
    cel_program_free(p);
    fx_fini(&f);
}

/* Maps past CEL_MAP_LINEAR entries are hashed: lookups keep CEL's key equality across
 * int, uint and double, and equality ignores insertion order. */
Test(eval, large_maps_keep_key_semantics) {
    fixture f;
    fx_init(&f);
    const char *M = "lists.range(100).transformMap(i, v, v * 10)";
    char e[512];
    snprintf(e, sizeof e, "%s[50]", M);
    EXPECT(e, "500");
    snprintf(e, sizeof e, "%s[dyn(50u)]", M);
    EXPECT(e, "500");
    snprintf(e, sizeof e, "%s[dyn(50.0)]", M);
    EXPECT(e, "500");
    snprintf(e, sizeof e, "dyn(99.0) in %s", M);
    EXPECT(e, "true");
    snprintf(e, sizeof e, "dyn(50.5) in %s || dyn(100) in %s || dyn(-1) in %s", M, M, M);
    EXPECT(e, "false");
    snprintf(e, sizeof e, "%s == lists.range(100).reverse().transformMapEntry(i, v, {v: v * 10})", M);
    EXPECT(e, "true");
    snprintf(e, sizeof e, "%s == lists.range(100).transformMap(i, v, v == 42 ? 0 : v * 10)", M);
    EXPECT(e, "false");
    snprintf(e, sizeof e, "%s.size()", M);
    EXPECT(e, "100");
    /* string keys, and a repeated key in a literal is still an error */
    EXPECT("lists.range(50).transformMapEntry(i, v, {string(v): v})['42']", "42");
    EXPECT_PREFIX("{'a': 1, 'b': 2, 'c': 3, 'd': 4, 'e': 5, 'f': 6, 'g': 7, 'h': 8, 'i': 9, 'j': 10, 'a': 11}",
                  "error: Failed with repeated key");
    fx_fini(&f);
}
