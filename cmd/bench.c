/* bench.c — `dralloc bench [<workload>] [options]`: runs the named benchmark
 * workload (bench/bench.h), or every workload when none is named. Workloads share
 * the options below; to add one, write its bench_<name>_main and add a row to
 * the table. Exit codes: 0 ran and every cross-check held, 1 a cross-check failed
 * (MISMATCH) or the code under test failed, 2 usage error. */
#include "bench/bench.h"
#include "cmd/commands.h"
#include "cmd/flags.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct workload {
    const char *name;
    int (*run)(const bench_opts *o);
    const char *summary;
} workload;

static const workload workloads[] = {
    {"cel", bench_cel_main, "CEL selectors E1..E5 of ../shared/bench/cel-peers on N synthetic devices"},
    {"layout", bench_layout_main, "attribute lookups on N devices with the attribute arrays laid out four ways (E1's floor)"},
    {"alloc", bench_alloc_main, "dra_allocate latency on scheduler_perf-shaped nodes (single, filter-500, backtracking, ...)"},
    {"soak", bench_soak_main, "memory over 1,000,000 pod decisions and 20,000 through a map() selector (flat within 10 %)"},
    {"snapshot", bench_snapshot_main, "store ingest, one slice/claim update, node-view warm-up at 500 and 5,000 nodes x 8 GPUs"},
    {"listpage", bench_listpage_main, "a LIST page of 500 MIG-carved slices: jansson, dra_json_parse, item by item (ms, MB/s, peak RSS)"},
    {"relist", bench_relist_main, "a MIG-carved fleet's slices (--devices N nodes, default 5,000) from LIST pages of text into a store, as the watch reads them"},
    {"plan", bench_plan_main, "planning loop: 5000pods_500nodes pods/s (full and fit cache), 36,000 pods on 5,000 nodes"},
    {"fleet", bench_fleet_main, "the planner's fleet (H100, MIG-carved A100, CPU nodes; --devices N nodes): ingest and capacity view, or --dump DIR; --shape gpu8|mig8: issue 43's 8 GPU + 8 NIC or 8 MIG-carved A100 nodes"},
    {"serve", bench_serve_main, "dralloc serve /filter load at fixed rates (5000 nodes, 500 NodeNames): p50/p90/p99, highest rate sustained"},
};

static void usage(FILE *f) {
    fprintf(f,
            "usage: dralloc bench [<workload>] [--devices N] [--reps R] [--warmup W] [--json FILE] [--dump FILE]\n"
            "       dralloc bench --list\n"
            "       dralloc bench MATRIX_WORKLOAD... [--threads N|A..B|1..max] [--reps R] [--scale F] [--no-memo] [--build-only] [-o json]\n"
            "       dralloc bench scaling MATRIX_WORKLOAD...   (pods/s from 1 thread to the CPUs online, speedup)\n"
            "       dralloc bench compare OLD.json NEW.json\n"
            "       dralloc bench e2e [--nodes N] [--pods P] [--shape basic|match|mig] ...   (bench/e2e/run.sh: in-tree\n"
            "                     DynamicResources vs dralloc on a real v1.37.2 control plane; a source checkout)\n\n"
            "workloads (all of them when none is named):\n");
    for (size_t i = 0; i < ARRAY_SIZE(workloads); i++) fprintf(f, "  %-8s %s\n", workloads[i].name, workloads[i].summary);
    fprintf(f,
            "\noptions:\n"
            "  --devices N   workload size (cel: devices, default %d)\n"
            "  --reps R      timed passes (cel: default %d); figures are the median, p90, p99, min over them\n"
            "  --warmup W    untimed passes first (default 1)\n"
            "  --json FILE   also write the results as JSON\n"
            "  -o json       serve: the results as JSON on stdout instead of the table\n"
            "  --dump FILE   only write the generated input, one line per item (- for stdout)\n"
            "\nExit status 1 when a match count differs from the reference (MISMATCH).\n",
            BENCH_CEL_DEFAULT_DEVICES, BENCH_CEL_DEFAULT_REPS);
}

static bool parse_count(const char *opt, const char *s, size_t min, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = s ? strtoull(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || s[0] == '-' || v < min) {
        fprintf(stderr, "dralloc bench: %s needs an integer >= %zu\n", opt, min);
        return false;
    }
    *out = (size_t)v;
    return true;
}

/* --threads: N, A..B, A..max or max (max: the CPUs online); a range is a scaling
 * report from A to B. */
static bool parse_threads(const char *v, bench_matrix_opts *mo) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    if (cpus > 64) cpus = 64;
    unsigned long lo, hi;
    char *end;
    const char *dots = strstr(v, "..");
    if (!strcmp(v, "max")) lo = hi = (unsigned long)cpus;
    else {
        errno = 0;
        lo = strtoul(v, &end, 10);
        if (end == v || errno || (dots ? end != dots : *end)) return false;
        hi = lo;
        if (dots) {
            if (!strcmp(dots + 2, "max")) hi = (unsigned long)cpus;
            else {
                hi = strtoul(dots + 2, &end, 10);
                if (end == dots + 2 || *end) return false;
            }
        }
    }
    if (lo < 1 || hi > 64 || hi < lo) return false;
    mo->scaling = dots != NULL;
    mo->nthreads = 0;
    for (unsigned long t = lo; t <= hi; t++) mo->threads[mo->nthreads++] = (unsigned)t;
    return true;
}

/* ---- the scheduler_perf matrix's flags (matrix_flags), for `bench NAME...` and
 * `bench scaling NAME...` --------------------------------------------------------------- */

typedef struct matrix_args {
    int *which;                  /* the matrix workloads named */
    size_t n;
    bench_opts o;
    bench_matrix_opts mo;
} matrix_args;

static int matrix_word(void *opts, const char *w) {
    matrix_args *m = opts;
    int k = bench_matrix_find(w);
    if (k < 0) return CMD_PARSE_UNKNOWN;
    m->which[m->n++] = k;
    return CMD_PARSE_OK;
}

static int read_threads(const cmd_flag_use *u) {
    if (parse_threads(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc bench: --threads needs N, A..B or A..max with 1 <= A <= B <= 64\n");
    return CMD_PARSE_ERROR;
}

static int read_scale(const cmd_flag_use *u) {
    double *scale = u->field;
    char *end;
    errno = 0;
    *scale = strtod(u->value, &end);
    if (*u->value && !*end && !errno && *scale > 0 && *scale <= 100) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc bench: --scale needs a number in (0, 100]\n");
    return CMD_PARSE_ERROR;
}

/* --reps, --devices, --warmup: an integer >= the row's minimum */
static int read_count(const cmd_flag_use *u) {
    return parse_count(u->as, u->value, *(const size_t *)u->flag->data, u->field) ? CMD_PARSE_OK : CMD_PARSE_ERROR;
}

static const size_t min0 = 0, min1 = 1;

/* --no-memo: the field (memo) off */
static int read_no(const cmd_flag_use *u) {
    *(bool *)u->field = strcmp(u->value, "true") != 0;
    return CMD_PARSE_OK;
}

/* the matrix's -o: json or text, else not the matrix's (the micro workloads' -o says why) */
static int read_matrix_output(const cmd_flag_use *u) {
    if (strcmp(u->value, "json") && strcmp(u->value, "text")) return CMD_PARSE_UNKNOWN;
    *(bool *)u->field = !strcmp(u->value, "json");
    return CMD_PARSE_OK;
}

static const cmd_flag matrix_flags[] = {
    {.name = "--no-memo", .kind = CMD_BOOL, .off = offsetof(matrix_args, mo.memo), .fn = read_no},
    {.name = "--build-only", .kind = CMD_BOOL, .off = offsetof(matrix_args, mo.build_only)},
    {.name = "--threads", .kind = CMD_FUNC, .off = offsetof(matrix_args, mo), .fn = read_threads},
    {.name = "--scale", .kind = CMD_FUNC, .off = offsetof(matrix_args, mo.scale), .fn = read_scale},
    {.name = "--reps", .kind = CMD_FUNC, .off = offsetof(matrix_args, o.reps), .fn = read_count, .data = &min1},
    {.shorthand = "-o", .kind = CMD_FUNC, .off = offsetof(matrix_args, mo.as_json), .fn = read_matrix_output},
    {.name = "--json", .kind = CMD_STRING, .off = offsetof(matrix_args, o.json)},
};

/* `bench NAME...`: a word or flag not the matrix's is the micro workloads' (returned
 * unsaid); `bench scaling NAME...` says so. */
static const cmd_flags matrix_spec = {
    .prog = "dralloc bench",
    .flags = matrix_flags,
    .nflags = sizeof matrix_flags / sizeof matrix_flags[0],
    .word = matrix_word,
    .no_help = true,
};

static const cmd_flags scaling_spec = {
    .prog = "dralloc bench scaling",
    .flags = matrix_flags,
    .nflags = sizeof matrix_flags / sizeof matrix_flags[0],
    .word = matrix_word,
    .unknown = "dralloc bench scaling: '%s' is not a matrix workload or option (dralloc bench --list)\n",
    .usage = usage,
};

static int matrix_list(void) {
    printf("micro workloads (dralloc bench NAME):\n");
    for (size_t k = 0; k < ARRAY_SIZE(workloads); k++) printf("  %-31s %s\n", workloads[k].name, workloads[k].summary);
    printf("\nscheduler_perf matrix (dralloc bench NAME... [--threads N|A..B|1..max] [--reps R] [--scale F] "
           "[--no-memo] [--build-only] [-o json];\n  dralloc bench scaling NAME... = --threads 1..max):\n");
    bench_matrix_list(stdout);
    return 0;
}

/* The scheduler_perf matrix: `--list`, `compare OLD NEW`, `scaling WORKLOAD...`, or
 * matrix workload names (with --threads, --reps, --scale, --no-memo, --build-only, -o json).
 * Returns -1 when argv is not for it. */
static int matrix_cli(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "compare")) {
        if (argc != 4) {
            fprintf(stderr, "usage: dralloc bench compare OLD.json NEW.json\n");
            return 2;
        }
        return bench_matrix_compare(argv[2], argv[3], stdout);
    }
    if (argc > 1 && !strcmp(argv[1], "--list")) return matrix_list();
    bool scaling = argc > 1 && !strcmp(argv[1], "scaling");
    matrix_args m = {.which = xcalloc((size_t)argc + 1, sizeof *m.which), .o = {.out = stdout},
                     .mo = {.memo = true, .scale = 1.0}};
    m.mo.o = &m.o;
    if (scaling) parse_threads("1..max", &m.mo);
    int rc = scaling ? cmd_flags_parse(&scaling_spec, argc - 1, argv + 1, &m) : cmd_flags_parse(&matrix_spec, argc, argv, &m);
    if (rc == CMD_PARSE_HELP) rc = 0;
    else if (rc == CMD_PARSE_UNKNOWN) rc = -1;
    else if (rc == CMD_PARSE_OK && m.n) rc = bench_matrix_run(m.which, m.n, &m.mo);
    else if (rc == CMD_PARSE_OK && scaling) {
        fprintf(stderr, "usage: dralloc bench scaling WORKLOAD... [--reps R] [--scale F] [--no-memo] [-o json]\n");
        rc = 2;
    } else if (rc == CMD_PARSE_OK) rc = -1;
    cmd_flags_free(scaling ? &scaling_spec : &matrix_spec, &m);
    free(m.which);
    return rc;
}

/* ---- the micro workloads' flags ---------------------------------------------------------- */

typedef struct micro_args {
    bench_opts o;
    const workload *only;
} micro_args;

static int micro_word(void *opts, const char *w) {
    micro_args *m = opts;
    if (m->only) return CMD_PARSE_UNKNOWN;
    for (size_t k = 0; k < ARRAY_SIZE(workloads); k++)
        if (!strcmp(w, workloads[k].name)) m->only = &workloads[k];
    if (m->only) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc bench: unknown workload '%s'\n\n", w);
    usage(stderr);
    return CMD_PARSE_ERROR;
}

/* --json FILE, --dump FILE: a name, said so when missing */
static int read_file(const cmd_flag_use *u) {
    if (u->value) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc bench: %s needs a file name%s\n", u->as, strcmp(u->as, "--dump") ? "" : " (- for stdout)");
    return CMD_PARSE_ERROR;
}

static int read_micro_output(const cmd_flag_use *u) {
    if (!u->value || (strcmp(u->value, "json") && strcmp(u->value, "text"))) {
        fprintf(stderr, "dralloc bench: -o needs json or text\n");
        return CMD_PARSE_ERROR;
    }
    if (!strcmp(u->value, "json")) *(const char **)u->field = "-";
    return CMD_PARSE_OK;
}

static const cmd_flag micro_flags[] = {
    {.name = "--devices", .kind = CMD_FUNC, .off = offsetof(micro_args, o.devices), .fn = read_count, .data = &min1,
     .own_missing = true},
    {.name = "--reps", .kind = CMD_FUNC, .off = offsetof(micro_args, o.reps), .fn = read_count, .data = &min1,
     .own_missing = true},
    {.name = "--warmup", .kind = CMD_FUNC, .off = offsetof(micro_args, o.warmup), .fn = read_count, .data = &min0,
     .own_missing = true},
    {.name = "--json", .kind = CMD_STRING, .off = offsetof(micro_args, o.json), .fn = read_file, .own_missing = true},
    {.shorthand = "-o", .kind = CMD_FUNC, .off = offsetof(micro_args, o.json), .fn = read_micro_output,
     .own_missing = true},
    {.name = "--dump", .kind = CMD_STRING, .off = offsetof(micro_args, o.dump), .fn = read_file, .own_missing = true},
    {.name = "--shape", .kind = CMD_STRING, .off = offsetof(micro_args, o.shape)},
};

static const cmd_flags micro_spec = {
    .prog = "dralloc bench",
    .flags = micro_flags,
    .nflags = sizeof micro_flags / sizeof micro_flags[0],
    .word = micro_word,
    .unknown = "dralloc bench: unexpected argument '%s'\n\n",
    .usage = usage,
    .usage_after_unknown = true,
};

int cmd_bench(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "e2e")) return cmd_bench_e2e(argc - 1, argv + 1);
    int mrc = matrix_cli(argc, argv);
    if (mrc >= 0) return mrc;
    micro_args m = {.o = {.warmup = 1, .out = stdout}};
    int rc = cmd_flags_parse(&micro_spec, argc, argv, &m);
    if (rc) return rc < 0 ? 0 : rc;
    bench_opts o = m.o;
    const workload *only = m.only;
    if (o.json && !strcmp(o.json, "-") && (!only || only->run != bench_serve_main)) {
        fprintf(stderr, "dralloc bench: -o json is for the serve workload; others take --json FILE\n");
        return 2;
    }
    if (only) return only->run(&o);
    int status = 0;
    for (size_t k = 0; k < ARRAY_SIZE(workloads); k++) {
        if (k) fputc('\n', stdout);
        if (workloads[k].run(&o)) status = 1;
    }
    return status;
}
