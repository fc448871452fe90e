/* features.c — feature gates by their Kubernetes names and the Kubernetes 1.37
 * defaults. DRADeviceBindingConditions and DRAResourceClaimDeviceStatus map to one
 * allocator flag (as Go's DeviceBindingAndStatus); it is on only when both are. Gates
 * that exist in Kubernetes but do not change allocation are accepted and ignored. */
#include "engine/engine.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void dra_features_default(dra_features *f) {
    *f = (dra_features){
        .admin_access = true,          /* GA */
        .prioritized_list = true,      /* GA in 1.36 */
        .partitionable = true,         /* beta, on */
        .device_taints = true,         /* beta, on */
        .binding_conditions = true,    /* beta, on (both gates) */
        .consumable_capacity = true,   /* beta, on */
        .list_type_attributes = false, /* alpha */
        .derived_attributes = false,   /* alpha in 1.37 */
        .extended_resource = true,     /* on by default in 1.37 */
        .workload_claims = false,      /* beta in 1.37, off by default */
        .filter_timeout = true,        /* beta and on by default since 1.34 */
    };
}

bool dra_features_parse(dra_features *f, const char *spec, err *e) {
    bool binding = f->binding_conditions, status = f->binding_conditions;
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
        if (!strcmp(tok, "DRAAdminAccess")) f->admin_access = on;
        else if (!strcmp(tok, "DRAPrioritizedList")) f->prioritized_list = on;
        else if (!strcmp(tok, "DRAPartitionableDevices")) f->partitionable = on;
        else if (!strcmp(tok, "DRADeviceTaints")) f->device_taints = on;
        else if (!strcmp(tok, "DRADeviceBindingConditions")) binding = on;
        else if (!strcmp(tok, "DRAResourceClaimDeviceStatus")) status = on;
        else if (!strcmp(tok, "DRAConsumableCapacity")) f->consumable_capacity = on;
        else if (!strcmp(tok, "DRAListTypeAttributes")) f->list_type_attributes = on;
        else if (!strcmp(tok, "DRADerivedAttributes")) f->derived_attributes = on;
        else if (!strcmp(tok, "DRAExtendedResource")) f->extended_resource = on;
        else if (!strcmp(tok, "DRAWorkloadResourceClaims")) f->workload_claims = on;
        else if (!strcmp(tok, "DRASchedulerFilterTimeout")) f->filter_timeout = on;
        else if (!strcmp(tok, "DynamicResourceAllocation") || !strcmp(tok, "DRADeviceTaintRules"))
            continue;
        else return err_set(e, "unknown feature gate %s", tok);
    }
    f->binding_conditions = binding && status;
    return true;
}
