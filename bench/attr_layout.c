/* attr_layout.c — the `layout` workload: two attribute lookups timed over the CEL
 * benchmark's devices (cel_devices.h) with their attribute arrays laid out four
 * ways, to show what a selector at 100,000 devices waits for (bench/README.md, "E1
 * and 20×"). The lookups are plain C over `cel_device` views, as cel_floor.c's are:
 *   first — E1: driver id, then attribute `type` (the first of each GPU's array) == "gpu";
 *   deep  — driver id, then `driverVersion` (the eighth) >= 550.0.0, a scan of 8 keys.
 * Layouts, each holding the same attributes in the same order per device:
 *   packed      the arrays back to back in one region (bench_celdevs_views; the engine's
 *               contract in cel/cel.h)
 *   aligned     each array starting on a cache line
 *   inline      each view followed by its own array in one region
 *   interleaved per block of 128 devices, attribute i of device k at block + i×128 + k
 *               (the same attribute of every device of the block in one row)
 * Every layout must count the same matches as packed (else MISMATCH, exit 1). */
#include "bench/bench.h"
#include "bench/cel_devices.h"

#include <stdlib.h>
#include <string.h>

enum { LAYOUT_BLOCK = 128, LINE = 64 };

typedef struct layout {
    const char *name;
    const cel_device *const *views;   /* the order evaluated */
    const uint16_t *stride;           /* per device, distance between its attributes; NULL: 1 */
    size_t bytes;                     /* of the attribute arrays (and views, for inline) */
} layout;

typedef struct probe {
    const layout *l;
    size_t n;
    uint32_t gpu, type, driver_version;
    semver v550;
    bool deep;
    uint64_t matches;
} probe;

static inline const cel_attr *find(const cel_device *d, size_t stride, uint32_t dom, uint32_t name) {
    const cel_attr *a = d->attrs;
    for (uint32_t i = 0; i < d->nattrs; i++, a += stride)
        if (a->name == name && a->domain == dom) return a;
    return NULL;
}

static uint64_t probe_pass(void *arg) {
    probe *p = arg;
    uint64_t m = 0;
    for (size_t k = 0; k < p->n; k++) {
        const cel_device *d = p->l->views[k];
        if (d->driver_id != p->gpu) continue;
        size_t st = p->l->stride ? p->l->stride[k] : 1;
        if (!p->deep) {
            const cel_attr *a = find(d, st, p->gpu, p->type);
            m += a && a->kind == CEL_ATTR_STRING && a->u.s->len == 3 && !memcmp(a->u.s->s, "gpu", 3);
        } else {
            const cel_attr *a = find(d, st, p->gpu, p->driver_version);
            m += a && a->kind == CEL_ATTR_VERSION && semver_cmp(a->u.v, &p->v550) >= 0;
        }
    }
    p->matches = m;
    return p->n;
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

/* Copies of the packed views whose attrs point into `region` as each layout places them. */
static void make_layouts(const cel_device *views, size_t n, arena *a, layout out[4]) {
    size_t total = 0, max_attrs = 0;
    for (size_t k = 0; k < n; k++) {
        total += views[k].nattrs;
        if (views[k].nattrs > max_attrs) max_attrs = views[k].nattrs;
    }
    const cel_device **order[4];
    for (int l = 0; l < 4; l++) order[l] = ARENA_NEWN(a, const cel_device *, n ? n : 1);

    /* packed: the views as built */
    for (size_t k = 0; k < n; k++) order[0][k] = &views[k];
    out[0] = (layout){"packed", order[0], NULL, total * sizeof(cel_attr)};

    /* aligned */
    cel_device *v1 = ARENA_NEWN(a, cel_device, n ? n : 1);
    char *r1 = arena_alloc(a, n * LINE + total * sizeof(cel_attr) + LINE);
    char *at = (char *)round_up((uintptr_t)r1, LINE);
    for (size_t k = 0; k < n; k++) {
        v1[k] = views[k];
        memcpy(at, views[k].attrs, views[k].nattrs * sizeof(cel_attr));
        v1[k].attrs = (const cel_attr *)at;
        at += round_up(views[k].nattrs * sizeof(cel_attr), LINE);
        order[1][k] = &v1[k];
    }
    out[1] = (layout){"aligned", order[1], NULL, (size_t)(at - (char *)round_up((uintptr_t)r1, LINE))};

    /* inline: view, then its array */
    size_t rec_max = sizeof(cel_device) + max_attrs * sizeof(cel_attr);
    char *r2 = arena_alloc(a, n * round_up(rec_max, 8) + 8), *p2 = r2;
    for (size_t k = 0; k < n; k++) {
        cel_device *v = (cel_device *)p2;
        *v = views[k];
        cel_attr *arr = (cel_attr *)(p2 + sizeof(cel_device));
        memcpy(arr, views[k].attrs, views[k].nattrs * sizeof(cel_attr));
        v->attrs = arr;
        p2 += sizeof(cel_device) + views[k].nattrs * sizeof(cel_attr);
        order[2][k] = v;
    }
    out[2] = (layout){"inline", order[2], NULL, (size_t)(p2 - r2)};

    /* interleaved per block */
    cel_device *v3 = ARENA_NEWN(a, cel_device, n ? n : 1);
    uint16_t *stride = ARENA_NEWN(a, uint16_t, n ? n : 1);
    size_t bytes3 = 0;
    for (size_t b = 0; b < n; b += LAYOUT_BLOCK) {
        size_t cnt = n - b < LAYOUT_BLOCK ? n - b : LAYOUT_BLOCK, rows = 0;
        for (size_t k = b; k < b + cnt; k++)
            if (views[k].nattrs > rows) rows = views[k].nattrs;
        cel_attr *blk = ARENA_NEWN(a, cel_attr, rows * cnt + 1);
        bytes3 += rows * cnt * sizeof(cel_attr);
        for (size_t k = b; k < b + cnt; k++) {
            v3[k] = views[k];
            for (uint32_t i = 0; i < views[k].nattrs; i++) blk[i * cnt + (k - b)] = views[k].attrs[i];
            v3[k].attrs = &blk[k - b];
            stride[k] = (uint16_t)cnt;
            order[3][k] = &v3[k];
        }
    }
    out[3] = (layout){"interleaved", order[3], stride, bytes3};
}

int bench_layout_main(const bench_opts *o) {
    size_t n = o->devices ? o->devices : BENCH_CEL_DEFAULT_DEVICES;
    size_t reps = o->reps ? o->reps : BENCH_CEL_DEFAULT_REPS, warmup = o->warmup;
    FILE *out = o->out;
    bench_celdev *devs = bench_celdevs_make(n, BENCH_CEL_SEED);
    intern_table *names = intern_new();
    arena a;
    arena_init(&a, 1 << 20);
    err e = {0};
    int status = 0;
    cel_device *views = bench_celdevs_views(devs, n, names, &a, &e);
    if (!views) {
        fprintf(out, "dralloc bench layout: %s\n", e.msg);
        status = 1;
        goto done;
    }
    layout ls[4];
    make_layouts(views, n, &a, ls);
    probe p = {.n = n,
               .gpu = intern_cstr(names, BENCH_GPU_DRIVER),
               .type = intern_cstr(names, "type"),
               .driver_version = intern_cstr(names, "driverVersion")};
    if (!semver_parse("550.0.0", 7, &p.v550, &e)) abort();
    fprintf(out, "dralloc bench layout: N=%zu devices, %zu warm-up + %zu timed passes per layout and lookup; "
                 "ns per device (pass time / N)\n", n, warmup, reps);
    static const char *const head[] = {"layout", "MiB", "first: median", "min", "matches", "deep: median", "min",
                                       "matches", "check"};
    bench_table *t = bench_table_new(head, ARRAY_SIZE(head));
    uint64_t want[2] = {0, 0};
    for (int l = 0; l < 4; l++) {
        bench_stats st[2];
        uint64_t got[2];
        for (int deep = 0; deep < 2; deep++) {
            p.l = &ls[l];
            p.deep = deep;
            bench_run run;
            bench_run_passes(probe_pass, &p, warmup, reps, &run);
            st[deep] = run.stats;
            got[deep] = p.matches;
            if (l == 0) want[deep] = p.matches;
            bench_run_free(&run);
        }
        bool ok = got[0] == want[0] && got[1] == want[1];
        if (!ok) status = 1;
        bench_table_addf(t, "%s", ls[l].name);
        bench_table_addf(t, "%.1f", (double)ls[l].bytes / (1 << 20));
        for (int deep = 0; deep < 2; deep++) {
            bench_table_addf(t, "%.1f", st[deep].median);
            bench_table_addf(t, "%.1f", st[deep].min);
            bench_table_addf(t, "%llu", (unsigned long long)got[deep]);
        }
        bench_table_addf(t, "%s", ok ? "ok" : "MISMATCH");
    }
    bench_table_print(t, out);
    bench_table_free(t);
    fprintf(out, "first: E1 (driver, then the first attribute); deep: driver, then the eighth (a scan of 8 keys); "
                 "interleaved: blocks of %d devices\n", LAYOUT_BLOCK);
done:
    arena_free(&a);
    intern_free(names);
    free(devs);
    return status;
}
