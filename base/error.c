/* error.c — error values with object and field path (see error.h). */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_clear(err *e) {
    if (!e) return;
    e->set = false;
    e->object[0] = e->path[0] = e->msg[0] = '\0';
}

bool err_set(err *e, const char *fmt, ...) {
    if (!e) return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->set = true;
    return false;
}

bool err_at(err *e, const char *object, const char *path, const char *fmt, ...) {
    if (!e) return false;
    snprintf(e->object, sizeof e->object, "%s", object ? object : "");
    snprintf(e->path, sizeof e->path, "%s", path ? path : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->set = true;
    return false;
}

void err_set_object(err *e, const char *fmt, ...) {
    if (!e) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->object, sizeof e->object, fmt, ap);
    va_end(ap);
}

void err_set_path(err *e, const char *path) {
    if (!e) return;
    snprintf(e->path, sizeof e->path, "%s", path ? path : "");
}

void err_wrap(err *e, const char *fmt, ...) {
    if (!e) return;
    char prefix[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    /* Truncation of an over-long chain of wraps is acceptable: the innermost cause
     * is cut last because the buffer is filled front to back. */
    size_t pl = strnlen(prefix, sizeof prefix - 1);
    if (pl > sizeof e->msg - 3) pl = sizeof e->msg - 3;
    memcpy(e->msg, prefix, pl);
    memcpy(e->msg + pl, ": ", 2);
    size_t room = sizeof e->msg - pl - 3;
    size_t ol = strnlen(old, room);
    memcpy(e->msg + pl + 2, old, ol);
    e->msg[pl + 2 + ol] = '\0';
    e->set = true;
}

const char *err_format(const err *e, char *buf, size_t n) {
    if (!n) return buf;
    buf[0] = '\0';
    if (!e) return buf;
    size_t off = 0;
    if (e->object[0]) off += (size_t)snprintf(buf + off, n - off, "%s: ", e->object);
    if (off < n && e->path[0]) off += (size_t)snprintf(buf + off, n - off, "%s: ", e->path);
    if (off < n) snprintf(buf + off, n - off, "%s", e->msg);
    return buf;
}

void errpath_init(errpath *p) {
    p->buf[0] = '\0';
    p->len = 0;
}

size_t errpath_push(errpath *p, const char *fmt, ...) {
    size_t before = p->len;
    if (p->len >= sizeof p->buf - 1) return before;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->buf + p->len, sizeof p->buf - p->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        p->len += (size_t)n;
        if (p->len > sizeof p->buf - 1) p->len = sizeof p->buf - 1;
    }
    return before;
}

void errpath_pop(errpath *p, size_t to) {
    if (to <= p->len) {
        p->len = to;
        p->buf[to] = '\0';
    }
}
