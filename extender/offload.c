/* offload.c — the pool of offload.h: a FIFO of jobs under one mutex, N threads taking
 * from it, a count of jobs given and not finished for close to wait on. */
#include "extender/offload.h"

#include "base/base.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct job {
    struct job *next;
    void (*fn)(void *arg);
    void *arg;
} job;

struct ext_offload {
    pthread_mutex_t mu;
    pthread_cond_t work;         /* a job queued, or stopping */
    pthread_cond_t idle;         /* a job finished */
    job *head, *tail;
    size_t pending;              /* given and not finished (queued or running) */
    bool closed;                 /* no new jobs */
    bool stop;                   /* threads leave once the queue is empty */
    pthread_t *th;
    unsigned n;
};

static void *worker(void *arg) {
    ext_offload *o = arg;
    pthread_mutex_lock(&o->mu);
    for (;;) {
        while (!o->head && !o->stop) pthread_cond_wait(&o->work, &o->mu);
        if (!o->head) break;
        job *j = o->head;
        o->head = j->next;
        if (!o->head) o->tail = NULL;
        pthread_mutex_unlock(&o->mu);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&o->mu);
        assert(o->pending > 0);
        if (--o->pending == 0) pthread_cond_broadcast(&o->idle);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

ext_offload *ext_offload_new(unsigned nthreads) {
    ext_offload *o = xcalloc(1, sizeof *o);
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->work, NULL);
    pthread_cond_init(&o->idle, NULL);
    o->n = nthreads ? nthreads : 1;
    o->th = xcalloc(o->n, sizeof *o->th);
    for (unsigned i = 0; i < o->n; i++)
        if (pthread_create(&o->th[i], NULL, worker, o)) {
            /* as out-of-memory: nothing sensible to go on with */
            fprintf(stderr, "dralloc: offload: cannot start a thread\n");
            abort();
        }
    return o;
}

bool ext_offload_run(ext_offload *o, void (*fn)(void *arg), void *arg) {
    job *j = xcalloc(1, sizeof *j);
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&o->mu);
    if (o->closed) {
        pthread_mutex_unlock(&o->mu);
        free(j);
        return false;
    }
    if (o->tail) o->tail->next = j;
    else o->head = j;
    o->tail = j;
    o->pending++;
    pthread_cond_signal(&o->work);
    pthread_mutex_unlock(&o->mu);
    return true;
}

void ext_offload_close(ext_offload *o) {
    pthread_mutex_lock(&o->mu);
    o->closed = true;
    while (o->pending) pthread_cond_wait(&o->idle, &o->mu);
    pthread_mutex_unlock(&o->mu);
}

void ext_offload_free(ext_offload *o) {
    if (!o) return;
    ext_offload_close(o);
    pthread_mutex_lock(&o->mu);
    o->stop = true;
    pthread_cond_broadcast(&o->work);
    pthread_mutex_unlock(&o->mu);
    for (unsigned i = 0; i < o->n; i++) pthread_join(o->th[i], NULL);
    free(o->th);
    pthread_cond_destroy(&o->work);
    pthread_cond_destroy(&o->idle);
    pthread_mutex_destroy(&o->mu);
    free(o);
}
