/* convert.c — resource.k8s.io/v1beta1 objects in their v1 shape, as the API server's
 * conversion (pkg/apis/resource/v1beta1/conversion.go) produces them: every served
 * version is the same stored object, so a v1beta1 file must allocate exactly as its v1
 * twin. v1beta2 already has the v1 shape (devices flat, requests under `exactly`).
 *
 * v1beta1 differs in two places:
 *   ResourceSlice  spec.devices[i] = {name, basic: {attributes, capacity, ...}}: the
 *                  fields of `basic` are the device's own fields in v1;
 *   DeviceRequest  the ExactDeviceRequest fields (deviceClassName, selectors,
 *                  allocationMode, count, adminAccess, tolerations, capacity,
 *                  derivedAttributes) sit on the request itself; v1 holds them under
 *                  `exactly` when any of them is set (so a request with both them and
 *                  firstAvailable fails validation as in v1, "multiple fields are set").
 * ResourceClaimTemplate nests the claim spec (spec.spec); DeviceClass and
 * DeviceTaintRule have the same shape in every version. */
#include "engine/decode/validate.h"

#include <string.h>

static const char *const exact_fields[] = {"deviceClassName", "selectors",   "allocationMode", "count",
                                           "adminAccess",     "tolerations", "capacity",       "derivedAttributes"};

/* v1beta1 DeviceRequest → v1, in place (req is a copy). */
static void convert_request(json_t *req) {
    json_t *exactly = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(exact_fields); i++) {
        json_t *v = json_object_get(req, exact_fields[i]);
        if (!v) continue;
        if (!json_is_null(v)) {
            if (!exactly) exactly = json_object();
            json_object_set(exactly, exact_fields[i], v);
        }
        json_object_del(req, exact_fields[i]);
    }
    if (exactly) json_object_set_new(req, "exactly", exactly);
}

static void convert_claim_spec(json_t *spec) {
    json_t *reqs = json_object_get(json_object_get(spec, "devices"), "requests");
    size_t i;
    json_t *r;
    json_array_foreach(reqs, i, r) if (json_is_object(r)) convert_request(r);
}

static void convert_slice(json_t *obj) {
    json_t *devs = json_object_get(json_object_get(obj, "spec"), "devices");
    size_t i;
    json_t *d;
    json_array_foreach(devs, i, d) {
        json_t *basic = json_object_get(d, "basic");
        if (!json_is_object(d) || !basic) continue;
        json_incref(basic);
        json_object_del(d, "basic");
        if (json_is_object(basic)) json_object_update_missing(d, basic);
        json_decref(basic);
    }
}

json_t *dra__convert_to_v1(const char *kind, const char *version, const json_t *obj) {
    if (strcmp(version, "v1beta1")) return NULL;
    json_t *o = json_deep_copy(obj);
    if (!strcmp(kind, "ResourceSlice")) {
        convert_slice(o);
    } else if (!strcmp(kind, "ResourceClaim")) {
        convert_claim_spec(json_object_get(o, "spec"));
    } else if (!strcmp(kind, "ResourceClaimTemplate")) {
        convert_claim_spec(json_object_get(json_object_get(o, "spec"), "spec"));
    }
    json_object_set_new(o, "apiVersion", json_string("resource.k8s.io/v1"));
    return o;
}
