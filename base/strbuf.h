/* strbuf.h — a growable byte buffer for building output text (JSON, YAML,
 * messages). Heap-backed (xrealloc); always NUL-terminated. */
#ifndef DRA_STRBUF_H
#define DRA_STRBUF_H

#include "base/base.h"

typedef struct strbuf {
    char *buf;
    size_t len, cap;
} strbuf;

void sbuf_init(strbuf *b);
void sbuf_free(strbuf *b);
void sbuf_reset(strbuf *b);
void sbuf_add(strbuf *b, const void *p, size_t n);
void sbuf_addc(strbuf *b, char c);
void sbuf_adds(strbuf *b, const char *s);
void sbuf_addf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Detaches the buffer (caller frees). */
char *sbuf_take(strbuf *b);

#endif
