/* pmap_test.c — the persistent maps (base/pmap.h): the trie's put/get/replace/delete
 * and iteration, versions that share structure and stay what they were while others
 * change (also from several threads at once), keys whose hashes collide in part or in
 * full, and the chunked copy-on-write map; every test counts its live values, so a
 * missed or doubled release shows as a count (and ASan/LSan see the nodes). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/pmap.h"

static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A reference-counted value with a name; `live` counts the ones not yet freed. */
static _Atomic long live;

typedef struct val {
    _Atomic long refs;
    char key[24];
    int payload;
} val;

static val *val_new(const char *key, int payload) {
    val *v = calloc(1, sizeof *v);
    atomic_init(&v->refs, 1);
    snprintf(v->key, sizeof v->key, "%s", key);
    v->payload = payload;
    atomic_fetch_add(&live, 1);
    return v;
}

static void v_retain(void *p) { atomic_fetch_add(&((val *)p)->refs, 1); }
static void v_release(void *p) {
    val *v = p;
    if (atomic_fetch_sub(&v->refs, 1) == 1) {
        atomic_fetch_sub(&live, 1);
        free(v);
    }
}
static const pmap_ops VOPS = {v_retain, v_release};
static bool by_key(const void *v, const void *key) { return !strcmp(((const val *)v)->key, key); }

/* The hash of a key under test: full, or cut down to `mask` so keys collide. */
static uint64_t mask = ~0ull;
static uint64_t h_of(const char *k) { return hash_bytes(k, strlen(k)) & mask; }

static void put(pmap *m, const char *k, int payload) { pmap_put(m, h_of(k), val_new(k, payload), by_key, k); }
static int get(const pmap *m, const char *k) {
    const val *v = pmap_get(m, h_of(k), by_key, k);
    return v ? v->payload : -1;
}

static void setup(void) {
    atomic_store(&live, 0);
    mask = ~0ull;
}

TestSuite(pmap, .init = setup);

Test(pmap, put_get_replace_delete) {
    pmap m;
    pmap_init(&m, &VOPS);
    cr_assert_eq(get(&m, "a"), -1);
    cr_assert_not(pmap_del(&m, h_of("a"), by_key, "a"));
    char k[16];
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        put(&m, k, i);
    }
    cr_assert_eq(pmap_len(&m), 5000);
    cr_assert_eq(atomic_load(&live), 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        cr_assert_eq(get(&m, k), i);
    }
    /* replacing releases the old value, keeps the count */
    cr_assert_not(pmap_put(&m, h_of("k7"), val_new("k7", 70), by_key, "k7"));
    cr_assert_eq(get(&m, "k7"), 70);
    cr_assert_eq(pmap_len(&m), 5000);
    cr_assert_eq(atomic_load(&live), 5000);
    for (int i = 0; i < 5000; i += 2) {
        snprintf(k, sizeof k, "k%d", i);
        cr_assert(pmap_del(&m, h_of(k), by_key, k));
    }
    cr_assert_eq(pmap_len(&m), 2500);
    cr_assert_eq(atomic_load(&live), 2500);
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        cr_assert_eq(get(&m, k), i % 2 ? (i == 7 ? 70 : i) : -1);
    }
    pmap_free(&m);
    cr_assert_eq(atomic_load(&live), 0);
}

Test(pmap, exact_64_bit_keys_without_match) {
    pmap m;
    pmap_init(&m, NULL);
    static int dummy[4];
    uint64_t keys[] = {0, 1, UINT64_MAX, 1ull << 63, 64, 64ull << 6};
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) pmap_put(&m, keys[i], &dummy[i % 4], NULL, NULL);
    cr_assert_eq(pmap_len(&m), ARRAY_SIZE(keys));
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) cr_assert_eq(pmap_get(&m, keys[i], NULL, NULL), &dummy[i % 4]);
    cr_assert_null(pmap_get(&m, 2, NULL, NULL));
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) cr_assert(pmap_del(&m, keys[i], NULL, NULL));
    cr_assert_eq(pmap_len(&m), 0);
    cr_assert_null(m.root, "an emptied map has no nodes");
    pmap_free(&m);
}

/* A version is a value: changing one leaves the other as it was. */
Test(pmap, versions_share_and_stay_apart) {
    pmap a;
    pmap_init(&a, &VOPS);
    char k[16];
    for (int i = 0; i < 3000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        put(&a, k, i);
    }
    pmap b;
    pmap_share(&b, &a);
    cr_assert_eq(atomic_load(&live), 3000, "sharing copies no value");
    put(&b, "k1", 100);     /* replace */
    put(&b, "new", 5);      /* insert */
    pmap_del(&b, h_of("k2"), by_key, "k2");
    cr_assert_eq(get(&a, "k1"), 1);
    cr_assert_eq(get(&a, "new"), -1);
    cr_assert_eq(get(&a, "k2"), 2);
    cr_assert_eq(get(&b, "k1"), 100);
    cr_assert_eq(get(&b, "new"), 5);
    cr_assert_eq(get(&b, "k2"), -1);
    cr_assert_eq(pmap_len(&a), 3000);
    cr_assert_eq(pmap_len(&b), 3000);
    /* the values both hold are one object each */
    cr_assert_eq(atomic_load(&live), 3002);
    cr_assert_eq(pmap_get(&a, h_of("k9"), by_key, "k9"), pmap_get(&b, h_of("k9"), by_key, "k9"));
    pmap_free(&a);
    for (int i = 3; i < 3000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        cr_assert_eq(get(&b, k), i);
    }
    pmap_free(&b);
    cr_assert_eq(atomic_load(&live), 0);
}

static void collide_churn(uint64_t m_) {
    mask = m_;
    pmap m;
    pmap_init(&m, &VOPS);
    char k[16];
    int model[400];
    for (int i = 0; i < 400; i++) model[i] = -1;
    uint64_t seed = m_ ^ 0x1234;
    for (int step = 0; step < 20000; step++) {
        int i = (int)(rnd(&seed) % 400);
        snprintf(k, sizeof k, "c%d", i);
        if (rnd(&seed) % 3 == 0) {
            cr_assert_eq(pmap_del(&m, h_of(k), by_key, k), model[i] >= 0);
            model[i] = -1;
        } else {
            int p = (int)(rnd(&seed) % 1000);
            put(&m, k, p);
            model[i] = p;
        }
        if (step % 1000 == 0)
            for (int j = 0; j < 400; j++) {
                snprintf(k, sizeof k, "c%d", j);
                cr_assert_eq(get(&m, k), model[j], "mask %llx step %d key %s", (unsigned long long)m_, step, k);
            }
    }
    size_t n = 0;
    for (int j = 0; j < 400; j++) n += model[j] >= 0;
    cr_assert_eq(pmap_len(&m), n);
    cr_assert_eq((size_t)atomic_load(&live), n);
    pmap_free(&m);
    cr_assert_eq(atomic_load(&live), 0);
}

/* Every hash equal (one collision node under a chain of levels), hashes equal in
 * their low bits (long shared paths), and hashes of a few bits (dense nodes). */
Test(pmap, collisions_full_and_partial) {
    collide_churn(0);
    collide_churn(0xF000000000000000ull);
    collide_churn(0x3Full << 58);
    collide_churn(0x7);
}

/* Iteration sees every value once, and two versions with the same keys iterate alike
 * whatever order they were built in. */
Test(pmap, iteration_is_complete_and_canonical) {
    pmap a, b;
    pmap_init(&a, &VOPS);
    pmap_init(&b, &VOPS);
    char k[16];
    for (int i = 0; i < 2000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        put(&a, k, i);
        snprintf(k, sizeof k, "k%d", 1999 - i);
        put(&b, k, 1999 - i);
    }
    /* b also had extra keys, deleted again: the shape depends on the keys only */
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof k, "x%d", i);
        put(&b, k, 0);
    }
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof k, "x%d", i);
        pmap_del(&b, h_of(k), by_key, k);
    }
    char *seen = calloc(2000, 1);
    pmap_iter ia, ib;
    pmap_iter_init(&ia, &a);
    pmap_iter_init(&ib, &b);
    uint64_t ha, hb;
    void *va, *vb;
    size_t n = 0;
    while (pmap_next(&ia, &ha, &va)) {
        cr_assert(pmap_next(&ib, &hb, &vb));
        cr_assert_eq(ha, hb);
        cr_assert_str_eq(((val *)va)->key, ((val *)vb)->key);
        int p = ((val *)va)->payload;
        cr_assert_not(seen[p]);
        seen[p] = 1;
        n++;
    }
    cr_assert_not(pmap_next(&ib, &hb, &vb));
    cr_assert_eq(n, 2000);
    free(seen);
    pmap empty;
    pmap_init(&empty, NULL);
    pmap_iter ie;
    pmap_iter_init(&ie, &empty);
    cr_assert_not(pmap_next(&ie, NULL, NULL));
    pmap_free(&a);
    pmap_free(&b);
    cr_assert_eq(atomic_load(&live), 0);
}

/* Many versions alive at once, each changed at random and checked against its own
 * model: no change leaks into another version. */
Test(pmap, many_versions_random) {
    enum { V = 6, K = 300 };
    mask = 0xFFFF;   /* some collisions too */
    pmap m[V];
    int model[V][K];
    pmap_init(&m[0], &VOPS);
    for (int j = 0; j < K; j++) model[0][j] = -1;
    for (int v = 1; v < V; v++) {
        pmap_share(&m[v], &m[0]);
        memcpy(model[v], model[0], sizeof model[0]);
    }
    uint64_t seed = 42;
    char k[16];
    for (int step = 0; step < 30000; step++) {
        int v = (int)(rnd(&seed) % V), i = (int)(rnd(&seed) % K);
        snprintf(k, sizeof k, "k%d", i);
        int op = (int)(rnd(&seed) % 10);
        if (op == 0) {
            /* fork: v becomes another version of some u */
            int u = (int)(rnd(&seed) % V);
            if (u != v) {
                pmap_free(&m[v]);
                pmap_share(&m[v], &m[u]);
                memcpy(model[v], model[u], sizeof model[u]);
            }
        } else if (op < 4) {
            cr_assert_eq(pmap_del(&m[v], h_of(k), by_key, k), model[v][i] >= 0);
            model[v][i] = -1;
        } else {
            put(&m[v], k, step);
            model[v][i] = step;
        }
        if (step % 2000 == 0)
            for (int w = 0; w < V; w++) {
                size_t n = 0;
                for (int j = 0; j < K; j++) {
                    snprintf(k, sizeof k, "k%d", j);
                    cr_assert_eq(get(&m[w], k), model[w][j], "step %d version %d key %s", step, w, k);
                    n += model[w][j] >= 0;
                }
                cr_assert_eq(pmap_len(&m[w]), n);
            }
    }
    for (int v = 0; v < V; v++) pmap_free(&m[v]);
    cr_assert_eq(atomic_load(&live), 0);
}

/* Threads changing their own versions of one shared map at the same time. */
typedef struct thr {
    pmap m;
    int id;
    bool ok;
} thr;

static void *thread_churn(void *arg) {
    thr *t = arg;
    uint64_t seed = (uint64_t)t->id;
    char k[16];
    int model[256];
    for (int j = 0; j < 256; j++) model[j] = j;   /* the shared start: k<j> = j */
    t->ok = true;
    for (int step = 0; step < 20000; step++) {
        int i = (int)(rnd(&seed) % 256);
        snprintf(k, sizeof k, "k%d", i);
        if (rnd(&seed) % 2) {
            pmap_del(&t->m, h_of(k), by_key, k);
            model[i] = -1;
        } else {
            put(&t->m, k, 1000 * t->id + step);
            model[i] = 1000 * t->id + step;
        }
    }
    for (int j = 0; j < 256; j++) {
        snprintf(k, sizeof k, "k%d", j);
        if (get(&t->m, k) != model[j]) t->ok = false;
    }
    return NULL;
}

Test(pmap, versions_changed_from_threads) {
    pmap base;
    pmap_init(&base, &VOPS);
    char k[16];
    for (int j = 0; j < 256; j++) {
        snprintf(k, sizeof k, "k%d", j);
        put(&base, k, j);
    }
    thr t[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        pmap_share(&t[i].m, &base);
        t[i].id = i + 1;
        pthread_create(&th[i], NULL, thread_churn, &t[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int j = 0; j < 256; j++) {
        snprintf(k, sizeof k, "k%d", j);
        cr_assert_eq(get(&base, k), j, "the base version is untouched");
    }
    for (int i = 0; i < 4; i++) {
        cr_assert(t[i].ok, "thread %d", i);
        pmap_free(&t[i].m);
    }
    pmap_free(&base);
    cr_assert_eq(atomic_load(&live), 0);
}

/* ---- cmap ---------------------------------------------------------------------------- */

Test(cmap, put_get_del_share_grow) {
    cmap a;
    cmap_init(&a, NULL);
    for (uint64_t i = 0; i < 20000; i++) cr_assert(cmap_put(&a, i * 7, i));
    cr_assert_eq(cmap_len(&a), 20000);
    cr_assert_gt(a.bits, 4, "the chunks multiplied as the map grew");
    cmap b;
    cmap_share(&b, &a);
    for (uint64_t i = 0; i < 20000; i += 3) cr_assert(cmap_del(&b, i * 7));
    bool ins;
    (*cmap_upsert(&b, 5 * 7, 0, &ins))++;
    cr_assert_not(ins);
    cr_assert(cmap_put(&b, 1, 99));
    uint64_t v;
    for (uint64_t i = 0; i < 20000; i++) {
        cr_assert(cmap_get(&a, i * 7, &v));
        cr_assert_eq(v, i);
        bool want = i % 3 != 0;
        cr_assert_eq(cmap_get(&b, i * 7, &v), want, "key %llu", (unsigned long long)i);
        if (want) cr_assert_eq(v, i == 5 ? 6 : i);
    }
    cr_assert(cmap_get(&b, 1, &v) && v == 99);
    cr_assert_not(cmap_get(&a, 1, &v));
    cr_assert_eq(cmap_len(&a), 20000);
    cr_assert_eq(cmap_len(&b), 20000 - 6667 + 1);
    cr_assert_not(cmap_del(&b, 3 * 7 * 1000000));
    cmap_free(&a);
    cmap_free(&b);
}

/* Pointer values: a chunk copy retains its values, a delete releases, growth keeps. */
Test(cmap, pointer_values_are_counted) {
    atomic_store(&live, 0);
    cmap a;
    cmap_init(&a, &VOPS);
    for (int i = 0; i < 3000; i++) cmap_put(&a, (uint64_t)i, (uint64_t)(uintptr_t)val_new("v", i));
    cmap b;
    cmap_share(&b, &a);
    cmap_put(&b, 10, (uint64_t)(uintptr_t)val_new("w", -10));
    cmap_del(&b, 11);
    for (int i = 3000; i < 6000; i++) cmap_put(&b, (uint64_t)i, (uint64_t)(uintptr_t)val_new("v", i));
    uint64_t p;
    cr_assert(cmap_get(&a, 10, &p) && ((val *)(uintptr_t)p)->payload == 10);
    cr_assert(cmap_get(&b, 10, &p) && ((val *)(uintptr_t)p)->payload == -10);
    cr_assert(cmap_get(&a, 11, &p));
    cr_assert_not(cmap_get(&b, 11, &p));
    cr_assert_eq(atomic_load(&live), 6001);
    cmap_free(&a);
    cr_assert_eq(atomic_load(&live), 5999);
    cmap_free(&b);
    cr_assert_eq(atomic_load(&live), 0);
}

/* Versions sharing one chunk-pointer array: each one that writes copies it then,
 * whichever writes first (the original included), and one let go first leaves the
 * others whole. */
Test(cmap, shared_pointers_copied_at_the_first_write) {
    cmap a, b, c;
    cmap_init(&a, NULL);
    for (uint64_t i = 0; i < 5000; i++) cmap_put(&a, i, i + 1);
    cmap_share(&b, &a);
    cmap_share(&c, &b);
    cr_assert_eq(a.dir, c.dir);        /* nothing copied yet */
    cmap_put(&a, 1, 1000);             /* the original writes first */
    cr_assert_neq(a.dir, b.dir);
    cr_assert_eq(b.dir, c.dir);
    cmap_del(&c, 2);
    cr_assert_neq(b.dir, c.dir);
    uint64_t v;
    cr_assert(cmap_get(&a, 1, &v) && v == 1000);
    cr_assert(cmap_get(&b, 1, &v) && v == 2);
    cr_assert(cmap_get(&c, 1, &v) && v == 2);
    cr_assert(cmap_get(&a, 2, &v) && cmap_get(&b, 2, &v));
    cr_assert_not(cmap_get(&c, 2, &v));
    cmap_free(&b);                     /* let go in the middle: the others stand */
    for (uint64_t i = 3; i < 5000; i++) {
        cr_assert(cmap_get(&a, i, &v) && v == i + 1);
        cr_assert(cmap_get(&c, i, &v) && v == i + 1);
    }
    cmap d;
    cmap_share(&d, &c);
    for (uint64_t i = 5000; i < 40000; i++) cmap_put(&d, i, i);   /* grown while shared */
    cr_assert_eq(cmap_len(&c), 4999);
    cr_assert_not(cmap_get(&c, 6000, &v));
    cr_assert(cmap_get(&d, 6000, &v) && v == 6000);
    cmap_free(&a);
    cmap_free(&c);
    cmap_free(&d);
}

