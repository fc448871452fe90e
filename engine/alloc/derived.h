/* derived.h — private to engine/: derived attributes (KEP-6080, gate
 * DRADerivedAttributes, alpha in Kubernetes 1.37).
 *
 * A request (`exactly` or a `firstAvailable` subrequest) may list up to 32
 * `derivedAttributes` {name, expression}. The expression is CEL over the same
 * `device` variable as selectors and yields a scalar (int, bool, string, semver) or a
 * list of one of those. The value is a virtual attribute seen only by the claim's
 * matchAttribute / distinctAttribute constraints whose attribute name equals the
 * derived attribute's name, for devices of requests the constraint applies to; there
 * it shadows a driver attribute of that name. CEL never sees it.
 *
 * As Kubernetes' allocator (dynamic-resource-allocation v0.37.2, structured/internal/
 * experimental): with the gate off a request with derived attributes is an error
 * ("cannot handle request with derived attributes, the feature is disabled"); with it
 * on, an expression is evaluated only when such a constraint adds a device, and its
 * error ("evaluate derived attribute NAME on device D/P/N failed: ...") aborts the
 * allocation there. Claims the API server rejects (name format, duplicates, more than
 * 32, not referenced by a constraint targeting the request, empty, too long, not
 * compiling, estimated cost over a limit) get the API server's field error instead
 * (derived.c api_valid; the allocator never sees them). */
#ifndef DRA_ENGINE_DERIVED_H
#define DRA_ENGINE_DERIVED_H

#include "engine/decode/decode_util.h"

#define DRA_DERIVED_MAX 32   /* derivedAttributes per request */
/* Estimated-cost limits of API validation (cel_program_estimated_cost, Kubernetes'
 * worst-case CEL estimate): one expression, min(CELSelectorExpressionMaxCost,
 * DeviceClaimDerivedAttributeCELMaxCost), and all derived attribute expressions of a
 * claim together, DeviceClaimDerivedAttributeCELMaxCost (k8s.io/kubernetes v1.37.2
 * pkg/apis/resource/types.go: 1,000,000 both). */
#define DRA_DERIVED_MAX_COST CEL_MAX_COST
#define DRA_DERIVED_CLAIM_MAX_COST CEL_MAX_COST

struct dra_alloc_ctx;
struct dra_claim_state;
struct dra_req_data;
struct dra_cstate;

/* alloc.c validate(), first, once rd->spec/parent/name are set: the gate, the API
 * validation checks, and the constraint → derived attribute map. False with the
 * allocation error set. */
bool dra__derived_prepare(struct dra_alloc_ctx *x, struct dra_claim_state *cs, struct dra_req_data *rd);
/* alloc.c matches(): evaluates the request's derived attributes that constraints look
 * up, on a candidate that passed the selectors. 1 ok, 2 some evaluation failed (the
 * error is kept for dra__derived_bind; errmsg is unused). */
int dra__derived_eval(struct dra_alloc_ctx *x, const struct dra_claim_state *cs, struct dra_req_data *rd,
                     uint32_t cand, const char **errmsg);
/* alloc.c allocate_device(): before constraint k sees the candidate, points it at the
 * derived value that shadows the attribute (or clears it). False with the allocation
 * error set when that value failed to evaluate (Kubernetes' lookupAttribute error). */
bool dra__derived_bind(struct dra_alloc_ctx *x, const struct dra_req_data *rd, uint32_t k, uint32_t cand,
                      struct dra_cstate *s);

#endif
