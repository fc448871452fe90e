/* report_html.c — the plan as one self-contained HTML page (report.h), and serve's
 * status page: inline CSS and SVG only, no scripts, fonts or images from elsewhere, so
 * the file can be mailed, attached to a ticket or served as it is.
 *
 * The first screen answers a capacity planner: what fits and what does not (a row per
 * workload, the cause count of the unplaced), how much is allocatable now per
 * DeviceClass and per node shape (with what counter sets can still carve). Below: why,
 * with the closest nodes' own explanations; the heatmap (report_fleet.c: one cell per
 * node, grouped by shape); the placements, the busiest nodes first. A scenario set
 * opens with the scenarios side by side. Sized for 10,000 nodes: nothing is listed per
 * node except the heatmap's cells. */
#include "report/report.h"
#include "report/report_buy.h"
#include "report/report_html.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

enum { PLACEMENTS_SHOWN = 12, DECISION_NODES_SHOWN = 5 };

static json_int_t jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }
static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static json_int_t blocked_sum(const json_t *r) {
    const json_t *b = json_object_get(r, "blocked");
    return jint(b, "counters") + jint(b, "taints") + jint(b, "nodes") + jint(r, "unusable");
}

static void summary(FILE *f, const json_t *plan) {
    const json_t *sum = json_object_get(plan, "summary");
    json_int_t un = jint(sum, "unplaced");
    fprintf(f, "<div class=\"sum\"><b>%lld</b> of %lld replicas placed", (long long)jint(sum, "placed"),
            (long long)jint(sum, "replicas"));
    if (un) fprintf(f, ", <span class=\"bad\">%lld unplaced</span>", (long long)un);
    else fputs(", <span class=\"ok\">all placed</span>", f);
    fprintf(f, " on %lld nodes (%s scoring). Devices: %lld, %lld allocated, <b>%lld allocatable now</b>, %lld blocked",
            (long long)jint(sum, "nodes"), jstr(sum, "score") ? jstr(sum, "score") : "binpack", (long long)jint(sum, "devices"),
            (long long)jint(sum, "allocated"), (long long)jint(sum, "free"), (long long)blocked_sum(sum));
    if (json_object_get(sum, "stranded")) fprintf(f, ", %lld stranded (free, but no replica of any workload can use them)",
                                                  (long long)jint(sum, "stranded"));
    fputs(".</div>\n", f);
}

/* The kube-scheduler line's causes, largest first, as a list. */
static void cause_list(FILE *f, const json_t *w) {
    const json_t *cs = json_object_get(w, "causes");
    size_t n = json_array_size(cs);
    if (!n) return;
    const json_t **v = xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = json_array_get(cs, i);
    for (size_t i = 1; i < n; i++)   /* by node count, descending (stable) */
        for (size_t j = i; j > 0 && jint(v[j - 1], "nodes") < jint(v[j], "nodes"); j--) {
            const json_t *t = v[j - 1];
            v[j - 1] = v[j];
            v[j] = t;
        }
    for (size_t i = 0; i < n && i < 4; i++) {
        fprintf(f, "%s%lld ", i ? "<br>" : "", (long long)jint(v[i], "nodes"));
        report_esc(f, jstr(v[i], "cause"));
    }
    if (n > 4) fprintf(f, "<br><span class=\"dim\">and %zu more causes</span>", n - 4);
    free(v);
}

static void workloads_table(FILE *f, const json_t *plan) {
    fputs("<h2>What fits</h2>\n<table><tr><th>workload</th><th>replicas</th><th>placed</th><th>unplaced</th>"
          "<th>headroom</th><th>why not (nodes by cause)</th></tr>\n",
          f);
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        fputs("<tr><td>", f);
        report_esc(f, jstr(w, "name"));
        if (json_is_true(json_object_get(w, "gang"))) fputs(" <span class=\"dim\">(gang)</span>", f);
        fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n%s\">%lld</td><td class=\"n\">",
                (long long)jint(w, "replicas"), (long long)jint(w, "placed"), jint(w, "unplaced") ? " bad" : "",
                (long long)jint(w, "unplaced"));
        if (json_object_get(w, "headroom"))
            fprintf(f, "%lld%s", (long long)jint(w, "headroom"), json_is_true(json_object_get(w, "headroomCapped")) ? "+" : "");
        fputs("</td><td>", f);
        if (json_is_true(json_object_get(w, "unfittable")))
            fputs("<span class=\"tag\">unfittable</span> no node could run one even empty<br>", f);
        if (json_object_get(w, "causes")) cause_list(f, w);
        else if (jstr(w, "reason")) report_esc(f, jstr(w, "reason"));
        else fputs("<span class=\"ok\">fits</span>", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void why_section(FILE *f, const json_t *plan) {
    bool any = false;
    size_t i, k;
    json_t *w, *c;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        const char *r = jstr(w, "reason");
        if (!r) continue;
        if (!any) fputs("<h2>Why replicas are unplaced</h2>\n", f);
        any = true;
        fputs("<h3>", f);
        report_esc(f, jstr(w, "name"));
        fputs("</h3>\n", f);
        const json_t *cl = json_object_get(w, "closest");
        if (!cl) {
            fputs("<div class=\"why\">", f);
            report_esc(f, r);
            fputs("</div>\n", f);
            continue;
        }
        /* the reason's first sentence is the count by cause */
        const char *dot = strstr(r, ". Closest: ");
        fputs("<div class=\"why\">", f);
        if (dot) {
            char *head = xstrndup(r, (size_t)(dot - r) + 1);
            report_esc(f, head);
            free(head);
        } else {
            report_esc(f, r);
        }
        fputs("</div>\n<table><tr><th>closest node</th><th>devices missing</th><th>its explanation</th></tr>\n", f);
        json_array_foreach(cl, k, c) {
            fputs("<tr><td>", f);
            report_esc(f, jstr(c, "node"));
            fputs("</td><td class=\"n\">", f);
            if (json_object_get(c, "missing")) fprintf(f, "%lld", (long long)jint(c, "missing"));
            fputs("</td><td class=\"why\">", f);
            report_esc(f, jstr(c, "reason"));
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
}

static int cmp_replicas_desc(const void *a, const void *b) {
    json_int_t x = jint(*(const json_t *const *)a, "replicas"), y = jint(*(const json_t *const *)b, "replicas");
    return (x < y) - (x > y);
}

static void placements(FILE *f, const json_t *plan) {
    fputs("<h2>Placements</h2>\n<table><tr><th>workload</th><th>nodes</th><th>busiest nodes (replicas)</th></tr>\n", f);
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(plan, "workloads"), i, w) {
        const json_t *pl = json_object_get(w, "placements");
        size_t n = json_array_size(pl);
        fputs("<tr><td>", f);
        report_esc(f, jstr(w, "name"));
        fprintf(f, "</td><td class=\"n\">%zu</td><td>", n);
        const json_t **v = xmalloc((n ? n : 1) * sizeof *v);
        for (size_t k = 0; k < n; k++) v[k] = json_array_get(pl, k);
        if (n) qsort(v, n, sizeof *v, cmp_replicas_desc);
        for (size_t k = 0; k < n && k < PLACEMENTS_SHOWN; k++) {
            if (k) fputs(", ", f);
            report_esc(f, jstr(v[k], "node"));
            fprintf(f, "&nbsp;&times;%lld", (long long)jint(v[k], "replicas"));
        }
        if (n > PLACEMENTS_SHOWN) fprintf(f, " <span class=\"dim\">and %zu more nodes</span>", n - PLACEMENTS_SHOWN);
        free(v);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void plan_section(FILE *f, const json_t *plan) {
    report_buy_html(f, plan);   /* what to buy, first */
    summary(f, plan);
    workloads_table(f, plan);
    fputs("<h2>Allocatable now</h2>\n", f);
    report_class_table(f, json_object_get(plan, "classes"));
    report_shape_table(f, json_object_get(plan, "shapes"));
    why_section(f, plan);
    fputs("<h2>Nodes</h2>\n", f);
    report_heatmap(f, plan);
    placements(f, plan);
}

/* Scenarios side by side: a column each; rows per workload (placed / replicas) and the
 * fleet's totals. */
static void scenarios_compared(FILE *f, const json_t *sc) {
    fputs("<h2>Scenarios side by side</h2>\n<table><tr><th></th>", f);
    size_t i, k;
    json_t *s, *w;
    json_array_foreach(sc, i, s) {
        fputs("<th>", f);
        report_esc(f, jstr(s, "file"));
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    /* every workload name, in first-seen order */
    json_t *names = json_array();
    json_array_foreach(sc, i, s) json_array_foreach(json_object_get(s, "workloads"), k, w) {
        bool seen = false;
        for (size_t j = 0; j < json_array_size(names) && !seen; j++)
            seen = !strcmp(json_string_value(json_array_get(names, j)), jstr(w, "name"));
        if (!seen) json_array_append_new(names, json_string(jstr(w, "name")));
    }
    for (size_t j = 0; j < json_array_size(names); j++) {
        const char *nm = json_string_value(json_array_get(names, j));
        fputs("<tr><td>", f);
        report_esc(f, nm);
        fputs(" <span class=\"dim\">placed</span></td>", f);
        json_array_foreach(sc, i, s) {
            const json_t *found = NULL;
            json_array_foreach(json_object_get(s, "workloads"), k, w) if (!strcmp(jstr(w, "name"), nm)) found = w;
            if (!found) fputs("<td class=\"dim\">-</td>", f);
            else fprintf(f, "<td class=\"n%s\">%lld / %lld</td>", jint(found, "unplaced") ? " bad" : "",
                         (long long)jint(found, "placed"), (long long)jint(found, "replicas"));
        }
        fputs("</tr>\n", f);
    }
    json_decref(names);
    static const char *const rows[][2] = {{"allocated", "devices allocated"}, {"free", "allocatable now"},
                                          {"stranded", "stranded"}, {"nodes", "nodes"}};
    for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
        fprintf(f, "<tr><td>%s</td>", rows[r][1]);
        json_array_foreach(sc, i, s) {
            const json_t *sum = json_object_get(s, "summary");
            if (json_object_get(s, "error") || !json_object_get(sum, rows[r][0])) fputs("<td class=\"dim\">-</td>", f);
            else fprintf(f, "<td class=\"n\">%lld</td>", (long long)jint(sum, rows[r][0]));
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

void report_plan_html(FILE *f, const json_t *plan, const char *title) {
    report_page_open(f, title);
    const json_t *sc = json_object_get(plan, "scenarios");
    if (!sc) {
        plan_section(f, plan);
    } else {
        scenarios_compared(f, sc);
        size_t i;
        json_t *s;
        json_array_foreach(sc, i, s) {
            fprintf(f, "<details%s><summary><b>Scenario %lld: ", i ? "" : " open", (long long)jint(s, "index"));
            report_esc(f, jstr(s, "file"));
            fputs("</b></summary>\n", f);
            if (json_object_get(s, "error")) {
                fputs("<p class=\"bad\">", f);
                report_esc(f, jstr(s, "error"));
                fputs("</p>\n", f);
            } else {
                plan_section(f, s);
            }
            fputs("</details>\n", f);
        }
    }
    report_page_close(f);
}

/* ---- serve's status page ------------------------------------------------------------------ */

static int decision_rank(const json_t *row) { return json_is_false(json_object_get(row, "claims")) ? 1 : 0; }

void report_status_html(FILE *f, const json_t *cap, const json_t *recent, const char *title) {
    report_page_open(f, title);
    json_int_t d = 0, a = 0, fr = 0, b = 0;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(cap, "pools"), i, row) {
        d += jint(row, "devices"), a += jint(row, "allocated"), fr += jint(row, "free");
        b += blocked_sum(row);
    }
    fprintf(f, "<div class=\"sum\">%zu nodes; devices: %lld, %lld allocated, <b>%lld allocatable now</b>, %lld blocked "
               "(shared counters used up or an untolerated taint).</div>\n",
            json_array_size(json_object_get(cap, "nodes")), (long long)d, (long long)a, (long long)fr, (long long)b);
    /* pending pods first: what an operator opens the page for */
    fputs("<h2>Recent filter decisions</h2>\n", f);
    if (!json_array_size(recent)) {
        fputs("<p class=\"dim\">none yet</p>\n", f);
    } else {
        fputs("<p class=\"dim\">Pods with claims first, newest first.</p>\n<table><tr><th>time</th><th>pod</th>"
              "<th>snapshot</th><th>fit</th><th>why not (nodes by cause, then a few nodes)</th></tr>\n",
              f);
        for (int rank = 0; rank < 2; rank++)
            json_array_foreach(recent, i, row) {
                if (decision_rank(row) != rank) continue;
                fputs("<tr><td>", f);
                report_esc(f, jstr(row, "time"));
                fputs("</td><td>", f);
                report_esc(f, jstr(row, "pod"));
                if (rank) fputs(" <span class=\"dim\">(no claims)</span>", f);
                fprintf(f, "</td><td class=\"n\">%lld</td><td class=\"n%s\">%lld/%lld</td><td class=\"why\">",
                        (long long)jint(row, "generation"), jint(row, "fit") ? "" : " bad", (long long)jint(row, "fit"),
                        (long long)jint(row, "nodes"));
                const char *err = jstr(row, "error");
                if (err) {
                    fputs("<span class=\"bad\">", f);
                    report_esc(f, err);
                    fputs("</span><br>", f);
                }
                if (jstr(row, "summary")) {
                    report_esc(f, jstr(row, "summary"));
                    fputs("<br>", f);
                }
                const char *k;
                json_t *v;
                size_t shown = 0;
                json_object_foreach(json_object_get(row, "failed"), k, v) {
                    if (shown++ == DECISION_NODES_SHOWN) {
                        fprintf(f, "<span class=\"dim\">and %zu more nodes</span>", json_object_size(json_object_get(row, "failed")) - DECISION_NODES_SHOWN);
                        break;
                    }
                    report_esc(f, k);
                    fputs(": ", f);
                    report_esc(f, json_string_value(v));
                    fputs("<br>", f);
                }
                fputs("</td></tr>\n", f);
            }
        fputs("</table>\n", f);
    }
    fputs("<h2>Allocatable now</h2>\n", f);
    report_class_table(f, json_object_get(cap, "classes"));
    report_shape_table(f, json_object_get(cap, "shapes"));
    fputs("<h2>Nodes</h2>\n", f);
    report_heatmap(f, cap);
    report_page_close(f);
}
