/* gates.c — feature-gate defaults by Kubernetes release (gates.h).
 *
 * The table is Kubernetes' own VersionedSpecs for the DRA gates (pkg/features/
 * kube_features.go, and the kubelet's and API server's), each gate's defaults with the
 * release it took effect in: a release takes, for each gate, the last entry at or
 * before it; a gate that did not exist yet is off. Only defaults are kept (whether
 * alpha, beta or GA is in engine/features.c). The 1.37 column must equal
 * dra_features_default: tests/extender/gates_test.c checks it, so a change of
 * features.c without this table fails there. */
#include "extender/gates.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

typedef struct step {
    unsigned minor;   /* 1.<minor>: the default from this release on */
    bool on;
} step;

typedef struct versioned {
    const char *name;
    step steps[4];    /* oldest first; minor 0 ends */
} versioned;

static const versioned GATES[] = {
    {"DynamicResourceAllocation", {{26, false}, {34, true}}},
    {"DRAAdminAccess", {{32, false}, {34, true}}},
    {"DRAConsumableCapacity", {{34, false}, {36, true}}},
    {"DRADerivedAttributes", {{37, false}}},
    {"DRADeviceBindingConditions", {{34, false}, {36, true}}},
    {"DRADeviceCompatibilityGroups", {{37, false}}},
    {"DRADeviceTaintRules", {{35, false}, {37, true}}},   /* 1.36: beta, off (its API off by default) */
    {"DRADeviceTaints", {{33, false}, {36, true}}},
    {"DRAExtendedResource", {{34, false}, {36, true}}},
    {"DRAFractionalCapacityRange", {{37, false}}},      /* on only at MinCompatibilityVersion 1.37 */
    {"DRAListTypeAttributes", {{36, false}}},
    {"DRANodeAllocatableResources", {{36, false}}},
    {"DRAOptionalNodeOperations", {{37, false}}},
    {"DRAPartitionableDevices", {{33, false}, {36, true}}},
    {"DRAPrioritizedList", {{33, false}, {34, true}}},
    {"DRAResourceClaimDeviceStatus", {{32, false}, {33, true}}},
    {"DRAResourceClaimGranularStatusAuthorization", {{36, true}}},
    {"DRASchedulerFilterTimeout", {{34, true}}},
    {"DRAWorkloadResourceClaims", {{36, false}}},
    {"KubeletPodResourcesDynamicResources", {{33, false}, {34, true}}},
    {"ResourceHealthStatus", {{31, false}, {36, true}}},
};

static bool default_in(const versioned *g, unsigned minor) {
    bool on = false;
    for (size_t i = 0; i < sizeof g->steps / sizeof g->steps[0] && g->steps[i].minor; i++)
        if (g->steps[i].minor <= minor) on = g->steps[i].on;
    return on;
}

void ext_gates_for_release(dra_features *f, unsigned minor, char *changed, size_t nchanged) {
    dra_features_default(f);
    if (minor > EXT_GATES_NEWEST_MINOR) minor = EXT_GATES_NEWEST_MINOR;
    strbuf spec;
    sbuf_init(&spec);
    for (size_t i = 0; i < sizeof GATES / sizeof GATES[0]; i++) {
        bool want = default_in(&GATES[i], minor), now;
        if (dra_features_get(f, GATES[i].name, &now) && now != want)
            sbuf_addf(&spec, "%s%s=%s", spec.len ? "," : "", GATES[i].name, want ? "true" : "false");
    }
    snprintf(changed, nchanged, "%s", spec.len ? spec.buf : "");
    if (spec.len) {
        err e;
        err_clear(&e);
        bool ok = dra_features_parse(f, spec.buf, &e);   /* names of engine/features.c: cannot fail */
        (void)ok;
    }
    sbuf_free(&spec);
}

/* "v1.36.2-gke.100" → 36. */
static bool minor_of_git(const char *v, unsigned *minor) {
    if (!v) return false;
    if (*v == 'v') v++;
    char *end;
    unsigned long major = strtoul(v, &end, 10);
    if (end == v || *end != '.' || major != 1) return false;
    const char *m = end + 1;
    unsigned long mi = strtoul(m, &end, 10);
    if (end == m || mi > 1000) return false;
    *minor = (unsigned)mi;
    return true;
}

bool ext_gates_server_minor(const char *version_json, unsigned *minor, char *git_version, size_t ngit, err *e) {
    json_error_t je;
    json_t *j = json_loads(version_json ? version_json : "", 0, &je);
    const char *git = json_string_value(json_object_get(j, "gitVersion"));
    const char *mn = json_string_value(json_object_get(j, "minor"));
    const char *mj = json_string_value(json_object_get(j, "major"));
    snprintf(git_version, ngit, "%s", git ? git : "");
    bool ok = minor_of_git(git, minor);
    if (!ok && mn && mj && !strcmp(mj, "1")) {
        char *end;
        unsigned long mi = strtoul(mn, &end, 10);
        ok = end != mn && (!*end || *end == '+') && mi <= 1000;
        if (ok) {
            *minor = (unsigned)mi;
            if (!git) snprintf(git_version, ngit, "v1.%lu", mi);
        }
    }
    json_decref(j);
    if (!ok) err_set(e, "/version names no Kubernetes 1.x release (gitVersion %s, major %s, minor %s)", git ? git : "-",
                     mj ? mj : "-", mn ? mn : "-");
    return ok;
}

const char *ext_gates_name(size_t i) { return i < sizeof GATES / sizeof GATES[0] ? GATES[i].name : NULL; }
