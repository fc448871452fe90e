/* pmap.c — the hash array mapped trie and the chunked copy-on-write map (pmap.h).
 *
 * A trie node is a bitmap of the 64 positions its level's 6 hash bits can take and
 * one slot per set bit, in position order: a slot is a leaf (hash, value) or a child
 * node. Collision nodes (past the last level) hold leaves of one hash, unordered.
 * Every change starts from the root: `own` returns a node only this version holds —
 * the node itself when its count is 1, else a copy (retaining its children and
 * values) — and the change goes on in that node, so a path is copied once per
 * version and changed in place afterwards. A deletion that leaves a node with a
 * single leaf pulls the leaf up into the parent, so a version's shape depends only
 * on its keys. */
#include "base/pmap.h"
#include "base/hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum { BITS = 6, LEVELS = 11 };   /* 11 × 6 ≥ 64: level LEVELS holds collision nodes */

typedef struct pmap_slot {
    uint64_t hash;
    void *val;               /* the leaf's value, when child is NULL */
    pmap_node *child;
} pmap_slot;

struct pmap_node {
    _Atomic long refs;       /* parent slots and versions (roots) pointing here */
    uint64_t bitmap;         /* 0 in collision nodes */
    uint32_t n;
    pmap_slot slot[];
};

static pmap_node *node_alloc(uint32_t n) {
    pmap_node *x = xmalloc(sizeof *x + (n ? n : 1) * sizeof(pmap_slot));
    atomic_init(&x->refs, 1);
    x->bitmap = 0;
    x->n = n;
    return x;
}

static void val_retain(const pmap_ops *ops, void *v) {
    if (ops && ops->retain) ops->retain(v);
}

static void val_release(const pmap_ops *ops, void *v) {
    if (ops && ops->release) ops->release(v);
}

static pmap_node *node_retain(pmap_node *x) {
    atomic_fetch_add_explicit(&x->refs, 1, memory_order_relaxed);
    return x;
}

static void node_release(const pmap_ops *ops, pmap_node *x) {
    if (!x || atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1) return;
    for (uint32_t i = 0; i < x->n; i++) {
        if (x->slot[i].child) node_release(ops, x->slot[i].child);
        else val_release(ops, x->slot[i].val);
    }
    free(x);
}

/* Retains what a copy of x's slots [0, n) points to. */
static void retain_slots(const pmap_ops *ops, const pmap_slot *s, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (s[i].child) node_retain(s[i].child);
        else val_retain(ops, s[i].val);
    }
}

/* x, held once by the caller, made private to it. */
static pmap_node *own(const pmap_ops *ops, pmap_node *x) {
    /* acquire: when another version let go of x, its retains of x's children are seen */
    if (atomic_load_explicit(&x->refs, memory_order_acquire) == 1) return x;
    pmap_node *c = node_alloc(x->n);
    c->bitmap = x->bitmap;
    memcpy(c->slot, x->slot, x->n * sizeof *x->slot);
    retain_slots(ops, c->slot, c->n);
    node_release(ops, x);
    return c;
}

/* x (private) with a slot inserted at i: x itself grown, or a new node. */
static pmap_node *insert_slot(pmap_node *x, uint32_t i, pmap_slot s) {
    x = xrealloc(x, sizeof *x + (x->n + 1) * sizeof(pmap_slot));
    memmove(&x->slot[i + 1], &x->slot[i], (x->n - i) * sizeof *x->slot);
    x->slot[i] = s;
    x->n++;
    return x;
}

static void remove_slot(pmap_node *x, uint32_t i) {
    memmove(&x->slot[i], &x->slot[i + 1], (x->n - i - 1) * sizeof *x->slot);
    x->n--;
}

static inline uint32_t pos_of(uint64_t h, unsigned level) { return (uint32_t)(h >> (level * BITS)) & 63; }
static inline uint32_t index_of(uint64_t bitmap, uint32_t pos) {
    return (uint32_t)__builtin_popcountll(bitmap & ((1ull << pos) - 1));
}

static bool matches(const pmap_slot *s, uint64_t h, pmap_match match, const void *key) {
    return !s->child && s->hash == h && (!match || match(s->val, key));
}

void pmap_init(pmap *m, const pmap_ops *ops) {
    m->root = NULL;
    m->len = 0;
    m->ops = ops;
}

void pmap_free(pmap *m) {
    node_release(m->ops, m->root);
    m->root = NULL;
    m->len = 0;
}

void pmap_share(pmap *dst, const pmap *src) {
    dst->root = src->root ? node_retain(src->root) : NULL;
    dst->len = src->len;
    dst->ops = src->ops;
}

void *pmap_get(const pmap *m, uint64_t h, pmap_match match, const void *key) {
    const pmap_node *x = m->root;
    for (unsigned level = 0; x; level++) {
        if (level >= LEVELS) {
            for (uint32_t i = 0; i < x->n; i++)
                if (matches(&x->slot[i], h, match, key)) return x->slot[i].val;
            return NULL;
        }
        uint32_t pos = pos_of(h, level);
        if (!(x->bitmap & (1ull << pos))) return NULL;
        const pmap_slot *s = &x->slot[index_of(x->bitmap, pos)];
        if (!s->child) return matches(s, h, match, key) ? s->val : NULL;
        x = s->child;
    }
    return NULL;
}

/* Puts into x (held once by the caller; NULL: empty) at level; returns the node to
 * hold instead. */
static pmap_node *put(const pmap_ops *ops, pmap_node *x, unsigned level, uint64_t h, void *val, pmap_match match,
                      const void *key, bool *added) {
    pmap_slot leaf = {.hash = h, .val = val};
    if (!x) {
        x = node_alloc(0);
        *added = true;
        if (level >= LEVELS) return insert_slot(x, 0, leaf);
        x->bitmap = 1ull << pos_of(h, level);
        return insert_slot(x, 0, leaf);
    }
    x = own(ops, x);
    if (level >= LEVELS) {
        for (uint32_t i = 0; i < x->n; i++)
            if (matches(&x->slot[i], h, match, key)) {
                val_release(ops, x->slot[i].val);
                x->slot[i].val = val;
                *added = false;
                return x;
            }
        *added = true;
        return insert_slot(x, x->n, leaf);
    }
    uint32_t pos = pos_of(h, level), i = index_of(x->bitmap, pos);
    if (!(x->bitmap & (1ull << pos))) {
        *added = true;
        x->bitmap |= 1ull << pos;
        return insert_slot(x, i, leaf);
    }
    pmap_slot *s = &x->slot[i];
    if (s->child) {
        s->child = put(ops, s->child, level + 1, h, val, match, key, added);
    } else if (matches(s, h, match, key)) {
        val_release(ops, s->val);
        s->val = val;
        *added = false;
    } else {
        /* two leaves at one position: push the old one a level down, then the new */
        bool ignored;
        pmap_node *sub = put(ops, NULL, level + 1, s->hash, s->val, NULL, NULL, &ignored);
        s->child = put(ops, sub, level + 1, h, val, match, key, added);
        s->val = NULL;
    }
    return x;
}

bool pmap_put(pmap *m, uint64_t h, void *val, pmap_match match, const void *key) {
    assert(val && "pmap values are not NULL: NULL is what pmap_get answers for a missing key");
    bool added = false;
    m->root = put(m->ops, m->root, 0, h, val, match, key, &added);
    m->len += added;
    return added;
}

/* Deletes from x (held once by the caller; the key is known to be there); returns
 * the node to hold instead, NULL when it emptied. A non-root node left with one leaf
 * is returned as is: the caller pulls the leaf up. */
static pmap_node *del(const pmap_ops *ops, pmap_node *x, unsigned level, uint64_t h, pmap_match match,
                      const void *key) {
    x = own(ops, x);
    if (level >= LEVELS) {
        for (uint32_t i = 0; i < x->n; i++)
            if (matches(&x->slot[i], h, match, key)) {
                val_release(ops, x->slot[i].val);
                remove_slot(x, i);
                break;
            }
    } else {
        uint32_t pos = pos_of(h, level), i = index_of(x->bitmap, pos);
        pmap_slot *s = &x->slot[i];
        if (s->child) {
            pmap_node *c = del(ops, s->child, level + 1, h, match, key);
            if (c && c->n == 1 && !c->slot[0].child) {
                /* one leaf left below: it moves up here (c is private: just freed) */
                *s = c->slot[0];
                free(c);
            } else if (c) {
                s->child = c;
            } else {
                x->bitmap &= ~(1ull << pos);
                remove_slot(x, i);
            }
        } else {
            val_release(ops, s->val);
            x->bitmap &= ~(1ull << pos);
            remove_slot(x, i);
        }
    }
    if (!x->n) {
        free(x);
        return NULL;
    }
    return x;
}

bool pmap_del(pmap *m, uint64_t h, pmap_match match, const void *key) {
    if (!pmap_get(m, h, match, key)) return false;   /* nothing is copied for a missing key */
    m->root = del(m->ops, m->root, 0, h, match, key);
    m->len--;
    return true;
}

void pmap_iter_init(pmap_iter *it, const pmap *m) {
    it->depth = m->root ? 0 : -1;
    it->stack[0] = m->root;
    it->pos[0] = 0;
}

bool pmap_next(pmap_iter *it, uint64_t *hash, void **val) {
    while (it->depth >= 0) {
        const pmap_node *x = it->stack[it->depth];
        if (it->pos[it->depth] >= x->n) {
            it->depth--;
            continue;
        }
        const pmap_slot *s = &x->slot[it->pos[it->depth]++];
        if (s->child) {
            assert(it->depth + 1 < (int)ARRAY_SIZE(it->stack));
            it->depth++;
            it->stack[it->depth] = s->child;
            it->pos[it->depth] = 0;
            continue;
        }
        if (hash) *hash = s->hash;
        if (val) *val = s->val;
        return true;
    }
    return false;
}

/* ---- cmap ------------------------------------------------------------------------------ */

enum { CHUNK_TARGET = 256 };   /* entries per chunk before the chunk count doubles */

static void chunk_release(const pmap_ops *ops, cmap_chunk *c) {
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    if (ops && ops->release) {
        uint64_t k, v;
        for (size_t i = 0; hmap_next(&c->m, &i, &k, &v);) ops->release((void *)(uintptr_t)v);
    }
    hmap_free(&c->m);
    free(c);
}

static inline size_t chunk_of(const cmap *m, uint64_t key) {
    return m->bits ? (size_t)(hash_u64(key) >> (64 - m->bits)) : 0;
}

static cmap_dir *dir_new(uint32_t bits, bool zero) {
    size_t size = sizeof(cmap_dir) + ((size_t)1 << bits) * sizeof(cmap_chunk *);
    cmap_dir *d = zero ? xcalloc(1, size) : xmalloc(size);
    atomic_init(&d->refs, 1);
    return d;
}

static void dir_release(const pmap_ops *ops, cmap_dir *d, uint32_t bits) {
    if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    for (size_t i = 0; i < (size_t)1 << bits; i++) chunk_release(ops, d->c[i]);
    free(d);
}

void cmap_init(cmap *m, const pmap_ops *ops) {
    m->dir = dir_new(0, true);
    m->bits = 0;
    m->len = 0;
    m->ops = ops;
}

void cmap_free(cmap *m) {
    if (!m->dir) return;
    dir_release(m->ops, m->dir, m->bits);
    m->dir = NULL;
    m->len = 0;
}

void cmap_share(cmap *dst, const cmap *src) {
    atomic_fetch_add_explicit(&src->dir->refs, 1, memory_order_relaxed);
    *dst = *src;
}

void cmap_prefetch(const cmap *m, uint64_t key) {
    if (!m->dir) return;
    const cmap_chunk *c = m->dir->c[chunk_of(m, key)];
    if (c) hmap_prefetch(&c->m, key);
}

void cmap_prefetch_chunk(const cmap *m, uint64_t key) {
    if (m->dir) __builtin_prefetch(m->dir->c[chunk_of(m, key)]);
}

bool cmap_get(const cmap *m, uint64_t key, uint64_t *val) {
    const cmap_chunk *c = m->dir->c[chunk_of(m, key)];
    return c && hmap_get(&c->m, key, val);
}

/* m's chunk pointers, private to m: copied (each chunk retained) while shared. */
static cmap_dir *dir_own(cmap *m) {
    /* acquire: when another version let go of the dir, its retains are seen */
    if (atomic_load_explicit(&m->dir->refs, memory_order_acquire) == 1) return m->dir;
    size_t n = (size_t)1 << m->bits;
    cmap_dir *d = dir_new(m->bits, false);   /* every pointer written below */
    for (size_t i = 0; i < n; i++)
        if ((d->c[i] = m->dir->c[i])) atomic_fetch_add_explicit(&d->c[i]->refs, 1, memory_order_relaxed);
    dir_release(m->ops, m->dir, m->bits);
    return m->dir = d;
}

/* Chunk i, private to m (created when missing). */
static cmap_chunk *chunk_own(cmap *m, size_t i) {
    cmap_dir *d = dir_own(m);
    cmap_chunk *c = d->c[i];
    if (!c) {
        c = xcalloc(1, sizeof *c);
        atomic_init(&c->refs, 1);
        hmap_init(&c->m);
        return d->c[i] = c;
    }
    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1) return c;
    cmap_chunk *o = xcalloc(1, sizeof *o);
    atomic_init(&o->refs, 1);
    hmap_copy(&o->m, &c->m);
    if (m->ops && m->ops->retain) {
        uint64_t k, v;
        for (size_t it = 0; hmap_next(&o->m, &it, &k, &v);) m->ops->retain((void *)(uintptr_t)v);
    }
    chunk_release(m->ops, c);
    return d->c[i] = o;
}

/* Twice the chunks, every entry moved: amortised O(1) per insertion, like a table
 * that doubles. */
static void cmap_grow(cmap *m) {
    cmap g = {.dir = dir_new(m->bits + 1, true), .bits = m->bits + 1, .ops = m->ops};
    for (size_t i = 0; i < (size_t)1 << m->bits; i++) {
        const cmap_chunk *c = m->dir->c[i];
        if (!c) continue;
        uint64_t k, v;
        for (size_t it = 0; hmap_next(&c->m, &it, &k, &v);) {
            if (m->ops && m->ops->retain) m->ops->retain((void *)(uintptr_t)v);
            hmap_put(&chunk_own(&g, chunk_of(&g, k))->m, k, v);
            g.len++;
        }
    }
    cmap_free(m);
    *m = g;
}

uint64_t *cmap_upsert(cmap *m, uint64_t key, uint64_t dflt, bool *inserted) {
    if (m->len + 1 > ((size_t)CHUNK_TARGET << m->bits) && !cmap_get(m, key, NULL)) cmap_grow(m);
    bool ins;
    uint64_t *v = hmap_upsert(&chunk_own(m, chunk_of(m, key))->m, key, dflt, &ins);
    m->len += ins;
    if (inserted) *inserted = ins;
    return v;
}

bool cmap_put(cmap *m, uint64_t key, uint64_t val) {
    bool ins;
    uint64_t *v = cmap_upsert(m, key, val, &ins);
    if (!ins && *v != val && m->ops && m->ops->release) m->ops->release((void *)(uintptr_t)*v);
    *v = val;
    return ins;
}

bool cmap_del(cmap *m, uint64_t key) {
    uint64_t v;
    if (!cmap_get(m, key, &v)) return false;
    hmap_del(&chunk_own(m, chunk_of(m, key))->m, key);
    if (m->ops && m->ops->release) m->ops->release((void *)(uintptr_t)v);
    m->len--;
    return true;
}
