/* hmap_test.c — the open-addressing map: put/get/del/upsert, keys of any value
 * (0 and all-ones included), iteration, clear, growth, and a long random churn
 * compared step by step with a plain reference array, which exercises the
 * backward-shift deletion on wrapped and clustered probe runs. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/hmap.h"

/* splitmix64: a deterministic stream for the random tests */
static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

Test(hmap, basic_put_get_del) {
    hmap m;
    hmap_init(&m);
    uint64_t v = 99;
    cr_expect_not(hmap_get(&m, 1, &v));
    cr_expect_not(hmap_del(&m, 1));
    cr_expect_eq(hmap_len(&m), 0);

    cr_expect(hmap_put(&m, 0, 10));            /* key 0 is an ordinary key */
    cr_expect(hmap_put(&m, UINT64_MAX, 20));
    cr_expect(hmap_put(&m, hmap_pair(3, 4), 30));
    cr_expect_not(hmap_put(&m, 0, 11));        /* overwrite: not new */
    cr_expect_eq(hmap_len(&m), 3);
    cr_assert(hmap_get(&m, 0, &v));
    cr_expect_eq(v, 11);
    cr_assert(hmap_get(&m, UINT64_MAX, &v));
    cr_expect_eq(v, 20);
    cr_assert(hmap_get(&m, ((uint64_t)3 << 32) | 4, &v));
    cr_expect_eq(v, 30);
    cr_expect(hmap_get(&m, 0, NULL));
    cr_expect_not(hmap_get(&m, 1, NULL));

    cr_expect(hmap_del(&m, 0));
    cr_expect_not(hmap_del(&m, 0));
    cr_expect_not(hmap_get(&m, 0, &v));
    cr_expect_eq(hmap_len(&m), 2);
    hmap_free(&m);
    cr_expect_eq(hmap_len(&m), 0);
    cr_expect_not(hmap_get(&m, UINT64_MAX, &v));
}

Test(hmap, upsert_counts_and_defaults) {
    hmap m;
    hmap_init(&m);
    bool ins;
    for (int round = 0; round < 3; round++)
        for (uint64_t k = 0; k < 100; k++) {
            uint64_t *c = hmap_upsert(&m, k * 7919, 1000, &ins);
            cr_expect_eq(ins, round == 0);
            (*c)++;
        }
    for (uint64_t k = 0; k < 100; k++) {
        uint64_t v;
        cr_assert(hmap_get(&m, k * 7919, &v));
        cr_expect_eq(v, 1003);
    }
    uint64_t *p = hmap_upsert(&m, 5, 0, NULL); /* inserted may be NULL */
    cr_expect_eq(*p, 0);
    hmap_free(&m);
}

Test(hmap, iteration_and_clear) {
    hmap m;
    hmap_init(&m);
    size_t it = 0;
    uint64_t k, v;
    cr_expect_not(hmap_next(&m, &it, &k, &v)); /* empty, never allocated */
    for (uint64_t i = 1; i <= 500; i++) hmap_put(&m, i << 20, i);
    cr_expect_geq(m.cap * 7, hmap_len(&m) * 10, "load stays at or below 70%%");
    unsigned char seen[501] = {0};
    size_t count = 0;
    for (it = 0; hmap_next(&m, &it, &k, &v);) {
        cr_assert_eq(k, v << 20);
        cr_assert_eq(seen[v], 0, "key seen twice");
        seen[v] = 1;
        count++;
    }
    cr_expect_eq(count, 500);
    size_t cap = m.cap;
    hmap_clear(&m);
    cr_expect_eq(hmap_len(&m), 0);
    cr_expect_eq(m.cap, cap, "clear keeps the table");
    cr_expect_not(hmap_get(&m, 1 << 20, &v));
    it = 0;
    cr_expect_not(hmap_next(&m, &it, &k, &v));
    hmap_put(&m, 42, 43);
    cr_assert(hmap_get(&m, 42, &v));
    cr_expect_eq(v, 43);
    hmap_free(&m);
}

/* The reference: a flat array over a fixed key pool. */
#define POOL 1500

static void check_all(const hmap *m, const uint64_t *keys, const bool *present, const uint64_t *vals) {
    size_t n = 0;
    for (size_t i = 0; i < POOL; i++) {
        uint64_t v;
        bool got = hmap_get(m, keys[i], &v);
        cr_assert_eq(got, present[i], "key %zu presence", i);
        if (got) cr_assert_eq(v, vals[i]);
        n += present[i];
    }
    cr_assert_eq(hmap_len(m), n);
    size_t it = 0, seen = 0;
    uint64_t k, v;
    while (hmap_next(m, &it, &k, &v)) seen++;
    cr_assert_eq(seen, n);
}

static void churn(uint64_t seed, bool clustered) {
    uint64_t s = seed;
    uint64_t keys[POOL];
    bool present[POOL] = {0};
    uint64_t vals[POOL] = {0};
    for (size_t i = 0; i < POOL; i++) keys[i] = clustered ? (uint64_t)i : rnd(&s);
    keys[0] = 0;
    keys[1] = UINT64_MAX;
    hmap m;
    hmap_init(&m);
    for (int op = 0; op < 60000; op++) {
        uint64_t r = rnd(&s);
        size_t i = (size_t)(r % POOL);
        /* phases: mostly inserts, then mostly deletes, so the table fills up and drains */
        int phase = (op / 5000) % 2;
        int kind = (int)((r >> 32) % 10);
        if (kind < (phase ? 3 : 7)) {
            uint64_t v = r >> 7;
            bool isnew = hmap_put(&m, keys[i], v);
            cr_assert_eq(isnew, !present[i], "op %d put", op);
            present[i] = true;
            vals[i] = v;
        } else if (kind < 9) {
            bool did = hmap_del(&m, keys[i]);
            cr_assert_eq(did, present[i], "op %d del", op);
            present[i] = false;
        } else {
            uint64_t v;
            bool got = hmap_get(&m, keys[i], &v);
            cr_assert_eq(got, present[i], "op %d get", op);
            if (got) cr_assert_eq(v, vals[i]);
        }
        if (op % 997 == 0) check_all(&m, keys, present, vals);
    }
    check_all(&m, keys, present, vals);
    /* drain completely: every deletion must keep the rest reachable */
    for (size_t i = 0; i < POOL; i++) {
        if (!present[i]) continue;
        cr_assert(hmap_del(&m, keys[i]));
        present[i] = false;
        if (i % 50 == 0) check_all(&m, keys, present, vals);
    }
    cr_expect_eq(hmap_len(&m), 0);
    hmap_free(&m);
}

Test(hmap, churn_random_keys_matches_reference) { churn(1, false); }
Test(hmap, churn_sequential_keys_matches_reference) { churn(2, true); }

/* A small table kept near its load limit, with keys chosen so that their home
 * slots sit at the end of the slot array: probe runs wrap around to the start,
 * and deletions must shift wrapped entries back across the array boundary. */
Test(hmap, churn_small_table_with_wrapping_runs) {
    enum { K = 10, CAP = 16 }; /* 16 slots; upsert grows when len + 1 > 11.2 */
    for (uint64_t seed = 1; seed <= 20; seed++) {
        uint64_t s = seed;
        uint64_t keys[K];
        bool present[K] = {0};
        for (int i = 0; i < K; i++) {
            /* 7 keys at home 13..15, 3 at home 0..1 */
            uint64_t k;
            do k = rnd(&s);
            while (i < 7 ? (hash_u64(k) & (CAP - 1)) < 13 : (hash_u64(k) & (CAP - 1)) > 1);
            keys[i] = k;
        }
        hmap m;
        hmap_init(&m);
        for (int op = 0; op < 4000; op++) {
            uint64_t r = rnd(&s);
            int i = (int)(r % K);
            if (r & 0x100) {
                cr_assert_eq(hmap_put(&m, keys[i], (uint64_t)i), !present[i]);
                present[i] = true;
            } else {
                cr_assert_eq(hmap_del(&m, keys[i]), present[i]);
                present[i] = false;
            }
            for (int j = 0; j < K; j++) {
                uint64_t v;
                cr_assert_eq(hmap_get(&m, keys[j], &v), present[j], "seed %d op %d key %d", (int)seed, op, j);
                if (present[j]) cr_assert_eq(v, (uint64_t)j);
            }
        }
        cr_expect_eq(m.cap, CAP, "never needed to grow");
        hmap_free(&m);
    }
}
