/* world_lookup.c — finding one device of a world by name, for tools that look at a
 * single device (`dralloc cel eval --slice FILE --device NAME`): the device's CEL view
 * exactly as the allocator evaluates selectors on it, and the environment to compile
 * expressions in so that attribute names resolve against the world's intern table. */
#include "engine/engine.h"
#include "engine/world/world.h"

#include <string.h>

const cel_device *dra_world_find_device(const dra_world *w, const char *slice, const char *device,
                                        const char **driver, const char **pool) {
    size_t n;
    const dra_slice *const *all = dra__world_all_slices(w, &n);
    for (size_t i = 0; i < n; i++) {
        const dra_slice *s = all[i];
        if (slice && (!s->name || strcmp(s->name, slice))) continue;
        for (uint32_t j = 0; j < s->ndevices; j++) {
            if (strcmp(s->devices[j].name, device)) continue;
            if (driver) *driver = s->driver;
            if (pool) *pool = s->pool;
            return &s->devices[j].cel;
        }
    }
    return NULL;
}

const cel_env *dra_world_cel_env(const dra_world *w) { return w->env_any; }
