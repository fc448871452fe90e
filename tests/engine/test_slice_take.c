/* test_slice_take.c — a republished ResourceSlice takes its unchanged devices over from
 * its previous version (engine/decode/decode_take.c) and must decode exactly as a fresh
 * store decodes it: one long-lived store gets a 24-device slice changed one field of
 * one device at a time (an attribute of each kind, a key, a capacity, a counter, a
 * counter set, a name, a quantity written another way, a member added), and after
 * every change each device is compared, value by value, with the same slice decoded
 * by a fresh store on the same catalog. A device wrongly taken over keeps its old
 * value and fails the comparison. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/semver.h"
#include "engine/engine.h"
#include "engine/world/world.h"

enum { TAKE_DEVICES = 24, TAKE_CHANGED = 7 };

/* Device i as its driver publishes it. */
static json_t *take_device(int i) {
    char name[32], uuid[48], cs[16], slice[32];
    snprintf(name, sizeof name, "gpu-%d", i);
    snprintf(uuid, sizeof uuid, "GPU-%08x", (unsigned)i * 2654435761u);
    snprintf(cs, sizeof cs, "gpu-%d", i % 4);
    snprintf(slice, sizeof slice, "memory-slice-%d", i % 8);
    json_t *attrs = json_pack("{s:{s:s}, s:{s:s}, s:{s:i}, s:{s:b}, s:{s:s}, s:{s:s}}", "type", "string", "gpu", "uuid",
                              "string", uuid, "index", "int", i, "healthy", "bool", 1, "driverVersion", "version",
                              "550.54.15", "example.com/rack", "string", "r1");
    json_t *counters = json_pack("{s:{s:s}, s:{s:s}}", "memory", "value", "5Gi", slice, "value", "1");
    return json_pack("{s:s, s:o, s:{s:{s:s}, s:{s:I}}, s:[{s:s, s:o}]}", "name", name, "attributes", attrs, "capacity",
                     "memory", "value", "40Gi", "multiprocessors", "value", (json_int_t)98, "consumesCounters",
                     "counterSet", cs, "counters", counters);
}

static json_t *take_slice(json_t *devices) {
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion", "resource.k8s.io/v1",
                     "kind", "ResourceSlice", "metadata", "name", "node-1-gpus", "spec", "driver", "gpu.example.com",
                     "nodeName", "node-1", "pool", "name", "node-1", "generation", 1, "resourceSliceCount", 1, "devices",
                     devices);
}

static json_t *take_devices(void) {
    json_t *d = json_array();
    for (int i = 0; i < TAKE_DEVICES; i++) json_array_append_new(d, take_device(i));
    return d;
}

static void take_apply(dra_store *st, json_t *obj) {
    err e;
    err_clear(&e);
    char buf[2048];
    cr_assert_neq(dra_store_apply_json(st, obj, &e), 0, "%s", err_format(&e, buf, sizeof buf));
}

static const dra_slice *take_find(const dra_snapshot *s) {
    size_t n;
    const dra_slice *const *v = dra__world_all_slices(dra_snapshot_world(s), &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i]->name, "node-1-gpus")) return v[i];
    cr_assert_fail("no slice node-1-gpus");
    return NULL;
}

static bool same_s(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static bool same_q(const quantity *a, const quantity *b) {
    return a->mant == b->mant && a->exp == b->exp && a->format == b->format && a->big == b->big;
}

/* Device a (long-lived store) against b (fresh), every value the decoder sets. */
static void take_compare(const dra_device *a, const dra_device *b, const char *step) {
    const char *n = b->name;
    cr_assert(same_s(a->name, b->name) && a->name_id == b->name_id, "%s: %s: name %s", step, n, a->name);
    cr_assert(a->cel.driver.len == b->cel.driver.len && !memcmp(a->cel.driver.s, b->cel.driver.s, b->cel.driver.len) &&
                  a->cel.driver_id == b->cel.driver_id,
              "%s: %s: driver", step, n);
    cr_assert(same_s(a->cel.conv_error, b->cel.conv_error), "%s: %s: conversion error %s / %s", step, n,
              a->cel.conv_error ? a->cel.conv_error : "none", b->cel.conv_error ? b->cel.conv_error : "none");
    cr_assert_eq(a->cel.nattrs, b->cel.nattrs, "%s: %s: attributes", step, n);
    for (uint32_t i = 0; i < b->cel.nattrs; i++) {
        const cel_attr *x = &a->cel.attrs[i], *y = &b->cel.attrs[i];
        const dra_attr_text *tx = &a->attr_text[i], *ty = &b->attr_text[i];
        cr_assert(x->domain == y->domain && x->name == y->name && x->kind == y->kind && same_s(tx->key, ty->key),
                  "%s: %s: attribute %s", step, n, ty->key);
        switch (y->kind) {
        case CEL_ATTR_INT: cr_assert_eq(x->u.i, y->u.i, "%s: %s: %s", step, n, ty->key); break;
        case CEL_ATTR_BOOL: cr_assert_eq(x->u.b, y->u.b, "%s: %s: %s", step, n, ty->key); break;
        case CEL_ATTR_STRING:
            cr_assert(x->u.s->len == y->u.s->len && !memcmp(x->u.s->s, y->u.s->s, y->u.s->len), "%s: %s: %s", step, n,
                      ty->key);
            break;
        case CEL_ATTR_VERSION:
            cr_assert(same_s(tx->ver, ty->ver), "%s: %s: %s", step, n, ty->key);
            if (!b->cel.conv_error) cr_assert_eq(semver_cmp(x->u.v, y->u.v), 0, "%s: %s: %s", step, n, ty->key);
            break;
        case CEL_ATTR_INTS:
            cr_assert(x->u.list->count == y->u.list->count &&
                          !memcmp(x->u.list->ints, y->u.list->ints, sizeof(int64_t) * y->u.list->count),
                      "%s: %s: %s", step, n, ty->key);
            break;
        default: break;
        }
    }
    cr_assert_eq(a->cel.ncaps, b->cel.ncaps, "%s: %s: capacity", step, n);
    for (uint32_t i = 0; i < b->cel.ncaps; i++) {
        const dra_capacity *x = &a->caps[i], *y = &b->caps[i];
        cr_assert(same_s(x->key, y->key) && x->key_id == y->key_id && same_q(&x->value, &y->value) &&
                      !x->policy == !y->policy,
                  "%s: %s: capacity %s", step, n, y->key);
        const cel_capacity *cx = &a->cel.caps[i], *cy = &b->cel.caps[i];
        cr_assert(cx->domain == cy->domain && cx->name == cy->name && same_q(cx->value, cy->value),
                  "%s: %s: capacity %s as CEL sees it", step, n, y->key);
    }
    cr_assert_eq(a->nconsumes, b->nconsumes, "%s: %s: counter sets", step, n);
    for (uint32_t j = 0; j < b->nconsumes; j++) {
        const dra_counter_set *x = &a->consumes[j], *y = &b->consumes[j];
        cr_assert(same_s(x->name, y->name) && x->name_id == y->name_id && x->ncounters == y->ncounters,
                  "%s: %s: counter set %s", step, n, y->name);
        for (uint32_t k = 0; k < y->ncounters; k++)
            cr_assert(same_s(x->counters[k].name, y->counters[k].name) && x->counters[k].name_id == y->counters[k].name_id &&
                          same_q(&x->counters[k].value, &y->counters[k].value),
                      "%s: %s: counter %s", step, n, y->counters[k].name);
    }
    cr_assert(same_s(a->node_name, b->node_name) && a->all_nodes == b->all_nodes && !a->node_selector == !b->node_selector &&
                  a->ntaints == b->ntaints && a->allow_multi == b->allow_multi && a->binds_to_node == b->binds_to_node &&
                  a->binding_conditions.n == b->binding_conditions.n &&
                  a->binding_failure_conditions.n == b->binding_failure_conditions.n,
              "%s: %s: node access, taints or binding", step, n);
    for (uint32_t t = 0; t < b->ntaints; t++)
        cr_assert(same_s(a->taints[t].key, b->taints[t].key) && same_s(a->taints[t].effect, b->taints[t].effect),
                  "%s: %s: taint", step, n);
}

/* The slice with device TAKE_CHANGED changed by `change` (NULL: as published). */
typedef void (*take_change)(json_t *dev);
static json_t *attr_of(json_t *dev, const char *k) { return json_object_get(json_object_get(dev, "attributes"), k); }
static json_t *counters_of(json_t *dev) {
    return json_object_get(json_array_get(json_object_get(dev, "consumesCounters"), 0), "counters");
}
static void ch_string(json_t *d) { json_object_set_new(attr_of(d, "uuid"), "string", json_string("GPU-changed")); }
static void ch_int(json_t *d) { json_object_set_new(attr_of(d, "index"), "int", json_integer(99)); }
static void ch_bool(json_t *d) { json_object_set_new(attr_of(d, "healthy"), "bool", json_false()); }
static void ch_version(json_t *d) { json_object_set_new(attr_of(d, "driverVersion"), "version", json_string("550.54.16")); }
static void ch_bad_version(json_t *d) { json_object_set_new(attr_of(d, "driverVersion"), "version", json_string("v550")); }
static void ch_qualified(json_t *d) { json_object_set_new(attr_of(d, "example.com/rack"), "string", json_string("r2")); }
static void ch_kind(json_t *d) {   /* the same text as a version instead of a string */
    json_object_set_new(json_object_get(d, "attributes"), "type", json_pack("{s:s}", "version", "1.0.0"));
}
static void ch_key(json_t *d) {   /* "healthy" renamed, same value, same place (the last one) */
    json_t *a = json_object_get(d, "attributes");
    json_t *v = json_incref(json_object_get(a, "example.com/rack"));
    json_object_del(a, "example.com/rack");
    json_object_set_new(a, "example.com/row", v);
}
static void ch_list(json_t *d) {
    json_object_del(attr_of(d, "index"), "int");
    json_object_set_new(attr_of(d, "index"), "ints", json_pack("[i, i]", 1, 2));
}
static void ch_capacity(json_t *d) {
    json_object_set_new(json_object_get(json_object_get(d, "capacity"), "memory"), "value", json_string("80Gi"));
}
static void ch_capacity_form(json_t *d) {   /* the same value written another way: another representation */
    json_object_set_new(json_object_get(json_object_get(d, "capacity"), "memory"), "value", json_string("40960Mi"));
}
static void ch_capacity_number(json_t *d) {   /* 98 as a string: read the same way */
    json_object_set_new(json_object_get(json_object_get(d, "capacity"), "multiprocessors"), "value", json_string("98"));
}
static void ch_policy(json_t *d) {
    json_object_set_new(json_object_get(json_object_get(d, "capacity"), "memory"), "requestPolicy",
                        json_pack("{s:s}", "default", "1Gi"));
}
static void ch_counter(json_t *d) {
    json_object_set_new(json_object_get(counters_of(d), "memory"), "value", json_string("6Gi"));
}
static void ch_counter_form(json_t *d) {
    json_object_set_new(json_object_get(counters_of(d), "memory"), "value", json_string("5120Mi"));
}
static void ch_counter_set(json_t *d) {
    json_object_set_new(json_array_get(json_object_get(d, "consumesCounters"), 0), "counterSet", json_string("gpu-0"));
}
static void ch_name(json_t *d) { json_object_set_new(d, "name", json_string("gpu-renamed")); }
static void ch_taint(json_t *d) {
    json_object_set_new(d, "taints", json_pack("[{s:s, s:s}]", "key", "example.com/unhealthy", "effect", "NoSchedule"));
}
static void ch_no_counters(json_t *d) { json_object_del(d, "consumesCounters"); }
static void ch_no_attrs(json_t *d) { json_object_del(d, "attributes"); }

Test(slice_take, changed_device_decoded_anew) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *nodes = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", "node-1");
    take_apply(st, nodes);
    static const struct {
        const char *name;
        take_change change;
    } steps[] = {{"published", NULL},       {"string", ch_string},
                 {"published", NULL},       {"int", ch_int},
                 {"bool", ch_bool},         {"version", ch_version},
                 {"bad version", ch_bad_version}, {"published", NULL},
                 {"qualified", ch_qualified}, {"kind", ch_kind},
                 {"key", ch_key},           {"list", ch_list},
                 {"capacity", ch_capacity}, {"capacity form", ch_capacity_form},
                 {"capacity number", ch_capacity_number}, {"policy", ch_policy},
                 {"counter", ch_counter},   {"counter form", ch_counter_form},
                 {"counter set", ch_counter_set}, {"name", ch_name},
                 {"taint", ch_taint},       {"no counters", ch_no_counters},
                 {"no attributes", ch_no_attrs}, {"published", NULL},
                 {"string", ch_string},     {"string", ch_string},
                 {"published", NULL},       {"published", NULL}};
    dra_snapshot *last = NULL;   /* the long-lived store's previous snapshot */
    int taken = 0;
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        json_t *devs = take_devices();
        if (steps[k].change) steps[k].change(json_array_get(devs, TAKE_CHANGED));
        json_t *slice = take_slice(devs);
        take_apply(st, slice);
        dra_store *fresh = dra_store_new_sharing(&f, st);   /* the same catalog: the same ids */
        take_apply(fresh, slice);
        dra_snapshot *a = dra_store_acquire(st), *b = dra_store_acquire(fresh);
        const dra_slice *sa = take_find(a), *sb = take_find(b);
        cr_assert_eq(sa->ndevices, sb->ndevices);
        char step[64];
        snprintf(step, sizeof step, "step %zu (%s)", k, steps[k].name);
        for (uint32_t i = 0; i < sb->ndevices; i++) take_compare(&sa->devices[i], &sb->devices[i], step);
        /* 98 written as "98" decodes as before: it may be taken over; the same change
         * twice is the same object again, kept */
        if (last && steps[k].change && steps[k].change != ch_capacity_number && steps[k].change != steps[k - 1].change) {
            /* the changed device decoded (its arrays its own), the others taken over
             * (shared) unless the chain of versions was at its bound */
            const dra_slice *sl = take_find(last);
            cr_assert_neq(sa->devices[TAKE_CHANGED].cel.attrs, sl->devices[TAKE_CHANGED].cel.attrs,
                          "%s: the changed device taken over", step);
            taken += sa->devices[0].cel.attrs == sl->devices[0].cel.attrs;
        }
        dra_snapshot_release(last);
        last = a;
        dra_snapshot_release(b);
        dra_store_free(fresh);
        json_decref(slice);
    }
    dra_snapshot_release(last);
    cr_assert_gt(taken, 10, "devices taken over after %d changes only", taken);
    json_decref(nodes);
    dra_store_free(st);
}

/* Most of the slice changed (10 of 24 devices, as a driver upgrade changes them): the
 * unchanged ones are decoded too — one device taken over keeps the whole previous
 * version in memory — and the slice still decodes as a fresh store decodes it. */
Test(slice_take, mostly_changed_decoded_whole) {
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *v1 = take_slice(take_devices()), *devs = take_devices();
    for (int i = 0; i < 10; i++) ch_string(json_array_get(devs, (size_t)i));
    json_t *v2 = take_slice(devs);
    take_apply(st, v1);
    dra_snapshot *a1 = dra_store_acquire(st);
    take_apply(st, v2);
    dra_store *fresh = dra_store_new_sharing(&f, st);
    take_apply(fresh, v2);
    dra_snapshot *a2 = dra_store_acquire(st), *b = dra_store_acquire(fresh);
    const dra_slice *s1 = take_find(a1), *s2 = take_find(a2), *sb = take_find(b);
    cr_assert_eq(s2->ndevices, sb->ndevices);
    for (uint32_t i = 0; i < sb->ndevices; i++) {
        take_compare(&s2->devices[i], &sb->devices[i], "10 of 24 changed");
        cr_assert_neq(s2->devices[i].cel.attrs, s1->devices[i].cel.attrs, "gpu-%u taken over", i);
    }
    dra_snapshot_release(a1);
    dra_snapshot_release(a2);
    dra_snapshot_release(b);
    dra_store_free(fresh);
    json_decref(v1);
    json_decref(v2);
    dra_store_free(st);
}
