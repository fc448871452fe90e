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

/* kube-scheduler's greedy reprieve keeps the most important pod first: here the 2-GPU
 * pod (started first) is reprieved, and the two 1-GPU pods go — 2 victims. Evicting
 * the 2-GPU pod alone frees as much: 1 victim, smaller sum and count at the same
 * highest priority, so it is the cheaper set. */
Test(preempt, one_larger_victim_beats_the_greedy_two) {
    json_t *items = json_array();
    rf_classes(items);
    rf_node(items, "n", 4);
    rf_bound(items, "ml", "wide", "n", 0, NULL, 0, "gpu", (const char *[]){"gpu-0", "gpu-1"}, 2);
    rf_bound(items, "ml", "small-a", "n", 0, NULL, 1, "gpu", (const char *[]){"gpu-2"}, 1);
    rf_bound(items, "ml", "small-b", "n", 0, NULL, 2, "gpu", (const char *[]){"gpu-3"}, 1);
    rf_pending(items, "ml", "want2", 10, "gpu", 2);
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "want2", false, &st);
    char buf[256];
    cr_assert_eq(st, DRA_ROOM_FOUND);
    cr_assert_str_eq(rf_victims(json_array_get(json_object_get(out, "candidates"), 0), buf, sizeof buf), "ml/wide");
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

/* One node, two MIG-like GPUs of 7 slices: 1g pods on gpu-0 (three) and gpu-1 (two).
 * A 7g pod needs a whole GPU: evicting gpu-1's two frees it (gpu-0's three would too,
 * at a higher count), and the pod gets gpu-1-7g. */
Test(preempt, mig_1g_pods_evicted_to_free_a_7g) {
    json_t *items = json_array();
    rf_classes(items);
    rf_node_mig(items, "m", 2);
    const char *slices[] = {"gpu-0-1g-0", "gpu-0-1g-1", "gpu-0-1g-2", "gpu-1-1g-0", "gpu-1-1g-1"};
    for (int i = 0; i < 5; i++) {
        char pod[32];
        snprintf(pod, sizeof pod, "slice-%d", i);
        rf_bound(items, "ml", pod, "m", 0, NULL, i, "mig-1g", &slices[i], 1);
    }
    rf_pending(items, "ml", "whole", 100, "mig-7g", 1);
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "whole", false, &st);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    const json_t *c0 = json_array_get(json_object_get(out, "candidates"), 0);
    char buf[256];
    cr_assert_str_eq(rf_victims(c0, buf, sizeof buf), "ml/slice-3 ml/slice-4");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(c0, "devices"), 0), "device")),
                     "gpu-1-7g");
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

/* A claim on gpu-0 reserved by s1 and s2, gpu-1 held by `keep` of priority 500 (above
 * the preemptor's 100: not a victim). Evicting s1 alone frees nothing; both must go.
 * With s2 at priority 500 too, the claim is held by a pod that stays: no room. */
static json_t *shared_fleet(int s2_priority) {
    json_t *items = json_array();
    rf_classes(items);
    rf_node(items, "n", 2);
    const char *both[] = {"s1", "s2"};
    rf_add(items, rf_pod("ml", "s1", "n", 0, NULL, 0, "shared"));
    rf_add(items, rf_pod("ml", "s2", "n", s2_priority, NULL, 1, "shared"));
    rf_add(items, rf_claim("ml", "shared", "gpu", 1, "n", (const char *[]){"gpu-0"}, 1, both, 2));
    rf_bound(items, "ml", "keep", "n", 500, NULL, 2, "gpu", (const char *[]){"gpu-1"}, 1);
    rf_pending(items, "ml", "p", 100, "gpu", 1);
    return items;
}

Test(preempt, shared_claim_freed_only_with_all_its_pods) {
    json_t *items = shared_fleet(0);
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "p", false, &st);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    char buf[256];
    cr_assert_str_eq(rf_victims(json_array_get(json_object_get(out, "candidates"), 0), buf, sizeof buf), "ml/s1 ml/s2");
    err e;
    err_clear(&e);
    json_t *one = json_pack("[{s:s, s:s}]", "namespace", "ml", "name", "s1");
    cr_assert_not(dra_room_fits_without(x.r, "ml", "p", "n", one, &e), "s2 still holds the claim");
    json_decref(one);
    json_decref(out);
    rf_close(&x);
    json_decref(items);

    items = shared_fleet(500);
    x = rf_open(items);
    out = rf_make(&x, "ml", "p", false, &st);
    cr_assert_eq(st, DRA_ROOM_NONE);
    cr_assert_eq(json_array_size(json_object_get(out, "candidates")), 0);
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

/* The three nodes again, node-b's pods under a PDB that allows no disruption. Without
 * --allow-pdb-violations no node-b pod may go, and 2 free GPUs are not 4: the best is
 * node-c's 3 victims. With it, node-b's 2 victims violate the PDB twice and the order
 * puts fewest violations first: node-c, node-a, then node-b with 2 violations. */
Test(preempt, pdb_forbids_the_cheapest_set) {
    json_t *items = json_array();
    rf_classes(items);
    used_node(items, "node-a", 7, 0);
    rf_node(items, "node-b", 8);
    for (int i = 0; i < 6; i++) {
        char pod[64];
        snprintf(pod, sizeof pod, "node-b-p%d", i);
        rf_bound(items, "ml", pod, "node-b", 0, "guarded", i, "gpu", (const char *[]){gpu(i)}, 1);
    }
    used_node(items, "node-c", 7, 100);
    rf_pdb(items, "ml", "guard", "guarded", 0);
    rf_pending(items, "ml", "big", 1000, "gpu", 4);
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "big", false, &st);
    const json_t *c = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(c), 2);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(c, 0), "node")), "node-c");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(c, 1), "node")), "node-a");
    json_decref(out);
    out = rf_make(&x, "ml", "big", true, &st);
    c = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(c), 3);
    const json_t *last = json_array_get(c, 2);
    cr_assert_str_eq(json_string_value(json_object_get(last, "node")), "node-b");
    cr_assert_eq(json_integer_value(json_object_get(last, "pdbViolations")), 2);
    char buf[256];
    cr_assert_str_eq(rf_victims(last, buf, sizeof buf), "ml/node-b-p4 ml/node-b-p5");
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

/* A gang of 4 one-GPU pods (PodGroup train, priority 1000) and 4 nodes of 2 GPUs,
 * each held by a pod of priority 0 and one of 2000 (not a victim): every member needs
 * a victim, and each node has one to give, so the four land on four nodes. */
Test(preempt, gang_of_four_needs_victims_on_four_nodes) {
    json_t *items = json_array();
    rf_classes(items);
    for (int n = 0; n < 4; n++) {
        char node[16];
        snprintf(node, sizeof node, "n%d", n);
        rf_node(items, node, 2);
        for (int i = 0; i < 2; i++) {
            char pod[32];
            snprintf(pod, sizeof pod, "n%d-p%d", n, i);
            rf_bound(items, "ml", pod, node, i ? 2000 : 0, NULL, 10 * n + i, "gpu", (const char *[]){gpu(i)}, 1);
        }
    }
    for (int g = 0; g < 4; g++) {
        char pod[32];
        snprintf(pod, sizeof pod, "train-%d", g);
        rf_pending(items, "ml", pod, 1000, "gpu", 1);
        json_t *p = json_array_get(items, json_array_size(items) - 2);
        json_object_set_new(json_object_get(p, "spec"), "schedulingGroup", json_pack("{s:s}", "podGroupName", "train"));
    }
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "train-2", false, &st);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    cr_assert_str_eq(json_string_value(json_object_get(out, "podGroup")), "train");
    const json_t *c = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(c), 4);
    /* train-2 first (the one asked about), then the others in input order; the nodes'
     * pods started later node by node, so the latest-start rule takes n3 first */
    const char *pods[] = {"ml/train-2", "ml/train-0", "ml/train-1", "ml/train-3"};
    const char *nodes[] = {"n3", "n2", "n1", "n0"};
    for (int i = 0; i < 4; i++) {
        const json_t *ci = json_array_get(c, i);
        cr_assert_str_eq(json_string_value(json_object_get(ci, "pod")), pods[i]);
        cr_assert_str_eq(json_string_value(json_object_get(ci, "node")), nodes[i]);
        cr_assert_eq(json_array_size(json_object_get(ci, "victims")), 1);
    }
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

static json_t *pclass(const char *name, int value, bool global, const char *policy) {
    json_t *c = json_pack("{s:s, s:s, s:{s:s}, s:i, s:b}", "apiVersion", "scheduling.k8s.io/v1", "kind", "PriorityClass",
                          "metadata", "name", name, "value", value, "globalDefault", global);
    if (policy) json_object_set_new(c, "preemptionPolicy", json_string(policy));
    return c;
}

/* One full GPU node held by a pod of priority 0, and pending pods whose priority comes
 * from their PriorityClass (the Priority admission plugin's establishPriority). */
static json_t *class_fleet(void) {
    json_t *items = json_array();
    rf_classes(items);
    rf_node(items, "n", 1);
    rf_bound(items, "ml", "low", "n", 0, NULL, 0, "gpu", (const char *[]){"gpu-0"}, 1);
    rf_add(items, pclass("high", 1000, false, NULL));
    rf_add(items, pclass("high-never", 1000, false, "Never"));
    rf_add(items, pclass("floor", -5, true, NULL));
    const char *pods[][2] = {{"by-class", "high"}, {"never", "high-never"}, {"default", NULL}};
    for (int i = 0; i < 3; i++) {
        rf_pending(items, "ml", pods[i][0], 0, "gpu", 1);
        json_t *spec = json_object_get(json_array_get(items, json_array_size(items) - 2), "spec");
        json_object_del(spec, "priority");
        if (pods[i][1]) json_object_set_new(spec, "priorityClassName", json_string(pods[i][1]));
    }
    return items;
}

Test(preempt, priority_from_the_priority_class) {
    json_t *items = class_fleet();
    rf_room x = rf_open(items);
    dra_room_status st;
    json_t *out = rf_make(&x, "ml", "by-class", false, &st);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    cr_assert_eq(json_integer_value(json_object_get(out, "priority")), 1000);
    char buf[64];
    cr_assert_str_eq(rf_victims(json_array_get(json_object_get(out, "candidates"), 0), buf, sizeof buf), "ml/low");
    json_decref(out);
    /* the class's preemptionPolicy Never: not eligible to preempt (PodEligibleToPreemptOthers) */
    out = rf_make(&x, "ml", "never", false, &st);
    cr_assert_eq(st, DRA_ROOM_NONE);
    cr_assert(strstr(json_string_value(json_object_get(out, "reason")), "preemptionPolicy=Never"));
    json_decref(out);
    /* no class named: the globalDefault one, -5, is below the holder's 0 */
    out = rf_make(&x, "ml", "default", false, &st);
    cr_assert_eq(json_integer_value(json_object_get(out, "priority")), -5);
    cr_assert_eq(st, DRA_ROOM_NONE);
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

Test(preempt, errors_say_what_is_wrong) {
    json_t *items = class_fleet();
    rf_room x = rf_open(items);
    dra_room_status st;
    err e;
    err_clear(&e);
    cr_assert_null(dra_room_make(x.r, "ml", "nobody", NULL, &st, &e));
    cr_assert_eq(st, DRA_ROOM_ERROR);
    cr_assert_str_eq(e.msg, "pod ml/nobody not found");
    err_clear(&e);
    cr_assert_null(dra_room_make(x.r, "ml", "low", NULL, &st, &e));
    cr_assert_str_eq(e.msg, "pod ml/low is not pending: it is bound to node n (spec.nodeName)");
    rf_close(&x);
    /* a class that does not exist: the admission plugin's text, naming the pod */
    json_t *spec = json_object_get(json_array_get(items, json_array_size(items) - 2), "spec");
    json_object_set_new(spec, "priorityClassName", json_string("missing"));
    dra_features f;
    dra_features_default(&f);
    dra_store *store = dra_store_new(&f);
    json_t *dra = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(items, i, o) if (!dra_room_reads_only(json_string_value(json_object_get(o, "kind"))))
        json_array_append(dra, o);
    cr_assert(dra_store_apply_json(store, dra, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(store);
    err_clear(&e);
    cr_assert_null(dra_room_new(s, items, &e));
    cr_assert_str_eq(e.msg, "pod ml/default: no PriorityClass with name missing was found");
    dra_snapshot_release(s);
    dra_store_free(store);
    json_decref(dra);
    json_decref(items);
}

/* --defrag on the three nodes: the 4-GPU pod goes to node-b once its two latest pods
 * move to node-a's and node-c's free GPU (one each); 4 free devices stranded before
 * (no pending pod fits anywhere), none after. With node-a and node-c full, node-b's
 * pods have nowhere to go: nothing is evicted and the pod stays unplaced. */
static json_t *defrag_fleet(int a_used, int c_used) {
    json_t *items = json_array();
    rf_classes(items);
    used_node(items, "node-a", a_used, 0);
    used_node(items, "node-b", 6, 0);
    used_node(items, "node-c", c_used, 100);
    rf_pending(items, "ml", "big", 1000, "gpu", 4);
    return items;
}

Test(preempt, defrag_moves_two_pods_to_the_free_gpus) {
    json_t *items = defrag_fleet(7, 7);
    rf_room x = rf_open(items);
    dra_room_status st;
    err e;
    err_clear(&e);
    json_t *out = dra_room_defrag(x.r, -1, &st, &e);
    cr_assert_not_null(out, "%s", e.msg);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    const json_t *m = json_object_get(out, "moves");
    cr_assert_eq(json_array_size(m), 2);
    const char *want[][3] = {{"ml/node-b-p4", "node-b", "node-a"}, {"ml/node-b-p5", "node-b", "node-c"}};
    for (size_t i = 0; i < 2; i++) {
        const json_t *mv = json_array_get(m, i);
        cr_assert_str_eq(json_string_value(json_object_get(mv, "pod")), want[i][0]);
        cr_assert_str_eq(json_string_value(json_object_get(mv, "from")), want[i][1]);
        cr_assert_str_eq(json_string_value(json_object_get(mv, "to")), want[i][2]);
    }
    const json_t *p0 = json_array_get(json_object_get(out, "pods"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(p0, "node")), "node-b");
    cr_assert_eq(json_integer_value(json_object_get(out, "strandedBefore")), 4);
    cr_assert_eq(json_integer_value(json_object_get(out, "strandedAfter")), 0);
    json_decref(out);
    /* one move allowed: not enough, and nothing moves */
    out = dra_room_defrag(x.r, 1, &st, &e);
    cr_assert_eq(st, DRA_ROOM_NONE);
    cr_assert_eq(json_array_size(json_object_get(out, "moves")), 0);
    json_decref(out);
    rf_close(&x);
    json_decref(items);

    items = defrag_fleet(8, 8);
    x = rf_open(items);
    out = dra_room_defrag(x.r, -1, &st, &e);
    cr_assert_eq(st, DRA_ROOM_NONE);
    cr_assert_eq(json_array_size(json_object_get(out, "moves")), 0, "no eviction without a new place");
    cr_assert(json_object_get(json_array_get(json_object_get(out, "pods"), 0), "unplaced"));
    cr_assert_eq(json_integer_value(json_object_get(out, "strandedBefore")), 2);
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}

/* --preempt places the pending pods by priority and evicts as make-room decides. */
Test(preempt, plan_preempt_lists_every_eviction) {
    json_t *items = defrag_fleet(7, 7);
    rf_room x = rf_open(items);
    dra_room_status st;
    err e;
    err_clear(&e);
    json_t *out = dra_room_preempt_all(x.r, false, &st, &e);
    cr_assert_not_null(out, "%s", e.msg);
    cr_assert_eq(st, DRA_ROOM_FOUND);
    const json_t *ev = json_object_get(out, "evictions");
    cr_assert_eq(json_array_size(ev), 2);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ev, 0), "pod")), "ml/node-b-p4");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ev, 1), "by")), "ml/big");
    cr_assert_eq(json_integer_value(json_object_get(out, "strandedAfter")), 2);
    json_decref(out);
    rf_close(&x);
    json_decref(items);
}
