/* report_buy.h — private to report/: what `dralloc plan --min-nodes ... [--price ...]`
 * answers, rendered first so the first screen says what to buy: the buy list (shapes,
 * counts, prices, where each workload's replicas go), then per shape the fewest nodes
 * for each workload on its own and for all of them under binpack and spread scoring,
 * the workloads no count helps with their causes, and which cluster the plan below
 * is (the one with the answer's nodes added, or the one given). */
#ifndef DRA_REPORT_BUY_H
#define DRA_REPORT_BUY_H

#include <jansson.h>
#include <stdio.h>

/* Nothing when the plan has no "minNodes". */
void report_buy_text(FILE *f, const json_t *plan);
void report_buy_html(FILE *f, const json_t *plan);

#endif
