/* listpage_bench.c — `dralloc bench listpage`: a kube-apiserver LIST page as dralloc
 * serve's watch reads it (extender/watch.c, a list without WatchList). The page: 500
 * MIG-carved A100 ResourceSlices (--devices N: N), the shape `bench mig_5000nodes`
 * builds (a counters slice and three of 57 devices a node, ~30 KB of JSON each),
 * written once as the API server sends it (compact JSON). Read three ways, --reps
 * times each (default 5) after --warmup untimed:
 *   - json_loadb: jansson's own parser, the whole page (the watch before dra_json_parse);
 *   - dra_json_parse: the same tree, read by simdjson item by item;
 *   - dra_json_list: each item's tree parsed and freed in turn (the watch now, which
 *     decodes the items in batches of 64–256 as they come).
 * Printed: median, p90 and min ms, MB/s, the speed-up over json_loadb. (What each holds:
 * the page's tree, ~15 times its text, against one item's; the process's peak RSS does
 * not show it here, where the allocator keeps the memory the page's writing freed.) */
#include "bench/bench.h"
#include "bench/matrix_objects.h"

#include "engine/snapshot.h"

#include <stdlib.h>
#include <string.h>

typedef enum { WAY_JANSSON, WAY_PARSE, WAY_LIST, NWAYS } way;
static const char *const way_name[NWAYS] = {"json_loadb (the page's tree)", "dra_json_parse (the page's tree)",
                                            "dra_json_list (an item at a time)"};
static const char *const way_key[NWAYS] = {"json_loadb", "dra_json_parse", "dra_json_list"};

/* The page's text (the caller frees it): nslices slices of consecutive nodes. */
static char *page_text(size_t nslices, size_t *len) {
    json_t *items = json_array();
    for (int n = 0; json_array_size(items) < nslices; n++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05d", n);
        json_t *sl = bench_mx_mig_node_slices(node, n, 8), *it;
        size_t i;
        json_array_foreach(sl, i, it) if (json_array_size(items) < nslices) json_array_append(items, it);
        json_decref(sl);
    }
    json_t *page = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", "ResourceSliceList", "apiVersion", "resource.k8s.io/v1",
                             "metadata", "resourceVersion", "1", "items", items);
    char *t = json_dumps(page, JSON_COMPACT);
    json_decref(page);
    *len = t ? strlen(t) : 0;
    return t;
}

/* One reading of the page: how many items it gave (fewer: it failed). */
static size_t read_once(way w, const char *t, size_t len) {
    size_t n = 0;
    if (w == WAY_LIST) {
        json_t *env, *it;
        bool failed = false;
        dra_json_list *l = dra_json_list_open(t, len, &env);
        if (!l) return 0;
        while ((it = dra_json_list_next(l, NULL, &failed))) n++, json_decref(it);
        dra_json_list_close(l);
        json_decref(env);
        return failed ? 0 : n;
    }
    json_t *doc = w == WAY_JANSSON ? json_loadb(t, len, 0, NULL) : dra_json_parse(t, len, 0, NULL);
    n = json_array_size(json_object_get(doc, "items"));
    json_decref(doc);
    return n;
}

int bench_listpage_main(const bench_opts *o) {
    size_t nslices = o->devices ? o->devices : 500, reps = o->reps ? o->reps : 5, len;
    char *text = page_text(nslices, &len);
    if (!text) {
        fprintf(stderr, "bench listpage: the page could not be written\n");
        return 1;
    }
    fprintf(o->out, "listpage: a LIST page of %zu MIG-carved ResourceSlices, %.1f MB of JSON; median of %zu after %zu warm-up\n",
            nslices, (double)len / 1e6, reps, o->warmup);
    static const char *const hdr[] = {"reading", "median ms", "p90 ms", "min ms", "MB/s", "vs json_loadb"};
    bench_table *tb = bench_table_new(hdr, ARRAY_SIZE(hdr));
    json_t *results = json_array();
    double *ms = xcalloc(reps, sizeof *ms), base_median = 0;
    int rc = 0;
    for (way w = 0; w < NWAYS; w++) {
        for (size_t i = 0; i < o->warmup; i++) read_once(w, text, len);
        for (size_t i = 0; i < reps; i++) {
            uint64_t t0 = bench_now_ns();
            size_t got = read_once(w, text, len);
            ms[i] = (double)(bench_now_ns() - t0) / 1e6;
            if (got != nslices) {
                fprintf(stderr, "bench listpage: %s gave %zu items of %zu (MISMATCH)\n", way_key[w], got, nslices);
                rc = 1;
            }
        }
        bench_stats s = bench_stats_of(ms, reps);
        if (w == WAY_JANSSON) base_median = s.median;
        bench_table_addf(tb, "%s", way_name[w]);
        bench_table_addf(tb, "%.1f", s.median);
        bench_table_addf(tb, "%.1f", s.p90);
        bench_table_addf(tb, "%.1f", s.min);
        bench_table_addf(tb, "%.0f", (double)len / 1e3 / s.median);
        bench_table_addf(tb, "%.2fx", bench_ratio(base_median, s.median));
        json_array_append_new(results, json_pack("{s:s, s:f, s:f, s:f, s:f}", "reading", way_key[w], "medianMs", s.median,
                                                 "p90Ms", s.p90, "minMs", s.min, "speedup",
                                                 bench_ratio(base_median, s.median)));
    }
    bench_table_print(tb, o->out);
    bench_table_free(tb);
    if (o->json) {
        json_t *doc = json_pack("{s:s, s:I, s:I, s:o}", "workload", "listpage", "slices", (json_int_t)nslices, "bytes",
                                (json_int_t)len, "results", results);
        if (json_dump_file(doc, o->json, JSON_INDENT(1))) fprintf(stderr, "bench listpage: cannot write %s\n", o->json), rc = 1;
        json_decref(doc);
    } else {
        json_decref(results);
    }
    free(ms);
    free(text);
    return rc;
}
