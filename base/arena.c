/* arena.c — bump allocation over a chain of blocks (see arena.h).
 *
 * Two chains, both newest first: ordinary blocks (cur and behind it) that small
 * requests are bumped from, and oversized blocks that each hold one large request.
 * Keeping the oversized ones apart is what makes arena_reset exact: a mark records
 * the head of each chain, and everything newer on either chain is freed. (Sliding
 * an oversized block into the ordinary chain behind cur would put a block newer
 * than the mark where a reset walking from cur stops, and it would never be freed:
 * the CEL evaluation context, reset thousands of times, grew to gigabytes.) */
#include "base/arena.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16
#define ARENA_DEFAULT_BLOCK (64 * 1024)

struct arena_block {
    arena_block *prev;
    size_t size;   /* usable bytes in data */
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

static size_t align_up(size_t n) { return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1); }

static size_t block_size(const arena *a) { return a->block_size ? a->block_size : ARENA_DEFAULT_BLOCK; }

void arena_init(arena *a, size_t block_size) {
    a->cur = NULL;
    a->big = NULL;
    a->block_size = block_size ? block_size : ARENA_DEFAULT_BLOCK;
    if (a->block_size < 128) a->block_size = 128;   /* room for the header and a quarter-block request */
    a->first_size = 0;
    a->total = 0;
    a->reserved = 0;
}

/* n rounded up to a malloc size class: 16-byte steps to 128, then four classes per
 * power of two (jemalloc's; glibc's bins are finer, so nothing is lost there). */
static size_t size_class(size_t n) {
    if (n <= 128) return (n + 15) & ~(size_t)15;
    size_t step = (size_t)1 << (63 - __builtin_clzll((unsigned long long)(n - 1)) - 2);
    return (n + step - 1) & ~(step - 1);
}

void arena_init_sized(arena *a, size_t expect, size_t block_size) {
    arena_init(a, block_size);
    if (expect) a->first_size = size_class(sizeof(arena_block) + align_up(expect));
}

void arena_init_like(arena *a, size_t expect, size_t block_size) {
    arena_init(a, block_size);
    if (!expect) return;
    size_t need = sizeof(arena_block) + align_up(expect), tight = size_class(need);
    a->first_size = tight - need >= 32 ? tight : size_class(sizeof(arena_block) + align_up(expect + expect / 64 + 64));
}

size_t arena_bytes_reserved(const arena *a) { return a->reserved; }

static arena_block *block_new(arena *a, size_t size, arena_block *prev) {
    arena_block *b = xmalloc(sizeof(arena_block) + size);
    b->size = size;
    b->used = 0;
    b->prev = prev;
    a->reserved += sizeof(arena_block) + size;
    return b;
}

static void block_free(arena *a, arena_block *b) {
    assert(a->reserved >= sizeof(arena_block) + b->size);
    a->reserved -= sizeof(arena_block) + b->size;
    free(b);
}

void *arena_alloc(arena *a, size_t n) {
    n = align_up(n ? n : 1);
    arena_block *b = a->cur;
    if (UNLIKELY(!b || b->size - b->used < n)) {
        if (!b && a->first_size && n <= a->first_size - sizeof(arena_block)) {
            /* the first block, sized for what the arena is expected to hold */
            b = a->cur = block_new(a, a->first_size - sizeof(arena_block), NULL);
        } else if (n > block_size(a) / 4) {
            /* A large request gets its own block, so the rest of the current block
             * stays usable for the small requests that follow. */
            arena_block *big = block_new(a, n, a->big);
            big->used = n;
            a->big = big;
            a->total += n;
            return big->data;
        } else {
            /* the block with its header is block_size bytes: a power of two is an
             * allocator size class, where payload + header would round up to the next
             * class (2 KiB + 24 → 2.5 KiB: a fifth of every block lost) */
            b = a->cur = block_new(a, block_size(a) - sizeof(arena_block), a->cur);
        }
    }
    void *p = b->data + b->used;
    b->used += n;
    a->total += n;
    return p;
}

void *arena_zalloc(arena *a, size_t n) {
    void *p = arena_alloc(a, n);
    memset(p, 0, n ? n : 1);
    return p;
}

void *arena_memdup(arena *a, const void *p, size_t n) {
    void *d = arena_alloc(a, n);
    if (n) memcpy(d, p, n);
    return d;
}

char *arena_strndup(arena *a, const char *s, size_t n) {
    char *d = arena_alloc(a, n + 1);
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *arena_strdup(arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return arena_strdup(a, "");
    if ((size_t)n < sizeof small) return arena_strndup(a, small, (size_t)n);
    char *d = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

arena_mark arena_save(const arena *a) {
    arena_mark m = {a->cur, a->big, a->cur ? a->cur->used : 0, a->total};
    return m;
}

void arena_reset(arena *a, arena_mark m) {
    /* Both chains are newest first and only grow at their heads, so the blocks newer
     * than the mark are exactly those in front of the heads it recorded. */
    while (a->cur && a->cur != m.block) {
        arena_block *prev = a->cur->prev;
        block_free(a, a->cur);
        a->cur = prev;
    }
    assert(a->cur == m.block);   /* a mark of this arena, not reset past already */
    while (a->big && a->big != m.big) {
        arena_block *prev = a->big->prev;
        block_free(a, a->big);
        a->big = prev;
    }
    assert(a->big == m.big);
    if (a->cur) a->cur->used = m.used;
    a->total = m.total;
}

static void free_big(arena *a) {
    while (a->big) {
        arena_block *prev = a->big->prev;
        block_free(a, a->big);
        a->big = prev;
    }
}

void arena_clear(arena *a) {
    free_big(a);
    a->total = 0;
    if (!a->cur) return;
    while (a->cur->prev) {
        arena_block *prev = a->cur->prev;
        block_free(a, a->cur);
        a->cur = prev;
    }
    a->cur->used = 0;
}

void arena_free(arena *a) {
    free_big(a);
    while (a->cur) {
        arena_block *prev = a->cur->prev;
        block_free(a, a->cur);
        a->cur = prev;
    }
    a->total = 0;
    assert(a->reserved == 0);
}
