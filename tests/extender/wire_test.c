/* wire_test.c — the extender's wire decoder and encoders (extender/wire.h): Go's
 * case-insensitive key matching, null versus absent, wrong types named by field, the
 * UTF-8 and depth pre-check, the exact output keys of ExtenderFilterResult and
 * HostPriorityList, and Go durations. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "extender/wire.h"

static bool decode(const char *body, ext_args *a, err *e) {
    err_clear(e);
    json_t *doc = ext_json_parse(body, strlen(body), 128, e);
    if (!doc) return false;
    return ext_args_decode(doc, 1000, a, e);
}

static void expect_error(const char *body, const char *fragment) {
    ext_args a;
    err e;
    cr_assert_not(decode(body, &a, &e), "accepted %s", body);
    cr_assert(strstr(e.msg, fragment), "error for %s: got \"%s\", want \"%s\"", body, e.msg, fragment);
}

Test(wire, canonical_names_mode) {
    ext_args a;
    err e;
    cr_assert(decode("{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":null,\"NodeNames\":[\"a\",\"b\"]}", &a, &e), "%s",
              e.msg);
    cr_assert_not(a.node_list);
    cr_assert_eq(a.n, 2);
    cr_assert_str_eq(a.names[0], "a");
    cr_assert_str_eq(a.names[1], "b");
    cr_assert(json_is_object(a.pod));
    ext_args_free(&a);
}

Test(wire, keys_case_insensitive_like_go) {
    ext_args a;
    err e;
    cr_assert(decode("{\"pod\":{},\"NODENAMES\":[\"x\"]}", &a, &e), "%s", e.msg);
    cr_assert_eq(a.n, 1);
    ext_args_free(&a);
    /* U+017F (long s) folds to 's' in Go's matching */
    cr_assert(decode("{\"POD\":{},\"nodename\xC5\xBF\":[\"x\",\"y\"]}", &a, &e), "%s", e.msg);
    cr_assert_eq(a.n, 2);
    ext_args_free(&a);
    /* the last matching member wins, as Go assigns each in turn */
    cr_assert(decode("{\"Pod\":{},\"NodeNames\":[\"x\"],\"nodenames\":[\"y\",\"z\"]}", &a, &e), "%s", e.msg);
    cr_assert_eq(a.n, 2);
    cr_assert_str_eq(a.names[0], "y");
    ext_args_free(&a);
    cr_assert(ext_key_matches("Pod", "Pod"));
    cr_assert_not(ext_key_matches("Pods", "Pod"));
    cr_assert_not(ext_key_matches("Po", "Pod"));
    cr_assert_not(ext_key_matches("P\xC3\xB6""d", "Pod"));
}

Test(wire, node_list_mode) {
    ext_args a;
    err e;
    cr_assert(decode("{\"Pod\":{},\"Nodes\":{\"metadata\":{\"resourceVersion\":\"5\"},\"Items\":[{\"metadata\":{\"name\":\"n1\"},"
                     "\"status\":{\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}}}}]},\"NodeNames\":null}",
                     &a, &e),
              "%s", e.msg);
    cr_assert(a.node_list);
    cr_assert_eq(a.n, 1);
    cr_assert_str_eq(a.names[0], "n1");
    cr_assert(json_is_object(a.nodes[0]));
    ext_verdict v[1] = {EXT_PASS};
    char *out = ext_filter_result(&a, v, NULL, NULL);
    cr_assert_str_eq(out, "{\"Nodes\":{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":\"n1\"},"
                          "\"status\":{\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}}}}]},\"NodeNames\":null,"
                          "\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
    free(out);
    ext_args_free(&a);
    /* items absent or null: no nodes */
    cr_assert(decode("{\"Pod\":{},\"Nodes\":{}}", &a, &e), "%s", e.msg);
    cr_assert_eq(a.n, 0);
    ext_args_free(&a);
}

Test(wire, null_versus_absent) {
    expect_error("{\"NodeNames\":[]}", "Pod: missing");
    expect_error("{\"Pod\":null,\"NodeNames\":[]}", "Pod: is null");
    expect_error("{\"Pod\":{}}", "neither NodeNames nor Nodes");
    expect_error("{\"Pod\":{},\"Nodes\":null,\"NodeNames\":null}", "neither NodeNames nor Nodes");
    expect_error("{\"Pod\":{},\"Nodes\":{\"items\":[]},\"NodeNames\":[]}", "both Nodes and NodeNames");
    ext_args a;
    err e;
    /* an empty list is a list: nothing to decide, but a valid request */
    cr_assert(decode("{\"Pod\":{},\"NodeNames\":[]}", &a, &e), "%s", e.msg);
    cr_assert_eq(a.n, 0);
    ext_args_free(&a);
}

Test(wire, wrong_types_name_the_field) {
    expect_error("[]", "ExtenderArgs: expected a JSON object, got array");
    expect_error("\"x\"", "expected a JSON object, got string");
    expect_error("{\"Pod\":\"p\",\"NodeNames\":[]}", "Pod: expected an object (v1.Pod), got string");
    expect_error("{\"Pod\":{},\"NodeNames\":\"a\"}", "NodeNames: expected an array of strings, got string");
    expect_error("{\"Pod\":{},\"NodeNames\":[\"a\",2]}", "NodeNames[1]: expected a string, got number");
    expect_error("{\"Pod\":{},\"Nodes\":[]}", "Nodes: expected an object (v1.NodeList), got array");
    expect_error("{\"Pod\":{},\"Nodes\":{\"items\":{}}}", "Nodes.items: expected an array, got object");
    expect_error("{\"Pod\":{},\"Nodes\":{\"items\":[7]}}", "Nodes.items[0]: expected an object (v1.Node), got number");
    expect_error("{\"Pod\":{},\"Nodes\":{\"items\":[{}]}}", "Nodes.items[0].metadata: expected an object, got null");
    expect_error("{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":true}}]}}",
                 "Nodes.items[0].metadata.name: expected a string, got boolean");
}

Test(wire, limits) {
    ext_args a;
    err e;
    json_t *doc = json_pack("{s:{},s:[sss]}", "Pod", "NodeNames", "a", "b", "c");
    cr_assert_not(ext_args_decode(doc, 2, &a, &e));
    cr_assert(strstr(e.msg, "3 nodes, more than the limit of 2"), "%s", e.msg);
    /* depth: counted without parsing, strings do not count */
    char deep[300];
    memset(deep, '[', 200);
    deep[200] = 0;
    err_clear(&e);
    cr_assert_not(ext_json_check(deep, 200, 128, &e));
    cr_assert(strstr(e.msg, "nested deeper than 128 levels (byte 128)"), "%s", e.msg);
    cr_assert(ext_json_check("{\"a\":\"[[[[[[[[[[[[\\\"[[[[\"}", 24, 3, &e));
    cr_assert(ext_json_check("[[[]],[[]],[[]]]", 16, 3, &e));
    cr_assert_not(ext_json_check("[[[[]]]]", 8, 3, &e));
}

Test(wire, utf8) {
    err e;
    err_clear(&e);
    const char *good = "\"h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"";
    cr_assert(ext_json_check(good, strlen(good), 8, &e), "%s", e.msg);
    static const char *const bad[] = {
        "\"\xFF\"",             /* never valid */
        "\"\xC0\xAF\"",         /* overlong '/' */
        "\"\xE0\x80\xAF\"",     /* overlong */
        "\"\xED\xA0\x80\"",     /* surrogate */
        "\"\xF4\x90\x80\x80\"", /* past U+10FFFF */
        "\"\xC3\"",             /* cut short */
        "\"\xE2\x82\"",         /* cut short */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err_clear(&e);
        cr_assert_not(ext_json_check(bad[i], strlen(bad[i]), 8, &e), "accepted case %zu", i);
        cr_assert(strstr(e.msg, "not valid UTF-8 (byte 1)"), "case %zu: %s", i, e.msg);
    }
    /* an escaped quote does not end the string; the byte after a backslash is still checked */
    err_clear(&e);
    cr_assert_not(ext_json_check("\"\\\xFF\"", 4, 8, &e));
    err_clear(&e);
    cr_assert_null(ext_json_parse("", 0, 8, &e));
    cr_assert(strstr(e.msg, "empty body"), "%s", e.msg);
    err_clear(&e);
    cr_assert_null(ext_json_parse("{\"Pod\":", 7, 8, &e));
    cr_assert(strstr(e.msg, "invalid JSON"), "%s", e.msg);
}

Test(wire, filter_result_names_mode) {
    ext_args a;
    err e;
    cr_assert(decode("{\"Pod\":{},\"NodeNames\":[\"n1\",\"n2\",\"n3\"]}", &a, &e), "%s", e.msg);
    ext_verdict v[3] = {EXT_FAIL, EXT_PASS, EXT_FAIL_UNRESOLVABLE};
    const char *why[3] = {"busy", NULL, "no device"};
    char *out = ext_filter_result(&a, v, why, NULL);
    cr_assert_str_eq(out, "{\"Nodes\":null,\"NodeNames\":[\"n2\"],\"FailedNodes\":{\"n1\":\"busy\"},"
                          "\"FailedAndUnresolvableNodes\":{\"n3\":\"no device\"},\"Error\":\"\"}");
    free(out);
    out = ext_filter_result(&a, v, why, "claim missing");
    cr_assert_str_eq(out, "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},"
                          "\"Error\":\"claim missing\"}");
    free(out);
    int64_t score[3] = {0, 10, 3};
    out = ext_priority_list(&a, score);
    cr_assert_str_eq(out, "[{\"Host\":\"n1\",\"Score\":0},{\"Host\":\"n2\",\"Score\":10},{\"Host\":\"n3\",\"Score\":3}]");
    free(out);
    /* a message cut inside a UTF-8 sequence keeps its node */
    const char *cut[3] = {"busy \xE2\x82", NULL, "x"};
    out = ext_filter_result(&a, v, cut, NULL);
    cr_assert(strstr(out, "\"FailedNodes\":{\"n1\":\"busy ??\"}"), "%s", out);
    free(out);
    ext_args_free(&a);
    out = ext_error_body("bad \"thing\"");
    cr_assert_str_eq(out, "{\"error\":\"bad \\\"thing\\\"\"}");
    free(out);
}

Test(wire, durations) {
    uint64_t ns;
    cr_assert(ext_duration_parse("2s", &ns) && ns == 2000000000ull);
    cr_assert(ext_duration_parse("1m30s", &ns) && ns == 90000000000ull);
    cr_assert(ext_duration_parse("1.5s", &ns) && ns == 1500000000ull);
    cr_assert(ext_duration_parse("250ms", &ns) && ns == 250000000ull);
    cr_assert(ext_duration_parse("10us", &ns) && ns == 10000ull);
    cr_assert(ext_duration_parse("0", &ns) && ns == 0);
    cr_assert(ext_duration_parse("1h", &ns) && ns == 3600000000000ull);
    cr_assert_not(ext_duration_parse("", &ns));
    cr_assert_not(ext_duration_parse("2", &ns));
    cr_assert_not(ext_duration_parse("s", &ns));
    cr_assert_not(ext_duration_parse("-1s", &ns));
    cr_assert_not(ext_duration_parse("2x", &ns));
    cr_assert_not(ext_duration_parse("9999999999h", &ns));
}
