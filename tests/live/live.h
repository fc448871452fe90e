/* live.h — what the parts of the live test program share: the failure count and
 * CHECK, a ResourceSlice builder, polling, and the parts themselves (live_bind.c:
 * gang siblings and DRA extended resources in bind mode; live_pending.c: bind mode
 * while the watch lags; live_tls.c: client certificates over https). live_test.c
 * runs them in order against its fake (LIVE_ONLY=part,... picks some). */
#ifndef DRA_TESTS_LIVE_H
#define DRA_TESTS_LIVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/snapshot.h"
#include "extender/bind.h"
#include "extender/extender.h"
#include "extender/kube.h"
#include "extender/pending.h"
#include "extender/watch.h"
#include "tests/live/fakeapi.h"

extern int live_failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "live_test: FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                           \
            live_failures++;                               \
        }                                                  \
    } while (0)

/* A node-local slice of gpu.example.com devices gpu-0..gpu-<n-1> (model attribute). */
json_t *live_slice(const char *name, const char *node, int n, const char *model);
/* Polls pred every 20 ms for up to s seconds; its last answer. */
bool live_wait(double s, bool (*pred)(void *), void *arg);
/* Waits up to s seconds for w to have listed more than `before` times (the counter
 * moves just after a relist's snapshot is published, so the objects can be seen
 * first). */
bool live_wait_relist(ext_watch *w, uint64_t before, double s);
bool live_quiet(void);   /* no log lines unless LIVE_DEBUG is set */

/* live_discovery.c: `dralloc capacity --server` on a fake serving DeviceTaintRules at
 * v1beta2, then not at all (a fake of its own). */
void live_discovery(const char *dralloc);

/* live_test.c: ResourceClaimTemplates "one" and "two" (1 and 2 GPUs, namespace ml)
 * for the static part of a store; whether the store comes to answer as a fresh store
 * of the server's objects does (object counts, and per node whether a 1-GPU and a
 * 2-GPU pod fit), waiting up to 10 s (a failed CHECK otherwise). */
json_t *live_templates(void);
bool live_converge(fake_api *f, dra_store *st, const char *what);

/* serve --bind in process: a store (st, owned), the pending-writes table shared by
 * the watch and the binder, the watch (wo, its pending set here), the binder and a
 * service with 2 workers; live_env_start waits up to 10 s for the watch to be ready
 * (a failed CHECK naming `what` otherwise). */
typedef struct live_env {
    dra_store *st;
    ext_pending *pending;
    ext_watch *w;
    ext_binder *b;
    ext_service *svc;
} live_env;
void live_env_start(live_env *e, ext_kube *k, dra_store *st, double pending_timeout_s, ext_watch_opts *wo,
                    const char *what);
void live_env_stop(live_env *e);

/* POST /filter of pod on nodes through svc (live_test.c): the passing nodes as "a,b,"
 * in out, and in why (NULL: none) the failure message given for node explain. */
void live_filter(ext_service *svc, const json_t *pod, const char *const *nodes, int n, char *out, size_t outn,
                 const char *explain, char *why, size_t whyn);

/* live_bind.c */
void live_gang_siblings(fake_api *f, ext_kube *k);
void live_extended_resources(fake_api *f, ext_kube *k);
/* live_pending.c: bind mode while the watch lags (held events, relists, the timeout) */
void live_pending(fake_api *f, ext_kube *k);
/* live_concurrent.c: binds side by side (parallel, the last device, a failed write) */
void live_concurrent(fake_api *f, ext_kube *k);
/* live_requeue.c: bind mode's wake-up write for the pods parked on "no node" */
void live_requeue(fake_api *f, ext_kube *k);
/* live_evict.c: serve --preemption=evict (evictions, holds, their release), its own fake */
void live_evict(void);
/* live_tls.c: its own https fake; skipped with a message when openssl is missing */
void live_tls(void);

/* live_why.c: `dralloc why` and `kubectl dra why` against the fake server (dralloc:
 * the binary; the cluster has `nodes` nodes of 8 GPUs, the even ones with 7 held). */
void live_why(fake_api *f, const char *dralloc, const char *tokfile, int nodes);

#endif
