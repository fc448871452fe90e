/* live_bind.c — bind mode where kube-scheduler's own semantics are subtle, against
 * the fake kube-apiserver, each part with its own store, watch, service and binder:
 *
 * Gang siblings (PodGroup, KEP-4671 gang scheduling with KEP-5729 group claims).
 * kube-scheduler's pod-group cycle filters every member in turn and only assumes the
 * earlier ones in its own snapshot ("Placements within the group are tentatively
 * assumed in the node snapshot and rolled back if the group ... cannot be
 * satisfied", pkg/scheduler/algorithm_podgroup.go, PodGroupSchedulingAlgorithm), so
 * the extender is called per pod and never sees those tentative placements. The
 * rule checked here:
 *   - /filter decides against the snapshot: a sibling filtered (tentatively placed)
 *     but not bound takes nothing — the second member passes the same nodes, also
 *     where the group claim could still be allocated elsewhere;
 *   - what /bind has written (a sibling's bind in flight: claims written, binding
 *     not yet created) is real and counts as in use at once, for everyone;
 *   - the group's claim is shared: once a sibling allocated it, the next member reuses
 *     it (no device of its own for it) and is held to its node, and it stays reserved
 *     for the PodGroup ({apiGroup: scheduling.k8s.io, resource: podgroups} in
 *     status.reservedFor — KEP-5729: "A ResourceClaim referenced by a PodGroup will be
 *     reserved for that PodGroup as a whole instead of its individual Pods"), not for
 *     each pod.
 *
 * DRA extended resources (KEP-5004). A pod asking example.com/gpu: 2 on a node
 * without that allocatable, where a DeviceClass maps the name, gets the claim the
 * scheduler's DynamicResources plugin creates in PreBind
 * (pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go:
 * generateName "<pod>-extended-resources-", the pod as controlling owner, annotation
 * resource.kubernetes.io/extended-resource-claim: "true", requests
 * "container-<i>-request-<j>"; then finalizer, allocation and reservedFor; then
 * pod.status.extendedResourceClaimStatus by a strategic-merge patch of pods/status);
 * a binding that fails deletes that claim again. */
#include "tests/live/live.h"

#include "engine/engine.h"
#include "extender/bind.h"
#include "extender/extender.h"
#include "extender/pending.h"
#include "extender/watch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef live_env env;

static void env_start(env *e, ext_kube *k, bool podgroups) {
    dra_features feat;
    dra_features_default(&feat);
    feat.workload_claims = podgroups;
    ext_watch_opts wo = {.max_staleness_s = 10, .page_limit = 50, .idle_s = 2, .watch_timeout_s = 4,
                         .backoff_max_s = 0.5, .quiet = live_quiet(), .podgroups = podgroups};
    live_env_start(e, k, dra_store_new(&feat), 20, &wo, "bind env");
}

static void env_stop(env *e) { live_env_stop(e); }

/* The store has what the server has of a kind. */
typedef struct same_count {
    env *e;
    fake_api *f;
    const char *resource, *kind;
} same_count;

static bool counts_match(void *arg) {
    same_count *c = arg;
    json_t *objs = fake_objects(c->f, c->resource);
    size_t want = json_array_size(objs);
    json_decref(objs);
    dra_snapshot *s = dra_store_acquire(c->e->st);
    size_t got = s ? dra_snapshot_count(s, c->kind) : 0;
    dra_snapshot_release(s);
    return got == want;
}

static void settle(env *e, fake_api *f, bool podgroups) {
    static const char *const res[] = {"resourceclaims", "resourceslices", "nodes", "deviceclasses", "podgroups"};
    static const char *const kinds[] = {"ResourceClaim", "ResourceSlice", "Node", "DeviceClass", "PodGroup"};
    for (int i = 0; i < (podgroups ? 5 : 4); i++) {
        same_count c = {e, f, res[i], kinds[i]};
        CHECK(live_wait(10, counts_match, &c), "the store does not have the server's %ss", kinds[i]);
    }
}

/* POST /filter as kube-scheduler sends it (nodeCacheCapable): the passing nodes as
 * "a,b," and, in *why, the failure message of `explain` (NULL: none). */
static void filter(env *e, const json_t *pod, const char *const *nodes, int n, char *out, size_t outn,
                   const char *explain, char *why, size_t whyn) {
    live_filter(e->svc, pod, nodes, n, out, outn, explain, why, whyn);
}

typedef struct filter_job {
    env *e;
    const json_t *pod;
    const char *const *nodes;
    int n;
    const char *want, *explain;
    char got[128], why[600];
} filter_job;

static bool filter_is(void *arg) {
    filter_job *j = arg;
    filter(j->e, j->pod, j->nodes, j->n, j->got, sizeof j->got, j->explain, j->explain ? j->why : NULL, sizeof j->why);
    return !strcmp(j->got, j->want);
}

static json_t *claim_obj(const char *name, int count) {
    return json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}", "metadata", "name", name, "namespace", "ml", "spec",
                     "devices", "requests", "name", "gpu", "exactly", "deviceClassName", "gpu.example.com", "count", count);
}

static json_t *server_claim(fake_api *f, const char *name) {
    json_t *all = fake_objects(f, "resourceclaims"), *found = NULL;
    for (size_t i = 0; i < json_array_size(all) && !found; i++) {
        json_t *c = json_array_get(all, i);
        if (!strcmp(json_string_value(json_object_get(json_object_get(c, "metadata"), "name")) ?: "", name))
            found = json_incref(c);
    }
    json_decref(all);
    return found;
}

static size_t results(const json_t *claim) {
    return json_array_size(
        json_object_get(json_object_get(json_object_get(json_object_get(claim, "status"), "allocation"), "devices"), "results"));
}

typedef struct bind_job {
    ext_binder *b;
    const char *pod, *uid, *node;
    char *err;
} bind_job;

static void *bind_thread(void *arg) {
    bind_job *j = arg;
    j->err = ext_bind(j->b, "ml", j->pod, j->uid, j->node);
    return NULL;
}

static bool one_held(void *arg) { return fake_held_bindings(arg) == 1; }

/* ---- gang siblings ------------------------------------------------------------------------- */

static json_t *gang_pod(const char *name, const char *uid, const char *own) {
    return json_pack("{s:{s:s, s:s, s:s}, s:{s:{s:s}, s:[{s:s}], s:[{s:s, s:s}, {s:s, s:s}]}}", "metadata", "name", name,
                     "namespace", "ml", "uid", uid, "spec", "schedulingGroup", "podGroupName", "gang", "containers", "name",
                     "main", "resourceClaims", "name", "shared", "resourceClaimName", "gang-shared", "name", "own",
                     "resourceClaimName", own);
}

void live_gang_siblings(fake_api *f, ext_kube *k) {
    /* two nodes of 3 GPUs; the group claim (1 GPU) shared, each member's own (1 GPU) */
    static const char *const nodes[] = {"gang-a", "gang-b"};
    for (int i = 0; i < 2; i++) {
        char sl[32];
        snprintf(sl, sizeof sl, "%s-gpus", nodes[i]);
        fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", nodes[i]));
        fake_put(f, "resourceslices", live_slice(sl, nodes[i], 3, "H100"));
    }
    fake_put(f, "podgroups",
             json_pack("{s:{s:s, s:s, s:s}, s:{s:{s:{s:i}}, s:[{s:s, s:s}]}}", "metadata", "name", "gang", "namespace",
                       "ml", "uid", "pg-uid-gang", "spec", "schedulingPolicy", "gang", "minCount", 2, "resourceClaims",
                       "name", "shared", "resourceClaimName", "gang-shared"));
    fake_put(f, "resourceclaims", claim_obj("gang-shared", 1));
    fake_put(f, "resourceclaims", claim_obj("gang-own-1", 1));
    fake_put(f, "resourceclaims", claim_obj("gang-own-2", 1));
    fake_put(f, "resourceclaims", claim_obj("gang-other", 2));
    json_t *p1 = gang_pod("gang-1", "gang-uid-1", "gang-own-1"), *p2 = gang_pod("gang-2", "gang-uid-2", "gang-own-2");
    json_t *other = json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s}], s:[{s:s, s:s}]}}", "metadata", "name", "other", "namespace",
                              "ml", "uid", "other-uid", "spec", "containers", "name", "main", "resourceClaims", "name",
                              "gpus", "resourceClaimName", "gang-other");
    fake_put_pod(f, json_deep_copy(p1));
    fake_put_pod(f, json_deep_copy(p2));

    env e;
    env_start(&e, k, true);
    settle(&e, f, true);
    json_t *status = ext_watch_status_json(e.w);
    const json_t *pg = json_object_get(status, "PodGroup");
    CHECK(json_is_true(json_object_get(pg, "served")) && json_is_true(json_object_get(pg, "listed")),
          "PodGroups are not watched: %s", json_dumps(pg, JSON_COMPACT));
    json_decref(status);

    char got[128];
    /* 1. gang-1 filtered: both nodes; kube-scheduler assumes it on gang-a in its own
     * snapshot. gang-2's filter does not see that: both nodes still pass */
    filter(&e, p1, nodes, 2, got, sizeof got, NULL, NULL, 0);
    CHECK(!strcmp(got, "gang-a,gang-b,"), "gang-1 filter: %s, want gang-a,gang-b,", got);
    filter(&e, p2, nodes, 2, got, sizeof got, NULL, NULL, 0);
    CHECK(!strcmp(got, "gang-a,gang-b,"), "gang-2 filter with gang-1 only tentatively placed: %s, want gang-a,gang-b,", got);

    /* 2. gang-1's bind on gang-a, held at the binding: its claims are written (the group
     * claim allocated and reserved for the group, its own claim for it) */
    fake_hold_bindings(f, true);
    bind_job j1 = {e.b, "gang-1", "gang-uid-1", "gang-a", NULL};
    pthread_t th;
    pthread_create(&th, NULL, bind_thread, &j1);
    CHECK(live_wait(10, one_held, f), "gang-1's binding never reached the server");
    /* gang-2 reuses the group claim: one free GPU on gang-a is enough; gang-b is out,
     * the group's devices are on gang-a. The binder put its writes into the store as it
     * made them, and no older version the watch still brings is applied over them
     * (pending.h): the answer is right at once, sampled once. */
    filter_job fj = {.e = &e, .pod = p2, .nodes = nodes, .n = 2, .want = "gang-a,", .explain = "gang-b"};
    CHECK(filter_is(&fj), "gang-2 filter with gang-1's bind in flight: %s, want gang-a,", fj.got);
    CHECK(strstr(fj.why, "gang-shared") != NULL, "gang-b's failure should name the group claim: %s", fj.why);
    /* in flight is in use: a 2-GPU pod no longer fits gang-a (1 of 3 free) */
    filter_job fo = {.e = &e, .pod = other, .nodes = nodes, .n = 2, .want = "gang-b,"};
    CHECK(filter_is(&fo), "a 2-GPU pod with gang-1's bind in flight: %s, want gang-b,", fo.got);
    fake_hold_bindings(f, false);
    pthread_join(th, NULL);
    CHECK(!j1.err, "gang-1 bind: %s", j1.err);
    free(j1.err);

    /* 3. gang-2 binds on gang-a: it only joins; the group claim keeps one reservation,
     * the PodGroup's */
    char *e2 = ext_bind(e.b, "ml", "gang-2", "gang-uid-2", "gang-a");
    CHECK(!e2, "gang-2 bind: %s", e2);
    free(e2);
    json_t *shared = server_claim(f, "gang-shared");
    const json_t *rf = json_object_get(json_object_get(shared, "status"), "reservedFor");
    const json_t *r0 = json_array_get(rf, 0);
    CHECK(results(shared) == 1, "the group claim has %zu devices, want 1", results(shared));
    CHECK(json_array_size(rf) == 1 && !strcmp(json_string_value(json_object_get(r0, "apiGroup")) ?: "", "scheduling.k8s.io") &&
              !strcmp(json_string_value(json_object_get(r0, "resource")) ?: "", "podgroups") &&
              !strcmp(json_string_value(json_object_get(r0, "name")) ?: "", "gang") &&
              !strcmp(json_string_value(json_object_get(r0, "uid")) ?: "", "pg-uid-gang"),
          "the group claim should be reserved for PodGroup gang only: %s", json_dumps(rf, JSON_COMPACT));
    json_decref(shared);
    for (int i = 1; i <= 2; i++) {
        char name[32], uid[32];
        snprintf(name, sizeof name, "gang-own-%d", i);
        snprintf(uid, sizeof uid, "gang-uid-%d", i);
        json_t *own = server_claim(f, name);
        const json_t *orf = json_object_get(json_object_get(own, "status"), "reservedFor");
        CHECK(results(own) == 1 && json_array_size(orf) == 1 &&
                  !strcmp(json_string_value(json_object_get(json_array_get(orf, 0), "uid")) ?: "", uid),
              "%s: want one device, reserved for its pod", name);
        json_decref(own);
    }
    json_t *b2 = fake_pod(f, "ml", "gang-2");
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(b2, "spec"), "nodeName")) ?: "", "gang-a"),
          "gang-2 is not bound to gang-a");
    json_decref(b2);
    json_decref(p1);
    json_decref(p2);
    json_decref(other);
    env_stop(&e);
}

/* ---- DRA extended resources ------------------------------------------------------------------ */

static json_t *ext_pod(const char *name, const char *uid) {
    return json_pack("{s:{s:s, s:s, s:s}, s:{s:[{s:s, s:{s:{s:s, s:s}}}]}}", "metadata", "name", name, "namespace", "ml",
                     "uid", uid, "spec", "containers", "name", "main", "resources", "requests", "cpu", "1",
                     "example.com/gpu", "2");
}

/* The claims the server has whose name starts with prefix. */
static json_t *claims_named(fake_api *f, const char *prefix) {
    json_t *all = fake_objects(f, "resourceclaims"), *out = json_array();
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *c = json_array_get(all, i);
        if (!strncmp(json_string_value(json_object_get(json_object_get(c, "metadata"), "name")) ?: "", prefix, strlen(prefix)))
            json_array_append(out, c);
    }
    json_decref(all);
    return out;
}

void live_extended_resources(fake_api *f, ext_kube *k) {
    fake_put(f, "deviceclasses", json_pack("{s:{s:s}, s:{s:[{s:{s:s}}], s:s}}", "metadata", "name", "gpu-er.example.com",
                                            "spec", "selectors", "cel", "expression",
                                            "device.driver == 'gpu.example.com'", "extendedResourceName",
                                            "example.com/gpu"));
    fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", "er-node"));
    fake_put(f, "resourceslices", live_slice("er-node-gpus", "er-node", 4, "H100"));
    fake_put_pod(f, ext_pod("er-1", "er-uid-1"));
    fake_put_pod(f, ext_pod("er-2", "er-uid-2"));
    env e;
    env_start(&e, k, false);
    settle(&e, f, false);

    /* er-1: the claim created, allocated, reserved; the pod's status names it; bound */
    char *err1 = ext_bind(e.b, "ml", "er-1", "er-uid-1", "er-node");
    CHECK(!err1, "extended resources: bind er-1: %s", err1);
    free(err1);
    json_t *made = claims_named(f, "er-1-extended-resources-");
    CHECK(json_array_size(made) == 1, "er-1: %zu extended-resource claims, want 1", json_array_size(made));
    json_t *c = json_array_get(made, 0);
    const json_t *meta = json_object_get(c, "metadata");
    const char *cname = json_string_value(json_object_get(meta, "name"));
    const json_t *own = json_array_get(json_object_get(meta, "ownerReferences"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(meta, "annotations"),
                                                    "resource.kubernetes.io/extended-resource-claim")) ?: "",
                  "true"),
          "er-1's claim lacks the extended-resource-claim annotation");
    CHECK(own && !strcmp(json_string_value(json_object_get(own, "kind")) ?: "", "Pod") &&
              !strcmp(json_string_value(json_object_get(own, "uid")) ?: "", "er-uid-1") &&
              json_is_true(json_object_get(own, "controller")),
          "er-1's claim should be controlled by the pod");
    const json_t *rq = json_array_get(json_object_get(json_object_get(json_object_get(c, "spec"), "devices"), "requests"), 0);
    CHECK(rq && !strcmp(json_string_value(json_object_get(rq, "name")) ?: "", "container-0-request-1") &&
              json_integer_value(json_object_get(json_object_get(rq, "exactly"), "count")) == 2 &&
              !strcmp(json_string_value(json_object_get(json_object_get(rq, "exactly"), "deviceClassName")) ?: "",
                      "gpu-er.example.com"),
          "er-1's claim request: %s", rq ? json_dumps(rq, JSON_COMPACT) : "none");
    CHECK(results(c) == 2, "er-1's claim has %zu devices, want 2", results(c));
    const json_t *rf = json_object_get(json_object_get(c, "status"), "reservedFor");
    CHECK(json_array_size(rf) == 1 && !strcmp(json_string_value(json_object_get(json_array_get(rf, 0), "uid")) ?: "", "er-uid-1"),
          "er-1's claim should be reserved for er-1");
    json_t *p = fake_pod(f, "ml", "er-1");
    const json_t *ers = json_object_get(json_object_get(p, "status"), "extendedResourceClaimStatus");
    const json_t *m0 = json_array_get(json_object_get(ers, "requestMappings"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(ers, "resourceClaimName")) ?: "", cname ? cname : "?") &&
              !strcmp(json_string_value(json_object_get(m0, "containerName")) ?: "", "main") &&
              !strcmp(json_string_value(json_object_get(m0, "resourceName")) ?: "", "example.com/gpu") &&
              !strcmp(json_string_value(json_object_get(m0, "requestName")) ?: "", "container-0-request-1"),
          "er-1's status.extendedResourceClaimStatus: %s", ers ? json_dumps(ers, JSON_COMPACT) : "none");
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")) ?: "", "er-node"),
          "er-1 is not bound");
    json_decref(p);
    json_decref(made);

    /* er-2: the binding fails: the claim it created is deleted again, the pod unbound */
    fake_fail_request(f, "POST", "/pods/er-2/binding", 500);
    char *err2 = ext_bind(e.b, "ml", "er-2", "er-uid-2", "er-node");
    CHECK(err2 != NULL, "er-2: the bind should fail");
    free(err2);
    made = claims_named(f, "er-2-extended-resources-");
    CHECK(json_array_size(made) == 0, "er-2: the failed bind left %zu claims", json_array_size(made));
    json_decref(made);
    p = fake_pod(f, "ml", "er-2");
    CHECK(!json_object_get(json_object_get(p, "spec"), "nodeName"), "er-2 is bound after a failed binding");
    json_decref(p);
    /* and the devices it had are free again: the retry binds (the last 2 of 4) */
    err2 = ext_bind(e.b, "ml", "er-2", "er-uid-2", "er-node");
    CHECK(!err2, "er-2 retry: %s", err2);
    free(err2);
    made = claims_named(f, "er-2-extended-resources-");
    CHECK(json_array_size(made) == 1 && results(json_array_get(made, 0)) == 2, "er-2 retry: want one claim of 2 devices");
    json_decref(made);
    env_stop(&e);
}
