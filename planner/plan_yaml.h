/* plan_yaml.h — private to planner/: YAML text to jansson values for the planner's
 * own inputs (workload files, node shapes, snapshots it must filter before they
 * reach the store), through the engine's reader (engine/json.h dra_yaml_parse). */
#ifndef DRA_PLANNER_PLAN_YAML_H
#define DRA_PLANNER_PLAN_YAML_H

#include <jansson.h>

#include "base/error.h"

/* Every document of the text, in order, as a JSON array (NULL with e set on a
 * syntax error, naming source and line). Empty documents are left out. */
json_t *plan_yaml_load(const char *text, size_t len, const char *source, err *e);
/* An engine error (its object and path apart) as one message naming them, as the
 * planner's callers print e->msg. */
void plan_err_flatten(err *e);

#endif
