/* base.h — small helpers every layer uses: array size, likely/unlikely, the one
 * allocation indirection (xmalloc & co. abort on out-of-memory, so callers never
 * carry a NULL check for an allocation that cannot reasonably be recovered from).
 * Per-request memory goes through arena.h instead. */
#ifndef DRA_BASE_H
#define DRA_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define UNUSED(x) ((void)(x))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
