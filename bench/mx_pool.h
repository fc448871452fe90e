/* mx_pool.h — the threads that filter every node of one pod for the scheduler_perf
 * matrix (matrix.c): `dralloc bench WORKLOAD --threads N` and `bench scaling`.
 *
 * The nodes are cut into blocks of contiguous nodes, each block with a planning
 * overlay of its own (an overlay and its fit memo are single-threaded); a block is
 * decided by one thread at a time, whichever claimed it for the job, so the answers
 * are those of one overlay per block whatever the thread count and the timing. A
 * node's commits go to its block's overlay (mx_pool_commit): exact where a commit can
 * only change its own node's answers (node-local pools) or nothing is committed;
 * matrix.c runs a fill over shared pools on one thread.
 *
 * Lifetime: the snapshot, names and fits given to mx_pool_new outlive the pool; a job's
 * pod request outlives its mx_pool_filter call. One calling thread. */
#ifndef DRA_BENCH_MX_POOL_H
#define DRA_BENCH_MX_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/context.h"
#include "engine/snapshot.h"

typedef struct mx_pool mx_pool;

/* threads ≥ 1 (the caller is one of them); names[n] and fits[n] for n < nodes. */
mx_pool *mx_pool_new(unsigned threads, dra_snapshot *s, bool memo, int nodes, char (*names)[32], dra_fit *fits);
void mx_pool_free(mx_pool *p);   /* NULL: nothing */
/* What a scheduling cycle takes from the filter, reduced by the threads that decided
 * the nodes (each over its blocks, the caller over the blocks' parts), so that the
 * caller reads a few lines a job, not every node's fit another core just wrote. */
typedef struct mx_pool_answer {
    int best;          /* the highest binpack score among the nodes that fit, ties by node order; -1: none */
    size_t hits;       /* nodes answered by the fit memo */
    uint64_t digest;   /* every node's status and score: a sum over nodes of a hash of (node, status,
                        * score), the same whatever the blocks and the order they were added in */
} mx_pool_answer;

/* fits[n] := pr's fit on node n for every node (binpack score, no commit); *out the
 * answer over them. */
void mx_pool_filter(mx_pool *p, const dra_pod_request *pr, mx_pool_answer *out);
/* Decides node n for pr again on its block's overlay and commits the allocation there. */
void mx_pool_commit(mx_pool *p, const dra_pod_request *pr, int n, dra_fit *out);
/* The calling thread's allocator context (free of any job between calls). */
dra_alloc_ctx *mx_pool_ctx(mx_pool *p);

typedef struct mx_pool_stats {
    size_t jobs, inline_jobs;   /* filters, and those the caller ran alone */
    unsigned blocks;
} mx_pool_stats;
void mx_pool_stats_get(const mx_pool *p, mx_pool_stats *out);

#endif
