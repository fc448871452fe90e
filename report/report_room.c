/* report_room.c — `dralloc plan --defrag` and `--preempt` as text and as an HTML
 * section: each pending pod's node (and how many moves or evictions it took) or why it
 * stays unplaced, every move (pod, from, to) or eviction (pod, node, by whom), and the
 * stranded devices before and after. */
#include "report/report.h"
#include "report/report_html.h"

#include <string.h>

static const char *jstr(const json_t *o, const char *k) {
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}
static long long jint(const json_t *o, const char *k) { return (long long)json_integer_value(json_object_get(o, k)); }

void report_room(FILE *f, const json_t *out) {
    bool defrag = json_object_get(out, "moves") != NULL;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(out, "pods"), i, p) {
        if (json_object_get(p, "unplaced")) fprintf(f, "%s: unplaced: %s\n", jstr(p, "pod"), jstr(p, "unplaced"));
        else fprintf(f, "%s: on %s%s%lld %s\n", jstr(p, "pod"), jstr(p, "node"), defrag ? " after " : " after ",
                     jint(p, defrag ? "moves" : "evictions"), defrag ? "move(s)" : "eviction(s)");
    }
    const json_t *list = json_object_get(out, defrag ? "moves" : "evictions");
    if (json_array_size(list)) fputs(defrag ? "moves (evict, then place again):\n" : "evictions:\n", f);
    json_array_foreach(list, i, p) {
        if (defrag) fprintf(f, "  %s: %s -> %s\n", jstr(p, "pod"), jstr(p, "from"), jstr(p, "to"));
        else fprintf(f, "  %s on %s, for %s\n", jstr(p, "pod"), jstr(p, "node"), jstr(p, "by"));
    }
    fprintf(f, "stranded devices: %lld before, %lld after\n", jint(out, "strandedBefore"), jint(out, "strandedAfter"));
}

void report_room_section(FILE *f, const json_t *out) {
    bool defrag = json_object_get(out, "moves") != NULL;
    fprintf(f, "<h2>%s</h2>\n", defrag ? "Defragmentation: moves that make room" : "Preemption: evictions that make room");
    fprintf(f, "<div class=\"sum\">Stranded devices (free, on nodes where no unplaced pod fits): <b>%lld</b> before, "
               "<b>%lld</b> after.</div>\n",
            jint(out, "strandedBefore"), jint(out, "strandedAfter"));
    fputs("<table><tr><th>pod</th><th>node</th><th>", f);
    fputs(defrag ? "moves" : "evictions", f);
    fputs("</th></tr>\n", f);
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(out, "pods"), i, p) {
        fputs("<tr><td>", f);
        report_esc(f, jstr(p, "pod"));
        if (json_object_get(p, "unplaced")) {
            fputs("</td><td class=\"bad\" colspan=\"2\">unplaced: ", f);
            report_esc(f, jstr(p, "unplaced"));
            fputs("</td></tr>\n", f);
            continue;
        }
        fputs("</td><td>", f);
        report_esc(f, jstr(p, "node"));
        fprintf(f, "</td><td>%lld</td></tr>\n", jint(p, defrag ? "moves" : "evictions"));
    }
    fputs("</table>\n", f);
    const json_t *list = json_object_get(out, defrag ? "moves" : "evictions");
    if (!json_array_size(list)) return;
    fputs(defrag ? "<table><tr><th>moved pod</th><th>from</th><th>to</th></tr>\n"
                 : "<table><tr><th>evicted pod</th><th>node</th><th>for</th></tr>\n",
          f);
    json_array_foreach(list, i, p) {
        const char *cols[][2] = {{"pod", "pod"}, {"from", "node"}, {"to", "by"}};
        fputs("<tr>", f);
        for (int c = 0; c < 3; c++) {
            fputs("<td>", f);
            report_esc(f, jstr(p, cols[c][defrag ? 0 : 1]));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

void report_room_html(FILE *f, const json_t *out, const char *title) {
    report_page_open(f, title);
    report_room_section(f, out);
    report_page_close(f);
}
