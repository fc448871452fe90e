/* fuzz_decode_yaml.c — input: YAML text (multi-document) read with dra__yaml_load, the
 * engine's YAML-from-memory reader, then the world path of fuzz_world.c. */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/decode/decode.h"

int fuzz_decode_yaml_one(const uint8_t *data, size_t size) {
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load((const char *)data, size, "fuzz.yaml", &e);
    if (!docs) {
        if (!e.msg[0]) {
            fprintf(stderr, "fuzz_decode_yaml: dra__yaml_load failed without an error message\n");
            abort();
        }
        return 0;
    }
    /* a document that is itself a sequence (JSON-style input) contributes its items,
     * so the JSON seeds reach the decoder through YAML too */
    json_t *flat = json_array();
    for (size_t i = 0; i < json_array_size(docs); i++) {
        json_t *d = json_array_get(docs, i);
        if (json_is_array(d)) json_array_extend(flat, d);
        else json_array_append(flat, d);
    }
    fuzz_world_run(flat);
    json_decref(flat);
    json_decref(docs);
    return 0;
}

FUZZ_ENTRY(fuzz_decode_yaml_one)
