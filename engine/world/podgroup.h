/* podgroup.h — private to engine/: PodGroup objects and their ResourceClaims
 * (KEP-5729, gate DRAWorkloadResourceClaims, beta in 1.37, off by default).
 *
 * A Pod names its group in spec.schedulingGroup.podGroupName (same namespace). A
 * Pod's spec.resourceClaims entry that equals an entry of the PodGroup's
 * spec.resourceClaims — same name and the same resourceClaimName or
 * resourceClaimTemplateName — is the group's claim: reserved for the PodGroup, and
 * for a template one claim is generated for the whole group
 * (status.resourceClaimStatuses of the PodGroup names it), allocated by the first
 * member scheduled and reused by every later member. Other entries stay per Pod. */
#ifndef DRA_ENGINE_PODGROUP_H
#define DRA_ENGINE_PODGROUP_H

#include <jansson.h>

#include "base/arena.h"
#include "base/error.h"
#include "engine/model.h"

typedef struct dra_world dra_world;
typedef struct dra_rules dra_rules;
typedef struct dra_podgroup dra_podgroup;

/* rules.c dra__rules_add: decode one PodGroup into r. */
bool dra__podgroup_add(dra_rules *r, const json_t *obj, err *e);
const dra_podgroup *dra__podgroup_find(const dra_world *w, const char *ns, const char *name);
/* metadata.uid, NULL when the object has none. */
const char *dra__podgroup_uid(const dra_podgroup *g);
/* When the pod's claim entry is one of the group's claims: true, and *claim is the
 * group claim — the existing object (standalone, or generated and named in the
 * group's status) or, for a template not yet instantiated, a new claim
  * "<group>-<entry>" generated from it in arena a. *claim is NULL when the claim or template is
 * missing. False when the entry is not a group entry. */
bool dra__podgroup_claim(const dra_world *w, arena *a, const dra_podgroup *g, const dra_pod_claim *pc,
                        const dra_claim **claim);

/* Why dra__podgroup_claim's *claim is NULL, in arena a (dra__world_not_found's text
 * for the claim, the generated claim the group's status names, or the template). */
const char *dra__podgroup_missing_claim(const dra_world *w, arena *a, const dra_podgroup *g, const dra_pod_claim *pc);

#endif
