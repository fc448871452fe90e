/* intern.c — interning with a locked hash index and lock-free id → string reads.
 * Entries are stored in fixed-size chunks reached through a fixed array of chunk
 * pointers, so an entry's address never changes once published; the index is an
 * hmap from the string hash to a chain of ids with that hash (collisions are
 * resolved by comparing the strings). */
#include "base/intern.h"
#include "base/arena.h"
#include "base/hash.h"
#include "base/hmap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096              /* 16M distinct strings */

typedef struct entry {
    const char *s;
    uint32_t len;
    uint32_t next;                   /* next id with the same hash, 0 = end */
} entry;

struct intern_table {
    pthread_rwlock_t lock;
    hmap index;                      /* hash → first id with that hash */
    arena strings;                   /* the string bytes */
    _Atomic uint32_t count;          /* ids 1..count are published */
    entry *chunks[MAX_CHUNKS];
};

intern_table *intern_new(void) {
    intern_table *t = xcalloc(1, sizeof *t);
    pthread_rwlock_init(&t->lock, NULL);
    hmap_init(&t->index);
    arena_init(&t->strings, 64 * 1024);
    return t;
}

void intern_free(intern_table *t) {
    if (!t) return;
    for (size_t i = 0; i < MAX_CHUNKS && t->chunks[i]; i++) free(t->chunks[i]);
    hmap_free(&t->index);
    arena_free(&t->strings);
    pthread_rwlock_destroy(&t->lock);
    free(t);
}

static const entry *entry_of(const intern_table *t, uint32_t id) {
    uint32_t i = id - 1;
    return &t->chunks[i >> CHUNK_BITS][i & (CHUNK_SIZE - 1)];
}

static uint32_t find_locked(const intern_table *t, uint64_t h, const char *s, size_t n) {
    uint64_t v;
    if (!hmap_get(&t->index, h, &v)) return 0;
    for (uint32_t id = (uint32_t)v; id; ) {
        const entry *e = entry_of(t, id);
        if (e->len == n && memcmp(e->s, s, n) == 0) return id;
        id = e->next;
    }
    return 0;
}

uint32_t intern_get(const intern_table *t, const char *s, size_t n) {
    uint64_t h = hash_bytes(s, n);
    pthread_rwlock_rdlock((pthread_rwlock_t *)&t->lock);
    uint32_t id = find_locked(t, h, s, n);
    pthread_rwlock_unlock((pthread_rwlock_t *)&t->lock);
    return id;
}

uint32_t intern_put(intern_table *t, const char *s, size_t n) {
    uint64_t h = hash_bytes(s, n);
    pthread_rwlock_rdlock(&t->lock);
    uint32_t id = find_locked(t, h, s, n);
    pthread_rwlock_unlock(&t->lock);
    if (id) return id;

    pthread_rwlock_wrlock(&t->lock);
    id = find_locked(t, h, s, n);    /* another writer may have won the race */
    if (!id) {
        uint32_t cnt = atomic_load(&t->count);
        uint32_t i = cnt;            /* new id is cnt + 1, slot index cnt */
        if ((i >> CHUNK_BITS) >= MAX_CHUNKS) abort();  /* 16M names: a bug, not a workload */
        entry **chunk = &t->chunks[i >> CHUNK_BITS];
        if (!*chunk) *chunk = xcalloc(CHUNK_SIZE, sizeof(entry));
        entry *e = &(*chunk)[i & (CHUNK_SIZE - 1)];
        e->s = arena_strndup(&t->strings, s, n);
        e->len = (uint32_t)n;
        bool ins;
        uint64_t *head = hmap_upsert(&t->index, h, 0, &ins);
        e->next = (uint32_t)*head;
        id = cnt + 1;
        *head = id;
        atomic_store(&t->count, id);
    }
    pthread_rwlock_unlock(&t->lock);
    return id;
}

const char *intern_str(const intern_table *t, uint32_t id) {
    if (id == 0 || id > atomic_load(&((intern_table *)t)->count)) return NULL;
    return entry_of(t, id)->s;
}

size_t intern_len(const intern_table *t, uint32_t id) {
    if (id == 0 || id > atomic_load(&((intern_table *)t)->count)) return 0;
    return entry_of(t, id)->len;
}

size_t intern_count(const intern_table *t) { return atomic_load(&((intern_table *)t)->count); }
