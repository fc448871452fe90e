/* test_memo.c — the fit memo (engine/pod/podfit.c signature(), engine/store/store.c) gives a pod
 * only answers that are its own: the two ways it once answered a pod with another
 * pod's answer (issue #23), and a differential test — random sequences of object
 * changes and pod requests against one long-lived store (its memo warm and handed on
 * from snapshot to snapshot), every node's answer compared with a fresh store's on the
 * same objects, where nothing is remembered yet.
 *
 * `make test` runs MEMO_FAST steps; a campaign (100,000 node decisions and more):
 *   DRALLOC_MEMO_STEPS=20000 [DRALLOC_MEMO_SEED=n] build/tests/test_engine --filter 'memo/'*
 * A mismatch prints the seed, the step, the pod and both answers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

enum { MEMO_FAST = 1500, MN = 4 };   /* steps in `make test`; nodes node-0 .. node-3 */

static json_t *mparse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    cr_assert_not_null(j, "%s: %s", je.text, s);
    return j;
}

static dra_store *mstore(const dra_store *like) {
    dra_features f;
    dra_features_default(&f);
    return like ? dra_store_new_sharing(&f, like) : dra_store_new(&f);
}

static void mapply(dra_store *st, json_t *objs) {
    err e;
    err_clear(&e);
    char buf[2048];
    cr_assert_neq(dra_store_apply_json(st, objs, &e), 0, "%s", err_format(&e, buf, sizeof buf));
}

/* One node's answer as text: status, score, reason. */
static void mfit(dra_snapshot *s, const json_t *pod, const char *node, char *out, size_t n, bool *hit) {
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit f;
    dra_pod_fit(pr, x, node, NULL, DRA_SCORE_BINPACK, 0, &f);
    if (hit) *hit = f.memo_hit;
    snprintf(out, n, "%s %lld %s", dra_fit_status_name(f.status), (long long)f.score, f.reason);
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
}

/* ---- the two reproductions of issue #23 ------------------------------------------------- */

/* h100-0: 8 GPUs, 7 held by ml/holder; two unallocated claims with one spec. */
static const char *SHARED =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.nvidia.com\"},"
    "  \"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com'\"}}]}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"h100-0\"}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"h100-0-gpus\"},"
    "  \"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"h100-0\",\"pool\":{\"name\":\"h100-0\",\"generation\":1,"
    "  \"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"},{\"name\":\"gpu-2\"},"
    "  {\"name\":\"gpu-3\"},{\"name\":\"gpu-4\"},{\"name\":\"gpu-5\"},{\"name\":\"gpu-6\"},{\"name\":\"gpu-7\"}]}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"holder\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\",\"count\":7}}]}},"
    "  \"status\":{\"allocation\":{\"devices\":{\"results\":["
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-0\"},"
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-1\"},"
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-2\"},"
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-3\"},"
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-4\"},"
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-5\"},"
    "   {\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"h100-0\",\"device\":\"gpu-6\"}]}}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"shared-gpu\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"shared-gpu-2\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}]";

static const char *P_DUP =
    "{\"metadata\":{\"name\":\"p-dup-shared\",\"namespace\":\"ml\",\"uid\":\"u-dup\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
    " \"resourceClaims\":[{\"name\":\"a\",\"resourceClaimName\":\"shared-gpu\"},{\"name\":\"b\",\"resourceClaimName\":\"shared-gpu\"}]}}";
static const char *P_TWO =
    "{\"metadata\":{\"name\":\"p-two-shared\",\"namespace\":\"ml\",\"uid\":\"u-two\"},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
    " \"resourceClaims\":[{\"name\":\"a\",\"resourceClaimName\":\"shared-gpu\"},{\"name\":\"b\",\"resourceClaimName\":\"shared-gpu-2\"}]}}";

/* Both orders: whichever pod is asked first, the second gets its own answer — one
 * GPU free fits the pod naming one claim twice (one device) and not the pod naming
 * two claims (two devices). */
Test(memo, one_claim_named_twice_is_not_two_claims_with_its_spec) {
    for (int order = 0; order < 2; order++) {
        dra_store *st = mstore(NULL);
        json_t *c = mparse(SHARED);
        mapply(st, c);
        json_decref(c);
        json_t *dup = mparse(P_DUP), *two = mparse(P_TWO);
        dra_snapshot *s = dra_store_acquire(st);
        char a1[600], a2[600];
        bool hit;
        if (order == 0) {
            mfit(s, dup, "h100-0", a1, sizeof a1, NULL);
            mfit(s, two, "h100-0", a2, sizeof a2, &hit);
        } else {
            mfit(s, two, "h100-0", a2, sizeof a2, NULL);
            mfit(s, dup, "h100-0", a1, sizeof a1, &hit);
        }
        cr_expect_not(hit, "order %d: the second pod was answered from the first one's memo entry", order);
        cr_expect(!strncmp(a1, "fit ", 4), "order %d: p-dup-shared: %s", order, a1);
        cr_expect(!strncmp(a2, "unschedulable ", 14), "order %d: p-two-shared: %s", order, a2);
        /* and the same pod again is a hit with the same answer */
        char again[600];
        mfit(s, two, "h100-0", again, sizeof again, &hit);
        cr_expect(hit, "order %d: the same pod again should come from the memo", order);
        cr_expect_str_eq(again, a2);
        dra_snapshot_release(s);
        json_decref(dup);
        json_decref(two);
        dra_store_free(st);
    }
}

/* dp-0: a device-plugin node with 3 nvidia.com/gpu, 2 held by a bound ml/p-ext-2 (a
 * StatefulSet pod re-created before the old one's deletion arrived), and one GPU of a
 * DRA pool so the pods' claims make them DRA pods (memoised). */
static const char *TWIN =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.example.com\"},"
    "  \"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"dp-0\"},"
    "  \"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"3\",\"cpu\":\"8\",\"memory\":\"64Gi\",\"pods\":\"110\"}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"dp-0-gpus\"},"
    "  \"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"dp-0\",\"pool\":{\"name\":\"dp-0\",\"generation\":1,"
    "  \"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"}]}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"name\":\"one\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\"}}]}}}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-ext-2\",\"namespace\":\"ml\",\"uid\":\"uid-old\"},"
    "  \"spec\":{\"nodeName\":\"dp-0\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}}]";

static json_t *twin_pod(const char *name, const char *uid) {
    char buf[700];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\"%s%s%s},\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}],"
             "\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimTemplateName\":\"one\"}]}}",
             name, uid ? ",\"uid\":\"" : "", uid ? uid : "", uid ? "\"" : "");
    return mparse(buf);
}

/* kube-scheduler keys pods by UID: the pending ml/p-ext-2 (a new UID) does not fit
 * beside the bound one (2 + 2 > 3); the bound pod itself, asked again (its UID), is
 * not counted twice; a twin pod with other names fits nowhere either, whichever was
 * asked first. */
Test(memo, a_bound_pod_of_the_same_name_is_another_pod) {
    for (int order = 0; order < 2; order++) {
        dra_store *st = mstore(NULL);
        json_t *c = mparse(TWIN);
        mapply(st, c);
        json_decref(c);
        json_t *pending = twin_pod("p-ext-2", "uid-new"), *other = twin_pod("p-other", "uid-x"),
               *self = twin_pod("p-ext-2", "uid-old"), *bare = twin_pod("p-ext-2", NULL);
        dra_snapshot *s = dra_store_acquire(st);
        char a[600], b[600], me[600], nouid[600];
        if (order == 0) {
            mfit(s, pending, "dp-0", a, sizeof a, NULL);
            mfit(s, other, "dp-0", b, sizeof b, NULL);
        } else {
            mfit(s, other, "dp-0", b, sizeof b, NULL);
            mfit(s, pending, "dp-0", a, sizeof a, NULL);
        }
        mfit(s, self, "dp-0", me, sizeof me, NULL);
        mfit(s, bare, "dp-0", nouid, sizeof nouid, NULL);
        cr_expect(strstr(a, "unschedulable") == a && strstr(a, "2 in use"), "order %d: pending p-ext-2: %s", order, a);
        cr_expect(strstr(b, "unschedulable") == b && strstr(b, "2 in use"), "order %d: p-other: %s", order, b);
        cr_expect(!strncmp(me, "fit ", 4), "order %d: the bound pod itself: %s", order, me);
        /* without a UID on one side the name decides (objects written by hand) */
        cr_expect(!strncmp(nouid, "fit ", 4), "order %d: p-ext-2 without a uid: %s", order, nouid);
        dra_snapshot_release(s);
        json_decref(pending);
        json_decref(other);
        json_decref(self);
        json_decref(bare);
        dra_store_free(st);
    }
}

/* Found by the differential test below: two pods without a UID, each with a bound pod
 * of its own name on another node. On dp-0 the first is itself (not counted) and the
 * second is not: their needs are equal, their answers are not. */
Test(memo, pods_without_a_uid_are_told_apart_by_name) {
    dra_store *st = mstore(NULL);
    json_t *c = mparse(TWIN);
    json_array_append_new(c, mparse("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"dp-1\"},"
                                    "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"3\"}}}"));
    json_array_append_new(c, mparse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-b\","
                                    "\"namespace\":\"ml\"},\"spec\":{\"nodeName\":\"dp-1\",\"containers\":[{\"name\":\"c\"}]}}"));
    mapply(st, c);
    json_decref(c);
    json_t *a = twin_pod("p-ext-2", NULL), *b = twin_pod("p-b", NULL);
    dra_snapshot *s = dra_store_acquire(st);
    char ra[600], rb[600];
    mfit(s, a, "dp-0", ra, sizeof ra, NULL);
    mfit(s, b, "dp-0", rb, sizeof rb, NULL);
    cr_expect(!strncmp(ra, "fit ", 4), "ml/p-ext-2 is the bound pod: %s", ra);
    cr_expect(strstr(rb, "unschedulable") == rb && strstr(rb, "2 in use"), "ml/p-b counts ml/p-ext-2: %s", rb);
    dra_snapshot_release(s);
    json_decref(a);
    json_decref(b);
    dra_store_free(st);
}

/* ---- the differential test -------------------------------------------------------------- */

typedef struct mgen {
    unsigned seed;
    json_t *objs;            /* "Kind/ns/name" → object: what the long-lived store holds */
    int uid_gen;
} mgen;

static int mr(mgen *g, int n) { return rand_r(&g->seed) % n; }

static json_t *meta(const char *name, const char *ns) {
    return ns ? json_pack("{s:s, s:s}", "name", name, "namespace", ns) : json_pack("{s:s}", "name", name);
}

static json_t *obj(const char *api, const char *kind, const char *name, const char *ns, json_t *spec) {
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", api, "kind", kind, "metadata", meta(name, ns), "spec", spec);
}

/* A node's devices: a plain slice (1-4 GPUs, a model attribute), or a pool of two
 * slices (the second one sometimes missing: an incomplete pool), or a counter set
 * carved into a whole GPU and two halves (KEP-4815, counters in a slice of their own). */
static void gen_slices(mgen *g, int n, json_t *out) {
    char pool[16], name[32];
    snprintf(pool, sizeof pool, "node-%d", n);
    int shape = mr(g, 3), count = shape == 0 ? 1 : 2;
    static const char *const models[] = {"H100", "A100"};
    for (int part = 0; part < count; part++) {
        if (shape == 1 && part == 1 && mr(g, 4) == 0) break;   /* the pool's second slice not there yet */
        snprintf(name, sizeof name, "%s-s%d", pool, part);
        json_t *spec = json_pack("{s:s, s:s, s:{s:s, s:i, s:i}}", "driver", "gpu.example.com", "nodeName", pool, "pool",
                                 "name", pool, "generation", 1, "resourceSliceCount", count);
        json_t *devs = json_array();
        if (shape == 2 && part == 0) {
            json_object_set_new(spec, "sharedCounters",
                                json_pack("[{s:s, s:{s:{s:s}}}]", "name", "cs", "counters", "mem", "value", "2"));
            json_decref(devs);
            devs = NULL;
        } else if (shape == 2) {
            const char *dn[] = {"whole", "half-a", "half-b"};
            const char *use[] = {"2", "1", "1"};
            for (int d = 0; d < 3; d++)
                json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}}, s:[{s:s, s:{s:{s:s}}}]}", "name", dn[d],
                                                      "attributes", "model", "string", models[mr(g, 2)],
                                                      "consumesCounters", "counterSet", "cs", "counters", "mem",
                                                      "value", use[d]));
        } else {
            int nd = 1 + mr(g, 4);
            for (int d = 0; d < nd; d++) {
                char dn[16];
                snprintf(dn, sizeof dn, "gpu-%d%s", d, part ? "x" : "");
                json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}}}", "name", dn, "attributes", "model",
                                                      "string", models[mr(g, 2)]));
            }
        }
        if (devs) json_object_set_new(spec, "devices", devs);
        char key[64];
        snprintf(key, sizeof key, "ResourceSlice//%s", name);
        json_object_set_new(out, key, obj("resource.k8s.io/v1", "ResourceSlice", name, NULL, spec));
    }
}

static json_t *claim_spec(int count, const char *cls) {
    return json_pack("{s:{s:[{s:s, s:{s:s, s:i}}]}}", "devices", "requests", "name", "r", "exactly", "deviceClassName",
                     cls, "count", count);
}

/* The fixed part: classes and templates. */
static json_t *gen_fixed(void) {
    json_t *o = json_object();
    json_object_set_new(o, "DeviceClass//gpu.example.com",
                        obj("resource.k8s.io/v1", "DeviceClass", "gpu.example.com", NULL,
                            json_pack("{s:[{s:{s:s}}]}", "selectors", "cel", "expression",
                                      "device.driver == 'gpu.example.com'")));
    json_object_set_new(o, "DeviceClass//a100",
                        obj("resource.k8s.io/v1", "DeviceClass", "a100", NULL,
                            json_pack("{s:[{s:{s:s}}]}", "selectors", "cel", "expression",
                                      "device.driver == 'gpu.example.com' && "
                                      "device.attributes['gpu.example.com'].model == 'A100'")));
    json_object_set_new(o, "ResourceClaimTemplate/ml/one",
                        obj("resource.k8s.io/v1", "ResourceClaimTemplate", "one", "ml",
                            json_pack("{s:o}", "spec", claim_spec(1, "gpu.example.com"))));
    json_object_set_new(o, "ResourceClaimTemplate/ml/two",
                        obj("resource.k8s.io/v1", "ResourceClaimTemplate", "two", "ml",
                            json_pack("{s:o}", "spec", claim_spec(2, "gpu.example.com"))));
    return o;
}

/* A device of node n's pool the generator knows exists in some shape ("gpu-0" in a
 * plain pool, "half-a" in a carved one): read from the current slice. */
static const char *some_device(mgen *g, int n) {
    char key[64];
    snprintf(key, sizeof key, "ResourceSlice//node-%d-s%d", n, mr(g, 2));
    json_t *devs = json_object_get(json_object_get(json_object_get(g->objs, key), "spec"), "devices");
    size_t nd = json_array_size(devs);
    return nd ? json_string_value(json_object_get(json_array_get(devs, (size_t)mr(g, (int)nd)), "name")) : NULL;
}

/* One random change to g->objs, appended to ops in order: an object to upsert, or the
 * "Kind/ns/name" key of one to delete. */
static void gen_change(mgen *g, json_t *ops) {
    char key[96], name[32], node[16];
    int n = mr(g, MN);
    snprintf(node, sizeof node, "node-%d", n);
    switch (mr(g, 9)) {
    case 0: { /* a Node, with device-plugin GPUs or without, or gone */
        snprintf(key, sizeof key, "Node//%s", node);
        if (mr(g, 4) == 0) break;
        json_t *status = json_pack("{s:{s:s, s:s, s:s}}", "allocatable", "cpu", "8", "memory", "64Gi", "pods", "110");
        if (mr(g, 2)) {
            char v[16];
            snprintf(v, sizeof v, "%d", mr(g, 4));
            json_object_set_new(json_object_get(status, "allocatable"), "nvidia.com/gpu", json_string(v));
        }
        json_t *o = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Node", "metadata",
                              json_pack("{s:s, s:{s:s}}", "name", node, "labels", "zone", mr(g, 2) ? "a" : "b"),
                              "status", status);
        json_array_append_new(ops, o);
        json_object_set(g->objs, key, o);
        return;
    }
    case 1: case 2: { /* the node's devices, in one of the shapes, or none */
        json_t *fresh = json_object();
        if (mr(g, 5)) gen_slices(g, n, fresh);
        for (int p = 0; p < 2; p++) {
            snprintf(key, sizeof key, "ResourceSlice//node-%d-s%d", n, p);
            if (json_object_get(g->objs, key) && !json_object_get(fresh, key)) {
                json_array_append_new(ops, json_string(key));
                json_object_del(g->objs, key);
            }
        }
        const char *k;
        json_t *v;
        json_object_foreach(fresh, k, v) {
            json_array_append(ops, v);
            json_object_set(g->objs, k, v);
        }
        json_decref(fresh);
        return;
    }
    case 3: { /* a DeviceTaintRule over a pool or a device name */
        snprintf(key, sizeof key, "DeviceTaintRule//maint");
        if (mr(g, 2) == 0) break;
        json_t *sel = mr(g, 2) ? json_pack("{s:s}", "pool", node) : json_pack("{s:s}", "device", "gpu-1");
        json_t *o = obj("resource.k8s.io/v1alpha3", "DeviceTaintRule", "maint", NULL,
                        json_pack("{s:o, s:{s:s, s:s, s:s}}", "deviceSelector", sel, "taint", "key", "maintenance",
                                  "value", "true", "effect", "NoSchedule"));
        json_array_append_new(ops, o);
        json_object_set(g->objs, key, o);
        return;
    }
    case 4: case 5: { /* a named claim: unallocated (specs collide on purpose), or allocated */
        int c = mr(g, 4);
        snprintf(name, sizeof name, "c%d", c);
        snprintf(key, sizeof key, "ResourceClaim/ml/%s", name);
        if (mr(g, 5) == 0) break;
        json_t *o = obj("resource.k8s.io/v1", "ResourceClaim", name, "ml",
                        claim_spec(1 + mr(g, 2), mr(g, 4) ? "gpu.example.com" : "a100"));
        const char *dev = mr(g, 2) ? some_device(g, n) : NULL;
        /* a device is held by at most one claim: claim c<i> only takes devices of node-<i> */
        if (dev && n == c % MN) {
            json_t *spec = json_object_get(o, "spec");
            json_object_set_new(json_object_get(json_array_get(json_object_get(json_object_get(spec, "devices"), "requests"), 0),
                                                "exactly"),
                                "count", json_integer(1));
            json_object_set_new(o, "status",
                                json_pack("{s:{s:{s:[{s:s, s:s, s:s, s:s}]}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}",
                                          "allocation", "devices", "results", "request", "r", "driver",
                                          "gpu.example.com", "pool", node, "device", dev, "nodeSelector",
                                          "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In",
                                          "values", node));
        }
        json_array_append_new(ops, o);
        json_object_set(g->objs, key, o);
        return;
    }
    default: { /* a bound pod holding device-plugin GPUs, under names pending pods also use */
        int p = mr(g, 3);
        snprintf(name, sizeof name, "p%d", p);
        snprintf(key, sizeof key, "Pod/ml/%s", name);
        if (mr(g, 3) == 0) break;
        char uid[32], gpus[16];
        snprintf(uid, sizeof uid, "uid-%d", mr(g, 3));
        snprintf(gpus, sizeof gpus, "%d", 1 + mr(g, 2));
        json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s}}}]}}", "apiVersion", "v1",
                              "kind", "Pod", "metadata", "name", name, "namespace", "ml", "uid", uid, "spec",
                              "nodeName", node, "containers", "name", "c", "resources", "limits", "nvidia.com/gpu",
                              gpus);
        if (mr(g, 6) == 0) json_object_set_new(o, "status", json_pack("{s:s}", "phase", "Succeeded"));
        json_array_append_new(ops, o);
        json_object_set(g->objs, key, o);
        return;
    }
    }
    if (json_object_get(g->objs, key)) {   /* a deletion */
        json_array_append_new(ops, json_string(key));
        json_object_del(g->objs, key);
    }
}

/* A pending pod: names overlapping the bound pods', a UID of a few (or none), entries
 * drawn with repeats from the named claims and the templates, device-plugin GPUs. */
static json_t *gen_pod(mgen *g) {
    char name[16];
    snprintf(name, sizeof name, "p%d", mr(g, 5));
    json_t *md = json_pack("{s:s, s:s}", "name", name, "namespace", "ml");
    if (mr(g, 4)) {
        char uid[16];
        snprintf(uid, sizeof uid, "uid-%d", mr(g, 3));
        json_object_set_new(md, "uid", json_string(uid));
    }
    json_t *cont = json_pack("{s:s}", "name", "c");
    if (mr(g, 3) == 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", 1 + mr(g, 2));
        json_object_set_new(cont, "resources", json_pack("{s:{s:s}}", "limits", "nvidia.com/gpu", v));
    }
    json_t *entries = json_array();
    int ne = mr(g, 4);
    for (int i = 0; i < ne; i++) {
        char en[16], ref[16];
        snprintf(en, sizeof en, "e%d", i);
        int r = mr(g, 6);
        if (r < 4) {
            snprintf(ref, sizeof ref, "c%d", r);
            json_array_append_new(entries, json_pack("{s:s, s:s}", "name", en, "resourceClaimName", ref));
        } else {
            json_array_append_new(entries, json_pack("{s:s, s:s}", "name", en, "resourceClaimTemplateName",
                                                     r == 4 ? "one" : "two"));
        }
    }
    return json_pack("{s:o, s:{s:[o], s:o}}", "metadata", md, "spec", "containers", cont, "resourceClaims", entries);
}

static json_t *values_of(const json_t *objs) {
    json_t *a = json_array();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)objs, k, v) json_array_append(a, v);
    return a;
}

/* The "Kind/ns/name" key of an op (an object, or the key itself). */
static void op_key(const json_t *op, char *k, size_t n) {
    if (json_is_string(op)) {
        snprintf(k, n, "%s", json_string_value(op));
        return;
    }
    const json_t *md = json_object_get(op, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    snprintf(k, n, "%s/%s/%s", json_string_value(json_object_get(op, "kind")), ns ? ns : "",
             json_string_value(json_object_get(md, "name")));
}

/* ops[from, to) as one dra_store_apply. */
static void apply_ops(dra_store *st, const json_t *ops, size_t from, size_t to, unsigned seed, int step) {
    dra_change ch[16];
    char parts[16][3][64];
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        const json_t *v = json_array_get(ops, i);
        cr_assert_lt(n, 16);
        if (json_is_object(v)) {
            ch[n++] = (dra_change){.upsert = v};
            continue;
        }
        const char *k = json_string_value(v), *s1 = strchr(k, '/'), *s2 = strchr(s1 + 1, '/');
        snprintf(parts[n][0], 64, "%.*s", (int)(s1 - k), k);
        snprintf(parts[n][1], 64, "%.*s", (int)(s2 - s1 - 1), s1 + 1);
        snprintf(parts[n][2], 64, "%s", s2 + 1);
        ch[n] = (dra_change){.kind = parts[n][0], .ns = parts[n][1], .name = parts[n][2]};
        n++;
    }
    err e;
    err_clear(&e);
    char buf[2048];
    cr_assert_neq(dra_store_apply(st, ch, n, &e), 0, "seed %u step %d: %s", seed, step, err_format(&e, buf, sizeof buf));
}

Test(memo, answers_equal_a_fresh_store_s) {
    const char *env = getenv("DRALLOC_MEMO_STEPS"), *senv = getenv("DRALLOC_MEMO_SEED");
    int steps = env ? atoi(env) : MEMO_FAST;
    mgen g = {.seed = senv ? (unsigned)atoi(senv) : 23, .objs = gen_fixed()};
    unsigned seed0 = g.seed;
    dra_store *live = mstore(NULL);
    json_t *init = values_of(g.objs);
    mapply(live, init);
    json_decref(init);
    json_t *recent = json_array();   /* pods asked lately: asked again, interleaved with new ones */
    size_t decisions = 0, hits = 0;
    for (int step = 0; step < steps; step++) {
        json_t *ops = json_array();
        int nc = mr(&g, 2) ? 1 + mr(&g, 3) : 0;   /* half the steps only ask: answers from the memo */
        for (int i = 0; i < nc; i++) gen_change(&g, ops);
        /* one batch (one snapshot, several changes handed on at once), unless two
         * changes touch one object: then one at a time, as the watch would send them */
        json_t *seen = json_object();
        bool twice = false;
        for (size_t i = 0; i < json_array_size(ops); i++) {
            char k[160];
            op_key(json_array_get(ops, i), k, sizeof k);
            twice |= json_object_get(seen, k) != NULL;
            json_object_set_new(seen, k, json_true());
        }
        json_decref(seen);
        for (size_t from = 0; from < json_array_size(ops);) {
            size_t to = twice ? from + 1 : json_array_size(ops);
            apply_ops(live, ops, from, to, seed0, step);
            from = to;
        }
        json_decref(ops);
        dra_snapshot *s = dra_store_acquire(live);
        int npods = 1 + mr(&g, 3);
        for (int q = 0; q < npods; q++) {
            json_t *pod;
            if (json_array_size(recent) && mr(&g, 2)) pod = json_incref(json_array_get(recent, (size_t)mr(&g, (int)json_array_size(recent))));
            else {
                pod = gen_pod(&g);
                json_array_append(recent, pod);
                if (json_array_size(recent) > 8) json_array_remove(recent, 0);
            }
            /* the reference: a store that has seen only these objects and no pod */
            dra_store *fresh = mstore(live);
            json_t *all = values_of(g.objs);
            mapply(fresh, all);
            json_decref(all);
            dra_snapshot *fs = dra_store_acquire(fresh);
            for (int n = 0; n <= MN; n++) {
                char node[16], got[700], want[700];
                snprintf(node, sizeof node, "node-%d", n);   /* node-4: in no object */
                bool hit;
                mfit(s, pod, node, got, sizeof got, &hit);
                mfit(fs, pod, node, want, sizeof want, NULL);
                decisions++;
                hits += hit;
                if (strcmp(got, want)) {
                    char *pj = json_dumps(pod, JSON_COMPACT), *oj = json_dumps(g.objs, JSON_COMPACT | JSON_INDENT(1));
                    cr_assert_fail("seed %u step %d, pod %s on %s:\n  long-lived%s: %s\n  fresh:      %s\nobjects: %s", seed0,
                             step, pj, node, hit ? " (memo)" : "", got, want, oj);
                }
            }
            dra_snapshot_release(fs);
            dra_store_free(fresh);
            json_decref(pod);
        }
        dra_snapshot_release(s);
    }
    fprintf(stderr, "memo differential: %d steps from seed %u: %zu node decisions, %zu from the memo (%.0f %%)\n", steps,
            seed0, decisions, hits, decisions ? 100.0 * (double)hits / (double)decisions : 0.0);
    cr_expect_gt(hits, decisions / 20, "the memo should answer some decisions (%zu of %zu)", hits, decisions);
    json_decref(recent);
    json_decref(g.objs);
    dra_store_free(live);
}
