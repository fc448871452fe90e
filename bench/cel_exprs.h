/* cel_exprs.h — the five DRA selectors E1..E5 of the CEL benchmark, verbatim from
 * bench.js, each with a plain-C reference predicate over the canonical device
 * (like bench.js's plain-JS `ref`): quantities and versions are compared with the
 * same minimal parsers bench.js uses (digits + SI suffix, MAJOR.MINOR.PATCH), not
 * with base/, so the reference stays independent of the code under test. */
#ifndef DRA_BENCH_CEL_EXPRS_H
#define DRA_BENCH_CEL_EXPRS_H

#include "bench/cel_devices.h"

typedef struct bench_cel_expr {
    const char *id;                         /* "E1 class", as bench.js names it */
    const char *cel;                        /* the selector text */
    bool (*ref)(const bench_celdev *d);     /* the plain-C reference predicate */
    uint64_t ref_matches_100k;              /* bench.js's count for makeDevices(100000, 42) */
} bench_cel_expr;

#define BENCH_CEL_NEXPRS 5
extern const bench_cel_expr bench_cel_exprs[BENCH_CEL_NEXPRS];

/* Reference match count of expression i over n devices. */
uint64_t bench_cel_ref_count(size_t i, const bench_celdev *devs, size_t n);

/* The floor (cel_floor.c): E1..E5 hand-written in C over the same cel_device views
 * CEL evaluates, ids and constants resolved once. */
typedef struct bench_cel_floor bench_cel_floor;   /* opaque */
bench_cel_floor *bench_cel_floor_new(intern_table *names);
void bench_cel_floor_free(bench_cel_floor *f);
/* Match count of expression i's hand-written predicate over n views. */
uint64_t bench_cel_floor_count(const bench_cel_floor *f, size_t i, const cel_device *views, size_t n);

#endif
