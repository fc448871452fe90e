/* budget.c — the byte budget of budget.h: a compare-and-swap loop on the bytes in use,
 * so a taker never pushes the total past the limit even for a moment. */
#include "extender/budget.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/base.h"

struct ext_budget {
    size_t limit;
    _Atomic size_t used, peak;
    _Atomic uint64_t refused;
};

ext_budget *ext_budget_new(size_t limit) {
    ext_budget *b = xcalloc(1, sizeof *b);
    b->limit = limit;
    return b;
}

void ext_budget_free(ext_budget *b) {
    if (!b) return;
    assert(atomic_load(&b->used) == 0);   /* every request gave its bytes back */
    free(b);
}

bool ext_budget_take(ext_budget *b, size_t n) {
    size_t used = atomic_load(&b->used);
    do {
        if (n > b->limit - used) return false;
    } while (!atomic_compare_exchange_weak(&b->used, &used, used + n));
    size_t now = used + n, peak = atomic_load(&b->peak);
    while (now > peak && !atomic_compare_exchange_weak(&b->peak, &peak, now)) {
    }
    return true;
}

void ext_budget_give(ext_budget *b, size_t n) {
    size_t before = atomic_fetch_sub(&b->used, n);
    assert(before >= n);
    (void)before;
}

bool ext_budget_fits(const ext_budget *b, size_t n) { return n <= b->limit - atomic_load(&b->used); }
void ext_budget_refused(ext_budget *b) { atomic_fetch_add(&b->refused, 1); }
size_t ext_budget_limit(const ext_budget *b) { return b->limit; }
size_t ext_budget_in_use(const ext_budget *b) { return atomic_load(&b->used); }
size_t ext_budget_peak(const ext_budget *b) { return atomic_load(&b->peak); }
uint64_t ext_budget_refusals(const ext_budget *b) { return atomic_load(&b->refused); }
