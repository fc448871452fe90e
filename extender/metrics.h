/* metrics.h — the extender's Prometheus metrics: request counts and latency
 * histograms per verb, filter outcomes per node, allocator effort, and at scrape time
 * the snapshot's generation, build time and object counts and the process RSS. All
 * counters are atomics updated on the request path without locks. */
#ifndef DRA_EXTENDER_METRICS_H
#define DRA_EXTENDER_METRICS_H

#include <stdint.h>

#include "engine/snapshot.h"

typedef enum ext_verb {
    EXT_VERB_FILTER,
    EXT_VERB_PRIORITIZE,
    EXT_VERB_BIND,
    EXT_VERB_OBJECTS,
    EXT_VERB_HEALTHZ,
    EXT_VERB_READYZ,
    EXT_VERB_METRICS,
    EXT_VERB_DEBUG,
    EXT_VERB_OTHER,
    EXT_VERB_COUNT
} ext_verb;

typedef struct ext_metrics ext_metrics;

ext_metrics *ext_metrics_new(void);
void ext_metrics_free(ext_metrics *m);

/* One finished request: its verb, HTTP status and duration. */
void ext_metrics_request(ext_metrics *m, ext_verb v, int status, uint64_t ns);
/* One filter/prioritize evaluation: per-node outcomes (indexed by dra_fit_status),
 * nodes decided and allocator steps spent. */
void ext_metrics_fits(ext_metrics *m, const uint64_t per_status[5], uint64_t nodes, uint64_t steps);
/* A pod that needed no DRA (every node passed without work) / was refused as a whole. */
void ext_metrics_pod(ext_metrics *m, bool needs_dra, bool pod_error);

/* The text exposition (format 0.0.4); s may be NULL (no snapshot yet). Malloc'd. */
char *ext_metrics_render(ext_metrics *m, dra_snapshot *s);

#endif
