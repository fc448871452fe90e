/* catalog.c — the catalog (catalog.h): the intern table and the CEL caches shared by
 * the worlds built on it, and the holds through which decoded objects reference
 * names and programs. */
#include "engine/decode/catalog.h"

#include "base/hash.h"

#include <string.h>

#include <stdlib.h>

dra_catalog *dra__catalog_new(void) {
    dra_catalog *c = xcalloc(1, sizeof *c);
    atomic_init(&c->refs, 1);
    c->names = intern_new();
    c->env = cel_env_new_dra(c->names);
    c->cel = cel_cache_new(c->env);
    c->env_any = cel_env_new_dra_any(c->names);
    c->cel_any = cel_cache_new(c->env_any);
    pthread_mutex_init(&c->shared.lock, NULL);
    arena_init(&c->shared.mem, 0);
    return c;
}

dra_catalog *dra__catalog_retain(dra_catalog *c) {
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

void dra__catalog_release(dra_catalog *c) {
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    cel_cache_free(c->cel);
    cel_cache_free(c->cel_any);
    cel_env_free(c->env_any);
    cel_env_free(c->env);
    intern_free(c->names);
    pthread_mutex_destroy(&c->shared.lock);
    free(c->shared.slot);
    arena_free(&c->shared.mem);
    free(c);
}

void dra__catalog_sizes(dra_catalog *c, dra_catalog_sizes *out) {
    size_t p1, b1, p2, b2;
    cel_cache_stats(c->cel, &p1, &b1);
    cel_cache_stats(c->cel_any, &p2, &b2);
    *out = (dra_catalog_sizes){.names = intern_count(c->names), .name_bytes = intern_bytes(c->names),
                               .programs = p1 + p2, .program_bytes = b1 + b2};
}

/* The slot of hash hv in h's seen-names table: where id is, or the empty slot. */
static uint32_t seen_slot(const dra_holds *h, const intern_table *t, uint64_t hv, const char *s, size_t n) {
    uint32_t mask = h->capseen - 1, i = (uint32_t)hv & mask;
    while (h->seen_id[i] && (h->seen_hash[i] != hv || intern_len(t, h->seen_id[i]) != n ||
                             memcmp(intern_str(t, h->seen_id[i]), s, n)))
        i = (i + 1) & mask;
    return i;
}

static void seen_grow(dra_holds *h, const intern_table *t) {
    uint64_t *oh = h->seen_hash;
    uint32_t *oi = h->seen_id, ocap = h->capseen;
    h->capseen = ocap ? ocap * 2 : 64;
    h->seen_hash = xcalloc(h->capseen, sizeof *h->seen_hash);
    h->seen_id = xcalloc(h->capseen, sizeof *h->seen_id);
    for (uint32_t i = 0; i < ocap; i++)
        if (oi[i]) {
            uint32_t j = seen_slot(h, t, oh[i], intern_str(t, oi[i]), intern_len(t, oi[i]));
            h->seen_hash[j] = oh[i];
            h->seen_id[j] = oi[i];
        }
    free(oh);
    free(oi);
}

/* a node's device, counter and attribute names, and room; references taken for
 * the objects NAME_MEMO_SPARE at a time */
enum { NAME_MEMO_SLOTS = 1024, NAME_MEMO_SPARE = 64 };

struct dra_name_memo {
    uint64_t hash[NAME_MEMO_SLOTS];
    uint32_t id[NAME_MEMO_SLOTS];      /* 0: empty; else held by the memo, once and spare[] times */
    uint32_t spare[NAME_MEMO_SLOTS];   /* references taken ahead for the objects that meet it */
};

dra_name_memo *dra__name_memo_new(void) { return xcalloc(1, sizeof(dra_name_memo)); }

void dra__name_memo_free(dra_name_memo *m, dra_catalog *c) {
    if (!m) return;
    for (uint32_t i = 0; i < NAME_MEMO_SLOTS; i++)
        if (m->id[i]) intern_release_n(c->names, m->id[i], 1 + m->spare[i]);
    free(m);
}

/* s's id, one more reference to it taken: one of the spare references of m's slot for
 * hash hv when it holds s (NAME_MEMO_SPARE more taken at once when none is left: a
 * reference each, even without the lock, was the line both threads wrote for every
 * device's name), else from the table, then kept in that slot when it is empty. */
static uint32_t memo_intern(dra_catalog *c, dra_name_memo *m, uint64_t hv, const char *s, size_t n) {
    uint32_t i = (uint32_t)hv & (NAME_MEMO_SLOTS - 1), id = m->id[i];
    if (id && m->hash[i] == hv && intern_len(c->names, id) == n && !memcmp(intern_str(c->names, id), s, n)) {
        if (!m->spare[i]) m->spare[i] = NAME_MEMO_SPARE, intern_retain_held(c->names, id, NAME_MEMO_SPARE);
        m->spare[i]--;
        return id;
    }
    id = intern_put_hashed(c->names, s, n, hv);
    if (id && !m->id[i]) m->hash[i] = hv, m->id[i] = intern_retain_held(c->names, id, 1), m->spare[i] = 0;
    return id;
}

uint32_t dra__cat_intern(dra_catalog *c, dra_holds *h, dra_name_memo *m, const char *s, size_t n) {
    uint64_t hv = 0;
    uint32_t slot = 0;
    if (h) {
        /* held already by this object: no lock, no second reference */
        if (h->nnames * 2 + 2 > h->capseen) seen_grow(h, c->names);
        hv = hash_bytes(s, n);
        slot = seen_slot(h, c->names, hv, s, n);
        if (h->seen_id[slot]) return h->seen_id[slot];
    }
    uint32_t id = !h ? intern_put(c->names, s, n)
                  : m ? memo_intern(c, m, hv, s, n)
                      : intern_put_hashed(c->names, s, n, hv);
    if (id && h) {
        h->seen_hash[slot] = hv;
        h->seen_id[slot] = id;
        if (h->nnames == h->capnames) {
            h->capnames = h->capnames ? h->capnames * 2 : 16;
            h->names = xrealloc(h->names, h->capnames * sizeof *h->names);
        }
        h->names[h->nnames++] = id;
    }
    return id;
}

const cel_program *dra__cat_compile(dra_catalog *c, dra_holds *h, bool any, const char *expr, size_t n, err *e,
                                    char **text) {
    const cel_program *p = cel_cache_get_text(any ? c->cel_any : c->cel, expr, n, e, text);
    if (p && h) {
        if (h->nprogs == h->capprogs) {
            h->capprogs = h->capprogs ? h->capprogs * 2 : 4;
            h->progs = xrealloc(h->progs, h->capprogs * sizeof *h->progs);
        }
        h->progs[h->nprogs++] = (dra_held_prog){any, p};
    }
    return p;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_prog(const void *a, const void *b) {
    const dra_held_prog *x = a, *y = b;
    if (x->any != y->any) return x->any ? 1 : -1;
    return x->p < y->p ? -1 : x->p > y->p;
}

void dra__holds_compact(dra_holds *h, dra_catalog *c) {
    free(h->seen_hash);
    free(h->seen_id);
    h->seen_hash = NULL, h->seen_id = NULL, h->capseen = 0;
    if (h->nnames > 1) {
        qsort(h->names, h->nnames, sizeof *h->names, cmp_u32);
        uint32_t k = 1;
        for (uint32_t i = 1; i < h->nnames; i++) {
            if (h->names[i] == h->names[k - 1]) intern_release(c->names, h->names[i]);
            else h->names[k++] = h->names[i];
        }
        h->nnames = k;
    }
    if (h->nprogs > 1) {
        qsort(h->progs, h->nprogs, sizeof *h->progs, cmp_prog);
        uint32_t k = 1;
        for (uint32_t i = 1; i < h->nprogs; i++) {
            const dra_held_prog *a = &h->progs[i], *b = &h->progs[k - 1];
            if (a->p == b->p && a->any == b->any) cel_cache_release(a->any ? c->cel_any : c->cel, a->p);
            else h->progs[k++] = *a;
        }
        h->nprogs = k;
    }
    /* most objects hold a few names: give the slack back */
    if (h->capnames > h->nnames + 8) {
        h->capnames = h->nnames;
        h->names = h->nnames ? xrealloc(h->names, h->nnames * sizeof *h->names) : (free(h->names), NULL);
    }
}

void dra__holds_release(dra_holds *h, dra_catalog *c) {
    /* programs first: each gives back the names it interned itself */
    for (uint32_t i = 0; i < h->nprogs; i++) cel_cache_release(h->progs[i].any ? c->cel_any : c->cel, h->progs[i].p);
    for (uint32_t i = 0; i < h->nnames; i++) intern_release(c->names, h->names[i]);
    free(h->names);
    free(h->progs);
    free(h->seen_hash);
    free(h->seen_id);
    *h = (dra_holds){0};
}
