/* test_runtime_cost.c — the runtime cost of each size-dependent function and
 * operator is what Kubernetes' scheduler charges: cel-go's cost tracker
 * (interpreter/runtimecost.go costCall, ext/lists.go and ext/sets.go trackers) with
 * the apiserver's CallCost (staging/src/k8s.io/apiserver/pkg/cel/library/cost.go),
 * against the runtime limit of 1,000,000. Figures below are computed by hand from
 * those rules; "size" is cel-go's actualSize (code points of a string, bytes of
 * bytes, entries of a list or map).
 *
 * This evaluator charges nothing for reaching a device attribute (cel-go charges its
 * identifiers and selections; those are charged per comprehension iteration here),
 * so a call whose arguments are attributes costs exactly the call's figure. Values
 * that need building (maps) are measured as the difference of two expressions.
 *
 * The second half bounds time: expressions that do a lot of work per unit of cost
 * (map equality, transformMap over large ranges) finish fast, inside the limit or
 * at it. */
#include <criterion/criterion.h>

#include "tests/cel/cel_helpers.h"
#include "cel/program_internal.h"

#include <stdlib.h>
#include <time.h>

typedef struct cost_fx {
    fixture f;
    cel_attr attrs[16];
    char longs[101];   /* "a" × 100 */
    char utf[41];      /* "é" × 20: 40 bytes, 20 code points */
    cel_str s_long, s_utf, s_ip, s_cidr, s_url;
    int64_t ints[25];
    cel_attr_list int_list;
} cost_fx;

static void cfx_init(cost_fx *c) {
    fixture *f = &c->f;
    fx_init(f);
    memcpy(c->attrs, f->attrs, sizeof f->attrs);
    uint32_t n = f->dev.nattrs;
    uint32_t dom = intern_cstr(f->names, "gpu.example.com");
    memset(c->longs, 'a', 100);
    c->longs[100] = '\0';
    for (int i = 0; i < 20; i++) memcpy(c->utf + 2 * i, "\xc3\xa9", 2);
    c->utf[40] = '\0';
    c->s_long = (cel_str){.s = c->longs, .len = 100};
    c->s_utf = (cel_str){.s = c->utf, .len = 40};
    c->s_ip = (cel_str){.s = "10.1.2.3", .len = 8};
    c->s_cidr = (cel_str){.s = "10.1.0.0/16", .len = 11};
    c->s_url = (cel_str){.s = "https://example.com/a/b?c=d", .len = 27};
    struct {
        const char *name;
        const cel_str *s;
    } strs[] = {{"long", &c->s_long}, {"utf", &c->s_utf}, {"ipaddr", &c->s_ip}, {"cidrstr", &c->s_cidr},
                {"link", &c->s_url}};
    for (size_t i = 0; i < ARRAY_SIZE(strs); i++) {
        c->attrs[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, strs[i].name), .kind = CEL_ATTR_STRING};
        c->attrs[n++].u.s = strs[i].s;
    }
    for (int i = 0; i < 25; i++) c->ints[i] = i;
    c->int_list = (cel_attr_list){.count = 25, .ints = c->ints};
    c->attrs[n] = (cel_attr){.domain = dom, .name = intern_cstr(f->names, "ints"), .kind = CEL_ATTR_INTS};
    c->attrs[n++].u.list = &c->int_list;
    cr_assert_leq(n, ARRAY_SIZE(c->attrs));
    f->dev.attrs = c->attrs;
    f->dev.nattrs = n;
}

/* The runtime cost of one evaluation of expr (any result, errors included). */
static uint64_t cost_of(cost_fx *c, const char *expr) {
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(c->f.any, expr, strlen(expr), &e);
    cr_assert_not_null(p, "%s: %s", expr, e.msg);
    char buf[256];
    cel__eval_format(p, &c->f.dev, c->f.ctx, buf, sizeof buf, &e);
    uint64_t cost = c->f.ctx->cost;
    cel_program_free(p);
    return cost;
}

#define A "device.attributes['gpu.example.com']."
#define COST(expr, want)                                                                            \
    do {                                                                                            \
        uint64_t got_ = cost_of(&c, expr);                                                          \
        cr_expect_eq(got_, (uint64_t)(want), "cost of %s: %llu, want %llu", expr,                  \
                     (unsigned long long)got_, (unsigned long long)(want));                         \
    } while (0)
#define COST_DIFF(with, without, want)                                                              \
    do {                                                                                            \
        uint64_t a_ = cost_of(&c, with), b_ = cost_of(&c, without);                                 \
        cr_expect_eq(a_ - b_, (uint64_t)(want), "cost of %s minus %s: %llu, want %llu", with, without, \
                     (unsigned long long)(a_ - b_), (unsigned long long)(want));                    \
    } while (0)

/* cel-go costCall defaults (interpreter/runtimecost.go). */
Test(runtime_cost, cel_go_standard_overloads) {
    cost_fx c;
    cfx_init(&c);
    /* starts_with_string / ends_with_string: ceil(0.1 × size of the receiver) */
    COST(A "long.startsWith('a')", 10);
    COST(A "long.endsWith('b')", 10);
    COST(A "utf.startsWith('x')", 2);   /* 20 code points, not 40 bytes */
    /* contains_string: ceil(0.1 × 100) × ceil(0.1 × 11) */
    COST(A "long.contains('aaaaaaaaaaa')", 10 * 2);
    /* equals / not_equals: ceil(0.1 × min size) */
    COST(A "long == " A "long", 10);
    COST(A "long != " A "utf", 2);
    COST(A "ints == " A "ints", 3);                       /* lists of 25 */
    COST(A "index == 3", 1);                              /* scalars */
    COST(A "long == 'a'", 1);
    COST(A "long == '" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "'", 5);   /* min(100, 49) */
    /* less_string & co.: ceil(0.1 × min size) */
    COST(A "long < " A "utf", 2);
    COST(A "index < 4", 1);
    /* in_list: the list's size (not a tenth of it); in_map: 1 */
    COST(A "index in " A "ints", 25);
    COST_DIFF("cel.bind(m, {1: 2, 3: 4}, 5 in m)", "cel.bind(m, {1: 2, 3: 4}, true)", 1);
    /* add_string: ceil(0.1 × (100 + 20)) */
    COST(A "long + " A "utf", 12);
    /* string_to_bytes ceil(0.1 × code points), bytes_to_string ceil(0.1 × bytes) */
    COST("bytes(" A "utf)", 2);
    COST("string(bytes(" A "long))", 10 + 10);
    /* matches_string: ceil(0.1 × (1 + 100)) × ceil(0.25 × 4) */
    COST(A "long.matches('a+b*')", 11 * 1);
    /* fixed 1: size, add_list, charAt (no tracker) */
    COST("size(" A "long)", 1);
    COST(A "long.charAt(5)", 1);
    fx_fini(&c.f);
}

/* Map equality costs ceil(0.1 × entries), as list equality; it used to be free. */
Test(runtime_cost, map_equality) {
    cost_fx c;
    cfx_init(&c);
    COST_DIFF("cel.bind(m, lists.range(25).transformMap(i, v, v), m == m)",
              "cel.bind(m, lists.range(25).transformMap(i, v, v), true)", 3);
    COST_DIFF("cel.bind(m, lists.range(20000).transformMap(i, v, v), m == m)",
              "cel.bind(m, lists.range(20000).transformMap(i, v, v), true)", 2000);
    fx_fini(&c.f);
}

/* Kubernetes' CallCost (apiserver pkg/cel/library/cost.go), by function name. */
Test(runtime_cost, kubernetes_call_cost) {
    cost_fx c;
    cfx_init(&c);
    /* quantity, isQuantity, semver, isSemver: ceil(0.1 × size); charged even when the
     * string does not parse (isQuantity used to be free) */
    COST("isQuantity(" A "long)", 10);
    COST("quantity(" A "long)", 10);
    COST("isSemver(" A "long)", 10);
    COST("semver(" A "utf)", 2);
    /* lowerAscii, upperAscii, substring, trim, url: ceil(0.1 × size) */
    COST(A "long.lowerAscii()", 10);
    COST(A "long.upperAscii()", 10);
    COST(A "long.trim()", 10);
    COST(A "long.substring(1)", 10);
    COST("url(" A "link)", 3);
    /* replace, split: ceil(0.2 × size); join: ceil(0.2 × size of the result) */
    COST(A "long.replace('a', 'b')", 20);
    COST(A "long.split('a')", 20);
    COST_DIFF("cel.bind(l, " A "long.split('a', 3), l.join('-'))", "cel.bind(l, " A "long.split('a', 3), true)",
              /* "--" + 98 × "a" = 100 code points */ 20);
    /* indexOf, lastIndexOf, sum, min, max, isSorted: traversalCost, a string's
     * bytes × 0.1 truncated, a list's elements 1 each (strings 0.1 × bytes) */
    COST(A "long.indexOf('b')", 10);
    COST(A "utf.lastIndexOf('b')", 4);        /* 40 bytes */
    COST(A "ints.sum()", 25);
    COST(A "ints.max()", 25);
    COST(A "ints.isSorted()", 25);
    COST(A "models.indexOf('x')", 0);          /* "a100", "h100": 0.4 each, truncated */
    /* find, findAll: as matches */
    COST(A "long.find('a+b*')", 11);
    COST(A "long.findAll('ab')", 11);
    /* ip, isIP, cidr, isCIDR: ceil(0.1 × size); ip.isCanonical ceil(0.2 × size) */
    COST("isIP(" A "ipaddr)", 1);
    COST("ip.isCanonical(" A "ipaddr)", 2);
    COST("cidr(" A "cidrstr)", 2);
    /* containsIP: ceil(0.1 × 2 × CIDR size) (+ ceil(0.1 × size) of a string); the CIDR
     * size is its prefix in bytes rounded up: /8 → 1, /16 → 2 */
    /* (plus the cidr() and ip() calls that build the receivers: ceil(0.1 × 10),
     * ceil(0.1 × 11), ceil(0.1 × 8)) */
    COST("cidr('10.0.0.0/8').containsIP(" A "ipaddr)", 1 + (1 + 1));
    COST("cidr(" A "cidrstr).containsIP(ip('10.1.2.3'))", 2 + 1 + (1));
    /* containsCIDR: that plus ceil(0.1 × CIDR size) + 1 */
    COST("cidr('10.0.0.0/8').containsCIDR(" A "cidrstr)", 1 + (1 + 1 + 1 + 2));
    /* validate: ceil(0.1 × (1 + size)) × ceil(0.25 × the format's MaxRegexSize) */
    /* (plus 1 for the format.dns1123Label() call, cel-go's default) */
    COST("format.dns1123Label().validate(" A "long)", 1 + 11 * 8);
    COST("format.labelValue().validate(" A "long)", 1 + 11 * 10);
    fx_fini(&c.f);
}

/* cel-go's ext.Lists and ext.Sets trackers: 1 + 10 + size × factor. */
Test(runtime_cost, ext_trackers) {
    cost_fx c;
    cfx_init(&c);
    COST("lists.range(" A "index)", 3 + 11);
    COST(A "ints.reverse()", 25 + 11);
    COST(A "ints.slice(2, 7)", 5 + 11);
    COST(A "ints.sort()", 2 * 625 + 11);
    COST(A "ints.distinct()", 2 * 625 + 11);
    COST(A "models.sort()", 8 + 11);   /* 2 strings: 2.1 × 2² = 8.4, truncated */
    COST("sets.contains(" A "ints, " A "ints)", 1 + 625);
    COST("sets.intersects(" A "ints, " A "ints)", 1 + 625);
    COST("sets.equivalent(" A "ints, " A "ints)", 1 + 2 * 625);
    fx_fini(&c.f);
}

/* Per iteration of a comprehension, cel-go charges its identifiers, calls and
 * literals: map(x, x) 13 (the accumulator 1, [x] 10, x 1, `+` 1), all(i, i >= 0) 5
 * (@not_strictly_false 1 + accumulator 1, accumulator 1, i 1, `>=` 1). Branches not
 * taken are counted too (an upper bound: cel-go charges only what it evaluates).
 * Each element of the range adds 1: lists.range(n) costs n + 11, folded at compile
 * time here but charged at every evaluation, as cel-go evaluates it each time. */
Test(runtime_cost, comprehension_iterations) {
    cost_fx c;
    cfx_init(&c);
    COST("lists.range(1000)", 1000 + 11);
    COST("quantity('40Gi').compareTo(quantity('1Gi'))", 1 + 1 + 1);   /* folded, still charged */
    COST_DIFF("lists.range(2000).map(x, x)", "lists.range(1000).map(x, x)", (1 + 13) * 1000);
    COST_DIFF("lists.range(2000).all(i, i >= 0)", "lists.range(1000).all(i, i >= 0)", (1 + 5) * 1000);
    /* an attribute path costs 4 (device, .attributes, ["gpu.example.com"], .index):
     * 2 + 1 + 4 + 1 */
    COST_DIFF("lists.range(2000).all(i, " A "index >= 0)", "lists.range(1000).all(i, " A "index >= 0)",
              (1 + 8) * 1000);
    COST_DIFF("lists.range(2000).all(i, " A "type == 'gpu')", "lists.range(1000).all(i, " A "type == 'gpu')",
              (1 + 8) * 1000);
    /* filter(i, i < 0) never appends: its step `i < 0 ? __result__ + [i] : __result__`
     * costs cel-go i, `<` and the accumulator (3); the static count also covers the i
     * of the branch not taken (4), the append's own 12 only when it runs */
    COST_DIFF("lists.range(2000).filter(i, i < 0)", "lists.range(1000).filter(i, i < 0)", (1 + 4) * 1000);
    fx_fini(&c.f);
}

/* ---- time bounds ------------------------------------------------------------------ */

/* CPU time of this thread: the bounds are about the work an evaluation does, and
 * wall time on a loaded CI machine (or with the other test jobs running) says
 * little about it. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Evaluates expr, returns seconds; *out gets the printed result or "error: ...". */
static double timed(cost_fx *c, const char *expr, char *out, size_t n) {
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(c->f.any, expr, strlen(expr), &e);
    cr_assert_not_null(p, "%s: %s", expr, e.msg);
    double t0 = now();
    if (!cel__eval_format(p, &c->f.dev, c->f.ctx, out, n, &e)) snprintf(out, n, "error: %.200s", e.msg);
    double t = now() - t0;
    cel_program_free(p);
    return t;
}

#define LIMIT_MSG "error: operation cancelled: actual cost limit exceeded"

Test(runtime_cost, map_equality_loop_hits_the_limit_fast) {
    cost_fx c;
    cfx_init(&c);
    char out[256];
    /* each m == m costs 2,000 (20,000 entries): the limit is reached after ~500
     * iterations instead of running 100,000 uncharged comparisons (85 s before) */
    double t = timed(&c, "cel.bind(m, lists.range(20000).transformMap(i, v, v), lists.range(100000).all(i, m == m))",
                     out, sizeof out);
    cr_expect_str_eq(out, LIMIT_MSG);
    cr_expect_lt(t, 1.0, "took %.3f s", t);
    fx_fini(&c.f);
}

Test(runtime_cost, map_equality_loop_inside_the_limit_is_fast) {
    cost_fx c;
    cfx_init(&c);
    char out[256];
    /* 1,000 × (500 + 5) plus building the map: inside the limit; 5,000,000 entry
     * comparisons, linear in the map size now that maps are hashed */
    double t = timed(&c, "cel.bind(m, lists.range(5000).transformMap(i, v, v), lists.range(1000).all(i, m == m))",
                     out, sizeof out);
    cr_expect_str_eq(out, "true");
    cr_expect_lt(t, 1.0, "took %.3f s", t);
    fx_fini(&c.f);
}

Test(runtime_cost, large_transform_map_is_linear) {
    cost_fx c;
    cfx_init(&c);
    char out[256];
    double t = timed(&c, "lists.range(50000).transformMap(i, v, v * 2).size()", out, sizeof out);
    cr_expect_str_eq(out, "50000");
    cr_expect_lt(t, 0.5, "transformMap took %.3f s", t);
    t = timed(&c, "lists.range(25000).transformMapEntry(i, v, {string(v): i}).size()", out, sizeof out);
    cr_expect_str_eq(out, "25000");
    cr_expect_lt(t, 0.5, "transformMapEntry took %.3f s", t);
    /* lookups in a large map */
    t = timed(&c, "cel.bind(m, lists.range(50000).transformMap(i, v, v), lists.range(50000).all(i, m[i] == i))", out,
              sizeof out);
    cr_expect_str_eq(out, "true");
    cr_expect_lt(t, 0.5, "lookups took %.3f s", t);
    fx_fini(&c.f);
}

Test(runtime_cost, in_list_loop_hits_the_limit_fast) {
    cost_fx c;
    cfx_init(&c);
    char out[256];
    double t = timed(&c, "cel.bind(l, lists.range(10000), lists.range(100000).all(i, !(-1 in l)))", out, sizeof out);
    cr_expect_str_eq(out, LIMIT_MSG);
    cr_expect_lt(t, 1.0, "took %.3f s", t);
    fx_fini(&c.f);
}

/* The word-at-a-time code point count behind string sizes agrees with a byte loop
 * for every length and alignment of ASCII, 2-, 3- and 4-byte sequences and stray
 * continuation bytes. */
Test(runtime_cost, utf8_count_matches_byte_loop) {
    static const char *const pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x80"};
    char buf[128];
    uint32_t x = 7;
    for (int round = 0; round < 2000; round++) {
        size_t n = 0;
        x = x * 1103515245u + 12345u;
        size_t want_len = (x >> 8) % 60;
        while (n < want_len) {
            x = x * 1103515245u + 12345u;
            const char *p = pieces[(x >> 9) % 5];
            memcpy(buf + n, p, strlen(p));
            n += strlen(p);
        }
        for (size_t off = 0; off < 3 && off <= n; off++) {
            size_t slow = 0;
            for (size_t i = off; i < n; i++) slow += ((unsigned char)buf[i] & 0xC0) != 0x80;
            cr_assert_eq(cel_utf8_count(buf + off, n - off), slow, "round %d, %zu bytes", round, n - off);
        }
    }
}

/* cel-go concatenates lists lazily, so `l + l` costs 1 however long l is; this
 * evaluator copies, and the copies count against the hidden work and memory budget
 * (CEL_MAX_ARENA): 1,000 concatenations of 200,000 elements stop at ~256 MB instead
 * of allocating 3.2 GB. So do string results built by calls cel-go charges by their
 * input (replace with an empty pattern). The bound is 4 s: the ~256 MB are touched
 * page by page under ASan, and on a host where a new page costs ~10 µs (measured
 * 2026-12-05, bench/README.md "A device in fewer bytes") the second expression took
 * 2.05 s; the 3.2 GB this stops would take well over 30 s there. */
Test(runtime_cost, copies_cel_go_does_not_make_hit_the_memory_backstop) {
    cost_fx c;
    cfx_init(&c);
    char out[256];
    double t = timed(&c, "cel.bind(l, lists.range(100000), lists.range(1000).map(i, l + l).size())", out, sizeof out);
    cr_expect_str_eq(out, LIMIT_MSG);
    cr_expect_lt(t, 4.0, "took %.3f s", t);
    t = timed(&c,
              "cel.bind(s, lists.range(1000).map(i, 'a').join(''), lists.range(2000).map(i, s.replace('', s)).size())",
              out, sizeof out);
    cr_expect_str_eq(out, LIMIT_MSG);
    cr_expect_lt(t, 4.0, "took %.3f s", t);
    /* the context gives the memory back at the next evaluation */
    timed(&c, "1 + 1", out, sizeof out);
    cr_expect_lt(arena_bytes_reserved(cel__eval_ctx_arena(c.f.ctx)), (size_t)1 << 20);
    fx_fini(&c.f);
}
