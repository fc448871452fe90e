/* intern.c — interning with a locked hash index, lock-free id → string reads, and
 * references: every intern_put is one reference, intern_release gives one back, and
 * the last one frees the name. Entries are stored in fixed-size chunks reached
 * through a fixed array of chunk pointers, so an entry's address never changes once
 * published; the index is an hmap from the string hash to a chain of ids with that
 * hash (collisions are resolved by comparing the strings). Freed ids go on a free
 * list and are given to the next new name, so ids stay as dense as the live names:
 * a table that interns and releases names forever stays the size of what is live. */
#include "base/intern.h"
#include "base/hash.h"
#include "base/hmap.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096              /* 16M names alive at once */

typedef struct entry {
    char *s;                         /* NULL while the id is free */
    uint32_t len;
    uint32_t next;                   /* in use: next id with the same hash; free: next free id */
    /* raised under either lock (atomically: readers raise it side by side), lowered
     * under the write lock only, so a count seen reaching 0 stays there */
    _Atomic uint64_t refs;
} entry;

struct intern_table {
    pthread_rwlock_t lock;
    hmap index;                      /* hash → first id with that hash */
    _Atomic uint32_t top;            /* ids 1..top have been handed out at some point */
    uint32_t free_head;              /* a freed id to reuse, 0 = none */
    size_t live, bytes;              /* names alive, their string bytes (write lock) */
    entry *chunks[MAX_CHUNKS];
};

intern_table *intern_new(void) {
    intern_table *t = xcalloc(1, sizeof *t);
    pthread_rwlock_init(&t->lock, NULL);
    hmap_init(&t->index);
    return t;
}

void intern_free(intern_table *t) {
    if (!t) return;
    uint32_t top = atomic_load(&t->top);
    for (uint32_t i = 0; i < top; i++) free(t->chunks[i >> CHUNK_BITS][i & (CHUNK_SIZE - 1)].s);
    for (size_t i = 0; i < MAX_CHUNKS && t->chunks[i]; i++) free(t->chunks[i]);
    hmap_free(&t->index);
    pthread_rwlock_destroy(&t->lock);
    free(t);
}

static entry *entry_of(const intern_table *t, uint32_t id) {
    uint32_t i = id - 1;
    return &t->chunks[i >> CHUNK_BITS][i & (CHUNK_SIZE - 1)];
}

static uint32_t find_locked(const intern_table *t, uint64_t h, const char *s, size_t n) {
    uint64_t v;
    if (!hmap_get(&t->index, h, &v)) return 0;
    for (uint32_t id = (uint32_t)v; id;) {
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

/* A slot for a new name: a freed one, else the next never used (0: the table is full). */
static uint32_t new_slot(intern_table *t) {
    if (t->free_head) {
        uint32_t id = t->free_head;
        t->free_head = entry_of(t, id)->next;
        return id;
    }
    uint32_t i = atomic_load(&t->top);   /* the new id is i + 1, slot index i */
    if ((i >> CHUNK_BITS) >= MAX_CHUNKS) return 0;
    entry **chunk = &t->chunks[i >> CHUNK_BITS];
    if (!*chunk) *chunk = xcalloc(CHUNK_SIZE, sizeof(entry));
    return i + 1;
}

uint32_t intern_put(intern_table *t, const char *s, size_t n) { return intern_put_hashed(t, s, n, hash_bytes(s, n)); }

uint32_t intern_put_hashed(intern_table *t, const char *s, size_t n, uint64_t h) {
    assert(h == hash_bytes(s, n));
    if (n > UINT32_MAX) return 0;
    /* A name already in the table (nearly every call while a fleet is read: each
     * object takes its own reference to names every other one has) is one more
     * reference under the read lock, so the two threads decoding a batch do not
     * queue behind each other for it (perf, `dralloc bench mig_5000nodes`: the write
     * lock's waits and wake-ups were a twentieth of the build). */
    pthread_rwlock_rdlock(&t->lock);
    uint32_t id = find_locked(t, h, s, n);
    if (id) atomic_fetch_add_explicit(&entry_of(t, id)->refs, 1, memory_order_relaxed);
    pthread_rwlock_unlock(&t->lock);
    if (id) return id;
    pthread_rwlock_wrlock(&t->lock);
    id = find_locked(t, h, s, n);   /* put by another thread between the locks */
    if (id) {
        atomic_fetch_add_explicit(&entry_of(t, id)->refs, 1, memory_order_relaxed);
    } else if ((id = new_slot(t))) {
        entry *e = entry_of(t, id);
        char *c = xmalloc(n + 1);
        memcpy(c, s, n);
        c[n] = '\0';
        e->s = c;
        e->len = (uint32_t)n;
        atomic_store_explicit(&e->refs, 1, memory_order_relaxed);
        bool ins;
        uint64_t *head = hmap_upsert(&t->index, h, 0, &ins);
        e->next = (uint32_t)*head;
        *head = id;
        t->live++;
        t->bytes += n + 1;
        if (id > atomic_load(&t->top)) atomic_store(&t->top, id);
    }
    pthread_rwlock_unlock(&t->lock);
    return id;
}

uint32_t intern_retain(intern_table *t, uint32_t id) {
    if (!id) return 0;
    pthread_rwlock_rdlock(&t->lock);   /* raised side by side, as intern_put does */
    entry *e = entry_of(t, id);
    assert(e->s && "intern_retain of a free id");
    uint64_t was = atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    assert(was > 0 && "intern_retain of a free id");
    (void)was;
    pthread_rwlock_unlock(&t->lock);
    return id;
}

uint32_t intern_retain_held(intern_table *t, uint32_t id, uint32_t n) {
    assert(id && n);
    uint64_t was = atomic_fetch_add_explicit(&entry_of(t, id)->refs, n, memory_order_relaxed);
    assert(was > 0 && "intern_retain_held of an id nobody holds");
    (void)was;
    return id;
}

void intern_release(intern_table *t, uint32_t id) { intern_release_n(t, id, 1); }

void intern_release_n(intern_table *t, uint32_t id, uint32_t n) {
    if (!id || !n) return;
    pthread_rwlock_wrlock(&t->lock);
    entry *e = entry_of(t, id);
    assert(e->s && atomic_load_explicit(&e->refs, memory_order_relaxed) >= n && "intern_release of a free id");
    if (atomic_fetch_sub_explicit(&e->refs, n, memory_order_relaxed) == n) {
        /* unlink from its hash chain */
        uint64_t h = hash_bytes(e->s, e->len);
        uint64_t *head = hmap_upsert(&t->index, h, 0, &(bool){false});
        if ((uint32_t)*head == id) {
            if (e->next) *head = e->next;
            else hmap_del(&t->index, h);
        } else {
            entry *p = entry_of(t, (uint32_t)*head);
            while (p->next != id) p = entry_of(t, p->next);
            p->next = e->next;
        }
        t->live--;
        t->bytes -= (size_t)e->len + 1;
        free(e->s);
        e->s = NULL;
        e->len = 0;
        e->next = t->free_head;
        t->free_head = id;
    }
    pthread_rwlock_unlock(&t->lock);
}

const char *intern_str(const intern_table *t, uint32_t id) {
    if (id == 0 || id > atomic_load(&((intern_table *)t)->top)) return NULL;
    return entry_of(t, id)->s;
}

size_t intern_len(const intern_table *t, uint32_t id) {
    if (id == 0 || id > atomic_load(&((intern_table *)t)->top)) return 0;
    return entry_of(t, id)->len;
}

size_t intern_count(const intern_table *t) {
    pthread_rwlock_rdlock((pthread_rwlock_t *)&t->lock);
    size_t n = t->live;
    pthread_rwlock_unlock((pthread_rwlock_t *)&t->lock);
    return n;
}

size_t intern_bytes(const intern_table *t) {
    pthread_rwlock_rdlock((pthread_rwlock_t *)&t->lock);
    /* the strings, their entries, the index's slots */
    size_t n = t->bytes + (size_t)atomic_load(&((intern_table *)t)->top) * sizeof(entry) +
               t->index.cap * (sizeof(hmap_slot) + 1);
    pthread_rwlock_unlock((pthread_rwlock_t *)&t->lock);
    return n;
}
