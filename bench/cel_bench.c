/* cel_bench.c — the CEL selector workload: generate the bench.js devices, build
 * their CEL views, compile E1..E5 once, then per expression one warm-up pass and
 * R timed passes of cel_eval_bool over every device, then the same with one
 * cel_eval_bool_many call per pass (the batch form: one call for a device set; the
 * engine calls cel_eval_bool per device). The per-device pass counts matches without
 * a branch on the result, as the floor's pass does: a branch there mispredicts on
 * about a third of E1's devices, the harness's cost, not CEL's. Each pass's match count must
 * equal the plain-C reference count (and for N = 100000 the reference counts must
 * equal bench.js's published ones, which proves the generator port); any
 * difference or evaluation error is reported as MISMATCH and fails the run.
 * Then the same passes of two plain-C predicates per expression, and CEL's cost as
 * a multiple of them: the floor (cel_floor.c, hand-written over the same views)
 * and the reference predicate (cel_exprs.c, over the canonical devices). */
#include "bench/bench.h"
#include "bench/cel_exprs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cel_pass {
    const cel_program *prog;
    const cel_device *views;
    size_t n;
    cel_eval_ctx *ctx;
    err e;
    uint64_t matches, errors;       /* of the last pass */
    bool varied;                    /* a pass counted differently from the one before */
    size_t passes;
    char first_error[ERR_MSG_MAX];
    cel_result *out;                /* n results, for cel_eval_bool_many */
} cel_pass;

static void cel_pass_count(cel_pass *p, uint64_t matches, uint64_t errors) {
    if (p->passes++ && (matches != p->matches || errors != p->errors)) p->varied = true;
    p->matches = matches;
    p->errors = errors;
}

static uint64_t cel_pass_run(void *arg) {
    cel_pass *p = arg;
    uint64_t matches = 0, errors = 0;
    for (size_t i = 0; i < p->n; i++) {
        cel_result r = cel_eval_bool(p->prog, &p->views[i], p->ctx, &p->e);
        matches += r == CEL_TRUE;
        if (UNLIKELY(r == CEL_ERROR)) {
            if (!errors && !p->first_error[0]) snprintf(p->first_error, sizeof p->first_error, "%s", p->e.msg);
            errors++;
        }
    }
    cel_pass_count(p, matches, errors);
    return p->n;
}

static uint64_t cel_pass_run_many(void *arg) {
    cel_pass *p = arg;
    size_t first = SIZE_MAX;
    uint64_t matches = cel_eval_bool_many(p->prog, p->views, p->n, p->ctx, p->out, &p->e, &first), errors = 0;
    if (UNLIKELY(first != SIZE_MAX)) {   /* the error path only: count them */
        if (!p->first_error[0]) snprintf(p->first_error, sizeof p->first_error, "%s", p->e.msg);
        for (size_t i = first; i < p->n; i++) errors += p->out[i] == CEL_ERROR;
    }
    cel_pass_count(p, matches, errors);
    return p->n;
}

/* One expression's results; [0] per-device cel_eval_bool, [1] cel_eval_bool_many. */
typedef struct cel_row {
    uint64_t ref, matches[2], errors[2];
    bool ok, varied[2];
    bench_stats st[2];
    char first_error[2][ERR_MSG_MAX];
    /* the plain-C predicates: [0] the reference over the canonical devices,
     * [1] the floor over the same views (cel_floor.c) */
    bench_stats c[2];
    uint64_t c_matches[2];
    /* cycles and instructions per evaluation (all passes, warm-up included), from the
     * thread's hardware counters: [0] cel_eval_bool, [1] batch, [2] C ref, [3] C view */
    double cyc[4], ins[4];
    double cpu[4];   /* CPU time of the thread per evaluation (all passes): not the waits for a core */
    bool skipped;    /* not in DRALLOC_BENCH_ONLY */
} cel_row;

/* Runs the passes and adds the counters' cycles and instructions per operation. */
static void run_counted(const bench_counters *hc, bench_pass_fn fn, void *arg, size_t warmup, size_t reps, size_t n,
                        bench_run *run, double *cpu, double *cyc, double *ins) {
    uint64_t c0, i0, c1, i1;
    bench_counters_read(hc, &c0, &i0);
    uint64_t t0 = bench_cpu_ns();
    bench_run_passes(fn, arg, warmup, reps, run);
    uint64_t t1 = bench_cpu_ns();
    bench_counters_read(hc, &c1, &i1);
    double ops = (double)(warmup + reps) * (double)(n ? n : 1);
    *cpu = (double)(t1 - t0) / ops;
    *cyc = (double)(c1 - c0) / ops;
    *ins = (double)(i1 - i0) / ops;
}

/* One pass of a plain-C predicate over every device. */
typedef struct c_pass {
    size_t i, n;
    const bench_celdev *devs;         /* the reference: canonical devices */
    const cel_device *views;          /* the floor: the CEL views */
    const bench_cel_floor *floor;
    uint64_t matches;
} c_pass;

static uint64_t c_pass_ref(void *arg) {
    c_pass *p = arg;
    p->matches = bench_cel_ref_count(p->i, p->devs, p->n);
    return p->n;
}

static uint64_t c_pass_floor(void *arg) {
    c_pass *p = arg;
    p->matches = bench_cel_floor_count(p->floor, p->i, p->views, p->n);
    return p->n;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static const char *const cel_mode_name[2] = {"cel_eval_bool", "cel_eval_bool_many"};

static void write_json(const bench_opts *o, size_t n, size_t reps, size_t warmup, const cel_row *rows) {
    FILE *f = fopen(o->json, "w");
    if (!f) {
        fprintf(stderr, "dralloc bench cel: cannot write %s\n", o->json);
        return;
    }
    fprintf(f, "{\n \"tool\": \"dralloc bench cel\",\n \"N\": %zu,\n \"reps\": %zu,\n \"warmup\": %zu,\n"
               " \"expressions\": [\n", n, reps, warmup);
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) {
        const cel_row *r = &rows[i];
        fprintf(f,
                "  {\"id\": \"%s\", \"matches\": %llu, \"refMatches\": %llu, \"errors\": %llu, "
                "\"nsPerEvalMedian\": %.2f, \"nsPerEvalP90\": %.2f, \"nsPerEvalP99\": %.2f, \"nsPerEvalMin\": %.2f, "
                "\"evalsPerSec\": %.0f, \"batchMatches\": %llu, \"batchErrors\": %llu, "
                "\"batchNsPerEvalMedian\": %.2f, \"batchNsPerEvalP99\": %.2f, \"batchNsPerEvalMin\": %.2f, "
                "\"cViewNsPerEvalMedian\": %.2f, \"cViewNsPerEvalMin\": %.2f, \"celOverCView\": %.2f, "
                "\"celOverCViewMin\": %.2f, \"cRefNsPerEvalMedian\": %.2f, \"cRefNsPerEvalMin\": %.2f, "
                "\"celOverCRef\": %.2f, \"celOverCRefMin\": %.2f, \"cyclesPerEval\": %.1f, "
                "\"instructionsPerEval\": %.1f, \"cpuNsPerEval\": %.2f, \"cViewCpuNsPerEval\": %.2f, "
                "\"celOverCViewCpu\": %.2f, \"batchCyclesPerEval\": %.1f, \"cViewCyclesPerEval\": %.1f, "
                "\"cViewInstructionsPerEval\": %.1f, \"cRefCyclesPerEval\": %.1f, \"celOverCViewCycles\": %.2f, "
                "\"crossCheck\": \"%s\"}%s\n",
                bench_cel_exprs[i].id, (unsigned long long)r->matches[0], (unsigned long long)r->ref,
                (unsigned long long)r->errors[0], r->st[0].median, r->st[0].p90, r->st[0].p99, r->st[0].min,
                r->st[0].median > 0 ? 1e9 / r->st[0].median : 0, (unsigned long long)r->matches[1],
                (unsigned long long)r->errors[1], r->st[1].median, r->st[1].p99, r->st[1].min, r->c[1].median,
                r->c[1].min, ratio(r->st[0].median, r->c[1].median), ratio(r->st[0].min, r->c[1].min), r->c[0].median,
                r->c[0].min, ratio(r->st[0].median, r->c[0].median), ratio(r->st[0].min, r->c[0].min), r->cyc[0], r->ins[0], r->cpu[0], r->cpu[3],
                ratio(r->cpu[0], r->cpu[3]), r->cyc[1],
                r->cyc[3], r->ins[3], r->cyc[2], ratio(r->cyc[0], r->cyc[3]), r->ok ? "ok" : "MISMATCH", i + 1 < BENCH_CEL_NEXPRS ? "," : "");
    }
    fprintf(f, " ]\n}\n");
    fclose(f);
}

int bench_cel_main(const bench_opts *o) {
    FILE *out = o->out ? o->out : stdout;
    size_t n = o->devices ? o->devices : BENCH_CEL_DEFAULT_DEVICES;
    size_t reps = o->reps ? o->reps : BENCH_CEL_DEFAULT_REPS;
    size_t warmup = o->warmup;
    int status = 0;

    bench_celdev *devs = bench_celdevs_make(n, BENCH_CEL_SEED);
    if (o->dump) {
        FILE *f = strcmp(o->dump, "-") ? fopen(o->dump, "w") : out;
        if (!f) {
            fprintf(stderr, "dralloc bench cel: cannot write %s\n", o->dump);
            free(devs);
            return 1;
        }
        bench_celdevs_dump(devs, n, f);
        if (f != out) fclose(f);
        free(devs);
        return 0;
    }
    uint64_t nattrs = 0;
    for (size_t i = 0; i < n; i++) nattrs += bench_celdev_nattrs(&devs[i]);

    cel_row rows[BENCH_CEL_NEXPRS] = {0};
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) {
        rows[i].ref = bench_cel_ref_count(i, devs, n);
        if (n == 100000 && rows[i].ref != bench_cel_exprs[i].ref_matches_100k) {
            fprintf(out, "MISMATCH: %s: reference predicate matches %llu devices, bench.js %llu "
                         "(the generator is not bench.js's makeDevices)\n",
                    bench_cel_exprs[i].id, (unsigned long long)rows[i].ref,
                    (unsigned long long)bench_cel_exprs[i].ref_matches_100k);
            status = 1;
        }
    }

    intern_table *names = intern_new();
    arena a;
    arena_init(&a, 1 << 20);
    err e = {0};
    cel_env *env = NULL;
    cel_eval_ctx *ctx = NULL;
    cel_program *progs[BENCH_CEL_NEXPRS] = {0};
    bench_cel_floor *floor = NULL;
    bench_counters hc = {{-1, -1}};
    bool have_counters = false;
    cel_device *views = bench_celdevs_views(devs, n, names, &a, &e);
    if (!views) {
        fprintf(out, "dralloc bench cel: %s\n", e.msg);
        status = 1;
        goto done;
    }
    /* Names are interned before compiling, as the engine does at ingest. */
    env = cel_env_new_dra(names);
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) {
        err_clear(&e);
        const char *src = bench_cel_exprs[i].cel;
        progs[i] = cel_compile(env, src, strlen(src), &e);
        if (!progs[i]) {
            fprintf(out, "dralloc bench cel: %s: compile error: %s\n", bench_cel_exprs[i].id, e.msg);
            status = 1;
            goto done;
        }
    }
    ctx = cel_eval_ctx_new();
    floor = bench_cel_floor_new(names);
    have_counters = bench_counters_open(&hc);

    fprintf(out, "dralloc bench cel: N=%zu devices (avg %.1f attributes, 2 capacities), seed %d; "
                 "%zu warm-up + %zu timed passes per expression; %ld CPUs online\n",
            n, n ? (double)nattrs / (double)n : 0.0, BENCH_CEL_SEED, warmup, reps, sysconf(_SC_NPROCESSORS_ONLN));
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
    fprintf(out, "note: debug or sanitizer build, figures are not representative (use build-release/dralloc)\n");
#endif
    static const char *const head[] = {"expression", "matches", "ref", "errors", "median ns/eval", "p90",
                                       "p99", "min", "evals/s", "batch median", "batch min", "check"};
    bench_table *t = bench_table_new(head, ARRAY_SIZE(head));
    cel_result *results = xcalloc(n ? n : 1, sizeof *results);
    /* DRALLOC_BENCH_ONLY=E2,E4: time only these expressions (for perf / callgrind) */
    const char *only = getenv("DRALLOC_BENCH_ONLY");
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) {
        cel_row *r = &rows[i];
        r->ok = true;
        if (only && !strstr(only, (char[3]){bench_cel_exprs[i].id[0], bench_cel_exprs[i].id[1], 0})) {
            r->skipped = true;
            continue;
        }
        for (int m = 0; m < 2; m++) {
            cel_pass *p = xcalloc(1, sizeof *p);
            *p = (cel_pass){.prog = progs[i], .views = views, .n = n, .ctx = ctx, .out = results};
            bench_run run;
            run_counted(&hc, m ? cel_pass_run_many : cel_pass_run, p, warmup, reps, n, &run, &r->cpu[m], &r->cyc[m], &r->ins[m]);
            r->matches[m] = p->matches;
            r->errors[m] = p->errors;
            r->st[m] = run.stats;
            r->varied[m] = p->varied;
            if (p->matches != r->ref || p->errors || p->varied) r->ok = false;
            snprintf(r->first_error[m], sizeof r->first_error[m], "%s", p->first_error);
            bench_run_free(&run);
            free(p);
        }
        for (int m = 0; m < 2; m++) {
            c_pass cp = {.i = i, .n = n, .devs = devs, .views = views, .floor = floor};
            bench_run run;
            run_counted(&hc, m ? c_pass_floor : c_pass_ref, &cp, warmup, reps, n, &run, &r->cpu[2 + m], &r->cyc[2 + m],
                        &r->ins[2 + m]);
            r->c[m] = run.stats;
            r->c_matches[m] = cp.matches;
            if (cp.matches != r->ref) r->ok = false;
            bench_run_free(&run);
        }
        if (!r->ok) status = 1;
        char b[7][32];
        bench_table_addf(t, "%s", bench_cel_exprs[i].id);
        bench_table_addf(t, "%llu", (unsigned long long)r->matches[0]);
        bench_table_addf(t, "%llu", (unsigned long long)r->ref);
        bench_table_addf(t, "%llu", (unsigned long long)r->errors[0]);
        bench_table_addf(t, "%s", bench_fmt_ns(r->st[0].median, b[0], sizeof b[0]));
        bench_table_addf(t, "%s", bench_fmt_ns(r->st[0].p90, b[1], sizeof b[1]));
        bench_table_addf(t, "%s", bench_fmt_ns(r->st[0].p99, b[2], sizeof b[2]));
        bench_table_addf(t, "%s", bench_fmt_ns(r->st[0].min, b[3], sizeof b[3]));
        bench_table_addf(t, "%s", bench_fmt_rate(r->st[0].median > 0 ? 1e9 / r->st[0].median : 0, b[4], sizeof b[4]));
        bench_table_addf(t, "%s", bench_fmt_ns(r->st[1].median, b[5], sizeof b[5]));
        bench_table_addf(t, "%s", bench_fmt_ns(r->st[1].min, b[6], sizeof b[6]));
        bench_table_addf(t, "%s", r->ok ? "ok" : "MISMATCH");
    }
    free(results);
    bench_table_print(t, out);
    bench_table_free(t);
    fprintf(out, "ns/eval per timed pass (pass time / N) of cel_eval_bool per device: median, p90, p99, min over the "
                 "%zu passes; batch: one cel_eval_bool_many call per pass\n", reps);
    static const char *const fhead[] = {"expression",     "CEL ns/eval",    "C view ns/eval", "CEL / C view",
                                        "CEL cpu ns",     "C view cpu ns",  "CEL / C view cpu",
                                        "C ref ns/eval",  "CEL / C ref",    "C check",
                                        "CEL cycles",     "C view cycles",  "CEL / C view cycles"};
    bench_table *ft = bench_table_new(fhead, ARRAY_SIZE(fhead) - (have_counters ? 0 : 3));
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) {
        const cel_row *r = &rows[i];
        if (r->skipped) continue;
        bench_table_addf(ft, "%s", bench_cel_exprs[i].id);
        bench_table_addf(ft, "%.1f / %.1f", r->st[0].median, r->st[0].min);
        bench_table_addf(ft, "%.1f / %.1f", r->c[1].median, r->c[1].min);
        bench_table_addf(ft, "%.1fx / %.1fx", ratio(r->st[0].median, r->c[1].median), ratio(r->st[0].min, r->c[1].min));
        bench_table_addf(ft, "%.1f", r->cpu[0]);
        bench_table_addf(ft, "%.1f", r->cpu[3]);
        bench_table_addf(ft, "%.1fx", ratio(r->cpu[0], r->cpu[3]));
        bench_table_addf(ft, "%.1f / %.1f", r->c[0].median, r->c[0].min);
        bench_table_addf(ft, "%.1fx / %.1fx", ratio(r->st[0].median, r->c[0].median), ratio(r->st[0].min, r->c[0].min));
        bench_table_addf(ft, "%s", r->c_matches[0] == r->ref && r->c_matches[1] == r->ref ? "ok" : "MISMATCH");
        if (have_counters) {
            bench_table_addf(ft, "%.0f", r->cyc[0]);
            bench_table_addf(ft, "%.0f", r->cyc[3]);
            bench_table_addf(ft, "%.1fx", ratio(r->cyc[0], r->cyc[3]));
        }
    }
    fprintf(out, "\nCEL against plain C, ns/eval median / min over the passes: C view = the selector hand-written in C over the same device views "
                 "(cel_floor.c: ids and constants resolved once, attributes scanned as CEL scans them), the floor of a "
                 "selector evaluation on this representation; cpu ns: the thread's CPU time per evaluation over all "
                 "passes (what waiting for a core on a shared machine does not inflate; cycles likewise, from the "
                 "hardware counters where the machine has them); C ref = the reference predicate over the canonical "
                 "devices (table indexes, quantities and versions parsed from text per call)\n");
    bench_table_print(ft, out);
    bench_table_free(ft);
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) {
        const cel_row *r = &rows[i];
        for (int m = 0; m < 2 && !r->ok; m++) {
            if (r->matches[m] == r->ref && !r->errors[m] && !r->varied[m]) continue;
            fprintf(out, "MISMATCH: %s (%s): %llu matches and %llu errors, reference %llu matches%s\n",
                    bench_cel_exprs[i].id, cel_mode_name[m], (unsigned long long)r->matches[m],
                    (unsigned long long)r->errors[m], (unsigned long long)r->ref,
                    r->varied[m] ? "; counts differ between passes" : "");
            if (r->errors[m]) fprintf(out, "  first evaluation error: %s\n", r->first_error[m]);
        }
    }
    if (o->json) write_json(o, n, reps, warmup, rows);

done:
    bench_counters_close(&hc);
    bench_cel_floor_free(floor);
    cel_eval_ctx_free(ctx);
    for (size_t i = 0; i < BENCH_CEL_NEXPRS; i++) cel_program_free(progs[i]);
    cel_env_free(env);
    arena_free(&a);
    intern_free(names);
    free(devs);
    return status;
}
