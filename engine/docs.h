/* docs.h — private to engine/: the documents of a file or a directory of files, as
 * `-f PATH` reads them everywhere (input_files.c, path_stream.c): YAML and JSON files
 * of a directory in name order, the size cap, kubectl's checks on each document. */
#ifndef DRA_ENGINE_DOCS_H
#define DRA_ENGINE_DOCS_H

#include <jansson.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "engine/item_facts.h"
#include "engine/json.h"

/* Calls fn with the documents of a file, or of each YAML or JSON file (.yaml, .yml, .json) of a
 * directory in name order (a JSON value, or a YAML stream as an array); documents that
 * would be skipped are warned about under `in`. */
bool dra__path_docs(const char *path, const dra_input *in, bool (*fn)(void *arg, const char *file, json_t *docs, err *e),
                    void *arg, err *e);
/* Calls fn with path, or with each YAML or JSON file of the directory path in name order. */
bool dra__path_files(const char *path, bool (*fn)(void *arg, const char *file, err *e), void *arg, err *e);
/* The bytes of a file (sb initialised here; freed by the caller when true), refused past
 * DRA_INPUT_MAX_BYTES; whether they are JSON (a '{' or '[' first) rather than YAML. */
bool dra__read_input(const char *path, strbuf *sb, err *e);
bool dra__input_is_json(const strbuf *sb);
/* path_stream.c: the documents of path as dra__path_docs reads them, given to fn one
 * at a time and freed after it: a JSON List's items and a JSON array's elements each
 * parsed on their own (list: the List without its items, NULL for an array's
 * element), else each document of the file (list NULL). The checks dra__path_docs
 * makes are made, and a file's error is the one it would give: jansson's message for
 * the whole file when any of it does not parse, else the first document without
 * apiVersion or kind, else fn's first error (fn is not called after it fails). facts:
 * doc's (item_facts.h) when the parsing thread found them, else all zero. prepared:
 * work's result for doc when the parsing thread did it (parse_ahead.h), else NULL; fn
 * owns it (one not given to fn is discarded). work may be NULL. */
typedef bool (*dra_stream_fn)(void *arg, const char *file, const json_t *list, json_t *doc, dra_item_facts facts,
                              void *prepared, err *e);
typedef struct dra_stream_work {
    void *(*prepare)(void *arg, const char *file, const json_t *doc, dra_item_facts facts);
    void (*discard)(void *arg, void *prepared);
} dra_stream_work;
bool dra__path_stream(const char *path, const dra_input *in, dra_stream_fn fn, const dra_stream_work *work, void *arg,
                      err *e);

#endif
