/* service.c — the extender's routes as plain functions of (method, path, body) over a
 * dra_store (extender.h). A filter or prioritize request pins one snapshot for its
 * whole life, so its answer is always that snapshot's answer even while POST /objects
 * swaps in the next one; all memory a request takes is released before it returns. */
#include "extender/extender.h"
#include "extender/preempt.h"
#include "extender/auth.h"
#include "extender/bind.h"
#include "extender/budget.h"
#include "extender/evict.h"
#include "extender/hold.h"
#include "extender/lease.h"
#include "extender/requeue.h"
#include "extender/gates.h"
#include "extender/tls.h"
#include "extender/watch.h"
#include "engine/causes.h"
#include "report/report.h"

#include <assert.h>
#include <pthread.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/context.h"
#include "extender/metrics.h"
#include "extender/pool.h"
#include "extender/wire.h"
#include "base/strbuf.h"

/* How many /filter decisions the status page keeps, and failed nodes per decision. */
enum { RECENT_MAX = 50, RECENT_FAILED_MAX = 20 };

struct ext_service {
    dra_store *store;
    ext_config cfg;
    ext_pool *pool;
    ext_metrics *metrics;
    pthread_mutex_t recent_lock;
    json_t *recent;          /* the last RECENT_MAX filter decisions, newest first */
    /* the view warmer (cfg.warm_views): stop asks it to end, under warm_lock */
    pthread_t warm_thread;
    bool warming, warm_stop;
    pthread_mutex_t warm_run;    /* held while views are built: one warm pass at a time */
    pthread_mutex_t warm_lock;
    pthread_cond_t warm_cond;
    /* one request's fits kept for the next (fits_take) */
    pthread_mutex_t stash_lock;
    dra_fit *stash;
    size_t stash_cap;
};

static const char mime_json[] = "application/json";

void ext_config_default(ext_config *c) {
    *c = (ext_config){
        .workers = 0,
        .max_body = EXT_DEFAULT_MAX_BODY,
        .max_depth = EXT_DEFAULT_MAX_DEPTH,
        .max_nodes = EXT_DEFAULT_MAX_NODES,
        .filter_budget_ns = EXT_DEFAULT_FILTER_BUDGET_NS,
        .score = DRA_SCORE_BINPACK,
    };
}

/* ---- node views built ahead ------------------------------------------------------------ */

/* How often the warmer looks for a new snapshot: a view a snapshot lacks (a node or
 * its slices changed, a node added) is built by the first request that meets it
 * until then. Counting what is missing is O(views made on the snapshot). */
enum { WARM_PERIOD_MS = 500 };

typedef struct warm_lane {
    dra_snapshot *snap;
    size_t lane, nlanes, built;
    pthread_t t;
} warm_lane;

static void *warm_lane_main(void *arg) {
    warm_lane *l = arg;
    l->built = dra_snapshot_warm_views(l->snap, l->lane, l->nlanes);
    return NULL;
}

/* snap's missing views on nlanes threads (the caller's one of them). */
static size_t warm_snapshot(dra_snapshot *snap, size_t nlanes) {
    warm_lane *l = xcalloc(nlanes, sizeof *l);
    size_t started = 1;
    for (size_t i = 0; i < nlanes; i++) l[i] = (warm_lane){.snap = snap, .lane = i, .nlanes = nlanes};
    for (size_t i = 1; i < nlanes; i++)
        if (!pthread_create(&l[i].t, NULL, warm_lane_main, &l[i])) started++;
        else break;
    /* lanes whose thread did not start run here */
    for (size_t i = started; i < nlanes; i++) warm_lane_main(&l[i]);
    warm_lane_main(&l[0]);
    size_t built = 0;
    for (size_t i = 0; i < nlanes; i++) {
        if (i && i < started) pthread_join(l[i].t, NULL);
        built += l[i].built;
    }
    free(l);
    return built;
}

size_t ext_service_warm_views(ext_service *s) {
    dra_snapshot *snap = dra_store_acquire(s->store);
    if (!snap) return 0;
    pthread_mutex_lock(&s->warm_run);
    size_t n = dra_snapshot_views_missing(snap) ? warm_snapshot(snap, s->cfg.workers ? s->cfg.workers : 1) : 0;
    pthread_mutex_unlock(&s->warm_run);
    dra_snapshot_release(snap);
    return n;
}

/* One thread, so that requests keep the other cores: the snapshots after the first
 * lack only the views of what changed. It waits first: serve --snapshot has built
 * the first snapshot's views on every core (ext_service_warm_views). */
static void *warm_main(void *arg) {
    ext_service *s = arg;
    uint64_t last = 0, wait_ns = WARM_PERIOD_MS * 1000000ull;
    pthread_mutex_lock(&s->warm_lock);
    while (!s->warm_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(wait_ns / 1000000000ull);
        until.tv_nsec += (long)(wait_ns % 1000000000ull);
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&s->warm_cond, &s->warm_lock, &until);
        if (s->warm_stop) break;
        pthread_mutex_unlock(&s->warm_lock);
        dra_snapshot *snap = dra_store_acquire(s->store);
        uint64_t took = 0;
        if (snap && dra_snapshot_generation(snap) != last) {
            last = dra_snapshot_generation(snap);
            uint64_t t0 = dra_monotonic_ns();
            pthread_mutex_lock(&s->warm_run);
            if (dra_snapshot_views_missing(snap)) dra_snapshot_warm_views(snap, 0, 1);
            pthread_mutex_unlock(&s->warm_run);
            took = dra_monotonic_ns() - t0;
        }
        if (snap) dra_snapshot_release(snap);
        /* at most a fifth of a core: slices without a node name, changing all the
         * time, drop every view of every snapshot (store.c inherit_views) */
        wait_ns = took * 4 > WARM_PERIOD_MS * 1000000ull ? took * 4 : WARM_PERIOD_MS * 1000000ull;
        pthread_mutex_lock(&s->warm_lock);
    }
    pthread_mutex_unlock(&s->warm_lock);
    return NULL;
}

ext_service *ext_service_new(dra_store *st, const ext_config *c) {
    ext_service *s = xcalloc(1, sizeof *s);
    s->store = st;
    pthread_mutex_init(&s->recent_lock, NULL);
    s->recent = json_array();
    s->cfg = *c;
    if (!s->cfg.workers) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        s->cfg.workers = n > 0 ? (unsigned)n : 1;
    }
    s->pool = ext_pool_new(s->cfg.workers);
    s->metrics = ext_metrics_new();
    pthread_mutex_init(&s->stash_lock, NULL);
    pthread_mutex_init(&s->warm_run, NULL);
    pthread_mutex_init(&s->warm_lock, NULL);
    pthread_cond_init(&s->warm_cond, NULL);
    if (s->cfg.warm_views) s->warming = !pthread_create(&s->warm_thread, NULL, warm_main, s);
    return s;
}

void ext_service_free(ext_service *s) {
    if (!s) return;
    if (s->warming) {
        pthread_mutex_lock(&s->warm_lock);
        s->warm_stop = true;
        pthread_cond_signal(&s->warm_cond);
        pthread_mutex_unlock(&s->warm_lock);
        pthread_join(s->warm_thread, NULL);
    }
    free(s->stash);
    pthread_mutex_destroy(&s->stash_lock);
    pthread_mutex_destroy(&s->warm_run);
    pthread_mutex_destroy(&s->warm_lock);
    pthread_cond_destroy(&s->warm_cond);
    json_decref(s->recent);
    pthread_mutex_destroy(&s->recent_lock);
    ext_pool_free(s->pool);
    ext_metrics_free(s->metrics);
    free(s);
}

const ext_config *ext_service_config(const ext_service *s) { return &s->cfg; }

/* ---- replies ---------------------------------------------------------------------- */

static void reply(ext_reply *r, int status, const char *type, char *body) {
    r->status = status;
    r->content_type = type;
    r->allow = NULL;
    r->retry_after = 0;
    r->body = body;
    r->len = strlen(body);
}

void ext_reply_error(ext_reply *r, int status, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    reply(r, status, mime_json, ext_error_body(msg));
}

static void reply_err(ext_reply *r, int status, const char *prefix, const err *e) {
    char buf[2048];
    err_format(e, buf, sizeof buf);
    ext_reply_error(r, status, "%s%s", prefix, buf);
}

void ext_reply_free(ext_reply *r) {
    free(r->body);
    r->body = NULL;
}

/* ---- filter and prioritize ------------------------------------------------------- */

static void log_pod(const ext_args *a, char *buf, size_t n) {
    json_t *meta = ext_member(a->pod, "metadata", NULL);
    json_t *ns = meta ? ext_member(meta, "namespace", NULL) : NULL, *name = meta ? ext_member(meta, "name", NULL) : NULL;
    snprintf(buf, n, "%s/%s", json_is_string(ns) ? json_string_value(ns) : "",
             json_is_string(name) ? json_string_value(name) : "?");
}

/* Keeps a filter decision for the status page (GET /): the count by cause over the
 * failed nodes, and the first nodes' own reasons (why). */
static void remember(ext_service *s, const ext_args *a, dra_snapshot *snap, const ext_verdict *v, const char *const *why,
                     size_t nfit, const char *fatal, bool claims, const char *summary) {
    char pod[300], when[40];
    log_pod(a, pod, sizeof pod);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *failed = json_object();
    for (size_t i = 0; i < a->n && json_object_size(failed) < RECENT_FAILED_MAX; i++)
        if (v[i] != EXT_PASS && why[i] && a->names[i]) json_object_set_new(failed, a->names[i], json_string(why[i]));
    json_t *row = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "time", when, "pod", pod, "generation",
                            (json_int_t)dra_snapshot_generation(snap), "nodes", (json_int_t)a->n, "fit", (json_int_t)nfit,
                            "failed", failed);
    if (!row) return;   /* a name that is not UTF-8: not worth a status line */
    if (fatal) json_object_set_new(row, "error", json_string(fatal));
    json_object_set_new(row, "claims", json_boolean(claims));
    if (summary) json_object_set_new(row, "summary", json_string(summary));
    pthread_mutex_lock(&s->recent_lock);
    json_array_insert_new(s->recent, 0, row);
    while (json_array_size(s->recent) > RECENT_MAX) json_array_remove(s->recent, RECENT_MAX);
    pthread_mutex_unlock(&s->recent_lock);
}

/* GET /: the status page (report_status_html). */
static void status_page(ext_service *s, ext_reply *r) {
    dra_snapshot *snap = dra_store_acquire(s->store);
    /* the page shows no single counter: their rows are left out (a fleet has hundreds of thousands) */
    json_t *cap = snap ? dra_capacity_json_parts(snap, NULL, 0) : json_pack("{s:[], s:[]}", "nodes", "classes");
    pthread_mutex_lock(&s->recent_lock);
    json_t *recent = json_deep_copy(s->recent);
    pthread_mutex_unlock(&s->recent_lock);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_status_html(f, cap, recent, "dralloc serve");
    fclose(f);
    json_decref(cap);
    json_decref(recent);
    if (snap) dra_snapshot_release(snap);
    reply(r, 200, "text/html; charset=utf-8", buf);
}

/* A request's fits, zeroed (n of them, half a KiB each: 2.7 MB for 5,000 names): the
 * buffer the last request gave back when it is large enough. Allocated afresh, a
 * buffer that size is fresh pages, and faulting them in was a tenth of a /filter
 * answered from the fit memo. One buffer is kept, the largest given back; requests
 * at the same time allocate their own. */
static dra_fit *fits_take(ext_service *s, size_t n, size_t *cap) {
    dra_fit *f = NULL;
    pthread_mutex_lock(&s->stash_lock);
    if (s->stash && s->stash_cap >= n) f = s->stash, *cap = s->stash_cap, s->stash = NULL;
    pthread_mutex_unlock(&s->stash_lock);
    if (!f) {
        *cap = n;
        return xcalloc(n, sizeof *f);
    }
    memset(f, 0, n * sizeof *f);
    return f;
}

static void fits_give(ext_service *s, dra_fit *f, size_t cap) {
    if (!f) return;
    pthread_mutex_lock(&s->stash_lock);
    if (!s->stash || s->stash_cap < cap) {
        dra_fit *old = s->stash;
        s->stash = f, s->stash_cap = cap;
        f = old;
    }
    pthread_mutex_unlock(&s->stash_lock);
    free(f);
}

/* Decides the nodes of a (needs_dra, no pod error) request; fits has a->n entries. */
static void evaluate(ext_service *s, const dra_pod_request *pr, const ext_args *a, dra_score_mode mode,
                     dra_fit *fits) {
    uint64_t deadline = s->cfg.filter_budget_ns ? dra_monotonic_ns() + s->cfg.filter_budget_ns : 0;
    ext_batch_spec b = {.pr = pr,
                        .names = a->names,
                        .nodes = a->node_list ? a->nodes : NULL,
                        .n = a->n,
                        .mode = mode,
                        .deadline_ns = deadline,
                        .out = fits};
    ext_pool_run(s->pool, &b);
    uint64_t per[5] = {0}, steps = 0;
    for (size_t i = 0; i < a->n; i++) {
        if ((unsigned)fits[i].status < 5) per[fits[i].status]++;
        steps += fits[i].steps;
    }
    ext_metrics_fits(s->metrics, per, a->n, steps);
}

static void verb(ext_service *s, bool prioritize, const char *body, size_t len, ext_reply *r) {
    err e;
    err_clear(&e);
    uint64_t t0 = dra_monotonic_ns();
    json_t *doc = ext_json_parse(body, len, s->cfg.max_depth, &e);
    ext_args a;
    if (!doc || !ext_args_decode(doc, s->cfg.max_nodes, &a, &e)) {
        reply_err(r, 400, "ExtenderArgs: ", &e);
        return;
    }
    dra_snapshot *snap = dra_store_acquire(s->store);
    if (!snap) {
        ext_args_free(&a);
        ext_reply_error(r, 503, "no snapshot loaded yet");
        return;
    }
    /* bind mode: the pod as kube-scheduler sent it, so that its /bind need not read it */
    if (!prioritize && s->cfg.binder) ext_binder_saw_pod(s->cfg.binder, a.pod);
    dra_pod_request *pr = dra_pod_request_new(snap, a.pod, &e);
    if (!pr) {
        dra_snapshot_release(snap);
        ext_args_free(&a);
        reply_err(r, 400, "Pod: ", &e);
        return;
    }
    bool needs = dra_pod_request_needs_dra(pr);
    const char *pod_err = needs ? dra_pod_request_error(pr) : NULL;
    ext_metrics_pod(s->metrics, needs, pod_err != NULL);
    dra_fit *fits = NULL;
    size_t fits_cap = 0;
    dra_score_mode mode = prioritize ? s->cfg.score : DRA_SCORE_NONE;
    /* a pod without claims passes everywhere, scores nothing, costs nothing */
    if (needs && !pod_err && !(prioritize && mode == DRA_SCORE_NONE)) {
        fits = fits_take(s, a.n + 1, &fits_cap);
        evaluate(s, pr, &a, mode, fits);
    }
    char *out;
    const char *fatal = pod_err;
    size_t nfit = fits ? 0 : a.n;
    if (prioritize) {
        int64_t *score = xcalloc(a.n + 1, sizeof *score);
        for (size_t i = 0; fits && i < a.n; i++)
            if (fits[i].status == DRA_FIT_OK) {
                nfit++;
                /* kube-scheduler does not clamp; MaxExtenderPriority is 10 */
                score[i] = fits[i].score < 0 ? 0 : fits[i].score > 10 ? 10 : fits[i].score;
            }
        out = ext_priority_list(&a, score);
        free(score);
    } else {
        ext_verdict *v = xcalloc(a.n + 1, sizeof *v);
        const char **why = xcalloc(a.n + 1, sizeof *why);
        /* FailedNodes carries each node's cause (engine/causes.h), the same text on every
         * node failing for the same reason: kube-scheduler counts identical texts, so its
         * event reads "0/N nodes are available: 140 no device matches ..., 18 ..." */
        char **cause = xcalloc(a.n + 1, sizeof *cause);
        dra_causes *dc = fits ? dra_causes_new() : NULL;
        /* a node held for a preemptor (hold.h) is no place for an equal- or lower-priority pod */
        const char *uid = json_string_value(json_object_get(json_object_get(a.pod, "metadata"), "uid"));
        const json_t *jprio = json_object_get(json_object_get(a.pod, "spec"), "priority");
        int32_t prio = (int32_t)json_integer_value(jprio);
        char holder[600];
        for (size_t i = 0; fits && i < a.n; i++) {
            if (fits[i].status == DRA_FIT_OK && s->cfg.holds &&
                ext_holds_blocks(s->cfg.holds, a.names[i], uid, &prio, holder, sizeof holder)) {
                v[i] = EXT_FAIL;
                why[i] = "held for a preemptor";
                char text[800];
                snprintf(text, sizeof text, "node held for pod %s, whose preemption freed devices there", holder);
                cause[i] = xstrdup(text);
                continue;
            }
            switch (fits[i].status) {
            case DRA_FIT_OK: v[i] = EXT_PASS, nfit++; break;
            case DRA_FIT_UNRESOLVABLE: v[i] = EXT_FAIL_UNRESOLVABLE; break;
            case DRA_FIT_ERROR:
                /* fatal for the pod, as an error status from the plugin's Filter is */
                if (!fatal) fatal = fits[i].reason;
                v[i] = EXT_FAIL;
                break;
            default: v[i] = EXT_FAIL;
            }
            why[i] = fits[i].reason;
            if (v[i] != EXT_PASS && !cause[i]) {
                dra_cause k;
                dra_fit_cause(&fits[i], a.names[i], &k);
                cause[i] = xstrdup(k.text);
                dra_causes_add_cause(dc, a.names[i], &fits[i], &k);
            }
        }
        out = ext_filter_result(&a, v, (const char *const *)cause, fatal);
        /* no node: kube-scheduler parks the pod until an event it hears (requeue.h) */
        if (!nfit) ext_requeue_rejected(s->cfg.requeue, t0);
        /* --preemption=evict: the leader looks for victims on the nodes failed as
         * Unschedulable, off this thread (evict.h) */
        if (!nfit && fits && !fatal && s->cfg.evictor && (!s->cfg.lease || ext_lease_is_leader(s->cfg.lease))) {
            const char **cands = xcalloc(a.n + 1, sizeof *cands);
            size_t nc = 0;
            for (size_t i = 0; i < a.n; i++)
                if (v[i] == EXT_FAIL && a.names[i]) cands[nc++] = a.names[i];
            ext_evictor_rejected(s->cfg.evictor, a.pod, cands, nc);
            free(cands);
        }
        char summary[2048];
        if (dc && dra_causes_nodes(dc)) dra_causes_summary(dc, a.n, summary, sizeof summary);
        remember(s, &a, snap, v, why, nfit, fatal, needs, dc && dra_causes_nodes(dc) ? summary : NULL);
        dra_causes_free(dc);
        for (size_t i = 0; i < a.n; i++) free(cause[i]);
        free(cause);
        free(v);
        free(why);
    }
    reply(r, 200, mime_json, out);
    if (s->cfg.verbose) {
        char pod[300];
        log_pod(&a, pod, sizeof pod);
        fprintf(stderr, "dralloc serve: %s %s gen=%llu nodes=%zu fit=%zu%s%s %.3fms\n",
                prioritize ? "prioritize" : "filter", pod, (unsigned long long)dra_snapshot_generation(snap), a.n,
                nfit, fatal ? " error=" : "", fatal ? fatal : "", (double)(dra_monotonic_ns() - t0) / 1e6);
    }
    fits_give(s, fits, fits_cap);
    dra_pod_request_free(pr);
    dra_snapshot_release(snap);
    ext_args_free(&a);
}

/* ---- bind mode ------------------------------------------------------------------------ */

/* A standby's answer to /bind: an Error (kube-scheduler unreserves the pod and tries
 * it again) that names who leads, so whoever reads the event knows where to look. */
static char *standby_error(ext_lease *l) {
    char *holder = ext_lease_holder(l), lease[300], msg[900];
    ext_lease_name(l, lease, sizeof lease);
    snprintf(msg, sizeof msg, "standby replica %s does not bind: the leader is %s (Lease %s); retry there",
             ext_lease_identity(l), holder ? holder : "not known yet", lease);
    free(holder);
    return xstrdup(msg);
}

static void bind_answer(ext_reply *r, char *msg) {
    json_t *out = json_pack("{s:s}", "Error", msg ? msg : "");
    free(msg);
    reply(r, 200, mime_json, json_dumps(out, JSON_COMPACT));
    json_decref(out);
}

/* ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node} → ExtenderBindingResult,
 * in two phases (bind.h): true, answered in r; false, *later is the bind to finish
 * (ext_bind_finish, then bind_answer). later NULL: both here. */
static bool bind_verb(ext_service *s, const char *body, size_t len, uint64_t received_ns, ext_reply *r,
                      ext_bind_job **later, char **later_uid) {
    if (!s->cfg.binder) {
        reply(r, 200, mime_json, xstrdup("{\"Error\":\"bind mode is not enabled (--bind)\"}"));
        return true;
    }
    err e;
    err_clear(&e);
    json_t *doc = ext_json_parse(body, len, s->cfg.max_depth, &e);
    if (!doc || !json_is_object(doc)) {
        json_decref(doc);
        if (!e.msg[0]) err_set(&e, "expected an object");
        reply_err(r, 400, "ExtenderBindingArgs: ", &e);
        return true;
    }
    const char *f[4] = {"PodName", "PodNamespace", "PodUID", "Node"};
    const char *v[4];
    for (int i = 0; i < 4; i++) {
        bool present;
        const json_t *x = ext_member(doc, f[i], &present);
        v[i] = json_string_value(x);
        if (present && x && !json_is_null(x) && !v[i]) {
            json_decref(doc);
            ext_reply_error(r, 400, "ExtenderBindingArgs: %s: expected a string", f[i]);
            return true;
        }
    }
    char *msg = NULL;
    bool answered = true;
    char holder[600];
    if (s->cfg.lease && !ext_lease_is_leader(s->cfg.lease)) {
        msg = standby_error(s->cfg.lease);
    } else if (s->cfg.holds && ext_holds_blocks(s->cfg.holds, v[3], v[2], NULL, holder, sizeof holder)) {
        char text[1200];
        snprintf(text, sizeof text, "node %s is held for pod %s, whose preemption freed devices there", v[3] ? v[3] : "",
                 holder);
        msg = xstrdup(text);
    } else {
        ext_bind_job *j = ext_bind_job_new(v[1], v[0], v[2], v[3], received_ns);
        answered = ext_bind_prepare(s->cfg.binder, j, &msg);
        if (!answered && later) *later = j, *later_uid = v[2] ? xstrdup(v[2]) : NULL;
        else if (!answered) msg = ext_bind_finish(s->cfg.binder, j), answered = true;
        if (answered && !msg) ext_evictor_bound(s->cfg.evictor, v[2]);   /* its hold, if any, is done */
    }
    json_decref(doc);
    if (answered) bind_answer(r, msg);
    return answered;
}

/* ---- static mode: /objects ---------------------------------------------------------- */

static void generation_reply(ext_service *s, uint64_t gen, const char *what, ext_reply *r) {
    char body[64];
    snprintf(body, sizeof body, "{\"generation\":%llu}", (unsigned long long)gen);
    reply(r, 200, mime_json, xstrdup(body));
    if (s->cfg.verbose) fprintf(stderr, "dralloc serve: %s: snapshot generation %llu\n", what, (unsigned long long)gen);
}

static void post_objects(ext_service *s, const char *body, size_t len, ext_reply *r) {
    err e;
    err_clear(&e);
    json_t *doc = ext_json_parse(body, len, s->cfg.max_depth, &e);
    if (!doc) {
        reply_err(r, 400, "", &e);
        return;
    }
    uint64_t gen = dra_store_apply_json(s->store, doc, &e);
    json_decref(doc);
    if (!gen) {
        reply_err(r, 400, "", &e);
        return;
    }
    generation_reply(s, gen, "POST /objects", r);
}

static void delete_object(ext_service *s, const char *rest, ext_reply *r) {
    /* KIND/NAMESPACE/NAME, "_" for a cluster-scoped object's namespace */
    char buf[1024];
    if (strlen(rest) >= sizeof buf) {
        ext_reply_error(r, 400, "object path too long");
        return;
    }
    strcpy(buf, rest);
    char *kind = buf, *ns = strchr(kind, '/'), *name = ns ? strchr(ns + 1, '/') : NULL;
    if (!ns || !name || strchr(name + 1, '/') || ns == kind || name == ns + 1 || !name[1]) {
        ext_reply_error(r, 400, "expected DELETE /objects/KIND/NAMESPACE/NAME (NAMESPACE \"_\" when cluster-scoped)");
        return;
    }
    *ns++ = '\0';
    *name++ = '\0';
    dra_change ch = {.kind = kind, .ns = strcmp(ns, "_") ? ns : NULL, .name = name};
    err e;
    err_clear(&e);
    uint64_t gen = dra_store_apply(s->store, &ch, 1, &e);
    if (!gen) {
        reply_err(r, strstr(e.msg, "not found") ? 404 : 400, "", &e);
        return;
    }
    generation_reply(s, gen, "DELETE /objects", r);
}

/* ---- introspection ------------------------------------------------------------------ */

/* The leader election as this replica sees it. */
static json_t *leader_json(ext_lease *l) {
    char *holder = ext_lease_holder(l), lease[300];
    ext_lease_name(l, lease, sizeof lease);
    json_t *j = json_pack("{s:s, s:b, s:s?, s:s}", "identity", ext_lease_identity(l), "leading", ext_lease_is_leader(l),
                          "holder", holder, "lease", lease);
    free(holder);
    return j;
}

static void debug_cache(ext_service *s, ext_reply *r) {
    dra_snapshot *snap = dra_store_acquire(s->store);
    if (!snap) {
        /* before the first list: what each watch is doing and why it has not listed */
        json_t *j = json_pack("{s:s}", "error", "no snapshot loaded yet");
        if (s->cfg.watch) json_object_set_new(j, "watch", ext_watch_status_json(s->cfg.watch));
        if (s->cfg.lease) json_object_set_new(j, "leader", leader_json(s->cfg.lease));
        reply(r, 503, mime_json, json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6)));
        json_decref(j);
        return;
    }
    int64_t built = dra_snapshot_built_unix_ns(snap);
    time_t secs = (time_t)(built / 1000000000);
    struct tm tm;
    char when[64];
    gmtime_r(&secs, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    size_t bare = 0, views = dra_snapshot_cached_views(snap, &bare);
    json_t *j = json_pack("{s:I,s:s,s:f,s:o,s:{s:I,s:I}}", "generation", (json_int_t)dra_snapshot_generation(snap),
                          "builtAt", when, "buildSeconds", (double)dra_snapshot_build_ns(snap) / 1e9, "objects",
                          dra_snapshot_counts_json(snap), "nodeViews", "cached", (json_int_t)views,
                          "withoutNodeObject", (json_int_t)bare);
    dra_catalog_sizes cs;
    dra_snapshot_catalog_sizes(snap, &cs);
    json_object_set_new(j, "catalog", dra_catalog_sizes_json(&cs));
    dra_snapshot_release(snap);
    if (s->cfg.watch) json_object_set_new(j, "watch", ext_watch_status_json(s->cfg.watch));
    if (s->cfg.lease) json_object_set_new(j, "leader", leader_json(s->cfg.lease));
    if (s->cfg.requeue) json_object_set_new(j, "requeue", ext_requeue_status_json(s->cfg.requeue));
    if (s->cfg.evictor) json_object_set_new(j, "preemption", ext_evictor_status_json(s->cfg.evictor));
    char *out = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(j);
    reply(r, 200, mime_json, out);
}

static void metrics(ext_service *s, ext_reply *r) {
    dra_snapshot *snap = dra_store_acquire(s->store);
    char *text = ext_metrics_render(s->metrics, snap);
    if (snap) dra_snapshot_release(snap);
    strbuf b;
    sbuf_init(&b);
    sbuf_adds(&b, text);
    free(text);
    const ext_config *c = &s->cfg;
    if (c->watch || c->lease || c->binder) {
        /* live mode's own series */
        sbuf_addf(&b,
                  "# HELP dralloc_watch_ready 1 when every kind is listed and none is stale\n"
                  "# TYPE dralloc_watch_ready gauge\ndralloc_watch_ready %d\n"
                  "# HELP dralloc_watch_events_total watch events applied\n"
                  "# TYPE dralloc_watch_events_total counter\ndralloc_watch_events_total %llu\n"
                  "# HELP dralloc_watch_lists_total complete lists (first lists and relists)\n"
                  "# TYPE dralloc_watch_lists_total counter\ndralloc_watch_lists_total %llu\n"
                  "# HELP dralloc_watch_stale_events_skipped_total versions of objects bind mode wrote that "
                  "the watch delivered afterwards, older than the write, not applied\n"
                  "# TYPE dralloc_watch_stale_events_skipped_total counter\n"
                  "dralloc_watch_stale_events_skipped_total %llu\n"
                  "# HELP dralloc_leader 1 while this replica holds the lease (or runs without election)\n"
                  "# TYPE dralloc_leader gauge\ndralloc_leader %d\n"
                  "# HELP dralloc_binds_total /bind outcomes\n# TYPE dralloc_binds_total counter\n"
                  "dralloc_binds_total{outcome=\"bound\"} %llu\ndralloc_binds_total{outcome=\"failed\"} %llu\n"
                  "dralloc_binds_total{outcome=\"expired\"} %llu\ndralloc_binds_total{outcome=\"retried\"} %llu\n"
                  "# HELP dralloc_bind_conflicts_total 409 answers to claim writes, retried\n"
                  "# TYPE dralloc_bind_conflicts_total counter\ndralloc_bind_conflicts_total %llu\n",
                  c->watch ? ext_watch_ready(c->watch) : 1,
                  c->watch ? (unsigned long long)ext_watch_events(c->watch) : 0ull,
                  c->watch ? (unsigned long long)ext_watch_relists(c->watch) : 0ull,
                  c->watch ? (unsigned long long)ext_watch_stale_skipped(c->watch) : 0ull,
                  c->lease ? ext_lease_is_leader(c->lease) : 1,
                  c->binder ? (unsigned long long)ext_binder_binds(c->binder) : 0ull,
                  c->binder ? (unsigned long long)ext_binder_failures(c->binder) : 0ull,
                  c->binder ? (unsigned long long)ext_binder_expired(c->binder) : 0ull,
                  c->binder ? (unsigned long long)ext_binder_retried(c->binder) : 0ull,
                  c->binder ? (unsigned long long)ext_binder_conflicts(c->binder) : 0ull);
    }
    if (c->binder) {
        /* where bind mode's time goes (bind.h), to tell the API server's share from ours */
        sbuf_addf(&b,
                  "# HELP dralloc_binds_inflight /bind requests in progress\n"
                  "# TYPE dralloc_binds_inflight gauge\ndralloc_binds_inflight %d\n"
                  "# HELP dralloc_bind_claim_gets_total ResourceClaims read before a write (not in the watch's "
                  "JSON, or after a 409)\n"
                  "# TYPE dralloc_bind_claim_gets_total counter\ndralloc_bind_claim_gets_total %llu\n"
                  "# HELP dralloc_bind_phase_seconds_total time spent by /bind, by phase, summed over binds\n"
                  "# TYPE dralloc_bind_phase_seconds_total counter\n",
                  ext_binder_inflight(c->binder), (unsigned long long)ext_binder_claim_gets(c->binder));
        for (int p = 0; p < EXT_BIND_NPHASES; p++)
            sbuf_addf(&b, "dralloc_bind_phase_seconds_total{phase=\"%s\"} %.6f\n", ext_bind_phase_name(p),
                      ext_binder_phase_seconds(c->binder, p));
    }
    if (c->budget)
        sbuf_addf(&b,
                  "# HELP dralloc_inflight_request_bytes request bytes held now, across connections\n"
                  "# TYPE dralloc_inflight_request_bytes gauge\ndralloc_inflight_request_bytes %zu\n"
                  "# HELP dralloc_inflight_request_bytes_peak the most request bytes held at once\n"
                  "# TYPE dralloc_inflight_request_bytes_peak gauge\ndralloc_inflight_request_bytes_peak %zu\n"
                  "# HELP dralloc_inflight_request_bytes_limit --max-inflight-bytes\n"
                  "# TYPE dralloc_inflight_request_bytes_limit gauge\ndralloc_inflight_request_bytes_limit %zu\n"
                  "# HELP dralloc_requests_over_budget_total requests answered 503 for want of room in "
                  "--max-inflight-bytes\n"
                  "# TYPE dralloc_requests_over_budget_total counter\ndralloc_requests_over_budget_total %llu\n",
                  ext_budget_in_use(c->budget), ext_budget_peak(c->budget), ext_budget_limit(c->budget),
                  (unsigned long long)ext_budget_refusals(c->budget));
    if (c->tls)
        sbuf_addf(&b,
                  "# HELP dralloc_tls_reloads_total certificate files loaded again after they changed\n"
                  "# TYPE dralloc_tls_reloads_total counter\ndralloc_tls_reloads_total{outcome=\"loaded\"} %llu\n"
                  "dralloc_tls_reloads_total{outcome=\"failed\"} %llu\n",
                  (unsigned long long)ext_tls_reloads(c->tls), (unsigned long long)ext_tls_reload_errors(c->tls));
    if (c->features) {
        /* as kube components export their gates (component-base's metric) */
        sbuf_addf(&b, "# HELP kubernetes_feature_enabled whether a feature gate is on in this dralloc (1) or off (0)\n"
                      "# TYPE kubernetes_feature_enabled gauge\n");
        const char *name;
        bool on;
        for (size_t k = 0; (name = ext_gates_name(k)); k++)
            if (dra_features_get(c->features, name, &on))
                sbuf_addf(&b, "kubernetes_feature_enabled{name=\"%s\"} %d\n", name, on ? 1 : 0);
    }
    if (c->tls) {
        sbuf_addf(&b,
                  "# HELP dralloc_tls_certificate_expiry_seconds seconds until the serving certificate's notAfter "
                  "(negative: expired)\n"
                  "# TYPE dralloc_tls_certificate_expiry_seconds gauge\ndralloc_tls_certificate_expiry_seconds %lld\n"
                  "# HELP dralloc_tls_handshakes_refused_total TLS handshakes refused, by cause\n"
                  "# TYPE dralloc_tls_handshakes_refused_total counter\n",
                  (long long)ext_tls_expiry_seconds(c->tls));
        for (int k = 0; k < EXT_TLS_NCAUSES; k++)
            sbuf_addf(&b, "dralloc_tls_handshakes_refused_total{cause=\"%s\"} %llu\n", ext_tls_cause_label(k),
                      (unsigned long long)ext_tls_refused(c->tls, k));
    }
    reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", sbuf_take(&b));
}

/* ---- routing -------------------------------------------------------------------------- */

/* The verb a path names: kube-scheduler appends the verb to its urlPrefix, which may
 * carry a path of its own (http://host:8888/dra + filter → /dra/filter). */
static bool is_verb(const char *path, const char *verb) {
    size_t lp = strlen(path), lv = strlen(verb);
    return lp > lv && path[lp - lv - 1] == '/' && !strcmp(path + lp - lv, verb);
}

static bool method_is(const char *m, const char *want, ext_reply *r, const char *allow) {
    if (!strcmp(m, want) || (!strcmp(want, "GET") && !strcmp(m, "HEAD"))) return true;
    ext_reply_error(r, 405, "method %s not allowed here (use %s)", m, allow);
    r->allow = allow;
    return false;
}

static ext_verb route(ext_service *s, const char *m, const char *path, const char *body, size_t len,
                      ext_reply *r) {
    if (s->cfg.write_guard && ext_auth_changes_state(path)) {
        ext_reply_error(r, 403, "%s", s->cfg.write_guard);
        return is_verb(path, "bind") ? EXT_VERB_BIND : EXT_VERB_OBJECTS;
    }
    if (!strcmp(path, "/objects") || !strncmp(path, "/objects/", 9)) {
        if (s->cfg.watch)
            ext_reply_error(r, 409, "/objects is for static mode; this server follows a kube-apiserver (--kubeconfig/--server)");
        else if (!strcmp(path, "/objects") && method_is(m, "POST", r, "POST")) post_objects(s, body, len, r);
        else if (path[8] == '/' && method_is(m, "DELETE", r, "DELETE")) delete_object(s, path + 9, r);
        return EXT_VERB_OBJECTS;
    }
    if (!strcmp(path, "/")) {
        if (method_is(m, "GET", r, "GET")) status_page(s, r);
        return EXT_VERB_OTHER;
    }
    if (!strcmp(path, "/healthz")) {
        if (method_is(m, "GET", r, "GET")) reply(r, 200, "text/plain; charset=utf-8", xstrdup("ok\n"));
        return EXT_VERB_HEALTHZ;
    }
    if (!strcmp(path, "/readyz")) {
        if (method_is(m, "GET", r, "GET")) {
            dra_snapshot *snap = dra_store_acquire(s->store);
            /* whether this replica can answer, leader or not: a standby that is not
             * ready would keep a Deployment from ever becoming Available */
            if (s->cfg.watch && !ext_watch_ready(s->cfg.watch))
                ext_reply_error(r, 503, "the cache has not listed every kind yet, or cannot watch (see /debug/cache)");
            else if (snap) reply(r, 200, "text/plain; charset=utf-8", xstrdup("ok\n"));
            else ext_reply_error(r, 503, "no snapshot loaded yet");
            if (snap) dra_snapshot_release(snap);
        }
        return EXT_VERB_READYZ;
    }
    if (!strcmp(path, "/metrics")) {
        if (method_is(m, "GET", r, "GET")) metrics(s, r);
        return EXT_VERB_METRICS;
    }
    if (!strcmp(path, "/debug/cache")) {
        if (method_is(m, "GET", r, "GET")) debug_cache(s, r);
        return EXT_VERB_DEBUG;
    }
    if (is_verb(path, "filter")) {
        if (method_is(m, "POST", r, "POST")) verb(s, false, body, len, r);
        return EXT_VERB_FILTER;
    }
    if (is_verb(path, "prioritize")) {
        if (method_is(m, "POST", r, "POST")) verb(s, true, body, len, r);
        return EXT_VERB_PRIORITIZE;
    }
    if (is_verb(path, "bind")) {
        if (method_is(m, "POST", r, "POST")) bind_verb(s, body, len, 0, r, NULL, NULL);
        return EXT_VERB_BIND;
    }
    if (is_verb(path, "preempt")) {
        if (method_is(m, "POST", r, "POST")) ext_preempt_verb(s->store, s->cfg.max_depth, body, len, r);
        return EXT_VERB_OTHER;
    }
    ext_reply_error(r, 404, "no route for %s %s (verbs: POST /filter, /prioritize, /bind, /preempt; GET /healthz, /readyz, "
                    "/metrics, /debug/cache; POST /objects, DELETE /objects/KIND/NAMESPACE/NAME)", m, path);
    return EXT_VERB_OTHER;
}

void ext_service_handle(ext_service *s, const char *method, const char *path, const char *body, size_t len,
                        ext_reply *out) {
    uint64_t t0 = dra_monotonic_ns();
    memset(out, 0, sizeof *out);
    ext_verb v = route(s, method, path ? path : "/", body ? body : "", body ? len : 0, out);
    ext_metrics_request(s->metrics, v, out->status, dra_monotonic_ns() - t0);
}

bool ext_service_waits(const ext_service *s, const char *path) {
    return s->cfg.binder && path && is_verb(path, "bind");
}

struct ext_deferred {
    ext_bind_job *job;
    char *uid;                   /* the pod's, to release its hold once bound */
    uint64_t t0;                 /* the request's arrival, for its metrics */
};

bool ext_service_begin(ext_service *s, const char *method, const char *path, const char *body, size_t len,
                       ext_reply *out, ext_deferred **later) {
    *later = NULL;
    path = path ? path : "/";
    if (!ext_service_waits(s, path) || !method || strcmp(method, "POST") ||
        (s->cfg.write_guard && ext_auth_changes_state(path))) {
        ext_service_handle(s, method, path, body, len, out);
        return true;
    }
    uint64_t t0 = dra_monotonic_ns();
    memset(out, 0, sizeof *out);
    ext_bind_job *j = NULL;
    char *uid = NULL;
    if (bind_verb(s, body ? body : "", body ? len : 0, t0, out, &j, &uid)) {
        ext_metrics_request(s->metrics, EXT_VERB_BIND, out->status, dra_monotonic_ns() - t0);
        return true;
    }
    assert(j);
    ext_deferred *d = xcalloc(1, sizeof *d);
    d->job = j;
    d->uid = uid;
    d->t0 = t0;
    *later = d;
    return false;
}

void ext_service_finish(ext_service *s, ext_deferred *d, ext_reply *out) {
    memset(out, 0, sizeof *out);
    char *msg = ext_bind_finish(s->cfg.binder, d->job);
    if (!msg) ext_evictor_bound(s->cfg.evictor, d->uid);
    bind_answer(out, msg);
    ext_metrics_request(s->metrics, EXT_VERB_BIND, out->status, dra_monotonic_ns() - d->t0);
    free(d->uid);
    free(d);
}

/* The metrics verb of a path, for requests refused before routing. */
static ext_verb verb_of(const char *path) {
    static const struct {
        const char *path;
        ext_verb v;
    } exact[] = {{"/healthz", EXT_VERB_HEALTHZ}, {"/readyz", EXT_VERB_READYZ},
                 {"/metrics", EXT_VERB_METRICS}, {"/debug/cache", EXT_VERB_DEBUG}};
    if (!strcmp(path, "/objects") || !strncmp(path, "/objects/", 9)) return EXT_VERB_OBJECTS;
    for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
        if (!strcmp(path, exact[i].path)) return exact[i].v;
    if (is_verb(path, "filter")) return EXT_VERB_FILTER;
    if (is_verb(path, "prioritize")) return EXT_VERB_PRIORITIZE;
    if (is_verb(path, "bind")) return EXT_VERB_BIND;
    return EXT_VERB_OTHER;
}

void ext_service_refuse(ext_service *s, const char *path, int status, const char *msg, ext_reply *out) {
    memset(out, 0, sizeof *out);
    ext_reply_error(out, status, "%s", msg);
    ext_metrics_request(s->metrics, verb_of(path ? path : "/"), status, 0);
}
