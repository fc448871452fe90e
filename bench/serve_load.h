/* serve_load.h — the serve workload's inputs, shared with the TLS benchmark
 * (tests/live/tls_bench.c, which needs the extender's TLS beside it): a snapshot in the
 * shape of scheduler_perf's DRA tests (8 devices per node, half allocated) and
 * kube-scheduler-shaped /filter bodies (a pod with a template claim for 2 devices,
 * 500 NodeNames). */
#ifndef DRA_BENCH_SERVE_LOAD_H
#define DRA_BENCH_SERVE_LOAD_H

#include <jansson.h>
#include <stddef.h>

#include "bench/rng.h"

/* The objects of a cluster of `nodes` nodes (a new reference). */
json_t *bench_serve_snapshot(size_t nodes);
/* The ExtenderArgs of pod k over 500 of the nodes (malloc'd JSON). */
char *bench_serve_filter_body(size_t k, size_t nodes, bench_rng *r);

#endif
