/* test_json_warm.c — the walk that brings a batch's trees into the cache (json_warm.h)
 * only reads: every kind of value, nested, wide and deep, comes out as it went in,
 * with the references it had, and no tree is too deep or too wide for it. */
#include <criterion/criterion.h>

#include "engine/text/json_warm.h"

#include <stdio.h>

Test(json_warm, reads_every_kind_of_value_and_changes_nothing) {
    json_error_t je;
    json_t *v = json_loads("{\"a\":{\"b\":[1,2.5,\"s\",null,true,false,{},[],[[[\"deep\"]]]],\"c\":\"\"},"
                           "\"d\":[{\"x\":{\"y\":{\"z\":\"w\"}}},{\"x\":1}],\"e\":{}}",
                           0, &je);
    cr_assert_not_null(v, "%s", je.text);
    json_t *copy = json_deep_copy(v);
    json_t *inner = json_object_get(json_object_get(v, "a"), "b");
    size_t refs = inner->refcount, top = v->refcount;
    dra__json_warm(v);
    cr_expect(json_equal(v, copy), "the tree changed");
    cr_expect_eq(inner->refcount, refs, "a reference was taken or given");
    cr_expect_eq(v->refcount, top);
    /* in order, as read: the keys keep their order */
    char *a = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER), *b = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    dra__json_warm(NULL);                      /* nothing: nothing read */
    dra__json_warm(json_array_get(inner, 0));  /* a scalar alone */
    json_decref(copy);
    json_decref(v);
}

/* A MIG-carved node's slice is 57 devices of a dozen members; a LIST's page is wider
 * still. A tree 10,000 levels deep is walked level by level, without a frame each. */
Test(json_warm, wide_and_deep_trees) {
    json_t *wide = json_array();
    for (int i = 0; i < 20000; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i % 50);
        json_array_append_new(wide, json_pack("{s:s, s:{s:i}}", "name", k, k, "int", i));
    }
    json_t *copy = json_deep_copy(wide);
    dra__json_warm(wide);
    cr_expect(json_equal(wide, copy));
    json_decref(copy);
    json_decref(wide);
    json_t *deep = json_string("bottom");
    for (int i = 0; i < 10000; i++) deep = json_pack("[o]", deep);
    dra__json_warm(deep);
    cr_expect_eq(json_array_size(deep), 1);
    json_decref(deep);
}
