/* json_fast.h — a JSON text's jansson tree, read by simdjson (json_simd.cc; private to
 * engine/: parse_ahead.c, json_parse.c). NULL when the text holds anything whose tree
 * or error json_loadb would give differently (then json_loadb is to read it: its tree
 * or its error); otherwise the tree json_loadb(text, len, JSON_DECODE_ANY) gives. */
#ifndef DRA_ENGINE_JSON_FAST_H
#define DRA_ENGINE_JSON_FAST_H

#include <jansson.h>
#include <stddef.h>

json_t *dra__json_fast_load(const char *text, size_t len);
/* An item of a List (any JSON value): the fast reader's tree, else jansson's
 * (json_loadb with JSON_DECODE_ANY), whose error je gets (json_parse.c). */
json_t *dra__json_load_item(const char *text, size_t len, json_error_t *je);
/* dra_json_parse (snapshot.h) with a List read item by item from list_min bytes on
 * (dra_json_parse: 64 KiB; the tests and fuzz_ingest: any size). */
json_t *dra__json_parse(const char *text, size_t len, size_t flags, json_error_t *je, size_t list_min);

#endif
