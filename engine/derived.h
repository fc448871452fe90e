/* derived.h — private to engine/: derived attributes (KEP-6080, gate
 * DRADerivedAttributes, alpha in Kubernetes 1.37).
 *
 * A request (`exactly` or a `firstAvailable` subrequest) may list up to 32
 * `derivedAttributes` {name, expression}. The expression is CEL over the same
 * `device` variable as selectors, but may yield any scalar (int, bool, string,
 * semver) or, with list-type attributes, a list of one of those. It is evaluated
 * once per candidate device of that request, right after the request's class and
 * request selectors accepted the device (so it shares the selector result cache and
 * its errors abort allocation exactly like selector errors). The value is a virtual
 * attribute seen only by the claim's matchAttribute / distinctAttribute constraints,
 * where it shadows a driver attribute of the same name; CEL never sees it.
 *
 * Validation (claim invalid → allocation error naming claim and field): the name is
 * "<DNS subdomain>/<C identifier>"; names are unique within a request; the expression
 * is non-empty, at most 10Ki long and compiles; its estimated cost is at most
 * DRA_DERIVED_MAX_COST and that of all expressions of the claim together at most
 * DRA_DERIVED_CLAIM_MAX_COST ("Forbidden: too complex, ..."); every derived attribute
 * is used by at least one constraint that applies to its request. With the gate off derived
 * attributes are ignored (as the scheduler does after a downgrade). */
#ifndef DRA_ENGINE_DERIVED_H
#define DRA_ENGINE_DERIVED_H

#include "engine/decode_util.h"

#define DRA_DERIVED_MAX 32   /* derivedAttributes per request */
/* Estimated-cost limits (cel_program_estimated_cost, Kubernetes' worst-case CEL
 * estimate): one expression, and all derived attribute expressions of a claim
 * together. KEP-6080 / kubernetes#140029 limit derived attribute expressions by
 * estimated cost, but the values and names of those constants could not be found in
 * the reference material; both are set to the selector limit CEL_MAX_COST
 * (CELSelectorExpressionMaxCost, 1,000,000) until they can be checked. */
#define DRA_DERIVED_MAX_COST CEL_MAX_COST
#define DRA_DERIVED_CLAIM_MAX_COST CEL_MAX_COST

struct dra_alloc_ctx;
struct dra_claim_state;
struct dra_req_data;
struct dra_cstate;

/* alloc.c validate(), once rd->spec/parent/name are set and before any selector runs:
 * validates the request's derived attributes against the claim's constraints and
 * maps constraints to them. False with the allocation error set. */
bool dra__derived_prepare(struct dra_alloc_ctx *x, struct dra_claim_state *cs, struct dra_req_data *rd);
/* alloc.c selectable(): evaluates the request's derived attributes on a candidate
 * that passed the selectors. 1 ok, -1 runtime error with *errmsg (arena text). */
int dra__derived_eval(struct dra_alloc_ctx *x, const struct dra_claim_state *cs, struct dra_req_data *rd,
                     uint32_t cand, const char **errmsg);
/* alloc.c allocate_device(): before constraint k sees the candidate, points it at the
 * derived value that shadows the attribute (or clears it). */
void dra__derived_bind(const struct dra_alloc_ctx *x, const struct dra_req_data *rd, uint32_t k, uint32_t cand,
                      struct dra_cstate *s);

#endif
