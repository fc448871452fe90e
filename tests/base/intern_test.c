/* intern_test.c — string interning: ids in insertion order and stable, lookups
 * that never insert, id → string and length, strings with NUL bytes and the empty
 * string, enough strings to span several chunks (with string addresses that do
 * not move), and concurrent writers agreeing on ids. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/intern.h"

Test(intern, ids_are_stable_and_in_order) {
    intern_table *t = intern_new();
    cr_expect_eq(intern_count(t), 0);
    uint32_t a = intern_cstr(t, "gpu.example.com");
    uint32_t b = intern_cstr(t, "memory");
    uint32_t c = intern_put(t, "gpu.example.com", 15);
    cr_expect_eq(a, 1);
    cr_expect_eq(b, 2);
    cr_expect_eq(c, a);
    cr_expect_eq(intern_count(t), 2);
    /* a prefix is a different string */
    uint32_t d = intern_put(t, "gpu.example.com", 3);
    cr_expect_eq(d, 3);
    cr_expect_str_eq(intern_str(t, d), "gpu");
    intern_free(t);
}

Test(intern, lookup_does_not_insert) {
    intern_table *t = intern_new();
    cr_expect_eq(intern_get(t, "absent", 6), 0);
    cr_expect_eq(intern_count(t), 0);
    uint32_t id = intern_cstr(t, "present");
    cr_expect_eq(intern_get(t, "present", 7), id);
    cr_expect_eq(intern_get(t, "absent", 6), 0);
    cr_expect_eq(intern_get(t, "presen", 6), 0);
    cr_expect_eq(intern_count(t), 1);
    intern_free(t);
}

Test(intern, id_to_string_and_len) {
    intern_table *t = intern_new();
    uint32_t e = intern_put(t, "", 0);
    uint32_t z = intern_put(t, "a\0b", 3);
    uint32_t a = intern_put(t, "a", 1);
    cr_expect_neq(e, 0);
    cr_expect_neq(z, a);
    cr_expect_str_eq(intern_str(t, e), "");
    cr_expect_eq(intern_len(t, e), 0);
    cr_expect_eq(intern_len(t, z), 3);
    cr_expect(memcmp(intern_str(t, z), "a\0b", 4) == 0, "stored with its NUL and a terminator");
    cr_expect_eq(intern_get(t, "a\0b", 3), z);
    cr_expect_eq(intern_get(t, "", 0), e);
    cr_expect_null(intern_str(t, 0));
    cr_expect_null(intern_str(t, 4));
    cr_expect_eq(intern_len(t, 0), 0);
    cr_expect_eq(intern_len(t, 99), 0);
    intern_free(t);
}

Test(intern, many_strings_across_chunks) {
    intern_table *t = intern_new();
    enum { N = 20000 }; /* several 4096-entry chunks */
    char buf[64];
    const char *first = intern_str(t, intern_cstr(t, "name-0"));
    for (int i = 1; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "name-%d", i);
        cr_assert_eq(intern_put(t, buf, (size_t)n), (uint32_t)i + 1);
    }
    cr_expect_eq(intern_count(t), N);
    cr_expect_eq(intern_str(t, 1), first, "entries never move");
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "name-%d", i);
        uint32_t id = intern_get(t, buf, (size_t)n);
        cr_assert_eq(id, (uint32_t)i + 1);
        cr_assert_str_eq(intern_str(t, id), buf);
        cr_assert_eq(intern_len(t, id), (size_t)n);
    }
    cr_expect_eq(intern_put(t, "name-12345", 10), 12346);
    cr_expect_eq(intern_count(t), N);
    intern_free(t);
}

typedef struct worker {
    intern_table *t;
    int offset;
    uint32_t ids[2000];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    char buf[32];
    for (int k = 0; k < 2000; k++) {
        int i = (k + w->offset) % 2000;
        int n = snprintf(buf, sizeof buf, "shared-%d", i);
        w->ids[i] = intern_put(w->t, buf, (size_t)n);
    }
    return NULL;
}

Test(intern, concurrent_writers_agree) {
    intern_table *t = intern_new();
    static worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i].t = t;
        w[i].offset = i * 500;
        cr_assert_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    cr_expect_eq(intern_count(t), 2000);
    char buf[32];
    for (int i = 0; i < 2000; i++) {
        for (int j = 1; j < 4; j++) cr_assert_eq(w[j].ids[i], w[0].ids[i]);
        snprintf(buf, sizeof buf, "shared-%d", i);
        cr_assert_str_eq(intern_str(t, w[0].ids[i]), buf);
    }
    intern_free(t);
}

/* References: a name lives while it is held, the last release frees it and its id
 * goes to the next new name; a table that interns and releases without end stays the
 * size of what is held (issue #21: the catalog follows the live objects). */
Test(intern, released_names_are_freed_and_ids_reused) {
    intern_table *t = intern_new();
    uint32_t keep = intern_cstr(t, "gpu.example.com");
    uint32_t a = intern_cstr(t, "churn-1");
    cr_expect_eq(intern_cstr(t, "churn-1"), a, "a second reference, the same id");
    cr_expect_eq(intern_count(t), 2);
    intern_release(t, a);
    cr_expect_eq(intern_get(t, "churn-1", 7), a, "one reference is left");
    intern_release(t, a);
    cr_expect_eq(intern_get(t, "churn-1", 7), 0, "the last release frees the name");
    cr_expect_eq(intern_count(t), 1);
    uint32_t b = intern_cstr(t, "churn-2");
    cr_expect_eq(b, a, "a freed id is given to the next new name");
    cr_expect_str_eq(intern_str(t, b), "churn-2");
    cr_expect_eq(intern_retain(t, b), b);
    intern_release(t, b);
    intern_release(t, b);
    size_t bytes0 = intern_bytes(t);
    for (int i = 0; i < 100000; i++) {   /* a long-running writer: new names, released */
        char buf[32];
        int n = snprintf(buf, sizeof buf, "claim-%d", i);
        uint32_t id = intern_put(t, buf, (size_t)n);
        cr_assert_leq(id, 2, "ids stay as dense as the live names (%u)", id);
        intern_release(t, id);
    }
    cr_expect_eq(intern_count(t), 1);
    cr_expect_eq(intern_bytes(t), bytes0);
    cr_expect_str_eq(intern_str(t, keep), "gpu.example.com");
    cr_expect_eq(intern_get(t, "gpu.example.com", 15), keep);
    intern_free(t);
}

/* Names sharing a hash chain unlink one by one: the ones left are still found. */
Test(intern, release_keeps_the_rest_of_a_chain) {
    intern_table *t = intern_new();
    enum { N = 5000 };
    uint32_t ids[N];
    char buf[32];
    for (int i = 0; i < N; i++) ids[i] = intern_put(t, buf, (size_t)snprintf(buf, sizeof buf, "n%d", i));
    for (int i = 0; i < N; i += 2) intern_release(t, ids[i]);
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "n%d", i);
        cr_assert_eq(intern_get(t, buf, (size_t)n), i % 2 ? ids[i] : 0, "%s", buf);
    }
    cr_expect_eq(intern_count(t), N / 2);
    intern_free(t);
}
