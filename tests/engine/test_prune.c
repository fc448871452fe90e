/* test_prune.c — the inputs of the "Hardening" issue that took seconds to hours on
 * one node (all within Kubernetes' limits: <=128 devices per slice, <=32 requests
 * and devices per claim, <=8 subrequests), each with its exact answer and a time
 * bound (1 s under ASan; the release build answers each in well under 10 ms), plus
 * variants scaled up to those limits and satisfiable twins whose first solution
 * must stay the one Kubernetes' depth-first order finds (checked against the
 * unpruned search where that one finishes in time). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "tests/engine/search_gen.h"

#define FEATURES_ALL                                                                                               \
    "{\"prioritizedList\":true,\"partitionableDevices\":true,\"consumableCapacity\":true,\"adminAccess\":true," \
    "\"deviceTaints\":true}"

enum { LIMIT_MS = 1000 };

/* Runs c (consumed), checks the time bound and, when the unpruned search finishes
 * within 0.3 s, that both agree. Returns the pruned outcome. */
static sg_out check(json_t *c, dra_alloc_status want) {
    const char *dump = getenv("SG_DUMP");   /* a directory: the case as a fixture, for `dralloc allocate --fixture` */
    if (dump) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.json", dump, criterion_current_test->name);
        json_dump_file(c, path, JSON_COMPACT);
    }
    sg_out o;
    sg_run(c, false, 0, &o);
    cr_assert_eq(o.status, want, "status %d, want %d: %s", o.status, want, o.text);
    cr_assert_lt(o.ms, LIMIT_MS, "took %.1f ms (%llu steps)", o.ms, (unsigned long long)o.steps);
    if (getenv("SG_VERBOSE")) fprintf(stderr, "pruned: %.2f ms, %llu steps\n", o.ms, (unsigned long long)o.steps);
    sg_out ref;
    sg_run(c, true, 300, &ref);
    if (ref.status != DRA_ALLOC_TIMEOUT) {
        cr_assert_eq(ref.status, o.status);
        cr_assert_str_eq(ref.text, o.text);
    }
    free(ref.text);
    json_decref(c);
    return o;
}

static void gpus(json_t *c, int n, int values, const char *attr) {
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    for (int i = 0; i < n; i++) {
        json_t *d = sg_device(devs, "gpu-%03d", i);
        if (attr) sg_attr_int(d, attr, values ? i % values : i);
    }
}

/* 1. k GPU requests (count 1) + 1 NIC request, n GPUs, no NIC on the node. */
static json_t *gpus_and_missing_nic(int k, int n, bool nic) {
    json_t *c = sg_case(FEATURES_ALL);
    gpus(c, n, 0, NULL);
    if (nic) sg_device(sg_slice(c, "nic", "nic-pool"), "nic-%d", 0);
    json_t *reqs = sg_claim(c, "claim", NULL);
    for (int i = 0; i < k; i++) {
        char name[16];
        snprintf(name, sizeof name, "gpu-%d", i);
        sg_request(reqs, name, "gpu", 1);
    }
    sg_request(reqs, "nic", "nic", 1);
    return c;
}

Test(prune, four_gpus_and_a_missing_nic) {
    sg_out o = check(gpus_and_missing_nic(4, 128, false), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, thirty_one_gpus_and_a_missing_nic) {
    sg_out o = check(gpus_and_missing_nic(31, 128, false), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, four_gpus_and_a_nic) {
    sg_out o = check(gpus_and_missing_nic(4, 128, true), DRA_ALLOC_OK);
    char devs[512];
    sg_devices(&o, 0, devs, sizeof devs);
    cr_assert_str_eq(devs, "gpu-000 gpu-001 gpu-002 gpu-003 nic-0");
    free(o.text);
}

/* 2./3. k requests under distinctAttribute, n devices with `values` distinct values
 * (extra: one more device with a new value at the end). */
static json_t *distinct(int k, int n, int values, bool extra) {
    json_t *c = sg_case(FEATURES_ALL);
    gpus(c, n, values, "numa");
    if (extra) {
        json_t *devs = json_object_get(json_object_get(json_array_get(json_object_get(c, "slices"), 0), "spec"), "devices");
        sg_attr_int(json_array_get(devs, json_array_size(devs) - 1), "numa", values);
    }
    json_t *cons;
    json_t *reqs = sg_claim(c, "claim", &cons);
    for (int i = 0; i < k; i++) {
        char name[16];
        snprintf(name, sizeof name, "r-%d", i);
        sg_request(reqs, name, "gpu", 1);
    }
    sg_constraint(cons, false, "numa");
    return c;
}

Test(prune, five_distinct_of_four_values) {
    sg_out o = check(distinct(5, 128, 4, false), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, seven_distinct_of_six_values) {
    sg_out o = check(distinct(7, 32, 6, false), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, thirty_two_distinct_of_thirty_one_values) {
    sg_out o = check(distinct(32, 128, 31, false), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, five_distinct_with_the_fifth_value_last) {
    sg_out o = check(distinct(5, 128, 4, true), DRA_ALLOC_OK);
    char devs[512];
    sg_devices(&o, 0, devs, sizeof devs);
    cr_assert_str_eq(devs, "gpu-000 gpu-001 gpu-002 gpu-003 gpu-127");
    free(o.text);
}

/* 4./5. count k from n partitionable devices each consuming 1 of a shared counter of
 * value `allow`. */
static json_t *partitionable(int k, int n, int allow) {
    json_t *c = sg_case(FEATURES_ALL);
    char v[16];
    snprintf(v, sizeof v, "%d", allow);
    json_t *counters = json_pack("{s:{s:s},s:{s:s,s:{s:s,s:i,s:i},s:s,s:[{s:s,s:{s:{s:s}}}]}}", "metadata", "name", "gpu-counters",
                                 "spec", "driver", "gpu.example.com", "pool", "name", "gpu-pool",
                                 "resourceSliceCount", 2, "generation", 1, "nodeName", "node-1", "sharedCounters",
                                 "name", "cs", "counters", "slots", "value", v);
    json_array_append_new(json_object_get(c, "slices"), counters);
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    json_object_set_new(json_object_get(json_object_get(json_array_get(json_object_get(c, "slices"), 1), "spec"), "pool"),
                        "resourceSliceCount", json_integer(2));
    for (int i = 0; i < n; i++) {
        json_t *d = sg_device(devs, "part-%03d", i);
        json_object_set_new(d, "consumesCounters",
                            json_pack("[{s:s,s:{s:{s:s}}}]", "counterSet", "cs", "counters", "slots", "value", "1"));
    }
    sg_request(sg_claim(c, "claim", NULL), "r", "gpu", k);
    return c;
}

Test(prune, five_partitions_counter_allows_four) {
    sg_out o = check(partitionable(5, 128, 4), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, thirty_two_partitions_counter_allows_thirty_one) {
    sg_out o = check(partitionable(32, 128, 31), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, thirty_two_partitions_counter_allows_thirty_two) {
    sg_out o = check(partitionable(32, 128, 32), DRA_ALLOC_OK);
    char devs[1024];
    sg_devices(&o, 0, devs, sizeof devs);
    cr_assert(!strncmp(devs, "part-000 part-001", 17) && strstr(devs, "part-031") && !strstr(devs, "part-032"), "%s",
              devs);
    free(o.text);
}

/* 6. requests of k and n-k+1 devices on n multi-allocatable devices whose capacity
 * holds one share each. */
static json_t *shares(int n, int k) {
    json_t *c = sg_case(FEATURES_ALL);
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    for (int i = 0; i < n; i++) {
        json_t *d = sg_device(devs, "shared-%02d", i);
        json_object_set_new(d, "allowMultipleAllocations", json_true());
        json_object_set_new(d, "capacity", json_pack("{s:{s:s}}", "mem", "value", "10"));
    }
    json_t *reqs = sg_claim(c, "claim", NULL);
    json_object_set_new(sg_request(reqs, "a", "gpu", k), "capacity", json_pack("{s:{s:s}}", "requests", "mem", "6"));
    json_object_set_new(sg_request(reqs, "b", "gpu", n - k + 1), "capacity",
                        json_pack("{s:{s:s}}", "requests", "mem", "6"));
    return c;
}

Test(prune, multi_allocatable_one_share_each) {
    sg_out o = check(shares(28, 14), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, multi_allocatable_one_share_each_thirty_one) {
    sg_out o = check(shares(31, 16), DRA_ALLOC_UNSAT);
    free(o.text);
}

/* 7./8. matchAttribute over groups: `reqs` requests of `count` devices each, n
 * devices in groups of g (group = i / g); extra: a last group big enough. */
static json_t *match_groups(int reqs_n, int count, int n, int g, int extra) {
    json_t *c = sg_case(FEATURES_ALL);
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    for (int i = 0; i < n + extra; i++) sg_attr_int(sg_device(devs, "gpu-%03d", i), "group", i < n ? i / g : 1000);
    json_t *cons;
    json_t *reqs = sg_claim(c, "claim", &cons);
    for (int i = 0; i < reqs_n; i++) {
        char name[16];
        snprintf(name, sizeof name, "r-%d", i);
        sg_request(reqs, name, "gpu", count);
    }
    sg_constraint(cons, true, "group");
    return c;
}

Test(prune, thirty_two_matching_of_groups_of_thirty_one) {
    sg_out o = check(match_groups(1, 32, 124, 31, 0), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, eleven_matching_of_groups_of_ten) {
    sg_out o = check(match_groups(11, 1, 48, 10, 0), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, thirty_two_matching_requests_of_groups_of_thirty_one) {
    sg_out o = check(match_groups(32, 1, 124, 31, 0), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, eleven_matching_with_a_last_group_of_eleven) {
    sg_out o = check(match_groups(11, 1, 48, 10, 11), DRA_ALLOC_OK);
    char devs[512];
    sg_devices(&o, 0, devs, sizeof devs);
    cr_assert_str_eq(devs, "gpu-048 gpu-049 gpu-050 gpu-051 gpu-052 gpu-053 gpu-054 gpu-055 gpu-056 gpu-057 gpu-058");
    free(o.text);
}

/* 9. k requests with 8 subrequests each (firstAvailable, counts 8..1) + a missing
 * NIC, n GPUs. */
static json_t *subrequests(int k, int n) {
    json_t *c = sg_case(FEATURES_ALL);
    gpus(c, n, 0, NULL);
    json_t *reqs = sg_claim(c, "claim", NULL);
    for (int i = 0; i < k; i++) {
        json_t *subs = json_array();
        for (int s = 0; s < 8; s++) {
            char name[16];
            snprintf(name, sizeof name, "s-%d", s);
            json_array_append_new(subs, json_pack("{s:s,s:s,s:s,s:i}", "name", name, "deviceClassName", "gpu",
                                                  "allocationMode", "ExactCount", "count", 8 - s));
        }
        char name[16];
        snprintf(name, sizeof name, "r-%d", i);
        json_array_append_new(reqs, json_pack("{s:s,s:o}", "name", name, "firstAvailable", subs));
    }
    sg_request(reqs, "nic", "nic", 1);
    return c;
}

Test(prune, subrequests_and_a_missing_nic) {
    sg_out o = check(subrequests(3, 16), DRA_ALLOC_UNSAT);
    free(o.text);
}

Test(prune, subrequests_at_the_limit_and_a_missing_nic) {
    sg_out o = check(subrequests(31, 128), DRA_ALLOC_UNSAT);
    free(o.text);
}

/* 10. 30,001 claims in one call: the search keeps its pending calls on an explicit
 * stack, so depth grows in the arena, not on the C stack (the recursion overflowed). */
Test(prune, thirty_thousand_claims) {
    json_t *c = sg_case(FEATURES_ALL);
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    for (int i = 0; i < 4; i++) sg_device(devs, "gpu-%d", i);
    for (int i = 0; i < 30000; i++) {
        char name[32];
        snprintf(name, sizeof name, "empty-%05d", i);
        sg_request(sg_claim(c, name, NULL), "r", "gpu", 0);
    }
    json_t *reqs = sg_claim(c, "last", NULL);
    sg_request(reqs, "a", "gpu", 2);
    sg_request(reqs, "b", "gpu", 2);
    sg_out o;
    sg_run(c, false, 0, &o);
    cr_assert_eq(o.status, DRA_ALLOC_OK, "%s", o.text);
    char d[128];
    sg_devices(&o, 30000, d, sizeof d);
    cr_assert_str_eq(d, "gpu-0 gpu-1 gpu-2 gpu-3");
    free(o.text);
    json_decref(c);
}

/* 65,536 admin-access claims on one device, then a plain claim for it: the device is
 * being allocated 65,536 times in this call, so the plain claim cannot have it (a
 * 16-bit "allocating" counter wrapped to 0 here and handed it out). */
Test(prune, allocating_counter_does_not_wrap) {
    json_t *c = sg_case("{\"adminAccess\":true}");
    sg_device(sg_slice(c, "gpu", "gpu-pool"), "gpu-%d", 0);
    for (int i = 0; i < 65536; i++) {
        char name[32];
        snprintf(name, sizeof name, "admin-%05d", i);
        json_object_set_new(sg_request(sg_claim(c, name, NULL), "r", "gpu", 1), "adminAccess", json_true());
    }
    sg_request(sg_claim(c, "plain", NULL), "r", "gpu", 1);
    sg_out o;
    sg_run(c, false, 0, &o);
    cr_assert_eq(o.status, DRA_ALLOC_UNSAT, "%s", o.text);
    free(o.text);
    json_decref(c);
}

/* The deadline stops the search inside long candidate loops too. */
Test(prune, deadline_in_a_long_call) {
    json_t *c = sg_case(FEATURES_ALL);
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    for (int i = 0; i < 128; i++) sg_device(devs, "gpu-%03d", i);
    for (int i = 0; i < 20000; i++) {
        char name[32];
        snprintf(name, sizeof name, "c-%05d", i);
        sg_request(sg_claim(c, name, NULL), "r", "gpu", 1);
    }
    sg_out o;
    sg_run(c, false, 5, &o);
    cr_assert_eq(o.status, DRA_ALLOC_TIMEOUT, "%s", o.text);
    cr_assert_str_eq(o.text, "timed out trying to allocate devices");
    /* wall time, with room for a loaded CI machine (500 ms failed once under load): the
     * call must stop near its 5 ms deadline, not run its 20,000 claims to the end */
    cr_assert_lt(o.ms, 2000, "stopped after %.1f ms", o.ms);
    free(o.text);
    json_decref(c);
}

/* shareIDs: reproducible with dra_alloc_ctx_set_seed, distinct for every share a
 * context hands out. */
Test(prune, share_ids_seeded_and_unique) {
    json_t *c = sg_case(FEATURES_ALL);
    json_t *devs = sg_slice(c, "gpu", "gpu-pool");
    json_t *d = sg_device(devs, "shared-%d", 0);
    json_object_set_new(d, "allowMultipleAllocations", json_true());
    json_object_set_new(d, "capacity", json_pack("{s:{s:s}}", "mem", "value", "100"));
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "c-%d", i);
        json_object_set_new(sg_request(sg_claim(c, name, NULL), "r", "gpu", 1), "capacity",
                            json_pack("{s:{s:s}}", "requests", "mem", "10"));
    }
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    json_t *node = json_pack("{s:s,s:{s:s}}", "kind", "Node", "metadata", "name", "node-1");
    cr_assert(th_add(ws, node, &e));
    json_decref(node);
    sg_add_all(ws, c, "classes", "DeviceClass");
    sg_add_all(ws, c, "slices", "ResourceSlice");
    sg_add_all(ws, c, "claims", "ResourceClaim");
    const dra_world *w = th_world(ws);
    dra_features f = {.consumable_capacity = true};
    dra_nodeview *v = dra_nodeview_new(w, dra_world_node(w, 0), &f, &e);
    cr_assert_not_null(v, "%s", e.msg);
    const dra_claim *claims[8];
    for (int i = 0; i < 8; i++) claims[i] = dra_world_claim(w, (size_t)i);
    char ids[2][8][40];
    for (int run = 0; run < 2; run++) {
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        dra_alloc_ctx_set_seed(x, 42);
        dra_alloc_result *res;
        cr_assert_eq(dra_allocate(x, v, NULL, claims, 8, &res, &e), DRA_ALLOC_OK, "%s", e.msg);
        for (int i = 0; i < 8; i++) {
            cr_assert_not_null(res[i].results[0].share_id);
            snprintf(ids[run][i], sizeof ids[run][i], "%s", res[i].results[0].share_id);
            cr_assert_eq(strlen(ids[run][i]), 36);
            cr_assert_eq(ids[run][i][14], '4', "version 4: %s", ids[run][i]);
            for (int j = 0; j < i; j++) cr_assert_str_neq(ids[run][i], ids[run][j]);
        }
        dra_alloc_ctx_free(x);
    }
    for (int i = 0; i < 8; i++) cr_assert_str_eq(ids[0][i], ids[1][i]);
    dra_nodeview_free(v);
    th_free(ws);
    json_decref(c);
}
