/* oneshot.c — a one-shot world: a store of its own, its snapshot and world, and the
 * caller's arena beside them (engine.h dra_oneshot). */
#include "engine/engine.h"

void dra_oneshot_init(dra_oneshot *o, const dra_features *f, const dra_store_opts *opts) {
    *o = (dra_oneshot){.st = dra_store_new_with(f, opts)};
    /* claims from templates and nodes by name: a few small objects */
    arena_init(&o->mem, 4096);
}

const dra_world *dra_oneshot_publish(dra_oneshot *o) {
    if (!o->snap) o->snap = dra_store_acquire(o->st);
    return o->w = o->snap ? dra_snapshot_world(o->snap) : NULL;
}

void dra_oneshot_free(dra_oneshot *o) {
    arena_free(&o->mem);
    dra_snapshot_release(o->snap);
    dra_store_free(o->st);
    *o = (dra_oneshot){0};
}
