/* report_html.c — the plan as one self-contained HTML page (report.h): inline CSS
 * and SVG only, no scripts, fonts or images from elsewhere, so the file can be
 * mailed, attached to a ticket or served as it is. Charts are horizontal bars
 * (allocated of allocatable devices), one per node and one per DeviceClass; beyond
 * HTML_MAX_BARS nodes only the most utilised are drawn (the table has them all). */
#include "report/report.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

#define HTML_MAX_BARS 200

static void esc(FILE *f, const char *s) {
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

static json_int_t jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

static double util(const json_t *row) {
    json_int_t d = jint(row, "devices");
    return d > 0 ? (double)jint(row, "allocated") / (double)d : 0.0;
}

static int cmp_util_desc(const void *a, const void *b) {
    double x = util(*(json_t *const *)a), y = util(*(json_t *const *)b);
    return (x < y) - (x > y);
}

static void bars(FILE *f, const char *title, const json_t *rows) {
    size_t n = json_array_size(rows);
    fprintf(f, "<h3>");
    esc(f, title);
    fprintf(f, "</h3>\n");
    if (!n) {
        fputs("<p class=\"dim\">none</p>\n", f);
        return;
    }
    const json_t **v = xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = json_array_get(rows, i);
    size_t shown = n;
    if (n > HTML_MAX_BARS) {
        qsort(v, n, sizeof *v, cmp_util_desc);
        shown = HTML_MAX_BARS;
        fprintf(f, "<p class=\"dim\">the %d most utilised of %zu</p>\n", HTML_MAX_BARS, n);
    }
    const int row_h = 18, label_w = 220, bar_w = 400;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" role=\"img\">\n",
            label_w + bar_w + 120, shown * (size_t)row_h + 4);
    for (size_t i = 0; i < shown; i++) {
        double u = util(v[i]);
        int y = (int)i * row_h + 2, w = (int)(u * bar_w + 0.5);
        const char *color = u >= 0.9 ? "#c0392b" : u >= 0.6 ? "#e67e22" : "#2e86c1";
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">", label_w - 6, y + 13);
        esc(f, json_string_value(json_object_get(v[i], "name")));
        fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eee\"/>", label_w, y, bar_w, row_h - 4);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", label_w, y, w, row_h - 4, color);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%lld/%lld (%.0f%%)</text>\n", label_w + bar_w + 6, y + 13,
                (long long)jint(v[i], "allocated"), (long long)jint(v[i], "devices"), u * 100);
    }
    fputs("</svg>\n", f);
    free(v);
}

static void plan_section(FILE *f, const json_t *plan) {
    const json_t *sum = json_object_get(plan, "summary");
    json_int_t d = jint(sum, "devices"), a = jint(sum, "allocated");
    fprintf(f, "<p><b>%lld</b> replicas: <b>%lld</b> placed, <b>%lld</b> unplaced on %lld nodes (%s); devices %lld/%lld "
               "allocated (%.0f%%)",
            (long long)jint(sum, "replicas"), (long long)jint(sum, "placed"), (long long)jint(sum, "unplaced"),
            (long long)jint(sum, "nodes"), json_string_value(json_object_get(sum, "score")), (long long)a, (long long)d,
            d ? 100.0 * (double)a / (double)d : 0.0);
    if (json_object_get(sum, "stranded")) fprintf(f, ", %lld stranded", (long long)jint(sum, "stranded"));
    fputs("</p>\n", f);
    const json_t *mn = json_object_get(plan, "minNodes");
    if (mn) {
        fputs("<p>min nodes: ", f);
        if (json_is_integer(json_object_get(mn, "count")))
            fprintf(f, "<b>%lld</b> more of shape ", (long long)jint(mn, "count"));
        else fprintf(f, "even %lld more are not enough of shape ", (long long)jint(mn, "max"));
        esc(f, json_string_value(json_object_get(mn, "shape")));
        fputs("</p>\n", f);
    }
    fputs("<h3>Workloads</h3>\n<table><tr><th>workload</th><th>replicas</th><th>placed</th><th>unplaced</th>"
          "<th>headroom</th><th>placements</th></tr>\n",
          f);
    size_t i, k;
    json_t *w, *p;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        fputs("<tr><td>", f);
        esc(f, json_string_value(json_object_get(w, "name")));
        if (json_is_true(json_object_get(w, "gang"))) fputs(" <span class=\"dim\">(gang)</span>", f);
        fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n%s\">%lld</td><td class=\"n\">",
                (long long)jint(w, "replicas"), (long long)jint(w, "placed"), jint(w, "unplaced") ? " bad" : "",
                (long long)jint(w, "unplaced"));
        if (json_object_get(w, "headroom"))
            fprintf(f, "%lld%s", (long long)jint(w, "headroom"), json_is_true(json_object_get(w, "headroomCapped")) ? "+" : "");
        fputs("</td><td>", f);
        json_array_foreach(json_object_get(w, "placements"), k, p) {
            if (k) fputs(", ", f);
            esc(f, json_string_value(json_object_get(p, "node")));
            fprintf(f, "&nbsp;&times;%lld", (long long)jint(p, "replicas"));
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    bool any = false;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        const char *r = json_string_value(json_object_get(w, "reason"));
        if (!r) continue;
        if (!any) fputs("<h3>Why replicas are unplaced</h3>\n<dl>\n", f);
        any = true;
        fputs("<dt>", f);
        esc(f, json_string_value(json_object_get(w, "name")));
        fputs("</dt><dd>", f);
        esc(f, r);
        fputs("</dd>\n", f);
    }
    if (any) fputs("</dl>\n", f);
    bars(f, "Utilisation per node", json_object_get(plan, "nodes"));
    bars(f, "Utilisation per DeviceClass", json_object_get(plan, "classes"));
}

void report_plan_html(FILE *f, const json_t *plan, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    esc(f, title);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}td.n{text-align:right}.bad{color:#c0392b;"
          "font-weight:bold}.dim{color:#888}dd{margin:0 0 1em 1em;font-family:monospace;white-space:pre-wrap}"
          "</style></head><body>\n<h1>",
          f);
    esc(f, title);
    fputs("</h1>\n", f);
    const json_t *sc = json_object_get(plan, "scenarios");
    if (!sc) {
        plan_section(f, plan);
    } else {
        size_t i;
        json_t *s;
        json_array_foreach(sc, i, s) {
            fprintf(f, "<h2>Scenario %lld: ", (long long)jint(s, "index"));
            esc(f, json_string_value(json_object_get(s, "file")));
            fputs("</h2>\n", f);
            if (json_object_get(s, "error")) {
                fputs("<p class=\"bad\">", f);
                esc(f, json_string_value(json_object_get(s, "error")));
                fputs("</p>\n", f);
            } else {
                plan_section(f, s);
            }
        }
    }
    fputs("</body></html>\n", f);
}

void report_status_html(FILE *f, const json_t *cap, const json_t *recent, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    esc(f, title);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}td.n{text-align:right}"
          ".bad{color:#c0392b}.dim{color:#888}.why{font-family:monospace;font-size:12px}</style></head><body>\n<h1>",
          f);
    esc(f, title);
    fputs("</h1>\n", f);
    json_int_t d = 0, a = 0;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(cap, "nodes"), i, row) d += jint(row, "devices"), a += jint(row, "allocated");
    fprintf(f, "<p>%zu nodes; devices %lld/%lld allocated (%.0f%%)</p>\n", json_array_size(json_object_get(cap, "nodes")),
            (long long)a, (long long)d, d ? 100.0 * (double)a / (double)d : 0.0);
    bars(f, "Devices in use per node", json_object_get(cap, "nodes"));
    bars(f, "Devices in use per DeviceClass", json_object_get(cap, "classes"));
    fputs("<h3>Recent filter decisions</h3>\n", f);
    if (!json_array_size(recent)) {
        fputs("<p class=\"dim\">none yet</p>\n", f);
    } else {
        fputs("<table><tr><th>time</th><th>pod</th><th>snapshot</th><th>fit</th><th>why not, per node</th></tr>\n", f);
        json_array_foreach(recent, i, row) {
            fputs("<tr><td>", f);
            esc(f, json_string_value(json_object_get(row, "time")));
            fputs("</td><td>", f);
            esc(f, json_string_value(json_object_get(row, "pod")));
            fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n%s\">%lld/%lld</td><td class=\"why\">",
                    (long long)jint(row, "generation"), jint(row, "fit") ? "" : " bad", (long long)jint(row, "fit"),
                    (long long)jint(row, "nodes"));
            const char *err = json_string_value(json_object_get(row, "error"));
            if (err) {
                fputs("<span class=\"bad\">", f);
                esc(f, err);
                fputs("</span><br>", f);
            }
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(row, "failed"), k, v) {
                esc(f, k);
                fputs(": ", f);
                esc(f, json_string_value(v));
                fputs("<br>", f);
            }
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("</body></html>\n", f);
}
