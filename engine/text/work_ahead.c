/* work_ahead.c — a batch's items prepared on a second thread (work_ahead.h). */
#include "engine/text/work_ahead.h"

#include "base/base.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { FREE, TAKEN, DONE };

struct dra_work_ahead {
    size_t n;
    dra_prepare_fn fn;
    void *arg;
    _Atomic unsigned char *state;   /* per item: FREE, TAKEN (being prepared), DONE */
    atomic_bool stop;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t done;            /* an item the thread took is DONE */
    size_t help;                    /* the caller's: where its search for a free item resumes */
};

static bool take(dra_work_ahead *wa, size_t i) {
    unsigned char want = FREE;
    return atomic_compare_exchange_strong_explicit(&wa->state[i], &want, TAKEN, memory_order_acq_rel,
                                                   memory_order_acquire);
}

static void *run(void *arg) {
    dra_work_ahead *wa = arg;
    for (size_t i = 0; i < wa->n && !atomic_load_explicit(&wa->stop, memory_order_relaxed); i++) {
        if (!take(wa, i)) continue;   /* the caller got there first */
        wa->fn(wa->arg, i, DRA_LANE_AHEAD);
        pthread_mutex_lock(&wa->lock);
        atomic_store_explicit(&wa->state[i], DONE, memory_order_release);
        pthread_cond_broadcast(&wa->done);
        pthread_mutex_unlock(&wa->lock);
    }
    return NULL;
}

dra_work_ahead *dra__work_ahead_start(size_t n, dra_prepare_fn fn, void *arg) {
    if (n < DRA_WORK_AHEAD_MIN) return NULL;
    dra_work_ahead *wa = xcalloc(1, sizeof *wa);
    wa->n = n;
    wa->fn = fn;
    wa->arg = arg;
    wa->state = xcalloc(n, sizeof *wa->state);
    for (size_t i = 0; i < n; i++) atomic_init(&wa->state[i], FREE);
    atomic_init(&wa->stop, false);
    pthread_mutex_init(&wa->lock, NULL);
    pthread_cond_init(&wa->done, NULL);
    if (pthread_create(&wa->thread, NULL, run, wa) != 0) {
        pthread_cond_destroy(&wa->done);
        pthread_mutex_destroy(&wa->lock);
        free((void *)wa->state);
        free(wa);
        return NULL;
    }
    return wa;
}

static void prepare_here(dra_work_ahead *wa, size_t i) {
    wa->fn(wa->arg, i, DRA_LANE_CALLER);
    atomic_store_explicit(&wa->state[i], DONE, memory_order_release);
}

void dra__work_ahead_need(dra_work_ahead *wa, size_t i) {
    assert(i < wa->n);
    if (take(wa, i)) return prepare_here(wa, i);
    /* the thread has it: rather than wait, prepare an item further on nobody has
     * taken (the two then leapfrog through the batch) */
    if (wa->help <= i) wa->help = i + 1;
    while (atomic_load_explicit(&wa->state[i], memory_order_acquire) != DONE) {
        while (wa->help < wa->n && !take(wa, wa->help)) wa->help++;
        if (wa->help < wa->n) {
            prepare_here(wa, wa->help++);
            continue;
        }
        pthread_mutex_lock(&wa->lock);
        while (atomic_load_explicit(&wa->state[i], memory_order_acquire) != DONE)
            pthread_cond_wait(&wa->done, &wa->lock);
        pthread_mutex_unlock(&wa->lock);
    }
}

void dra__work_ahead_free(dra_work_ahead *wa) {
    if (!wa) return;
    atomic_store(&wa->stop, true);
    pthread_join(wa->thread, NULL);
    pthread_cond_destroy(&wa->done);
    pthread_mutex_destroy(&wa->lock);
    free((void *)wa->state);
    free(wa);
}
