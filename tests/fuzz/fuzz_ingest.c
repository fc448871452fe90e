/* fuzz_ingest.c — input: a cluster file's text, read both ways the store can read it:
 * whole (json_loadb, as before issue 21) and item by item (the byte scan of
 * engine/text/json_items.c, each item parsed by simdjson through dra__json_fast_load or,
 * where that declines, by json_loadb; the envelope parsed with its items left out).
 * Where the scan takes the text, the two must agree: the same items, the same envelope,
 * and a text that does not parse whole does not parse item by item either. Where
 * simdjson's tree is taken, it must be json_loadb's; and dra_json_parse's tree or
 * error, json_loadb's. */
#include "tests/fuzz/fuzz.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/text/json_fast.h"
#include "engine/text/json_items.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_ingest: %s\n", what);
    abort();
}

/* An item as the reader takes it: simdjson's tree, checked against jansson's. */
static json_t *item_tree(const char *t, size_t n) {
    json_t *slow = json_loadb(t, n, JSON_DECODE_ANY, NULL);
    json_t *fast = dra__json_fast_load(t, n);
    if (fast && !slow) fail("simdjson took an item jansson refuses");
    if (fast && !json_equal(fast, slow)) fail("simdjson's tree differs from jansson's");
    if (fast) {
        char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY), *b = json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY);
        bool same = a && b && !strcmp(a, b);
        free(a);
        free(b);
        if (!same) fail("simdjson's tree prints differently from jansson's (member order)");
    }
    json_decref(fast);
    return slow;
}

/* dra_json_parse (the kube-apiserver's answers, request bodies): json_loadb's tree, or
 * its refusal in its words; with a List read item by item at any size. */
static void parse_as_jansson(const char *text, size_t size, size_t flags, size_t list_min) {
    json_error_t je1, je2;
    json_t *want = json_loadb(text, size, flags, &je1);
    json_t *got = dra__json_parse(text, size, flags, &je2, list_min);
    if (!want != !got)
        fail(got ? "dra_json_parse took a text jansson refuses" : "dra_json_parse refused a text jansson takes");
    if (got) {
        char *a = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY), *b = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        bool same = a && b && !strcmp(a, b) && json_equal(want, got);
        free(a);
        free(b);
        if (!same) fail("dra_json_parse's tree differs from jansson's");
    } else if (strcmp(je1.text, je2.text) || je1.line != je2.line || je1.column != je2.column ||
               je1.position != je2.position) {
        fail("dra_json_parse's error differs from jansson's");
    }
    json_decref(want);
    json_decref(got);
}

int fuzz_ingest_one(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    for (size_t flags = 0; flags <= JSON_DECODE_ANY; flags += JSON_DECODE_ANY) {
        parse_as_jansson(text, size, flags, 0);
        parse_as_jansson(text, size, flags, SIZE_MAX);
    }
    json_decref(item_tree(text, size));   /* the whole text, as one item */
    dra_json_items it;
    if (!dra__json_items_scan(text, size, &it)) return 0;
    json_t *whole = json_loadb(text, size, 0, NULL);
    const json_t *want = whole ? (it.top_array ? whole : json_object_get(whole, "items")) : NULL;
    if (whole && !json_is_array(want)) fail("the scan found items where the whole text has none");
    if (want && json_array_size(want) != it.n) fail("the scan found another number of items");
    bool all = true;
    for (size_t i = 0; i < it.n; i++) {
        if (it.v[i].off + it.v[i].len > size) fail("an item past the end of the text");
        json_t *got = item_tree(text + it.v[i].off, it.v[i].len);
        if (!got) all = false;
        else if (want && !json_equal(got, json_array_get(want, i))) fail("an item differs from the whole text's");
        json_decref(got);
    }
    if (!it.top_array) {
        json_t *env = dra__json_items_envelope(text, size, &it);
        if (!env) all = false;
        if (env && whole) {
            json_t *w = json_deep_copy(whole);
            json_object_set_new(w, "items", json_array());
            if (!json_equal(env, w)) fail("the envelope differs from the whole text's");
            json_decref(w);
        }
        json_decref(env);
    }
    if (whole && !all) fail("the whole text parses, an item or the envelope does not");
    if (!whole && all) fail("every item and the envelope parse, the whole text does not");
    json_decref(whole);
    dra__json_items_free(&it);
    return 0;
}

FUZZ_ENTRY(fuzz_ingest_one)
