/* test_store.c — the long-running core (engine/snapshot.h): a store fed objects,
 * immutable snapshots that readers pin while the writer publishes new ones, a Pod
 * decided per node (fit, unschedulable, unresolvable, error, timeout) with scores,
 * and many threads reading while snapshots are swapped. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "engine/engine.h"

/* Three nodes of 4 GPUs: node-1 free, node-2 with gpu-0..2 held by an allocated
 * claim, node-3 without any slice. */
static const char *CLUSTER =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu.example.com\"},"
    "  \"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}},"
    " {\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\",\"labels\":{\"zone\":\"a\"}}},"
    " {\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-2\"}},"
    " {\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-3\"}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-1-gpus\"},"
    "  \"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":1,"
    "  \"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"},{\"name\":\"gpu-2\"},{\"name\":\"gpu-3\"}]}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-2-gpus\"},"
    "  \"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-2\",\"pool\":{\"name\":\"node-2\",\"generation\":1,"
    "  \"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"},{\"name\":\"gpu-2\"},{\"name\":\"gpu-3\"}]}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"name\":\"two-gpus\","
    "  \"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
    "  {\"deviceClassName\":\"gpu.example.com\",\"count\":2}}]}}}},"
    " {\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"busy\",\"namespace\":\"ml\"},"
    "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":3}}]}},"
    "  \"status\":{\"allocation\":{\"devices\":{\"results\":["
    "   {\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-2\",\"device\":\"gpu-0\"},"
    "   {\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-2\",\"device\":\"gpu-1\"},"
    "   {\"request\":\"gpu\",\"driver\":\"gpu.example.com\",\"pool\":\"node-2\",\"device\":\"gpu-2\"}]},"
    "   \"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
    "   \"values\":[\"node-2\"]}]}]}}}}]";

static const char *POD =
    "{\"metadata\":{\"name\":\"trainer-0\",\"namespace\":\"ml\"},\"spec\":{\"containers\":[{\"name\":\"main\"}],"
    " \"resourceClaims\":[{\"name\":\"gpus\",\"resourceClaimTemplateName\":\"two-gpus\"}]}}";

static json_t *parse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    cr_assert_not_null(j, "%s", je.text);
    return j;
}

static dra_store *store_with_cluster(void) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *c = parse(CLUSTER);
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, c, &e), 1, "%s", e.msg);
    json_decref(c);
    return st;
}

static dra_fit_status fit(dra_snapshot *s, const char *pod, const char *node, dra_fit *out) {
    json_t *p = parse(pod);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit f;
    dra_pod_fit(pr, x, node, NULL, DRA_SCORE_BINPACK, 0, out ? out : &f);
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(p);
    return out ? out->status : f.status;
}

Test(store, fit_per_node) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s), 1);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), 2);
    cr_assert_eq(dra_snapshot_count(s, "Node"), 3);
    cr_assert_str_eq(dra_snapshot_node_name(s, 2), "node-3");
    dra_fit f;
    cr_assert_eq(fit(s, POD, "node-1", &f), DRA_FIT_OK, "%s", f.reason);
    /* one GPU free of four: usage could change, so not unresolvable */
    cr_assert_eq(fit(s, POD, "node-2", &f), DRA_FIT_UNSCHEDULABLE, "%s", f.reason);
    cr_assert(strstr(f.reason, "ml/trainer-0-gpus") && strstr(f.reason, "request gpu: wants 2, 4 match gpu.example.com, 1 free"), "%s", f.reason);
    /* no device at all: nothing in use would help */
    cr_assert_eq(fit(s, POD, "node-3", &f), DRA_FIT_UNRESOLVABLE, "%s", f.reason);
    /* a node nobody has heard of is bare: no devices */
    cr_assert_eq(fit(s, POD, "node-9", &f), DRA_FIT_UNRESOLVABLE, "%s", f.reason);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* Each node name a request gave that the snapshot had no Node object for left a view
 * behind for the snapshot's life, handed on to every later one: a client naming
 * random nodes grew `dralloc serve` by ~25 KiB a request (5 names). At most 4,096 such
 * views are kept; past that they are built per request, with the same answers. */
Test(store, views_of_unknown_nodes_are_bounded) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    json_t *p = parse(POD);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "unknown-%d", i);
        dra_fit f;
        dra_pod_fit(pr, x, name, NULL, DRA_SCORE_BINPACK, 0, &f);
        cr_assert_eq(f.status, DRA_FIT_UNRESOLVABLE, "%s: %s", name, f.reason);
    }
    size_t bare = 0, views = dra_snapshot_cached_views(s, &bare);
    cr_assert_eq(bare, 4096, "%zu", bare);
    cr_assert_eq(views, 4096);
    /* known nodes are still cached past the bound */
    dra_fit f;
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_BINPACK, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    cr_assert_eq(dra_snapshot_cached_views(s, &bare), 4097);
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(p);
    /* the next snapshot does not take them over */
    json_t *n = parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-4\"}}");
    cr_assert(dra_store_apply_json(st, n, &e), "%s", e.msg);
    json_decref(n);
    dra_snapshot *s2 = dra_store_acquire(st);
    /* nor the memo: only nodes with a Node object keep answers (store.c), so both are
     * decided on views of their own in s2 */
    cr_assert_eq(fit(s2, POD, "unknown-1", &f), DRA_FIT_UNRESOLVABLE, "%s", f.reason);
    cr_assert_eq(fit(s2, POD, "unknown-new", &f), DRA_FIT_UNRESOLVABLE, "%s", f.reason);
    dra_snapshot_cached_views(s2, &bare);
    cr_assert_eq(bare, 2);
    dra_snapshot_release(s2);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(store, pod_without_claims_needs_nothing) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    json_t *p = parse("{\"metadata\":{\"name\":\"web\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                      "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    cr_assert_not_null(pr);
    cr_assert_not(dra_pod_request_needs_dra(pr));
    dra_pod_request_free(pr);
    json_decref(p);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* A template of the name the pod asks for exists, in another namespace than the pod's
 * (issue #21: the message said neither where it looked nor that): the text keeps
 * Kubernetes' NotFound wording, names the namespace searched and where the template
 * is; the same for a ResourceClaim by name. */
Test(store, missing_template_names_where_it_looked) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    dra_fit f;
    const char *pod = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\"},\"spec\":{\"resourceClaims\":"
                      "[{\"name\":\"gpus\",\"resourceClaimTemplateName\":\"two-gpus\"}]}}";
    cr_assert_eq(fit(s, pod, "node-1", &f), DRA_FIT_UNRESOLVABLE);
    cr_assert_str_eq(f.reason, "Pod team-a/p: claim gpus: resourceclaimtemplate.resource.k8s.io \"two-gpus\" not found "
                               "in namespace team-a; a ResourceClaimTemplate named two-gpus exists in namespace ml");
    const char *pod2 = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":"
                       "[{\"name\":\"c\",\"resourceClaimName\":\"busy\"}]}}";
    cr_assert_eq(fit(s, pod2, "node-1", &f), DRA_FIT_UNRESOLVABLE);
    cr_assert_str_eq(f.reason, "Pod default/p: claim c: resourceclaim.resource.k8s.io \"busy\" not found in namespace "
                               "default; a ResourceClaim named busy exists in namespace ml");
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(store, missing_template_and_bad_pod) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    dra_fit f;
    const char *pod = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":"
                      "[{\"name\":\"x\",\"resourceClaimTemplateName\":\"nope\"}]}}";
    cr_assert_eq(fit(s, pod, "node-1", &f), DRA_FIT_UNRESOLVABLE);
    cr_assert(strstr(f.reason, "Pod ml/p: claim x: resourceclaimtemplate.resource.k8s.io \"nope\" not found in namespace ml"),
              "%s", f.reason);
    cr_assert_null(strstr(f.reason, "exists in"), "%s", f.reason);
    json_t *bad = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":7}}");
    err e;
    err_clear(&e);
    cr_assert_null(dra_pod_request_new(s, bad, &e));
    char buf[2048];
    err_format(&e, buf, sizeof buf);
    cr_assert(strstr(buf, "Pod p: spec.resourceClaims: expected array"), "%s", buf);
    json_decref(bad);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(store, snapshots_are_immutable_while_pinned) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s1 = dra_store_acquire(st);
    dra_change del = {.kind = "ResourceClaim", .ns = "ml", .name = "busy"};
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply(st, &del, 1, &e), 2, "%s", e.msg);
    dra_snapshot *s2 = dra_store_acquire(st);
    cr_assert_eq(fit(s1, POD, "node-2", NULL), DRA_FIT_UNSCHEDULABLE);
    cr_assert_eq(fit(s2, POD, "node-2", NULL), DRA_FIT_OK);
    cr_assert_eq(dra_snapshot_count(s1, "ResourceClaim"), 1);
    cr_assert_eq(dra_snapshot_count(s2, "ResourceClaim"), 0);
    /* deleting again: not found, nothing published */
    cr_assert_eq(dra_store_apply(st, &del, 1, &e), 0);
    cr_assert(strstr(e.msg, "ResourceClaim ml/busy not found"), "%s", e.msg);
    dra_snapshot_release(s1);
    dra_snapshot *s3 = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s3), 2);
    dra_snapshot_release(s3);
    dra_snapshot_release(s2);
    dra_store_free(st);
}

Test(store, invalid_object_keeps_the_current_snapshot) {
    dra_store *st = store_with_cluster();
    json_t *bad = parse("[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"x\"},"
                        "\"spec\":{\"driver\":\"d\",\"nodeName\":\"node-3\",\"pool\":{\"name\":\"p\",\"generation\":1,"
                        "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"a\",\"capacity\":{\"m\":{\"value\":\"x!\"}}}]}}]");
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, bad, &e), 0);
    char buf[2048];
    err_format(&e, buf, sizeof buf);
    cr_assert(strstr(buf, "ResourceSlice x: spec.devices[0].capacity"), "%s", buf);
    json_decref(bad);
    dra_snapshot *s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s), 1);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), 2);
    dra_snapshot_release(s);
    json_t *unk = parse("{\"kind\":\"Gadget\",\"metadata\":{\"name\":\"g\"}}");
    cr_assert_eq(dra_store_apply_json(st, unk, &e), 0);
    cr_assert(strstr(e.msg, "unsupported kind Gadget"), "%s", e.msg);
    json_decref(unk);
    dra_store_free(st);
}

Test(store, duplicate_with_different_contents_names_both_sources) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *a = parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\"}}}");
    json_t *b = parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"2\"}}}");
    dra_change same[2] = {{.upsert = a, .source = "one.yaml"}, {.upsert = a, .source = "two.yaml"}};
    dra_change diff[2] = {{.upsert = a, .source = "one.yaml"}, {.upsert = b, .source = "two.yaml"}};
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply(st, same, 2, &e), 1, "%s", e.msg);
    cr_assert_eq(dra_store_apply(st, diff, 2, &e), 0);
    cr_assert(strstr(e.msg, "one.yaml") && strstr(e.msg, "two.yaml") && strstr(e.msg, "Node n is given twice"), "%s", e.msg);
    json_decref(a);
    json_decref(b);
    dra_store_free(st);
}

typedef struct skips {
    int n;
    char last[1200];
} skips;

static void count_skip(void *arg, const dra_change *c, const err *why) {
    skips *k = arg;
    k->n++;
    char buf[1100];
    snprintf(k->last, sizeof k->last, "%s%s", c->upsert ? "upsert: " : "delete: ", err_format(why, buf, sizeof buf));
}

/* A watch's batch: one bad object and one deletion of what is not there are left out,
 * the rest (a node changed twice in the batch, a new node) lands as one snapshot. */
Test(store, a_batch_skips_what_the_engine_refuses_in_one_snapshot) {
    dra_store *st = store_with_cluster();
    json_t *n3a = parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-3\",\"labels\":{\"v\":\"1\"}}}");
    json_t *n3b = parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-3\",\"labels\":{\"v\":\"2\"}}}");
    json_t *n4 = parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-4\"}}");
    json_t *bad = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"x\"},"
                        "\"spec\":{\"driver\":\"d\",\"nodeName\":\"node-3\",\"pool\":{\"name\":\"p\",\"generation\":1,"
                        "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"a\",\"capacity\":{\"m\":{\"value\":\"x!\"}}}]}}");
    json_t *n5 = parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-5\"}}");
    /* node-5 added and deleted within the batch (ADDED then DELETED in one chunk) */
    dra_change batch[7] = {{.upsert = n3a},
                           {.upsert = bad},
                           {.upsert = n5},
                           {.upsert = n3b},
                           {.kind = "ResourceClaim", .ns = "ml", .name = "never-there"},
                           {.kind = "Node", .name = "node-5"},
                           {.upsert = n4}};
    skips k = {0};
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_batch(st, batch, 7, count_skip, &k, &e), 2, "%s", e.msg);
    cr_assert_eq(k.n, 2);
    cr_assert(strstr(k.last, "delete: ResourceClaim ml/never-there not found"), "%s", k.last);
    dra_snapshot *s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s, "Node"), 4);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), 2);
    dra_snapshot_release(s);
    /* nothing but refusals: no new snapshot */
    k.n = 0;
    cr_assert_eq(dra_store_apply_batch(st, &batch[1], 1, count_skip, &k, &e), 2, "%s", e.msg);
    cr_assert_eq(k.n, 1);
    cr_assert(strstr(k.last, "upsert: ResourceSlice x: spec.devices[0].capacity"), "%s", k.last);
    json_decref(n3a);
    json_decref(n3b);
    json_decref(n4);
    json_decref(n5);
    json_decref(bad);
    dra_store_free(st);
}

/* A batch large enough to be decoded on two threads (work_ahead.c) gives what one
 * thread gives: the refused objects reported in order, the first error of an
 * all-or-nothing batch the first in order, an object given again unchanged kept. */
static json_t *numbered_slice(int i, bool bad) {
    char buf[700];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s-%03d\"},"
             "\"spec\":{\"driver\":\"d\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"p%03d\",\"generation\":1,"
             "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"a\",\"capacity\":{\"m\":{\"value\":\"%s\"}}}]}}",
             i, i, bad ? "x!" : "1Gi");
    return parse(buf);
}

Test(store, a_large_batch_decoded_on_two_threads_applies_in_order) {
    enum { N = 300 };
    dra_store *st = store_with_cluster();
    dra_snapshot *s0 = dra_store_acquire(st);
    size_t base = dra_snapshot_count(s0, "ResourceSlice");
    dra_snapshot_release(s0);
    json_t *objs[N];
    dra_change batch[N];
    for (int i = 0; i < N; i++) {
        objs[i] = numbered_slice(i, i == 77 || i == 211);
        batch[i] = (dra_change){.upsert = objs[i]};
    }
    err e;
    err_clear(&e);
    /* all or nothing: the first bad one in order, nothing applied */
    cr_assert_eq(dra_store_apply(st, batch, N, &e), 0);
    char buf[1200];
    cr_assert(strstr(err_format(&e, buf, sizeof buf), "ResourceSlice s-077: spec.devices[0].capacity"), "%s", buf);
    dra_snapshot *s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), base);
    dra_snapshot_release(s);
    /* a watch's batch: both reported, in order, the rest applied */
    skips k = {0};
    err_clear(&e);
    cr_assert_eq(dra_store_apply_batch(st, batch, N, count_skip, &k, &e), 2, "%s", e.msg);
    cr_assert_eq(k.n, 2);
    cr_assert(strstr(k.last, "upsert: ResourceSlice s-211: spec.devices[0].capacity"), "%s", k.last);
    s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), base + N - 2);
    dra_snapshot_release(s);
    /* the same objects again: nothing decoded, nothing new */
    k.n = 0;
    uint64_t gen = dra_store_apply_batch(st, batch, N, count_skip, &k, &e);
    cr_assert_eq(k.n, 2);
    s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), base + N - 2);
    cr_assert_eq(dra_snapshot_generation(s), gen);
    dra_snapshot_release(s);
    for (int i = 0; i < N; i++) json_decref(objs[i]);
    dra_store_free(st);
}

/* The names met on each thread of a two-thread batch are remembered for the objects
 * decoded next (catalog.h, dra_name_memo), each held by the memo while the batch
 * lasts: when the batch ends the memo gives them back, so deleting its objects gives
 * the catalog back its size before them. */
Test(store, a_batch_decoded_on_two_threads_holds_no_name_past_it) {
    enum { N = 300 };
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    dra_catalog_sizes before, full, after;
    dra_snapshot_catalog_sizes(s, &before);
    dra_snapshot_release(s);
    json_t *objs[N];
    dra_change batch[N], drop[N];
    char names[N][16];
    for (int i = 0; i < N; i++) {
        objs[i] = numbered_slice(i, false);
        batch[i] = (dra_change){.upsert = objs[i], .served = i % 2 == 0};
        snprintf(names[i], sizeof names[i], "s-%03d", i);
        drop[i] = (dra_change){.kind = "ResourceSlice", .name = names[i]};
    }
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply(st, batch, N, &e), 0, "%s", e.msg);
    s = dra_store_acquire(st);
    dra_snapshot_catalog_sizes(s, &full);
    dra_snapshot_release(s);
    cr_assert_geq(full.names, before.names + N, "each slice's pool name interned (%zu, before %zu)", full.names,
                  before.names);
    cr_assert_neq(dra_store_apply(st, drop, N, &e), 0, "%s", e.msg);
    s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s, "ResourceSlice"), 2, "the cluster's own slices stay");
    dra_snapshot_catalog_sizes(s, &after);
    dra_snapshot_release(s);
    cr_expect_eq(after.names, before.names, "names: %zu left, %zu before the batch", after.names, before.names);
    for (int i = 0; i < N; i++) json_decref(objs[i]);
    dra_store_free(st);
}

/* A service's store keeps no object's text, but an opaque config's parameters are part
 * of what /bind writes: kube-scheduler's allocator copies the class's and the claim's
 * config, parameters included, into status.allocation.config
 * (structured/allocator.go, AllocationResult.Devices.Config; a config covering every
 * request of the claim names none, as in TestAllocator "with class device config"). */
Test(store, bind_results_carry_opaque_config_parameters) {
    dra_store *st = store_with_cluster();
    json_t *cls = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":"
                        "\"gpu.example.com\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == "
                        "'gpu.example.com'\"}}],\"config\":[{\"opaque\":{\"driver\":\"gpu.example.com\",\"parameters\":"
                        "{\"sharing\":{\"strategy\":\"TimeSlicing\",\"interval\":\"Long\"}}}}]}}");
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply_json(st, cls, &e), 0, "%s", e.msg);
    json_decref(cls);
    dra_snapshot *s = dra_store_acquire(st);
    json_t *p = parse(POD);
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit f;
    json_t *alloc = dra_pod_fit_allocation(pr, x, "node-1", 0, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    const json_t *cfg = json_object_get(json_object_get(json_array_get(alloc, 0), "allocation"), "devices");
    cfg = json_array_get(json_object_get(cfg, "config"), 0);
    char *got = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
    cr_expect_str_eq(got, "{\"opaque\":{\"driver\":\"gpu.example.com\",\"parameters\":{\"sharing\":{\"interval\":"
                          "\"Long\",\"strategy\":\"TimeSlicing\"}}},\"source\":\"FromClass\"}");
    free(got);
    json_decref(alloc);
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(p);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(store, binpack_prefers_the_used_node) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    const char *one = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":"
                      "[{\"name\":\"g\",\"resourceClaimName\":\"one\"}]}}";
    json_t *claim = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"one\","
                          "\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
                          "{\"deviceClassName\":\"gpu.example.com\"}}]}}}");
    err e;
    err_clear(&e);
    dra_snapshot_release(s);
    cr_assert_eq(dra_store_apply_json(st, claim, &e), 2, "%s", e.msg);
    json_decref(claim);
    s = dra_store_acquire(st);
    dra_fit f1, f2;
    cr_assert_eq(fit(s, one, "node-1", &f1), DRA_FIT_OK);
    cr_assert_eq(fit(s, one, "node-2", &f2), DRA_FIT_OK);
    /* node-1: 1 of 4 used after placing → 3; node-2: 4 of 4 → 10 */
    cr_assert_eq(f1.score, 3);
    cr_assert_eq(f2.score, 10);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(store, deadline_times_out) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    json_t *p = parse(POD);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit f;
    /* a deadline already past stops the search at its first check */
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_NONE, 1, &f);
    cr_assert_eq(f.status, DRA_FIT_TIMEOUT, "%s", dra_fit_status_name(f.status));
    cr_assert_str_eq(f.reason, "timed out trying to allocate devices");
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(p);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* ---- many readers, one writer ------------------------------------------------------------ */

typedef struct race {
    dra_store *st;
    _Atomic bool stop;
    _Atomic long checked, wrong;
} race;

static void *reader(void *arg) {
    race *r = arg;
    json_t *p = parse(POD);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    for (int i = 0; i < 400 && !atomic_load(&r->stop); i++) {
        dra_snapshot *s = dra_store_acquire(r->st);
        err e;
        err_clear(&e);
        dra_pod_request *pr = dra_pod_request_new(s, p, &e);
        dra_fit f;
        dra_pod_fit(pr, x, "node-2", NULL, DRA_SCORE_BINPACK, 0, &f);
        /* the answer is the answer of the snapshot the request pinned, never a mix */
        bool busy = dra_snapshot_count(s, "ResourceClaim") == 1;
        dra_fit_status want = busy ? DRA_FIT_UNSCHEDULABLE : DRA_FIT_OK;
        if (f.status != want) atomic_fetch_add(&r->wrong, 1);
        atomic_fetch_add(&r->checked, 1);
        dra_pod_request_free(pr);
        dra_snapshot_release(s);
    }
    dra_alloc_ctx_free(x);
    json_decref(p);
    return NULL;
}

Test(store, readers_see_whole_snapshots_while_the_writer_swaps, .timeout = 120) {
    race r = {.st = store_with_cluster()};
    json_t *all = parse(CLUSTER);
    json_t *busy = json_incref(json_array_get(all, json_array_size(all) - 1));
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, reader, &r);
    dra_change del = {.kind = "ResourceClaim", .ns = "ml", .name = "busy"};
    /* 200 swaps at least, and on until the readers have checked some answers: on a
     * loaded machine the writer can finish before a reader thread first runs */
    for (int i = 0; i < 200 || (atomic_load(&r.checked) < 100 && i < 200000); i++) {
        err e;
        err_clear(&e);
        uint64_t g = i % 2 ? dra_store_apply_json(r.st, busy, &e) : dra_store_apply(r.st, &del, 1, &e);
        cr_assert_neq(g, 0, "%s", e.msg);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    cr_assert_gt(atomic_load(&r.checked), 0);
    cr_assert_eq(atomic_load(&r.wrong), 0, "%ld of %ld answers were not their snapshot's", atomic_load(&r.wrong),
                 atomic_load(&r.checked));
    json_decref(busy);
    json_decref(all);
    dra_store_free(r.st);
}

/* The in-use state keeps every consumed capacity of a device (it kept 16 and dropped
 * the rest, so a device could be handed out beyond its capacity). */
Test(store, in_use_capacity_is_not_capped) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *caps = json_object(), *used = json_object();
    for (int i = 0; i < 20; i++) {
        char k[8];
        snprintf(k, sizeof k, "c%d", i);
        /* requests consume 0 of what they do not name, so only c19 matters below */
        json_object_set_new(caps, k, json_pack("{s:s, s:{s:s, s:{s:s}}}", "value", "10", "requestPolicy", "default",
                                               "0", "validRange", "min", "0"));
        json_object_set_new(used, k, json_string("10"));
    }
    json_t *objs = json_pack(
        "[{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}},"
        " {s:s, s:s, s:{s:s}},"
        " {s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:[{s:s, s:b, s:o}]}},"
        " {s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s}}]}},"
        "  s:{s:{s:{s:[{s:s, s:s, s:s, s:s, s:s, s:o}]}}}}]",
        "apiVersion", "resource.k8s.io/v1", "kind", "DeviceClass", "metadata", "name", "net.example.com", "spec",
        "selectors", "cel", "expression", "device.driver == 'net.example.com'",
        "apiVersion", "v1", "kind", "Node", "metadata", "name", "node-1",
        "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", "nics", "spec", "driver",
        "net.example.com", "nodeName", "node-1", "pool", "name", "node-1", "generation", 1, "resourceSliceCount", 1,
        "devices", "name", "nic-0", "allowMultipleAllocations", 1, "capacity", caps,
        "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", "all", "namespace", "default",
        "spec", "devices", "requests", "name", "nic", "exactly", "deviceClassName", "net.example.com",
        "status", "allocation", "devices", "results", "request", "nic", "driver", "net.example.com", "pool", "node-1",
        "device", "nic-0", "shareID", "a1b2c3d4-0000-4000-8000-000000000001", "consumedCapacity", used);
    cr_assert_not_null(objs);
    err e;
    err_clear(&e);
    char buf[2048];
    cr_assert_eq(dra_store_apply_json(st, objs, &e), 1, "%s", err_format(&e, buf, sizeof buf));
    json_decref(objs);
    dra_snapshot *s = dra_store_acquire(st);
    const char *pod = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":[{\"name\":\"n\","
                      "\"resourceClaimName\":\"want\"}]}}";
    dra_snapshot_release(s);
    json_t *want = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:{s:{s:s}}}}]}}}", "apiVersion",
                             "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", "want", "namespace",
                             "default", "spec", "devices", "requests", "name", "nic", "exactly", "deviceClassName",
                             "net.example.com", "capacity", "requests", "c19", "1");
    cr_assert_eq(dra_store_apply_json(st, want, &e), 2, "%s", err_format(&e, buf, sizeof buf));
    json_decref(want);
    s = dra_store_acquire(st);
    dra_fit fr;
    cr_assert_eq(fit(s, pod, "node-1", &fr), DRA_FIT_UNSCHEDULABLE, "c19 is used up: %s", fr.reason);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* ---- planning: overlay, whole-pod checks, capacity --------------------------------------------- */

static dra_pod_request *request(dra_snapshot *s, const char *pod, json_t **keep) {
    *keep = parse(pod);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(s, *keep, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    return pr;
}

Test(plan_core, overlay_commits_and_leaves_the_snapshot_alone) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    dra_overlay *ov = dra_overlay_new(s);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    json_t *pj;
    dra_pod_request *pr = request(s, POD, &pj);
    dra_fit f;
    /* node-1 has 4 GPUs: two 2-GPU pods, then no room */
    dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_BINPACK, 0, true, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_BINPACK, 0, true, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_BINPACK, 0, false, &f);
    cr_assert_eq(f.status, DRA_FIT_UNSCHEDULABLE, "%s", f.reason);
    /* the snapshot still has node-1 free */
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_BINPACK, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_OK);
    json_t *cap = dra_capacity_json(s, ov);
    json_t *n1 = json_array_get(json_object_get(cap, "nodes"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(n1, "name")), "node-1");
    cr_assert_eq(json_integer_value(json_object_get(n1, "allocated")), 4);
    json_decref(cap);
    dra_pod_request_free(pr);
    json_decref(pj);
    dra_alloc_ctx_free(x);
    dra_overlay_free(ov);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(plan_core, a_shared_claim_is_allocated_once) {
    dra_store *st = store_with_cluster();
    json_t *claim = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"one\","
                          "\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
                          "{\"deviceClassName\":\"gpu.example.com\"}}]}}}");
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, claim, &e), 2);
    json_decref(claim);
    dra_snapshot *s = dra_store_acquire(st);
    dra_overlay *ov = dra_overlay_new(s);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    json_t *pj;
    dra_pod_request *pr = request(s, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":"
                                     "[{\"name\":\"g\",\"resourceClaimName\":\"one\"}]}}", &pj);
    dra_fit f;
    dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_NONE, 0, true, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    dra_pod_fit_overlay(pr, ov, x, "node-2", DRA_SCORE_NONE, 0, false, &f);
    cr_assert_eq(f.status, DRA_FIT_UNRESOLVABLE, "%s", f.reason);
    cr_assert(strstr(f.reason, "allocated for other nodes than node-2"), "%s", f.reason);
    for (int i = 0; i < 5; i++) {
        dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_NONE, 0, true, &f);
        cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    }
    json_t *cap = dra_capacity_json(s, ov);
    json_t *n1 = json_array_get(json_object_get(cap, "nodes"), 0);
    cr_assert_eq(json_integer_value(json_object_get(n1, "allocated")), 1, "one device for six pods");
    json_decref(cap);
    dra_pod_request_free(pr);
    json_decref(pj);
    dra_alloc_ctx_free(x);
    dra_overlay_free(ov);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(plan_core, whole_pod_checks) {
    dra_store *st = store_with_cluster();
    json_t *node = parse("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\",\"labels\":{\"zone\":\"a\"}},"
                         "\"spec\":{\"taints\":[{\"key\":\"gpu\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]},"
                         "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"1\"}}}");
    err e;
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, node, &e), 2);
    json_decref(node);
    dra_snapshot *s = dra_store_acquire(st);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    json_t *pj;
    dra_pod_request *pr = request(s, POD, &pj);
    dra_fit f;
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_NONE, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "checks are off by default (kube-scheduler made them)");
    dra_pod_request_check_node(pr, true);
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_NONE, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_UNRESOLVABLE);
    cr_assert_str_eq(f.reason, "node(s) had untolerated taint {gpu: true}");
    dra_pod_request_free(pr);
    json_decref(pj);
    pr = request(s, "{\"metadata\":{\"name\":\"t\",\"namespace\":\"ml\"},\"spec\":{\"nodeSelector\":{\"zone\":\"a\"},"
                    "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"c\","
                    "\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":\"1Gi\"}}}]}}", &pj);
    dra_pod_request_check_node(pr, true);
    dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_NONE, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_OK, "%s", f.reason);
    dra_pod_fit(pr, x, "node-2", NULL, DRA_SCORE_NONE, 0, &f);
    cr_assert_eq(f.status, DRA_FIT_UNRESOLVABLE);
    cr_assert_str_eq(f.reason, "node(s) didn't match Pod's node affinity/selector");
    dra_overlay *ov = dra_overlay_new(s);
    dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_NONE, 0, true, &f);
    cr_assert_eq(f.status, DRA_FIT_OK);
    dra_pod_fit_overlay(pr, ov, x, "node-1", DRA_SCORE_NONE, 0, false, &f);
    cr_assert_eq(f.status, DRA_FIT_UNSCHEDULABLE);
    cr_assert_str_eq(f.reason, "Too many pods");
    dra_overlay_free(ov);
    dra_pod_request_free(pr);
    json_decref(pj);
    dra_alloc_ctx_free(x);
    dra_snapshot_release(s);
    dra_store_free(st);
}

Test(plan_core, capacity_view) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    json_t *cap = dra_capacity_json(s, NULL);
    json_t *nodes = json_object_get(cap, "nodes");
    cr_assert_eq(json_array_size(nodes), 3);
    json_t *n2 = json_array_get(nodes, 1);
    cr_assert_str_eq(json_string_value(json_object_get(n2, "name")), "node-2");
    cr_assert_eq(json_integer_value(json_object_get(n2, "devices")), 4);
    cr_assert_eq(json_integer_value(json_object_get(n2, "allocated")), 3);
    cr_assert_eq(json_integer_value(json_object_get(n2, "free")), 1);
    json_t *cls = json_array_get(json_object_get(cap, "classes"), 0);
    cr_assert_eq(json_integer_value(json_object_get(cls, "devices")), 8);
    cr_assert_eq(json_integer_value(json_object_get(cls, "allocated")), 3);
    cr_assert_eq(json_array_size(json_object_get(cap, "pools")), 2);
    json_decref(cap);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* ---- the incremental in-use set equals a fresh one ------------------------------------------- */

static json_t *rclaim(int node, int first, int count, const char *name) {
    json_t *res = json_array();
    char pool[16];
    snprintf(pool, sizeof pool, "node-%d", node);
    for (int i = first; i < first + count; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver", "gpu.example.com", "pool",
                                             pool, "device", d));
    }
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}, s:{s:{s:{s:o}}}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace", "ml", "spec",
                     "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com", "count", count,
                     "status", "allocation", "devices", "results", res);
}

static void node_answers(dra_store *st, char *out) {
    dra_snapshot *s = dra_store_acquire(st);
    for (int n = 1; n <= 2; n++) {
        char node[16];
        snprintf(node, sizeof node, "node-%d", n);
        for (int want = 1; want <= 4; want++) {
            char pod[300];
            snprintf(pod, sizeof pod,
                     "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":[{\"name\":\"g\","
                     "\"resourceClaimTemplateName\":\"t%d\"}]}}",
                     want);
            *out++ = "OUREX"[fit(s, pod, node, NULL)];
        }
    }
    *out = '\0';
    dra_snapshot_release(s);
}

Test(store, incremental_in_use_equals_a_fresh_build, .timeout = 120) {
    dra_store *st = store_with_cluster();
    json_t *base = parse(CLUSTER);
    json_array_remove(base, json_array_size(base) - 1);   /* no "busy" claim */
    for (int t = 1; t <= 4; t++) {
        char name[8];
        snprintf(name, sizeof name, "t%d", t);
        json_array_append_new(base, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion",
                                              "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name",
                                              name, "namespace", "ml", "spec", "spec", "devices", "requests", "name", "gpu",
                                              "exactly", "deviceClassName", "gpu.example.com", "count", t));
    }
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply_json(st, base, &e), 0, "%s", e.msg);
    dra_change del = {.kind = "ResourceClaim", .ns = "ml", .name = "busy"};
    cr_assert_neq(dra_store_apply(st, &del, 1, &e), 0);
    unsigned seed = 7;
    json_t *live = json_object();   /* name → claim: what the store should hold */
    for (int round = 0; round < 300; round++) {
        /* a batch of 1..4 changes on 4 claim names: upsert (new devices) or delete */
        int nb = 1 + rand_r(&seed) % 4;
        dra_change ch[4];
        json_t *keep[4] = {0};
        int n = 0;
        json_t *after = json_deep_copy(live);
        for (int b = 0; b < nb; b++) {
            char name[8];
            snprintf(name, sizeof name, "c%d", rand_r(&seed) % 4);
            bool exists = json_object_get(after, name) != NULL;
            if (exists && rand_r(&seed) % 2) {
                ch[n++] = (dra_change){.kind = "ResourceClaim", .ns = "ml", .name = strdup(name)};
                json_object_del(after, name);
            } else {
                int node = 1 + rand_r(&seed) % 2, count = 1 + rand_r(&seed) % 2, first = rand_r(&seed) % (5 - count);
                keep[n] = rclaim(node, first, count, name);
                ch[n++] = (dra_change){.upsert = keep[n - 1]};
                json_object_set(after, name, keep[n - 1]);
            }
        }
        /* the same name twice with different contents is refused as a batch: then one by one */
        uint64_t g = dra_store_apply(st, ch, (size_t)n, &e);
        if (!g)
            for (int i = 0; i < n; i++) cr_assert_neq(dra_store_apply(st, &ch[i], 1, &e), 0, "%s", e.msg);
        json_decref(live);
        live = after;
        for (int i = 0; i < n; i++) {
            if (!ch[i].upsert) free((char *)ch[i].name);
            json_decref(keep[i]);
        }
        /* a fresh store with the same objects answers the same */
        dra_features f;
        dra_features_default(&f);
        dra_store *fresh = dra_store_new(&f);
        json_t *all = json_deep_copy(base);
        const char *k;
        json_t *v;
        json_object_foreach(live, k, v) json_array_append(all, v);
        cr_assert_neq(dra_store_apply_json(fresh, all, &e), 0, "%s", e.msg);
        json_decref(all);
        char a[16], b[16];
        node_answers(st, a);
        node_answers(fresh, b);
        cr_assert_str_eq(a, b, "round %d: incremental %s, fresh %s", round, a, b);
        dra_store_free(fresh);
    }
    json_decref(live);
    json_decref(base);
    dra_store_free(st);
}

/* Pods with the same needs share a node's answer within a snapshot (the fit memo),
 * each in its own names; a new snapshot starts afresh. */
Test(store, fit_memo_answers_in_each_pods_names) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s = dra_store_acquire(st);
    const char *pod_b = "{\"metadata\":{\"name\":\"other-7\",\"namespace\":\"ml\"},\"spec\":{\"containers\":[{\"name\":\"main\"}],"
                        " \"resourceClaims\":[{\"name\":\"gpus\",\"resourceClaimTemplateName\":\"two-gpus\"}]}}";
    dra_fit a, b;
    cr_assert_eq(fit(s, POD, "node-2", &a), DRA_FIT_UNSCHEDULABLE);
    cr_assert_eq(fit(s, pod_b, "node-2", &b), DRA_FIT_UNSCHEDULABLE);
    cr_assert(strstr(a.reason, "claim ml/trainer-0-gpus request gpu"), "%s", a.reason);
    cr_assert(strstr(b.reason, "claim ml/other-7-gpus request gpu") && !strstr(b.reason, "trainer"), "%s", b.reason);
    cr_assert_eq(b.steps, 0, "the second answer comes from the memo");
    cr_assert_eq(fit(s, pod_b, "node-1", &b), DRA_FIT_OK);
    dra_snapshot_release(s);
    /* the busy claim gone: a new snapshot, a new answer */
    dra_change del = {.kind = "ResourceClaim", .ns = "ml", .name = "busy"};
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply(st, &del, 1, &e), 0);
    s = dra_store_acquire(st);
    cr_assert_eq(fit(s, pod_b, "node-2", &b), DRA_FIT_OK);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* The overlay's fit memo changes no answer: two overlays, memo on and off, place the
 * same pods (1-GPU and 2-GPU templates, one shared claim now and then) and agree on
 * every node's status, score and reason at every step. */
Test(plan_core, overlay_memo_changes_no_answer) {
    dra_store *st = store_with_cluster();
    json_t *more = parse("[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"name\":\"one-gpu\","
                         "\"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
                         "{\"deviceClassName\":\"gpu.example.com\"}}]}}}},"
                         "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"shared\","
                         "\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
                         "{\"deviceClassName\":\"gpu.example.com\"}}]}}}]");
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply_json(st, more, &e), 0, "%s", e.msg);
    json_decref(more);
    dra_snapshot *s = dra_store_acquire(st);
    dra_overlay *on = dra_overlay_new(s), *off = dra_overlay_new(s);
    dra_overlay_memo(off, false);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    const char *nodes[] = {"node-1", "node-2", "node-3"};
    unsigned seed = 3;
    for (int step = 0; step < 40; step++) {
        int kind = rand_r(&seed) % 5;
        char pod[400];
        snprintf(pod, sizeof pod,
                 "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":[{\"name\":\"g\",%s}]}}",
                 step,
                 kind == 0 ? "\"resourceClaimName\":\"shared\"" : kind < 3 ? "\"resourceClaimTemplateName\":\"one-gpu\""
                                                                            : "\"resourceClaimTemplateName\":\"two-gpus\"");
        json_t *pj;
        dra_pod_request *pr = request(s, pod, &pj);
        int best = -1;
        dra_fit fon[3], foff[3];
        for (int n = 0; n < 3; n++) {
            dra_pod_fit_overlay(pr, on, x, nodes[n], DRA_SCORE_BINPACK, 0, false, &fon[n]);
            dra_pod_fit_overlay(pr, off, x, nodes[n], DRA_SCORE_BINPACK, 0, false, &foff[n]);
            cr_assert_eq(fon[n].status, foff[n].status, "step %d node %s", step, nodes[n]);
            cr_assert_eq(fon[n].score, foff[n].score, "step %d node %s", step, nodes[n]);
            cr_assert_str_eq(fon[n].reason, foff[n].reason, "step %d node %s", step, nodes[n]);
            if (fon[n].status == DRA_FIT_OK && (best < 0 || fon[n].score > fon[best].score)) best = n;
        }
        if (best >= 0) {
            dra_fit c1, c2;
            dra_pod_fit_overlay(pr, on, x, nodes[best], DRA_SCORE_BINPACK, 0, true, &c1);
            dra_pod_fit_overlay(pr, off, x, nodes[best], DRA_SCORE_BINPACK, 0, true, &c2);
            cr_assert_eq(c1.status, c2.status);
        }
        dra_pod_request_free(pr);
        json_decref(pj);
    }
    dra_alloc_ctx_free(x);
    dra_overlay_free(on);
    dra_overlay_free(off);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* ---- incremental snapshots equal snapshots built from scratch ---------------------------------- */

/* A small cluster changed at random, one to three objects at a time: DeviceClasses,
 * Nodes (present or not, labels), per-node slices (device count, model, generation,
 * resourceSliceCount; two slices per pool now and then), a pool spanning two nodes,
 * slices without a node name (nodeSelector, allNodes), DeviceTaintRules, allocated
 * claims and a Pod. After every step each pod shape is decided on every node in the
 * store's snapshot (built from the one before) and in a store given the same objects
 * at once, and they must agree in status, score, reason and allocation. Some
 * snapshots are kept for a while and asked again later: they answer as they did. */

enum { DN = 5 };   /* nodes node-0 .. node-4, and a node nobody knows: node-9 */

static json_t *d_slice(const char *name, const char *node, const char *pool, int ndev, const char *model, int gen,
                       int count) {
    json_t *devs = json_array();
    bool extra = strstr(name, "extra") != NULL;   /* a pool's second slice: other device names, mostly */
    for (int i = 0; i < ndev; i++) {
        char d[16];
        snprintf(d, sizeof d, "%s-%d", extra && i ? "xgpu" : "gpu", i);
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}}}", "name", d, "attributes", "model", "string", model));
    }
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceSlice", "metadata", "name", name, "spec", "driver", "gpu.example.com", "nodeName",
                     node, "pool", "name", pool, "generation", gen, "resourceSliceCount", count, "devices", devs);
}

static json_t *d_net_slice(const char *name, const char *zone, int ndev) {
    json_t *devs = json_array();
    for (int i = 0; i < ndev; i++) {
        char d[16];
        snprintf(d, sizeof d, "nic-%d", i);
        json_array_append_new(devs, json_pack("{s:s}", "name", d));
    }
    json_t *spec = json_pack("{s:s, s:{s:s, s:i, s:i}, s:o}", "driver", "net.example.com", "pool", "name", name,
                             "generation", 1, "resourceSliceCount", 1, "devices", devs);
    if (zone)
        json_object_set_new(spec, "nodeSelector",
                            json_pack("{s:[{s:[{s:s, s:s, s:[s]}]}]}", "nodeSelectorTerms", "matchExpressions", "key",
                                      "zone", "operator", "In", "values", zone));
    else
        json_object_set_new(spec, "allNodes", json_true());
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
                     "metadata", "name", name, "spec", spec);
}

static json_t *d_class(const char *name, const char *expr) {
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1", "kind",
                     "DeviceClass", "metadata", "name", name, "spec", "selectors", "cel", "expression", expr);
}

static json_t *d_template(const char *name, const char *cls, int count) {
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name", name, "namespace", "ml",
                     "spec", "spec", "devices", "requests", "name", "r", "exactly", "deviceClassName", cls, "count",
                     count);
}

static json_t *d_claim(const char *name, const char *pool, int dev, int count) {
    json_t *res = json_array();
    for (int i = 0; i < count; i++) {
        char d[16];
        snprintf(d, sizeof d, "%s-%d", i ? "xgpu" : "gpu", dev);
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "r", "driver", "gpu.example.com",
                                             "pool", pool, "device", d));
    }
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}, s:{s:{s:{s:o}}}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace", "ml", "spec",
                     "devices", "requests", "name", "r", "exactly", "deviceClassName", "gpu.example.com", "count",
                     count, "status", "allocation", "devices", "results", res);
}

static json_t *d_rule(const char *name, const char *field, const char *value) {
    json_t *sel = json_object();
    if (field) json_object_set_new(sel, field, json_string(value));
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:o, s:{s:s, s:s, s:s}}}", "apiVersion", "resource.k8s.io/v1alpha3",
                     "kind", "DeviceTaintRule", "metadata", "name", name, "spec", "deviceSelector", sel, "taint", "key",
                     "maintenance", "value", "true", "effect", "NoSchedule");
}

/* The model: key → object, in the order the store last received them. */
typedef struct dmodel {
    json_t *objs;
    unsigned seed;
} dmodel;

static int d_rand(dmodel *m, int n) { return rand_r(&m->seed) % n; }

/* One random change: an object to upsert (returned, with its key) or a key to
 * delete (*del). */
static json_t *d_change(dmodel *m, char *key, size_t keyn, bool *del) {
    static const char *const models[] = {"H100", "H200"};
    *del = false;
    char name[32], node[16], pool[16];
    int n = d_rand(m, DN);
    snprintf(node, sizeof node, "node-%d", n);
    json_t *o = NULL;
    switch (d_rand(m, 10)) {
    case 0: /* a Node: absent, or present with a zone */
        snprintf(key, keyn, "Node/%s", node);
        if (d_rand(m, 3) == 0) {
            *del = true;
            return NULL;
        }
        return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", node,
                         "labels", "zone", d_rand(m, 2) ? "a" : "b");
    case 1: case 2: case 3: { /* the node's slices: the main one, or a second one in its pool */
        bool second = d_rand(m, 4) == 0;
        snprintf(name, sizeof name, "%s-%s", node, second ? "extra" : "gpus");
        snprintf(key, keyn, "ResourceSlice/%s", name);
        if (d_rand(m, 5) == 0) {
            *del = true;
            return NULL;
        }
        snprintf(pool, sizeof pool, "%s", node);
        return d_slice(name, node, pool, 1 + d_rand(m, 4), models[d_rand(m, 2)], 1 + d_rand(m, 2), 1 + second + d_rand(m, 2) / 2);
    }
    case 4: { /* the pool spanning node-1 and node-2 */
        bool b = d_rand(m, 2);
        snprintf(name, sizeof name, "shared-%c", b ? 'b' : 'a');
        snprintf(key, keyn, "ResourceSlice/%s", name);
        if (d_rand(m, 4) == 0) {
            *del = true;
            return NULL;
        }
        return d_slice(name, b ? "node-2" : "node-1", "shared", 1 + d_rand(m, 3), models[d_rand(m, 2)], 1 + d_rand(m, 2), 2);
    }
    case 5: { /* slices without a node name */
        bool zoned = d_rand(m, 2);
        snprintf(name, sizeof name, "%s", zoned ? "net-zone-a" : "net-all");
        snprintf(key, keyn, "ResourceSlice/%s", name);
        if (d_rand(m, 3) == 0) {
            *del = true;
            return NULL;
        }
        return d_net_slice(name, zoned ? "a" : NULL, 1 + d_rand(m, 2));
    }
    case 6: { /* classes */
        snprintf(key, keyn, "DeviceClass/big");
        if (d_rand(m, 3) == 0) {
            *del = true;
            return NULL;
        }
        char expr[128];
        snprintf(expr, sizeof expr, "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == '%s'",
                 models[d_rand(m, 2)]);
        return d_class("big", expr);
    }
    case 7: { /* taint rules */
        snprintf(key, keyn, "DeviceTaintRule/maint");
        if (d_rand(m, 2) == 0) {
            *del = true;
            return NULL;
        }
        int f = d_rand(m, 3);
        snprintf(pool, sizeof pool, "node-%d", d_rand(m, DN));
        return d_rule("maint", f == 0 ? "pool" : f == 1 ? "device" : NULL, f == 0 ? pool : "gpu-1");
    }
    default: { /* allocated claims: c<i> holds gpu-<i> (and xgpu-<i>) of some pool, so no
                * device is held twice (a device's holder named in a reason is the one
                * recorded last, which depends on the order claims came in) */
        int c = d_rand(m, 4);
        snprintf(name, sizeof name, "c%d", c);
        snprintf(key, keyn, "ResourceClaim/%s", name);
        if (d_rand(m, 3) == 0) {
            *del = true;
            return NULL;
        }
        snprintf(pool, sizeof pool, "node-%d", n);
        return d_claim(name, d_rand(m, 8) ? pool : "shared", c, 1 + d_rand(m, 2));
    }
    }
    return o;
}

/* Every pod shape on every node: status, score, reason and allocation, as one text. */
static char *d_answers(dra_snapshot *s) {
    static const char *const tmpl[] = {"one", "two", "big", "net"};
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(1, cap);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    for (size_t t = 0; t < ARRAY_SIZE(tmpl); t++) {
        char pod[300];
        snprintf(pod, sizeof pod,
                 "{\"metadata\":{\"name\":\"p-%s\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":[{\"name\":\"g\","
                 "\"resourceClaimTemplateName\":\"%s\"}]}}",
                 tmpl[t], tmpl[t]);
        json_t *p = parse(pod);
        err e;
        err_clear(&e);
        dra_pod_request *pr = dra_pod_request_new(s, p, &e);
        cr_assert_not_null(pr, "%s", e.msg);
        for (int n = 0; n <= DN; n++) {
            char node[16];
            snprintf(node, sizeof node, "node-%d", n < DN ? n : 9);
            dra_fit f;
            dra_pod_fit(pr, x, node, NULL, DRA_SCORE_BINPACK, 0, &f);
            dra_fit fa;
            json_t *alloc = dra_pod_fit_allocation(pr, x, node, 0, &fa);
            char *aj = alloc ? json_dumps(alloc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
            len += (size_t)snprintf(out + len, cap - len, "%s %s: %s %lld %s | %s %s\n", tmpl[t], node,
                                    dra_fit_status_name(f.status), (long long)f.score, f.reason,
                                    dra_fit_status_name(fa.status), aj ? aj : "-");
            cr_assert_lt(len, cap);
            free(aj);
            json_decref(alloc);
        }
        dra_pod_request_free(pr);
        json_decref(p);
    }
    dra_alloc_ctx_free(x);
    return out;
}

static json_t *d_fixed(void) {
    return json_pack("[o, o, o, o, o, o, o]", d_class("gpu.example.com", "device.driver == 'gpu.example.com'"),
                     d_class("net.example.com", "device.driver == 'net.example.com'"),
                     d_template("one", "gpu.example.com", 1), d_template("two", "gpu.example.com", 2),
                     d_template("big", "big", 1), d_template("net", "net.example.com", 1),
                     json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Node", "metadata", "name",
                               "node-0", "labels", "zone", "a"));
}

static void d_key_parts(const char *key, char *kind, char *name) {
    const char *sl = strchr(key, '/');
    snprintf(kind, 64, "%.*s", (int)(sl - key), key);
    snprintf(name, 64, "%s", sl + 1);
}

/* No .timeout: Criterion 2.4 leaks a timer entry when a third timed test overlaps the
 * other two (LeakSanitizer then fails the run). */
Test(store, incremental_snapshots_equal_fresh_ones) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    dmodel m = {.objs = json_object(), .seed = 11};
    json_t *fixed = d_fixed();
    err e;
    err_clear(&e);
    char buf[2048];
    cr_assert_neq(dra_store_apply_json(st, fixed, &e), 0, "%s", err_format(&e, buf, sizeof buf));
    size_t i;
    json_t *o;
    json_array_foreach(fixed, i, o) {
        char key[128];
        snprintf(key, sizeof key, "%s/%s", json_string_value(json_object_get(o, "kind")),
                 json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
        json_object_set(m.objs, key, o);
    }
    json_decref(fixed);
    struct held { dra_snapshot *s; char *answers; int until; } held[4] = {0};
    bool far = false;
    for (int step = 0; step < 2000; step++) {
        int nb = 1 + d_rand(&m, 3);
        dra_change ch[3];
        json_t *keep[3] = {0};
        char kinds[3][64], names[3][64];
        int nc = 0;
        json_t *after = json_copy(m.objs);
        for (int b = 0; b < nb; b++) {
            char key[128];
            bool del;
            json_t *obj = d_change(&m, key, sizeof key, &del);
            bool have = json_object_get(after, key) != NULL;
            if (del) {
                if (!have) continue;
                d_key_parts(key, kinds[nc], names[nc]);
                ch[nc] = (dra_change){.kind = kinds[nc], .name = names[nc],
                                      .ns = strcmp(kinds[nc], "ResourceClaim") ? NULL : "ml"};
                nc++;
                json_object_del(after, key);
            } else {
                keep[nc] = obj;
                ch[nc++] = (dra_change){.upsert = obj};
                json_object_del(after, key);   /* to the end: the store's arrival order */
                json_object_set(after, key, obj);
            }
        }
        if (!nc) {
            json_decref(after);
            continue;
        }
        /* one key twice with different contents is refused as a batch: then one by one */
        if (!dra_store_apply(st, ch, (size_t)nc, &e))
            for (int c = 0; c < nc; c++)
                cr_assert_neq(dra_store_apply(st, &ch[c], 1, &e), 0, "step %d: %s", step,
                              err_format(&e, buf, sizeof buf));
        for (int c = 0; c < nc; c++) json_decref(keep[c]);
        if (step % 500 >= 250 && !far) {
            far = true;
            /* a relist's worth of slices at once (nodes nobody asks about): the slice
             * indexes are built again instead of edited; deleted again 100 steps on */
            json_t *many = json_array();
            for (int k = 0; k < 80; k++) {
                char name[32], node[16];
                snprintf(name, sizeof name, "far-%d", k);
                snprintf(node, sizeof node, "far-node-%d", k);
                json_t *sl = d_slice(name, node, node, 2, "H100", 1, 1);
                json_array_append(many, sl);
                char key[64];
                snprintf(key, sizeof key, "ResourceSlice/%s", name);
                json_object_set_new(after, key, sl);
            }
            cr_assert_neq(dra_store_apply_json(st, many, &e), 0, "%s", e.msg);
            json_decref(many);
        }
        if (step % 500 >= 350 && far) {
            far = false;
            dra_change gone[80];
            char names80[80][32];
            for (int k = 0; k < 80; k++) {
                snprintf(names80[k], sizeof names80[k], "far-%d", k);
                gone[k] = (dra_change){.kind = "ResourceSlice", .name = names80[k]};
                char key[64];
                snprintf(key, sizeof key, "ResourceSlice/far-%d", k);
                json_object_del(after, key);
            }
            cr_assert_neq(dra_store_apply(st, gone, 80, &e), 0, "%s", e.msg);
        }
        json_decref(m.objs);
        m.objs = after;
        /* the same objects into a fresh store (over the same catalog), in the same order */
        dra_store *fresh = dra_store_new_sharing(&f, st);
        json_t *all = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(m.objs, k, v) json_array_append(all, v);
        cr_assert_neq(dra_store_apply_json(fresh, all, &e), 0, "step %d: %s", step, err_format(&e, buf, sizeof buf));
        json_decref(all);
        dra_snapshot *a = dra_store_acquire(st), *b = dra_store_acquire(fresh);
        for (int kk = 0; kk < 2; kk++) {
            const char *kn = kk ? "ResourceSlice" : "ResourceClaim";
            cr_assert_eq(dra_snapshot_count(a, kn), dra_snapshot_count(b, kn), "step %d %s", step, kn);
        }
        char *ia = d_answers(a), *ib = d_answers(b);
        cr_assert_str_eq(ia, ib, "step %d: incremental\n%s\nfresh\n%s", step, ia, ib);
        free(ib);
        /* snapshots kept by readers answer as they did when they were current */
        for (int h = 0; h < 4; h++) {
            if (!held[h].s) continue;
            char *again = d_answers(held[h].s);
            cr_assert_str_eq(again, held[h].answers, "step %d: a kept snapshot changed its answers", step);
            free(again);
            if (step >= held[h].until) {
                dra_snapshot_release(held[h].s);
                free(held[h].answers);
                held[h] = (struct held){0};
            }
        }
        int slot = step % 37 == 0 ? step / 37 % 4 : -1;
        if (slot >= 0 && !held[slot].s) {
            held[slot] = (struct held){dra_snapshot_retain(a), ia, step + 60 + d_rand(&m, 100)};
            ia = NULL;
        }
        free(ia);
        dra_snapshot_release(a);
        dra_snapshot_release(b);
        dra_store_free(fresh);
    }
    for (int h = 0; h < 4; h++) {
        dra_snapshot_release(held[h].s);
        free(held[h].answers);
    }
    json_decref(m.objs);
    dra_store_free(st);
}

/* The fit memo is handed on to the next snapshot (memo_carry) less the nodes a change
 * can reach: a pod bound to a node changes what the node's device plugin has left for
 * an extended resource, so that node's answers go. */
Test(store, memo_handed_on_follows_bound_pods) {
    dra_store *st = store_with_cluster();
    json_t *objs = parse(
        "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"ext-gpu\"},"
        "  \"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}],"
        "  \"extendedResourceName\":\"example.com/gpu\"}},"
        " {\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-3\"},"
        "  \"status\":{\"allocatable\":{\"example.com/gpu\":\"1\"}}}]");
    err e;
    err_clear(&e);
    cr_assert(dra_store_apply_json(st, objs, &e), "%s", e.msg);
    json_decref(objs);
    static const char *EXT_POD =
        "{\"metadata\":{\"name\":\"ext-0\",\"namespace\":\"ml\"},\"spec\":{\"containers\":[{\"name\":\"main\","
        " \"resources\":{\"requests\":{\"example.com/gpu\":\"1\"},\"limits\":{\"example.com/gpu\":\"1\"}}}]}}";
    dra_snapshot *s1 = dra_store_acquire(st);
    dra_fit f1, f2, f3;
    dra_fit_status before = fit(s1, EXT_POD, "node-3", &f1);
    cr_assert_eq(before, DRA_FIT_OK, "%s", f1.reason);
    cr_assert_eq(fit(s1, EXT_POD, "node-1", &f1), DRA_FIT_OK, "%s", f1.reason);
    /* a pod bound to node-3 takes its one plugin GPU */
    json_t *bound = parse(
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"holder\",\"namespace\":\"ml\"},"
        " \"spec\":{\"nodeName\":\"node-3\",\"containers\":[{\"name\":\"main\","
        " \"resources\":{\"requests\":{\"example.com/gpu\":\"1\"},\"limits\":{\"example.com/gpu\":\"1\"}}}]}}");
    cr_assert(dra_store_apply_json(st, bound, &e), "%s", e.msg);
    json_decref(bound);
    dra_snapshot *s2 = dra_store_acquire(st);
    /* node-3's answer is decided again; node-1's (no plugin resource, untouched) may come from the memo */
    cr_assert_neq(fit(s2, EXT_POD, "node-3", &f2), DRA_FIT_OK, "the bound pod holds node-3's plugin GPU: %s", f2.reason);
    cr_assert_eq(fit(s2, EXT_POD, "node-1", &f3), DRA_FIT_OK, "%s", f3.reason);
    /* and the kept snapshot still answers as it did */
    cr_assert_eq(fit(s1, EXT_POD, "node-3", &f1), DRA_FIT_OK, "%s", f1.reason);
    dra_snapshot_release(s1);
    dra_snapshot_release(s2);
    dra_store_free(st);
}

/* A relist (after a 410, or a resync) brings every object again. One equal in value,
 * whatever its members' order, is kept as it is, not decoded again (engine/store/store.c
 * apply_one compares the value's hash first); a changed one replaces its entry. */
Test(store, relist_keeps_unchanged_objects) {
    dra_store *st = store_with_cluster();
    dra_snapshot *s1 = dra_store_acquire(st);
    cr_assert_eq(fit(s1, POD, "node-1", NULL), DRA_FIT_OK);
    cr_assert_eq(fit(s1, POD, "node-2", NULL), DRA_FIT_UNSCHEDULABLE);
    /* the same objects, members in another order (sorted keys) */
    json_t *c = parse(CLUSTER);
    char *sorted = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(c);
    c = parse(sorted);
    free(sorted);
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply_json(st, c, &e), 0, "%s", e.msg);
    dra_snapshot *s2 = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s2, "ResourceSlice"), 2);
    cr_assert_eq(fit(s2, POD, "node-1", NULL), DRA_FIT_OK);
    cr_assert_eq(fit(s2, POD, "node-2", NULL), DRA_FIT_UNSCHEDULABLE);
    /* node-1's slice now has one GPU: two can never fit there */
    json_t *sl = json_array_get(c, 4);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(sl, "metadata"), "name")), "node-1-gpus");
    json_t *devs = json_object_get(json_object_get(sl, "spec"), "devices");
    while (json_array_size(devs) > 1) json_array_remove(devs, 1);
    cr_assert_neq(dra_store_apply_json(st, c, &e), 0, "%s", e.msg);
    dra_snapshot *s3 = dra_store_acquire(st);
    dra_fit f3;
    fit(s3, POD, "node-1", &f3);
    cr_assert_eq(f3.status, DRA_FIT_UNRESOLVABLE, "%s: %s", dra_fit_status_name(f3.status), f3.reason);
    cr_assert_eq(fit(s2, POD, "node-1", NULL), DRA_FIT_OK, "the pinned snapshot keeps its answer");
    json_decref(c);
    dra_snapshot_release(s1);
    dra_snapshot_release(s2);
    dra_snapshot_release(s3);
    dra_store_free(st);
}

/* node-1's slice as the API server serves it: resourceVersion rv, gpus GPUs. */
static json_t *served_slice(const char *rv, int gpus) {
    json_t *c = parse(CLUSTER), *sl = json_incref(json_array_get(c, 4));
    json_decref(c);
    json_t *meta = json_object_get(sl, "metadata");
    json_object_set_new(meta, "uid", json_string("0b6f3c1e-5d2a-4e8f-9a7b-1c2d3e4f5a6b"));
    json_object_set_new(meta, "resourceVersion", json_string(rv));
    json_t *devs = json_object_get(json_object_get(sl, "spec"), "devices");
    while ((int)json_array_size(devs) > gpus) json_array_remove(devs, json_array_size(devs) - 1);
    return sl;
}

static void apply_one_change(dra_store *st, json_t *obj, bool served) {
    dra_change c = {.upsert = obj, .served = served};
    err e;
    err_clear(&e);
    cr_assert_neq(dra_store_apply(st, &c, 1, &e), 0, "%s", e.msg);
}

static dra_fit_status fit_now(dra_store *st) {
    dra_snapshot *s = dra_store_acquire(st);
    dra_fit f;
    fit(s, POD, "node-1", &f);
    dra_snapshot_release(s);
    return f.status;
}

/* What the watch gives (dra_change.served, every relist) is known by its
 * resourceVersion, as Kubernetes' controllers know an informer's objects
 * (pkg/controller/daemon/daemon_controller.go updatePod: "Two different versions of the
 * same pod will always have different RVs"): one under the resourceVersion the store
 * holds is not decoded again — the API server never serves another value under it. An
 * object from a file or a request body is known by its value: its resourceVersion may
 * be a stale copy its edits left as it was. */
Test(store, a_served_object_is_known_by_its_resource_version) {
    dra_store *st = store_with_cluster();
    json_t *four = served_slice("5", 4), *one = served_slice("5", 1), *one6 = served_slice("6", 1);
    apply_one_change(st, four, true);   /* given by value before: decoded under its version */
    cr_assert_eq(fit_now(st), DRA_FIT_OK);
    /* the same resourceVersion: the store's entry stands (no API server serves this) */
    apply_one_change(st, one, true);
    cr_assert_eq(fit_now(st), DRA_FIT_OK);
    /* in a relist too: nothing changed, nothing published */
    dra_snapshot *s = dra_store_acquire(st);
    uint64_t gen = dra_snapshot_generation(s);
    dra_snapshot_release(s);
    dra_relist *rl = dra_store_relist_begin(st, "ResourceSlice");
    json_t *c = parse(CLUSTER);
    const json_t *page[] = {one, json_array_get(c, 5)};
    dra_relist_put(rl, page, 2, NULL, NULL);
    err e;
    err_clear(&e);
    cr_assert(dra_relist_commit(rl, &e), "%s", e.msg);
    s = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s), gen, "the relist found the store's state");
    dra_snapshot_release(s);
    cr_assert_eq(fit_now(st), DRA_FIT_OK);
    /* a new resourceVersion is a new object */
    apply_one_change(st, one6, true);
    cr_assert_eq(fit_now(st), DRA_FIT_UNRESOLVABLE);
    /* given otherwise, the value tells: the 4-GPU value under "6" is a change */
    json_t *four6 = served_slice("6", 4);
    apply_one_change(st, four6, false);
    cr_assert_eq(fit_now(st), DRA_FIT_OK);
    json_decref(four6);
    json_decref(c);
    json_decref(four);
    json_decref(one);
    json_decref(one6);
    dra_store_free(st);
}

/* A slice of node with n GPUs, as a list item comes (no kind, no apiVersion: the
 * watch sets them before giving it). */
static json_t *slice_of(const char *name, const char *node, int n, const char *device_name) {
    json_t *devs = json_array();
    for (int i = 0; i < n; i++) {
        char dn[32];
        snprintf(dn, sizeof dn, "gpu-%d", i);
        json_array_append_new(devs, json_pack("{s:s}", "name", device_name ? device_name : dn));
    }
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceSlice", "metadata", "name", name, "spec", "driver", "gpu.example.com", "nodeName",
                     node, "pool", "name", node, "generation", 1, "resourceSliceCount", 1, "devices", devs);
}

static char *keys_text(dra_snapshot *s, const char *kind) {
    json_t *k = dra_snapshot_keys(s, kind);
    char *t = json_dumps(k, JSON_COMPACT);
    json_decref(k);
    return t;
}

/* A relist given in parts (a paged list, a streaming list's events: extender/watch.c)
 * is decoded as it comes and becomes the kind's state at commit, in one snapshot: the
 * objects given kept or replaced, the others deleted, a refused object's key keeping
 * what the store has, a dropped one (DELETED during the initial events) as never
 * given; nothing is published before commit, and nothing when the state is the
 * store's already. */
Test(store, a_relist_in_parts_replaces_the_kind_at_commit) {
    dra_store *st = store_with_cluster();
    skips sk = {0};
    dra_relist *rl = dra_store_relist_begin(st, "ResourceSlice");
    cr_assert_not_null(rl);
    cr_assert_null(dra_store_relist_begin(st, "Gizmo"));
    /* page 1: node-1's slice as the store has it, members in another order */
    json_t *c = parse(CLUSTER);
    char *sorted = json_dumps(json_array_get(c, 4), JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(c);
    json_t *p1[] = {parse(sorted), slice_of("node-4-gpus", "node-3", 2, NULL)};
    free(sorted);
    dra_relist_put(rl, (const json_t *const *)p1, 2, count_skip, &sk);
    /* page 2: node-3's new slice, one the engine refuses, a node that is not a slice */
    json_t *p2[] = {slice_of("node-3-gpus", "node-3", 4, NULL), slice_of("bad-slice", "node-3", 1, "Not A Name"),
                    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", "node-9")};
    dra_relist_put(rl, (const json_t *const *)p2, 3, count_skip, &sk);
    cr_assert_eq(sk.n, 2, "%d refused", sk.n);
    cr_assert(strstr(sk.last, "Node") && strstr(sk.last, "ResourceSlice"), "%s", sk.last);
    dra_relist_drop(rl, NULL, "node-4-gpus");   /* deleted during the initial events */
    for (size_t i = 0; i < 2; i++) json_decref(p1[i]);
    for (size_t i = 0; i < 3; i++) json_decref(p2[i]);
    /* nothing published yet: node-3 has no device, node-2's slice is there */
    dra_snapshot *s1 = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s1), 1);
    cr_assert_eq(fit(s1, POD, "node-3", NULL), DRA_FIT_UNRESOLVABLE);
    cr_assert_eq(fit(s1, POD, "node-2", NULL), DRA_FIT_UNSCHEDULABLE);
    err e;
    err_clear(&e);
    cr_assert(dra_relist_commit(rl, &e), "%s", e.msg);
    dra_snapshot *s2 = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s2), 2);
    char *keys = keys_text(s2, "ResourceSlice");
    cr_assert_str_eq(keys, "[[\"\",\"node-1-gpus\"],[\"\",\"node-3-gpus\"]]");
    free(keys);
    cr_assert_eq(fit(s2, POD, "node-1", NULL), DRA_FIT_OK);
    cr_assert_eq(fit(s2, POD, "node-3", NULL), DRA_FIT_OK);
    cr_assert_eq(fit(s2, POD, "node-2", NULL), DRA_FIT_UNRESOLVABLE, "node-2's slice was not listed: deleted");
    cr_assert_eq(dra_snapshot_count(s2, "DeviceClass"), 1, "other kinds untouched");
    cr_assert_eq(dra_snapshot_count(s2, "ResourceClaim"), 1);

    /* again: node-3's slice unchanged, node-1's now refused (its version stays) */
    rl = dra_store_relist_begin(st, "ResourceSlice");
    json_t *p3[] = {slice_of("node-1-gpus", "node-1", 4, "Not A Name"), slice_of("node-3-gpus", "node-3", 4, NULL)};
    sk.n = 0;
    dra_relist_put(rl, (const json_t *const *)p3, 2, count_skip, &sk);
    cr_assert_eq(sk.n, 1);
    for (size_t i = 0; i < 2; i++) json_decref(p3[i]);
    cr_assert(dra_relist_commit(rl, &e), "%s", e.msg);
    dra_snapshot *s3 = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_generation(s3), 2, "the store's state already: no new snapshot");
    cr_assert_eq(fit(s3, POD, "node-1", NULL), DRA_FIT_OK);

    /* an aborted relist leaves the store as it was */
    rl = dra_store_relist_begin(st, "ResourceSlice");
    dra_relist_abort(rl);
    dra_snapshot_release(s3);
    s3 = dra_store_acquire(st);
    cr_assert_eq(dra_snapshot_count(s3, "ResourceSlice"), 2);
    dra_snapshot_release(s1);
    dra_snapshot_release(s2);
    dra_snapshot_release(s3);
    dra_store_free(st);
}

/* Kinds decoded per world (DeviceTaintRules, PodGroups) are not decoded ahead: a relist
 * decodes them itself, and one it refuses is reported and left out (a refusal there
 * once freed the object's key twice). */
Test(store, a_relist_of_taint_rules_refuses_a_bad_one) {
    dra_store *st = store_with_cluster();
    json_t *good = d_rule("maint", "driver", "gpu.example.com");
    json_t *bad = d_rule("broken", "driver", "gpu.example.com");
    json_object_set_new(json_object_get(json_object_get(bad, "spec"), "taint"), "effect", json_string("Sometimes"));
    json_t *page[] = {good, bad};
    skips sk = {0};
    dra_relist *rl = dra_store_relist_begin(st, "DeviceTaintRule");
    dra_relist_put(rl, (const json_t *const *)page, 2, count_skip, &sk);
    cr_assert_eq(sk.n, 1, "%d refused", sk.n);
    cr_assert(strstr(sk.last, "broken") || strstr(sk.last, "Sometimes"), "%s", sk.last);
    err e;
    err_clear(&e);
    cr_assert(dra_relist_commit(rl, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(st);
    char *keys = keys_text(s, "DeviceTaintRule");
    cr_assert_str_eq(keys, "[[\"\",\"maint\"]]");
    free(keys);
    cr_assert_neq(fit(s, POD, "node-1", NULL), DRA_FIT_OK, "node-1's GPUs are tainted NoSchedule: the rule applies");
    dra_snapshot_release(s);
    json_decref(good);
    json_decref(bad);
    dra_store_free(st);
}

/* A page large enough for the engine's second thread (work_ahead.h): every object
 * staged in the page's order (the store's arrival order: dra_snapshot_keys), the one
 * refused in the middle reported once, and a key given twice counting as its later
 * version. */
Test(store, a_large_relist_page_is_decoded_on_two_threads_in_order) {
    dra_store *st = store_with_cluster();
    enum { N = 300 };
    json_t *page[N + 1];
    for (int i = 0; i < N; i++) {
        char name[32], node[32];
        snprintf(name, sizeof name, "s-%03d", (i * 7) % N);
        snprintf(node, sizeof node, "n-%03d", (i * 7) % N);
        page[i] = slice_of(name, node, 2, i == 150 ? "Not A Name" : NULL);
    }
    page[N] = slice_of("s-000", "n-000", 3, NULL);   /* s-000 again, now with 3 GPUs */
    skips sk = {0};
    dra_relist *rl = dra_store_relist_begin(st, "ResourceSlice");
    dra_relist_put(rl, (const json_t *const *)page, N + 1, count_skip, &sk);
    cr_assert_eq(sk.n, 1, "%d refused: %s", sk.n, sk.last);
    char refused[32];
    snprintf(refused, sizeof refused, "s-%03d", (150 * 7) % N);
    cr_assert(strstr(sk.last, refused), "%s", sk.last);
    err e;
    err_clear(&e);
    cr_assert(dra_relist_commit(rl, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(st);
    json_t *keys = dra_snapshot_keys(s, "ResourceSlice");
    cr_assert_eq(json_array_size(keys), N - 1);
    for (int i = 0, j = 0; i < N; i++) {
        if (i == 150) continue;
        char name[32];
        snprintf(name, sizeof name, "s-%03d", (i * 7) % N);
        cr_assert_str_eq(json_string_value(json_array_get(json_array_get(keys, (size_t)j++), 1)), name);
    }
    json_decref(keys);
    /* s-000's later version: 3 GPUs on n-000 */
    json_t *pod3 = parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"containers\":[{\"name\":\"m\"}],"
                         "\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"three\"}]}}");
    json_t *three = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":"
                          "\"three\",\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
                          "\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"count\":3}}]}}}");
    cr_assert_neq(dra_store_apply_json(st, three, &e), 0, "%s", e.msg);
    dra_snapshot_release(s);
    s = dra_store_acquire(st);
    char *pod3_text = json_dumps(pod3, JSON_COMPACT);
    cr_assert_eq(fit(s, pod3_text, "n-000", NULL), DRA_FIT_OK);
    cr_assert_eq(fit(s, pod3_text, "n-007", NULL), DRA_FIT_UNRESOLVABLE);
    free(pod3_text);
    json_decref(pod3);
    json_decref(three);
    for (int i = 0; i <= N; i++) json_decref(page[i]);
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* ---- the catalog follows the live objects (issue #21) ---------------------------------- */

/* Every kind loaded (the demo cluster, the best-fit MIG node, the planning fleets, a
 * claim with constraints, consumed capacity and derived attributes, a taint rule and a
 * pod group), then everything deleted: the names interned and the programs compiled
 * for them are all given back, and the catalog is the size of a store that never held
 * anything. */
Test(store, deleting_every_object_gives_the_catalog_back) {
    dra_features f;
    dra_features_default(&f);
    f.derived_attributes = true;
    f.workload_claims = true;
    dra_store *st = dra_store_new(&f), *empty = dra_store_new(&f);
    err e;
    err_clear(&e);
    char buf[2048];
    json_t *none = parse("[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}]");
    cr_assert_neq(dra_store_apply_json(empty, none, &e), 0, "%s", e.msg);
    json_decref(none);
    dra_snapshot *es = dra_store_acquire(empty);
    dra_catalog_sizes want;
    dra_snapshot_catalog_sizes(es, &want);
    const char *paths[] = {DRALLOC_SOURCE_DIR "/testdata/demo", DRALLOC_SOURCE_DIR "/testdata/bestfit/mig-node.yaml",
                           DRALLOC_SOURCE_DIR "/testdata/bestfit/in-use.yaml", DRALLOC_SOURCE_DIR "/testdata/plan/pcie/cluster.yaml", DRALLOC_SOURCE_DIR "/testdata/plan/mig/cluster.yaml"};
    for (size_t i = 0; i < ARRAY_SIZE(paths); i++)   /* one at a time: later ones replace objects */
        cr_assert_neq(dra_store_load_paths(st, &paths[i], 1, &e), 0, "%s", err_format(&e, buf, sizeof buf));
    json_t *more = parse(
        "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"pair\",\"namespace\":\"ml\"},"
        "  \"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
        "   \"selectors\":[{\"cel\":{\"expression\":\"device.attributes['x.example.com'].unseen == 1\"}}],"
        "   \"derivedAttributes\":[{\"name\":\"dra.example.com/slot\",\"expression\":\"device.attributes['y.example.com'].z\"}]}},"
        "   {\"name\":\"b\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}],"
        "   \"constraints\":[{\"matchAttribute\":\"q.example.com/numaNode\"},{\"distinctAttribute\":\"onlyhere\"}]}},"
        "  \"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"a\",\"driver\":\"d.example.com\","
        "   \"pool\":\"p-gone\",\"device\":\"dev-gone\",\"shareID\":\"11111111-1111-1111-1111-111111111111\","
        "   \"consumedCapacity\":{\"cap.example.com/bw\":\"1Gi\"}}]}}}},"
        " {\"apiVersion\":\"resource.k8s.io/v1alpha3\",\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"maint\"},"
        "  \"spec\":{\"deviceSelector\":{\"driver\":\"gpu.nvidia.com\",\"pool\":\"gpu-node-001\"},"
        "   \"taint\":{\"key\":\"maintenance.example.com\",\"value\":\"fw\",\"effect\":\"NoSchedule\"}}},"
        " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"uid\":\"u\"},"
        "  \"spec\":{\"nodeName\":\"gpu-node-001\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}],"
        "   \"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"pair\"}]}}]");
    cr_assert_neq(dra_store_apply_json(st, more, &e), 0, "%s", err_format(&e, buf, sizeof buf));
    json_decref(more);
    dra_snapshot *s = dra_store_acquire(st);
    dra_catalog_sizes full;
    dra_snapshot_catalog_sizes(s, &full);
    cr_assert_gt(full.names, want.names + 50, "loading should intern names (%zu, empty %zu)", full.names, want.names);
    cr_assert_gt(full.programs, want.programs, "loading should compile selectors");
    /* a pod decided against the snapshot interns nothing that stays */
    json_t *pod = parse(POD);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_fit fit;
    dra_pod_fit(pr, x, "gpu-node-001", NULL, DRA_SCORE_BINPACK, 0, &fit);
    dra_pod_fit(pr, x, "no-such-node-anywhere", NULL, DRA_SCORE_BINPACK, 0, &fit);
    dra_alloc_ctx_free(x);
    dra_pod_request_free(pr);
    json_decref(pod);
    dra_catalog_sizes after;
    dra_snapshot_catalog_sizes(s, &after);
    cr_expect_eq(after.names, full.names, "a request left names behind (%zu, then %zu)", full.names, after.names);
    /* delete everything but one Node, as the empty store holds */
    static const char *const kinds[] = {"ResourceClaim", "ResourceClaimTemplate", "Pod", "ResourceSlice",
                                        "DeviceTaintRule", "DeviceClass", "Node", "PodGroup"};
    json_t *keep = json_array();
    for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
        json_t *keys = dra_snapshot_keys(s, kinds[k]);
        size_t i;
        json_t *kv;
        json_array_foreach(keys, i, kv) {
            const char *ns = json_string_value(json_array_get(kv, 0)), *name = json_string_value(json_array_get(kv, 1));
            json_array_append_new(keep, json_pack("[s,s,s]", kinds[k], ns, name));
        }
        json_decref(keys);
    }
    size_t n = json_array_size(keep);
    dra_change *ch = calloc(n + 1, sizeof *ch);
    for (size_t i = 0; i < n; i++) {
        json_t *kv = json_array_get(keep, i);
        ch[i] = (dra_change){.kind = json_string_value(json_array_get(kv, 0)),
                             .ns = json_string_value(json_array_get(kv, 1)),
                             .name = json_string_value(json_array_get(kv, 2))};
    }
    dra_snapshot_release(s);
    cr_assert_neq(dra_store_apply(st, ch, n, &e), 0, "%s", err_format(&e, buf, sizeof buf));
    json_t *one = parse("[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}]");
    cr_assert_neq(dra_store_apply_json(st, one, &e), 0, "%s", e.msg);
    json_decref(one);
    free(ch);
    json_decref(keep);
    s = dra_store_acquire(st);
    dra_catalog_sizes end;
    dra_snapshot_catalog_sizes(s, &end);
    cr_expect_eq(end.names, want.names, "names: %zu left, an empty store holds %zu", end.names, want.names);
    cr_expect_eq(end.programs, want.programs, "programs: %zu left, an empty store holds %zu", end.programs, want.programs);
    cr_expect_eq(end.program_bytes, want.program_bytes);
    dra_snapshot_release(s);
    dra_snapshot_release(es);
    dra_store_free(st);
    dra_store_free(empty);
}

/* A selector that does not compile is the object's validation error, as the API
 * server's validateCELSelector reports it: the object never enters the store, and no
 * request compiles anything later (issue #21: CEL is compiled when objects arrive). */
Test(store, a_selector_that_does_not_compile_is_a_validation_error) {
    dra_store *st = store_with_cluster();
    json_t *bad = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"bad\","
                        "\"namespace\":\"ml\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{"
                        "\"deviceClassName\":\"gpu.example.com\",\"selectors\":[{\"cel\":{\"expression\":"
                        "\"device.driver == \"}}]}}]}}}");
    err e;
    err_clear(&e);
    char buf[2048];
    cr_assert_eq(dra_store_apply_json(st, bad, &e), 0);
    const char *msg = err_format(&e, buf, sizeof buf);
    cr_expect(strstr(msg, "ResourceClaim ml/bad: ") &&
                  strstr(msg, "spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "
                              "\"device.driver == \": compilation failed: ERROR: <input>:1:"),
              "%s", msg);
    json_decref(bad);
    json_t *cls = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"c\"},"
                        "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"1 + 1\"}}]}}");
    err_clear(&e);
    cr_assert_eq(dra_store_apply_json(st, cls, &e), 0);
    msg = err_format(&e, buf, sizeof buf);
    cr_expect(strstr(msg, "spec.selectors[0].cel.expression: Invalid value: \"1 + 1\""), "%s", msg);
    json_decref(cls);
    dra_snapshot *s = dra_store_acquire(st);
    cr_expect_eq(dra_snapshot_count(s, "ResourceClaim"), 1, "only busy");
    dra_snapshot_release(s);
    dra_store_free(st);
}

/* One-shot stores (dra_store_opts): a conformance case's objects as given — the same
 * name twice is two objects, lookups by name find the first, no API defaults — and
 * the CLI's files, where an object known by generateName only is an object of its
 * own. A service's store refuses both. */
Test(store, one_shot_objects_as_given_and_unnamed) {
    dra_features f;
    dra_features_default(&f);
    json_t *two = parse("[{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},"
                        "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\",\"exactly\":{\"deviceClassName\":\"x\"}}]}}},"
                        "{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},"
                        "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"b\",\"exactly\":{\"deviceClassName\":\"x\"}}]}}}]");
    err e;
    err_clear(&e);
    dra_store *st = dra_store_new_with(&f, &(dra_store_opts){.as_given = true});
    cr_assert(dra_store_apply_json(st, two, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(st);
    const dra_world *w = dra_snapshot_world(s);
    cr_assert_eq(dra_world_nclaims(w), 2);
    cr_assert_str_eq(dra_world_claim(w, 1)->reqs[0].name, "b");
    const dra_claim *c = dra_world_find_claim(w, "ns", "c");
    cr_assert_str_eq(c->reqs[0].name, "a");
    cr_assert_str_eq(c->reqs[0].exactly.mode, "", "as given: no allocationMode defaulted");
    dra_snapshot_release(s);
    dra_store_free(st);
    st = dra_store_new(&f);
    cr_assert_not(dra_store_apply_json(st, two, &e));
    cr_assert(strstr(e.msg, "ResourceClaim ns/c is given twice with different contents"), "%s", e.msg);
    json_t *unnamed = parse("{\"kind\":\"ResourceClaim\",\"metadata\":{\"generateName\":\"c-\"},"
                            "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\",\"exactly\":{\"deviceClassName\":\"x\"}}]}}}");
    err_clear(&e);
    cr_assert_not(dra_store_apply_json(st, unnamed, &e));
    cr_assert(strstr(e.msg, "metadata.name: Required value"), "%s", e.msg);
    dra_store_free(st);
    st = dra_store_new_with(&f, &(dra_store_opts){.one_shot = true});
    cr_assert(dra_store_apply_json(st, unnamed, &e), "%s", e.msg);
    cr_assert(dra_store_apply_json(st, unnamed, &e), "%s", e.msg);
    s = dra_store_acquire(st);
    cr_assert_eq(dra_world_nclaims(dra_snapshot_world(s)), 2, "each one an object of its own");
    dra_snapshot_release(s);
    dra_store_free(st);
    json_decref(two);
    json_decref(unnamed);
}
