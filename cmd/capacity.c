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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "report/report.h"

static int usage(FILE *f) {
    fprintf(f, "usage: dralloc capacity [-f SNAPSHOT...] [-o table|json|csv] [--by node|pool|class|counter|shape]\n"
               "                        [--feature-gates A=true,...] [--count-unavailable-nodes]\n"
               "       dralloc capacity --kubeconfig FILE [--context NAME] ...   (a cluster, read once;\n"
               "                        or --server URL [--token-file F] [--ca-file F] [--insecure-skip-tls-verify]);\n"
               "       without either, the cluster kubectl would use: KUBECONFIG, ~/.kube/config, in-cluster\n"
               "free = allocatable now by a request without tolerations; blocked = not allocated, not allocatable\n"
               "(shared counters used up, an untolerated taint of the device or a DeviceTaintRule, or the node\n"
               "unavailable: cordoned, NotReady or a NoSchedule/NoExecute node taint; --count-unavailable-nodes\n"
               "counts those devices free)\n");
    return f == stdout ? 0 : 2;
}

int cmd_capacity(int argc, char **argv) {
    const char **files = xcalloc((size_t)argc + 1, sizeof *files);
    size_t nfiles = 0;
    const char *gates = NULL;
    report_format fmt = REPORT_TABLE;
    report_by by = REPORT_BY_NODE;
    bool count_unavailable = false;
    cmd_kube_flags kube = {0};
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *o = argv[i];
        bool takes = i + 1 < argc;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            rc = -1;
        } else if ((!strcmp(o, "-f") || !strcmp(o, "--filename")) && takes) {
            files[nfiles++] = argv[++i];
            while (i + 1 < argc && argv[i + 1][0] != '-') files[nfiles++] = argv[++i];
        } else if (!strcmp(o, "-o") && takes) {
            if (!report_format_parse(argv[++i], &fmt)) {
                fprintf(stderr, "dralloc capacity: -o %s: want table, json or csv\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(o, "--by") && takes) {
            if (!report_by_parse(argv[++i], &by)) {
                fprintf(stderr, "dralloc capacity: --by %s: want node, pool, class, counter or shape\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(o, "--count-unavailable-nodes")) {
            count_unavailable = true;
        } else if (cmd_kube_flag(argc, argv, &i, &kube)) {
        } else if (!strcmp(o, "--feature-gates") && takes) {
            gates = argv[++i];
        } else if (!strncmp(o, "--feature-gates=", 16)) {
            gates = o + 16;
        } else {
            fprintf(stderr, "dralloc capacity: unexpected argument %s\n", o);
            rc = usage(stderr);
        }
    }
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
    free(files);
    return rc < 0 ? 0 : rc;
}
