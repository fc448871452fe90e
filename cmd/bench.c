/* bench.c — `dralloc bench [<workload>] [options]`: runs the named benchmark
 * workload (bench/bench.h), or every workload when none is named. Workloads share
 * the options below; to add one, write its bench_<name>_main and add a row to
 * the table. Exit codes: 0 ran and every cross-check held, 1 a cross-check failed
 * (MISMATCH) or the code under test failed, 2 usage error. */
#include "bench/bench.h"
#include "cmd/commands.h"

#include <errno.h>
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
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        printf("micro workloads (dralloc bench NAME):\n");
        for (size_t k = 0; k < ARRAY_SIZE(workloads); k++) printf("  %-31s %s\n", workloads[k].name, workloads[k].summary);
        printf("\nscheduler_perf matrix (dralloc bench NAME... [--threads N|A..B|1..max] [--reps R] [--scale F] "
               "[--no-memo] [--build-only] [-o json];\n  dralloc bench scaling NAME... = --threads 1..max):\n");
        bench_matrix_list(stdout);
        return 0;
    }
    int *which = xcalloc((size_t)argc + 1, sizeof *which);
    size_t n = 0;
    bench_opts o = {.out = stdout};
    bench_matrix_opts mo = {.o = &o, .memo = true, .scale = 1.0};
    int rc = -1;
    int i = 1;
    if (argc > 1 && !strcmp(argv[1], "scaling")) {
        parse_threads("1..max", &mo);
        i = 2;
    }
    for (; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int w = bench_matrix_find(a);
        if (w >= 0) {
            which[n++] = w;
        } else if (!strcmp(a, "--no-memo")) {
            mo.memo = false;
        } else if (!strcmp(a, "--build-only")) {
            mo.build_only = true;
        } else if (!strcmp(a, "--threads") && v) {
            if (!parse_threads(v, &mo)) {
                fprintf(stderr, "dralloc bench: --threads needs N, A..B or A..max with 1 <= A <= B <= 64\n");
                rc = 2;
                goto out;
            }
            i++;
        } else if (!strcmp(a, "--scale") && v) {
            char *end;
            errno = 0;
            mo.scale = strtod(v, &end);
            if (!*v || *end || errno || !(mo.scale > 0 && mo.scale <= 100)) {
                fprintf(stderr, "dralloc bench: --scale needs a number in (0, 100]\n");
                rc = 2;
                goto out;
            }
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            if (!parse_count(a, v, 1, &o.reps)) {
                rc = 2;
                goto out;
            }
            i++;
        } else if (!strcmp(a, "-o") && v && (!strcmp(v, "json") || !strcmp(v, "text"))) {
            mo.as_json = !strcmp(v, "json");
            i++;
        } else if (!strcmp(a, "--json") && v) {
            o.json = v;
            i++;
        } else if (argc > 1 && !strcmp(argv[1], "scaling")) {
            fprintf(stderr, "dralloc bench scaling: '%s' is not a matrix workload or option (dralloc bench --list)\n", a);
            rc = 2;
            goto out;
        } else {
            goto out;
        }
    }
    if (n) rc = bench_matrix_run(which, n, &mo);
    else if (argc > 1 && !strcmp(argv[1], "scaling")) {
        fprintf(stderr, "usage: dralloc bench scaling WORKLOAD... [--reps R] [--scale F] [--no-memo] [-o json]\n");
        rc = 2;
    }
out:
    free(which);
    return rc;
}

int cmd_bench(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "e2e")) return cmd_bench_e2e(argc - 1, argv + 1);
    int mrc = matrix_cli(argc, argv);
    if (mrc >= 0) return mrc;
    bench_opts o = {.warmup = 1, .out = stdout};
    const workload *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--devices")) {
            if (!parse_count(a, v, 1, &o.devices)) return 2;
            i++;
        } else if (!strcmp(a, "--reps")) {
            if (!parse_count(a, v, 1, &o.reps)) return 2;
            i++;
        } else if (!strcmp(a, "--warmup")) {
            if (!parse_count(a, v, 0, &o.warmup)) return 2;
            i++;
        } else if (!strcmp(a, "--json")) {
            if (!v) {
                fprintf(stderr, "dralloc bench: --json needs a file name\n");
                return 2;
            }
            o.json = v;
            i++;
        } else if (!strcmp(a, "-o")) {
            if (!v || (strcmp(v, "json") && strcmp(v, "text"))) {
                fprintf(stderr, "dralloc bench: -o needs json or text\n");
                return 2;
            }
            if (!strcmp(v, "json")) o.json = "-";
            i++;
        } else if (!strcmp(a, "--shape") && v) {
            o.shape = v;
            i++;
        } else if (!strcmp(a, "--dump")) {
            if (!v) {
                fprintf(stderr, "dralloc bench: --dump needs a file name (- for stdout)\n");
                return 2;
            }
            o.dump = v;
            i++;
        } else if (a[0] != '-' && !only) {
            for (size_t k = 0; k < ARRAY_SIZE(workloads); k++)
                if (!strcmp(a, workloads[k].name)) only = &workloads[k];
            if (!only) {
                fprintf(stderr, "dralloc bench: unknown workload '%s'\n\n", a);
                usage(stderr);
                return 2;
            }
        } else {
            fprintf(stderr, "dralloc bench: unexpected argument '%s'\n\n", a);
            usage(stderr);
            return 2;
        }
    }
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
