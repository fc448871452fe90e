/* fuzz_fixture.c — input: an allocator conformance case as JSON, run end to end by
 * dra_fixture_run (the outcome object is encoded and dropped). */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"

int fuzz_fixture_one(const uint8_t *data, size_t size) {
    json_t *c = json_loadb((const char *)data, size, 0, NULL);
    if (!c) return 0;
    err e;
    err_clear(&e);
    json_t *out = dra_fixture_run(c, &e);
    if (!out) {
        if (!e.msg[0]) {
            fprintf(stderr, "fuzz_fixture: dra_fixture_run failed without an error message\n");
            abort();
        }
    } else {
        char *s = json_dumps(out, JSON_COMPACT);
        free(s);
        json_decref(out);
    }
    json_decref(c);
    return 0;
}

FUZZ_ENTRY(fuzz_fixture_one)
