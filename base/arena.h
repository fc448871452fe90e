/* arena.h — a bump allocator for memory that lives and dies together: one
 * allocation call, one decoded object set, one HTTP request. Allocation is a
 * pointer bump inside the current block; a request larger than the block size
 * gets a block of its own. arena_mark/arena_reset roll back to a saved point
 * (the search uses it to undo a branch), arena_free releases everything.
 * Not thread-safe: one arena per thread or per call. */
#ifndef DRA_ARENA_H
#define DRA_ARENA_H

#include "base/base.h"

typedef struct arena_block arena_block;

typedef struct arena {
    arena_block *cur;      /* block being bumped; older blocks chain behind it */
    size_t block_size;     /* size of ordinary blocks; 0 means the default (64 KiB) */
    size_t total;          /* bytes handed out since init, for stats and limits */
} arena;

typedef struct arena_mark {
    arena_block *block;
    size_t used;
    size_t total;
} arena_mark;

void arena_init(arena *a, size_t block_size);
void *arena_alloc(arena *a, size_t n);         /* 16-byte aligned, uninitialised */
void *arena_zalloc(arena *a, size_t n);        /* zeroed */
void *arena_memdup(arena *a, const void *p, size_t n);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_strdup(arena *a, const char *s);
char *arena_printf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
arena_mark arena_save(const arena *a);
void arena_reset(arena *a, arena_mark m);      /* frees blocks allocated after the mark */
void arena_clear(arena *a);                    /* back to empty, keeps the first block */
void arena_free(arena *a);

#define ARENA_NEW(a, T) ((T *)arena_zalloc((a), sizeof(T)))
#define ARENA_NEWN(a, T, n) ((T *)arena_zalloc((a), sizeof(T) * (size_t)(n)))

#endif
