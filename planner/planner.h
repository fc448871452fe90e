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
 *                   label selector), plan_min_nodes (fewest copies of node shapes for
 *                   each workload and for all, and the cheapest mix at given prices).
 *   scale-out       plan_shard_parse, plan_merge (scenario results of sharded runs
 *                   joined in scenario order). */
#ifndef DRA_PLANNER_H
#define DRA_PLANNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/snapshot.h"

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
    /* Set before loading: a field the file format does not know (a typo such as
     * `replica: 3` would silently plan 1) is passed to warn (may be NULL) with what the
     * field may have meant, or with strict is an error. Templates are checked as the
     * API server decodes a PodTemplateSpec (plan_tmpl.h): unknown fields the same way,
     * a wrong JSON type an error either way. */
    bool strict;
    void (*warn)(void *arg, const char *msg);
    void *warn_arg;
} plan_workloads;

/* Reads a workload file; objects beside the workloads (other documents, or an
 * "objects" array) are appended to `objects`. Known fields: a document's "workloads"
 * and "objects" (and apiVersion, kind, metadata); a workload's name, replicas, template,
 * gang; a template's metadata and spec. */
bool plan_workloads_load(const char *path, plan_workloads *w, plan_objects *objects, err *e);
/* The same from documents already read (an array). */
bool plan_workloads_from_docs(const json_t *docs, const char *source, plan_workloads *w, plan_objects *objects, err *e);
void plan_workloads_free(plan_workloads *w);
/* Replica rep of a workload as the Pod the simulation decides: the template's metadata
 * and spec, named <workload>-<rep> (namespace default unless the template names one),
 * with a UID. */
json_t *plan_replica_pod(const plan_workload *w, long rep);

/* ---- simulation ------------------------------------------------------------------------- */

typedef void (*plan_progress_fn)(void *arg, size_t done, size_t total);

/* Where a plan's time went (added to by each run; CLOCK_MONOTONIC ns). */
typedef struct plan_timings {
    uint64_t store_ns;           /* the store built from the objects: the engine's ingest */
    uint64_t place_ns;           /* replicas placed, explanations of the unplaced */
    uint64_t account_ns;         /* the capacity view after placement, stranded devices, headroom */
    uint64_t free_ns;            /* the store freed after planning (the caller's, when it frees it) */
    size_t probes;               /* --min-nodes: the simulations its search ran */
} plan_timings;

/* Fits kept across simulations whose snapshots differ by whole added nodes
 * (plan_fitmemo.h; --min-nodes' probes). */
typedef struct plan_fitmemo plan_fitmemo;

typedef struct plan_opts {
    dra_features features;
    dra_score_mode score;        /* binpack (default) or spread */
    dra_device_choice device_choice;   /* which devices of a node a replica gets (first-fit default) */
    bool seeded;                 /* shuffle score ties by seed instead of node name order */
    uint64_t seed;
    long headroom_max;           /* bound on the headroom search per workload; 0: skip it */
    bool stranded;               /* compute stranded devices */
    bool no_fit_cache;           /* fit every node for every replica (tests compare both ways) */
    bool one_thread;             /* decide a replica's nodes on one thread, not two (plan_scan.h;
                                  * tests compare both ways) */
    plan_progress_fn progress;   /* may be NULL */
    void *progress_arg;
    plan_timings *timings;       /* may be NULL */
    bool no_counters;            /* leave out per-counter values ("counters", pools' counterSets
                                  * counters): what only -o json prints */
    bool probe;                  /* only whether every replica is placed (--min-nodes' probes):
                                  * stops at the first workload with a replica that fits nowhere
                                  * (not explained; later workloads counted unplaced untried), no
                                  * capacity view, stranded devices or headroom; the result has
                                  * "workloads" [{name, replicas, placed, unplaced}] and "summary"
                                  * {replicas, placed, unplaced} only */
    bool probe_all;              /* with probe: every workload is placed, none stops the run */
    plan_fitmemo *memo;          /* may be NULL; with the fit cache, node answers are taken from
                                  * and kept in it (plan_fitmemo.h says when that is exact) */
} plan_opts;

void plan_opts_default(plan_opts *o);

/* One simulation. NULL with e set when the objects do not load. */
json_t *plan_run(const plan_objects *objects, const plan_workloads *w, const plan_opts *o, err *e);
/* As plan_run on a store the caller built (the objects' snapshot); node_local: every
 * ResourceSlice names its node (plan_objects_node_local), so the fit cache may be used. */
json_t *plan_run_store(dra_store *st, const plan_workloads *w, const plan_opts *o, bool node_local, err *e);
/* Every ResourceSlice of the objects has spec.nodeName: no device is seen from two nodes. */
bool plan_objects_node_local(const plan_objects *objects);

/* ---- what-ifs ------------------------------------------------------------------------ */

/* Adds `count` copies of the node shape (one Node and the ResourceSlices whose
 * spec.nodeName is it; other objects of the shape are added once when missing),
 * named `<node>-whatif-<i>` from i = first on (names already taken are skipped):
 * metadata.name, spec.nodeName, spec.pool.name and slice names rewritten (the
 * node's name inside them replaced, else the suffix appended), and the
 * kubernetes.io/hostname label. */
bool plan_add_nodes(plan_objects *o, const plan_objects *shape, long count, long first, err *e);
/* A Kubernetes label selector, as kubectl -l takes it (plan_selector.c): key, !key,
 * key=v, key==v, key!=v, key in (a,b), key notin (a,b), key>n, key<n, comma-joined. */
typedef struct plan_selector plan_selector;
plan_selector *plan_selector_parse(const char *text, err *e);   /* NULL with e naming the column */
bool plan_selector_matches(const plan_selector *s, const json_t *labels);
void plan_selector_free(plan_selector *s);

/* Removes the Nodes the label selector matches and the ResourceSlices local to them.
 * Returns how many nodes, -1 on a bad selector. */
long plan_remove_nodes(plan_objects *o, const char *selector, err *e);
/* `--min-nodes SHAPE...` (plan_minnodes.c, plan_buy.c): on the store st (the base
 * cluster; copies of the shapes are added to it and taken away, and it holds the
 * printed plan's copies after), for each shape — named by its Node — the fewest copies
 * (≤ max) for each workload on its own and for all the workloads the shape can help,
 * under binpack and spread scoring; a workload no count of the shape helps (one
 * replica does not fit an empty copy, and the base does not hold it) is named with its
 * cause and left out of the whole file's count, which says so. With prices (one per
 * shape, per node, > 0; NULL: none), the cheapest mix of the shapes that places every
 * workload some shape helps, under binpack scoring, exact for the simulation. Returns
 * the plan (plan_run_store) of the cluster with the answer's copies — the mix, or the
 * one shape's count under o->score; the cluster as given when there is none — with
 *   "addedNodes": {"<shape>": n},
 *   "minNodes": {"<shape>": {"all": {"binpack": n|null, "spread": n|null, "excluded": [w]},
 *                            "perWorkload": {"<w>": {"binpack": n|null, "spread": n|null}
 *                                                 | {"impossible": cause, "reason"?}},
 *                            "max"}}
 *   "buy" (with prices): {"total": x|null, "nodes": {"<shape>": n}, "score": "binpack",
 *                          "prices": {"<shape>": x}, "excluded": [w], "reason"? (none found),
 *                          "perWorkload": {"<w>": {"existing": n, "<shape>": n, "unplaced": n}
 *                                               | {"impossible": cause, ...}}}
 * (null: no count up to max works). NULL with e set when a shape or a probe fails. */
json_t *plan_min_nodes(dra_store *st, const plan_objects *shapes, size_t nshapes, const double *prices,
                       const plan_workloads *w, const plan_opts *o, long max, err *e);

/* ---- scale-out --------------------------------------------------------------------------- */

/* Digests of a plan's inputs (plan_digest.c): h with the bytes of a file, or of a
 * directory's YAML/JSON files in name order, folded in (false with e set when one cannot
 * be read); h with a text folded in. */
bool plan_digest_path(uint64_t *h, const char *path, err *e);
uint64_t plan_digest_text(uint64_t h, const char *s, size_t n);

/* "i/N" with 0 ≤ i < N. */
bool plan_shard_parse(const char *s, unsigned *i, unsigned *n);
/* Joins the outputs of `dralloc plan --scenarios --shard i/N` runs: each carries
 * "snapshot" and "scenarioSet" digests and "shard": "i/N". Refused, naming the input
 * (names[k]): an input that is not such an output, a digest or N that differs from the
 * first input's, a shard given twice, a shard missing. Returns {"snapshot",
 * "scenarioSet", "scenarios": [...]}, the scenarios in index order — the same as the
 * unsharded run's merged alone. */
json_t *plan_merge(json_t *const *docs, const char *const *names, size_t n, err *e);

#endif
