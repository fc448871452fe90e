/* fuzz_watch.c — input: bytes of a kube-apiserver watch stream, fed to the live
 * cache's decoder (ext_watch_feed) over a small store. Byte 0 chooses the kind
 * (DeviceClass, ResourceSlice, ResourceClaim, Node, DeviceTaintRule); byte 1 where the
 * stream is cut into two chunks (a line split across chunks, as TCP delivers it); the
 * rest is the stream. Must hold for every input: no crash or leak (sanitizers), the
 * store still publishes a snapshot that a pod can be decided against, within 2 s.
 * Each input gets a fresh store, over a catalog shared with a donor store that is
 * replaced every 4,096 inputs: building the CEL environments was 80 % of an input's
 * time, and the shared catalog (interned names, compiled programs) only grows. */
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "extender/watch.h"

static const char base[] =
    "[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"gpu\"},"
    "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'gpu.example.com'\"}}]}},"
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-1\"}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},"
    "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"},{\"name\":\"gpu-1\"}]}},"
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ml\"},"
    "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]}}}]";

static const char *const kinds[] = {"DeviceClass", "ResourceSlice", "ResourceClaim", "Node", "DeviceTaintRule"};

static dra_store *donor(const dra_features *f) {
    static dra_store *d;   /* libFuzzer calls the body millions of times in one process */
    static unsigned uses;
    if (d && ++uses % 4096 == 0) {
        dra_store_free(d);
        d = NULL;
    }
    if (!d) d = dra_store_new(f);
    return d;
}

int fuzz_watch_one(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    double t0 = fuzz_now();
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new_sharing(&f, donor(&f));
    json_t *objs = json_loads(base, 0, NULL);
    err e;
    err_clear(&e);
    if (!dra_store_apply_json(st, objs, &e)) abort();
    json_decref(objs);
    const char *kind = kinds[data[0] % 5];
    const char *stream = (const char *)data + 2;
    size_t n = size - 2, cut = n ? data[1] % (n + 1) : 0;
    bool relist = false;
    /* two chunks of one stream: a line split at `cut` must read as if it came whole */
    const char *chunks[2] = {stream, stream + cut};
    size_t lens[2] = {cut, n - cut};
    if (!ext_watch_feed(st, kind, chunks, lens, 2, &relist)) abort();
    dra_snapshot *s = dra_store_acquire(st);
    if (!s) abort();
    json_t *pod = json_loads("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"resourceClaims\":"
                             "[{\"name\":\"g\",\"resourceClaimName\":\"c\"}]}}",
                             0, NULL);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    if (pr) {
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        dra_fit fit;
        dra_pod_fit(pr, x, "node-1", NULL, DRA_SCORE_BINPACK, 0, &fit);
        if ((unsigned)fit.status > DRA_FIT_ERROR) abort();
        dra_alloc_ctx_free(x);
        dra_pod_request_free(pr);
    }
    json_decref(pod);
    dra_snapshot_release(s);
    dra_store_free(st);
    if (fuzz_now() - t0 > 2.0) {
        fprintf(stderr, "fuzz_watch: %.1f s for %zu bytes\n", fuzz_now() - t0, size);
        abort();
    }
    return 0;
}

FUZZ_ENTRY(fuzz_watch_one)
