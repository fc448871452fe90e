/* explain.h — private to engine/: why the last dra_allocate call on a context found
 * no allocation (explain.c). The long text is engine.h's dra_alloc_explain; these are
 * the short forms the pod paths (podplan.c, fixture.c) put into one line. */
#ifndef DRA_ENGINE_EXPLAIN_H
#define DRA_ENGINE_EXPLAIN_H

#include "engine/engine.h"

/* After DRA_ALLOC_UNSAT: one line for a FailedNodes message, "; "-separated parts —
 * each request that cannot be filled on its own,
 *   claim NS/NAME request R: wants N, M match CLASS, F free: <the two largest causes>
 * (as "... F free, but no K of them share attribute A" when a constraint cuts), then a
 * constraint over several requests that no free devices satisfy, or else why the
 * requests fail together. Returns the length written (truncated to n - 1). */
size_t dra__explain_short(dra_alloc_ctx *x, char *buf, size_t n);

/* After DRA_ALLOC_NODE_ERROR (or UNSAT): the pools of the node that are invalid or
 * incomplete and why, "pool D/P: duplicate device name gpu-0; pool ...". 0 when none. */
size_t dra__explain_pools(dra_alloc_ctx *x, char *buf, size_t n);

/* The next dra_allocate call on x, when it is on the same node view and the same
 * claims as the last one (podplan.c's check with nothing in use, right after an
 * explained failure), starts from the selector results the last call and its
 * explanation found, instead of evaluating each selector again (a selector's answer
 * depends on the device, the node, the class and the request only). */
void dra__alloc_carry_selectors(dra_alloc_ctx *x);

#endif
