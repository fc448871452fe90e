/* hmap.c — linear-probing hash map with backward-shift deletion (see hmap.h). */
#include "base/hmap.h"
#include "base/hash.h"

#include <stdlib.h>
#include <string.h>

void hmap_init(hmap *m) { memset(m, 0, sizeof *m); }

void hmap_free(hmap *m) {
    free(m->slots);
    free(m->used);
    memset(m, 0, sizeof *m);
}

void hmap_copy(hmap *dst, const hmap *src) {
    hmap_init(dst);
    if (!src->cap) return;
    dst->slots = xmalloc(src->cap * sizeof *src->slots);
    dst->used = xmalloc(src->cap);
    memcpy(dst->slots, src->slots, src->cap * sizeof *src->slots);
    memcpy(dst->used, src->used, src->cap);
    dst->cap = src->cap;
    dst->len = src->len;
}

void hmap_clear(hmap *m) {
    if (m->used) memset(m->used, 0, m->cap);
    m->len = 0;
}

static size_t find(const hmap *m, uint64_t key, bool *found) {
    size_t mask = m->cap - 1;
    size_t i = hash_u64(key) & mask;
    while (m->used[i]) {
        if (m->slots[i].key == key) { *found = true; return i; }
        i = (i + 1) & mask;
    }
    *found = false;
    return i;
}

static void grow(hmap *m) {
    size_t ncap = m->cap ? m->cap * 2 : 16;
    hmap_slot *old = m->slots;
    uint8_t *oldu = m->used;
    size_t ocap = m->cap;
    m->slots = xmalloc(ncap * sizeof *m->slots);
    m->used = xcalloc(ncap, 1);
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (!oldu[i]) continue;
        bool f;
        size_t j = find(m, old[i].key, &f);
        m->slots[j] = old[i];
        m->used[j] = 1;
    }
    free(old);
    free(oldu);
}

void hmap_prefetch(const hmap *m, uint64_t key) {
    if (!m->cap) return;
    size_t i = hash_u64(key) & (m->cap - 1);
    __builtin_prefetch(&m->used[i]);
    __builtin_prefetch(&m->slots[i]);
}

bool hmap_get(const hmap *m, uint64_t key, uint64_t *val) {
    if (!m->len) return false;
    bool f;
    size_t i = find(m, key, &f);
    if (f && val) *val = m->slots[i].val;
    return f;
}

uint64_t *hmap_upsert(hmap *m, uint64_t key, uint64_t dflt, bool *inserted) {
    if ((m->len + 1) * 10 > m->cap * 7) grow(m);
    bool f;
    size_t i = find(m, key, &f);
    if (!f) {
        m->used[i] = 1;
        m->slots[i].key = key;
        m->slots[i].val = dflt;
        m->len++;
    }
    if (inserted) *inserted = !f;
    return &m->slots[i].val;
}

bool hmap_put(hmap *m, uint64_t key, uint64_t val) {
    bool ins;
    *hmap_upsert(m, key, val, &ins) = val;
    return ins;
}

bool hmap_del(hmap *m, uint64_t key) {
    if (!m->len) return false;
    bool f;
    size_t i = find(m, key, &f);
    if (!f) return false;
    size_t mask = m->cap - 1;
    /* Backward shift: pull later members of the probe run into the hole when their
     * home slot is not after the hole, so every key stays reachable from home. */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->used[j]) break;
        size_t home = hash_u64(m->slots[j].key) & mask;
        bool movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->used[hole] = 0;
    m->len--;
    return true;
}

bool hmap_next(const hmap *m, size_t *iter, uint64_t *key, uint64_t *val) {
    for (size_t i = *iter; i < m->cap; i++) {
        if (m->used[i]) {
            if (key) *key = m->slots[i].key;
            if (val) *val = m->slots[i].val;
            *iter = i + 1;
            return true;
        }
    }
    *iter = m->cap;
    return false;
}
