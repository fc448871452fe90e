/* capacity.c — `dralloc capacity`: what is allocatable, allocated and free in a
 * cluster snapshot (dra_capacity_json), per node, pool, DeviceClass or counter.
 *
 *   dralloc capacity [-f SNAPSHOT...] [-o table|json|csv] [--by node|pool|class|counter|shape]
 *                    [--feature-gates A=true,...]
 *
 * Allocated means held by a claim with status.allocation in the input; free means
 * allocatable now (engine/allocatable.h) on a node that takes pods now: devices of a
 * cordoned, NotReady or NoSchedule/NoExecute-tainted node are blocked "nodes" unless
 * --count-unavailable-nodes. Without -f or a cluster flag, the cluster
 * kubectl would use (kubectl dra capacity). JSON prints the whole view whatever --by
 * says. */
#include "cmd/commands.h"
#include "cmd/kube_input.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "report/report.h"

typedef struct capacity_opts {
    cmd_list files;
    const char *gates;
    report_format fmt;
    report_by by;
    bool count_unavailable;
    cmd_kube_flags kube;
} capacity_opts;

static int read_format(const cmd_flag_use *u) {
    if (report_format_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc capacity: %s %s: want table, json or csv\n", u->as, u->value);
    return CMD_PARSE_ERROR;
}

static int read_by(const cmd_flag_use *u) {
    if (report_by_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc capacity: --by %s: want node, pool, class, counter or shape\n", u->value);
    return CMD_PARSE_ERROR;
}

static void usage(FILE *f);

static const cmd_flag capacity_flags[] = {
    {.name = "--filename", .shorthand = "-f", .kind = CMD_PATHS, .off = offsetof(capacity_opts, files)},
    {.name = "--output", .shorthand = "-o", .kind = CMD_FUNC, .off = offsetof(capacity_opts, fmt), .fn = read_format},
    {.name = "--by", .kind = CMD_FUNC, .off = offsetof(capacity_opts, by), .fn = read_by},
    {.name = "--count-unavailable-nodes", .kind = CMD_BOOL, .off = offsetof(capacity_opts, count_unavailable)},
    CMD_KUBE_ROWS(offsetof(capacity_opts, kube)),
    {.name = "--feature-gates", .kind = CMD_STRING, .off = offsetof(capacity_opts, gates)},
};

static const cmd_flags capacity_spec = {
    .prog = "dralloc capacity",
    .flags = capacity_flags,
    .nflags = sizeof capacity_flags / sizeof capacity_flags[0],
    .unknown = "dralloc capacity: unexpected argument %s\n",
    .missing = "dralloc capacity: %s needs a value\n",
    .usage = usage,
    .usage_after_unknown = true,
};

static void usage(FILE *f) {
    fprintf(f, "usage: dralloc capacity [-f SNAPSHOT...] [-o table|json|csv] [--by node|pool|class|counter|shape]\n"
               "                        [--feature-gates A=true,...] [--count-unavailable-nodes]\n"
               "       dralloc capacity --kubeconfig FILE [--context NAME] ...   (a cluster, read once;\n"
               "                        or --server URL [--token-file F] [--ca-file F] [--insecure-skip-tls-verify]);\n"
               "       without either, the cluster kubectl would use: KUBECONFIG, ~/.kube/config, in-cluster\n"
               "free = allocatable now by a request without tolerations; blocked = not allocated, not allocatable\n"
               "(shared counters used up, an untolerated taint of the device or a DeviceTaintRule, or the node\n"
               "unavailable: cordoned, NotReady or a NoSchedule/NoExecute node taint; --count-unavailable-nodes\n"
               "counts those devices free)\n");
}

int cmd_capacity(int argc, char **argv) {
    capacity_opts a = {.fmt = REPORT_TABLE, .by = REPORT_BY_NODE};
    int rc = cmd_flags_parse(&capacity_spec, argc, argv, &a);
    const char **files = a.files.v, *gates = a.gates;
    size_t nfiles = a.files.n;
    report_format fmt = a.fmt;
    report_by by = a.by;
    bool count_unavailable = a.count_unavailable;
    cmd_kube_flags kube = a.kube;
    /* no file: the cluster kubectl would use (kubectl dra capacity), --context alone included */
    if (!rc && !nfiles) cmd_kube_default(&kube);
    dra_features f;
    dra_features_default(&f);
    err e;
    err_clear(&e);
    if (!rc && gates && !dra_features_parse(&f, gates, &e)) {
        fprintf(stderr, "dralloc capacity: --feature-gates: %s\n", e.msg);
        rc = 2;
    }
    if (!rc) {
        dra_store *st = dra_store_new(&f);
        json_t *live = kube.used ? cmd_kube_fetch(&kube, "dralloc capacity") : NULL;
        bool loaded = kube.used ? live && (!json_array_size(live) || dra_store_apply_json(st, live, &e)) &&
                                      (!nfiles || dra_store_load_paths(st, files, nfiles, &e))
                                : dra_store_load_paths(st, files, nfiles, &e) != 0;
        json_decref(live);
        if (kube.used && !loaded && !e.msg[0]) {
            rc = 2;   /* cmd_kube_fetch said why */
        } else if (!loaded) {
            char buf[2048];
            fprintf(stderr, "dralloc capacity: %s\n", err_format(&e, buf, sizeof buf));
            rc = 2;
        } else {
            dra_snapshot *s = dra_store_acquire(st);
            /* per-counter rows only where they are printed: JSON and --by counter */
            bool counters = fmt == REPORT_JSON || by == REPORT_BY_COUNTER;
            json_t *cap = dra_capacity_json_parts(
                s, NULL, (counters ? DRA_CAPACITY_ALL : 0) | (count_unavailable ? DRA_CAPACITY_COUNT_UNAVAILABLE_NODES : 0));
            report_capacity(stdout, cap, by, fmt);
            json_decref(cap);
            dra_snapshot_release(s);
        }
        dra_store_free(st);
    }
    cmd_flags_free(&capacity_spec, &a);
    return rc < 0 ? 0 : rc;
}
