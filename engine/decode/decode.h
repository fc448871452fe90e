/* decode.h — private to engine/: turning JSON values (jansson; YAML is converted to
 * jansson first by yaml.c) into the compact model of model.h. One decoder per kind;
 * all memory comes from the caller's arena, names are interned in the world's
 * table. Each decoder first runs engine/decode/validate.h's steps (apiVersion check,
 * conversion of resource.k8s.io/v1beta1 to v1, unknown-field warnings, the API
 * server's validation); a field of the wrong type or an invalid value is an error
 * naming the object and the field path
 * ("ResourceSlice node-1-gpus: spec.devices[3].capacity[\"memory\"].value: ..."). */
#ifndef DRA_ENGINE_DECODE_H
#define DRA_ENGINE_DECODE_H

#include <jansson.h>
#include <string.h>

#include "base/error.h"
#include "base/intern.h"
#include "engine/decode/catalog.h"
#include "engine/json.h"
#include "engine/engine.h"
#include "engine/model.h"

/* The extended-resource name that names a DeviceClass directly (KEP-5004):
 * deviceclass.resource.kubernetes.io/<class>. */
#define DRA_DC_PREFIX "deviceclass.resource.kubernetes.io/"

typedef struct dra_decoder {
    arena *a;
    dra_catalog *cat;        /* names are interned and selectors compiled here */
    /* what the decoded object holds in cat, given back when it goes (catalog.h);
     * NULL: kept until cat goes (a snapshot's taint rules and pod groups, rules.c) */
    dra_holds *holds;
    /* names this thread met lately (catalog.h), with holds only; NULL: none */
    dra_name_memo *memo;
    /* Apply the API server's defaults (allocationMode ExactCount, count 1) to
     * objects that were written by hand; conformance cases are passed as is. */
    bool apply_defaults;
    /* Skip the objects' raw_json text: the store never prints objects back, and the
     * text of every claim and slice would cost as much memory as the rest. */
    bool no_raw_text;
    /* where warnings go and whether they are errors (engine.h); NULL: dropped */
    const dra_input *input;
    /* the object's fields are all known (dra__input_fields_known, computed on the
     * thread ahead): the unknown-field walk is skipped */
    bool fields_known;
    /* A ResourceSlice's previous version (NULL: none, or another kind): a device at the
     * same position that would decode to what it has there (decode_take.c) is taken
     * over — the struct copied, what it points to shared — not decoded again. The
     * caller keeps prev's memory as long as the new slice when *taken (the count of
     * devices taken over) is not 0. */
    const dra_slice *prev;
    uint32_t *taken;
} dra_decoder;

/* YAML stream → JSON array with one element per non-empty document; documents that
 * would be skipped are warned about under `in` (NULL: dropped). */
json_t *dra__yaml_load(const char *text, size_t len, const char *source, err *e);
json_t *dra__yaml_load_in(const char *text, size_t len, const char *source, const dra_input *in, err *e);

bool dra__decode_class(const dra_decoder *d, const json_t *obj, dra_class *out, err *e);
bool dra__decode_slice(const dra_decoder *d, const json_t *obj, dra_slice *out, err *e);
bool dra__decode_claim(const dra_decoder *d, const json_t *obj, dra_claim *out, err *e);
bool dra__decode_claim_template(const dra_decoder *d, const json_t *obj, dra_claim_template *out, err *e);
bool dra__decode_node(const dra_decoder *d, const json_t *obj, dra_node *out, err *e);
bool dra__decode_pod(const dra_decoder *d, const json_t *obj, dra_pod *out, err *e);

/* Interns s[0..n) for the object being decoded (held by d->holds). */
uint32_t dra__dec_intern(const dra_decoder *d, const char *s, size_t n);
static inline uint32_t dra_dec_intern_cstr(const dra_decoder *d, const char *s) { return dra__dec_intern(d, s, strlen(s)); }
/* The device key of a result (interned "driver/pool" and device), held by d->holds. */
uint64_t dra__result_key_intern(const dra_decoder *d, const char *driver, const char *pool, const char *device);
/* Splits an attribute/capacity name into interned (domain, id): "dom/id" or, when
 * unqualified, (driver, id). */
void dra__split_qualified(const dra_decoder *d, const char *qname, uint32_t driver_id, uint32_t *domain, uint32_t *id);

#endif
