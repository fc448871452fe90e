/* report_table.c — text tables (report_table.h): cells kept as strings until the
 * whole table is known, so column widths fit the widest cell. */
#include "report/report_table.h"

#include "base/base.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct report_table {
    size_t ncols;
    char **cells;      /* row-major; the headers first */
    size_t n, cap;
};

report_table *report_table_new(size_t ncols, const char *const *headers) {
    report_table *t = xcalloc(1, sizeof *t);
    t->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) report_table_cell(t, headers[i]);
    return t;
}

void report_table_free(report_table *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) free(t->cells[i]);
    free(t->cells);
    free(t);
}

void report_table_cell(report_table *t, const char *s) {
    if (t->n == t->cap) t->cells = xrealloc(t->cells, (t->cap = t->cap ? t->cap * 2 : 64) * sizeof *t->cells);
    t->cells[t->n++] = xstrdup(s ? s : "");
}

void report_table_cellf(report_table *t, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    report_table_cell(t, buf);
}

void report_table_cellj(report_table *t, const json_t *v) {
    if (json_is_string(v)) report_table_cell(t, json_string_value(v));
    else if (json_is_integer(v)) report_table_cellf(t, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) report_table_cellf(t, "%g", json_real_value(v));
    else if (json_is_boolean(v)) report_table_cell(t, json_is_true(v) ? "true" : "false");
    else report_table_cell(t, "");
}

size_t report_table_rows(const report_table *t) { return t->n / t->ncols - 1; }

/* Numbers, percentages and Kubernetes quantities ("40Gi", "500m") align right. */
static bool numeric(const char *s) {
    if (!*s) return true;   /* empty cells do not decide */
    char *end;
    strtod(s, &end);
    if (end == s) return false;
    static const char *const suffixes[] = {"", "%", "+", "m", "k", "M", "G", "T", "P", "E",
                                           "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
        if (!strcmp(end, suffixes[i])) return true;
    return false;
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

void report_table_print(const report_table *t, FILE *f) {
    size_t rows = t->n / t->ncols;
    size_t *w = xcalloc(t->ncols, sizeof *w);
    bool *num = xcalloc(t->ncols, sizeof *num);
    for (size_t c = 0; c < t->ncols; c++) {
        num[c] = rows > 1;
        for (size_t r = 0; r < rows; r++) {
            const char *s = t->cells[r * t->ncols + c];
            if (width(s) > w[c]) w[c] = width(s);
            if (r && !numeric(s)) num[c] = false;
        }
    }
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            size_t pad = w[c] - width(s);
            bool last = c + 1 == t->ncols;
            if (num[c]) fprintf(f, "%*s%s", (int)pad, "", s);
            else if (last) fputs(s, f);   /* no trailing blanks */
            else fprintf(f, "%s%*s", s, (int)pad, "");
            if (!last) fputs("  ", f);
        }
        fputc('\n', f);
    }
    free(w);
    free(num);
}

static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void report_table_csv(const report_table *t, FILE *f, bool header, const char *prefix_header, const char *prefix) {
    size_t rows = t->n / t->ncols;
    for (size_t r = header ? 0 : 1; r < rows; r++) {
        const char *pre = r ? prefix : prefix_header;
        if (prefix_header) {
            csv_field(f, pre ? pre : "");
            fputc(',', f);
        }
        for (size_t c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            /* headers in CSV are lower case: they are field names for programs */
            if (!r) {
                char *h = xstrdup(t->cells[c]);
                for (char *p = h; *p; p++)
                    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
                csv_field(f, h);
                free(h);
            } else {
                csv_field(f, t->cells[r * t->ncols + c]);
            }
        }
        fputc('\n', f);
    }
}
