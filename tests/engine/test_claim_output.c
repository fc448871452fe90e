/* test_claim_output.c — engine/out/result_encode.c's picture of a ResourceClaim after
 * scheduling: Go's encoding of the v1 types (omitempty, nil slices, struct fields,
 * defaults) and the ResourceClaim controller's GenerateName. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"

static json_t *normalized(const char *text) {
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    cr_assert_not_null(o, "%s: %s", text, je.text);
    dra_claim_json_normalize(o);
    return o;
}

static void assert_json(const json_t *got, const char *want_text) {
    json_t *want = json_loads(want_text, 0, NULL);
    cr_assert_not_null(want, "%s", want_text);
    char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
    cr_assert(json_equal(want, (json_t *)got), "got %s\nwant %s", g, want_text);
    free(g);
    json_decref(want);
}

/* omitempty fields that are empty go; pointers (adminAccess: false, shareID: "")
 * stay; a struct field is always there; an empty slice without omitempty reads back
 * from etcd's protobuf as nil: null (DeviceClaim.requests, NodeSelector terms,
 * AllocatedDeviceStatus.conditions). Unknown fields stay as they are. */
Test(claim_output, go_omitempty) {
    json_t *c = normalized("{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceClaim\","
                           " \"metadata\": {\"name\": \"c\", \"namespace\": \"\", \"labels\": {}, \"annotations\": {},"
                           "  \"finalizers\": [], \"generation\": 0, \"ownerReferences\": [], \"x-unknown\": []},"
                           " \"spec\": {\"devices\": {\"requests\": [{\"name\": \"r\", \"firstAvailable\": [],"
                           "   \"exactly\": {\"deviceClassName\": \"gpu\", \"selectors\": [], \"tolerations\": [],"
                           "    \"adminAccess\": false, \"capacity\": {\"requests\": {}}, \"count\": 2}}],"
                           "  \"constraints\": [{\"requests\": [], \"matchAttribute\": \"a/b\"}], \"config\": []}},"
                           " \"status\": {\"allocation\": {\"devices\": {\"results\": [{\"request\": \"r\","
                           "   \"driver\": \"d\", \"pool\": \"p\", \"device\": \"x\", \"shareID\": \"\","
                           "   \"tolerations\": [{\"key\": \"k\", \"effect\": \"NoSchedule\"}],"
                           "   \"bindingConditions\": [], \"consumedCapacity\": {}}], \"config\": []},"
                           "  \"nodeSelector\": {\"nodeSelectorTerms\": []}},"
                           "  \"reservedFor\": [], \"devices\": [{\"driver\": \"d\", \"pool\": \"p\", \"device\": \"x\","
                           "   \"conditions\": []}]}}");
    assert_json(c, "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceClaim\","
                   " \"metadata\": {\"name\": \"c\", \"x-unknown\": []},"
                   " \"spec\": {\"devices\": {\"requests\": [{\"name\": \"r\","
                   "   \"exactly\": {\"deviceClassName\": \"gpu\", \"adminAccess\": false, \"capacity\": {},"
                   "    \"allocationMode\": \"ExactCount\", \"count\": 2}}],"
                   "  \"constraints\": [{\"matchAttribute\": \"a/b\"}]}},"
                   " \"status\": {\"allocation\": {\"devices\": {\"results\": [{\"request\": \"r\","
                   "   \"driver\": \"d\", \"pool\": \"p\", \"device\": \"x\", \"shareID\": \"\","
                   "   \"tolerations\": [{\"key\": \"k\", \"operator\": \"Equal\", \"effect\": \"NoSchedule\"}]}]},"
                   "  \"nodeSelector\": {\"nodeSelectorTerms\": null}},"
                   "  \"devices\": [{\"driver\": \"d\", \"pool\": \"p\", \"device\": \"x\", \"conditions\": null}]}}");
    json_decref(c);
    /* a bare claim: spec.devices and status are structs (always printed), requests a
     * nil slice; the allocation of no devices has devices {} (results omitted) */
    c = normalized("{\"metadata\": {\"name\": \"c\"}, \"spec\": {}}");
    assert_json(c, "{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"devices\": {\"requests\": null}}, \"status\": {}}");
    json_decref(c);
    c = normalized("{\"spec\": {\"devices\": {\"requests\": []}}, \"status\": {\"allocation\": {\"devices\": "
                   "{\"results\": []}}}}");
    assert_json(c, "{\"metadata\": {}, \"spec\": {\"devices\": {\"requests\": null}}, "
                   "\"status\": {\"allocation\": {\"devices\": {}}}}");
    json_decref(c);
}

/* pkg/apis/resource/v1/defaults.go: allocationMode ExactCount; count 1 for
 * ExactCount only; the same for each firstAvailable subrequest. */
Test(claim_output, api_defaults) {
    json_t *c = normalized("{\"spec\": {\"devices\": {\"requests\": ["
                           "{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"g\"}},"
                           "{\"name\": \"b\", \"exactly\": {\"deviceClassName\": \"g\", \"allocationMode\": \"All\"}},"
                           "{\"name\": \"c\", \"firstAvailable\": [{\"name\": \"s\", \"deviceClassName\": \"g\","
                           " \"count\": 3, \"tolerations\": [{\"operator\": \"Exists\"}]}]}]}}}");
    assert_json(c, "{\"metadata\": {}, \"status\": {}, \"spec\": {\"devices\": {\"requests\": ["
                   "{\"name\": \"a\", \"exactly\": {\"deviceClassName\": \"g\", \"allocationMode\": \"ExactCount\","
                   " \"count\": 1}},"
                   "{\"name\": \"b\", \"exactly\": {\"deviceClassName\": \"g\", \"allocationMode\": \"All\"}},"
                   "{\"name\": \"c\", \"firstAvailable\": [{\"name\": \"s\", \"deviceClassName\": \"g\","
                   " \"allocationMode\": \"ExactCount\", \"count\": 3, \"tolerations\": [{\"operator\": \"Exists\"}]}]}"
                   "]}}}");
    json_decref(c);
}

/* pkg/controller/resourceclaim handleClaim: "<pod>-<entry>-" up to 57 bytes; past
 * that both names cut to len*57/total bytes, joined by one hyphen, none at the end. */
Test(claim_output, claim_generate_name) {
    char out[128];
    dra_pod_claim_generate_name("trainer", "gpu", out, sizeof out);
    cr_assert_str_eq(out, "trainer-gpu-");
    /* 40 + 15 + 2 = 57: not cut */
    const char *p40 = "pppppppppppppppppppppppppppppppppppppppp", *e15 = "eeeeeeeeeeeeeee";
    dra_pod_claim_generate_name(p40, e15, out, sizeof out);
    cr_assert_eq(strlen(out), 57);
    cr_assert_eq(out[56], '-');
    /* 40 + 16 + 2 = 58: 40*57/58 = 39, 16*57/58 = 15 */
    dra_pod_claim_generate_name(p40, "eeeeeeeeeeeeeeee", out, sizeof out);
    char want[128];
    snprintf(want, sizeof want, "%.39s-%.15s", p40, e15);
    cr_assert_str_eq(out, want);
}

/* kube-scheduler's PreBind (bindClaim, dynamicresources.go) as the one writer
 * extender/bind.c sends: the finalizer once, then the allocation only where there is
 * none, and the consumer appended to reservedFor after what is there. */
Test(claim_output, prebind_writes_finalizer_then_status) {
    json_t *c = json_loads("{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"other\"]},"
                           "\"status\":{\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"1\"}]}}",
                           0, NULL);
    cr_assert(dra_claim_prebind_finalizer(c));
    cr_assert_not(dra_claim_prebind_finalizer(c), "the finalizer is added once");
    json_t *alloc = json_pack("{s:{s:[]}}", "devices", "results");
    json_t *pod = json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", "b", "uid", "2");
    dra_claim_prebind_status(c, alloc, pod);
    json_t *other = json_pack("{s:{s:[{s:s}]}}", "devices", "results", "device", "x");
    dra_claim_prebind_status(c, other, NULL);   /* allocated already: kept as it is */
    assert_json(c, "{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"other\",\"resource.kubernetes.io/delete-protection\"]},"
                   "\"status\":{\"allocation\":{\"devices\":{\"results\":[]}},\"reservedFor\":["
                   "{\"resource\":\"pods\",\"name\":\"a\",\"uid\":\"1\"},{\"resource\":\"pods\",\"name\":\"b\",\"uid\":\"2\"}]}}");
    json_decref(alloc);
    json_decref(pod);
    json_decref(other);
    json_decref(c);
}

/* A stored claim's text (decode_claim.c, claim_text): its results left out when
 * dra_claim_object puts the same JSON back — same value and same key order — and kept
 * whole when anything else is there (tolerations, adminAccess: null, another key
 * order, a string with a NUL in it). */
Test(claim_output, stored_results_elided_and_put_back) {
    static const struct {
        const char *name, *result;
        bool elided;
    } cases[] = {
        {"plain", "{\"request\": \"gpu\", \"driver\": \"d.example.com\", \"pool\": \"p\", \"device\": \"gpu-0\"}", true},
        {"admin-share", "{\"request\": \"gpu\", \"driver\": \"d\", \"pool\": \"p\", \"device\": \"g\", \"adminAccess\": false,"
                        " \"shareID\": \"0a\"}", true},
        {"tolerations", "{\"request\": \"gpu\", \"driver\": \"d\", \"pool\": \"p\", \"device\": \"g\","
                        " \"tolerations\": [{\"key\": \"k\", \"operator\": \"Exists\"}]}", false},
        {"admin-null", "{\"request\": \"gpu\", \"driver\": \"d\", \"pool\": \"p\", \"device\": \"g\", \"adminAccess\": null}",
         false},
        {"order", "{\"driver\": \"d\", \"request\": \"gpu\", \"pool\": \"p\", \"device\": \"g\"}", false},
        {"nul", "{\"request\": \"gpu\", \"driver\": \"d\", \"pool\": \"p\", \"device\": \"g\\u0000x\"}", false},
        {"share-before-admin", "{\"request\": \"gpu\", \"driver\": \"d\", \"pool\": \"p\", \"device\": \"g\", \"shareID\": \"s\","
                               " \"adminAccess\": true}", false},
    };
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new_with(&f, &(dra_store_opts){.keep_text = true});
    json_t *items = json_array();
    char text[1200];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(text, sizeof text,
                 "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceClaim\","
                 " \"metadata\": {\"name\": \"%s\", \"namespace\": \"ml\", \"uid\": \"u-%zu\"},"
                 " \"spec\": {\"devices\": {\"requests\": [{\"name\": \"gpu\", \"exactly\": {\"deviceClassName\": \"c\"}}]}},"
                 " \"status\": {\"allocation\": {\"devices\": {\"results\": [%s, %s], \"config\": []},"
                 " \"nodeSelector\": null}, \"reservedFor\": [{\"resource\": \"pods\", \"name\": \"p\", \"uid\": \"x\"}]}}",
                 cases[i].name, i, cases[i].result, cases[i].result);
        json_error_t je;
        json_t *o = json_loads(text, JSON_ALLOW_NUL, &je);
        cr_assert_not_null(o, "%s: %s", cases[i].name, je.text);
        json_array_append_new(items, o);
    }
    err e;
    err_clear(&e);
    cr_assert(dra_store_apply_json(st, items, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(st);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const dra_claim *c = dra_world_find_claim(dra_snapshot_world(s), "ml", cases[i].name);
        cr_assert_not_null(c, "%s", cases[i].name);
        cr_assert_eq(c->raw_results_elided, cases[i].elided, "%s: elided %d", cases[i].name, c->raw_results_elided);
        json_t *got = dra_claim_object(c);
        cr_assert_not_null(got, "%s", cases[i].name);
        char *g = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER);
        char *w = json_dumps(json_array_get(items, i), JSON_COMPACT | JSON_PRESERVE_ORDER);
        cr_assert_str_eq(g, w, "%s: the claim read back differs", cases[i].name);
        if (cases[i].elided) cr_assert(strlen(c->raw_json) < strlen(w) - 100, "%s: kept %s", cases[i].name, c->raw_json);
        free(g);
        free(w);
        json_decref(got);
    }
    dra_snapshot_release(s);
    dra_store_free(st);
    json_decref(items);
}
