/* arena.h — a bump allocator for memory that lives and dies together: one
 * allocation call, one decoded object set, one HTTP request. Allocation is a
 * pointer bump inside the current block; a large request (over a quarter of the
 * block size) gets a block of its own on a second chain, so the current block stays
 * usable. arena_mark/arena_reset roll back to a saved point, freeing every block of
 * either chain allocated after it (the search uses it to undo a branch, the CEL
 * evaluation context before each evaluation); arena_free releases everything.
 * Not thread-safe: one arena per thread or per call. */
#ifndef DRA_ARENA_H
#define DRA_ARENA_H

#include "base/base.h"

typedef struct arena_block arena_block;

typedef struct arena {
    arena_block *cur;      /* block being bumped; older blocks chain behind it */
    arena_block *big;      /* oversized blocks, newest first: each holds one request */
    size_t block_size;     /* malloc size of ordinary blocks, header included; 0 means the default (64 KiB) */
    size_t first_size;     /* malloc size of the first ordinary block when it differs (arena_init_sized), else 0 */
    size_t total;          /* bytes handed out since init, for stats and limits */
    size_t reserved;       /* bytes of every block held (ordinary and oversized) */
} arena;

typedef struct arena_mark {
    arena_block *block;
    arena_block *big;
    size_t used;
    size_t total;
} arena_mark;

void arena_init(arena *a, size_t block_size);
/* An arena whose whole contents are expected to take about `expect` bytes (what the
 * last object of its kind took): the first block holds that much, rounded up to an
 * allocator size class (a block just over one, as 2 KiB was for a 400-byte Node, is
 * memory kept for nothing by every long-lived object); what does not fit goes to
 * blocks of block_size. A request that fits the current block is bumped from it, so
 * the first block takes the large requests too. expect 0: as arena_init. */
void arena_init_sized(arena *a, size_t expect, size_t block_size);
/* arena_init_sized for an object like the last one of its kind (expect: what that one
 * took): the size class that holds expect when it leaves at least 32 bytes of room
 * (an object a little larger — a longer name — still fits), else the class that holds
 * expect and a slack of expect/64 + 64. Adding the slack always crossed classes
 * where the room was there already: a 1,456-byte node view went to a 1,792-byte block
 * instead of 1,536 (256 bytes a node at 100,000 nodes). */
void arena_init_like(arena *a, size_t expect, size_t block_size);
void *arena_alloc(arena *a, size_t n);         /* 16-byte aligned, uninitialised */
void *arena_zalloc(arena *a, size_t n);        /* zeroed */
void *arena_memdup(arena *a, const void *p, size_t n);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_strdup(arena *a, const char *s);
char *arena_printf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
arena_mark arena_save(const arena *a);
void arena_reset(arena *a, arena_mark m);      /* frees blocks allocated after the mark */
void arena_clear(arena *a);                    /* back to empty, keeps the first ordinary block */
void arena_free(arena *a);
/* Bytes the arena holds from malloc right now (blocks with their headers, ordinary
 * and oversized): what tests and long-lived owners watch to see that resets give
 * memory back. An ordinary block is block_size bytes. */
size_t arena_bytes_reserved(const arena *a);

#define ARENA_NEW(a, T) ((T *)arena_zalloc((a), sizeof(T)))
#define ARENA_NEWN(a, T, n) ((T *)arena_zalloc((a), sizeof(T) * (size_t)(n)))

#endif
