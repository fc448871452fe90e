/* plan_scan.c — one replica decided on many nodes by one or two threads (plan_scan.h). */
#include "planner/plan_scan.h"

#include "base/base.h"
#include "engine/context.h"

#include <pthread.h>
#include <stdatomic.h>

enum {
    SCAN_CHUNK_NS = 50000,       /* a chunk's cost at the measured cost per node */
    SCAN_CHUNKS_MIN = 8,         /* chunks per thread at least, for balance */
    SCAN_THREAD_NS = 60000,      /* a thread's start and join, and its allocator context */
    SCAN_NODE_NS_INIT = 10000,   /* a fit until measured (a search, not a memo hit) */
    SCAN_COPY_NS_INIT = 100000,  /* the overlay copy until measured */
};

typedef struct scan_job {
    const dra_pod_request *pr;
    dra_score_mode mode;
    const char *const *names;
    const size_t *idx;
    size_t n, chunk;
    plan_scan_answer *out;
    _Alignas(64) atomic_size_t next;   /* the first position no thread has taken; alone on its line */
} scan_job;

typedef struct scan_lane {
    _Alignas(64) scan_job *job;
    dra_overlay *ov;
    dra_alloc_ctx *x;
    uint64_t busy_ns;   /* the lane's own time, read after the join */
} scan_lane;

/* Takes chunks of positions until none is left: the two threads end together
 * whatever the nodes cost (nodes of one shape sit together in name order). */
static void lane_run(scan_lane *l) {
    scan_job *j = l->job;
    uint64_t t0 = dra_monotonic_ns();
    for (;;) {
        size_t k = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
        if (k >= j->n) break;
        size_t end = k + j->chunk < j->n ? k + j->chunk : j->n;
        for (; k < end; k++) {
            dra_fit f;
            dra_pod_fit_overlay(j->pr, l->ov, l->x, j->names[j->idx[k]], j->mode, 0, false, &f);
            j->out[k] = (plan_scan_answer){f.status == DRA_FIT_OK, f.score};
        }
    }
    l->busy_ns = dra_monotonic_ns() - t0;
}

static void *lane_thread(void *arg) {
    scan_lane *l = arg;
    l->x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_reasons(l->x, false);   /* as the calling thread's lane: no reasons read */
    lane_run(l);
    return NULL;
}

static uint64_t average(uint64_t old, uint64_t now) { return old ? (old * 3 + now) / 4 : now; }

void plan_scan(const dra_pod_request *pr, dra_overlay *ov, dra_alloc_ctx *x, dra_score_mode mode,
               const char *const *names, const size_t *idx, size_t n, bool one_thread, plan_scan_answer *out,
               plan_scan_cost *cost) {
    if (!n) return;
    uint64_t node_ns = cost->node_ns ? cost->node_ns : SCAN_NODE_NS_INIT;
    uint64_t copy_ns = cost->copy_ns ? cost->copy_ns : SCAN_COPY_NS_INIT;
    /* two threads only when the nodes cost more than twice what the second one does */
    bool two = !one_thread && (uint64_t)n * node_ns > 2 * (copy_ns + SCAN_THREAD_NS) && n >= 2 * SCAN_CHUNKS_MIN;
    size_t chunk = n;
    if (two) {
        chunk = (size_t)(SCAN_CHUNK_NS / (node_ns ? node_ns : 1));
        size_t most = n / (2 * SCAN_CHUNKS_MIN);
        if (chunk > most) chunk = most;
        if (!chunk) chunk = 1;
    }
    scan_job j = {.pr = pr, .mode = mode, .names = names, .idx = idx, .n = n, .chunk = chunk, .out = out};
    atomic_init(&j.next, 0);
    scan_lane mine = {.job = &j, .ov = ov, .x = x}, other = {.job = &j};
    pthread_t th;
    if (two) {
        /* a fit without commit writes only its overlay's memo and its context: the
         * second thread gets its own of both; the copy holds ov's commits */
        uint64_t c0 = dra_monotonic_ns();
        other.ov = dra_overlay_copy(ov);
        cost->copy_ns = average(cost->copy_ns, dra_monotonic_ns() - c0);
        if (pthread_create(&th, NULL, lane_thread, &other)) {
            dra_overlay_free(other.ov);
            other.ov = NULL;
            two = false;
        }
    }
    /* a scan reads whether and how well each node fits, never why not: no node's
     * failure is explained (the overlay's memo keeps such answers apart, exact) */
    bool reasons = dra_alloc_ctx_reasons(x);
    dra_alloc_ctx_set_reasons(x, false);
    lane_run(&mine);
    dra_alloc_ctx_set_reasons(x, reasons);
    uint64_t busy = mine.busy_ns;
    if (two) {
        pthread_join(th, NULL);
        busy += other.busy_ns;
        dra_overlay_memo_adopt(ov, other.ov);
        dra_overlay_free(other.ov);
        dra_alloc_ctx_free(other.x);
        cost->parallel++;
    }
    cost->scans++;
    cost->node_ns = average(cost->node_ns, busy / n + 1);
}
