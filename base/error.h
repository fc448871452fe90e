/* error.h — the error value every layer returns: a message plus the object it is
 * about and the field path inside it, so a user reads
 *   ResourceSlice node-1-gpus: spec.devices[3].capacity["memory"].value: quantities must match ...
 * An `err` is a fixed-size value (no allocation; safe to fill from any depth of a
 * decoder or evaluator). `errpath` is the field-path builder a decoder pushes and
 * pops as it descends. Functions that can fail return false / NULL / a negative
 * code and fill an `err *` the caller passed (which may be NULL: then nothing is
 * recorded). */
#ifndef DRA_ERROR_H
#define DRA_ERROR_H

#include "base/base.h"

#define ERR_OBJECT_MAX 256
#define ERR_PATH_MAX 256
#define ERR_MSG_MAX 1024

typedef struct err {
    bool set;
    char object[ERR_OBJECT_MAX];  /* "ResourceSlice node-1-gpus"; empty when not about an object */
    char path[ERR_PATH_MAX];      /* "spec.devices[3].name"; empty when about the whole object */
    char msg[ERR_MSG_MAX];        /* what is wrong / what was expected */
} err;

/* A field path under construction; push returns the length to pop back to. */
typedef struct errpath {
    char buf[ERR_PATH_MAX];
    size_t len;
} errpath;

void err_clear(err *e);
/* Sets message (printf-style); object and path left as they are. No-op when e is NULL. */
bool err_set(err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets object, path and message at once. Always returns false (for `return err_at(...)`). */
bool err_at(err *e, const char *object, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void err_set_object(err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void err_set_path(err *e, const char *path);
/* Prepends "prefix: " to the message (wrapping, as Go's fmt.Errorf("...: %w")). */
void err_wrap(err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "object: path: msg" with empty parts left out. Returns buf. */
const char *err_format(const err *e, char *buf, size_t n);

void errpath_init(errpath *p);
size_t errpath_push(errpath *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void errpath_pop(errpath *p, size_t to);
static inline const char *errpath_str(const errpath *p) { return p->buf; }

#endif
