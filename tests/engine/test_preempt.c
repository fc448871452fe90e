/* test_preempt.c — making room (engine/preempt.h), hand-worked: each fleet is small
 * enough to see the answer, and the answer is written down from the rules of
 * kube-scheduler 1.37 that preempt.h cites (pkg/scheduler/framework/preemption/
 * preemption.go pickOneNodeForPreemption, plugins/defaultpreemption/
 * default_preemption.go SelectVictimsOnNode, preemption/util.go
 * FilterVictimsWithPDBViolation and MoreImportantVictim). */
#include "tests/engine/room_fleet.h"

static const char *gpu(int i) {
    static const char *const names[] = {"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"};
    return names[i];
}

/* Node n with `used` of its 8 GPUs held by 1-GPU pods <n>-p<i> of priority 0, started
 * at second start0 + i. */
static void used_node(json_t *items, const char *n, int used, int start0) {
    rf_node(items, n, 8);
    for (int i = 0; i < used; i++) {
        char pod[64];
        snprintf(pod, sizeof pod, "%s-p%d", n, i);
        rf_bound(items, "ml", pod, n, 0, "low", start0 + i, "gpu", (const char *[]){gpu(i)}, 1);
    }
}

/* 3 nodes x 8 GPUs, 7/6/7 used by 1-GPU pods of priority 0; a 4-GPU pod of priority
 * 1000. node-b has 2 free: 2 victims; node-a and node-c 3 each. On node-b every pair
 * costs the same under the first four rules; the fifth (the latest earliest start of
 * the highest-priority victims) takes the two that started last, p4 and p5, and the
 * pod gets their GPUs and the two free ones, in first-fit order. node-c's pods started
 * later than node-a's (100 s on): node-c is second. */
Test(preempt, three_nodes_two_victims_on_the_emptiest) {
    json_t *items = json_array();
    rf_classes(items);
    used_node(items, "node-a", 7, 0);
    used_node(items, "node-b", 6, 0);
    used_node(items, "node-c", 7, 100);
    rf_pending(items, "ml", "big", 1000, "gpu", 4);
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "big", false, &st);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    cr_assert(json_is_false(json_object_get(out, "fits")));
    const json_t *c = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(c), 3);
    char buf[512];
    const json_t *c0 = json_array_get(c, 0);
    cr_assert_str_eq(json_string_value(json_object_get(c0, "node")), "node-b");
    cr_assert_str_eq(rf_victims(c0, buf, sizeof buf), "ml/node-b-p4 ml/node-b-p5");
    cr_assert_eq(json_integer_value(json_object_get(c0, "pdbViolations")), 0);
    const json_t *devs = json_object_get(c0, "devices");
    cr_assert_eq(json_array_size(devs), 4);
    for (int i = 0; i < 4; i++) {
        const json_t *d = json_array_get(devs, i);
        cr_assert_str_eq(json_string_value(json_object_get(d, "device")), gpu(4 + i));
        cr_assert_str_eq(json_string_value(json_object_get(d, "pool")), "node-b");
        cr_assert_str_eq(json_string_value(json_object_get(d, "request")), "gpus");
    }
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(c, 1), "node")), "node-c");
    cr_assert_str_eq(rf_victims(json_array_get(c, 1), buf, sizeof buf), "ml/node-c-p4 ml/node-c-p5 ml/node-c-p6");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(c, 2), "node")), "node-a");
    /* what the search says fits does fit, decided afresh */
    err e;
    err_clear(&e);
    cr_assert(dra_room_fits_without(x.r, "ml", "big", "node-b", json_object_get(c0, "victims"), &e));
    json_t *one = json_pack("[{s:s, s:s}]", "namespace", "ml", "name", "node-b-p5");
    cr_assert_not(dra_room_fits_without(x.r, "ml", "big", "node-b", one, &e));
    json_decref(one);
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}
