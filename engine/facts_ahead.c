/* facts_ahead.c — a batch's item facts computed on a second thread (facts_ahead.h). */
#include "engine/facts_ahead.h"

#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>

/* Below this many changes (a watch event, a small file) no thread is started;
 * `mig_5000nodes` applies 500 at a time. */
enum { FACTS_AHEAD_MIN = 256, WAKE_EVERY = 64 };

struct dra_facts_ahead {
    const dra_change *changes;
    size_t n;
    dra_item_facts *facts;
    atomic_size_t done;   /* facts[0..done) are set */
    atomic_bool stop;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t moved;
};

static void *facts_all(void *arg) {
    dra_facts_ahead *ha = arg;
    for (size_t i = 0; i < ha->n && !atomic_load_explicit(&ha->stop, memory_order_relaxed); i++) {
        ha->facts[i] = ha->changes[i].upsert ? dra__item_facts(ha->changes[i].upsert) : (dra_item_facts){0};
        atomic_store_explicit(&ha->done, i + 1, memory_order_release);
        /* the reader waits under the lock, so a wake-up every few items is enough */
        if ((i + 1) % WAKE_EVERY == 0 || i + 1 == ha->n) {
            pthread_mutex_lock(&ha->lock);
            pthread_cond_broadcast(&ha->moved);
            pthread_mutex_unlock(&ha->lock);
        }
    }
    return NULL;
}

dra_facts_ahead *dra__facts_ahead_start(const dra_change *changes, size_t n) {
    if (n < FACTS_AHEAD_MIN) return NULL;
    dra_facts_ahead *ha = xcalloc(1, sizeof *ha);
    ha->changes = changes;
    ha->n = n;
    ha->facts = xcalloc(n, sizeof *ha->facts);
    atomic_init(&ha->done, 0);
    atomic_init(&ha->stop, false);
    pthread_mutex_init(&ha->lock, NULL);
    pthread_cond_init(&ha->moved, NULL);
    if (pthread_create(&ha->thread, NULL, facts_all, ha) != 0) {
        pthread_cond_destroy(&ha->moved);
        pthread_mutex_destroy(&ha->lock);
        free(ha->facts);
        free(ha);
        return NULL;
    }
    return ha;
}

dra_item_facts dra__facts_ahead_get(dra_facts_ahead *ha, size_t i) {
    if (atomic_load_explicit(&ha->done, memory_order_acquire) <= i) {
        pthread_mutex_lock(&ha->lock);
        while (atomic_load_explicit(&ha->done, memory_order_acquire) <= i) pthread_cond_wait(&ha->moved, &ha->lock);
        pthread_mutex_unlock(&ha->lock);
    }
    return ha->facts[i];
}

void dra__facts_ahead_free(dra_facts_ahead *ha) {
    if (!ha) return;
    atomic_store(&ha->stop, true);
    pthread_join(ha->thread, NULL);
    pthread_cond_destroy(&ha->moved);
    pthread_mutex_destroy(&ha->lock);
    free(ha->facts);
    free(ha);
}
