/* report_fleet.c — the fleet views of a capacity object (report_html.h), sized for
 * 10,000 nodes: tables per DeviceClass and per node shape, and a heatmap with one small
 * cell per node instead of a bar per node. Cells are grouped by node shape, then by
 * DeviceClass, in node name order; a cell's colour is the share of the node's devices
 * of that class that a request could not take now (allocated, or blocked by counters
 * or taints), in eleven steps; its tooltip (<title>) names the node and the counts. */
#include "report/report_html.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

void report_esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Eleven steps from free (pale) to not allocatable (dark red), shared by the cells,
 * the legend and the bars. */
static const char *const STEP[11] = {"#e8f4ea", "#cfe8d3", "#b4dbb9", "#dfe7a6", "#efe08a", "#f3c969",
                                     "#f0a650", "#e8833f", "#d9612f", "#c14126", "#9e2a1c"};

void report_page_open(FILE *f, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    report_esc(f, title);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:1.2em 2em;color:#222;max-width:1200px}"
          "table{border-collapse:collapse;margin:.3em 0 1em}td,th{border:1px solid #ccc;padding:2px 7px;text-align:left;"
          "vertical-align:top;font-size:13px}td.n{text-align:right}.bad{color:#b03020;font-weight:bold}.ok{color:#2a7a3a}"
          ".dim{color:#777}.why{font-family:monospace;font-size:12px;white-space:pre-wrap}h1{margin:.2em 0}"
          "h2{margin:1em 0 .3em;font-size:19px}h3{margin:.8em 0 .2em;font-size:15px}"
          ".sum{font-size:15px;background:#f5f5f5;border:1px solid #ddd;padding:.5em .8em;margin:.4em 0}"
          ".tag{background:#b03020;color:#fff;border-radius:3px;padding:0 4px;font-size:11px}"
          "svg text{font-family:sans-serif}details{margin:.3em 0}",
          f);
    for (int i = 0; i < 11; i++) fprintf(f, ".u%d{fill:%s}", i, STEP[i]);
    fputs(".un{fill:#ddd}</style></head><body>\n<h1>", f);
    report_esc(f, title);
    fputs("</h1>\n", f);
}

void report_page_close(FILE *f) { fputs("</body></html>\n", f); }

static json_int_t jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }
static json_int_t blocked(const json_t *r, const char *k) { return jint(json_object_get(r, "blocked"), k); }

/* A 200-px stacked bar: allocated, blocked, allocatable now, of devices. */
static void stack_bar(FILE *f, const json_t *r) {
    json_int_t d = jint(r, "devices");
    if (d <= 0) return;
    int a = (int)(200 * jint(r, "allocated") / d),
        b = (int)(200 * (blocked(r, "counters") + blocked(r, "taints") + blocked(r, "nodes") + jint(r, "unusable")) / d);
    fprintf(f, "<svg width=\"202\" height=\"12\" role=\"img\"><rect x=\"1\" y=\"1\" width=\"200\" height=\"10\" fill=\"%s\"/>"
               "<rect x=\"1\" y=\"1\" width=\"%d\" height=\"10\" fill=\"%s\"/><rect x=\"%d\" y=\"1\" width=\"%d\" height=\"10\" "
               "fill=\"%s\"/></svg>",
            STEP[0], a, STEP[10], 1 + a, b, STEP[6]);
}

static void counts_cells(FILE *f, const json_t *r) {
    fprintf(f, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\"><b>%lld</b></td><td class=\"n\">%lld</td>"
               "<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td>",
            (long long)jint(r, "devices"), (long long)jint(r, "allocated"), (long long)jint(r, "free"),
            (long long)blocked(r, "counters"), (long long)blocked(r, "taints"), (long long)blocked(r, "nodes"));
    stack_bar(f, r);
    fputs("</td>", f);
}

static const char *COUNT_HEAD = "<th>devices</th><th>allocated</th><th>allocatable now</th><th>blocked: counters</th>"
                                "<th>blocked: taints</th><th>blocked: node unavailable</th><th>allocated <span style=\"color:#9e2a1c\">&#9632;</span> "
                                "blocked <span style=\"color:#f0a650\">&#9632;</span> free <span style=\"color:#b4dbb9\">"
                                "&#9632;</span></th>";

void report_class_table(FILE *f, const json_t *classes) {
    if (!json_array_size(classes)) return;
    fprintf(f, "<table><tr><th>DeviceClass</th>%s</tr>\n", COUNT_HEAD);
    size_t i;
    json_t *c;
    json_array_foreach(classes, i, c) {
        fputs("<tr><td>", f);
        report_esc(f, json_string_value(json_object_get(c, "name")));
        fputs("</td>", f);
        counts_cells(f, c);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

void report_shape_table(FILE *f, const json_t *shapes) {
    if (!json_array_size(shapes)) return;
    fprintf(f, "<table><tr><th>node shape</th><th>nodes</th>%s<th>counter sets can still carve (fit now / when empty)</th>"
               "</tr>\n",
            COUNT_HEAD);
    size_t i, k;
    json_t *s, *c;
    json_array_foreach(shapes, i, s) {
        fputs("<tr><td>", f);
        report_esc(f, json_string_value(json_object_get(s, "name")));
        fprintf(f, "</td><td class=\"n\">%lld</td>", (long long)jint(s, "nodes"));
        counts_cells(f, s);
        fputs("<td>", f);
        json_array_foreach(json_object_get(s, "carve"), k, c) {
            if (k) fputs("<br>", f);
            report_esc(f, json_string_value(json_object_get(c, "profile")));
            json_int_t fit = jint(c, "fit"), empty = jint(c, "fitEmpty");
            fprintf(f, ": <b>%lld</b> / %lld", (long long)fit, (long long)empty);
            if (jint(c, "counterSets") > 1) fprintf(f, " <span class=\"dim\">(%lld sets)</span>", (long long)jint(c, "counterSets"));
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* ---- heatmap -------------------------------------------------------------------------------- */

enum { CELL = 7, GAP = 1, PER_ROW = 140 };

static const json_t *class_of(const json_t *node, const char *cls) {
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(node, "classes"), i, c) if (!strcmp(json_string_value(json_object_get(c, "name")), cls)) return c;
    return NULL;
}

/* One strip: the nodes idx[0..n) of a shape, for one class (NULL: all their devices). */
static void strip(FILE *f, const json_t *nodes, const size_t *idx, size_t n, const char *cls) {
    size_t rows = (n + PER_ROW - 1) / PER_ROW;
    json_int_t dev = 0, alloc = 0, fr = 0, bl = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *nd = json_array_get(nodes, idx[i]);
        const json_t *r = cls ? class_of(nd, cls) : nd;
        dev += jint(r, "devices"), alloc += jint(r, "allocated"), fr += jint(r, "free");
        bl += blocked(r, "counters") + blocked(r, "taints") + blocked(r, "nodes") + jint(r, "unusable");
    }
    fputs("<div class=\"dim\" style=\"font-size:12px\">", f);
    report_esc(f, cls ? cls : "devices");
    fprintf(f, ": %lld devices, %lld allocated, <b>%lld allocatable now</b>, %lld blocked</div>\n", (long long)dev,
            (long long)alloc, (long long)fr, (long long)bl);
    fprintf(f, "<svg width=\"%d\" height=\"%zu\" role=\"img\">", PER_ROW * (CELL + GAP), rows * (CELL + GAP));
    for (size_t i = 0; i < n; i++) {
        const json_t *nd = json_array_get(nodes, idx[i]);
        const json_t *r = cls ? class_of(nd, cls) : nd;
        json_int_t d = jint(r, "devices");
        int step = d > 0 ? (int)((10 * (d - jint(r, "free")) + d / 2) / d) : -1;
        char cl[16];
        if (step < 0) snprintf(cl, sizeof cl, "un");
        else snprintf(cl, sizeof cl, "u%d", step);
        fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" class=\"%s\"><title>", (i % PER_ROW) * (CELL + GAP),
                (i / PER_ROW) * (CELL + GAP), CELL, CELL, cl);
        report_esc(f, json_string_value(json_object_get(nd, "name")));
        fprintf(f, ": %lld/%lld allocated, %lld free", (long long)jint(r, "allocated"), (long long)d, (long long)jint(r, "free"));
        json_int_t b = blocked(r, "counters") + blocked(r, "taints") + blocked(r, "nodes");
        if (b) fprintf(f, ", %lld blocked", (long long)b);
        const char *why = json_string_value(json_object_get(nd, "unavailable"));
        if (why) {
            fputs(" (", f);
            report_esc(f, why);
            fputc(')', f);
        }
        if (json_object_get(nd, "stranded") && jint(nd, "stranded")) fprintf(f, ", %lld stranded", (long long)jint(nd, "stranded"));
        fputs("</title></rect>", f);
    }
    fputs("</svg>\n", f);
}

static void legend(FILE *f) {
    fputs("<svg width=\"560\" height=\"22\" role=\"img\">", f);
    for (int i = 0; i < 11; i++) fprintf(f, "<rect x=\"%d\" y=\"2\" width=\"14\" height=\"12\" class=\"u%d\"/>", 120 + i * 16, i);
    fputs("<text x=\"0\" y=\"12\" font-size=\"11\">all allocatable now</text><text x=\"300\" y=\"12\" font-size=\"11\">none "
          "allocatable now (allocated or blocked)</text></svg>\n",
          f);
}

void report_heatmap(FILE *f, const json_t *cap) {
    const json_t *nodes = json_object_get(cap, "nodes"), *shapes = json_object_get(cap, "shapes");
    size_t nn = json_array_size(nodes);
    if (!nn) return;
    fprintf(f, "<p class=\"dim\">One cell per node (%zu), grouped by node shape and DeviceClass; hover a cell for the node. "
               "Colour: the share of the node's devices of the class that a request could not take now.</p>\n",
            nn);
    legend(f);
    size_t *idx = xmalloc(nn * sizeof *idx);
    size_t i;
    json_t *s;
    json_array_foreach(shapes, i, s) {
        const char *sn = json_string_value(json_object_get(s, "name"));
        size_t n = 0;
        for (size_t k = 0; k < nn; k++) {
            const char *ns = json_string_value(json_object_get(json_array_get(nodes, k), "shape"));
            if (ns && sn && !strcmp(ns, sn)) idx[n++] = k;
        }
        fputs("<h3>", f);
        report_esc(f, sn);
        fprintf(f, " <span class=\"dim\">(%zu nodes)</span></h3>\n", n);
        const json_t *cls = json_object_get(s, "classes");
        if (!json_array_size(cls)) {
            fputs("<p class=\"dim\">no devices</p>\n", f);
            continue;
        }
        size_t c;
        json_t *cl;
        json_array_foreach(cls, c, cl) strip(f, nodes, idx, n, json_string_value(json_object_get(cl, "name")));
    }
    free(idx);
}
