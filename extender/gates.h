/* gates.h — the feature gates of the Kubernetes release the cluster runs. dralloc's own
 * defaults are Kubernetes 1.37's (engine/features.c); against an older kube-apiserver
 * those would turn on behaviour the cluster's scheduler does not have (in 1.36,
 * DRADeviceTaintRules is off: DeviceTaintRules are not applied). So in live mode the
 * server's /version picks the defaults: each gate's value in that release, as
 * Kubernetes' versioned feature-gate table gives it (the version each default took
 * effect), --feature-gates applied on top as kube components apply it on top of their
 * emulated version. */
#ifndef DRA_EXTENDER_GATES_H
#define DRA_EXTENDER_GATES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "engine/context.h"

/* The newest release whose defaults are known (dra_features_default's). */
#define EXT_GATES_NEWEST_MINOR 37

/* The minor of a /version answer (JSON text): its gitVersion ("v1.36.2-gke.100"), else
 * its "minor" ("36+", as some providers write it). False with e set when neither says. */
bool ext_gates_server_minor(const char *version_json, unsigned *minor, char *git_version, size_t ngit, err *e);

/* f = the defaults of Kubernetes 1.<minor> (a newer minor: the newest known). `changed`
 * receives the gates that differ from dra_features_default ("DRADeviceTaintRules=false",
 * comma-separated; "" when none). */
void ext_gates_for_release(dra_features *f, unsigned minor, char *changed, size_t nchanged);

/* The gates the table knows, by index (NULL past the last): for /metrics. */
const char *ext_gates_name(size_t i);

#endif
