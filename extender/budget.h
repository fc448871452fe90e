/* budget.h — one budget for the request bytes the server holds at once, across every
 * connection (--max-inflight-bytes). --max-body bounds one request; without this, N
 * clients each sending a body just under it hold N × max-body, past any pod's memory
 * limit. A request takes its bytes from the budget as they arrive and gives them back
 * when it is answered; a request whose bytes do not fit is answered 503 with
 * Retry-After and its body is not kept (server.c). Lock-free: one atomic counter. */
#ifndef DRA_EXTENDER_BUDGET_H
#define DRA_EXTENDER_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ext_budget ext_budget;

#define EXT_DEFAULT_MAX_INFLIGHT_BYTES (128u << 20)

ext_budget *ext_budget_new(size_t limit);
void ext_budget_free(ext_budget *b);
/* Takes n bytes; false (nothing taken) when they would pass the limit. */
bool ext_budget_take(ext_budget *b, size_t n);
void ext_budget_give(ext_budget *b, size_t n);
/* Whether n more bytes would fit now (a hint: others may take them meanwhile). */
bool ext_budget_fits(const ext_budget *b, size_t n);
/* A request refused for want of room (counted for the metrics). */
void ext_budget_refused(ext_budget *b);

size_t ext_budget_limit(const ext_budget *b);
size_t ext_budget_in_use(const ext_budget *b);
size_t ext_budget_peak(const ext_budget *b);
uint64_t ext_budget_refusals(const ext_budget *b);

#endif
