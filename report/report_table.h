/* report_table.h — private to report/: a table of text cells printed aligned
 * (numeric columns right-aligned) or as CSV (RFC 4180 quoting). */
#ifndef DRA_REPORT_TABLE_H
#define DRA_REPORT_TABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct report_table report_table;

report_table *report_table_new(size_t ncols, const char *const *headers);
void report_table_free(report_table *t);
/* Appends a cell to the current row; a row is complete after ncols cells. */
void report_table_cell(report_table *t, const char *s);
void report_table_cellf(report_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON value as a cell: strings as they are, integers in decimal, null/absent empty. */
void report_table_cellj(report_table *t, const json_t *v);
size_t report_table_rows(const report_table *t);
void report_table_print(const report_table *t, FILE *f);
/* prefix_header/prefix (may be NULL): an extra first column, e.g. the scenario. */
void report_table_csv(const report_table *t, FILE *f, bool header, const char *prefix_header, const char *prefix);

#endif
