/* plan_fitmemo.c — fits kept across simulations (plan_fitmemo.h): an open-addressing
 * table (linear probing, power-of-two size, at most half full) of whole keys, so two
 * keys never share an answer. */
#include "planner/plan_fitmemo.h"

#include "base/base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct memo_entry {
    uint64_t w, node, hist;
    int64_t score;
    int32_t mode;         /* 0: slot empty (modes are dra_score_mode + 1) */
    bool fits;
} memo_entry;

struct plan_fitmemo {
    memo_entry *v;
    size_t cap, n;
};

static uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t str_key(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return mix64(h);
}

plan_fitmemo *plan_fitmemo_new(void) {
    plan_fitmemo *m = xcalloc(1, sizeof *m);
    m->cap = 1024;
    m->v = xcalloc(m->cap, sizeof *m->v);
    return m;
}

void plan_fitmemo_free(plan_fitmemo *m) {
    if (!m) return;
    free(m->v);
    free(m);
}

uint64_t plan_fitmemo_workload_key(const plan_workload *w) {
    return mix64(str_key(w->name) ^ mix64((uint64_t)(uintptr_t)w->tmpl));
}

uint64_t plan_fitmemo_node_key(const char *name) { return str_key(name); }

/* never 0 again once something was committed: 0 is the untouched node */
uint64_t plan_fitmemo_history(uint64_t hist, uint64_t wkey) { return mix64(hist * 31 + wkey) | 1; }

static size_t slot_of(const plan_fitmemo *m, uint64_t w, int mode, uint64_t node, uint64_t hist) {
    return (size_t)(mix64(w ^ mix64(node ^ mix64(hist + (uint64_t)mode)))) & (m->cap - 1);
}

static memo_entry *find(const plan_fitmemo *m, uint64_t w, int mode, uint64_t node, uint64_t hist) {
    for (size_t i = slot_of(m, w, mode, node, hist);; i = (i + 1) & (m->cap - 1)) {
        memo_entry *e = &m->v[i];
        if (!e->mode || (e->w == w && e->node == node && e->hist == hist && e->mode == mode + 1)) return e;
    }
}

bool plan_fitmemo_get(const plan_fitmemo *m, uint64_t wkey, int mode, uint64_t node, uint64_t hist, bool *fits,
                      int64_t *score) {
    const memo_entry *e = find(m, wkey, mode, node, hist);
    if (!e->mode) return false;
    *fits = e->fits;
    *score = e->score;
    return true;
}

static void grow(plan_fitmemo *m) {
    memo_entry *old = m->v;
    size_t oc = m->cap;
    m->cap *= 2;
    m->v = xcalloc(m->cap, sizeof *m->v);
    for (size_t i = 0; i < oc; i++)
        if (old[i].mode) *find(m, old[i].w, old[i].mode - 1, old[i].node, old[i].hist) = old[i];
    free(old);
}

void plan_fitmemo_put(plan_fitmemo *m, uint64_t wkey, int mode, uint64_t node, uint64_t hist, bool fits, int64_t score) {
    if (2 * (m->n + 1) > m->cap) grow(m);
    memo_entry *e = find(m, wkey, mode, node, hist);
    if (!e->mode) m->n++;
    *e = (memo_entry){.w = wkey, .node = node, .hist = hist, .score = score, .mode = mode + 1, .fits = fits};
}

size_t plan_fitmemo_size(const plan_fitmemo *m) { return m->n; }
