/* arena.c — bump allocation over a chain of blocks (see arena.h). */
#include "base/arena.h"

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

void arena_init(arena *a, size_t block_size) {
    a->cur = NULL;
    a->block_size = block_size ? block_size : ARENA_DEFAULT_BLOCK;
    a->total = 0;
}

static arena_block *new_block(arena *a, size_t min) {
    size_t size = a->block_size ? a->block_size : ARENA_DEFAULT_BLOCK;
    if (min > size) size = min;
    arena_block *b = xmalloc(sizeof(arena_block) + size);
    b->size = size;
    b->used = 0;
    b->prev = a->cur;
    a->cur = b;
    return b;
}

void *arena_alloc(arena *a, size_t n) {
    n = align_up(n ? n : 1);
    arena_block *b = a->cur;
    if (UNLIKELY(!b || b->size - b->used < n)) {
        if (b && n > (a->block_size ? a->block_size : ARENA_DEFAULT_BLOCK) / 4) {
            /* A large request gets its own block, slid in behind the current one so
             * the rest of the current block stays usable. */
            arena_block *big = xmalloc(sizeof(arena_block) + n);
            big->size = n;
            big->used = n;
            big->prev = b->prev;
            b->prev = big;
            a->total += n;
            return big->data;
        }
        b = new_block(a, n);
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
    arena_mark m = {a->cur, a->cur ? a->cur->used : 0, a->total};
    return m;
}

void arena_reset(arena *a, arena_mark m) {
    /* Blocks newer than the mark's block are freed. A large block slid behind the
     * current one after the mark is older in the chain than cur but newer than the
     * mark; such blocks are kept until arena_clear/free (rare, bounded waste). */
    while (a->cur && a->cur != m.block) {
        arena_block *prev = a->cur->prev;
        free(a->cur);
        a->cur = prev;
    }
    if (a->cur) a->cur->used = m.used;
    a->total = m.total;
}

void arena_clear(arena *a) {
    if (!a->cur) return;
    while (a->cur->prev) {
        arena_block *prev = a->cur->prev;
        free(a->cur);
        a->cur = prev;
    }
    a->cur->used = 0;
    a->total = 0;
}

void arena_free(arena *a) {
    while (a->cur) {
        arena_block *prev = a->cur->prev;
        free(a->cur);
        a->cur = prev;
    }
    a->total = 0;
}
