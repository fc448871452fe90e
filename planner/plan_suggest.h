/* plan_suggest.h — private to planner/: "did you mean" for misspelt keys, by edit
 * (Levenshtein) distance between short names. */
#ifndef DRA_PLANNER_PLAN_SUGGEST_H
#define DRA_PLANNER_PLAN_SUGGEST_H

#include <stddef.h>

/* Edits (insert, delete, substitute) from a to b; names past 30 bytes are "far" (99). */
size_t plan_suggest_distance(const char *a, const char *b);

/* Within this many edits a known name is offered as what was meant. */
#define PLAN_SUGGEST_MAX 2

#endif
