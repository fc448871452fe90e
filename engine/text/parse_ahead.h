/* parse_ahead.h — the items of a large JSON document parsed on a second thread, a
 * bounded way ahead of the thread decoding them (private to engine/; path_stream.c).
 * Parsing (jansson) and decoding take about the same time, so with a core free the
 * two overlap; the items still reach the caller one at a time and in order, so what
 * it does with them, and the first error it meets, are as without the thread. */
#ifndef DRA_ENGINE_PARSE_AHEAD_H
#define DRA_ENGINE_PARSE_AHEAD_H

#include "engine/text/item_facts.h"
#include "engine/text/json_items.h"

#include <jansson.h>
#include <stdint.h>

typedef struct dra_parse_ahead dra_parse_ahead;

/* Work the reader hands the parsing thread: when the reader falls behind (a quarter of
 * the items parsed ahead are waiting), the thread also prepares each item it parses —
 * what the reader would do first with it, decoding — so the two threads share the
 * reader's work too. prepare's result travels with the item (NULL: nothing); discard
 * frees one never taken. Both are called on the parsing thread. */
typedef struct dra_item_work {
    void *(*prepare)(void *arg, const json_t *doc, dra_item_facts facts);
    void (*discard)(void *arg, void *prepared);
    void *arg;
} dra_item_work;

/* Starts parsing the items it of text (both must outlive the reader); with threaded
 * false, or when no thread can be started, each item is parsed when asked for. fields:
 * each item's facts include fields_known (dra__item_facts). work: NULL, or as above
 * (it must outlive the reader). */
dra_parse_ahead *dra__parse_ahead_start(const char *text, const dra_json_items *it, bool threaded, bool fields,
                                        const dra_item_work *work);
/* The next item's tree (the caller's), in order; NULL past the last, or at an item
 * that does not parse (*failed set, je its error; nothing is read after it). *facts:
 * its facts when the thread found them, else all zero; *prepared: work's result for
 * it (the caller's), else NULL. */
json_t *dra__parse_ahead_next(dra_parse_ahead *pa, bool *failed, json_error_t *je, dra_item_facts *facts,
                              void **prepared);
/* Stops the thread and frees the trees parsed but not taken. */
void dra__parse_ahead_free(dra_parse_ahead *pa);

#endif
