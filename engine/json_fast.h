/* json_fast.h — a JSON text's jansson tree, read by simdjson (json_simd.cc; private to
 * engine/: parse_ahead.c). NULL when the text holds anything whose tree or error
 * json_loadb would give differently (then json_loadb is to read it: its tree or its
 * error); otherwise the tree json_loadb(text, len, JSON_DECODE_ANY) gives. */
#ifndef DRA_ENGINE_JSON_FAST_H
#define DRA_ENGINE_JSON_FAST_H

#include <jansson.h>
#include <stddef.h>

json_t *dra__json_fast_load(const char *text, size_t len);

#endif
