/* features.c — feature gates by their Kubernetes names and the Kubernetes 1.37
 * defaults.
 *
 * The list is every DRA feature gate of Kubernetes 1.37, taken from the 1.37
 * development tree: the kube-scheduler's versioned gates
 * (defaultVersionedKubernetesFeatureGates, whose newest entries are the 1.37 ones:
 * DRADeviceTaints and DRADeviceTaintRules GA, DRAExtendedResource and
 * DRAResourceClaimDeviceStatus GA and locked, DRAWorkloadResourceClaims beta off,
 * DRADerivedAttributes, DRADeviceCompatibilityGroups and DRAOptionalNodeOperations
 * alpha), plus the API server's DRAResourceClaimGranularStatusAuthorization (beta, on
 * since 1.36) and the kubelet's KubeletPodResourcesDynamicResources and
 * ResourceHealthStatus (the Kubernetes feature-gate reference). A default is the one
 * Kubernetes 1.37 runs with.
 *
 * DRADeviceBindingConditions and DRAResourceClaimDeviceStatus map to one allocator
 * flag (as Go's DeviceBindingAndStatus): on only when both are. Gates that exist in
 * Kubernetes but do not change allocation are accepted and recorded, and nothing reads
 * them. Locked gates (DynamicResourceAllocation, DRAAdminAccess, DRAPrioritizedList,
 * DRAExtendedResource, DRAResourceClaimDeviceStatus) can still be turned off here, as
 * before: a what-if run may ask how an older cluster would answer. */
#include "engine/engine.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct gate {
    const char *name;
    size_t off;              /* the bool in dra_features */
    bool dflt;               /* Kubernetes 1.37 default */
} gate;

#define G(name, field, dflt) {name, offsetof(dra_features, field), dflt}
static const gate GATES[] = {
    G("DynamicResourceAllocation", dynamic_resource_allocation, true),   /* GA, locked: the API itself */
    G("DRAAdminAccess", admin_access, true),                             /* GA, locked since 1.36 */
    G("DRAConsumableCapacity", consumable_capacity, true),               /* beta */
    G("DRADerivedAttributes", derived_attributes, false),                /* alpha in 1.37 */
    G("DRADeviceBindingConditions", gate_binding_conditions, true),      /* beta */
    /* alpha in 1.37: compatibility groups on consumesCounters entries; the engine
     * decodes no such field, so no device is ever kept apart by one */
    G("DRADeviceCompatibilityGroups", device_compatibility_groups, false),
    /* GA in 1.37: the rules' taints are merged whatever the gate says (store.c) */
    G("DRADeviceTaintRules", device_taint_rules, true),
    G("DRADeviceTaints", device_taints, true),                           /* GA in 1.37 */
    G("DRAExtendedResource", extended_resource, true),                   /* GA, locked in 1.37 */
    /* beta in 1.37, on only with --min-compatibility-version 1.37 (its spec's
     * MinCompatibilityVersion), which defaults to one release back: off. API
     * validation of fractional range values; parsing here takes any quantity */
    G("DRAFractionalCapacityRange", fractional_capacity_range, false),
    G("DRAListTypeAttributes", list_type_attributes, false),             /* alpha */
    /* alpha: node allocatable resources (kubelet and NodeResourcesFit), not devices */
    G("DRANodeAllocatableResources", node_allocatable_resources, false),
    /* alpha in 1.37: whether a driver must prepare a device; kubelet only */
    G("DRAOptionalNodeOperations", optional_node_operations, false),
    G("DRAPartitionableDevices", partitionable, true),                   /* beta */
    G("DRAPrioritizedList", prioritized_list, true),                     /* GA, locked in 1.37 */
    G("DRAResourceClaimDeviceStatus", gate_device_status, true),         /* GA, locked in 1.37 */
    /* beta, API server: who may write a claim's status */
    G("DRAResourceClaimGranularStatusAuthorization", granular_status_authorization, true),
    G("DRASchedulerFilterTimeout", filter_timeout, true),                /* beta since 1.34 */
    G("DRAWorkloadResourceClaims", workload_claims, false),              /* beta in 1.37, off */
    /* the kubelet's DRA gates, without the prefix (feature-gate docs): the pod resources
     * API listing claims' devices (beta since 1.34), device health in pod status (beta
     * since 1.36) */
    G("KubeletPodResourcesDynamicResources", pod_resources_dra, true),
    G("ResourceHealthStatus", resource_health_status, true),
};
#undef G

static bool *field(dra_features *f, const gate *g) { return (bool *)((char *)f + g->off); }

static const gate *gate_named(const char *name) {
    for (size_t i = 0; i < sizeof GATES / sizeof GATES[0]; i++)
        if (!strcmp(GATES[i].name, name)) return &GATES[i];
    return NULL;
}

/* The allocator's one flag for the two binding gates. */
static void derive(dra_features *f) { f->binding_conditions = f->gate_binding_conditions && f->gate_device_status; }

void dra_features_default(dra_features *f) {
    *f = (dra_features){0};
    for (size_t i = 0; i < sizeof GATES / sizeof GATES[0]; i++) *field(f, &GATES[i]) = GATES[i].dflt;
    derive(f);
}

bool dra_features_get(const dra_features *f, const char *name, bool *on) {
    const gate *g = gate_named(name);
    if (!g) return false;
    *on = *field((dra_features *)f, g);
    return true;
}

bool dra_features_parse(dra_features *f, const char *spec, err *e) {
    /* a struct filled before the two binding gates were kept apart: both from the flag */
    if (!f->gate_binding_conditions && !f->gate_device_status)
        f->gate_binding_conditions = f->gate_device_status = f->binding_conditions;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (!*tok) continue;
        char *eq = strchr(tok, '=');
        if (!eq) return err_set(e, "feature gate %s: want NAME=true|false", tok);
        *eq = '\0';
        const char *val = eq + 1;
        bool on;
        if (!strcasecmp(val, "true")) on = true;
        else if (!strcasecmp(val, "false")) on = false;
        else return err_set(e, "feature gate %s: invalid value %s (want true or false)", tok, val);
        const gate *g = gate_named(tok);
        if (!g) return err_set(e, "unknown feature gate %s", tok);
        *field(f, g) = on;
    }
    derive(f);
    return true;
}
