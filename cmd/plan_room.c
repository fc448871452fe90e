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
#include "cmd/flags.h"
#include "cmd/why_room.h"
#include "base/clock.h"
#include "report/report.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Bool cmd_plan_room_wanted(int argc, char **argv) {
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strncmp(argv[i], "--defrag", 8) || !strncmp(argv[i], "--preempt", 9)) return true;
    return false;
}

static void room_usage(FILE *f) {
    fprintf(f, "usage: dralloc plan (--defrag [--max-moves N] | --preempt [--allow-pdb-violations]) -f SNAPSHOT...\n"
               "                    [--workload FILE] [-o table|json] [--report FILE.html] [--feature-gates A=true,...]\n"
               "                    [--timings]\n\n"
               "Room for the pending pods of the snapshot (and the workload's replicas, as pending pods):\n"
               "--defrag moves running pods to other nodes where they fit again (fewest moves first, gangs\n"
               "together, PodDisruptionBudgets respected; at most --max-moves), --preempt evicts pods of lower\n"
               "priority (kube-scheduler's order of preemption candidates; PDBs respected unless\n"
               "--allow-pdb-violations). Stranded devices before and after. Exit 0: every pending pod placed;\n"
               "1: some not; 2: an error.\n");
}

typedef struct room_args {
    cmd_list files;
    const char *workload, *report, *gates, *output;
    bool defrag, preempt, allow_pdb, as_json, timings;
    long max_moves;
} room_args;

static int read_max_moves(const cmd_flag_use *u) {
    char *end;
    long v = strtol(u->value, &end, 10);
    if (!*u->value || *end || v < 0) {
        fprintf(stderr, "dralloc plan: %s %s: want a count (0 or more)\n", u->as, u->value);
        return CMD_PARSE_ERROR;
    }
    *(long *)u->field = v;
    return CMD_PARSE_OK;
}

static int read_room_output(const cmd_flag_use *u) {
    if (strcmp(u->value, "json") && strcmp(u->value, "table")) {
        fprintf(stderr, "dralloc plan: %s %s: --defrag and --preempt print table or json\n", u->as, u->value);
        return CMD_PARSE_ERROR;
    }
    return CMD_PARSE_OK;
}

static const cmd_flag room_flags[] = {
    {.name = "--defrag", .kind = CMD_BOOL, .off = offsetof(room_args, defrag)},
    {.name = "--preempt", .kind = CMD_BOOL, .off = offsetof(room_args, preempt)},
    {.name = "--timings", .kind = CMD_BOOL, .off = offsetof(room_args, timings)},
    {.name = "--allow-pdb-violations", .kind = CMD_BOOL, .off = offsetof(room_args, allow_pdb)},
    {.name = "--filename", .shorthand = "-f", .kind = CMD_PATHS, .off = offsetof(room_args, files)},
    {.name = "--workload", .kind = CMD_STRING, .off = offsetof(room_args, workload)},
    {.name = "--report", .kind = CMD_STRING, .off = offsetof(room_args, report)},
    {.name = "--feature-gates", .kind = CMD_STRING, .off = offsetof(room_args, gates)},
    {.name = "--max-moves", .kind = CMD_FUNC, .off = offsetof(room_args, max_moves), .fn = read_max_moves},
    {.name = "--output", .shorthand = "-o", .kind = CMD_STRING, .off = offsetof(room_args, output),
     .fn = read_room_output},
};

static const cmd_flags room_spec = {
    .prog = "dralloc plan",
    .flags = room_flags,
    .nflags = sizeof room_flags / sizeof room_flags[0],
    .unknown = "dralloc plan: %s: not an option of plan --defrag / --preempt (-f, --workload, --max-moves, "
               "--allow-pdb-violations, -o, --report, --feature-gates, --timings)\n",
    .missing = "dralloc plan: %s needs a value\n",
    .usage = room_usage,
};

static int parse(int argc, char **argv, room_args *a) {
    int rc = cmd_flags_parse(&room_spec, argc, argv, a);
    if (rc) return rc == CMD_PARSE_HELP ? CMD_PARSE_HELP : 2;
    a->as_json = a->output && !strcmp(a->output, "json");
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
    if (!a->files.n) {
        fprintf(stderr, "dralloc plan: --defrag and --preempt read a snapshot: give -f FILE\n");
        return 2;
    }
    return 0;
}

/* The snapshot's objects and the workload's replicas as pending pods. */
static bool load(const room_args *a, plan_objects *objs, err *e) {
    for (size_t i = 0; i < a->files.n; i++)
        if (!plan_objects_load_path(objs, a->files.v[i], e)) return false;
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

static int run(const room_args *a, const plan_objects *objs, const dra_features *f) {
    cmd_room cr;
    if (!cmd_room_open(&cr, objs, f, "dralloc plan")) return 2;
    err e;
    err_clear(&e);
    dra_room *r = cr.r;
    int rc = 2;
    json_t *out = NULL;
    dra_room_status status = DRA_ROOM_ERROR;
    uint64_t t_settle = monotonic_ns();
    if (r) out = a->defrag ? dra_room_defrag(r, a->max_moves, &status, &e) : dra_room_preempt_all(r, a->allow_pdb, &status, &e);
    if (a->timings)
        fprintf(stderr, "dralloc plan: timings: store built %.3f s; %s %.3f s (the room read and every pod settled)\n",
                cr.store_s, a->defrag ? "--defrag" : "--preempt",
                cr.room_s + (double)(monotonic_ns() - t_settle) / 1e9);
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
    cmd_room_close(&cr);
    return rc;
}

int cmd_plan_room(int argc, char **argv) {
    room_args a = {.max_moves = -1};
    int rc = parse(argc, argv, &a);
    if (rc == CMD_PARSE_HELP) {
        cmd_flags_free(&room_spec, &a);
        return 0;
    }
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
    cmd_flags_free(&room_spec, &a);
    return rc;
}
