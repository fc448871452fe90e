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

/* What both room commands (why --make-room, plan --defrag/--preempt) open: the store
 * of the objects (PriorityClasses and PDBs left to the room), its snapshot and a room on
 * it, each timed. cmd_room_open: false after saying why on stderr, prefixed with prog
 * ("dralloc why"), with nothing left to close. */
typedef struct cmd_room {
    dra_store *st;
    dra_snapshot *s;
    dra_room *r;
    double store_s, room_s;   /* the store built, the room read (--timings) */
} cmd_room;
bool cmd_room_open(cmd_room *cr, const plan_objects *objs, const dra_features *f, const char *prog);
void cmd_room_close(cmd_room *cr);

/* The cluster's PriorityClasses (scheduling.k8s.io/v1) and PodDisruptionBudgets
 * (policy/v1, every namespace) added to objs; false after saying why on stderr. */
bool cmd_why_room_fetch(const cmd_kube_flags *kube, plan_objects *objs);

#endif
