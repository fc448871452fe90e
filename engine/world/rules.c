/* rules.c — a snapshot's DeviceTaintRules and PodGroups (kinds.h, dra_rules): few
 * objects, decoded again as a set whenever one of them changes (store.c part_rules),
 * in an arena of their own. */
#include "engine/decode/kinds.h"
#include "engine/world/podgroup.h"
#include "engine/decode/taintrule.h"

#include <assert.h>
#include <stdlib.h>

dra_rules *dra__rules_new(dra_catalog *cat, const dra_input *in) {
    dra_rules *r = xcalloc(1, sizeof *r);
    arena_init(&r->mem, 0);
    r->dec = (dra_decoder){.a = &r->mem, .cat = cat, .apply_defaults = true, .input = in};
    return r;
}

bool dra__rules_add(dra_rules *r, dra_kind k, const json_t *obj, err *e) {
    assert(k == DRA_KIND_TAINT_RULE || k == DRA_KIND_POD_GROUP);
    return k == DRA_KIND_TAINT_RULE ? dra__taintrule_add(r, obj, e) : dra__podgroup_add(r, obj, e);
}

void dra__rules_free(dra_rules *r) {
    if (!r) return;
    free(r->taint_rules.v);
    free(r->podgroups.v);
    arena_free(&r->mem);
    free(r);
}
