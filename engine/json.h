/* json.h — text into JSON trees, the one place the engine's readers are declared: the
 * settings a read goes by (dra_input: where warnings go, strictness, the size cap), a
 * file's text as Kubernetes' decoder reads it (dra_json_load; YAML streams,
 * dra_yaml_parse), and JSON texts from outside — the kube-apiserver's answers, request
 * bodies — with simdjson's speed and jansson's trees and error words (dra_json_parse),
 * a LIST page's items one at a time (dra_json_list), and the documents of a file or
 * directory one at a time (dra_docs: what `-f PATH` reads everywhere, the store's
 * dra_store_load_paths included). Public: every layer above the engine may include it. */
#ifndef DRA_ENGINE_JSON_H
#define DRA_ENGINE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* ---- input settings ------------------------------------------------------------- */

typedef void (*dra_warn_fn)(void *ud, const char *msg);
/* How input is read: `warn` (may be NULL: warnings are dropped) receives each input
 * warning as one line of text ("ResourceClaim ns/c: unknown field \"spec.requests\"")
 * with `ud`; strict turns warnings into errors. Settings go with what reads — a store
 * (dra_store_opts), one text (dra_json_load) — never the process: two threads may
 * load with different sinks at once. NULL settings: warnings dropped, not strict. */
typedef struct dra_input {
    dra_warn_fn warn;
    void *ud;
    bool strict;
} dra_input;
/* Inputs larger than this are refused (world files, stdin). */
#define DRA_INPUT_MAX_BYTES ((size_t)256 << 20)
/* JSON text → value, as Kubernetes' decoder reads it: an integer beyond int64
 * (opaque driver parameters may hold one) becomes a number (double) instead of
 * failing the whole file, as encoding/json into interface{} does. */
json_t *dra_json_load(const char *text, size_t len, const char *source, const dra_input *in, err *e);

/* ---- JSON texts from outside (json_parse.c) ------------------------------------- */

/* Read as the store reads a file: simdjson's speed, jansson's tree and error words.
 * dra_json_parse: the tree json_loadb(text, len, flags, je) gives (flags: 0 or
 * JSON_DECODE_ANY), or NULL with je (may be NULL) set as json_loadb sets it. */
json_t *dra_json_parse(const char *text, size_t len, size_t flags, json_error_t *je);
/* A List's items (a LIST page) parsed one at a time, so that a page's trees need not
 * all be held at once (500 MIG-carved slices are ~11 MB of text, ~15 times that as
 * trees). open: NULL when the text is not one to read so — not an object with an
 * "items" array, or anything item-by-item reading might read otherwise than jansson
 * reading it whole (then dra_json_parse it); *envelope: the document with its items
 * array empty (the caller's; text must outlive the list). next: the next item's tree
 * (the caller's) and the length of its text (text_len may be NULL); NULL past the
 * last, or at one that does not parse (*failed; nothing is read after it). */
typedef struct dra_json_list dra_json_list;
dra_json_list *dra_json_list_open(const char *text, size_t len, json_t **envelope);
json_t *dra_json_list_next(dra_json_list *l, size_t *text_len, bool *failed);
void dra_json_list_close(dra_json_list *l);   /* NULL: nothing */

/* ---- the documents of a path (docs.c) ------------------------------------------ */

/* The documents of a file, or of each YAML or JSON file (.yaml, .yml, .json; not
 * dotfiles) of a directory in name order, one at a time, as `-f PATH` reads them
 * wherever a command takes one: a JSON List's items and a JSON array's elements each
 * parsed on their own (a large file's on a second thread, ahead of the caller), any
 * other file read whole (a JSON value, or a YAML stream's documents), each file at
 * most DRA_INPUT_MAX_BYTES, warnings under `in`. The errors are those of reading each
 * file whole: jansson's message for the whole file when any of it does not parse,
 * else the first document without apiVersion or kind (kubectl's check), else the
 * caller's first refusal; after any of them the rest of the file is still read, none
 * of it given, and the read ends with that file.
 *   dra_docs *d = dra_docs_open("cluster/", &in);
 *   for (dra_doc doc; dra_docs_next(d, &doc);)
 *       if (!use(doc.doc, &e)) dra_docs_refuse(d, &e);
 *   if (!dra_docs_close(d, &e)) ...   // the first error */
typedef struct dra_docs dra_docs;
typedef struct dra_doc {
    const char *file;        /* the file it is from */
    const json_t *list;      /* the List it is an item of, without its items; NULL: none */
    json_t *doc;             /* the reader's, valid until the next call */
} dra_doc;
dra_docs *dra_docs_open(const char *path, const dra_input *in);   /* never NULL */
/* The next document; false past the last one or at an error (dra_docs_close says). */
bool dra_docs_next(dra_docs *d, dra_doc *out);
/* The caller's error with the document just given: the file's, unless one of the
 * reader's comes first (above); nothing more of the file is given. */
void dra_docs_refuse(dra_docs *d, const err *why);
/* Frees d (NULL: nothing); false with e (may be NULL) set to the read's error. */
bool dra_docs_close(dra_docs *d, err *e);

/* ---- YAML ---------------------------------------------------------------------- */

/* A YAML stream as sigs.k8s.io/yaml reads it (kubeconfigs, workload files): a JSON
 * array with one element per non-empty document. NULL with e set on a syntax error. */
json_t *dra_yaml_parse(const char *text, size_t len, const char *source, err *e);

#endif
