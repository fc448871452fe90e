/* objcache.h — the JSON of one kind's objects as the store last took them: bind mode's
 * source for the ResourceClaim it is about to write, so that a write needs no GET
 * first. The watch puts every version it applies (and drops what it deletes); the
 * binder puts what the API server answered its writes. It may lag the server (a
 * version the pending table held back, a write racing an event): the resourceVersion
 * precondition of every write catches that (409), and the writer then reads the
 * object from the server once and retries. Keys are "namespace/name"; values are
 * immutable once put (a reader that wants to change one takes a deep copy).
 * Thread-safe: one mutex, held for a lookup or an update, never across I/O. */
#ifndef DRA_EXTENDER_OBJCACHE_H
#define DRA_EXTENDER_OBJCACHE_H

#include <jansson.h>
#include <stddef.h>

typedef struct ext_objcache ext_objcache;

ext_objcache *ext_objcache_new(void);
void ext_objcache_free(ext_objcache *c);   /* NULL: nothing */
/* obj: an object with metadata.namespace (may be absent) and metadata.name; a
 * reference is taken, obj must not change afterwards. */
void ext_objcache_put(ext_objcache *c, json_t *obj);
void ext_objcache_del(ext_objcache *c, const char *ns, const char *name);
/* A deep copy of ns/name (the caller's), or NULL when not cached. */
json_t *ext_objcache_copy(ext_objcache *c, const char *ns, const char *name);
size_t ext_objcache_size(ext_objcache *c);
void ext_objcache_clear(ext_objcache *c);

#endif
