/* validate.h — what the API server does to an object before the allocator sees it,
 * for the decoders (private to engine/, except the input settings cmd/ chooses):
 *
 *   1. apiVersion: the group/versions Kubernetes 1.37 serves for the kind
 *      (resource.k8s.io v1, v1beta1, v1beta2; DeviceTaintRule v1alpha3, v1beta2, v1;
 *      Pod and Node v1). Absent is taken as the current version (conformance cases
 *      and hand-made test objects carry none); anything else is an error naming the
 *      object, as kubectl's "no matches for kind ... in version ...".
 *   2. conversion of the older versions to v1 (engine/decode/convert.c), as the API server
 *      stores every version as the same internal object.
 *   3. unknown fields: kubectl's 'unknown field "spec.requests"' warning, an error in
 *      strict mode (dralloc allocate --strict).
 *   4. validation (pkg/apis/resource/validation/validation.go): the rules whose
 *      violation would change what the allocator is asked, with the API server's
 *      field paths and messages. Only for objects given as files (decoders with
 *      apply_defaults): conformance cases feed the Go allocator's test objects as
 *      they are, unvalidated, as the Go test table does.
 *
 * Warnings go to the sink of the input settings the reader carries (json.h
 * dra_input: a world's, the decoder's); without one they are dropped. */
#ifndef DRA_ENGINE_VALIDATE_H
#define DRA_ENGINE_VALIDATE_H

#include <jansson.h>

#include "base/error.h"

/* The settings cmd/ chooses (dra_input, DRA_INPUT_MAX_BYTES, dra_json_load) are
 * declared in engine/json.h. */
#include "engine/engine.h"
#include "engine/json.h"

/* A warning about a whole input (source: a file name) under settings `in` (NULL:
 * dropped; strict: an error, false). */
bool dra__input_warn_source(const dra_input *in, err *e, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Warns about a top-level document (number n, from 1, at line, 0 when unknown) that
 * dralloc would skip: a scalar or a list. */
bool dra__input_check_document(const dra_input *in, err *e, const char *source, size_t n, size_t line, const json_t *doc);
/* kubectl's client-side validation of an object it is given: apiVersion and kind are
 * set, else `error validating "FILE": error validating data: apiVersion not set` (an
 * error whatever the strictness: kubectl validates by default). Items of a typed list
 * get both from the list before they are checked. */
bool dra__input_check_type(const json_t *obj, const char *source, err *e);
/* The same for every object of a file's documents (arrays and List items included). */
bool dra__input_check_types(const json_t *docs, const char *source, err *e);

/* Whether every field of obj is one its kind has (step 3 would warn of nothing), for
 * an object of a kind the decoders read, as resource.k8s.io/v1 (core v1 for Pods and
 * Nodes); false for anything else. A pure function of the value, so the thread that
 * parses or hashes items ahead of the decoder computes it (item_facts.h), and the
 * decoder skips its own walk (dra_decoder.fields_known). */
bool dra__input_fields_known(const json_t *obj);
/* Whether anything hears of an unknown field under in: a warning sink, or strict
 * (an error). Where nothing does, the walk is skipped but for claims and templates,
 * whose unknown fields also tell a request written in the wrong place (validate.c). */
static inline bool dra__input_heard(const dra_input *in) { return in && (in->warn || in->strict); }

/* YAML streams: dra__yaml_load and dra__yaml_load_in (engine/text/yaml.c), in decode.h. */

#ifdef DRA_ENGINE_DECODE_UTIL_H
/* ---- decoders (engine/decode_*.c, taintrule.c) --------------------------------------- */

/* Steps 1-4 for one object of `kind` (its dctx initialised): *obj is replaced by the
 * v1 form when converted (*owned then holds it; the caller decrefs it after
 * decoding; NULL otherwise). False with c->e set when the object is refused. */
bool dra__input_prepare(dctx *c, const char *kind, const json_t **obj, json_t **owned);
/* What every public decoder is: dra__input_prepare on obj as `kind`, then v1 on the
 * object as v1 (converted from v1beta1/v1beta2 when it was one) into out. */
typedef bool (*dra_decode_v1)(const dra_decoder *d, const json_t *obj, void *out, err *e);
bool dra__input_decode(const dra_decoder *d, const char *kind, const json_t *obj, dra_decode_v1 v1, void *out, err *e);
/* A warning about the current object (strict: an error; returns false then). */
bool dra__input_warn(dctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

/* convert.c: obj (resource.k8s.io/<version> `kind`) as a new v1 object, or NULL when
 * the version has the v1 shape already (v1, v1beta2). */
json_t *dra__convert_to_v1(const char *kind, const char *version, const json_t *obj);

#endif
