/* report.h — a small text-table printer for benchmark reports: give the column
 * headers, add cells row by row (printf-style), print. Column widths fit the
 * widest cell; the first column is left-aligned (names), the others are
 * right-aligned (numbers). Also the number formatting the reports share. */
#ifndef DRA_BENCH_REPORT_H
#define DRA_BENCH_REPORT_H

#include "base/base.h"

#include <stdio.h>

typedef struct bench_table bench_table;   /* opaque */

bench_table *bench_table_new(const char *const *headers, size_t ncols);
/* Appends the next cell (rows fill left to right, then wrap). */
void bench_table_addf(bench_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bench_table_print(const bench_table *t, FILE *f);
void bench_table_free(bench_table *t);

/* "12.3" / "1234" style: one decimal below 100, none above (ns figures). */
const char *bench_fmt_ns(double ns, char *buf, size_t n);
/* Operations per second with an SI suffix: "5.02 M/s", "810 k/s". */
const char *bench_fmt_rate(double per_sec, char *buf, size_t n);

#endif
