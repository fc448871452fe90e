/* bench.h — the latency/throughput harness behind `dralloc bench`: named
 * workloads, timing loops, and reports with medians, percentiles and ratios.
 *
 * The harness pieces, one file each: clock.h (monotonic ns clock), runner.h
 * (warm-up + timed passes), stats.h (min / median / p50 / p90 / p99 / ratios),
 * report.h (text tables), rng.h (the deterministic RNG the workloads share).
 *
 * Workloads, each a `bench_<name>_main` taking the common options:
 *   cel — the CEL selector workload of ../shared/bench/cel-peers (cel_devices.h,
 *         cel_exprs.h): N synthetic devices, selectors E1..E5, ns per evaluation,
 *         match counts checked against plain-C reference predicates.
 * A workload returns 0 when it ran and every cross-check held, 1 when a check
 * failed (printed as MISMATCH) or the code under test reported an error. */
#ifndef DRA_BENCH_H
#define DRA_BENCH_H

#include "base/base.h"
#include "bench/clock.h"
#include "bench/report.h"
#include "bench/rng.h"
#include "bench/runner.h"
#include "bench/stats.h"

#include <stdio.h>

typedef struct bench_opts {
    size_t devices;        /* workload size (cel: number of devices), 0 = the workload's default */
    size_t reps;           /* timed passes, 0 = default */
    size_t warmup;         /* untimed passes before them */
    const char *json;      /* when set, also write the results as JSON to this path */
    const char *dump;      /* when set, only write the generated input as text to this path ("-": out) */
    const char *shape;     /* fleet: gpu8 | mig8 (issue 43's fleets, fleet_scale.c); NULL: the planner's fleet */
    FILE *out;             /* report stream (stdout) */
} bench_opts;

#define BENCH_CEL_DEFAULT_DEVICES 100000
#define BENCH_CEL_DEFAULT_REPS 10
#define BENCH_CEL_SEED 42

int bench_cel_main(const bench_opts *o);
/* alloc — dra_allocate latency on scheduler_perf-shaped worlds (alloc_bench.c). */
int bench_alloc_main(const bench_opts *o);
/* snapshot — store ingest, one-object snapshot updates and node-view warm-up at 500
 * and 5,000 nodes × 8 GPUs (snapshot_bench.c); --devices 500|5000 runs one size. */
int bench_snapshot_main(const bench_opts *o);
/* listpage — a kube-apiserver LIST page of 500 MIG-carved slices read by jansson, by
 * dra_json_parse and item by item (listpage_bench.c); --devices N: N slices. */
int bench_listpage_main(const bench_opts *o);
/* relist — a MIG-carved fleet's ResourceSlices (--devices N nodes, default 5,000) as
 * LIST pages of text, read into a new store as the watch reads them (relist_bench.c). */
int bench_relist_main(const bench_opts *o);
/* soak — memory over 1,000,000 pod decisions and 20,000 through a formerly leaking
 * selector, with snapshots published meanwhile (soak_bench.c); --reps N: N × 100,000. */
int bench_soak_main(const bench_opts *o);

/* layout — two attribute lookups over the cel workload's devices with their attribute
 * arrays laid out four ways (attr_layout.c): what a selector at 100k devices waits for. */
int bench_layout_main(const bench_opts *o);

/* The scheduler_perf DRA matrix (matrix.c): named workloads, whole scheduling cycles,
 * one JSON document or a table; compare two such documents. */
size_t bench_matrix_count(void);
const char *bench_matrix_name(size_t i);
int bench_matrix_find(const char *name);
void bench_matrix_list(FILE *f);
typedef struct bench_matrix_opts {
    const bench_opts *o;         /* reps, out, json (a copy of the document) */
    unsigned threads[64];        /* thread counts to run, in order; the first is the workload's figures */
    size_t nthreads;             /* 0: one thread */
    bool scaling;                /* a range was asked for: the scaling report ("scaling" in the JSON) */
    bool as_json;                /* the JSON document on o->out instead of the table */
    bool memo;                   /* the planning overlay's fit memo */
    double scale;                /* nodes, pools, init claims, pods times this (0: 1) */
    bool build_only;             /* the snapshot's build only, no scheduling cycle (--build-only) */
} bench_matrix_opts;
int bench_matrix_run(const int *which, size_t n, const bench_matrix_opts *mo);
int bench_matrix_compare(const char *old_path, const char *new_path, FILE *out);
/* plan — the planning loop (plan_bench.c): 5000pods_500nodes pods/s with every node
 * fitted and with the fit cache, 36,000 one-GPU pods on 5,000 nodes x 8 GPUs;
 * --devices 500|5000 runs one shape. */
int bench_plan_main(const bench_opts *o);
/* fleet — the capacity planner's fleet (fleet.c): H100, MIG-carved A100 and CPU nodes with
 * claims allocated and two DeviceTaintRules; --devices N nodes; --dump DIR writes it as
 * files for `dralloc plan`, else ingest and the capacity view are timed. */
int bench_fleet_main(const bench_opts *o);
/* fleet --shape gpu8|mig8 (fleet_scale.c, fleet_gen.h): 20,000 or 100,000 nodes of 8 GPUs
 * and 8 NICs, or of 8 MIG-carved A100s, 90 % held; --dump DIR, else ingest as LIST pages,
 * memory per device and claim, capacity, filter and update latencies. */
int bench_fleet_scale_main(const bench_opts *o, const char *shape);
/* serve — /filter load on a `dralloc serve` child process at fixed rates (serve_load.c);
 * --devices is the node count, --reps the seconds per rate, json "-" means stdout. */
int bench_serve_main(const bench_opts *o);

#endif
