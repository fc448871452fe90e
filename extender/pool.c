/* pool.c — worker threads deciding the nodes of the batches requests submit (pool.h).
 *
 * A node decision costs anything from ~60 ns (a fit memo hit) to milliseconds (a
 * search), so the pool measures instead of assuming. Per batch it keeps, written once
 * per chunk or once per worker and never per node:
 *   - the nodes are handed out in chunks by one atomic counter (b->next, on its own
 *     cache line); a chunk is sized so that it costs about CHUNK_TARGET_NS at the
 *     pool's measured cost per node, and so that every thread still gets a few;
 *   - a worker counts the nodes it finished and the time it spent locally and adds
 *     them to the batch under the mutex once, when it leaves the batch;
 *   - the submitting thread decides chunks too (with a context of its own from the
 *     pool's spares), and decides the whole batch alone, waking nobody, when the batch
 *     at the measured per-node cost is cheaper than the measured time a woken worker
 *     takes to start.
 * The mutex guards the FIFO of batches, each batch's worker count and totals, and the
 * two measurements; a worker takes it twice per batch it joins. Batches are served in
 * arrival order: a worker joins the oldest batch with nodes left. */
#include "extender/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"

enum {
    CHUNK_TARGET_NS = 40000,   /* a chunk's cost: 40 µs dwarfs the ~0.1-1 µs of taking it */
    CHUNKS_PER_THREAD = 4,     /* at least this many chunks per thread, for balance */
    COST_INIT_NS = 20000,      /* per node until measured: a search, not a memo hit */
    WAKE_INIT_NS = 50000,      /* a sleeping worker's start until measured */
    SPARE_MAX = 64,            /* contexts kept for submitting threads */
};

typedef struct batch {
    _Alignas(64) _Atomic size_t next;   /* first node not yet taken; alone on its line */
    _Alignas(64) const ext_batch_spec *spec;
    size_t chunk;         /* nodes per take */
    uint64_t submitted;   /* dra_monotonic_ns() at submission, for the wake latency */
    bool woke;            /* a worker's start was measured */
    unsigned inside;      /* workers (and the submitter) deciding its nodes */
    size_t done;          /* nodes finished, added by each leaving thread */
    uint64_t busy_ns;     /* time spent deciding them, likewise */
    pthread_cond_t finished;
    struct batch *link;
} batch;

struct ext_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;
    batch *head, *tail;   /* batches with nodes left to take */
    bool stop;
    unsigned n;
    pthread_t *threads;
    uint64_t cost_ns;     /* per node, moving average over batches */
    uint64_t wake_ns;     /* submission to a woken worker's first node, likewise */
    dra_alloc_ctx *spare[SPARE_MAX];
    size_t nspare;
    size_t alone, shared;   /* batches by path (ext_pool_counts) */
};

/* Kubernetes' message for a node the filter deadline cut off. */
static const char timeout_msg[] = "timed out trying to allocate devices";

static void decide(const ext_batch_spec *s, size_t i, dra_alloc_ctx *x) {
    dra_fit *f = &s->out[i];
    if (s->deadline_ns && dra_monotonic_ns() >= s->deadline_ns) {
        memset(f, 0, sizeof *f);
        f->status = DRA_FIT_TIMEOUT;
        snprintf(f->reason, sizeof f->reason, "%s", timeout_msg);
        return;
    }
    dra_pod_fit(s->pr, x, s->names[i], s->nodes ? s->nodes[i] : NULL, s->mode, s->deadline_ns, f);
}

/* Takes chunks of b until none is left; returns the nodes decided, *ns the time. */
static size_t drain(batch *b, dra_alloc_ctx *x, uint64_t *ns) {
    const ext_batch_spec *s = b->spec;
    size_t n = s->n, did = 0;
    uint64_t t0 = dra_monotonic_ns();
    for (;;) {
        size_t k = atomic_fetch_add_explicit(&b->next, b->chunk, memory_order_relaxed);
        if (k >= n) break;
        size_t end = k + b->chunk < n ? k + b->chunk : n;
        for (size_t i = k; i < end; i++) decide(s, i, x);
        did += end - k;
    }
    *ns = dra_monotonic_ns() - t0;
    return did;
}

/* Under p->mu: a thread leaves b having decided `did` nodes in `ns`. */
static void leave(batch *b, size_t did, uint64_t ns) {
    b->done += did;
    b->busy_ns += ns;
    if (--b->inside == 0 && b->done == b->spec->n) pthread_cond_signal(&b->finished);
}

/* Under p->mu: drops the head while every node of it is taken. */
static void pop_taken(ext_pool *p) {
    while (p->head && atomic_load_explicit(&p->head->next, memory_order_relaxed) >= p->head->spec->n) {
        p->head = p->head->link;
        if (!p->head) p->tail = NULL;
    }
}

/* Under p->mu: takes b out of the FIFO wherever it stands (its submitter took the
 * last chunk while an older batch was still ahead of it). */
static void unlink_batch(ext_pool *p, batch *b) {
    batch *prev = NULL;
    for (batch *c = p->head; c; prev = c, c = c->link) {
        if (c != b) continue;
        if (prev) prev->link = b->link;
        else p->head = b->link;
        if (p->tail == b) p->tail = prev;
        return;
    }
}

static uint64_t average(uint64_t old, uint64_t now) { return (old * 3 + now) / 4; }

static void *worker(void *arg) {
    ext_pool *p = arg;
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        pop_taken(p);
        while (!p->head && !p->stop) {
            pthread_cond_wait(&p->work, &p->mu);
            pop_taken(p);
        }
        if (!p->head) break;
        batch *b = p->head;
        if (!b->woke) {
            b->woke = true;
            p->wake_ns = average(p->wake_ns, dra_monotonic_ns() - b->submitted);
        }
        b->inside++;
        pthread_mutex_unlock(&p->mu);
        uint64_t ns;
        size_t did = drain(b, x, &ns);
        pthread_mutex_lock(&p->mu);
        leave(b, did, ns);
    }
    pthread_mutex_unlock(&p->mu);
    dra_alloc_ctx_free(x);
    return NULL;
}

ext_pool *ext_pool_new(unsigned nthreads) {
    ext_pool *p = xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    p->n = nthreads ? nthreads : 1;
    p->cost_ns = COST_INIT_NS;
    p->wake_ns = WAKE_INIT_NS;
    p->threads = xcalloc(p->n, sizeof *p->threads);
    for (unsigned i = 0; i < p->n; i++)
        if (pthread_create(&p->threads[i], NULL, worker, p)) {
            fprintf(stderr, "dralloc: cannot start worker thread\n");
            abort();
        }
    return p;
}

void ext_pool_free(ext_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n; i++) pthread_join(p->threads[i], NULL);
    for (size_t i = 0; i < p->nspare; i++) dra_alloc_ctx_free(p->spare[i]);
    free(p->threads);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Under p->mu: the nodes per take for n nodes at the measured cost. */
static size_t chunk_for(const ext_pool *p, size_t n) {
    uint64_t cost = p->cost_ns ? p->cost_ns : 1;
    size_t by_cost = (size_t)(CHUNK_TARGET_NS / cost);
    size_t by_balance = n / ((size_t)(p->n + 1) * CHUNKS_PER_THREAD);
    size_t c = by_cost < by_balance ? by_cost : by_balance;
    return c ? c : 1;
}

void ext_pool_run(ext_pool *p, const ext_batch_spec *s) {
    if (!s->n) return;
    batch b = {.spec = s};
    atomic_init(&b.next, 0);
    pthread_cond_init(&b.finished, NULL);
    pthread_mutex_lock(&p->mu);
    dra_alloc_ctx *x = p->nspare ? p->spare[--p->nspare] : NULL;
    /* the whole batch here when a woken worker would start after it is done */
    bool inline_only = p->n == 0 || (uint64_t)s->n * p->cost_ns <= p->wake_ns;
    b.chunk = inline_only ? s->n : chunk_for(p, s->n);
    if (inline_only) p->alone++;
    else p->shared++;
    b.submitted = dra_monotonic_ns();
    b.inside = 1;   /* this thread */
    if (!inline_only) {
        if (p->tail) p->tail->link = &b;
        else p->head = &b;
        p->tail = &b;
        /* wake as many workers as there are chunks beyond this thread's first, not more */
        size_t chunks = (s->n + b.chunk - 1) / b.chunk;
        if (chunks - 1 >= p->n) pthread_cond_broadcast(&p->work);
        else
            for (size_t i = 1; i < chunks; i++) pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    if (!x) x = dra_alloc_ctx_new();
    uint64_t ns;
    size_t did = drain(&b, x, &ns);
    pthread_mutex_lock(&p->mu);
    leave(&b, did, ns);
    if (!inline_only) unlink_batch(p, &b);   /* every node taken: no worker may join it now */
    while (b.done < s->n || b.inside) pthread_cond_wait(&b.finished, &p->mu);
    p->cost_ns = average(p->cost_ns, b.busy_ns / s->n ? b.busy_ns / s->n : 1);
    if (p->nspare < SPARE_MAX) {
        p->spare[p->nspare++] = x;
        x = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    dra_alloc_ctx_free(x);
    pthread_cond_destroy(&b.finished);
}

void ext_pool_counts(ext_pool *p, size_t *alone, size_t *shared) {
    pthread_mutex_lock(&p->mu);
    *alone = p->alone;
    *shared = p->shared;
    pthread_mutex_unlock(&p->mu);
}
