/* why_room.h — `dralloc why NS/POD --make-room` (why_room.c): the victims that would
 * let a pending pod fit (engine/preempt.h), printed as text or JSON. */
#ifndef DRA_CMD_WHY_ROOM_H
#define DRA_CMD_WHY_ROOM_H

#include <stdbool.h>

#include "engine/preempt.h"
#include "cmd/kube_input.h"
#include "planner/planner.h"

/* Room for ns/name among the objects (PriorityClasses and PodDisruptionBudgets read
 * by the room, the rest by a store under features f); prints the answer and returns
 * the exit code: 0 some candidate, 1 none, 2 an error (said on stderr). timings: how
 * long the store, the room and the search took, on stderr (--timings). */
int cmd_why_make_room(const plan_objects *objs, const dra_features *f, const char *ns, const char *name,
                      bool allow_pdb, bool as_json, bool timings);

/* The cluster's PriorityClasses (scheduling.k8s.io/v1) and PodDisruptionBudgets
 * (policy/v1, every namespace) added to objs; false after saying why on stderr. */
bool cmd_why_room_fetch(const cmd_kube_flags *kube, plan_objects *objs);

#endif
