/* pool.c — worker threads deciding one node at a time for the batches requests submit
 * (pool.h). One mutex guards the FIFO of batches and their counters; the work per
 * node (an allocator search, tens of microseconds at least) dwarfs taking the lock
 * twice per node, and a single queue keeps batches served in arrival order. */
#include "extender/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"

typedef struct batch {
    const ext_batch_spec *spec;
    size_t next;        /* first node not yet taken */
    size_t done;        /* nodes finished */
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

static void *worker(void *arg) {
    ext_pool *p = arg;
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (!p->head) break;
        batch *b = p->head;
        size_t i = b->next++;
        if (b->next == b->spec->n) {   /* all taken: the next worker starts the next batch */
            p->head = b->link;
            if (!p->head) p->tail = NULL;
        }
        pthread_mutex_unlock(&p->mu);
        decide(b->spec, i, x);
        pthread_mutex_lock(&p->mu);
        if (++b->done == b->spec->n) pthread_cond_signal(&b->finished);
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
    free(p->threads);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void ext_pool_run(ext_pool *p, const ext_batch_spec *s) {
    if (!s->n) return;
    batch b = {.spec = s};
    pthread_cond_init(&b.finished, NULL);
    pthread_mutex_lock(&p->mu);
    if (p->tail) p->tail->link = &b;
    else p->head = &b;
    p->tail = &b;
    /* wake as many workers as there are nodes, not more */
    if (s->n >= p->n) pthread_cond_broadcast(&p->work);
    else
        for (size_t i = 0; i < s->n; i++) pthread_cond_signal(&p->work);
    while (b.done < s->n) pthread_cond_wait(&b.finished, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_cond_destroy(&b.finished);
}
