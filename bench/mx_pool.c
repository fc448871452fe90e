/* mx_pool.c — the matrix's filter threads (mx_pool.h): blocks handed out by one
 * counter, claimed in chunks sized from the measured cost.
 *
 * A job is one pod: every block decided once. The caller publishes it by storing the
 * ticket (job number << 32 | next block) and then claims chunks like any worker; a
 * worker spinning after its last job sees the ticket in ~0.1 µs and claims chunks by
 * compare-and-swap on it. So the caller never waits for a worker to start: a worker
 * that comes late finds fewer chunks or none, and a job costs at most one chunk more
 * than its share (the last chunk another thread is deciding). Chunks are sized so that
 * one costs about CLAIM_TARGET_NS at the measured cost a node, and so that every
 * thread still gets CLAIMS_PER_THREAD of them: the claim (~0.1 µs, one line moving
 * between cores) stays small against what it hands out.
 *
 * What a job writes that other threads read: the ticket (per chunk), done (per chunk),
 * and each thread's own slot (its start and busy time, on its own cache line). Nothing
 * is written per node but the node's fit, and a block's fits are one thread's.
 *
 * The whole job runs on the caller, waking nobody, when its cost at the measured cost
 * a node is below the measured start of a worker (a sleeping worker's is tens of µs, a
 * spinning one's well under one): the choice reads the model and two measurements,
 * never a comparison of two jobs' wall times (pods differ in cost a node, and one slow
 * job used to flip such a choice for hundreds of cycles). Every PROBE_EVERY jobs run
 * alone, one is shared to measure the start again.
 *
 * Sleeping without a lost wake-up: a worker counts itself in sleepers, then reads the
 * ticket, under mu; the caller stores the ticket, then reads sleepers (both
 * sequentially consistent), and broadcasts under mu when any sleeps. */
#include "bench/mx_pool.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "bench/bench.h"

enum {
    MXP_MAX_THREADS = 64,
    MXP_BLOCKS_PER_THREAD = 16,   /* blocks (overlays) per thread: the finest chunk */
    MXP_CLAIM_TARGET_NS = 8000,   /* a chunk's cost */
    MXP_CLAIMS_PER_THREAD = 4,    /* at least this many chunks per thread, for balance */
    MXP_SPIN_NS = 20000,          /* a worker spins this long after a job before it sleeps */
    MXP_YIELD_AFTER_NS = 50000,   /* the caller, waiting for a chunk, yields its core after */
    MXP_PROBE_EVERY = 64,
};

typedef struct mxp_block {
    dra_overlay *ov;
    int lo, hi;
} mxp_block;

/* One thread's slot (0: the caller). first_ns and busy_ns are the current job's, reset
 * by the caller before it publishes the job, written by the slot's thread after a
 * successful claim and before it adds to done. */
typedef struct mxp_thread {
    _Alignas(64) dra_alloc_ctx *x;
    uint64_t first_ns;   /* its first claim in the job (0: none) */
    uint64_t busy_ns;    /* time deciding its chunks */
} mxp_thread;

struct mx_pool {
    unsigned n, nblocks;
    mxp_block *blocks;
    int nodes;
    char (*names)[32];
    dra_fit *fits;
    mxp_thread th[MXP_MAX_THREADS];
    pthread_t tid[MXP_MAX_THREADS];
    /* the current job, written by the caller before the ticket's store */
    const dra_pod_request *pr;
    _Atomic unsigned chunk;   /* relaxed: a claim that read another job's fails its CAS */
    /* the caller's own */
    uint64_t gen;       /* jobs published */
    uint64_t cost_ns;   /* per node, moving average */
    uint64_t wake_ns;   /* publication to a worker's first claim, moving average */
    unsigned since_probe;
    size_t jobs, inline_jobs;
    _Alignas(64) _Atomic uint64_t ticket;
    _Alignas(64) _Atomic unsigned done;
    _Alignas(64) _Atomic unsigned sleepers;
    bool quit;   /* under mu */
    pthread_mutex_t mu;
    pthread_cond_t go;
};

typedef struct mxp_arg {
    mx_pool *p;
    unsigned t;
} mxp_arg;

static inline void mxp_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void mxp_block_run(mx_pool *p, unsigned b, dra_alloc_ctx *x) {
    const mxp_block *k = &p->blocks[b];
    for (int n = k->lo; n < k->hi; n++)
        dra_pod_fit_overlay(p->pr, k->ov, x, p->names[n], DRA_SCORE_BINPACK, 0, false, &p->fits[n]);
}

/* Claims and decides chunks of job g until none is left (or another job is out). */
static void mxp_drain(mx_pool *p, unsigned t, uint64_t g) {
    mxp_thread *me = &p->th[t];
    for (;;) {
        uint64_t v = atomic_load_explicit(&p->ticket, memory_order_acquire);
        unsigned b, chunk = 0;
        for (;;) {
            if (v >> 32 != g) return;
            b = (unsigned)v;
            if (b >= p->nblocks) return;
            chunk = atomic_load_explicit(&p->chunk, memory_order_relaxed);
            if (atomic_compare_exchange_weak_explicit(&p->ticket, &v, v + chunk, memory_order_acq_rel,
                                                      memory_order_acquire))
                break;
        }
        unsigned end = b + chunk < p->nblocks ? b + chunk : p->nblocks;
        uint64_t t0 = bench_now_ns();
        if (!me->first_ns) me->first_ns = t0;
        for (unsigned k = b; k < end; k++) mxp_block_run(p, k, me->x);
        me->busy_ns += bench_now_ns() - t0;
        atomic_fetch_add_explicit(&p->done, end - b, memory_order_release);
    }
}

/* The job after `seen`: spins MXP_SPIN_NS, then sleeps; 0 when the pool stops. */
static uint64_t mxp_next_job(mx_pool *p, uint64_t seen) {
    uint64_t g, until = bench_now_ns() + MXP_SPIN_NS;
    for (int i = 0; (g = atomic_load_explicit(&p->ticket, memory_order_acquire) >> 32) == seen; i++) {
        mxp_relax();
        if ((i & 63) == 63 && bench_now_ns() > until) break;
    }
    if (g != seen) return g;
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    while ((g = atomic_load(&p->ticket) >> 32) == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    bool quit = p->quit;
    pthread_mutex_unlock(&p->mu);
    return quit ? 0 : g;
}

static void *mxp_worker(void *arg) {
    mxp_arg a = *(mxp_arg *)arg;
    free(arg);
    uint64_t seen = 0, g;
    while ((g = mxp_next_job(a.p, seen))) {
        seen = g;
        mxp_drain(a.p, a.t, g);
    }
    return NULL;
}

mx_pool *mx_pool_new(unsigned threads, dra_snapshot *s, bool memo, int nodes, char (*names)[32], dra_fit *fits) {
    mx_pool *p = xcalloc(1, sizeof *p);
    p->n = threads < 1 ? 1 : threads > MXP_MAX_THREADS ? MXP_MAX_THREADS : threads;
    p->nodes = nodes;
    p->names = names;
    p->fits = fits;
    unsigned nb = p->n == 1 ? 1 : p->n * MXP_BLOCKS_PER_THREAD;
    if (nodes > 0 && nb > (unsigned)nodes) nb = (unsigned)nodes;
    p->nblocks = nb ? nb : 1;
    p->blocks = xcalloc(p->nblocks, sizeof *p->blocks);
    for (unsigned b = 0; b < p->nblocks; b++) {
        p->blocks[b].ov = dra_overlay_new(s);
        dra_overlay_memo(p->blocks[b].ov, memo);
        p->blocks[b].lo = (int)((int64_t)nodes * b / p->nblocks);
        p->blocks[b].hi = (int)((int64_t)nodes * (b + 1) / p->nblocks);
    }
    p->cost_ns = 2000;    /* until measured: a decision, not a memo hit */
    p->wake_ns = 20000;   /* a woken worker, until measured */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    for (unsigned t = 0; t < p->n; t++) {
        p->th[t].x = dra_alloc_ctx_new();
        /* the cycle reads a fit's status and score, never its reason: a node that does
         * not fit costs its search only, not the explanation beside it */
        dra_alloc_ctx_set_reasons(p->th[t].x, false);
    }
    for (unsigned t = 1; t < p->n; t++) {
        mxp_arg *a = xmalloc(sizeof *a);
        *a = (mxp_arg){p, t};
        if (pthread_create(&p->tid[t], NULL, mxp_worker, a)) {
            fprintf(stderr, "dralloc bench: cannot start a worker thread\n");
            abort();
        }
    }
    return p;
}

void mx_pool_free(mx_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned t = 1; t < p->n; t++) pthread_join(p->tid[t], NULL);
    for (unsigned t = 0; t < p->n; t++) dra_alloc_ctx_free(p->th[t].x);
    for (unsigned b = 0; b < p->nblocks; b++) dra_overlay_free(p->blocks[b].ov);
    free(p->blocks);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    free(p);
}

static uint64_t mxp_average(uint64_t old, uint64_t now) { return old ? (old * 3 + now) / 4 : now; }

/* Blocks per claim at the measured cost a node. */
static unsigned mxp_chunk(const mx_pool *p) {
    uint64_t block_ns = p->cost_ns * (uint64_t)(p->nodes > 0 ? p->nodes : 1) / p->nblocks;
    unsigned by_cost = (unsigned)(block_ns ? MXP_CLAIM_TARGET_NS / block_ns : p->nblocks);
    unsigned by_balance = p->nblocks / (p->n * MXP_CLAIMS_PER_THREAD);
    unsigned c = by_cost < by_balance ? by_cost : by_balance;
    return c ? c : 1;
}

void mx_pool_filter(mx_pool *p, const dra_pod_request *pr) {
    p->pr = pr;
    p->jobs++;
    uint64_t nodes = (uint64_t)(p->nodes > 0 ? p->nodes : 1), t0 = bench_now_ns();
    bool alone = p->n == 1 || nodes * p->cost_ns <= p->wake_ns;
    if (alone && p->n > 1 && ++p->since_probe >= MXP_PROBE_EVERY) {
        p->since_probe = 0;
        alone = false;
    }
    if (alone) {
        for (unsigned b = 0; b < p->nblocks; b++) mxp_block_run(p, b, p->th[0].x);
        p->cost_ns = mxp_average(p->cost_ns, (bench_now_ns() - t0) / nodes + 1);
        p->inline_jobs += p->n > 1;
        return;
    }
    atomic_store_explicit(&p->chunk, mxp_chunk(p), memory_order_relaxed);
    for (unsigned t = 0; t < p->n; t++) p->th[t].first_ns = p->th[t].busy_ns = 0;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    uint64_t g = ++p->gen, published = bench_now_ns();
    assert(g < (1ull << 32));
    atomic_store(&p->ticket, g << 32);
    if (atomic_load(&p->sleepers)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
    }
    mxp_drain(p, 0, g);
    /* every chunk is claimed: wait for the ones other threads are deciding */
    uint64_t wait0 = bench_now_ns();
    for (unsigned i = 0; atomic_load_explicit(&p->done, memory_order_acquire) < p->nblocks; i++) {
        mxp_relax();
        if ((i & 255) == 255 && bench_now_ns() - wait0 > MXP_YIELD_AFTER_NS) sched_yield();
    }
    uint64_t end = bench_now_ns(), busy = 0, wake = end - published;   /* no worker came: at least the job */
    for (unsigned t = 0; t < p->n; t++) {
        busy += p->th[t].busy_ns;
        if (t && p->th[t].first_ns && p->th[t].first_ns - published < wake) wake = p->th[t].first_ns - published;
    }
    p->wake_ns = mxp_average(p->wake_ns, wake);
    p->cost_ns = mxp_average(p->cost_ns, busy / nodes + 1);
}

void mx_pool_commit(mx_pool *p, const dra_pod_request *pr, int n, dra_fit *out) {
    assert(n >= 0 && n < p->nodes);
    unsigned b = (unsigned)((int64_t)n * p->nblocks / p->nodes);
    while (b + 1 < p->nblocks && n >= p->blocks[b].hi) b++;
    while (b > 0 && n < p->blocks[b].lo) b--;
    dra_pod_fit_overlay(pr, p->blocks[b].ov, p->th[0].x, p->names[n], DRA_SCORE_BINPACK, 0, true, out);
}

dra_alloc_ctx *mx_pool_ctx(mx_pool *p) { return p->th[0].x; }

void mx_pool_stats_get(const mx_pool *p, mx_pool_stats *out) {
    *out = (mx_pool_stats){.jobs = p->jobs, .inline_jobs = p->inline_jobs, .blocks = p->nblocks};
}
