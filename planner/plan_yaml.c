/* plan_yaml.c — the planner's YAML inputs read by the engine's reader
 * (dra_yaml_parse: sigs.k8s.io/yaml's rules, duplicate keys refused with their line),
 * so workload files, node shapes and snapshots read exactly as `dralloc allocate -f`
 * reads them. */
#include "planner/plan_yaml.h"

#include "engine/json.h"

#include <stdio.h>

void plan_err_flatten(err *e) {
    if (!e || !e->object[0]) return;
    char buf[ERR_MSG_MAX];
    err_format(e, buf, sizeof buf);
    err_clear(e);
    err_set(e, "%s", buf);
}

json_t *plan_yaml_load(const char *text, size_t len, const char *source, err *e) {
    json_t *docs = dra_yaml_parse(text, len, source, e);
    if (!docs) plan_err_flatten(e);
    return docs;
}
