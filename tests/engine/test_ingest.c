/* test_ingest.c — reading cluster files a JSON item at a time (issue 21): the fast
 * reader gives jansson's tree or gives up, the item scan refuses what it cannot be
 * sure of, and a large file's errors are those of reading it whole (the order: syntax,
 * then a missing kind, then an object given twice, then one that does not decode). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/json_fast.h"
#include "engine/json_items.h"

static const char *const fast_cases[] = {
    "{\"a\":1,\"b\":\"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\",\"c\":[1,-2,0,-0,true,false,null,{},[]]}",
    "{\"a\":1,\"a\":2,\"b\":3}", "{\"a\":{\"x\":1},\"b\":2,\"a\":[3]}", "{\"k\\n\":\"v\",\"k\\n\":\"w\"}",
    "{\"u\":\"\\u00e9\"}", "{\"u\":\"\xc3\xa9\"}", "{\"r\":1.5}", "{\"r\":1e5}", "{\"big\":123456789012345678}",
    "{\"big\":1234567890123456789}", "{\"big\":-9223372036854775808}", "{\"z\":01}", "{\"z\":-}", "{\"z\":1a}",
    "{\"z\":tru}", "{\"z\":truex}", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1,2,]", "[,]", "{\"a\":\"open}",
    "{\"a\":\"tab\there\"}", " \n {\"a\" : [ 1 , 2 ] , \"b\" : { } } \n ", "{\"a\":1} x", "\"str\"", "42", "null",
    "{\"a\":\"\\u0000\"}", "{\"a\":\"x\\qy\"}", "{\"\":\"\"}", "{\"a\":\"\\\"}", "-", "", "{\"a\":1}{\"b\":2}",
    "{\"a\":1]",
    /* what simdjson reads beside the plain forms: reals, escapes beyond ASCII, UTF-8, a BOM */
    "[0.1,1e-7,3.0,-2.5E+3,1e308,1e-400,4.9e-324,2.2250738585072014e-308,123456789.123456789]", "1E400",
    "-1e400", "{\"s\":\"\\ud83d\\ude00\"}", "{\"s\":\"\\ud800\"}", "{\"\xc3\xa9\":\"\xe2\x82\xac\"}",
    "{\"s\":\"\xff\"}", "{\"s\":\"\xc3\"}", "\xef\xbb\xbf{\"a\":1}", "18446744073709551615",
    "9223372036854775807", "-9223372036854775809", "{\"k\\u0000\":1}", "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]",
    "\"a\\u00e9\\n\\u2028b\"",
};

Test(ingest, fast_reader_gives_janssons_tree_or_gives_up) {
    for (size_t i = 0; i < sizeof fast_cases / sizeof *fast_cases; i++) {
        const char *t = fast_cases[i];
        json_error_t je;
        json_t *want = json_loadb(t, strlen(t), JSON_DECODE_ANY, &je);
        json_t *got = dra__json_fast_load(t, strlen(t));
        if (!want) cr_assert_null(got, "accepted what jansson refuses: %s", t);
        if (got) {
            char *a = json_dumps(want, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
            char *b = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
            cr_assert_str_eq(b, a, "case %s", t);
            cr_assert(json_equal(want, got));
            free(a);
            free(b);
        }
        json_decref(want);
        json_decref(got);
    }
}

Test(ingest, item_scan_finds_items_and_refuses_what_it_cannot_be_sure_of) {
    const char *list = "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"a\":\"]}\\\"\"} , [1,{}],\n3],\"z\":{}}";
    dra_json_items it;
    cr_assert(dra__json_items_scan(list, strlen(list), &it));
    cr_assert_eq(it.n, 3);
    cr_assert_eq(strncmp(list + it.v[0].off, "{\"a\":\"]}\\\"\"}", it.v[0].len), 0);
    cr_assert_eq(strncmp(list + it.v[1].off, "[1,{}]", it.v[1].len), 0);
    json_t *env = dra__json_items_envelope(list, strlen(list), &it);
    cr_assert_not_null(env);
    cr_assert_eq(json_array_size(json_object_get(env, "items")), 0);
    cr_assert_not_null(json_object_get(env, "z"));
    json_decref(env);
    dra__json_items_free(&it);
    const char *refused[] = {
        "{\"kind\":\"List\",\"items\":[],\"items\":[]}", "{\"kind\":\"List\",\"items\":[1,]}",
        "{\"kind\":\"List\",\"items\":[12345678901234567890]}", "{\"kind\":\"List\",\"it\\u0065ms\":[]}",
        "{\"kind\":\"List\"}", "{\"kind\":\"List\",\"items\":[1]} x", "{\"kind\":\"List\",\"items\":[\"open]}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        cr_assert_not(dra__json_items_scan(refused[i], strlen(refused[i]), &it), "%s", refused[i]);
}

/* A List of n slices (past the size read on a second thread), objects a and b replaced
 * by ta and tb (-1: none); written to path. */
static void write_list2(const char *path, int n, int a, const char *ta, int b, const char *tb) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n", f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(",\n", f);
        if (i == a || i == b) {
            fputs(i == a ? ta : tb, f);
            continue;
        }
        fprintf(f,
                "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s-%d\"},"
                "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-%d\",\"pool\":{\"name\":\"node-%d\","
                "\"generation\":1,\"resourceSliceCount\":1},\"devices\":[",
                i, i, i);
        for (int d = 0; d < 8; d++)
            fprintf(f, "%s{\"name\":\"gpu-%d\",\"attributes\":{\"index\":{\"int\":%d},\"uuid\":{\"string\":\"GPU-%08d-%d\"}}}",
                    d ? "," : "", d, d, i, d);
        fputs("]}}", f);
    }
    fputs("\n]}\n", f);
    fclose(f);
}

static void write_list(const char *path, int n, int a, const char *ta) { write_list2(path, n, a, ta, -1, NULL); }

static bool load(const char *path, err *e) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    err_clear(e);
    bool ok = dra_store_load_paths(st, &path, 1, e) != 0;
    if (ok) {
        dra_snapshot *s = dra_store_acquire(st);
        cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), 3000);
        dra_snapshot_release(s);
    }
    dra_store_free(st);
    return ok;
}

Test(ingest, a_large_files_errors_are_those_of_reading_it_whole) {
    const char *path = "/tmp/dralloc-ingest-test.json";
    char buf[2048];
    err e;
    write_list(path, 3000, -1, NULL);
    cr_assert(load(path, &e), "%s", err_format(&e, buf, sizeof buf));

    /* a syntax error at the end wins over a missing kind and an undecodable object before it */
    const char *undecodable = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"bad-5\"},"
                              "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n\",\"pool\":7}}";
    write_list2(path, 3000, 10, undecodable, 2990, "{\"apiVersion\":\"v1\",\"kind\" \"Node\"}");
    cr_assert_not(load(path, &e));
    cr_assert(strstr(err_format(&e, buf, sizeof buf), "JSON: ':' expected near '\"Node\"' (line 2992)"), "%s", buf);

    write_list(path, 3000, 10, undecodable);
    cr_assert_not(load(path, &e));
    cr_assert(strstr(err_format(&e, buf, sizeof buf), "spec.pool: expected object, got integer"), "%s", buf);

    /* decoded on either thread (the parsing one decodes when the reader is behind),
     * the first undecodable object in the file's order is the one named */
    const char *undecodable2 = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":"
                               "\"bad-6\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n\",\"pool\":\"p\"}}";
    write_list2(path, 3000, 1500, undecodable, 2600, undecodable2);
    cr_assert_not(load(path, &e));
    cr_assert(strstr(err_format(&e, buf, sizeof buf), "ResourceSlice bad-5: spec.pool: expected object"), "%s", buf);
    /* an object given twice with different contents beats an undecodable one after it */
    const char *twin = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s-7\"},"
                       "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-7\",\"pool\":{\"name\":\"node-7\","
                       "\"generation\":2,\"resourceSliceCount\":1},\"devices\":[]}}";
    write_list2(path, 3000, 2000, twin, 2600, undecodable2);
    cr_assert_not(load(path, &e));
    cr_assert(strstr(err_format(&e, buf, sizeof buf), "s-7 is given twice with different contents"), "%s",
              buf);

    /* a missing kind late in the file wins over an undecodable object early */
    write_list2(path, 3000, 10, undecodable, 2990, "{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}");
    cr_assert_not(load(path, &e));
    cr_assert(strstr(err_format(&e, buf, sizeof buf), "kind not set (object x)"), "%s", buf);
    remove(path);
}
