/* planner.h — offline capacity planning (`dralloc plan`): replicas of Pod templates
 * placed on a cluster snapshot one by one, as kube-scheduler would place them, on
 * the engine's planning overlay (engine/snapshot.h: dra_overlay_*,
 * dra_pod_fit_overlay). Nothing here talks to a cluster; every answer comes from
 * objects read from files.
 *
 *   plan_objects    Kubernetes objects read from files (YAML or JSON, multi-document,
 *                   Lists expanded, directories), kept as JSON so what-ifs can add
 *                   and remove nodes before a store is built from them.
 *   plan_workloads  the workload file: {"workloads": [{name, replicas, template,
 *                   gang?}]} plus any objects it carries.
 *   plan_run        one simulation → the result JSON that report/ renders:
 *                   {"workloads": [{name, replicas, placed, unplaced, reason?,
 *                   headroom, placements: [{node, replicas}]}], "nodes", "pools",
 *                   "classes", "counters" (dra_capacity_json after placement, nodes
 *                   with "stranded"), "summary"}.
 *   what-ifs        plan_add_nodes (copies of a node shape), plan_remove_nodes (by
 *                   label selector), plan_min_nodes (fewest copies for all to fit).
 *   scale-out       plan_shard_parse, plan_merge (scenario results of sharded runs
 *                   joined in scenario order). */
#ifndef DRA_PLANNER_H
#define DRA_PLANNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/engine.h"

/* ---- objects ----------------------------------------------------------------------- */

typedef struct plan_objects {
    json_t *items;     /* array of objects */
    json_t *sources;   /* parallel array: the file each came from (string) */
} plan_objects;

void plan_objects_init(plan_objects *o);
void plan_objects_free(plan_objects *o);
void plan_objects_copy(plan_objects *dst, const plan_objects *src);
/* Appends one document: an object, a `kind: *List`, or a JSON array of those. */
void plan_objects_add_doc(plan_objects *o, json_t *doc, const char *source);
/* A file or a directory of *.yaml / *.yml / *.json files (name order). */
bool plan_objects_load_path(plan_objects *o, const char *path, err *e);
/* The documents of one file (.json: JSON; else YAML, multi-document) as an array. */
json_t *plan_file_docs(const char *path, err *e);

/* A store holding the objects (one apply, all or nothing). */
dra_store *plan_store_new(const plan_objects *o, const dra_features *f, err *e);

/* ---- workloads ------------------------------------------------------------------------ */

typedef struct plan_workload {
    char *name;
    long replicas;
    json_t *tmpl;      /* the Pod template: {metadata?, spec} */
    bool gang;         /* all replicas or none */
} plan_workload;

typedef struct plan_workloads {
    plan_workload *v;
    size_t n;
} plan_workloads;

/* Reads a workload file; objects beside the workloads (other documents, or an
 * "objects" array) are appended to `objects`. */
bool plan_workloads_load(const char *path, plan_workloads *w, plan_objects *objects, err *e);
/* The same from documents already read (an array). */
bool plan_workloads_from_docs(const json_t *docs, const char *source, plan_workloads *w, plan_objects *objects, err *e);
void plan_workloads_free(plan_workloads *w);

/* ---- simulation ------------------------------------------------------------------------- */

typedef void (*plan_progress_fn)(void *arg, size_t done, size_t total);

typedef struct plan_opts {
    dra_features features;
    dra_score_mode score;        /* binpack (default) or spread */
    dra_device_choice device_choice;   /* which devices of a node a replica gets (first-fit default) */
    bool seeded;                 /* shuffle score ties by seed instead of node name order */
    uint64_t seed;
    long headroom_max;           /* bound on the headroom search per workload; 0: skip it */
    bool stranded;               /* compute stranded devices */
    bool no_fit_cache;           /* fit every node for every replica (tests compare both ways) */
    plan_progress_fn progress;   /* may be NULL */
    void *progress_arg;
} plan_opts;

void plan_opts_default(plan_opts *o);

/* One simulation. NULL with e set when the objects do not load. */
json_t *plan_run(const plan_objects *objects, const plan_workloads *w, const plan_opts *o, err *e);
/* As plan_run on a store the caller built (the objects' snapshot). */
json_t *plan_run_store(dra_store *st, const plan_workloads *w, const plan_opts *o, err *e);

/* ---- what-ifs ------------------------------------------------------------------------ */

/* Adds `count` copies of the node shape (one Node and the ResourceSlices whose
 * spec.nodeName is it; other objects of the shape are added once when missing),
 * named `<node>-whatif-<i>` from i = first on (names already taken are skipped):
 * metadata.name, spec.nodeName, spec.pool.name and slice names rewritten (the
 * node's name inside them replaced, else the suffix appended), and the
 * kubernetes.io/hostname label. */
bool plan_add_nodes(plan_objects *o, const plan_objects *shape, long count, long first, err *e);
/* Removes the Nodes matching `k=v[,k=v]` (every pair must match) and the
 * ResourceSlices local to them. Returns how many nodes, -1 on a bad selector. */
long plan_remove_nodes(plan_objects *o, const char *selector, err *e);
/* The fewest copies of the shape (≤ max) for every replica to be placed: 0, 1, 2, 4,
 * ... until all fit, then a binary search; each probe a fresh store. Returns the plan
 * at that count with "minNodes": {"shape", "count"} added ("count": null when even
 * max copies are not enough: then the plan at max). */
json_t *plan_min_nodes(const plan_objects *base, const plan_objects *shape, const plan_workloads *w,
                       const plan_opts *o, long max, err *e);

/* ---- scale-out --------------------------------------------------------------------------- */

/* "i/N" with 0 ≤ i < N. */
bool plan_shard_parse(const char *s, unsigned *i, unsigned *n);
/* Joins plan outputs: every input's "scenarios" (or the input itself as one scenario)
 * concatenated and ordered by "index"; returns {"scenarios": [...]}. */
json_t *plan_merge(json_t *const *docs, size_t n, err *e);

#endif
