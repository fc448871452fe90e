/* report_html.h — private to report/: the pieces the plan report (report_html.c) and
 * serve's status page share (report_fleet.c): escaping, the page's style, and the
 * fleet views of a capacity object (dra_capacity_json's shape): allocatable now per
 * DeviceClass, per node shape with what its counter sets can still carve, and the
 * heatmap — one cell per node, grouped by shape and DeviceClass, coloured by the share
 * of the node's devices of that class that are not allocatable now. */
#ifndef DRA_REPORT_HTML_H
#define DRA_REPORT_HTML_H

#include <jansson.h>
#include <stdio.h>

void report_esc(FILE *f, const char *s);
/* <!DOCTYPE html> ... <body><h1>title</h1> with the shared style sheet. */
void report_page_open(FILE *f, const char *title);
void report_page_close(FILE *f);

/* Per DeviceClass: devices, allocated, allocatable now, blocked by counters and by
 * taints, and a stacked bar of the three. */
void report_class_table(FILE *f, const json_t *classes);
/* Per node shape: nodes, the same counts, and per carve profile how many fit now of
 * how many the counter sets hold when empty. */
void report_shape_table(FILE *f, const json_t *shapes);
/* The heatmap of cap's nodes (with a legend); nothing when there are no nodes. */
void report_heatmap(FILE *f, const json_t *cap);

#endif
