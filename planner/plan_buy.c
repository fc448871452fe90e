/* plan_buy.c — the buy list: the cheapest mix of node shapes (a count of copies of
 * each, at a price per node) that places every workload some shape can help, exact for
 * the simulation under binpack scoring (plan_minnodes.h mn_buy).
 *
 * A depth-first search over the counts of all shapes but the last, cheapest first;
 * for each, the fewest copies of the last shape is searched (mn_least). The mix to
 * beat at the start is the cheapest shape on its own (searched already). Three things
 * keep it to few simulations:
 *   - the per-workload bound (plan_minnodes.h): a mix whose copies cannot hold some
 *     workload's replicas even on its own is refused without a probe, and it gives the
 *     last shape's count its lower end;
 *   - the price: once a mix is found, no count whose cost is not below it is tried;
 *   - monotony: more copies of a shape never take room away, so the last shape's count
 *     for the previous count of the one before it is known to fit and bounds the next
 *     search from above (a staircase: the search walks down it). */
#include "planner/plan_minnodes.h"

#include <stdlib.h>
#include <string.h>

typedef struct buy {
    mn_search *m;
    const double *prices;
    const bool *include;
    long *counts;            /* the mix being tried */
    long *best;              /* the cheapest found */
    double best_cost;        /* valid when found */
    bool found;
} buy;

/* The fewest copies of the last shape the bound allows after counts[0..last-1];
 * -1: none (a workload only the last shape could still help, and it cannot). */
static long last_lower(const buy *b, size_t last) {
    const mn_search *m = b->m;
    long lb = 0;
    for (size_t i = 0; i < m->nw; i++) {
        long left = mn_left(m, i);
        if (!b->include[i] || !m->exact[i] || left <= 0) continue;
        long have = 0;
        for (size_t s = 0; s < last; s++) have += b->counts[s] * m->cap[mn_at(m, s, i)];
        if (have >= left) continue;
        long cap = m->cap[mn_at(m, last, i)];
        if (!cap) return -1;
        long k = (left - have + cap - 1) / cap;
        if (k > lb) lb = k;
    }
    return lb;
}

/* The highest count of shape s still cheaper than the best mix after `cost`. */
static long cheaper_than_best(const buy *b, size_t s, double cost) {
    long max = b->m->max;
    if (!b->found || b->prices[s] <= 0) return max;
    double room = (b->best_cost - cost) / b->prices[s];
    if (room <= 0) return -1;
    if (room > (double)max) return max;
    long n = (long)room;   /* cost + p * n < best: n < room */
    if ((double)n >= room) n--;
    return n;
}

/* The last shape's count for the counts before it (recorded when cheapest), or -1. */
static long search_last(buy *b, size_t last, double cost, long hi) {
    long lb = last_lower(b, last), ub = cheaper_than_best(b, last, cost);
    if (lb < 0 || lb > ub) return -1;
    long k = mn_least(b->m, b->counts, last, b->include, DRA_SCORE_BINPACK, lb, lb, hi <= ub ? hi : -1, ub);
    if (k < 0 || b->m->failed) return -1;
    double c = cost + b->prices[last] * (double)k;
    if (!b->found || c < b->best_cost) {
        b->found = true;
        b->best_cost = c;
        b->counts[last] = k;
        memcpy(b->best, b->counts, b->m->ns * sizeof *b->best);
    }
    return k;
}

static void search(buy *b, size_t level, double cost) {
    size_t last = b->m->ns - 1;
    if (level == last) {
        search_last(b, last, cost, -1);
        return;
    }
    long carried = -1;   /* the last shape's answer at the previous count of this one */
    for (long n = 0; n <= b->m->max && !b->m->failed; n++) {
        if (n > cheaper_than_best(b, level, cost)) break;
        b->counts[level] = n;
        for (size_t s = level + 1; s <= last; s++) b->counts[s] = 0;
        double c = cost + b->prices[level] * (double)n;
        if (level + 1 == last) {
            long k = search_last(b, last, c, carried);
            if (k >= 0) carried = k;
            if (k == 0) break;   /* more of this shape only costs more */
        } else {
            search(b, level + 1, c);
        }
    }
}

bool mn_buy(mn_search *m, const double *prices, const bool *include, const long *single, long *counts, double *total) {
    buy b = {.m = m, .prices = prices, .include = include};
    b.counts = xcalloc(m->ns, sizeof *b.counts);
    b.best = xcalloc(m->ns, sizeof *b.best);
    /* the shapes on their own, already searched: the mix to beat */
    for (size_t s = 0; s < m->ns; s++) {
        if (single[s] < 0) continue;
        double c = prices[s] * (double)single[s];
        if (b.found && c >= b.best_cost) continue;
        b.found = true;
        b.best_cost = c;
        memset(b.best, 0, m->ns * sizeof *b.best);
        b.best[s] = single[s];
    }
    /* one shape: its own count is the mix (nothing below it fits) */
    if (!(m->ns == 1 && b.found)) search(&b, 0, 0.0);
    bool found = !m->failed && b.found;
    if (found) {
        memcpy(counts, b.best, m->ns * sizeof *counts);
        *total = b.best_cost;
    }
    free(b.counts);
    free(b.best);
    return found;
}
