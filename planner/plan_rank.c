/* plan_rank.c — the nodes one workload's replicas fit, best first (plan_rank.h). */
#include "planner/plan_rank.h"

#include "base/base.h"
#include "base/vec.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct rank_entry {
    int64_t score;
    uint64_t tie;
    uint32_t node, ver;   /* stale when ver is no longer the node's */
} rank_entry;

struct plan_rank {
    size_t n;
    const uint64_t *tie;
    uint32_t *ver;           /* per node: bumped by each new answer and each forget */
    uint8_t *known;
    size_t sweep;            /* after a reset: nodes [sweep, n) are still unknown */
    VEC(uint32_t) forgotten;
    VEC(rank_entry) heap;
};

plan_rank *plan_rank_new(size_t nnodes, const uint64_t *tie) {
    plan_rank *r = xcalloc(1, sizeof *r);
    r->n = nnodes;
    r->tie = tie;
    r->ver = xcalloc(nnodes ? nnodes : 1, sizeof *r->ver);
    r->known = xcalloc(nnodes ? nnodes : 1, 1);
    r->sweep = nnodes;
    return r;
}

void plan_rank_free(plan_rank *r) {
    if (!r) return;
    free(r->ver);
    free(r->known);
    free(r->forgotten.v);
    free(r->heap.v);
    free(r);
}

void plan_rank_reset(plan_rank *r) {
    for (size_t i = 0; i < r->n; i++) r->ver[i]++;
    memset(r->known, 0, r->n ? r->n : 1);
    r->sweep = 0;
    r->forgotten.n = 0;
    r->heap.n = 0;
}

bool plan_rank_take_unknown(plan_rank *r, size_t *node) {
    while (r->sweep < r->n)
        if (!r->known[r->sweep++]) return *node = r->sweep - 1, true;
    while (r->forgotten.n) {
        uint32_t nd = r->forgotten.v[--r->forgotten.n];
        if (!r->known[nd]) return *node = nd, true;
    }
    return false;
}

/* a before b: the order of the scan it replaces */
static bool before(const rank_entry *a, const rank_entry *b) {
    if (a->score != b->score) return a->score > b->score;
    if (a->tie != b->tie) return a->tie < b->tie;
    return a->node < b->node;
}

static void swap(rank_entry *a, rank_entry *b) {
    rank_entry t = *a;
    *a = *b;
    *b = t;
}

void plan_rank_set(plan_rank *r, size_t node, bool fits, int64_t score) {
    assert(node < r->n);
    r->known[node] = 1;
    r->ver[node]++;
    if (!fits) return;
    VEC_PUSH(r->heap, ((rank_entry){score, r->tie[node], (uint32_t)node, r->ver[node]}));
    rank_entry *h = r->heap.v;
    for (size_t i = r->heap.n - 1; i && before(&h[i], &h[(i - 1) / 2]); i = (i - 1) / 2) swap(&h[i], &h[(i - 1) / 2]);
}

void plan_rank_forget(plan_rank *r, size_t node) {
    assert(node < r->n);
    r->ver[node]++;
    if (!r->known[node]) return;
    r->known[node] = 0;
    VEC_PUSH(r->forgotten, (uint32_t)node);
}

static void pop(plan_rank *r) {
    rank_entry *h = r->heap.v;
    h[0] = h[--r->heap.n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, b = i;
        if (l < r->heap.n && before(&h[l], &h[b])) b = l;
        if (l + 1 < r->heap.n && before(&h[l + 1], &h[b])) b = l + 1;
        if (b == i) break;
        swap(&h[i], &h[b]);
        i = b;
    }
}

long plan_rank_best(plan_rank *r) {
    while (r->heap.n) {
        const rank_entry *t = &r->heap.v[0];
        if (t->ver == r->ver[t->node]) return (long)t->node;
        pop(r);
    }
    return -1;
}
