/* json_items.h — where each item of a large JSON document lies (private to engine/).
 *
 * A cluster file is one JSON List ({"kind": "List", "items": [...]}) or one array of
 * objects. Parsing it whole into a jansson tree costs about fifteen times the file's
 * size in memory and the time to fault those pages in and free them again; the store
 * reads it one item at a time instead (store.c, world.c dra__path_stream). The scan
 * here finds the items' extents by the bytes alone — strings and nesting, no values —
 * and refuses (false) anything it is not sure jansson would read exactly as it reads
 * the whole document, so that the caller parses that document whole, as before: an
 * integer too long for int64 (dra_json_load reads such a file as YAML), nesting near
 * jansson's depth limit, anything but whitespace and single commas between items, or
 * a second "items" member. Syntax inside an item is jansson's to judge, item by item;
 * the envelope (the document without its items) is judged by parsing it with the
 * items array left empty. */
#ifndef DRA_ENGINE_JSON_ITEMS_H
#define DRA_ENGINE_JSON_ITEMS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct dra_json_span {
    size_t off, len;
} dra_json_span;

typedef struct dra_json_items {
    bool top_array;        /* the document is an array; else an object with an "items" array */
    size_t open, close;    /* the items array's '[' and ']' */
    dra_json_span *v;      /* each item's text, in order (xmalloc'd) */
    size_t n, cap;
} dra_json_items;

/* Finds the items of text[0..len); false (nothing to free) when the document is not
 * one the item-by-item reading is sure to read as jansson reads it whole. */
bool dra__json_items_scan(const char *text, size_t len, dra_json_items *out);
/* The document with an empty items array, parsed (NULL: the envelope does not parse;
 * the caller parses the document whole for jansson's message). Not for top_array. */
json_t *dra__json_items_envelope(const char *text, size_t len, const dra_json_items *it);
void dra__json_items_free(dra_json_items *it);

#endif
