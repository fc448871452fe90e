/* helpers.h — the loading the engine tests share, so each test reads as its checks:
 * a one-shot world from a testdata/ path or from JSON texts, a fixture case from
 * testdata/<dir>/<name>.json (or inline JSON) run through dra_fixture_run, and the
 * device of one allocation result. Every helper asserts (Criterion) that loading
 * worked; what a test checks is left to the test. Header-only: each test file is
 * its own translation unit of one test binary. */
#ifndef DRALLOC_TESTS_ENGINE_HELPERS_H
#define DRALLOC_TESTS_ENGINE_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/* A one-shot world for a test, as the CLI makes one: a store of its own (API defaults
 * applied, or objects as given), the objects put into it, and the world of the
 * snapshot it last published (th_world). mem is for what a test makes beside the
 * world (claims from templates, a node without a Node object). */
typedef struct th_store {
    dra_store *st;
    dra_snapshot *s;
    arena mem;
} th_store;

static inline th_store *th_new_in(bool apply_defaults, const dra_input *in) {
    th_store *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    dra_features f;
    dra_features_default(&f);
    dra_store_opts o = {.as_given = !apply_defaults, .keep_text = true, .one_shot = true, .input = in};
    t->st = dra_store_new_with(&f, &o);
    arena_init(&t->mem, 4096);
    return t;
}

static inline th_store *th_new(bool apply_defaults) { return th_new_in(apply_defaults, NULL); }

/* Puts obj (an object, an array of them, a List) into the store; false with e set
 * when the store refuses it. */
static inline bool th_add(th_store *t, const json_t *obj, err *e) { return dra_store_apply_json(t->st, obj, e) != 0; }

/* The objects of a file or directory. */
static inline bool th_load(th_store *t, const char *path, err *e) {
    return dra_store_load_paths(t->st, &path, 1, e) != 0;
}

/* Parses text (which must be valid JSON) and puts the object into the store. */
static inline bool th_add_json(th_store *t, const char *text, err *e) {
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    cr_assert_not_null(o, "bad JSON in test: %s (%s)", text, je.text);
    bool ok = th_add(t, o, e);
    json_decref(o);
    return ok;
}

/* The world of the store's current snapshot (an empty one when nothing was put in),
 * held until the next th_world or th_free. */
static inline const dra_world *th_world(th_store *t) {
    err e;
    err_clear(&e);
    dra_snapshot_release(t->s);
    t->s = dra_store_acquire(t->st);
    if (!t->s) {
        cr_assert(dra_store_apply(t->st, NULL, 0, &e), "%s", e.msg);
        t->s = dra_store_acquire(t->st);
    }
    return dra_snapshot_world(t->s);
}

static inline void th_free(th_store *t) {
    if (!t) return;
    arena_free(&t->mem);
    dra_snapshot_release(t->s);
    dra_store_free(t->st);
    free(t);
}

/* A store (API defaults applied) loaded from testdata/<rel>, a file or a directory. */
static inline th_store *th_store_testdata(const char *rel) {
    th_store *t = th_new(true);
    char path[1024];
    snprintf(path, sizeof path, "%s/testdata/%s", DRALLOC_SOURCE_DIR, rel);
    err e;
    err_clear(&e);
    cr_assert(th_load(t, path, &e), "%s", e.msg);
    return t;
}

/* The case file testdata/<dir>/<name>.json, parsed (the caller frees it). */
static inline json_t *th_load_case(const char *dir, const char *name) {
    char file[1024];
    snprintf(file, sizeof file, "%s/testdata/%s/%s.json", DRALLOC_SOURCE_DIR, dir, name);
    json_error_t je;
    json_t *c = json_load_file(file, 0, &je);
    cr_assert_not_null(c, "%s: %s", file, je.text);
    return c;
}

/* dra_fixture_run on a case that must be well-formed. */
static inline json_t *th_run(const json_t *c) {
    err e;
    err_clear(&e);
    json_t *out = dra_fixture_run(c, &e);
    cr_assert_not_null(out, "%s", e.msg);
    return out;
}

/* The device of result i of allocation `claim` in a dra_fixture_run outcome. */
static inline const char *th_device(const json_t *out, size_t claim, size_t i) {
    const json_t *a = json_array_get(json_object_get(out, "allocations"), claim);
    const json_t *r = json_array_get(json_object_get(json_object_get(a, "devices"), "results"), i);
    return json_string_value(json_object_get(r, "device"));
}

#endif
