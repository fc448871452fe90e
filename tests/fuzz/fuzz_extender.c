/* fuzz_extender.c — input: an HTTP request body for the extender's verbs, answered by
 * ext_service_handle as POST /filter and POST /prioritize over a small built-in
 * snapshot (two nodes with GPUs behind PCIe roots, one allocated GPU, a template, a
 * shared claim, a node without devices). Must hold for every input: a 200 or a 4xx
 * whose body is {"error": "..."} (never a 5xx: the snapshot is loaded), a 200 body
 * that is JSON of the verb's shape, and an answer within 2 s (the filter budget is 1 s). */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "extender/extender.h"

static const char snapshot[] =
    "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":["
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-1\",\"labels\":{\"zone\":\"a\"}}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-2\"}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"cpu-1\"}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu\"},"
    "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}],"
    "\"extendedResourceName\":\"example.com/gpu\"}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-1-gpus\"},"
    "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":["
    "{\"name\":\"gpu-0\",\"attributes\":{\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:00\"},\"index\":{\"int\":0}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}},"
    "{\"name\":\"gpu-1\",\"attributes\":{\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:00\"},\"index\":{\"int\":1}},\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}},"
    "{\"name\":\"gpu-2\",\"attributes\":{\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:40\"},\"index\":{\"int\":2}},\"capacity\":{\"memory\":{\"value\":\"40Gi\"}}}]}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-2-gpus\"},"
    "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-2\",\"pool\":{\"name\":\"node-2\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":["
    "{\"name\":\"gpu-0\",\"attributes\":{\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:00\"}}}]}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"name\":\"two-gpus\",\"namespace\":\"default\"},"
    "\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\",\"count\":2}}],"
    "\"constraints\":[{\"matchAttribute\":\"resource.kubernetes.io/pcieRoot\"}]}}}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"shared\",\"namespace\":\"default\"},"
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\",\"selectors\":[{\"cel\":"
    "{\"expression\":\"device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0\"}}]}}]}}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"used\",\"namespace\":\"default\"},"
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]}},"
    "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.example.com\","
    "\"pool\":\"node-1\",\"device\":\"gpu-2\"}]}}}}]}";

typedef struct harness {
    dra_store *store;
    ext_service *svc;
} harness;

static harness *get(void) {
    static harness h;   /* built once per process: libFuzzer calls the body millions of times */
    if (h.svc) return &h;
    dra_features f;
    dra_features_default(&f);
    h.store = dra_store_new(&f);
    json_error_t je;
    json_t *doc = json_loads(snapshot, 0, &je);
    err e;
    err_clear(&e);
    if (!doc || !dra_store_apply_json(h.store, doc, &e)) {
        fprintf(stderr, "fuzz_extender: built-in snapshot rejected: %s %s\n", je.text, e.msg);
        abort();
    }
    json_decref(doc);
    ext_config c;
    ext_config_default(&c);
    c.workers = 1;
    c.filter_budget_ns = 1000000000ull;
    c.max_nodes = 2000;
    h.svc = ext_service_new(h.store, &c);
    return &h;
}

static void check(const char *verb, const ext_reply *r, double secs) {
    if (secs > 2.0) {
        fprintf(stderr, "fuzz_extender: %s took %.2f s\n", verb, secs);
        abort();
    }
    json_error_t je;
    json_t *j = json_loadb(r->body, r->len, JSON_DECODE_ANY, &je);
    bool ok = j != NULL;
    if (ok && r->status == 200) ok = strcmp(verb, "/filter") ? json_is_array(j) : json_is_object(json_object_get(j, "FailedNodes"));
    else if (ok && r->status >= 400 && r->status < 500) {
        const char *m = json_string_value(json_object_get(j, "error"));
        ok = m && *m;
    } else ok = false;
    if (!ok) {
        fprintf(stderr, "fuzz_extender: %s answered %d %.*s\n", verb, r->status, (int)(r->len > 500 ? 500 : r->len), r->body);
        abort();
    }
    json_decref(j);
}

int fuzz_extender_one(const uint8_t *data, size_t size) {
    harness *h = get();
    static const char *const verbs[] = {"/filter", "/prioritize"};
    for (size_t i = 0; i < 2; i++) {
        ext_reply r;
        double t0 = fuzz_now();
        ext_service_handle(h->svc, "POST", verbs[i], (const char *)data, size, &r);
        check(verbs[i], &r, fuzz_now() - t0);
        ext_reply_free(&r);
    }
    return 0;
}

FUZZ_ENTRY(fuzz_extender_one)
