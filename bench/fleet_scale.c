/* fleet_scale.c — `dralloc bench fleet --shape gpu8|mig8 [--devices N] [--dump DIR]`:
 * the 20,000- and 100,000-node fleets of issue 43 (fleet_gen.h), N nodes (default
 * 20,000).
 *
 * --dump DIR writes DIR/cluster/ (Lists: classes.json, then nodes-, slices- and
 * claims-NNNN.json of 2,000 nodes each — a file reader takes at most 256 MiB a file),
 * DIR/workloads.json (plan's: one pod per node) and DIR/probes.json
 * (64 unallocated claims of the workload's spec, for /filter requests), for `dralloc
 * capacity -f`, `plan -f` and `serve --snapshot` (bench/scale/run.sh times those).
 * Without it, the fleet is ingested in this process as dralloc serve's watch reads it
 * at start-up — each kind as LIST pages of 500 items of JSON text (the text is made
 * before the clock starts and is not counted), parsed item by item, given to a relist
 * in batches, committed — and measured, one line each:
 *   ingest       wall and CPU time per kind and in all, MB of text
 *   memory       RSS kept after each kind above the RSS before: bytes per device (Nodes
 *                and slices over every device), per allocated claim (the claims'
 *                relist over the claims); then held above the RSS before the text,
 *                the allocator's freed pages given back (bench_release_freed): after
 *                the ingest and once every node's view is built, per device
 *   capacity     dra_capacity_json on the snapshot
 *   filter       the workload's pod decided on every node, one thread, cold (views built
 *                lazily) and warm; then batches of 1,000 and 5,000 names (a spread
 *                of the fleet, as kube-scheduler's percentageOfNodesToScore samples)
 *                on one thread, memo off: the engine's share of a /filter, p50/p99
 *   update       one slice republished, one claim allocated, p50/p99 over --reps
 *                (default 100) each: as the watch applies an event (served, a new
 *                resourceVersion: known by it) and through dra_store_apply_json (an
 *                object from a file or a request: its value hashed whole). */
#include "bench/bench.h"
#include "bench/fleet_gen.h"
#include "bench/list_writer.h"

#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { PAGE_ITEMS = 500, PART_NODES = 2000 };

/* ---- --dump ---------------------------------------------------------------------------- */

/* One List file of the kind's objects for nodes [j0, j1) (classes when k < 0). */
static bool write_part(const char *path, fleet_shape s, int k, size_t j0, size_t j1, size_t *count) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dralloc bench fleet: cannot write %s\n", path);
        return false;
    }
    bench_list_writer w = {.f = f};
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", f);
    if (k < 0) fleet_gen_classes(s, bench_list_put, &w);
    for (size_t j = j0; k >= 0 && j < j1; j++) fleet_gen_node(s, j, (fleet_kind)k, bench_list_put, &w);
    fputs("\n]}\n", f);
    bool ok = !ferror(f);
    if (fclose(f) || !ok) {
        fprintf(stderr, "dralloc bench fleet: writing %s failed\n", path);
        return false;
    }
    *count += w.n;
    return true;
}

static int dump(const bench_opts *o, fleet_shape s, size_t nodes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/cluster", o->dump);
    if ((mkdir(o->dump, 0777) && errno != EEXIST) || (mkdir(path, 0777) && errno != EEXIST)) {
        fprintf(stderr, "dralloc bench fleet: --dump %s: cannot make the directory\n", o->dump);
        return 1;
    }
    /* parts of PART_NODES nodes a kind: a file reader takes at most 256 MiB a file
     * (DRA_INPUT_MAX_BYTES), and 2,000 mig8 nodes' slices are ~200 MB */
    static const char *const KIND_FILE[] = {"nodes", "slices", "claims"};
    size_t objs = 0;
    snprintf(path, sizeof path, "%s/cluster/classes.json", o->dump);
    if (!write_part(path, s, -1, 0, 0, &objs)) return 1;
    for (int k = FLEET_NODES; k <= FLEET_CLAIMS; k++)
        for (size_t j = 0; j < nodes; j += PART_NODES) {
            snprintf(path, sizeof path, "%s/cluster/%s-%04zu.json", o->dump, KIND_FILE[k], j / PART_NODES);
            if (!write_part(path, s, k, j, j + PART_NODES < nodes ? j + PART_NODES : nodes, &objs)) return 1;
        }
    snprintf(path, sizeof path, "%s/workloads.json", o->dump);
    json_t *wl = fleet_gen_workloads(s, nodes);
    int rc = json_dump_file(wl, path, JSON_INDENT(2));
    json_decref(wl);
    if (rc) {
        fprintf(stderr, "dralloc bench fleet: cannot write %s\n", path);
        return 1;
    }
    /* unallocated claims of the workload's spec, for /filter probes (bench/scale/filter.py) */
    snprintf(path, sizeof path, "%s/probes.json", o->dump);
    json_t *probes = json_pack("{s:s, s:s, s:[]}", "apiVersion", "v1", "kind", "List", "items");
    json_t *tmpl = fleet_gen_template(s);
    for (int i = 0; i < 64; i++) {
        char name[32];
        snprintf(name, sizeof name, "probe-%d", i);
        json_array_append_new(json_object_get(probes, "items"),
                              json_pack("{s:s, s:s, s:{s:s, s:s}, s:O}", "apiVersion", "resource.k8s.io/v1", "kind",
                                        "ResourceClaim", "metadata", "name", name, "namespace", "ml", "spec",
                                        json_object_get(json_object_get(tmpl, "spec"), "spec")));
    }
    json_decref(tmpl);
    rc = json_dump_file(probes, path, JSON_INDENT(1));
    json_decref(probes);
    if (rc) {
        fprintf(stderr, "dralloc bench fleet: cannot write %s\n", path);
        return 1;
    }
    fprintf(o->out, "fleet %s of %zu nodes: %zu objects in %s/cluster/ (Lists of %d nodes' objects); workloads.json "
                    "(%zu pods) and probes.json "
                    "(64 unallocated claims) beside it\n",
            fleet_shape_name(s), nodes, objs, o->dump, (int)PART_NODES, nodes);
    return 0;
}

/* ---- ingest as LIST pages -------------------------------------------------------------- */

typedef struct pages {
    char **text;
    size_t *len, n, bytes, items;
} pages;

static void collect(void *arg, json_t *obj) { json_array_append_new(arg, obj); }

static char *page_text(json_t *items, fleet_kind k) {
    static const char *const list[] = {"NodeList", "ResourceSliceList", "ResourceClaimList"};
    json_t *page = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", list[k], "apiVersion",
                             k == FLEET_NODES ? "v1" : "resource.k8s.io/v1", "metadata", "resourceVersion", "1", "items",
                             items);
    char *t = json_dumps(page, JSON_COMPACT);
    json_decref(page);
    return t;
}

/* Every object of kind k as pages of PAGE_ITEMS items of text. */
static void pages_make(fleet_shape s, size_t nodes, fleet_kind k, pages *p) {
    memset(p, 0, sizeof *p);
    json_t *items = json_array();
    for (size_t j = 0; j < nodes; j++) {
        fleet_gen_node(s, j, k, collect, items);
        if (json_array_size(items) < PAGE_ITEMS && j + 1 < nodes) continue;
        p->items += json_array_size(items);
        p->text = xrealloc(p->text, (p->n + 1) * sizeof *p->text);
        p->len = xrealloc(p->len, (p->n + 1) * sizeof *p->len);
        p->text[p->n] = page_text(items, k);
        p->len[p->n] = strlen(p->text[p->n]);
        p->bytes += p->len[p->n++];
        items = json_array();
    }
    json_decref(items);
}

static void pages_free(pages *p) {
    for (size_t i = 0; i < p->n; i++) free(p->text[i]);
    free(p->text);
    free(p->len);
}

static void skipped(void *arg, const dra_change *c, const err *why) {
    (void)c;
    if ((*(size_t *)arg)++ < 3) fprintf(stderr, "bench fleet: refused: %s\n", why->msg);
}

/* The pages read into st as the watch's relist reads them; false on a failure. */
static bool relist(dra_store *st, const char *kind, const pages *p, size_t *refused) {
    dra_relist *rl = dra_store_relist_begin(st, kind);
    json_t *batch[DRA_RELIST_BATCH_MAX];
    bool ok = rl != NULL;
    for (size_t pg = 0; ok && pg < p->n; pg++) {
        json_t *env = NULL, *t;
        dra_json_list *l = dra_json_list_open(p->text[pg], p->len[pg], &env);
        size_t n = 0, bytes = 0, len;
        bool failed = !l;
        while (l && (t = dra_json_list_next(l, &len, &failed))) {
            batch[n++] = t;
            bytes += len;
            if (!dra_relist_batch_full(n, bytes)) continue;
            dra_relist_put(rl, (const json_t *const *)batch, n, skipped, refused);
            for (size_t i = 0; i < n; i++) json_decref(batch[i]);
            n = 0, bytes = 0;
        }
        if (n) dra_relist_put(rl, (const json_t *const *)batch, n, skipped, refused);
        for (size_t i = 0; i < n; i++) json_decref(batch[i]);
        ok = !failed;
        dra_json_list_close(l);
        json_decref(env);
    }
    err e;
    err_clear(&e);
    if (ok) ok = dra_relist_commit(rl, &e);
    else dra_relist_abort(rl);
    if (!ok) fprintf(stderr, "bench fleet: %s relist failed: %s\n", kind, e.msg);
    return ok;
}

/* ---- measuring ------------------------------------------------------------------------- */

typedef struct figures {
    size_t nodes, devices, claims, held;
    double ingest_ms[3], ingest_cpu_ms[3], mb[3];
    size_t units, units_held;   /* GPUs (gpu8) or memory slices (mig8), and those held */
    long rss0, rss[3], rss_text;   /* rss_text: given back by freeing the pages */
    /* KiB: the RSS before any text was made, and held above it once the allocator gave
     * back every page it kept freed (bench_release_freed): after the ingest, and once
     * every node's view is built */
    long rss_start, held_ingest, held_views;
    long ingest_peak;            /* KiB: the high-water mark during the relists less the pages' text (-1: not known) */
} figures;

static const char *const KIND[] = {"Node", "ResourceSlice", "ResourceClaim"};

/* Every kind's pages are made first, so that the RSS deltas below hold the store and
 * nothing of the text (it stays resident until the end, the same before and after). */
static bool ingest(dra_store *st, fleet_shape s, figures *fg) {
    pages p[3];
    long before = bench_status_kib("VmRSS:");
    fg->rss_start = before;
    for (int k = FLEET_NODES; k <= FLEET_CLAIMS; k++) pages_make(s, fg->nodes, (fleet_kind)k, &p[k]);
    fg->rss0 = bench_status_kib("VmRSS:");
    /* A watch holds one page's text at a time, this bench all of them: the peak a
     * relist reaches is the high-water mark from here (reset: clear_refs 5, Linux
     * 4.0+) less the text made above. */
    FILE *cr = fopen("/proc/self/clear_refs", "w");
    bool reset = cr && fputs("5", cr) >= 0;
    if (cr && fclose(cr)) reset = false;
    bool ok = true;
    for (int k = FLEET_NODES; ok && k <= FLEET_CLAIMS; k++) {
        size_t refused = 0;
        uint64_t t0 = bench_now_ns(), c0 = bench_proc_cpu_ns();
        ok = relist(st, KIND[k], &p[k], &refused) && !refused;
        fg->ingest_ms[k] = (double)(bench_now_ns() - t0) / 1e6;
        fg->ingest_cpu_ms[k] = (double)(bench_proc_cpu_ns() - c0) / 1e6;
        fg->mb[k] = (double)p[k].bytes / 1e6;
        fg->rss[k] = bench_status_kib("VmRSS:");
    }
    fg->ingest_peak = reset ? bench_status_kib("VmHWM:") - (fg->rss0 - before) : -1;
    for (int k = FLEET_NODES; k <= FLEET_CLAIMS; k++) pages_free(&p[k]);
    fg->rss_text = fg->rss[2] - bench_status_kib("VmRSS:");   /* what freeing the text gave back */
    bench_release_freed();
    fg->held_ingest = bench_status_kib("VmRSS:") - fg->rss_start;
    return ok;
}

static double per(long kib, size_t n) { return n ? (double)kib * 1024.0 / (double)n : 0; }

/* Decides the names on ov, its memo off: every node searched, as for a new pod. */
static void decide_names(const dra_pod_request *pr, dra_overlay *ov, dra_alloc_ctx *x, const char *const *names,
                         size_t n) {
    dra_fit f;
    for (size_t i = 0; i < n; i++) dra_pod_fit_overlay(pr, ov, x, names[i], DRA_SCORE_NONE, 0, false, &f);
}

/* The engine's share of /filter: cold and warm passes over every node, then batches of
 * `want` names, p50/p99 in ms into q[0], q[1]. */
static void filter_figures(dra_snapshot *snap, fleet_shape s, figures *fg, const bench_opts *o) {
    err e;
    err_clear(&e);
    json_t *pod = fleet_gen_pod(s, "probe");
    dra_pod_request *pr = dra_pod_request_new(snap, pod, &e);
    json_decref(pod);
    if (!pr) {
        fprintf(o->out, "filter      pod request: %s\n", e.msg);
        return;
    }
    char(*nm)[32] = xcalloc(fg->nodes, sizeof *nm);
    const char **names = xcalloc(fg->nodes, sizeof *names);
    for (size_t j = 0; j < fg->nodes; j++) fleet_gen_node_name(s, j, nm[j], sizeof nm[j]), names[j] = nm[j];
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_overlay *ov = dra_overlay_new(snap);
    dra_overlay_memo(ov, false);
    uint64_t t0 = bench_now_ns();
    decide_names(pr, ov, x, names, fg->nodes);
    double cold = (double)(bench_now_ns() - t0) / 1e6;
    /* the store's views, not this bench's overlay (which keeps its own index of them):
     * a new overlay for what follows */
    dra_overlay_free(ov);
    bench_release_freed();
    fg->held_views = bench_status_kib("VmRSS:") - fg->rss_start;
    ov = dra_overlay_new(snap);
    dra_overlay_memo(ov, false);
    t0 = bench_now_ns();
    decide_names(pr, ov, x, names, fg->nodes);
    double warm = (double)(bench_now_ns() - t0) / 1e6;
    fprintf(o->out, "filter      every node, one thread, memo off: cold %.0f ms, again %.0f ms (%.2f µs a node)\n", cold, warm,
            warm * 1e3 / (double)fg->nodes);
    /* the service's path (dra_pod_fit: unresolvable told from unschedulable, the
     * snapshot's fit memo written): every node once with the views built, then again
     * (memo hits); CPU time of the thread, the machine being shared */
    dra_fit f;
    uint64_t c0 = bench_cpu_ns();
    for (size_t j = 0; j < fg->nodes; j++) dra_pod_fit(pr, x, names[j], NULL, DRA_SCORE_NONE, 0, &f);
    uint64_t c1 = bench_cpu_ns();
    for (size_t j = 0; j < fg->nodes; j++) dra_pod_fit(pr, x, names[j], NULL, DRA_SCORE_NONE, 0, &f);
    uint64_t c2 = bench_cpu_ns();
    fprintf(o->out, "filter      every node, the service's path (dra_pod_fit), one thread, views built: %.2f µs CPU a node "
                    "decided, %.3f µs a memo hit\n",
            (double)(c1 - c0) / 1e3 / (double)fg->nodes, (double)(c2 - c1) / 1e3 / (double)fg->nodes);
    static const size_t want[] = {1000, 5000};
    size_t reps = o->reps ? o->reps : 100;
    const char **batch = xcalloc(5000, sizeof *batch);
    double *t = xcalloc(reps, sizeof *t);
    for (size_t w = 0; w < 2; w++) {
        size_t n = want[w] < fg->nodes ? want[w] : fg->nodes;
        for (size_t r = 0; r < reps; r++) {
            /* a spread of the fleet: a prime step meets every residue of the fill pattern */
            for (size_t i = 0; i < n; i++) batch[i] = names[(r * 104729 + i * 7919) % fg->nodes];
            t0 = bench_now_ns();
            decide_names(pr, ov, x, batch, n);
            t[r] = (double)(bench_now_ns() - t0) / 1e6;
        }
        bench_stats st = bench_stats_of(t, reps);
        fprintf(o->out, "filter      %zu names, one thread, memo off, engine only: p50 %.2f ms, p99 %.2f ms\n", n, st.p50, st.p99);
    }
    free(t);
    free(batch);
    dra_overlay_free(ov);
    dra_alloc_ctx_free(x);
    free(names);
    free(nm);
    dra_pod_request_free(pr);
}

/* One object applied as the watch applies an event (extender/watch.c): served, with a
 * resourceVersion the API server gave this write, so the store knows it by that and
 * not by hashing its value; or (as_file) through dra_store_apply_json, as a file or a
 * request body is, hashed whole. µs, or a negative value on failure. */
static double apply_one(dra_store *st, json_t *obj, bool as_file, size_t rv, err *e) {
    if (!as_file) {
        char v[32];
        snprintf(v, sizeof v, "%zu", rv);
        json_t *meta = json_object_get(obj, "metadata");
        json_object_set_new(meta, "resourceVersion", json_string(v));
        if (!json_object_get(meta, "uid")) json_object_set_new(meta, "uid", json_string("bench-fleet-update"));
    }
    dra_change c = {.upsert = obj, .served = true};
    uint64_t t0 = bench_now_ns();
    uint64_t gen = as_file ? dra_store_apply_json(st, obj, e) : dra_store_apply(st, &c, 1, e);
    double us = (double)(bench_now_ns() - t0) / 1e3;
    return gen ? us : -1;
}

/* One slice republished (a driver version changed on one device) and one claim
 * allocated, each as the watch applies it and as a file is; p50/p99 over --reps. */
static bool update_figures(dra_store *st, fleet_shape s, const figures *fg, const bench_opts *o) {
    size_t reps = o->reps ? o->reps : 100;
    double *t[4];
    for (int i = 0; i < 4; i++) t[i] = xcalloc(reps, sizeof *t[i]);
    err e;
    err_clear(&e);
    bool ok = true;
    for (size_t r = 0; r < reps && ok; r++) {
        for (int as_file = 0; as_file < 2 && ok; as_file++) {
            size_t j = (r * 104729 + (size_t)as_file * 7) % fg->nodes, rv = 1000000000 + r * 4 + (size_t)as_file * 2;
            json_t *sl = fleet_gen_slice_update(s, j, (int)(r * 2 + (size_t)as_file) + 1);
            t[as_file][r] = apply_one(st, sl, as_file, rv, &e);
            json_decref(sl);
            char name[64];
            snprintf(name, sizeof name, "update-%zu-%d", r, as_file);
            json_t *cl = fleet_gen_claim_on_free(s, (r * 7919 + (size_t)as_file * 13) % fg->nodes, name);
            t[2 + as_file][r] = apply_one(st, cl, as_file, rv + 1, &e);
            json_decref(cl);
            ok = t[as_file][r] >= 0 && t[2 + as_file][r] >= 0;
        }
    }
    if (!ok) fprintf(stderr, "bench fleet: update failed: %s\n", e.msg);
    bench_stats a = bench_stats_of(t[0], reps), b = bench_stats_of(t[2], reps);
    bench_stats fa = bench_stats_of(t[1], reps), fb = bench_stats_of(t[3], reps);
    fprintf(o->out, "update      one slice: p50 %.0f µs, p99 %.0f µs; one claim: p50 %.0f µs, p99 %.0f µs (%zu each, "
                    "as the watch applies an event)\n",
            a.p50, a.p99, b.p50, b.p99, reps);
    fprintf(o->out, "update      one slice: p50 %.0f µs, p99 %.0f µs; one claim: p50 %.0f µs, p99 %.0f µs (%zu each, "
                    "dra_store_apply_json: the value hashed whole)\n",
            fa.p50, fa.p99, fb.p50, fb.p99, reps);
    for (int i = 0; i < 4; i++) free(t[i]);
    return ok;
}

static void print_ingest(const bench_opts *o, fleet_shape s, const figures *fg) {
    double ms = 0, cpu = 0, mb = 0;
    for (int k = 0; k < 3; k++) ms += fg->ingest_ms[k], cpu += fg->ingest_cpu_ms[k], mb += fg->mb[k];
    fprintf(o->out, "fleet       %s: %zu nodes, %zu devices, %zu allocated claims holding %zu devices; %.1f %% of the %s held\n",
            fleet_shape_name(s), fg->nodes, fg->devices, fg->claims, fg->held,
            fg->units ? 100.0 * (double)fg->units_held / (double)fg->units : 0,
            s == FLEET_GPU8 ? "GPUs" : "memory slices");
    fprintf(o->out, "ingest      LIST pages of %d, %.0f MB of text: %.2f s wall, %.2f s CPU (Nodes %.2f s, slices %.2f s, "
                    "claims %.2f s)\n",
            PAGE_ITEMS, mb, ms / 1e3, cpu / 1e3, fg->ingest_ms[0] / 1e3, fg->ingest_ms[1] / 1e3, fg->ingest_ms[2] / 1e3);
    long dev_kib = fg->rss[1] - fg->rss0, claim_kib = fg->rss[2] - fg->rss[1];
    fprintf(o->out, "memory      RSS kept %.0f MiB: %.0f B a device (Nodes and slices), %.0f B an allocated claim; "
                    "peak %.0f MiB with every page's text resident",
            (double)(fg->rss[2] - fg->rss0) / 1024, per(dev_kib, fg->devices), per(claim_kib, fg->claims),
            (double)bench_status_kib("VmHWM:") / 1024);
    if (fg->ingest_peak >= 0)
        fprintf(o->out, ", %.0f MiB as a watch holds one page (the process's peak during the relists less the text)",
                (double)fg->ingest_peak / 1024);
    fputc('\n', o->out);
}

int bench_fleet_scale_main(const bench_opts *o, const char *shape) {
    fleet_shape s;
    if (!fleet_shape_parse(shape, &s)) {
        fprintf(stderr, "dralloc bench fleet: --shape %s: gpu8 or mig8\n", shape);
        return 2;
    }
    figures fg = {.nodes = o->devices ? o->devices : 20000};
    if (o->dump) return dump(o, s, fg.nodes);
    for (size_t j = 0; j < fg.nodes; j++) {
        size_t c, h, u;
        fleet_gen_fill(s, j, &c, &h, &u);
        fg.claims += c, fg.held += h, fg.units_held += u;
    }
    fg.devices = fg.nodes * fleet_gen_devices_per_node(s);
    fg.units = fg.nodes * (s == FLEET_GPU8 ? 8 : 64);
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    json_t *cls = json_array();
    fleet_gen_classes(s, collect, cls);
    err e;
    err_clear(&e);
    json_array_append_new(cls, fleet_gen_template(s));
    bool ok = dra_store_apply_json(st, cls, &e) != 0 && ingest(st, s, &fg);
    json_decref(cls);
    if (!ok) {
        dra_store_free(st);
        return 1;
    }
    print_ingest(o, s, &fg);
    dra_snapshot *snap = dra_store_acquire(st);
    uint64_t t0 = bench_now_ns();
    json_t *cap = dra_capacity_json(snap, NULL);
    fprintf(o->out, "capacity    dra_capacity_json: %.0f ms\n", (double)(bench_now_ns() - t0) / 1e6);
    json_decref(cap);
    filter_figures(snap, s, &fg, o);
    /* held with every freed page given back: the text's pages and the allocator's
     * timing out of it (until 2026-12-08 this line subtracted what freeing the text gave
     * back at once, and views built in pages the allocator still kept counted nothing) */
    fprintf(o->out, "memory      held, the allocator's freed pages given back: after the ingest %.0f MiB, %.0f B a device "
                    "(everything: Nodes, slices, claims); with every node's view built %.0f MiB, %.0f B a device\n",
            (double)fg.held_ingest / 1024, per(fg.held_ingest, fg.devices), (double)fg.held_views / 1024,
            per(fg.held_views, fg.devices));
    dra_snapshot_release(snap);
    ok = update_figures(st, s, &fg, o);
    dra_store_free(st);
    return ok ? 0 : 1;
}
