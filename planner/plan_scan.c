/* plan_scan.c — one replica decided on many nodes by two threads (plan_scan.h). */
#include "planner/plan_scan.h"

#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>

/* Below this many nodes a second thread costs more than it saves (its overlay copy,
 * its allocator context, the start: ~0.1 ms against ~10 µs a fit). */
enum { SCAN_PARALLEL_MIN = 512, SCAN_CHUNK = 32 };

typedef struct scan_job {
    const dra_pod_request *pr;
    dra_score_mode mode;
    const char *const *names;
    const size_t *idx;
    size_t n;
    atomic_size_t next;   /* the first position no thread has taken */
    plan_scan_answer *out;
} scan_job;

typedef struct scan_lane {
    scan_job *job;
    dra_overlay *ov;
    dra_alloc_ctx *x;
} scan_lane;

/* Takes chunks of positions until none is left: the two threads end together
 * whatever the nodes cost (nodes of one shape sit together in name order). */
static void lane_run(scan_lane *l) {
    scan_job *j = l->job;
    for (;;) {
        size_t k = atomic_fetch_add_explicit(&j->next, SCAN_CHUNK, memory_order_relaxed);
        if (k >= j->n) break;
        size_t end = k + SCAN_CHUNK < j->n ? k + SCAN_CHUNK : j->n;
        for (; k < end; k++) {
            dra_fit f;
            dra_pod_fit_overlay(j->pr, l->ov, l->x, j->names[j->idx[k]], j->mode, 0, false, &f);
            j->out[k] = (plan_scan_answer){f.status == DRA_FIT_OK, f.score};
        }
    }
}

static void *lane_thread(void *arg) {
    lane_run(arg);
    return NULL;
}

void plan_scan(const dra_pod_request *pr, dra_overlay *ov, dra_alloc_ctx *x, dra_score_mode mode,
               const char *const *names, const size_t *idx, size_t n, bool one_thread, plan_scan_answer *out) {
    scan_job j = {.pr = pr, .mode = mode, .names = names, .idx = idx, .n = n, .out = out};
    atomic_init(&j.next, 0);
    scan_lane mine = {&j, ov, x}, other = {&j, NULL, NULL};
    pthread_t th;
    bool two = false;
    if (n >= SCAN_PARALLEL_MIN && !one_thread) {
        /* a fit without commit writes only its overlay's memo and its context: the
         * second thread gets its own of both; the copy holds ov's commits */
        other.ov = dra_overlay_copy(ov);
        other.x = dra_alloc_ctx_new();
        two = pthread_create(&th, NULL, lane_thread, &other) == 0;
    }
    lane_run(&mine);
    if (two) pthread_join(th, NULL);
    if (other.ov) {
        dra_overlay_memo_adopt(ov, other.ov);
        dra_overlay_free(other.ov);
        dra_alloc_ctx_free(other.x);
    }
}
