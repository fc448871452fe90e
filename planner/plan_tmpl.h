/* plan_tmpl.h — private to planner/: a workload's pod template decoded as the API server
 * decodes a PodTemplateSpec. The template is walked against plan_tmpl_schema.c, the JSON
 * shape of k8s.io/api/core/v1's PodTemplateSpec (v1.37.2) generated from the Go types;
 * a key the type does not have is an unknown field (kubectl's warning, an error under
 * field validation Strict), a value of the wrong JSON type is an error whatever the
 * validation (the API server's decoder refuses it), reported with the field path
 * ("spec.containers[0].resources.requests") and the decoder's own words. null is
 * accepted anywhere, as Go's decoder leaves the field unset. */
#ifndef DRA_PLANNER_PLAN_TMPL_H
#define DRA_PLANNER_PLAN_TMPL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* A type's JSON form. Kinds past PT_LIST are leaves. */
typedef enum plan_tmpl_kind {
    PT_OBJECT,         /* a Go struct: fields[first .. first+nfields) */
    PT_MAP,            /* map[string]elem */
    PT_LIST,           /* []elem */
    PT_STRING,
    PT_BYTES,          /* []byte: a base64 string */
    PT_BOOL,
    PT_INT32,
    PT_INT64,
    PT_FLOAT,
    PT_INT_OR_STRING,  /* intstr.IntOrString: a string or an int32 */
    PT_QUANTITY,       /* resource.Quantity: a string or a number, in its grammar */
    PT_TIME,           /* metav1.Time: an RFC 3339 string */
    PT_ANY,            /* metav1.FieldsV1: any JSON */
} plan_tmpl_kind;

typedef struct plan_tmpl_type {
    plan_tmpl_kind kind;
    uint16_t elem;            /* PT_MAP, PT_LIST: the value's type */
    uint16_t first, nfields;  /* PT_OBJECT: its fields, sorted by name (strcmp) */
    const char *go;           /* the Go type as the decoder's errors name it: "v1.ResourceList" */
} plan_tmpl_type;

typedef struct plan_tmpl_field {
    const char *name;   /* the JSON key */
    uint16_t type;
    const char *owner;  /* the Go struct it is decoded into, embedded ones flattened ("Go struct field OWNER.path") */
    const char *via;    /* embedded structs Go writes into that path: "ProbeHandler." */
} plan_tmpl_field;

/* plan_tmpl_schema.c (generated); type 0 is PodTemplateSpec. */
extern const plan_tmpl_type plan_tmpl_types[];
extern const plan_tmpl_field plan_tmpl_fields[];
extern const size_t plan_tmpl_ntypes, plan_tmpl_nfields;

/* Called for each unknown field: its full path ("spec.nodeSelecter", kubectl's words) and
 * the known field nearest to it (NULL when none is close). */
typedef void (*plan_tmpl_unknown_fn)(void *arg, const char *path, const char *nearest);

/* Walks tmpl as a PodTemplateSpec: unknown fields to unknown (in document order); the
 * first wrong type (or bad quantity) is set as e's message, "PATH: what is wrong", and
 * false returned — after the whole template is walked, so every unknown field is still
 * reported. The caller names the object and where the template sits. */
bool plan_tmpl_check(const json_t *tmpl, plan_tmpl_unknown_fn unknown, void *arg, err *e);

#endif
