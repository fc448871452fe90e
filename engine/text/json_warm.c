/* json_warm.c — a jansson tree brought into the cache before it is read (json_warm.h).
 *
 * Level by level: the values of one level are the containers and strings met on the
 * previous one, each already asked for. An object is a list of members, so its
 * members come one per round: in a round every object of the level reads the member
 * asked for in the round before (arrived, or arriving side by side with the others),
 * asks for that member's value, key and successor, and moves on. An array's items
 * are read from its table the same way, one per round. A string asks for its text.
 * Only jansson's public API is used: what it costs over the decoder's own reads is
 * a few calls per value on lines already there. */
#include "engine/text/json_warm.h"

#include "base/vec.h"

#include <stdlib.h>

typedef struct warm_cursor {
    const json_t *c;   /* an object (it: its next member) or an array (i of n) */
    void *it;
    size_t i, n;
} warm_cursor;

typedef VEC(const json_t *) warm_level;
typedef VEC(warm_cursor) warm_cursors;

/* The containers of level, each one's members (or items) asked for one per round;
 * every value met goes to next. */
static void warm_level_walk(const warm_level *level, warm_cursors *cur, warm_level *next) {
    cur->n = 0;
    for (size_t j = 0; j < level->n; j++) {
        const json_t *x = level->v[j];
        switch (json_typeof(x)) {
        case JSON_OBJECT: {
            void *it = json_object_iter((json_t *)x);
            if (!it) break;
            __builtin_prefetch(it);
            VEC_PUSH(*cur, ((warm_cursor){x, it, 0, 0}));
            break;
        }
        case JSON_ARRAY:
            if (json_array_size(x)) VEC_PUSH(*cur, ((warm_cursor){x, NULL, 0, json_array_size(x)}));
            break;
        case JSON_STRING:
            __builtin_prefetch(json_string_value(x));
            break;
        default:
            break;
        }
    }
    size_t live = cur->n;
    while (live) {
        size_t kept = 0;
        for (size_t j = 0; j < live; j++) {
            warm_cursor c = cur->v[j];
            const json_t *v;
            bool more;
            if (c.it) {
                v = json_object_iter_value(c.it);
                __builtin_prefetch(json_object_iter_key(c.it));
                c.it = json_object_iter_next((json_t *)c.c, c.it);
                if (c.it) __builtin_prefetch(c.it);
                more = c.it != NULL;
            } else {
                v = json_array_get(c.c, c.i++);
                more = c.i < c.n;
            }
            if (v) {   /* its type is read on the next level, once it has arrived */
                __builtin_prefetch(v);
                VEC_PUSH(*next, v);
            }
            if (more) cur->v[kept++] = c;
        }
        live = kept;
    }
}

void dra__json_warm(const json_t *root) {
    if (!root) return;
    warm_level a = {0}, b = {0}, *level = &a, *next = &b;
    warm_cursors cur = {0};
    VEC_PUSH(a, root);
    while (level->n) {
        next->n = 0;
        warm_level_walk(level, &cur, next);
        warm_level *t = level;
        level = next;
        next = t;
    }
    free(a.v);
    free(b.v);
    free(cur.v);
}
