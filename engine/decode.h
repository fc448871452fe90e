/* decode.h — private to engine/: turning JSON values (jansson; YAML is converted to
 * jansson first by yaml.c) into the compact model of model.h. One decoder per kind;
 * all memory comes from the caller's arena, names are interned in the world's
 * table. Each decoder first runs engine/validate.h's steps (apiVersion check,
 * conversion of resource.k8s.io/v1beta1 to v1, unknown-field warnings, the API
 * server's validation); a field of the wrong type or an invalid value is an error
 * naming the object and the field path
 * ("ResourceSlice node-1-gpus: spec.devices[3].capacity[\"memory\"].value: ..."). */
#ifndef DRA_ENGINE_DECODE_H
#define DRA_ENGINE_DECODE_H

#include <jansson.h>

#include "base/error.h"
#include "base/intern.h"
#include "engine/engine.h"
#include "engine/model.h"

typedef struct dra_decoder {
    arena *a;
    intern_table *names;
    /* Apply the API server's defaults (allocationMode ExactCount, count 1) to
     * objects that were written by hand; conformance cases are passed as is. */
    bool apply_defaults;
    /* Skip the objects' raw_json text: the store never prints objects back, and the
     * text of every claim and slice would cost as much memory as the rest. */
    bool no_raw_text;
    /* where warnings go and whether they are errors (engine.h); NULL: dropped */
    const dra_input *input;
} dra_decoder;

/* YAML stream → JSON array with one element per non-empty document; documents that
 * would be skipped are warned about under `in` (NULL: dropped). */
json_t *dra_yaml_load(const char *text, size_t len, const char *source, err *e);
json_t *dra_yaml_load_in(const char *text, size_t len, const char *source, const dra_input *in, err *e);

bool dra_decode_class(const dra_decoder *d, const json_t *obj, dra_class *out, err *e);
bool dra_decode_slice(const dra_decoder *d, const json_t *obj, dra_slice *out, err *e);
bool dra_decode_claim(const dra_decoder *d, const json_t *obj, dra_claim *out, err *e);
bool dra_decode_claim_template(const dra_decoder *d, const json_t *obj, dra_claim_template *out, err *e);
bool dra_decode_node(const dra_decoder *d, const json_t *obj, dra_node *out, err *e);
bool dra_decode_pod(const dra_decoder *d, const json_t *obj, dra_pod *out, err *e);

/* Splits an attribute/capacity name into interned (domain, id): "dom/id" or, when
 * unqualified, (driver, id). */
void dra_split_qualified(intern_table *names, const char *qname, uint32_t driver_id, uint32_t *domain,
                         uint32_t *id);

#endif
