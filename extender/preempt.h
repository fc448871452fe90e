/* preempt.h — private to extender/: the preempt verb (preempt.c). */
#ifndef DRA_EXTENDER_PREEMPT_H
#define DRA_EXTENDER_PREEMPT_H

#include "engine/snapshot.h"
#include "extender/extender.h"

/* POST <urlPrefix>/preempt: ExtenderPreemptionArgs in, ExtenderPreemptionResult out. */
void ext_preempt_verb(dra_store *st, unsigned max_depth, const char *body, size_t len, ext_reply *r);

#endif
