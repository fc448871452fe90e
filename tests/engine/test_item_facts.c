/* test_item_facts.c — the facts a thread ahead of the decoder finds (item_facts.h):
 * fields_known lets the decoder skip its unknown-field walk, so it must be false for
 * anything that walk would warn about, and for what it does not walk as given. */
#include <criterion/criterion.h>

#include "engine/text/item_facts.h"
#include "engine/text/json_hash.h"

static bool known(const char *text) {
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    cr_assert_not_null(v, "%s", je.text);
    bool k = dra__item_facts(v, true, false).fields_known;
    cr_assert_eq(dra__item_facts(v, true, false).hash, dra__json_value_hash(v));
    /* asked not to look (nothing would hear of an unknown field): not known */
    cr_assert_not(dra__item_facts(v, false, false).fields_known);
    cr_assert_eq(dra__item_facts(v, false, false).hash, dra__json_value_hash(v));
    json_decref(v);
    return k;
}

Test(item_facts, fields_known_only_where_the_walk_finds_nothing) {
    const char *slice = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},"
                        "\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},"
                        "\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{\"int\":1}},\"capacity\":{\"m\":{\"value\":"
                        "\"1Gi\"}}}]}}";
    cr_expect(known(slice));
    /* an unknown field anywhere: in a device, in an attribute value, at the top */
    cr_expect_not(known("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},"
                        "\"spec\":{\"driver\":\"d\",\"devices\":[{\"name\":\"a\",\"basic\":{}}]}}"));
    cr_expect_not(known("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},"
                        "\"spec\":{\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{\"integer\":1}}}]}}"));
    cr_expect_not(known("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"spec\":{\"bogus\":1}}"));
    cr_expect_not(known("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":"
                        "{\"resourceclaims\":[]}}"));
    cr_expect(known("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":"
                    "{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"c\"}]}}"));
    /* not walked as given: an older version (converted first), no apiVersion, a kind
     * the decoders do not read */
    cr_expect_not(known("{\"apiVersion\":\"resource.k8s.io/v1beta1\",\"kind\":\"ResourceSlice\",\"metadata\":"
                        "{\"name\":\"s\"},\"spec\":{\"driver\":\"d\"}}"));
    cr_expect_not(known("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}"));
    cr_expect_not(known("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}"));
    cr_expect_not(known("{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"c\"}}"));
}

static uint64_t hash_of(const char *text) {
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    cr_assert_not_null(v, "%s", je.text);
    uint64_t h = dra__json_value_hash(v);
    json_decref(v);
    return h;
}

/* The store tells an object given again unchanged by this hash alone, so values that
 * differ must hash apart: members in any order are one value; two keys' values
 * traded, an element moved, a type changed are not. */
Test(item_facts, the_hash_tells_values_apart_and_not_member_order) {
    cr_expect_eq(hash_of("{\"a\":1,\"b\":{\"c\":\"x\",\"d\":[1,2]}}"), hash_of("{\"b\":{\"d\":[1,2],\"c\":\"x\"},\"a\":1}"));
    cr_expect_neq(hash_of("{\"a\":1,\"b\":2}"), hash_of("{\"a\":2,\"b\":1}"));
    cr_expect_neq(hash_of("{\"a\":\"b\"}"), hash_of("{\"b\":\"a\"}"));
    cr_expect_neq(hash_of("[1,2]"), hash_of("[2,1]"));
    cr_expect_neq(hash_of("{\"a\":1}"), hash_of("{\"a\":1.0}"));
    cr_expect_neq(hash_of("{\"a\":1}"), hash_of("{\"a\":\"1\"}"));
    cr_expect_neq(hash_of("{\"a\":{}}"), hash_of("{\"a\":[]}"));
    cr_expect_neq(hash_of("{\"a\":{\"b\":1}}"), hash_of("{\"a\":{\"b\":1},\"c\":null}"));
    cr_expect_neq(hash_of("{\"a\":[{\"x\":1},{\"y\":2}]}"), hash_of("{\"a\":[{\"x\":2},{\"y\":1}]}"));
}

static uint64_t identity_of(const char *text, bool served) {
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    cr_assert_not_null(v, "%s", je.text);
    uint64_t h = dra__object_identity(v, served);
    cr_assert_eq(dra__item_facts(v, false, served).hash, h);
    json_decref(v);
    return h;
}

/* An object the API server served is known by its resourceVersion (and uid): Kubernetes
 * gives every write a new one, and its controllers skip an informer's update whose
 * resourceVersion is the one they hold (pkg/controller/daemon/daemon_controller.go
 * updatePod: "Two different versions of the same pod will always have different
 * RVs"). Anything else — an object from a file or a request body, whose
 * resourceVersion its edits may have left as it was, or one without a resourceVersion
 * — by its value. */
Test(item_facts, a_served_object_is_known_by_its_resource_version) {
    const char *v7a = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u1\",\"resourceVersion\":\"7\"},"
                      "\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}";
    const char *v7b = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u1\",\"resourceVersion\":\"7\"},"
                      "\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}";
    const char *v8a = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u1\",\"resourceVersion\":\"8\"},"
                      "\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}";
    const char *u2 = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u2\",\"resourceVersion\":\"7\"},"
                     "\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}";
    const char *norv = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"uid\":\"u1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}";
    /* served: the version tells, whatever the value */
    cr_expect_eq(identity_of(v7a, true), identity_of(v7b, true));
    cr_expect_neq(identity_of(v7a, true), identity_of(v8a, true));
    cr_expect_neq(identity_of(v7a, true), identity_of(u2, true));
    /* not served, or no resourceVersion: the value tells */
    cr_expect_neq(identity_of(v7a, false), identity_of(v7b, false));
    cr_expect_eq(identity_of(v7a, false), hash_of(v7a));
    cr_expect_eq(identity_of(norv, true), hash_of(norv));
    /* the two rules do not meet: the value's hash of an object is not its version's */
    cr_expect_neq(identity_of(v7a, true), identity_of(v7a, false));
}
