/* capacity_test.c — what is allocatable now (engine/pod/allocatable.h), against the
 * hand-worked fixture testdata/capacity/cluster.yaml: a whole GPU and a MIG slice that
 * counters block are not free, a pool a DeviceTaintRule taints is not free, counter sets
 * read as what they can still carve; and the same accounting under plan. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"

#define TD DRALLOC_SOURCE_DIR "/testdata/"

static json_int_t ji(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

static const json_t *row(const json_t *cap, const char *part, const char *key, const char *name) {
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(cap, part), i, r) {
        const char *n = json_string_value(json_object_get(r, key));
        if (n && !strcmp(n, name)) return r;
    }
    cr_assert_fail("no %s %s", part, name);
    return NULL;
}

static json_t *capacity_parts(const char *path, unsigned parts);
static json_t *capacity_of(const char *path) { return capacity_parts(path, DRA_CAPACITY_ALL); }

static json_t *capacity_parts(const char *path, unsigned parts) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    err e;
    err_clear(&e);
    const char *paths[] = {path};
    cr_assert(dra_store_load_paths(st, paths, 1, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(st);
    json_t *cap = dra_capacity_json_parts(s, NULL, parts);
    dra_snapshot_release(s);
    dra_store_free(st);
    return cap;
}

/* devices, allocated, free, blocked counters and taints of a row */
static void want(const json_t *r, json_int_t d, json_int_t a, json_int_t f, json_int_t bc, json_int_t bt) {
    const json_t *b = json_object_get(r, "blocked");
    cr_assert(ji(r, "devices") == d && ji(r, "allocated") == a && ji(r, "free") == f && ji(b, "counters") == bc &&
                  ji(b, "taints") == bt,
              "%s: got %lld/%lld/%lld/%lld/%lld, want %lld/%lld/%lld/%lld/%lld", json_dumps(r, JSON_COMPACT),
              (long long)ji(r, "devices"), (long long)ji(r, "allocated"), (long long)ji(r, "free"),
              (long long)ji(b, "counters"), (long long)ji(b, "taints"), (long long)d, (long long)a, (long long)f,
              (long long)bc, (long long)bt);
}

Test(capacity, counter_blocked_gpu_and_mig_slice_are_not_free) {
    json_t *cap = capacity_of(TD "capacity/cluster.yaml");
    /* 1g.5gb-0 held; the whole GPU and 2g.10gb need memory slice 0: blocked */
    want(row(cap, "nodes", "name", "node-a100"), 5, 1, 2, 2, 0);
    want(row(cap, "pools", "pool", "node-a100"), 5, 1, 2, 2, 0);
    want(row(cap, "classes", "name", "mig.example.com"), 4, 1, 2, 1, 0);
    json_decref(cap);
}

Test(capacity, tainted_pool_is_not_free) {
    json_t *cap = capacity_of(TD "capacity/cluster.yaml");
    want(row(cap, "nodes", "name", "node-h100"), 4, 0, 0, 0, 4);
    /* the A100's whole GPU (counters) and the H100's four (taints) */
    want(row(cap, "classes", "name", "gpu.example.com"), 5, 0, 0, 1, 4);
    json_decref(cap);
}

Test(capacity, counter_sets_read_as_carving) {
    json_t *cap = capacity_of(TD "capacity/cluster.yaml");
    const json_t *set = json_array_get(json_object_get(row(cap, "pools", "pool", "node-a100"), "counterSets"), 0);
    char got[512] = "";
    size_t i, len = 0;
    json_t *c;
    json_array_foreach(json_object_get(set, "carve"), i, c)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%s %lld/%lld", i ? ", " : "",
                                json_string_value(json_object_get(c, "profile")), (long long)ji(c, "fit"),
                                (long long)ji(c, "fitEmpty"));
    /* fewest carvable when empty first, then by name */
    cr_assert_str_eq(got, "gpu 0/1, mig-2g-10gb 0/1, mig-3g-20gb 1/1, mig-1g-5gb 1/2");
    /* shapes group by instance type and inventory */
    const json_t *sh = row(cap, "shapes", "instanceType", "p4d.24xlarge");
    cr_assert_str_eq(json_string_value(json_object_get(sh, "name")), "p4d.24xlarge: 1 gpu.example.com, 4 mig.example.com");
    cr_assert_eq(ji(sh, "nodes"), 1);
    json_decref(cap);
}

/* testdata/capacity/nodes.yaml (worked there): devices of a cordoned, a NotReady and a
 * NoSchedule-tainted node are not allocatable now; a PreferNoSchedule taint and a Node
 * without conditions leave them free; --count-unavailable-nodes counts them all. */
static void want_nodes(const json_t *r, json_int_t f, json_int_t bn, const char *why) {
    const json_t *b = json_object_get(r, "blocked");
    const char *got = json_string_value(json_object_get(r, "unavailable"));
    cr_assert(ji(r, "free") == f && ji(b, "nodes") == bn, "%s: free %lld, blocked nodes %lld; want %lld, %lld",
              json_dumps(r, JSON_COMPACT), (long long)ji(r, "free"), (long long)ji(b, "nodes"), (long long)f,
              (long long)bn);
    if (why) cr_assert(got && !strcmp(got, why), "unavailable '%s', want '%s'", got ? got : "(none)", why);
    else cr_assert(!got, "unavailable '%s', want none", got);
}

Test(capacity, unavailable_nodes_are_not_free) {
    json_t *cap = capacity_of(TD "capacity/nodes.yaml");
    want_nodes(row(cap, "nodes", "name", "gpu-ready"), 2, 0, NULL);
    want_nodes(row(cap, "nodes", "name", "gpu-cordoned"), 0, 2, "cordoned");
    want_nodes(row(cap, "nodes", "name", "gpu-notready"), 0, 2, "NotReady");
    want_nodes(row(cap, "nodes", "name", "gpu-tainted"), 0, 2, "taint example.com/drain=yes:NoSchedule");
    want_nodes(row(cap, "nodes", "name", "gpu-prefer"), 2, 0, NULL);
    want_nodes(row(cap, "classes", "name", "gpu.example.com"), 4, 6, NULL);
    json_decref(cap);
    cap = capacity_parts(TD "capacity/nodes.yaml", DRA_CAPACITY_ALL | DRA_CAPACITY_COUNT_UNAVAILABLE_NODES);
    want_nodes(row(cap, "nodes", "name", "gpu-cordoned"), 2, 0, NULL);
    want_nodes(row(cap, "classes", "name", "gpu.example.com"), 10, 0, NULL);
    json_decref(cap);
}

/* testdata/capacity/a100-carved.yaml (worked there): a node whose A100s are carved
 * to 31 of 32 memory slices reads 96.9 % by capacity though 10 of its 44 partition
 * devices are allocated; the whole GPU and its 7g.40gb partition (equal capacity) are
 * two profiles; per profile, carved together / free alone / when empty. */
static const char *carve_text(const json_t *row, char *got, size_t n) {
    size_t i, len = 0;
    json_t *c;
    got[0] = '\0';
    json_array_foreach(json_object_get(row, "carve"), i, c)
        len += (size_t)snprintf(got + len, n - len, "%s%s %lld/%lld/%lld", i ? ", " : "",
                                json_string_value(json_object_get(c, "profile")), (long long)ji(c, "fit"),
                                (long long)ji(c, "free"), (long long)ji(c, "fitEmpty"));
    return got;
}

Test(capacity, utilisation_by_counters_and_every_profile_named) {
    json_t *cap = capacity_of(TD "capacity/a100-carved.yaml");
    const json_t *n = row(cap, "nodes", "name", "node-a100-carved");
    want(n, 44, 10, 0, 34, 0);
    const json_t *cu = json_object_get(n, "capacityUtil");
    cr_assert(json_real_value(json_object_get(n, "util")) == 96.9 &&
                  json_real_value(json_object_get(cu, "memorySlice")) == 96.9 &&
                  json_real_value(json_object_get(cu, "memory")) == 96.9,
              "carved A100s: %s", json_dumps(n, JSON_COMPACT));
    char got[512];
    cr_assert_str_eq(carve_text(n, got, sizeof got), "gpu 0/0/4, mig-7g-40gb 0/0/4, mig-3g-20gb 0/0/8, mig-1g-5gb 0/0/28");
    n = row(cap, "nodes", "name", "node-a100-half");
    want(n, 11, 1, 4, 6, 0);
    cr_assert(json_real_value(json_object_get(n, "util")) == 50.0, "half A100: %s", json_dumps(n, JSON_COMPACT));
    cr_assert_str_eq(carve_text(n, got, sizeof got), "gpu 0/0/1, mig-7g-40gb 0/0/1, mig-3g-20gb 1/1/2, mig-1g-5gb 3/3/7");
    /* a class over both nodes: its counter sets, 31 + 4 of 40 memory slices */
    const json_t *cl = row(cap, "classes", "name", "mig.nvidia.com");
    cr_assert(json_real_value(json_object_get(cl, "util")) == 87.5, "class: %s", json_dumps(cl, JSON_COMPACT));
    json_decref(cap);
}
