/* docs.h — private to engine/: the parts of the document reader (json.h dra_docs)
 * the store's loading uses beyond the public face: the files of a path, a file's
 * bytes, and the documents with what the parsing thread found and prepared for each
 * (docs.c, input_files.c). */
#ifndef DRA_ENGINE_DOCS_H
#define DRA_ENGINE_DOCS_H

#include <jansson.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "engine/text/item_facts.h"
#include "engine/json.h"

/* path itself when it is no directory, else its YAML and JSON files (.yaml, .yml,
 * .json; not dotfiles) in name order, as "path/name" (each and the array malloc'd, *n
 * of them); NULL with e set when path is not there or cannot be read. */
char **dra__path_files(const char *path, size_t *n, err *e);
/* The bytes of a file (sb initialised here; freed by the caller when true), refused past
 * DRA_INPUT_MAX_BYTES; whether they are JSON (a '{' or '[' first) rather than YAML. */
bool dra__read_input(const char *path, strbuf *sb, err *e);
bool dra__input_is_json(const strbuf *sb);

/* The step the store's loading has the parsing thread take for each item it parses
 * ahead (parse_ahead.h): prepare's result (NULL: nothing) travels with the item to
 * dra__docs_next_item; discard frees one never given. Both run on the parsing thread;
 * the only callback left in reading a path. */
typedef struct dra_doc_prepare {
    void *(*prepare)(void *arg, const char *file, const json_t *doc, dra_item_facts facts);
    void (*discard)(void *arg, void *prepared);
    void *arg;
} dra_doc_prepare;
/* dra_docs_open with a prepare step (NULL: none; it must outlive the reader). */
dra_docs *dra__docs_open_prepared(const char *path, const dra_input *in, const dra_doc_prepare *prep);
/* dra_docs_next with the document's facts (item_facts.h) when the parsing thread found
 * them (else all zero) and prepare's result for it (the caller's; else NULL). */
bool dra__docs_next_item(dra_docs *d, dra_doc *out, dra_item_facts *facts, void **prepared);

#endif
