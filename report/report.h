/* report.h — rendering planning and capacity results for people and programs: the
 * result JSON of planner/ (`dralloc plan`) and of dra_capacity_json (`dralloc
 * capacity`) as aligned text tables, CSV, JSON, or one self-contained HTML page with
 * inline SVG charts. Renderers only read the JSON, so `dralloc serve` can reuse them
 * on results it computes or receives. */
#ifndef DRA_REPORT_H
#define DRA_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum report_format { REPORT_TABLE = 0, REPORT_JSON, REPORT_CSV } report_format;
typedef enum report_by { REPORT_BY_NODE = 0, REPORT_BY_POOL, REPORT_BY_CLASS, REPORT_BY_COUNTER, REPORT_BY_SHAPE } report_by;

bool report_format_parse(const char *s, report_format *out);   /* table|json|csv */
bool report_by_parse(const char *s, report_by *out);           /* node|pool|class|counter|shape */

/* A plan result ({"workloads", "nodes", "classes", ...}) or a scenario set
 * ({"scenarios": [{"index", "file", ...plan}]}). Table: workloads (placed, unplaced,
 * headroom, where), nodes and DeviceClasses (utilisation, stranded), the reasons
 * for unplaced replicas. CSV: one table after another, separated by a blank line,
 * each with its header row (a leading "scenario" column for scenario sets). */
/* The JSON outputs (plan, capacity, why) open with "schemaVersion": this number. It
 * goes up when a field changes meaning or goes away; fields are added within one. */
#define REPORT_SCHEMA_VERSION 1

void report_plan(FILE *f, const json_t *plan, report_format fmt);
/* The plan's CSV tables one per file in dir (made if missing): workloads.csv,
 * placements.csv, nodes.csv, classes.csv, each with its header (a scenario column
 * first for --scenarios). False with why in errbuf. */
bool report_plan_csv_dir(const json_t *plan, const char *dir, char *errbuf, size_t n);
/* `why -A`: one line a pod of `why`'s answers (each {"pod": "ns/name", "fit", "nodes",
 * "summary", "error"?}): NAMESPACE, POD, FITS (nodes that fit / nodes), WHY (its count
 * by cause, or "fits"). */
void report_why_all(FILE *f, const json_t *pods);

/* dra_capacity_json's object, one row per node, pool, DeviceClass or counter. JSON
 * prints the whole object. */
void report_capacity(FILE *f, const json_t *cap, report_by by, report_format fmt);

/* One HTML page, nothing loaded from elsewhere and no script: the summary, bar
 * charts of utilisation per node and per DeviceClass (inline SVG), the placements
 * and the reasons for unplaced replicas. Scenario sets get one section each. */
void report_plan_html(FILE *f, const json_t *plan, const char *title);

/* `dralloc serve`'s status page: utilisation per node and per DeviceClass (bars from
 * dra_capacity_json's object) and the recent /filter decisions, newest first, each
 * {"time", "pod", "generation", "nodes", "fit", "error"?, "failed": {node: reason}},
 * so an operator sees why a pod is pending. Self-contained HTML, no script. */
void report_status_html(FILE *f, const json_t *cap, const json_t *recent, const char *title);

/* `dralloc plan --defrag` / `--preempt` (report_room.c): as text; as an HTML section
 * (the pods, the moves or evictions, stranded devices before and after); as a page. */
void report_room(FILE *f, const json_t *out);
void report_room_section(FILE *f, const json_t *out);
void report_room_html(FILE *f, const json_t *out, const char *title);

#endif
