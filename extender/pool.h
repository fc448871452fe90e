/* pool.h — the extender's own worker pool for deciding nodes: N threads, each with one
 * dra_alloc_ctx it reuses request after request (an allocation context owns arenas
 * and CEL scratch that are expensive to build and must not be shared). A request
 * hands in a batch of nodes; idle workers take chunks of nodes from the oldest batch,
 * so one large filter runs on every core while concurrent small ones still
 * interleave, and a batch cheaper than waking a worker never wakes one. */
#ifndef DRA_EXTENDER_POOL_H
#define DRA_EXTENDER_POOL_H

#include <jansson.h>

#include "engine/snapshot.h"

typedef struct ext_pool ext_pool;

/* One request's nodes: out[i] receives node i's fit. nodes may be NULL (the
 * snapshot's Node objects are used), else nodes[i] is the Node the request carried. */
typedef struct ext_batch_spec {
    const dra_pod_request *pr;
    const char *const *names;
    const json_t *const *nodes;
    size_t n;
    dra_score_mode mode;
    uint64_t deadline_ns;   /* CLOCK_MONOTONIC; a node not started by then times out */
    dra_fit *out;
} ext_batch_spec;

ext_pool *ext_pool_new(unsigned nthreads);
/* Joins the workers; no batch may be running. */
void ext_pool_free(ext_pool *p);
/* Decides every node of the batch, blocking until all are done. Thread-safe. A batch
 * whose nodes at the measured cost per node take less than a woken worker's measured
 * start is decided on the calling thread alone; else in chunks by the calling thread
 * and the workers (pool.c). */
void ext_pool_run(ext_pool *p, const ext_batch_spec *b);
/* Batches decided so far on the calling thread alone, and shared with the workers. */
void ext_pool_counts(ext_pool *p, size_t *alone, size_t *shared);

#endif
