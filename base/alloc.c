/* alloc.c — the process's one allocation indirection. jemalloc is linked as the
 * process allocator in release builds, so these are thin; their value is the
 * single out-of-memory policy (print and abort). */
#include "base/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n) {
    fprintf(stderr, "dralloc: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *xstrndup(const char *s, size_t n) {
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }
