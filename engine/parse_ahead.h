/* parse_ahead.h — the items of a large JSON document parsed on a second thread, a
 * bounded way ahead of the thread decoding them (private to engine/; path_stream.c).
 * Parsing (jansson) and decoding take about the same time, so with a core free the
 * two overlap; the items still reach the caller one at a time and in order, so what
 * it does with them, and the first error it meets, are as without the thread. */
#ifndef DRA_ENGINE_PARSE_AHEAD_H
#define DRA_ENGINE_PARSE_AHEAD_H

#include "engine/item_facts.h"
#include "engine/json_items.h"

#include <jansson.h>
#include <stdint.h>

typedef struct dra_parse_ahead dra_parse_ahead;

/* Starts parsing the items it of text (both must outlive the reader); with threaded
 * false, or when no thread can be started, each item is parsed when asked for. */
dra_parse_ahead *dra__parse_ahead_start(const char *text, const dra_json_items *it, bool threaded);
/* The next item's tree (the caller's), in order; NULL past the last, or at an item
 * that does not parse (*failed set, je its error; nothing is read after it). *facts:
 * its facts when the thread found them, else all zero. */
json_t *dra__parse_ahead_next(dra_parse_ahead *pa, bool *failed, json_error_t *je, dra_item_facts *facts);
/* Stops the thread and frees the trees parsed but not taken. */
void dra__parse_ahead_free(dra_parse_ahead *pa);

#endif
