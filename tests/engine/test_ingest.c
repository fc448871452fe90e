/* test_ingest.c — reading cluster files a JSON item at a time (issue 21): the fast
 * reader gives jansson's tree or gives up, the item scan refuses what it cannot be
 * sure of, and a large file's errors are those of reading it whole (the order: syntax,
 * then a missing kind, then an object given twice, then one that does not decode); and
 * the kube-apiserver's answers read the same way (dra_json_parse, dra_json_list). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/text/json_fast.h"
#include "engine/text/json_items.h"
#include "engine/snapshot.h"

#include "base/strbuf.h"

#include <stdint.h>

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

/* dra_json_parse (the kube-apiserver's answers, request bodies): json_loadb's tree, or
 * its refusal in its words, whichever way the text is read — whole by simdjson, a List
 * item by item (from list_min bytes on), or by jansson. */
static void parse_as_jansson(const char *t, size_t n, size_t flags, size_t list_min) {
    json_error_t je1, je2;
    json_t *want = json_loadb(t, n, flags, &je1);
    json_t *got = dra__json_parse(t, n, flags, &je2, list_min);
    cr_assert_eq(!got, !want, "flags %zu, list from %zu bytes: %.200s", flags, list_min, t);
    if (want) {
        char *a = json_dumps(want, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        char *b = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        cr_assert_str_eq(b, a, "%.200s", t);
        free(a);
        free(b);
    } else {
        cr_assert_str_eq(je2.text, je1.text, "%.200s", t);
        cr_assert_eq(je2.position, je1.position, "%.200s", t);
        cr_assert_eq(je2.line, je1.line, "%.200s", t);
    }
    json_decref(want);
    json_decref(got);
}

/* A LIST page of n items past 64 KiB, item bad (-1: none) written as what. */
static char *list_page(int n, int bad, const char *what) {
    strbuf b;
    sbuf_init(&b);
    sbuf_adds(&b, "{\"kind\":\"ResourceSliceList\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
                  "{\"resourceVersion\":\"42\",\"continue\":\"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==\"},\"items\":[");
    for (int i = 0; i < n; i++) {
        if (i) sbuf_addc(&b, ',');
        if (i == bad) sbuf_adds(&b, what);
        else
            sbuf_addf(&b, "{\"metadata\":{\"name\":\"s-%d\"},\"spec\":{\"devices\":[{\"name\":\"gpu-%d\",\"r\":%d.5,"
                          "\"u\":\"\\u00e9\xe2\x82\xac\",\"l\":[true,null,-%d]}]}}", i, i, i, i);
    }
    sbuf_adds(&b, "]}");
    return sbuf_take(&b);
}

Test(ingest, parse_gives_janssons_tree_or_its_error_whichever_way_it_reads) {
    for (size_t i = 0; i < sizeof fast_cases / sizeof *fast_cases; i++)
        for (size_t flags = 0; flags <= JSON_DECODE_ANY; flags += JSON_DECODE_ANY) {
            parse_as_jansson(fast_cases[i], strlen(fast_cases[i]), flags, 0);
            parse_as_jansson(fast_cases[i], strlen(fast_cases[i]), flags, SIZE_MAX);
        }
    /* pages past 64 KiB as dra_json_parse reads them: item by item; a bad item (jansson's
     * error for the page), an integer past int64 (the scan declines: read whole), an
     * item that is not an object */
    const char *odd[] = {NULL, "{\"i\":}", "{\"i\":12345678901234567890}", "[1,\"x\"]", "{\"a\":1} {"};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        char *page = list_page(2000, odd[i] ? 1000 : -1, odd[i]);
        cr_assert_gt(strlen(page), 64 << 10);
        for (size_t flags = 0; flags <= JSON_DECODE_ANY; flags += JSON_DECODE_ANY) {
            json_error_t je1, je2;
            json_t *want = json_loadb(page, strlen(page), flags, &je1);
            json_t *got = dra_json_parse(page, strlen(page), flags, &je2);
            cr_assert_eq(!got, !want, "%s", odd[i] ? odd[i] : "(none)");
            cr_assert(want ? json_equal(got, want) : !strcmp(je1.text, je2.text) && je1.position == je2.position);
            json_decref(want);
            json_decref(got);
        }
        free(page);
    }
}

Test(ingest, a_list_gives_a_pages_items_one_at_a_time_and_stops_at_a_bad_one) {
    char *page = list_page(300, -1, NULL);
    json_t *whole = json_loadb(page, strlen(page), 0, NULL), *env, *t;
    dra_json_list *l = dra_json_list_open(page, strlen(page), &env);
    cr_assert_not_null(l);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(env, "metadata"), "resourceVersion")), "42");
    cr_assert_eq(json_array_size(json_object_get(env, "items")), 0);
    bool failed = true;
    size_t n = 0;
    for (; (t = dra_json_list_next(l, NULL, &failed)); n++) {
        cr_assert(json_equal(t, json_array_get(json_object_get(whole, "items"), n)), "item %zu", n);
        json_decref(t);
    }
    cr_assert_eq(n, 300);
    cr_assert_not(failed);
    dra_json_list_close(l);
    json_decref(env);
    json_decref(whole);
    free(page);

    page = list_page(300, 120, "{\"i\":tru}");
    l = dra_json_list_open(page, strlen(page), &env);
    cr_assert_not_null(l);
    for (n = 0; (t = dra_json_list_next(l, NULL, &failed)); n++) json_decref(t);
    cr_assert_eq(n, 120);
    cr_assert(failed);
    cr_assert_null(dra_json_list_next(l, NULL, &failed), "nothing is read after a bad item");
    dra_json_list_close(l);
    json_decref(env);
    free(page);

    /* not a List: a watch event, an array, an object whose items are not an array */
    const char *not_lists[] = {"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\"}}", "[{\"a\":1}]",
                               "{\"kind\":\"List\",\"items\":{}}"};
    for (size_t i = 0; i < sizeof not_lists / sizeof *not_lists; i++) {
        env = json_true();
        cr_assert_null(dra_json_list_open(not_lists[i], strlen(not_lists[i]), &env), "%s", not_lists[i]);
        cr_assert_null(env);
    }
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
