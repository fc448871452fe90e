/* strbuf.c — growable NUL-terminated buffer (see strbuf.h). */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbuf_init(strbuf *b) {
    b->buf = NULL;
    b->len = b->cap = 0;
}

void sbuf_free(strbuf *b) {
    free(b->buf);
    sbuf_init(b);
}

void sbuf_reset(strbuf *b) {
    b->len = 0;
    if (b->buf) b->buf[0] = '\0';
}

static void reserve(strbuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t ncap = b->cap ? b->cap * 2 : 64;
    while (ncap < b->len + extra + 1) ncap *= 2;
    b->buf = xrealloc(b->buf, ncap);
    b->cap = ncap;
}

void sbuf_add(strbuf *b, const void *p, size_t n) {
    reserve(b, n);
    if (n) memcpy(b->buf + b->len, p, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

void sbuf_addc(strbuf *b, char c) { sbuf_add(b, &c, 1); }
void sbuf_adds(strbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }

void sbuf_addf(strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) { sbuf_add(b, small, (size_t)n); return; }
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *sbuf_take(strbuf *b) {
    if (!b->buf) { sbuf_add(b, "", 0); }
    char *p = b->buf;
    sbuf_init(b);
    return p;
}
