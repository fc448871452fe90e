/* live_requeue.c — bind mode's wake-up write (extender/requeue.h) against the fake
 * kube-apiserver:
 *   - which watch changes may free devices (ext_requeue_frees), one case per rule;
 *   - no write without a rejection before the change, nor for a change after the last
 *     write with no rejection since;
 *   - a rejection then a change: the claim dralloc-system/dralloc-requeue is created
 *     with the annotation; the next one patches it (the count in the annotation moves);
 *   - a burst of changes after one rejection is one write (coalesced);
 *   - a rejection whose answer began before the last change (its snapshot may not hold
 *     it) writes with no change after it; one that began after the change does not;
 *   - through the watch: a rejection, then a ResourceSlice appearing on the server,
 *     writes; the requeue's own claim coming back through the watch does not write
 *     again (it would wake the pods forever, a write a second). */
#include "tests/live/live.h"

#include "base/clock.h"
#include "extender/requeue.h"

#include <string.h>
#include <time.h>

static void nap(double s) {
    nanosleep(&(struct timespec){(time_t)s, (long)((s - (double)(time_t)s) * 1e9)}, NULL);
}

typedef struct writes_at_least {
    ext_requeue *rq;
    uint64_t n;
} writes_at_least;

static bool has_writes(void *arg) {
    writes_at_least *w = arg;
    return ext_requeue_writes(w->rq) >= w->n;
}

static const char *annotation(fake_api *f) {
    static char buf[256];
    json_t *all = fake_objects(f, "resourceclaims");
    size_t i;
    json_t *o;
    buf[0] = '\0';
    json_array_foreach(all, i, o) if (!strcmp(json_string_value(json_object_get(json_object_get(o, "metadata"),
                                                                                "namespace")) ?: "", "dralloc-system") &&
                                      !strcmp(json_string_value(json_object_get(json_object_get(o, "metadata"), "name"))
                                                  ?: "", "dralloc-requeue")) {
        const char *v = json_string_value(
            json_object_get(json_object_get(json_object_get(o, "metadata"), "annotations"), "dralloc.dev/requeue"));
        snprintf(buf, sizeof buf, "%s", v ? v : "");
    }
    json_decref(all);
    return buf;
}

static void frees_rules(ext_requeue *rq) {
    json_t *slice = json_pack("{s:{s:s}}", "metadata", "name", "s");
    json_t *alloc = json_pack("{s:{s:s, s:s}, s:{s:{}}}", "metadata", "name", "c", "namespace", "ml", "status", "allocation");
    json_t *free_claim = json_pack("{s:{s:s, s:s}, s:{}}", "metadata", "name", "c", "namespace", "ml", "status");
    json_t *own = json_pack("{s:{s:s, s:s}}", "metadata", "name", "dralloc-requeue", "namespace", "dralloc-system");
    CHECK(ext_requeue_frees(rq, "ResourceSlice", slice, NULL, NULL), "requeue: a slice added or changed may free devices");
    CHECK(!ext_requeue_frees(rq, "ResourceSlice", NULL, NULL, "s"), "requeue: a slice deleted frees nothing");
    CHECK(ext_requeue_frees(rq, "DeviceTaintRule", NULL, NULL, "t"), "requeue: a taint rule deleted frees devices");
    CHECK(!ext_requeue_frees(rq, "ResourceClaim", alloc, NULL, NULL), "requeue: an allocated claim frees nothing");
    CHECK(ext_requeue_frees(rq, "ResourceClaim", free_claim, NULL, NULL), "requeue: a claim without allocation may be a "
                                                                          "deallocation");
    CHECK(ext_requeue_frees(rq, "ResourceClaim", NULL, "ml", "c"), "requeue: a claim deleted may free devices");
    CHECK(!ext_requeue_frees(rq, "ResourceClaim", own, NULL, NULL), "requeue: its own claim must not write again");
    CHECK(!ext_requeue_frees(rq, "ResourceClaim", NULL, "dralloc-system", "dralloc-requeue"),
          "requeue: its own claim deleted must not write");
    CHECK(!ext_requeue_frees(rq, "Node", slice, NULL, NULL), "requeue: kube-scheduler hears Node events itself");
    json_decref(slice);
    json_decref(alloc);
    json_decref(free_claim);
    json_decref(own);
}

void live_requeue(fake_api *f, ext_kube *k) {
    ext_requeue *rq = ext_requeue_start(k, &(ext_requeue_opts){.ns = "dralloc-system", .interval_s = 0.3,
                                                               .quiet = live_quiet()});
    frees_rules(rq);

    ext_requeue_changed(rq, "ResourceSlice changed");
    nap(0.5);
    CHECK(ext_requeue_writes(rq) == 0 && !*annotation(f), "requeue: wrote with no pod rejected (writes %llu)",
          (unsigned long long)ext_requeue_writes(rq));

    ext_requeue_rejected(rq, monotonic_ns());
    ext_requeue_changed(rq, "ResourceSlice changed");
    CHECK(live_wait(5, has_writes, &(writes_at_least){rq, 1}), "requeue: no write after a rejection and a change");
    CHECK(!strcmp(annotation(f), "1: ResourceSlice changed"), "requeue: the claim's annotation is '%s'", annotation(f));

    ext_requeue_changed(rq, "ResourceClaim deleted");   /* nobody rejected since */
    nap(0.6);
    CHECK(ext_requeue_writes(rq) == 1, "requeue: wrote again with no rejection since the last write (writes %llu)",
          (unsigned long long)ext_requeue_writes(rq));

    ext_requeue_rejected(rq, monotonic_ns());
    for (int i = 0; i < 20; i++) ext_requeue_changed(rq, "ResourceClaim deleted");
    CHECK(live_wait(5, has_writes, &(writes_at_least){rq, 2}), "requeue: no second write");
    nap(0.8);
    CHECK(ext_requeue_writes(rq) == 2, "requeue: a burst of 20 changes after one rejection gave %llu writes, want 1",
          (unsigned long long)ext_requeue_writes(rq) - 1);
    CHECK(!strcmp(annotation(f), "2: ResourceClaim deleted"), "requeue: the patched annotation is '%s'", annotation(f));

    /* the answer that began before a change and ended after it: the change found no
     * rejection newer than the last write, so the rejection itself must ask */
    uint64_t began = monotonic_ns();
    ext_requeue_changed(rq, "ResourceClaim deleted");
    nap(0.5);
    CHECK(ext_requeue_writes(rq) == 2, "requeue: a change with no rejection since the last write wrote (writes %llu)",
          (unsigned long long)ext_requeue_writes(rq));
    ext_requeue_rejected(rq, began);
    CHECK(live_wait(5, has_writes, &(writes_at_least){rq, 3}),
          "requeue: a pod answered on a snapshot from before the last change was never woken");
    CHECK(strstr(annotation(f), "a change while a /filter found no node") != NULL,
          "requeue: the annotation after a stale answer is '%s'", annotation(f));
    ext_requeue_rejected(rq, monotonic_ns());   /* began after every change: its answer saw them */
    nap(0.8);
    CHECK(ext_requeue_writes(rq) == 3, "requeue: a rejection newer than every change wrote (writes %llu)",
          (unsigned long long)ext_requeue_writes(rq));
    ext_requeue_stop(rq);

    /* through the watch: the slice as the server announces it */
    rq = ext_requeue_start(k, &(ext_requeue_opts){.ns = "dralloc-system", .interval_s = 0.3, .quiet = live_quiet()});
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    ext_watch_opts wo = {.max_staleness_s = 10, .page_limit = 50, .idle_s = 2, .watch_timeout_s = 4,
                         .backoff_max_s = 0.5, .quiet = live_quiet(), .requeue = rq};
    ext_watch *w = ext_watch_start(k, st, &wo);
    for (int i = 0; i < 500 && !ext_watch_ready(w); i++) nap(0.02);
    CHECK(ext_watch_ready(w), "requeue: the watch is not ready");
    ext_requeue_rejected(rq, monotonic_ns());
    fake_put(f, "resourceslices", live_slice("wake-slice", "node-0", 1, "A100"));
    CHECK(live_wait(5, has_writes, &(writes_at_least){rq, 1}), "requeue: a ResourceSlice through the watch wrote nothing");
    /* the write's own MODIFIED event comes back through the watch: no write from it,
     * even with a rejection after the write */
    ext_requeue_rejected(rq, monotonic_ns());
    nap(1.0);
    CHECK(ext_requeue_writes(rq) == 1, "requeue: its own claim's event wrote again (writes %llu)",
          (unsigned long long)ext_requeue_writes(rq));
    ext_watch_stop(w);
    dra_store_free(st);
    ext_requeue_stop(rq);
    fake_delete(f, "resourceslices", "", "wake-slice");
    fake_delete(f, "resourceclaims", "dralloc-system", "dralloc-requeue");
}
