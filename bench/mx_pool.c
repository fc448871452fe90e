/* mx_pool.c — the matrix's filter threads (mx_pool.h): blocks handed out in chunks
 * sized from the measured cost, each thread's own blocks first, then the others'.
 *
 * A job is one pod: every block decided once. Thread t owns the blocks of range t (a
 * contiguous t-th of them) and its ticket (job number << 32 | next block of the range,
 * on a cache line of its own). The caller publishes a job by storing every range's
 * ticket; a thread claims chunks of its own range by compare-and-swap on its ticket,
 * then takes chunks of the other ranges the same way (stealing), so the caller never
 * waits for a worker to start — a worker that comes late finds its range taken — and
 * a job costs at most one chunk more than its share. Owning a range keeps a node's
 * overlay, view and fit on the same core from one job to the next: claimed from one
 * shared counter, each node went to either thread and its lines moved with it (a
 * decision cost 630 ns at two threads against 514 at one). Chunks are sized so that
 * one costs about CLAIM_TARGET_NS at the measured cost a node, and so that every
 * thread still gets CLAIMS_PER_THREAD of them.
 *
 * What a job writes that other threads read: the tickets (per chunk), done (per chunk),
 * and each thread's own slot (its start and busy time, on its own cache line). Nothing
 * is written per node but the node's fit, and a block's fits are one thread's.
 *
 * The whole job runs on the caller, waking nobody, when its cost at the measured cost
 * a node is below the measured start of a worker (a sleeping worker's is tens of µs, a
 * spinning one's under one): the choice reads the model and two measurements, never a
 * comparison of two jobs' wall times (pods differ in cost a node, and one slow job
 * used to flip such a choice for hundreds of cycles). Every PROBE_EVERY jobs run
 * alone, one is shared to measure the start again.
 *
 * Sleeping without a lost wake-up: a worker counts itself in sleepers, then reads its
 * ticket, under mu; the caller stores the tickets, then reads sleepers (both
 * sequentially consistent), and broadcasts under mu when any sleeps. */
#include "bench/mx_pool.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

enum {
    MXP_MAX_THREADS = 64,
    MXP_BLOCKS_PER_THREAD = 32,   /* blocks (overlays) per thread: the finest chunk */
    MXP_CLAIM_TARGET_NS = 4000,   /* a chunk's cost */
    MXP_CLAIMS_PER_THREAD = 4,    /* at least this many chunks per thread, for balance */
    MXP_SPIN_MIN_NS = 20000,      /* a worker spins at least this long after a job before it sleeps, */
    MXP_SPIN_MAX_NS = 2000000,    /* at most this long, */
    MXP_SPIN_GAPS = 4,            /* and otherwise this many of the measured gaps between jobs */
    MXP_YIELD_AFTER_NS = 50000,   /* the caller, waiting for a chunk, yields its core after */
    MXP_PROBE_EVERY = 64,
};

/* A block: its overlay and nodes (set once), and its part of the current job's answer,
 * written by the thread that decided it before that thread adds to done. */
typedef struct mxp_block {
    _Alignas(64) dra_overlay *ov;
    int lo, hi;
    int best;   /* the block's best node (-1: none fits) */
    int64_t best_score;
    size_t hits;
    uint64_t sum;
} mxp_block;

/* One thread's slot (0: the caller). first_ns and busy_ns are the current job's, reset
 * by the caller before it publishes the job, written by the slot's thread after a
 * successful claim and before it adds to done. ticket: its range's, written by the
 * caller once per job and by a claim once per chunk. */
typedef struct mxp_thread {
    _Alignas(64) _Atomic uint64_t ticket;
    unsigned lo, hi;     /* its range of blocks */
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
    uint64_t gap_ns;    /* a job's end to the next one's start (the cycle's serial part), likewise */
    uint64_t last_end;  /* when the last job ended (0: none yet) */
    uint64_t wake_ns;   /* publication to a worker's first claim, moving average */
    unsigned since_probe;
    size_t jobs, inline_jobs;
    _Alignas(64) _Atomic unsigned done;
    _Alignas(64) _Atomic unsigned sleepers;
    _Atomic uint64_t spin_ns;   /* how long workers spin after a job (relaxed; set per job) */
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

/* A node's term of the answer's digest (splitmix64's finalizer over node, status, score). */
static uint64_t mxp_term(int n, int status, int64_t score) {
    uint64_t z = (uint64_t)n * 0x9E3779B97F4A7C15ull ^ (uint64_t)status << 56 ^ (uint64_t)score;
    z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ z >> 27) * 0x94D049BB133111EBull;
    return z ^ z >> 31;
}

static void mxp_block_run(mx_pool *p, unsigned b, dra_alloc_ctx *x) {
    mxp_block *k = &p->blocks[b];
    int best = -1;
    int64_t bs = 0;
    size_t hits = 0;
    uint64_t sum = 0;
    for (int n = k->lo; n < k->hi; n++) {
        dra_fit *f = &p->fits[n];
        dra_pod_fit_overlay(p->pr, k->ov, x, p->names[n], DRA_SCORE_BINPACK, 0, false, f);
        hits += f->memo_hit;
        sum += mxp_term(n, (int)f->status, f->score);
        if (f->status == DRA_FIT_OK && (best < 0 || f->score > bs)) best = n, bs = f->score;
    }
    k->best = best, k->best_score = bs, k->hits = hits, k->sum = sum;
}

/* The answer from the blocks' parts, in block order (ties go to the lower node). */
static void mxp_answer(const mx_pool *p, mx_pool_answer *out) {
    *out = (mx_pool_answer){.best = -1};
    int64_t bs = 0;
    for (unsigned b = 0; b < p->nblocks; b++) {
        const mxp_block *k = &p->blocks[b];
        out->hits += k->hits;
        out->digest += k->sum;
        if (k->best >= 0 && (out->best < 0 || k->best_score > bs)) out->best = k->best, bs = k->best_score;
    }
}

/* Claims a chunk of range r for job g: its first block in *b, its end in *end; false
 * when the range has none left for g (or holds another job). */
static bool mxp_claim(mx_pool *p, unsigned r, uint64_t g, unsigned *b, unsigned *end) {
    mxp_thread *rt = &p->th[r];
    uint64_t v = atomic_load_explicit(&rt->ticket, memory_order_acquire);
    for (;;) {
        if (v >> 32 != g || (unsigned)v >= rt->hi) return false;
        unsigned chunk = atomic_load_explicit(&p->chunk, memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&rt->ticket, &v, v + chunk, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *b = (unsigned)v;
            *end = *b + chunk < rt->hi ? *b + chunk : rt->hi;
            return true;
        }
    }
}

/* Decides chunks of job g until none is left: thread t's own range, then the others'. */
static void mxp_drain(mx_pool *p, unsigned t, uint64_t g) {
    mxp_thread *me = &p->th[t];
    for (unsigned k = 0; k < p->n; k++) {
        unsigned r = (t + k) % p->n, b, end;
        while (mxp_claim(p, r, g, &b, &end)) {
            uint64_t t0 = bench_now_ns();
            if (!me->first_ns) me->first_ns = t0;
            for (unsigned i = b; i < end; i++) mxp_block_run(p, i, me->x);
            me->busy_ns += bench_now_ns() - t0;
            atomic_fetch_add_explicit(&p->done, end - b, memory_order_release);
        }
    }
}

/* The job after `seen`: spins spin_ns, then sleeps; 0 when the pool stops. A worker
 * that sleeps through the cycle's serial part misses the next job's start by a wake-up
 * (tens of µs, measured: two threads 1.3× instead of 2× without the memo), so the spin
 * follows the measured gap between jobs; it costs an idle core only. */
static uint64_t mxp_next_job(mx_pool *p, unsigned t, uint64_t seen) {
    _Atomic uint64_t *ticket = &p->th[t].ticket;
    uint64_t g, until = bench_now_ns() + atomic_load_explicit(&p->spin_ns, memory_order_relaxed);
    for (int i = 0; (g = atomic_load_explicit(ticket, memory_order_acquire) >> 32) == seen; i++) {
        mxp_relax();
        if ((i & 63) == 63 && bench_now_ns() > until) break;
    }
    if (g != seen) return g;
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    while ((g = atomic_load(ticket) >> 32) == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    bool quit = p->quit;
    pthread_mutex_unlock(&p->mu);
    return quit ? 0 : g;
}

static void *mxp_worker(void *arg) {
    mxp_arg a = *(mxp_arg *)arg;
    free(arg);
    uint64_t seen = 0, g;
    while ((g = mxp_next_job(a.p, a.t, seen))) {
        seen = g;
        mxp_drain(a.p, a.t, g);
    }
    return NULL;
}

/* n zeroed bytes at a cache line's start: the pool and its blocks hold members aligned
 * to one (malloc gives 16). Freed with free. */
static void *mxp_zalloc_lines(size_t n) {
    n = (n + 63) / 64 * 64;
    void *m = aligned_alloc(64, n ? n : 64);
    if (!m) {
        fprintf(stderr, "dralloc bench: out of memory\n");
        abort();
    }
    return memset(m, 0, n);
}

mx_pool *mx_pool_new(unsigned threads, dra_snapshot *s, bool memo, int nodes, char (*names)[32], dra_fit *fits) {
    mx_pool *p = mxp_zalloc_lines(sizeof *p);
    p->n = threads < 1 ? 1 : threads > MXP_MAX_THREADS ? MXP_MAX_THREADS : threads;
    p->nodes = nodes;
    p->names = names;
    p->fits = fits;
    unsigned nb = p->n == 1 ? 1 : p->n * MXP_BLOCKS_PER_THREAD;
    if (nodes > 0 && nb > (unsigned)nodes) nb = (unsigned)nodes;
    p->nblocks = nb ? nb : 1;
    p->blocks = mxp_zalloc_lines(p->nblocks * sizeof *p->blocks);
    for (unsigned b = 0; b < p->nblocks; b++) {
        p->blocks[b].ov = dra_overlay_new(s);
        dra_overlay_memo(p->blocks[b].ov, memo);
        p->blocks[b].lo = (int)((int64_t)nodes * b / p->nblocks);
        p->blocks[b].hi = (int)((int64_t)nodes * (b + 1) / p->nblocks);
    }
    p->cost_ns = 2000;    /* until measured: a decision, not a memo hit */
    atomic_init(&p->spin_ns, MXP_SPIN_MIN_NS);
    p->wake_ns = 20000;   /* a woken worker, until measured */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    for (unsigned t = 0; t < p->n; t++) {
        p->th[t].lo = p->nblocks * t / p->n;
        p->th[t].hi = p->nblocks * (t + 1) / p->n;
        atomic_init(&p->th[t].ticket, p->th[t].hi);   /* job 0: nothing left */
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

void mx_pool_filter(mx_pool *p, const dra_pod_request *pr, mx_pool_answer *out) {
    p->pr = pr;
    p->jobs++;
    uint64_t nodes = (uint64_t)(p->nodes > 0 ? p->nodes : 1), t0 = bench_now_ns();
    if (p->last_end) {
        p->gap_ns = mxp_average(p->gap_ns, t0 - p->last_end);
        uint64_t spin = p->gap_ns * MXP_SPIN_GAPS;
        spin = spin < MXP_SPIN_MIN_NS ? MXP_SPIN_MIN_NS : spin > MXP_SPIN_MAX_NS ? MXP_SPIN_MAX_NS : spin;
        atomic_store_explicit(&p->spin_ns, spin, memory_order_relaxed);
    }
    bool alone = p->n == 1 || nodes * p->cost_ns <= p->wake_ns;
    if (alone && p->n > 1 && ++p->since_probe >= MXP_PROBE_EVERY) {
        p->since_probe = 0;
        alone = false;
    }
    if (alone) {
        for (unsigned b = 0; b < p->nblocks; b++) mxp_block_run(p, b, p->th[0].x);
        p->cost_ns = mxp_average(p->cost_ns, (bench_now_ns() - t0) / nodes + 1);
        p->inline_jobs += p->n > 1;
        p->last_end = bench_now_ns();
        mxp_answer(p, out);
        return;
    }
    atomic_store_explicit(&p->chunk, mxp_chunk(p), memory_order_relaxed);
    for (unsigned t = 0; t < p->n; t++) p->th[t].first_ns = p->th[t].busy_ns = 0;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    uint64_t g = ++p->gen, published = bench_now_ns();
    assert(g < (1ull << 32));
    for (unsigned t = 0; t < p->n; t++) atomic_store(&p->th[t].ticket, g << 32 | p->th[t].lo);
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
    mxp_answer(p, out);
    p->last_end = bench_now_ns();
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
