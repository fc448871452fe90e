/* objects.h — objects the live tests and the live benchmark put on the fake
 * kube-apiserver: an allocated one-request claim of gpu.example.com devices. */
#ifndef DRA_TESTS_LIVE_OBJECTS_H
#define DRA_TESTS_LIVE_OBJECTS_H

#include <jansson.h>
#include <stdio.h>

/* Claim ns/name with `count` devices gpu-<first>.. of pool (the node's) allocated. */
static inline json_t *live_allocated_claim(const char *ns, const char *name, const char *pool, int first, int count) {
    json_t *res = json_array();
    for (int i = first; i < first + count; i++) {
        char d[16];
        snprintf(d, sizeof d, "gpu-%d", i);
        json_array_append_new(res, json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver", "gpu.example.com", "pool",
                                             pool, "device", d));
    }
    return json_pack("{s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i}}]}}, s:{s:{s:{s:o}}}}", "metadata", "name", name,
                     "namespace", ns, "spec", "devices", "requests", "name", "gpu", "exactly", "deviceClassName",
                     "gpu.example.com", "count", count, "status", "allocation", "devices", "results", res);
}

#endif
