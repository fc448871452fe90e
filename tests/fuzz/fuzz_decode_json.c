/* fuzz_decode_json.c — input: bytes parsed as JSON (any value), then the world path of
 * fuzz_world.c: decode into a store, its snapshot's world, node view, allocate every pending claim, encode. */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int fuzz_decode_json_one(const uint8_t *data, size_t size) {
    json_error_t je;
    json_t *docs = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
    if (!docs) {
        if (!je.text[0]) abort();
        return 0;
    }
    fuzz_world_run(docs);
    json_decref(docs);
    return 0;
}

FUZZ_ENTRY(fuzz_decode_json_one)
