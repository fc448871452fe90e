/* plan_room.c — `dralloc plan --defrag [--max-moves N]` and `dralloc plan --preempt`:
 * room for the pending pods of a snapshot (and the replicas of a workload file, as
 * pending pods) made by moving running pods to other nodes (--defrag) or by evicting
 * pods of lower priority (--preempt), engine/preempt.h:
 *
 *   dralloc plan (--defrag [--max-moves N] | --preempt [--allow-pdb-violations])
 *                -f SNAPSHOT... [--workload FILE] [-o table|json] [--report FILE.html]
 *                [--feature-gates A=true,...]
 *
 * JSON: {"pods": [...], "moves": [{"pod", "from", "to"}] (--defrag) or "evictions":
 * [{"pod", "node", "by"}] (--preempt), "strandedBefore", "strandedAfter"}. Exit 0:
 * every pending pod placed; 1: some not; 2: an error. */
#include "cmd/commands.h"
#include "cmd/why_room.h"
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Bool cmd_plan_room_wanted(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--defrag") || !strcmp(argv[i], "--preempt")) return true;
    return false;
}

typedef struct room_args {
    const char **files;
    size_t nfiles;
    const char *workload, *report, *gates;
    bool defrag, preempt, allow_pdb, as_json, timings;
    long max_moves;
} room_args;

static int parse(int argc, char **argv, room_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool takes = i + 1 < argc;
        if (!strcmp(o, "--defrag")) {
            a->defrag = true;
        } else if (!strcmp(o, "--preempt")) {
            a->preempt = true;
        } else if (!strcmp(o, "--timings")) {
            a->timings = true;
        } else if (!strcmp(o, "--allow-pdb-violations")) {
            a->allow_pdb = true;
        } else if ((!strcmp(o, "-f") || !strcmp(o, "--filename")) && takes) {
            a->files[a->nfiles++] = argv[++i];
            while (i + 1 < argc && argv[i + 1][0] != '-') a->files[a->nfiles++] = argv[++i];
        } else if (!strcmp(o, "--workload") && takes) {
            a->workload = argv[++i];
        } else if (!strcmp(o, "--report") && takes) {
            a->report = argv[++i];
        } else if (!strcmp(o, "--feature-gates") && takes) {
            a->gates = argv[++i];
        } else if (!strcmp(o, "--max-moves") && takes) {
            char *end;
            a->max_moves = strtol(argv[++i], &end, 10);
            if (*end || a->max_moves < 0) {
                fprintf(stderr, "dralloc plan: --max-moves %s: want a count (0 or more)\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(o, "-o") && takes) {
            const char *v = argv[++i];
            if (strcmp(v, "json") && strcmp(v, "table")) {
                fprintf(stderr, "dralloc plan: -o %s: --defrag and --preempt print table or json\n", v);
                return 2;
            }
            a->as_json = !strcmp(v, "json");
        } else {
            fprintf(stderr, "dralloc plan: %s: not an option of plan --defrag / --preempt "
                            "(-f, --workload, --max-moves, --allow-pdb-violations, -o, --report, --feature-gates, --timings)\n", o);
            return 2;
        }
    }
    if (a->defrag == a->preempt) {
        fprintf(stderr, "dralloc plan: give one of --defrag and --preempt\n");
        return 2;
    }
    if (a->max_moves >= 0 && a->preempt) {
        fprintf(stderr, "dralloc plan: --max-moves goes with --defrag\n");
        return 2;
    }
    if (a->allow_pdb && a->defrag) {
        fprintf(stderr, "dralloc plan: --defrag never violates a PodDisruptionBudget: --allow-pdb-violations goes with --preempt\n");
        return 2;
    }
    if (!a->nfiles) {
        fprintf(stderr, "dralloc plan: --defrag and --preempt read a snapshot: give -f FILE\n");
        return 2;
    }
    return 0;
}

/* The snapshot's objects and the workload's replicas as pending pods. */
static bool load(const room_args *a, plan_objects *objs, err *e) {
    for (size_t i = 0; i < a->nfiles; i++)
        if (!plan_objects_load_path(objs, a->files[i], e)) return false;
    if (!a->workload) return true;
    plan_workloads w = {0};
    if (!plan_workloads_load(a->workload, &w, objs, e)) return false;
    for (size_t k = 0; k < w.n; k++)
        for (long rep = 0; rep < w.v[k].replicas; rep++) {
            json_t *p = plan_replica_pod(&w.v[k], rep);
            json_object_set_new(p, "kind", json_string("Pod"));
            json_object_set_new(p, "apiVersion", json_string("v1"));
            json_array_append_new(objs->items, p);
            json_array_append_new(objs->sources, json_string(a->workload));
        }
    plan_workloads_free(&w);
    return true;
}

static double secs_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int run(const room_args *a, const plan_objects *objs, const dra_features *f) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err e;
    err_clear(&e);
    /* the store takes the objects but the two kinds only the room reads */
    dra_store *st = plan_store_new(objs, f, &e);
    if (!st) {
        char buf[2048];
        fprintf(stderr, "dralloc plan: %s\n", err_format(&e, buf, sizeof buf));
        return 2;
    }
    dra_snapshot *s = dra_store_acquire(st);
    double store_s = secs_since(&t0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    dra_room *r = dra_room_new(s, objs->items, &e);
    int rc = 2;
    json_t *out = NULL;
    dra_room_status status = DRA_ROOM_ERROR;
    if (r) out = a->defrag ? dra_room_defrag(r, a->max_moves, &status, &e) : dra_room_preempt_all(r, a->allow_pdb, &status, &e);
    if (a->timings)
        fprintf(stderr, "dralloc plan: timings: store built %.3f s; %s %.3f s (the room read and every pod settled)\n",
                store_s, a->defrag ? "--defrag" : "--preempt", secs_since(&t1));
    if (!out) {
        fprintf(stderr, "dralloc plan: %s\n", e.msg);
    } else {
        rc = status == DRA_ROOM_FOUND ? 0 : 1;
        if (a->as_json) {
            json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            fputc('\n', stdout);
        } else {
            report_room(stdout, out);
        }
        if (a->report) {
            FILE *hf = fopen(a->report, "w");
            if (!hf) {
                fprintf(stderr, "dralloc plan: --report %s: cannot write it\n", a->report);
                rc = 2;
            } else {
                report_room_html(hf, out, a->defrag ? "dralloc plan --defrag" : "dralloc plan --preempt");
                fclose(hf);
            }
        }
    }
    json_decref(out);
    dra_room_free(r);
    dra_snapshot_release(s);
    dra_store_free(st);
    return rc;
}

int cmd_plan_room(int argc, char **argv) {
    room_args a = {.max_moves = -1};
    a.files = xcalloc((size_t)argc + 1, sizeof *a.files);
    int rc = parse(argc, argv, &a);
    dra_features f;
    dra_features_default(&f);
    err e;
    err_clear(&e);
    if (!rc && a.gates && !dra_features_parse(&f, a.gates, &e)) {
        fprintf(stderr, "dralloc plan: --feature-gates: %s\n", e.msg);
        rc = 2;
    }
    plan_objects objs;
    plan_objects_init(&objs);
    if (!rc && !load(&a, &objs, &e)) {
        char buf[2048];
        fprintf(stderr, "dralloc plan: %s\n", err_format(&e, buf, sizeof buf));
        rc = 2;
    }
    if (!rc) rc = run(&a, &objs, &f);
    plan_objects_free(&objs);
    free(a.files);
    return rc;
}
