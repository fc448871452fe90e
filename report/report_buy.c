/* report_buy.c — the buy list and the fewest nodes per shape, as text and HTML
 * (report_buy.h; the JSON is planner.h plan_min_nodes'). */
#include "report/report_buy.h"

#include "report/report_html.h"
#include "report/report_table.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static json_int_t jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }
static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* A count cell: n, or "-" when no count up to max works. */
static void count_cell(report_table *t, const json_t *v) {
    if (json_is_integer(v)) report_table_cellf(t, "%lld", (long long)json_integer_value(v));
    else report_table_cell(t, "-");
}

static void join_names(FILE *f, const json_t *names) {
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) fprintf(f, "%s%s", i ? ", " : "", json_string_value(n));
}

/* "3 x a100-shape + 1 x h100-shape" from {"shape": n}; "nothing" when all are 0. */
static void mix_text(FILE *f, const json_t *nodes) {
    const char *k;
    json_t *v;
    bool any = false;
    json_object_foreach((json_t *)nodes, k, v) {
        if (!json_integer_value(v)) continue;
        fprintf(f, "%s%lld x %s", any ? " + " : "", (long long)json_integer_value(v), k);
        any = true;
    }
    if (!any) fputs("nothing (the cluster holds them)", f);
}

static void buy_text(FILE *f, const json_t *buy) {
    const json_t *total = json_object_get(buy, "total"), *nodes = json_object_get(buy, "nodes");
    const json_t *prices = json_object_get(buy, "prices"), *excl = json_object_get(buy, "excluded");
    if (!json_is_number(total)) {
        fprintf(f, "WHAT TO BUY: %s\n", jstr(buy, "reason") ? jstr(buy, "reason") : "no mix found");
        return;
    }
    fprintf(f, "WHAT TO BUY: ");
    mix_text(f, nodes);
    fprintf(f, ", %g in all (the cheapest mix at the prices given, binpack scoring)\n", json_number_value(total));
    static const char *const h[] = {"SHAPE", "NODES", "PRICE", "COST"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)nodes, k, v) {
        double p = json_number_value(json_object_get(prices, k));
        report_table_cell(t, k);
        report_table_cellj(t, v);
        report_table_cellf(t, "%g", p);
        report_table_cellf(t, "%g", p * (double)json_integer_value(v));
    }
    report_table_print(t, f);
    report_table_free(t);
    /* where each workload's replicas go */
    const json_t *per = json_object_get(buy, "perWorkload");
    if (json_object_size(per)) {
        size_t ncol = 3 + json_object_size(nodes);
        const char **hh = xcalloc(ncol, sizeof *hh);
        hh[0] = "WORKLOAD";
        hh[1] = "ON EXISTING NODES";
        size_t c = 2;
        json_object_foreach((json_t *)nodes, k, v) hh[c++] = k;
        hh[c] = "UNPLACED";
        t = report_table_new(ncol, hh);
        const char *wn;
        json_t *row;
        json_object_foreach((json_t *)per, wn, row) {
            if (json_object_get(row, "impossible")) continue;
            report_table_cell(t, wn);
            report_table_cellj(t, json_object_get(row, "existing"));
            json_object_foreach((json_t *)nodes, k, v) report_table_cellj(t, json_object_get(row, k));
            report_table_cellj(t, json_object_get(row, "unplaced"));
        }
        fputc('\n', f);
        report_table_print(t, f);
        report_table_free(t);
        free(hh);
        json_object_foreach((json_t *)per, wn, row)
            if (json_object_get(row, "impossible"))
                fprintf(f, "left out: %s — no count of any shape helps (%s)\n", wn, jstr(row, "impossible"));
    } else if (json_array_size(excl)) {
        fputs("left out (no count of any shape helps): ", f);
        join_names(f, excl);
        fputc('\n', f);
    }
}

static void shape_text(FILE *f, const char *shape, const json_t *mn) {
    const json_t *all = json_object_get(mn, "all"), *excl = json_object_get(all, "excluded");
    fprintf(f, "FEWEST NODES OF SHAPE %s (more nodes, at most %lld; \"-\": not within that)\n", shape,
            (long long)jint(mn, "max"));
    static const char *const h[] = {"WORKLOAD", "BINPACK", "SPREAD", "NOTE"};
    report_table *t = report_table_new(ARRAY_SIZE(h), h);
    report_table_cell(t, json_array_size(excl) ? "all placeable" : "all");
    count_cell(t, json_object_get(all, "binpack"));
    count_cell(t, json_object_get(all, "spread"));
    if (json_array_size(excl)) {
        char buf[512];
        size_t len = (size_t)snprintf(buf, sizeof buf, "without");
        size_t i;
        json_t *n;
        json_array_foreach(excl, i, n) if (len < sizeof buf) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s",
                                                                                    i ? "," : "", json_string_value(n));
        report_table_cell(t, buf);
    } else {
        report_table_cell(t, "every workload together, in file order");
    }
    const char *wn;
    json_t *row;
    json_object_foreach((json_t *)json_object_get(mn, "perWorkload"), wn, row) {
        report_table_cell(t, wn);
        if (jstr(row, "impossible")) {
            report_table_cell(t, "-");
            report_table_cell(t, "-");
            report_table_cellf(t, "impossible: %s (one replica does not fit an empty %s)", jstr(row, "impossible"), shape);
        } else {
            count_cell(t, json_object_get(row, "binpack"));
            count_cell(t, json_object_get(row, "spread"));
            report_table_cell(t, "on its own");
        }
    }
    report_table_print(t, f);
    report_table_free(t);
}

/* Which cluster the plan below is. */
static void planned_text(FILE *f, const json_t *plan) {
    const json_t *added = json_object_get(plan, "addedNodes");
    const char *score = jstr(json_object_get(plan, "summary"), "score");
    if (json_object_size(added)) {
        fputs("THE PLAN BELOW: the cluster with ", f);
        mix_text(f, added);
        fprintf(f, " added (%s scoring)\n", score ? score : "binpack");
    } else {
        fprintf(f, "THE PLAN BELOW: the cluster as given, no node added (%s scoring)\n", score ? score : "binpack");
    }
}

void report_buy_text(FILE *f, const json_t *plan) {
    const json_t *mn = json_object_get(plan, "minNodes");
    if (!mn) return;
    const json_t *buy = json_object_get(plan, "buy");
    if (buy) {
        buy_text(f, buy);
        fputc('\n', f);
    }
    const char *shape;
    json_t *v;
    json_object_foreach((json_t *)mn, shape, v) {
        shape_text(f, shape, v);
        fputc('\n', f);
    }
    planned_text(f, plan);
    fputc('\n', f);
}

/* ---- HTML -------------------------------------------------------------------------------- */

static void count_html(FILE *f, const json_t *v) {
    if (json_is_integer(v)) fprintf(f, "<td class=\"n\">%lld</td>", (long long)json_integer_value(v));
    else fputs("<td class=\"n\">&ndash;</td>", f);
}

void report_buy_html(FILE *f, const json_t *plan) {
    const json_t *mn = json_object_get(plan, "minNodes");
    if (!mn) return;
    const json_t *buy = json_object_get(plan, "buy");
    const char *k;
    json_t *v;
    if (buy) {
        fputs("<h2>What to buy</h2>\n<p>", f);
        if (json_is_number(json_object_get(buy, "total"))) {
            bool any = false;
            json_object_foreach((json_t *)json_object_get(buy, "nodes"), k, v) {
                if (!json_integer_value(v)) continue;
                fprintf(f, "%s<b>%lld</b> &times; ", any ? " + " : "", (long long)json_integer_value(v));
                report_esc(f, k);
                any = true;
            }
            if (!any) fputs("nothing (the cluster holds them)", f);
            fprintf(f, ", <b>%g</b> in all <span class=\"dim\">(the cheapest mix at the prices given, binpack scoring)</span>",
                    json_number_value(json_object_get(buy, "total")));
        } else {
            report_esc(f, jstr(buy, "reason") ? jstr(buy, "reason") : "no mix found");
        }
        fputs("</p>\n", f);
        const json_t *per = json_object_get(buy, "perWorkload"), *nodes = json_object_get(buy, "nodes");
        if (json_object_size(per)) {
            fputs("<table><tr><th>workload</th><th>on existing nodes</th>", f);
            json_object_foreach((json_t *)nodes, k, v) {
                fputs("<th>on ", f);
                report_esc(f, k);
                fputs("</th>", f);
            }
            fputs("<th>unplaced</th></tr>\n", f);
            const char *wn;
            json_t *row;
            json_object_foreach((json_t *)per, wn, row) {
                if (json_object_get(row, "impossible")) continue;
                fputs("<tr><td>", f);
                report_esc(f, wn);
                fputs("</td>", f);
                count_html(f, json_object_get(row, "existing"));
                json_object_foreach((json_t *)nodes, k, v) count_html(f, json_object_get(row, k));
                count_html(f, json_object_get(row, "unplaced"));
                fputs("</tr>\n", f);
            }
            fputs("</table>\n", f);
        }
        const json_t *ex = json_object_get(buy, "excluded");
        if (json_array_size(ex)) {
            fputs("<p>Left out (no count of any shape helps): ", f);
            size_t i;
            json_t *n;
            json_array_foreach(ex, i, n) {
                fputs(i ? ", " : "", f);
                report_esc(f, json_string_value(n));
            }
            fputs("</p>\n", f);
        }
    }
    json_object_foreach((json_t *)mn, k, v) {
        const json_t *all = json_object_get(v, "all");
        fputs("<h3>Fewest nodes of shape ", f);
        report_esc(f, k);
        fprintf(f, " <span class=\"dim\">(at most %lld more)</span></h3>\n", (long long)jint(v, "max"));
        fputs("<table><tr><th>workload</th><th>binpack</th><th>spread</th><th></th></tr>\n<tr><td>all", f);
        fputs(json_array_size(json_object_get(all, "excluded")) ? " placeable" : "", f);
        fputs("</td>", f);
        count_html(f, json_object_get(all, "binpack"));
        count_html(f, json_object_get(all, "spread"));
        fputs("<td>", f);
        size_t i;
        json_t *n;
        json_array_foreach(json_object_get(all, "excluded"), i, n) {
            fputs(i ? ", " : "without ", f);
            report_esc(f, json_string_value(n));
        }
        fputs("</td></tr>\n", f);
        const char *wn;
        json_t *row;
        json_object_foreach((json_t *)json_object_get(v, "perWorkload"), wn, row) {
            fputs("<tr><td>", f);
            report_esc(f, wn);
            fputs("</td>", f);
            if (jstr(row, "impossible")) {
                fputs("<td class=\"n\">&ndash;</td><td class=\"n\">&ndash;</td><td class=\"bad\">impossible: ", f);
                report_esc(f, jstr(row, "impossible"));
                fputs("</td></tr>\n", f);
            } else {
                count_html(f, json_object_get(row, "binpack"));
                count_html(f, json_object_get(row, "spread"));
                fputs("<td class=\"dim\">on its own</td></tr>\n", f);
            }
        }
        fputs("</table>\n", f);
    }
    const json_t *added = json_object_get(plan, "addedNodes");
    fputs("<p class=\"dim\">The plan below: the cluster ", f);
    if (json_object_size(added)) {
        fputs("with ", f);
        bool any = false;
        json_object_foreach((json_t *)added, k, v) {
            fprintf(f, "%s%lld &times; ", any ? " + " : "", (long long)json_integer_value(v));
            report_esc(f, k);
            any = true;
        }
        fputs(" added.</p>\n", f);
    } else {
        fputs("as given, no node added.</p>\n", f);
    }
}
