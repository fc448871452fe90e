/* report.c — cells are kept as heap strings in row-major order until printing. */
#include "bench/report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct bench_table {
    size_t ncols;
    char **cells;            /* headers first, then the rows, row-major */
    size_t ncells, cap;
};

static void add_cell(bench_table *t, char *s) {
    if (t->ncells == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 32;
        t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
    }
    t->cells[t->ncells++] = s;
}

bench_table *bench_table_new(const char *const *headers, size_t ncols) {
    bench_table *t = xcalloc(1, sizeof *t);
    t->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) add_cell(t, xstrdup(headers[i]));
    return t;
}

void bench_table_addf(bench_table *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = xstrdup("?");
    va_end(ap);
    add_cell(t, s);
}

void bench_table_print(const bench_table *t, FILE *f) {
    size_t *w = xcalloc(t->ncols, sizeof *w);
    for (size_t i = 0; i < t->ncells; i++) {
        size_t len = strlen(t->cells[i]);
        if (len > w[i % t->ncols]) w[i % t->ncols] = len;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols;
        if (c == 0) fprintf(f, "%-*s", (int)w[c], t->cells[i]);
        else fprintf(f, "  %*s", (int)w[c], t->cells[i]);
        if (c == t->ncols - 1 || i == t->ncells - 1) fputc('\n', f);
    }
    free(w);
}

void bench_table_free(bench_table *t) {
    if (!t) return;
    for (size_t i = 0; i < t->ncells; i++) free(t->cells[i]);
    free(t->cells);
    free(t);
}

const char *bench_fmt_ns(double ns, char *buf, size_t n) {
    snprintf(buf, n, ns < 100 ? "%.1f" : "%.0f", ns);
    return buf;
}

const char *bench_fmt_rate(double per_sec, char *buf, size_t n) {
    if (per_sec >= 1e9) snprintf(buf, n, "%.2f G/s", per_sec / 1e9);
    else if (per_sec >= 1e6) snprintf(buf, n, "%.2f M/s", per_sec / 1e6);
    else if (per_sec >= 1e3) snprintf(buf, n, "%.0f k/s", per_sec / 1e3);
    else snprintf(buf, n, "%.0f /s", per_sec);
    return buf;
}
