/* plan_minnodes.h — the state `--min-nodes` and the buy list share (plan_minnodes.c,
 * plan_buy.c): the workloads each on its own against the base and one empty copy of
 * each shape, and the probe that says whether a set of workloads fits a count of
 * copies per shape. Private to planner/.
 *
 * Each workload on its own first: the replicas it places on the base alone (`alone0`)
 * and how many of the rest one empty copy of a shape takes (`cap`). When every device
 * is node-local and the workload shares no claim, those two settle its count exactly:
 * identical replicas see identical state, so each node takes the same number whatever
 * the order and the scoring, and the simulation places replicas while any node has
 * room; the workload needs ceil((replicas - alone0) / cap) copies under both scorings,
 * and no count when cap is 0. The same figures bound any mix from below (a workload
 * shares its copies with the others at best): sum over shapes of n_s * cap_s >=
 * replicas - alone0, which prunes most counts before any probe. */
#ifndef DRA_PLANNER_PLAN_MINNODES_H
#define DRA_PLANNER_PLAN_MINNODES_H

#include "planner/plan_copies.h"
#include "planner/planner.h"

typedef struct mn_search {
    dra_store *st;
    plan_copies *pc;
    size_t ns, nw;              /* shapes, workloads */
    const plan_workloads *w;
    const plan_opts *o;
    long max;                   /* copies of one shape at most */
    bool node_local;            /* every slice names its node, copies included */
    /* per workload */
    long *alone0;               /* replicas placed on its own on the base */
    bool *exact;                /* node-local, no shared claim: the capacity argument holds */
    char **invalid;             /* no node can ever run its pod (a template missing, ...), else NULL */
    /* per shape s and workload i, at [s * nw + i] */
    long *cap;                  /* of the replicas left, how many one empty copy takes */
    char **cause, **reason;     /* why an empty copy takes none (cap 0, replicas left) */
    long *need;                 /* [score][s * nw + i] (score 0 binpack, 1 spread): copies of s
                                 * for the workload on its own; -1: none within max */
    bool *impossible;           /* [s * nw + i]: no count of s helps (cap 0, replicas left) */
    plan_fitmemo *memo;         /* fits kept from probe to probe (plan_fitmemo.h) */
    size_t probes;              /* simulations run, for --timings */
    bool all_round;             /* the next probe places every workload (plan_opts.probe_all) */
    err *e;
    bool failed;                /* a probe could not run (e set): every answer is void */
} mn_search;

static inline size_t mn_at(const mn_search *m, size_t s, size_t i) { return s * m->nw + i; }
static inline long mn_left(const mn_search *m, size_t i) { return m->w->v[i].replicas - m->alone0[i]; }

/* Whether the workloads with include[i] all place every replica with counts[s] copies
 * of each shape, under the scoring. false with m->failed on an error. */
bool mn_fits(mn_search *m, const long *counts, const bool *include, dra_score_mode score);
/* The fewest k in [lo, max] for which counts with counts[s] = k fits (monotone in k),
 * -1 when none; k < lo is known not to fit. hint: where to look first (>= lo); hi: a
 * count known to fit (or -1). */
long mn_least(mn_search *m, long *counts, size_t s, const bool *include, dra_score_mode score, long lo, long hint,
              long hi, long max);

/* The cheapest mix (plan_buy.c): counts[s] per shape, prices per node, of the
 * workloads with include[i]; false when no mix within max per shape places them.
 * single[s]: shape s's own count for them under binpack, -1 when none is known. */
bool mn_buy(mn_search *m, const double *prices, const bool *include, const long *single, long *counts,
            double *total);

#endif
