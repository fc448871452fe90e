/* kube.h — a small kube-apiserver client over libcurl: where the server is and how
 * to authenticate (a kubeconfig and its context, the in-cluster service account, or
 * --server with a token file and CA), one-shot requests, and streaming GETs for
 * watches. Thread-safe: each request uses its own curl handle.
 *
 * Authentication as client-go does it for the cases a scheduler extender needs:
 * bearer tokens (re-read from their file before every request, since service-account
 * tokens rotate, and a request answered 401 is retried once with the file read
 * again), client certificates (files or inline *-data), a CA bundle (file or
 * inline), insecure-skip-tls-verify. Exec and auth-provider plugins are refused with
 * a message saying so. http:// servers are accepted (test servers). */
#ifndef DRA_EXTENDER_KUBE_H
#define DRA_EXTENDER_KUBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

typedef struct ext_kube ext_kube;

typedef struct ext_kube_opts {
    const char *kubeconfig;      /* path; NULL: in-cluster when KUBERNETES_SERVICE_HOST is set */
    const char *context;         /* kubeconfig context; NULL: current-context */
    const char *server;          /* explicit server URL (overrides the kubeconfig's) */
    const char *token_file;
    const char *ca_file;
    bool insecure;               /* --insecure-skip-tls-verify */
    long timeout_s;              /* one-shot requests (default 30) */
} ext_kube_opts;

/* NULL with e set when the configuration is unusable (names what and where). */
ext_kube *ext_kube_new(const ext_kube_opts *o, err *e);
void ext_kube_free(ext_kube *k);
const char *ext_kube_server(const ext_kube *k);
/* The namespace kubectl would default -n to: the kubeconfig context's `namespace`, or
 * in a pod its service account's namespace; NULL when neither names one ("default"). */
const char *ext_kube_namespace(const ext_kube *k);

typedef struct ext_kube_resp {
    long status;                 /* HTTP status; 0 when the request did not complete */
    char *body;                  /* NUL-terminated, caller frees */
    size_t len;
    long retry_after_s;          /* Retry-After (seconds), -1 when absent */
} ext_kube_resp;

/* One request; body may be NULL. False (e set) only when no HTTP answer came. */
bool ext_kube_request(ext_kube *k, const char *method, const char *path, const char *body, const char *content_type,
                      ext_kube_resp *out, err *e);

/* A streaming GET: fn receives the body as it arrives and returns false to stop.
 * Ends when the server closes, fn stops, *stop turns true (checked at least once a
 * second), or nothing arrives for idle_s seconds (a stalled stream). *status is the
 * HTTP status (0: no answer); only a 200 answer's body reaches fn. */
bool ext_kube_stream(ext_kube *k, const char *path, bool (*fn)(void *arg, const char *data, size_t n), void *arg,
                     const _Atomic bool *stop, long idle_s, long *status, long *retry_after_s, err *e);

/* The cluster once, for offline tools (`plan`, `capacity --kubeconfig`): every
 * DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate, Node, Pod and
 * DeviceTaintRule, listed in pages, as one JSON array of objects with their kind and
 * apiVersion set. Each resource.k8s.io kind is read at the newest version the server
 * serves it at (discovery: v1, else v1beta2, v1beta1, v1alpha3 — a 1.34 cluster
 * serves DeviceTaintRules at v1alpha3 only, a 1.35 one at v1beta2); the engine
 * converts older versions to v1. A kind served at no version is left out, and notes
 * (NULL: not wanted) gets a sentence saying so and what it means, as does a failed
 * discovery (then v1 is read). NULL with e set when a list fails. */
json_t *ext_kube_snapshot(ext_kube *k, json_t *notes, err *e);

#endif
