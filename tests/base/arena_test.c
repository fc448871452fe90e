/* arena_test.c — the bump allocator: adjacency of small allocations, 16-byte
 * alignment, zeroing, large requests in their own block without wasting the
 * current one, save/reset across blocks, clear keeping the first block, and the
 * string helpers. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

Test(arena, bump_is_contiguous_within_a_block) {
    arena a;
    arena_init(&a, 4096);
    char *p1 = arena_alloc(&a, 1);
    char *p2 = arena_alloc(&a, 1);
    char *p3 = arena_alloc(&a, 17);
    char *p4 = arena_alloc(&a, 32);
    cr_expect_eq(p2 - p1, 16);
    cr_expect_eq(p3 - p2, 16);
    cr_expect_eq(p4 - p3, 32);
    cr_expect_eq(a.total, 16 + 16 + 32 + 32);
    /* a zero-byte request still gets a distinct pointer */
    char *p5 = arena_alloc(&a, 0);
    char *p6 = arena_alloc(&a, 0);
    cr_expect_neq(p5, p6);
    arena_free(&a);
    cr_expect_null(a.cur);
    cr_expect_eq(a.total, 0);
}

Test(arena, every_allocation_is_aligned_and_writable) {
    arena a;
    arena_init(&a, 1024);
    uint32_t x = 12345;
    for (int i = 0; i < 2000; i++) {
        x = x * 1103515245u + 12345u;
        size_t n = (x >> 8) % 700; /* up to 2/3 of a block, so some are "large" */
        unsigned char *p = arena_alloc(&a, n);
        cr_assert(aligned16(p), "allocation %d of %zu bytes not aligned", i, n);
        memset(p, 0xAB, n); /* ASan catches a short block */
    }
    void *s = arena_strdup(&a, "x");
    cr_expect(aligned16(s));
    arena_free(&a);
}

Test(arena, default_block_size) {
    arena a;
    arena_init(&a, 0);
    cr_expect_eq(a.block_size, 64 * 1024);
    void *p = arena_alloc(&a, 100);
    cr_expect_not_null(p);
    arena_free(&a);
}

Test(arena, zalloc_zeroes_reused_memory) {
    arena a;
    arena_init(&a, 4096);
    arena_alloc(&a, 8); /* a block must exist for the mark to keep it */
    arena_mark m = arena_save(&a);
    unsigned char *p = arena_alloc(&a, 256);
    memset(p, 0xFF, 256);
    arena_reset(&a, m);
    unsigned char *q = arena_zalloc(&a, 256);
    cr_assert_eq(p, q, "reset should hand the same memory out again");
    for (int i = 0; i < 256; i++) cr_assert_eq(q[i], 0);
    int *arr = ARENA_NEWN(&a, int, 10);
    for (int i = 0; i < 10; i++) cr_expect_eq(arr[i], 0);
    arena_free(&a);
}

Test(arena, large_request_gets_own_block_and_keeps_current) {
    arena a;
    arena_init(&a, 1024);
    char *p1 = arena_alloc(&a, 100); /* first block: 112 of 1024 used */
    memset(p1, 1, 100);
    char *big = arena_alloc(&a, 10000); /* > block/4 and no room: a block of its own */
    memset(big, 2, 10000);
    cr_expect(aligned16(big));
    char *p2 = arena_alloc(&a, 16);
    /* the small allocation after the big one continues in the first block */
    cr_expect_eq(p2, p1 + 112);
    /* a medium request that does not fit starts a new ordinary block */
    char *p3 = arena_alloc(&a, 240);  /* <= 1024/4, fits: 128+240 */
    cr_expect_eq(p3, p2 + 16);
    char *p4 = arena_alloc(&a, 256);  /* still fits */
    char *p5 = arena_alloc(&a, 256);  /* 128+240+256+256 = 880 used; 144 left */
    char *p6 = arena_alloc(&a, 200);  /* no room, not large: new block */
    cr_expect_eq(p5, p4 + 256);
    cr_expect(p6 < p1 || p6 >= p1 + 1024, "p6 must come from a new block");
    for (int i = 0; i < 100; i++) cr_assert_eq(p1[i], 1);
    for (int i = 0; i < 10000; i++) cr_assert_eq(big[i], 2);
    cr_expect_eq(a.total, 112 + 10000 + 16 + 240 + 256 + 256 + 208);
    arena_free(&a);
}

Test(arena, large_request_into_empty_arena) {
    arena a;
    arena_init(&a, 1024);
    char *big = arena_alloc(&a, 5000);
    memset(big, 3, 5000);
    char *small = arena_alloc(&a, 8);
    cr_expect_not_null(small);
    cr_expect_neq(small, big);
    arena_free(&a);
}

Test(arena, save_reset_across_blocks) {
    arena a;
    arena_init(&a, 512);
    arena_alloc(&a, 64);
    arena_mark m = arena_save(&a);
    size_t total = a.total;
    char *first = arena_alloc(&a, 32);
    for (int i = 0; i < 100; i++) memset(arena_alloc(&a, 100), i, 100); /* many blocks */
    arena_reset(&a, m);
    cr_expect_eq(a.total, total);
    char *again = arena_alloc(&a, 32);
    cr_expect_eq(again, first);

    /* nested marks unwind in order */
    arena_mark m1 = arena_save(&a);
    char *x = arena_alloc(&a, 48);
    arena_mark m2 = arena_save(&a);
    arena_alloc(&a, 400);
    arena_alloc(&a, 400);
    arena_reset(&a, m2);
    cr_expect_eq(arena_alloc(&a, 16), x + 48);
    arena_reset(&a, m1);
    cr_expect_eq(arena_alloc(&a, 48), x);
    arena_free(&a);
}

Test(arena, reset_to_mark_of_empty_arena) {
    arena a;
    arena_init(&a, 256);
    arena_mark m = arena_save(&a);
    for (int i = 0; i < 20; i++) arena_alloc(&a, 100);
    arena_reset(&a, m);
    cr_expect_null(a.cur);
    cr_expect_eq(a.total, 0);
    cr_expect_not_null(arena_alloc(&a, 10));
    arena_free(&a);
}

Test(arena, clear_keeps_first_block) {
    arena a;
    arena_init(&a, 1024);
    char *first = arena_alloc(&a, 16);
    for (int i = 0; i < 50; i++) arena_alloc(&a, 200);
    cr_expect_gt(a.total, 1024);
    arena_clear(&a);
    cr_expect_eq(a.total, 0);
    cr_assert_not_null(a.cur);
    char *p = arena_alloc(&a, 16);
    cr_expect_eq(p, first, "clear should reuse the first block from its start");
    arena_clear(&a);
    arena_clear(&a); /* idempotent */
    arena_free(&a);
    arena_clear(&a); /* on an empty arena: no-op */
    cr_expect_null(a.cur);
}

Test(arena, string_helpers) {
    arena a;
    arena_init(&a, 256);
    char *s = arena_strdup(&a, "hello");
    cr_expect_str_eq(s, "hello");
    char *t = arena_strndup(&a, "abcdef", 3);
    cr_expect_str_eq(t, "abc");
    char *e = arena_strndup(&a, "", 0);
    cr_expect_str_eq(e, "");
    int v[3] = {1, 2, 3};
    int *d = arena_memdup(&a, v, sizeof v);
    cr_expect_neq(d, v);
    cr_expect_arr_eq(d, v, sizeof v);
    char *f = arena_printf(&a, "%s-%d", "dev", 42);
    cr_expect_str_eq(f, "dev-42");
    /* longer than the 256-byte fast buffer and than the block */
    char *long_ = arena_printf(&a, "%0600d", 7);
    cr_expect_eq(strlen(long_), 600);
    cr_expect_eq(long_[599], '7');
    cr_expect_eq(long_[0], '0');
    arena_free(&a);
}

/* An oversized request gets a block of its own slid behind the current one; a reset
 * to a mark taken before it must free it too, or a mark/alloc-big/reset loop (the
 * CEL evaluation context's life) grows without bound. */
Test(arena, reset_frees_oversized_blocks) {
    arena a;
    arena_init(&a, 1024);
    arena_alloc(&a, 16);
    arena_mark m = arena_save(&a);
    size_t base = arena_bytes_reserved(&a);
    cr_expect_eq(base, 1024);
    for (int i = 0; i < 1000; i++) {
        memset(arena_alloc(&a, 5000), i, 5000);   /* oversized */
        arena_alloc(&a, 100);                     /* ordinary, same block */
        memset(arena_alloc(&a, 700), i, 700);     /* oversized again */
        for (int j = 0; j < 20; j++) arena_alloc(&a, 200); /* new ordinary blocks */
        arena_reset(&a, m);
        cr_assert_eq(arena_bytes_reserved(&a), base, "cycle %d kept %zu bytes", i,
                     arena_bytes_reserved(&a) - base);
    }
    /* nested marks: the big block of the outer level survives the inner reset */
    char *outer = arena_alloc(&a, 3000);
    memset(outer, 7, 3000);
    arena_mark m2 = arena_save(&a);
    arena_alloc(&a, 3000);
    arena_reset(&a, m2);
    /* the outer request's own block: its 3,008 aligned bytes and a header */
    size_t outer_block = arena_bytes_reserved(&a) - base;
    cr_expect(outer_block >= 3008 && outer_block <= 3008 + 64, "outer block %zu bytes", outer_block);
    for (int i = 0; i < 3000; i++) cr_assert_eq(outer[i], 7);
    arena_reset(&a, m);
    cr_expect_eq(arena_bytes_reserved(&a), base);
    /* clear frees oversized blocks as well and keeps one ordinary block */
    arena_alloc(&a, 4000);
    for (int j = 0; j < 20; j++) arena_alloc(&a, 200);
    arena_clear(&a);
    cr_expect_eq(arena_bytes_reserved(&a), 1024);
    arena_free(&a);
    cr_expect_eq(arena_bytes_reserved(&a), 0);
}

/* arena_init_sized: the first block holds what is expected (large requests included,
 * while they fit), rounded up to an allocator size class; what does not fit goes to
 * blocks of the later size, or blocks of their own. */
Test(arena, sized_first_block) {
    arena a;
    arena_init_sized(&a, 3000, 512);
    char *p = arena_alloc(&a, 2000);   /* over a quarter of 512: fits the first block all the same */
    char *q = arena_alloc(&a, 900);
    cr_expect_eq(q - p, 2000 + 0);     /* 2000 is 16-aligned: adjacent */
    cr_expect_null(a.big);
    size_t first = arena_bytes_reserved(&a);
    cr_expect(first >= 3000 + 32 && first <= 3584, "first block %zu bytes (3,584 is the size class above)", first);
    arena_alloc(&a, 600);   /* no room left: a block of its own (over a quarter of 512) */
    cr_expect_not_null(a.big);
    size_t with_big = arena_bytes_reserved(&a);
    cr_expect(with_big > first + 600 && with_big <= first + 600 + 64);
    arena_alloc(&a, 100);   /* what the first block has left */
    cr_expect_eq(arena_bytes_reserved(&a), with_big);
    arena_alloc(&a, 100);   /* an ordinary block of 512 */
    cr_expect_eq(arena_bytes_reserved(&a), with_big + 512);
    arena_free(&a);
    cr_expect_eq(arena_bytes_reserved(&a), 0);
    /* a first request larger than expected: as an unsized arena would */
    arena_init_sized(&a, 100, 1024);
    memset(arena_alloc(&a, 5000), 1, 5000);
    cr_expect_not_null(a.big);
    size_t big_only = arena_bytes_reserved(&a);
    memset(arena_alloc(&a, 100), 2, 100);   /* the first block, of the expected size */
    cr_expect_leq(arena_bytes_reserved(&a) - big_only, 256);
    arena_free(&a);
    /* reset past the first block and use again: the first block is sized again */
    arena_init_sized(&a, 1000, 256);
    arena_mark m = arena_save(&a);
    arena_alloc(&a, 900);
    arena_reset(&a, m);
    cr_expect_eq(arena_bytes_reserved(&a), 0);
    arena_alloc(&a, 900);
    cr_expect_null(a.big);
    arena_free(&a);
}

/* arena_init_like: the size class that holds what the last object took when it leaves
 * 32 bytes of room, else that and a slack of expect/64 + 64 — never a class more for
 * a slack the class already has (a 1,456-byte node view: 1,536, not 1,792). */
Test(arena, like_first_block) {
    arena a;
    arena_init_like(&a, 1456, 1024);   /* header + 1,456 in 1,536 leaves room */
    arena_alloc(&a, 1456);
    size_t tight = arena_bytes_reserved(&a);
    cr_expect(tight >= 1456 + 32 && tight <= 1536, "a 1,456-byte object's block: %zu bytes", tight);
    arena_alloc(&a, 16);   /* a longer name: still in the first block */
    cr_expect_eq(arena_bytes_reserved(&a), tight);
    arena_free(&a);
    /* no room in its class: the slack, in the class above */
    size_t full = 0;
    for (size_t e = 1400; e < 1540 && !full; e += 16) {
        arena_init_like(&a, e, 1024);
        arena_alloc(&a, e);
        size_t r = arena_bytes_reserved(&a);
        if (r > 1536) full = e;
        cr_expect(r - e >= 32, "expect %zu: %zu bytes leave less than 32 of room", e, r);
        arena_free(&a);
    }
    cr_expect_neq(full, 0, "some expect near 1,536 must have gone to the class above");
}
