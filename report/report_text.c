/* report_text.c — plan and capacity results as aligned tables, CSV or JSON
 * (report.h). The same row builders feed the table and the CSV, so both always
 * carry the same columns. */
#include "report/report.h"
#include "report/report_buy.h"
#include "report/report_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"

bool report_format_parse(const char *s, report_format *out) {
    static const char *const names[] = {"table", "json", "csv"};
    for (size_t i = 0; i < ARRAY_SIZE(names); i++)
        if (!strcmp(s, names[i])) return *out = (report_format)i, true;
    return false;
}

bool report_by_parse(const char *s, report_by *out) {
    static const char *const names[] = {"node", "pool", "class", "counter", "shape"};
    for (size_t i = 0; i < ARRAY_SIZE(names); i++)
        if (!strcmp(s, names[i])) return *out = (report_by)i, true;
    return false;
}

static json_int_t jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* Devices that are neither allocated nor allocatable now: counters used up, an
 * untolerated taint, their node unavailable, an incomplete pool or a feature gate off. */
static json_int_t blocked_of(const json_t *row) {
    const json_t *b = json_object_get(row, "blocked");
    return jint(b, "counters") + jint(b, "taints") + jint(b, "nodes") + jint(row, "unusable");
}

/* The row's "util": by capacity where it has shared counters (the counter family
 * that runs out first: a carved A100 is as used as its memory slices, not as its
 * allocated partition devices), else allocated / devices. */
static void util_cell(report_table *t, const json_t *row) {
    json_int_t d = jint(row, "devices"), a = jint(row, "allocated");
    const json_t *u = json_object_get(row, "util");
    if (json_is_number(u) && json_object_get(row, "capacityUtil"))
        report_table_cellf(t, "%.1f%%", json_number_value(u));
    else if (d > 0) report_table_cellf(t, "%.0f%%", 100.0 * (double)a / (double)d);
    else report_table_cell(t, "-");
}

/* The headroom, "1000+" when the search stopped at its bound. */
static void headroom_cell(report_table *t, const json_t *w) {
    const json_t *hr = json_object_get(w, "headroom");
    if (hr && json_is_true(json_object_get(w, "headroomCapped")))
        report_table_cellf(t, "%lld+", (long long)json_integer_value(hr));
    else report_table_cellj(t, hr);
}

/* "node-0:4 node-1:4 +3 more" — the table stays readable; JSON has them all. */
static void placements_cell(report_table *t, const json_t *pl) {
    char buf[512];
    size_t len = 0, i;
    json_t *p;
    buf[0] = '\0';
    json_array_foreach(pl, i, p) {
        if (i == 4) {
            snprintf(buf + len, sizeof buf - len, " +%zu more", json_array_size(pl) - 4);
            break;
        }
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s:%lld", i ? " " : "",
                                json_string_value(json_object_get(p, "node")), (long long)jint(p, "replicas"));
        if (len >= sizeof buf) break;
    }
    report_table_cell(t, buf);
}

static report_table *workloads_table(const json_t *plan) {
    static const char *const h[] = {"WORKLOAD", "REPLICAS", "PLACED", "UNPLACED", "HEADROOM", "PLACEMENTS"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        const char *name = json_string_value(json_object_get(w, "name"));
        if (json_is_true(json_object_get(w, "gang"))) report_table_cellf(t, "%s (gang)", name);
        else report_table_cell(t, name);
        report_table_cellj(t, json_object_get(w, "replicas"));
        report_table_cellj(t, json_object_get(w, "placed"));
        report_table_cellj(t, json_object_get(w, "unplaced"));
        headroom_cell(t, w);
        placements_cell(t, json_object_get(w, "placements"));
    }
    return t;
}

static void counts_cells(report_table *t, const json_t *row) {
    report_table_cellj(t, json_object_get(row, "devices"));
    report_table_cellj(t, json_object_get(row, "allocated"));
    report_table_cellj(t, json_object_get(row, "free"));
    report_table_cellf(t, "%lld", (long long)blocked_of(row));
    util_cell(t, row);
}

static report_table *nodes_table(const json_t *nodes, bool stranded) {
    static const char *const h[] = {"NODE", "DEVICES", "ALLOCATED", "FREE", "BLOCKED", "UTIL", "STRANDED"};
    report_table *t = report_table_new(stranded ? 7 : 6, h);
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        const char *why = json_string_value(json_object_get(n, "unavailable"));
        if (why) report_table_cellf(t, "%s (%s)", json_string_value(json_object_get(n, "name")), why);
        else report_table_cellj(t, json_object_get(n, "name"));
        counts_cells(t, n);
        if (stranded) report_table_cellj(t, json_object_get(n, "stranded"));
    }
    return t;
}

static report_table *classes_table(const json_t *classes) {
    static const char *const h[] = {"CLASS", "DEVICES", "ALLOCATED", "FREE", "BLOCKED", "UTIL"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    size_t i;
    json_t *c;
    json_array_foreach(classes, i, c) {
        report_table_cellj(t, json_object_get(c, "name"));
        counts_cells(t, c);
    }
    return t;
}

/* "1g-5gb 116/130/1680, 2g-10gb 44/50/720": per profile, how many can be carved now
 * together, how many are free one at a time (they need not coexist), and how many
 * the counter sets carve when empty. */
static void carve_cell(report_table *t, const json_t *carve) {
    char buf[1024];
    size_t len = 0, i;
    json_t *c;
    buf[0] = '\0';
    json_array_foreach(carve, i, c) {
        int w = snprintf(buf + len, sizeof buf - len, "%s%s %lld/%lld/%lld", i ? ", " : "",
                         json_string_value(json_object_get(c, "profile")), (long long)jint(c, "fit"),
                         (long long)jint(c, "free"), (long long)jint(c, "fitEmpty"));
        if (w < 0 || (size_t)w >= sizeof buf - len) break;
        len += (size_t)w;
    }
    report_table_cell(t, buf);
}

static report_table *shapes_table(const json_t *shapes) {
    static const char *const h[] = {"SHAPE", "NODES", "DEVICES", "ALLOCATED", "FREE", "BLOCKED", "UTIL", "CARVE (TOGETHER/ALONE/EMPTY)"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    size_t i;
    json_t *s;
    json_array_foreach(shapes, i, s) {
        report_table_cellj(t, json_object_get(s, "name"));
        report_table_cellj(t, json_object_get(s, "nodes"));
        counts_cells(t, s);
        carve_cell(t, json_object_get(s, "carve"));
    }
    return t;
}

static report_table *pools_table(const json_t *pools) {
    static const char *const h[] = {"DRIVER", "POOL", "NODE", "DEVICES", "ALLOCATED", "FREE", "BLOCKED", "UTIL"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    size_t i;
    json_t *p;
    json_array_foreach(pools, i, p) {
        report_table_cellj(t, json_object_get(p, "driver"));
        report_table_cellj(t, json_object_get(p, "pool"));
        report_table_cellj(t, json_object_get(p, "node"));
        counts_cells(t, p);
    }
    return t;
}

static report_table *counters_table(const json_t *counters) {
    static const char *const h[] = {"DRIVER", "POOL", "COUNTERSET", "COUNTER", "CAPACITY", "ALLOCATED", "FREE"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    size_t i;
    json_t *c;
    json_array_foreach(counters, i, c) {
        static const char *const k[] = {"driver", "pool", "counterSet", "counter", "capacity", "allocated", "free"};
        for (size_t j = 0; j < ARRAY_SIZE(k); j++) report_table_cellj(t, json_object_get(c, k[j]));
    }
    return t;
}

/* jansson's dumper writes a token at a time: gathered here into blocks, so the stream
 * sees one fwrite per 64 KiB rather than one per token (a third of a 10,000-node plan's
 * output time went to fwrite's locking and bookkeeping). */
typedef struct json_block {
    FILE *f;
    size_t n;
    char buf[1 << 16];
} json_block;

static int json_block_add(const char *s, size_t n, void *arg) {
    json_block *b = arg;
    if (b->n + n > sizeof b->buf) {
        if (b->n && fwrite(b->buf, 1, b->n, b->f) != b->n) return -1;
        b->n = 0;
        if (n > sizeof b->buf) return fwrite(s, 1, n, b->f) == n ? 0 : -1;
    }
    memcpy(b->buf + b->n, s, n);
    b->n += n;
    return 0;
}

static void print_json(FILE *f, const json_t *v) {
    /* "schemaVersion" first (REPORT_SCHEMA_VERSION): a shallow copy of the top level,
     * the values shared */
    json_t *top = json_pack("{s:i}", "schemaVersion", REPORT_SCHEMA_VERSION);
    if (json_is_object(v)) json_object_update(top, (json_t *)v);
    /* streamed: a fleet's plan is tens of megabytes, not worth a copy in memory */
    json_block *b = xmalloc(sizeof *b);
    b->f = f;
    b->n = 0;
    json_dump_callback(json_is_object(v) ? top : v, json_block_add, b, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(top);
    if (b->n) fwrite(b->buf, 1, b->n, f);
    free(b);
    fputc('\n', f);
}

static void plan_text(FILE *f, const json_t *plan) {
    const json_t *sum = json_object_get(plan, "summary");
    report_buy_text(f, plan);   /* what to buy, on the first screen */
    report_table *t = workloads_table(plan);
    report_table_print(t, f);
    report_table_free(t);
    size_t i;
    json_t *w;
    bool any = false;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        const char *r = json_string_value(json_object_get(w, "reason"));
        if (!r) continue;
        if (!any) fputs("\nunplaced:\n", f);
        any = true;
        fprintf(f, "  %s: %s\n", json_string_value(json_object_get(w, "name")), r);
    }
    bool stranded = json_object_get(sum, "stranded") != NULL;
    fputc('\n', f);
    t = nodes_table(json_object_get(plan, "nodes"), stranded);
    report_table_print(t, f);
    report_table_free(t);
    if (json_array_size(json_object_get(plan, "classes"))) {
        fputc('\n', f);
        t = classes_table(json_object_get(plan, "classes"));
        report_table_print(t, f);
        report_table_free(t);
    }
    json_int_t d = jint(sum, "devices"), a = jint(sum, "allocated");
    fprintf(f, "\n%lld replicas: %lld placed, %lld unplaced on %lld nodes (%s); devices %lld/%lld allocated (%.0f%%), "
               "%lld allocatable now, %lld blocked",
            (long long)jint(sum, "replicas"), (long long)jint(sum, "placed"), (long long)jint(sum, "unplaced"),
            (long long)jint(sum, "nodes"), json_string_value(json_object_get(sum, "score")), (long long)a, (long long)d,
            d ? 100.0 * (double)a / (double)d : 0.0, (long long)jint(sum, "free"), (long long)blocked_of(sum));
    if (stranded) fprintf(f, ", %lld stranded", (long long)jint(sum, "stranded"));
    fputc('\n', f);
}

static void plan_csv(FILE *f, const json_t *plan, bool header, const char *scenario, int part) {
    report_table *t = NULL;
    const char *pre_h = scenario ? "scenario" : NULL;
    switch (part) {
    case 0: {
        static const char *const h[] = {"WORKLOAD", "GANG", "REPLICAS", "PLACED", "UNPLACED", "HEADROOM", "REASON"};
        t = report_table_new(ARRAY_SIZE(h), h);
        size_t i;
        json_t *w;
        json_array_foreach(json_object_get(plan, "workloads"), i, w) {
            report_table_cellj(t, json_object_get(w, "name"));
            report_table_cell(t, json_is_true(json_object_get(w, "gang")) ? "true" : "false");
            report_table_cellj(t, json_object_get(w, "replicas"));
            report_table_cellj(t, json_object_get(w, "placed"));
            report_table_cellj(t, json_object_get(w, "unplaced"));
            headroom_cell(t, w);
            report_table_cellj(t, json_object_get(w, "reason"));
        }
        break;
    }
    case 1: {
        static const char *const h[] = {"WORKLOAD", "NODE", "REPLICAS"};
        t = report_table_new(ARRAY_SIZE(h), h);
        size_t i, k;
        json_t *w, *p;
        json_array_foreach(json_object_get(plan, "workloads"), i, w) json_array_foreach(json_object_get(w, "placements"), k, p) {
            report_table_cellj(t, json_object_get(w, "name"));
            report_table_cellj(t, json_object_get(p, "node"));
            report_table_cellj(t, json_object_get(p, "replicas"));
        }
        break;
    }
    case 2: t = nodes_table(json_object_get(plan, "nodes"), true); break;
    default: t = classes_table(json_object_get(plan, "classes")); break;
    }
    report_table_csv(t, f, header, pre_h, scenario);
    report_table_free(t);
}

void report_why_all(FILE *f, const json_t *pods) {
    static const char *const h[] = {"NAMESPACE", "POD", "FITS", "WHY"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    size_t i;
    json_t *o;
    json_array_foreach(pods, i, o) {
        const char *id = json_string_value(json_object_get(o, "pod"));
        const char *sl = id ? strchr(id, '/') : NULL;
        report_table_cellf(t, "%.*s", (int)(sl ? sl - id : 0), id ? id : "");
        report_table_cell(t, sl ? sl + 1 : id ? id : "");
        report_table_cellf(t, "%lld/%lld", (long long)jint(o, "fit"), (long long)jint(o, "nodes"));
        const char *err = json_string_value(json_object_get(o, "error"));
        report_table_cell(t, err ? err : jint(o, "fit") ? "fits" : json_string_value(json_object_get(o, "summary")));
    }
    report_table_print(t, f);
    report_table_free(t);
}

static void plan_csv_part(FILE *f, const json_t *plan, int part) {
    const json_t *sc = json_object_get(plan, "scenarios");
    if (!sc) {
        plan_csv(f, plan, true, NULL, part);
        return;
    }
    size_t i;
    json_t *s;
    json_array_foreach(sc, i, s) plan_csv(f, s, i == 0, json_string_value(json_object_get(s, "file")), part);
}

bool report_plan_csv_dir(const json_t *plan, const char *dir, char *errbuf, size_t n) {
    static const char *const names[] = {"workloads.csv", "placements.csv", "nodes.csv", "classes.csv"};
    if (mkdir(dir, 0777) && errno != EEXIST) {
        snprintf(errbuf, n, "%s: %s", dir, strerror(errno));
        return false;
    }
    for (int part = 0; part < 4; part++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[part]);
        FILE *f = fopen(path, "w");
        if (!f) {
            snprintf(errbuf, n, "%s: %s", path, strerror(errno));
            return false;
        }
        plan_csv_part(f, plan, part);
        if (fclose(f)) {
            snprintf(errbuf, n, "%s: write failed", path);
            return false;
        }
    }
    return true;
}

void report_plan(FILE *f, const json_t *plan, report_format fmt) {
    const json_t *sc = json_object_get(plan, "scenarios");
    if (fmt == REPORT_JSON) {
        print_json(f, plan);
        return;
    }
    if (fmt == REPORT_CSV) {
        /* tables: workloads, placements, nodes, classes, a blank line apart; scenarios
         * stacked within each (--csv-dir writes one file each) */
        for (int part = 0; part < 4; part++) {
            if (part) fputc('\n', f);
            plan_csv_part(f, plan, part);
        }
        return;
    }
    if (!sc) {
        plan_text(f, plan);
        return;
    }
    size_t i;
    json_t *s;
    json_array_foreach(sc, i, s) {
        fprintf(f, "%s== scenario %lld: %s ==\n", i ? "\n" : "", (long long)jint(s, "index"),
                json_string_value(json_object_get(s, "file")));
        if (json_object_get(s, "error")) fprintf(f, "error: %s\n", json_string_value(json_object_get(s, "error")));
        else plan_text(f, s);
    }
}

void report_capacity(FILE *f, const json_t *cap, report_by by, report_format fmt) {
    if (fmt == REPORT_JSON) {
        print_json(f, cap);
        return;
    }
    report_table *t;
    switch (by) {
    case REPORT_BY_POOL: t = pools_table(json_object_get(cap, "pools")); break;
    case REPORT_BY_CLASS: t = classes_table(json_object_get(cap, "classes")); break;
    case REPORT_BY_COUNTER: t = counters_table(json_object_get(cap, "counters")); break;
    case REPORT_BY_SHAPE: t = shapes_table(json_object_get(cap, "shapes")); break;
    default: t = nodes_table(json_object_get(cap, "nodes"), false); break;
    }
    if (fmt == REPORT_CSV) report_table_csv(t, f, true, NULL, NULL);
    else report_table_print(t, f);
    report_table_free(t);
}
