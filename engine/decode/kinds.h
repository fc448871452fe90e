/* kinds.h — private to engine/: the kinds of object the engine reads (dra_kind), their
 * names and keys as the store files them, the decoding of one object of a kind into
 * the model (decode_*.c, kinds.c), and the rules — DeviceTaintRules and PodGroups —
 * a snapshot decodes as one set (rules.c). Below the world: a world reads objects of
 * these kinds; the store keeps them by kind. */
#ifndef DRA_ENGINE_KINDS_H
#define DRA_ENGINE_KINDS_H

#include <jansson.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/vec.h"
#include "engine/decode/catalog.h"
#include "engine/decode/decode.h"
#include "engine/engine.h"

typedef enum dra_kind {
    DRA_KIND_NONE = 0, DRA_KIND_CLASS, DRA_KIND_SLICE, DRA_KIND_CLAIM, DRA_KIND_TEMPLATE, DRA_KIND_NODE,
    DRA_KIND_POD, DRA_KIND_TAINT_RULE, DRA_KIND_POD_GROUP, DRA_KIND_COUNT
} dra_kind;

dra_kind dra__kind_of(const char *kind);
const char *dra__kind_name(dra_kind k);
/* DeviceClasses, ResourceSlices, Nodes and DeviceTaintRules have no namespace. */
bool dra__kind_cluster_scoped(dra_kind k);
/* "Kind/namespace/name" (malloc'd): the namespace empty when cluster-scoped, else
 * defaulted (dra_ns). The key of an object in the store. */
char *dra__object_key(dra_kind k, const char *ns, const char *name);

/* Decodes one object of kind k into memory from d (names interned in d->names);
 * *out is the decoded model object (taint rules and pod groups: NULL, they are
 * decoded per snapshot, dra__rules_add). */
bool dra__decode_object(const dra_decoder *d, dra_kind k, const json_t *obj, void **out, err *e);

/* A snapshot's DeviceTaintRules and PodGroups (rules.c): few, decoded as a set in an
 * arena of their own, shared by the snapshots between two changes of either kind. */
typedef struct dra_rules {
    arena mem;
    dra_decoder dec;
    VEC(struct dra_taint_rule *) taint_rules;
    VEC(struct dra_podgroup *) podgroups;
} dra_rules;
/* Rules decoded over cat, warnings to in (NULL: dropped). */
dra_rules *dra__rules_new(dra_catalog *cat, const dra_input *in);
bool dra__rules_add(dra_rules *r, dra_kind k, const json_t *obj, err *e);
void dra__rules_free(dra_rules *r);

#endif
