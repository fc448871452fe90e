/* catalog_share.c — immutable byte arrays shared by content among what is built on
 * one catalog (catalog.h, dra__catalog_share).
 *
 * A node view maps each device's counter consumption onto its pool's counters
 * (world/pools.c): 48 bytes a counter, five to ten counters a MIG device, built again
 * for every node although a fleet's nodes carve their GPUs alike — a few dozen
 * distinct arrays among millions (two thirds of a MIG node's view). Kept once here,
 * by content, for as long as the catalog lives: entries are never removed, so a
 * pointer handed out stays valid without a reference, and the total is bounded
 * (SHARE_BYTES_MAX) — past it the caller keeps its own copy, as before. Internally
 * locked: views are built on request threads. */
#include "engine/decode/catalog.h"

#include "base/hash.h"

#include <string.h>

enum { SHARE_BYTES_MAX = 16 << 20 };

const void *dra__catalog_share(dra_catalog *c, const void *p, size_t n) {
    if (!n) return NULL;
    uint64_t h = hash_bytes(p, n) | 1;   /* 0 is the empty slot */
    dra_catalog_shared *s = &c->shared;
    const void *out = NULL;
    pthread_mutex_lock(&s->lock);
    uint32_t mask = s->cap - 1, i = (uint32_t)h & mask;
    for (; s->cap && s->slot[i].hash; i = (i + 1) & mask)
        if (s->slot[i].hash == h && s->slot[i].n == n && !memcmp(s->slot[i].p, p, n)) {
            out = s->slot[i].p;
            break;
        }
    if (!out && s->mem.total + n <= SHARE_BYTES_MAX) {
        if ((s->len + 1) * 4 > s->cap * 3) {   /* grown at three quarters full */
            uint32_t ocap = s->cap;
            struct dra_shared_slot *old = s->slot;
            s->cap = ocap ? ocap * 2 : 256;
            s->slot = xcalloc(s->cap, sizeof *s->slot);
            for (uint32_t k = 0; k < ocap; k++) {
                if (!old[k].hash) continue;
                uint32_t j = (uint32_t)old[k].hash & (s->cap - 1);
                while (s->slot[j].hash) j = (j + 1) & (s->cap - 1);
                s->slot[j] = old[k];
            }
            free(old);
            mask = s->cap - 1;
            for (i = (uint32_t)h & mask; s->slot[i].hash; i = (i + 1) & mask) {}
        }
        out = arena_memdup(&s->mem, p, n);
        s->slot[i] = (struct dra_shared_slot){h, n, out};
        s->len++;
    }
    pthread_mutex_unlock(&s->lock);
    return out;
}

size_t dra__catalog_shared_bytes(dra_catalog *c) {
    pthread_mutex_lock(&c->shared.lock);
    size_t n = c->shared.mem.total;
    pthread_mutex_unlock(&c->shared.lock);
    return n;
}
