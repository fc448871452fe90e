/* relist_bench.c — `dralloc bench relist`: a MIG-carved fleet's ResourceSlices read into
 * a fresh store the way dralloc serve's watch reads them at start-up, from the API
 * server's LIST pages as text. `bench mig_5000nodes` gives the store the same slices as
 * jansson trees built in memory beforehand; no user's dralloc receives them so — the
 * service reads JSON text — so this is the start-up that figure stands for.
 *
 * The fleet: --devices N nodes (default 5,000, mig_5000nodes' own), each a counters slice
 * and three slices of 57 MIG devices (bench_mx_mig_node_slices), written as pages of 500
 * items (client-go's pager asks for 500 a page), compact JSON as the API server sends
 * it, before any timing. Each of --reps passes (default 3, after --warmup) reads them
 * into a new store: each page's items parsed one at a time (dra_json_list), given to
 * the relist in batches (dra_relist_batch_full), the relist committed — what
 * extender/watch.c's list_page does. Printed: the medians of the pass's wall time, of
 * its reading part (the items' trees, on the calling thread) and store part (decoding on
 * two threads, freeing the trees, the commit), the process's CPU time (every thread),
 * MB/s of text; RSS kept by the store and the peak over the pass, above the RSS before
 * it (the pages' text is not counted). Exit status 1 when a pass does not end with every
 * slice in the snapshot (MISMATCH). */
#include "bench/bench.h"
#include "bench/matrix_objects.h"

#include "engine/snapshot.h"

#include <stdlib.h>
#include <string.h>

enum { PAGE_ITEMS = 500 };

typedef struct pages {
    char **text;
    size_t *len, n, bytes, slices;
} pages;

/* The fleet of nodes as LIST pages; false when one could not be written. */
static bool pages_write(size_t nodes, pages *p) {
    memset(p, 0, sizeof *p);
    json_t *items = json_array();
    for (size_t n = 0; n < nodes; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05zu", n);
        json_t *sl = bench_mx_mig_node_slices(node, (int)n, 8);
        p->slices += json_array_size(sl);
        json_array_extend(items, sl);
        json_decref(sl);
        if (json_array_size(items) < PAGE_ITEMS && n + 1 < nodes) continue;
        json_t *page = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", "ResourceSliceList", "apiVersion",
                                 "resource.k8s.io/v1", "metadata", "resourceVersion", "1", "items", items);
        char *t = json_dumps(page, JSON_COMPACT);
        json_decref(page);
        if (!t) return false;
        p->text = xrealloc(p->text, (p->n + 1) * sizeof *p->text);
        p->len = xrealloc(p->len, (p->n + 1) * sizeof *p->len);
        p->text[p->n] = t;
        p->len[p->n] = strlen(t);
        p->bytes += p->len[p->n++];
        items = json_array();
    }
    json_decref(items);
    return true;
}

static void pages_free(pages *p) {
    for (size_t i = 0; i < p->n; i++) free(p->text[i]);
    free(p->text);
    free(p->len);
}

typedef struct pass {
    double wall_ms, read_ms, store_ms, cpu_ms;
    long kept_kib, peak_kib;
    size_t slices;
} pass;

static void skipped(void *arg, const dra_change *c, const err *why) {
    (void)c, (void)why;
    (*(size_t *)arg)++;
}

/* The batch given to the relist, its trees freed; the time it took added to *ms. */
static void put(dra_relist *rl, json_t **batch, size_t n, size_t *refused, double *ms) {
    uint64_t t0 = bench_now_ns();
    dra_relist_put(rl, (const json_t *const *)batch, n, skipped, refused);
    for (size_t i = 0; i < n; i++) json_decref(batch[i]);
    *ms += (double)(bench_now_ns() - t0) / 1e6;
}

/* One pass into a new store; false when a page or the commit failed. */
static bool one_pass(const pages *p, pass *r) {
    memset(r, 0, sizeof *r);
    long rss0 = bench_status_kib("VmRSS:");
    bench_reset_peak_rss();
    dra_features f;
    dra_features_default(&f);
    dra_store *st = dra_store_new(&f);
    size_t refused = 0;
    bool ok = true;
    uint64_t t0 = bench_now_ns(), c0 = bench_proc_cpu_ns();
    dra_relist *rl = dra_store_relist_begin(st, "ResourceSlice");
    json_t *batch[DRA_RELIST_BATCH_MAX];
    for (size_t pg = 0; ok && pg < p->n; pg++) {
        json_t *env = NULL, *t;
        dra_json_list *l = dra_json_list_open(p->text[pg], p->len[pg], &env);
        ok = l != NULL;
        size_t n = 0, bytes = 0, len;
        bool failed = false;
        for (;;) {
            uint64_t r0 = bench_now_ns();
            t = l ? dra_json_list_next(l, &len, &failed) : NULL;
            r->read_ms += (double)(bench_now_ns() - r0) / 1e6;
            if (!t) break;
            batch[n++] = t;
            bytes += len;
            if (dra_relist_batch_full(n, bytes)) put(rl, batch, n, &refused, &r->store_ms), n = 0, bytes = 0;
        }
        if (n) put(rl, batch, n, &refused, &r->store_ms);
        ok = ok && !failed;
        dra_json_list_close(l);
        json_decref(env);
    }
    err e;
    err_clear(&e);
    uint64_t s0 = bench_now_ns();
    if (ok) ok = dra_relist_commit(rl, &e);
    else dra_relist_abort(rl);
    r->store_ms += (double)(bench_now_ns() - s0) / 1e6;
    r->wall_ms = (double)(bench_now_ns() - t0) / 1e6;
    r->cpu_ms = (double)(bench_proc_cpu_ns() - c0) / 1e6;
    r->kept_kib = bench_status_kib("VmRSS:") - rss0;
    r->peak_kib = bench_status_kib("VmHWM:") - rss0;
    dra_snapshot *s = dra_store_acquire(st);
    r->slices = s ? dra_snapshot_count(s, "ResourceSlice") : 0;
    dra_snapshot_release(s);
    if (refused) fprintf(stderr, "bench relist: %zu slices refused\n", refused);
    if (!ok && e.msg[0]) {
        char buf[1024];
        fprintf(stderr, "bench relist: %s\n", err_format(&e, buf, sizeof buf));
    }
    dra_store_free(st);
    return ok;
}

static double median_of(const pass *ps, size_t n, size_t off) {
    double *v = xcalloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = *(const double *)((const char *)&ps[i] + off);
    double m = bench_stats_of(v, n).median;
    free(v);
    return m;
}

int bench_relist_main(const bench_opts *o) {
    size_t nodes = o->devices ? o->devices : 5000, reps = o->reps ? o->reps : 3;
    pages p;
    if (!pages_write(nodes, &p)) {
        fprintf(stderr, "bench relist: the pages could not be written\n");
        pages_free(&p);
        return 1;
    }
    fprintf(o->out,
            "relist: the %zu ResourceSlices of %zu MIG-carved node%s as %zu LIST page%s, %.1f MB of JSON, into a new "
            "store as the watch reads them; median of %zu after %zu warm-up\n",
            p.slices, nodes, nodes == 1 ? "" : "s", p.n, p.n == 1 ? "" : "s", (double)p.bytes / 1e6, reps, o->warmup);
    int rc = 0;
    pass *ps = xcalloc(reps, sizeof *ps), w;
    for (size_t i = 0; i < o->warmup + reps; i++) {
        pass *r = i < o->warmup ? &w : &ps[i - o->warmup];
        if (!one_pass(&p, r) || r->slices != p.slices) {
            fprintf(stderr, "bench relist: the snapshot holds %zu slices of %zu (MISMATCH)\n", r->slices, p.slices);
            rc = 1;
        }
    }
    long kept = 0, peak = 0;
    for (size_t i = 0; i < reps; i++) {
        if (ps[i].kept_kib > kept) kept = ps[i].kept_kib;
        if (ps[i].peak_kib > peak) peak = ps[i].peak_kib;
    }
    double wall = median_of(ps, reps, offsetof(pass, wall_ms)), rd = median_of(ps, reps, offsetof(pass, read_ms)),
           sto = median_of(ps, reps, offsetof(pass, store_ms)), cpu = median_of(ps, reps, offsetof(pass, cpu_ms));
    static const char *const hdr[] = {"wall ms", "reading ms", "store ms", "CPU ms", "MB/s", "RSS kept MiB", "peak MiB"};
    bench_table *tb = bench_table_new(hdr, ARRAY_SIZE(hdr));
    bench_table_addf(tb, "%.0f", wall);
    bench_table_addf(tb, "%.0f", rd);
    bench_table_addf(tb, "%.0f", sto);
    bench_table_addf(tb, "%.0f", cpu);
    bench_table_addf(tb, "%.0f", (double)p.bytes / 1e3 / wall);
    bench_table_addf(tb, "%ld", kept / 1024);
    bench_table_addf(tb, "%ld", peak / 1024);
    bench_table_print(tb, o->out);
    bench_table_free(tb);
    if (o->json) {
        json_t *runs = json_array();
        for (size_t i = 0; i < reps; i++)
            json_array_append_new(runs, json_pack("{s:f, s:f, s:f, s:f}", "wallMs", ps[i].wall_ms, "readingMs",
                                                  ps[i].read_ms, "storeMs", ps[i].store_ms, "cpuMs", ps[i].cpu_ms));
        json_t *doc = json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:I, s:I, s:o}", "workload", "relist",
                                "nodes", (json_int_t)nodes, "slices", (json_int_t)p.slices, "pages", (json_int_t)p.n,
                                "bytes", (json_int_t)p.bytes, "wallMs", wall, "readingMs", rd, "storeMs", sto, "cpuMs",
                                cpu, "rssKeptBytes", (json_int_t)kept * 1024, "peakRssBytes", (json_int_t)peak * 1024,
                                "runs", runs);
        if (json_dump_file(doc, o->json, JSON_INDENT(1))) fprintf(stderr, "bench relist: cannot write %s\n", o->json), rc = 1;
        json_decref(doc);
    }
    free(ps);
    pages_free(&p);
    return rc;
}
