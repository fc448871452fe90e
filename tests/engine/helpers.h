/* helpers.h — the loading the engine tests share, so each test reads as its checks:
 * a world from a testdata/ path or from JSON texts, a fixture case from
 * testdata/<dir>/<name>.json (or inline JSON) run through dra_fixture_run, and the
 * device of one allocation result. Every helper asserts (Criterion) that loading
 * worked; what a test checks is left to the test. Header-only: each test file is
 * its own translation unit of one test binary. */
#ifndef DRALLOC_TESTS_ENGINE_HELPERS_H
#define DRALLOC_TESTS_ENGINE_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"

/* Parses text (which must be valid JSON) and adds the object to w; false with e set
 * when the world rejects it. */
static inline bool th_add_json(dra_world *w, const char *text, err *e) {
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    cr_assert_not_null(o, "bad JSON in test: %s (%s)", text, je.text);
    bool ok = dra_world_add_json(w, o, e);
    json_decref(o);
    return ok;
}

/* A frozen world (API defaults applied) loaded from testdata/<rel>, a file or a
 * directory. */
static inline dra_world *th_world_testdata(const char *rel) {
    dra_world *w = dra_world_new(true);
    char path[1024];
    snprintf(path, sizeof path, "%s/testdata/%s", DRALLOC_SOURCE_DIR, rel);
    err e;
    err_clear(&e);
    cr_assert(dra_world_load_path(w, path, &e), "%s", e.msg);
    dra_world_freeze(w);
    return w;
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
