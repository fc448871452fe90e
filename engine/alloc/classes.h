/* classes.h — private to engine/: the DeviceClass of every request of a pod's claims,
 * looked up once per pod request (podplan.c) and handed to the allocator for its calls
 * on each node. Without it every call looks each class up by name again: a hash of
 * the name and the intern table's read lock, a cache line every deciding thread
 * writes, per request per node. */
#ifndef DRA_ENGINE_ALLOC_CLASSES_H
#define DRA_ENGINE_ALLOC_CLASSES_H

#include "engine/engine.h"

/* Later dra_allocate calls on x take the class of request spec specs[i] as cls[i]
 * (NULL: looked up as usual) while their node view's world is w; n = 0 clears. The
 * arrays are the caller's and must outlive the calls. */
void dra__alloc_class_hint(dra_alloc_ctx *x, const dra_world *w, const dra_request_spec *const *specs,
                           const dra_class *const *cls, uint32_t n);

#endif
