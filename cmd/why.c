/* why.c — `dralloc why NAMESPACE/POD`: why a pod is pending. The pod is decided against
 * every node of the snapshot (or of the cluster, read once) as kube-scheduler would —
 * its claims, node selector and affinity, taints, cpu, memory and pods — and the
 * answer is kube-scheduler's count by cause (engine/causes.h) with the closest nodes'
 * own explanation, request by request, where kube-scheduler's event only says
 * "cannot allocate all claims".
 *
 *   dralloc why NAMESPACE/POD (-f SNAPSHOT [-f ...] | --kubeconfig F [--context C] | in-cluster)
 *               [-n NAMESPACE] [-o text|json] [--feature-gates ...]
 *   dralloc why -A | --all-namespaces [...]    every pending pod that uses DRA, one line each
 *
 * As `kubectl dra why POD -n NS` (the binary installed as kubectl-dra) the cluster is
 * the kubeconfig's, found as kubectl finds it (--kubeconfig, KUBECONFIG, ~/.kube/config,
 * else the pod's service account). Exit 0 when the pod fits some node, 1 when it fits
 * none, 2 on a usage or input error (the pod not found among the objects). */
#include "cmd/commands.h"
#include "report/report.h"
#include "cmd/kube_input.h"
#include "cmd/why_room.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/causes.h"
#include "engine/engine.h"
#include "planner/planner.h"

enum { WHY_CLOSEST = 3, WHY_FIT_LISTED = 10 };

/* A pod kube-scheduler still has to place: no node, not finished, not being deleted,
 * and using DRA (claims in spec.resourceClaims, or a container limit kube-scheduler
 * would turn into a claim: deviceclass.resource.kubernetes.io/<class>). */
static bool pending_dra_pod(const json_t *p) {
    const json_t *spec = json_object_get(p, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
    if ((node && *node) || json_object_get(json_object_get(p, "metadata"), "deletionTimestamp")) return false;
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) return false;
    if (json_array_size(json_object_get(spec, "resourceClaims"))) return true;
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c) {
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(json_object_get(c, "resources"), "limits"), k, v)
                if (!strncmp(k, "deviceclass.resource.kubernetes.io/", 35)) return true;
        }
    }
    return false;
}

static const char *meta(const json_t *o, const char *k) {
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

/* The Pod ns/name among objects (NULL when absent). */
static json_t *find_pod(const json_t *items, const char *ns, const char *name) {
    size_t i;
    json_t *x;
    json_array_foreach(items, i, x) {
        const char *k = json_string_value(json_object_get(x, "kind"));
        const char *xns = meta(x, "namespace");
        if (k && !strcmp(k, "Pod") && meta(x, "name") && !strcmp(meta(x, "name"), name) &&
            !strcmp(dra_ns(xns), ns))
            return x;
    }
    return NULL;
}

/* The cluster's objects, and the pod itself read fresh (a list may be served from a
 * cache, and a server may not list pods). NULL after printing why. */
static json_t *fetch_live(const cmd_kube_flags *k, const char *ns, const char *name, json_t **pod) {
    err e;
    err_clear(&e);
    ext_kube *kube = ext_kube_new(&k->o, &e);
    if (!kube) {
        fprintf(stderr, "dralloc why: %s\n", e.msg);
        return NULL;
    }
    json_t *notes = json_array();
    json_t *objs = ext_kube_snapshot(kube, notes, &e);
    cmd_kube_print_notes("dralloc why", notes);
    json_decref(notes);
    if (!objs) {
        fprintf(stderr, "dralloc why: %s: %s\n", ext_kube_server(kube), e.msg);
        ext_kube_free(kube);
        return NULL;
    }
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    ext_kube_resp r = {0};
    if (ext_kube_request(kube, "GET", path, NULL, NULL, &r, &e) && r.status == 200) {
        json_t *p = json_loads(r.body, 0, NULL);
        if (json_is_object(p) && !json_object_get(p, "kind")) json_object_set_new(p, "kind", json_string("Pod"));
        *pod = p;
    }
    free(r.body);
    ext_kube_free(kube);
    return objs;
}

/* "claim a: x; claim b: y" as one line per part, indented. */
static void print_reason(FILE *f, const char *r) {
    const char *p = strstr(r, "cannot allocate all claims: ");
    if (!p) {
        fprintf(f, "    %s\n", r);
        return;
    }
    fputs("    cannot allocate all claims:\n", f);
    for (p += strlen("cannot allocate all claims: "); *p;) {
        const char *end = strstr(p, "; ");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        fprintf(f, "      %.*s\n", (int)n, p);
        if (!end) break;
        p = end + 2;
    }
}

static void print_text(FILE *f, const json_t *out) {
    const char *pod = json_string_value(json_object_get(out, "pod"));
    json_int_t nodes = json_integer_value(json_object_get(out, "nodes"));
    const json_t *fits = json_object_get(out, "fitNodes");
    const char *bound = json_string_value(json_object_get(out, "boundTo"));
    if (bound) fprintf(f, "pod %s is bound to node %s (spec.nodeName); decided as if it were pending:\n", pod, bound);
    if (json_array_size(fits)) {
        fprintf(f, "pod %s fits %zu of %lld nodes:", pod, json_array_size(fits), (long long)nodes);
        size_t i;
        json_t *n;
        json_array_foreach(fits, i, n) {
            if (i == WHY_FIT_LISTED) {
                fprintf(f, " and %zu more", json_array_size(fits) - WHY_FIT_LISTED);
                break;
            }
            fprintf(f, " %s", json_string_value(n));
        }
        fputc('\n', f);
        if (!json_array_size(json_object_get(out, "causes"))) return;
        fputs("the others:\n", f);
    } else {
        fprintf(f, "pod %s fits no node.\n", pod);
    }
    const char *err = json_string_value(json_object_get(out, "error"));
    if (err) {
        fprintf(f, "error (every node): %s\n", err);
        return;
    }
    fprintf(f, "%s\n", json_string_value(json_object_get(out, "summary")));
    if (json_is_true(json_object_get(out, "unfittable")))
        fputs("unfittable: no node could run it even with nothing allocated and no pod on it\n", f);
    const json_t *cl = json_object_get(out, "closest");
    /* a pod-level error (a class or template that does not exist) is the one cause on
     * every node: no node is closer than another, and its reason says nothing more */
    const json_t *causes = json_object_get(out, "causes");
    const json_t *c0 = json_array_get(cl, 0);
    if (json_array_size(causes) == 1 &&
        json_integer_value(json_object_get(json_array_get(causes, 0), "nodes")) == json_integer_value(json_object_get(out, "nodes")) &&
        c0 && !strcmp(json_string_value(json_object_get(c0, "cause")), json_string_value(json_object_get(c0, "reason"))))
        return;
    if (json_array_size(cl)) fputs("closest nodes:\n", f);
    size_t i;
    json_t *c;
    json_array_foreach(cl, i, c) {
        fprintf(f, "  %s", json_string_value(json_object_get(c, "node")));
        if (json_object_get(c, "missing"))
            fprintf(f, " (%lld devices missing, %lld matching)", (long long)json_integer_value(json_object_get(c, "missing")),
                    (long long)json_integer_value(json_object_get(c, "matching")));
        fprintf(f, ": %s\n", json_string_value(json_object_get(c, "cause")));
        print_reason(f, json_string_value(json_object_get(c, "reason")));
    }
}

/* The pod against every node of the store's snapshot. */
static json_t *decide(dra_store *st, const json_t *pod, const char *id, int *rc) {
    dra_snapshot *s = dra_store_acquire(st);
    json_t *out = json_object();
    json_object_set_new(out, "schemaVersion", json_integer(REPORT_SCHEMA_VERSION));
    json_object_set_new(out, "pod", json_string(id));
    err e;
    err_clear(&e);
    /* decided as pending: a bound pod's own nodeName would rule out every other node */
    json_t *p = json_deep_copy(pod);
    const char *bound = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (bound && *bound) {
        json_object_set_new(out, "boundTo", json_string(bound));
        json_object_del(json_object_get(p, "spec"), "nodeName");
    }
    dra_pod_request *pr = dra_pod_request_new(s, p, &e);
    size_t nn = dra_snapshot_nnodes(s);
    json_object_set_new(out, "nodes", json_integer((json_int_t)nn));
    if (!pr) {
        char buf[2048];
        fprintf(stderr, "dralloc why: pod %s: %s\n", id, err_format(&e, buf, sizeof buf));
        *rc = 2;
        json_decref(p);
        json_decref(out);
        dra_snapshot_release(s);
        return NULL;
    }
    dra_pod_request_check_node(pr, true);
    const char *fatal = dra_pod_request_error(pr);
    json_t *fits = json_array();
    dra_causes *causes = dra_causes_new();
    bool unfittable = nn > 0;
    if (fatal) {
        json_object_set_new(out, "error", json_string(fatal));
    } else {
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        dra_fit f;
        for (size_t i = 0; i < nn; i++) {
            const char *node = dra_snapshot_node_name(s, i);
            dra_pod_fit(pr, x, node, NULL, DRA_SCORE_NONE, 0, &f);
            if (f.status == DRA_FIT_OK) json_array_append_new(fits, json_string(node));
            else dra_causes_add(causes, node, &f);
            if (f.status != DRA_FIT_UNRESOLVABLE && f.status != DRA_FIT_ERROR) unfittable = false;
        }
        dra_alloc_ctx_free(x);
    }
    char sum[4096];
    dra_causes_summary_others(causes, json_array_size(fits), nn, sum, sizeof sum);
    json_object_set_new(out, "fit", json_integer((json_int_t)json_array_size(fits)));
    json_object_set_new(out, "fitNodes", fits);
    json_object_set_new(out, "summary", json_string(sum));
    json_object_set_new(out, "causes", dra_causes_json(causes));
    json_object_set_new(out, "closest", dra_causes_closest(causes, WHY_CLOSEST));
    json_object_set_new(out, "unfittable", json_boolean(unfittable && !json_array_size(fits)));
    dra_causes_free(causes);
    *rc = json_array_size(fits) ? 0 : 1;
    dra_pod_request_free(pr);
    json_decref(p);
    dra_snapshot_release(s);
    return out;
}

/* `why -A`: every pending DRA pod of the objects (the cluster's, or the files'), each
 * decided as `why NAMESPACE/POD` decides it; a line each (NAMESPACE, POD, where it
 * fits or its count by cause), or {"pods": [...]} of the single answers. Exit 0 when
 * every one fits some node, 1 when one fits none, 2 on an error. */
static int why_all(const char **files, size_t nfiles, cmd_kube_flags *kube, const char *gates, bool as_json) {
    dra_features f;
    dra_features_default(&f);
    err e;
    err_clear(&e);
    if (gates && !dra_features_parse(&f, gates, &e)) {
        fprintf(stderr, "dralloc why: --feature-gates: %s\n", e.msg);
        return 2;
    }
    plan_objects objs;
    plan_objects_init(&objs);
    int rc = 0;
    if (kube->used) {
        json_t *live = cmd_kube_fetch(kube, "dralloc why");
        if (!live) rc = 2;
        else plan_objects_add_doc(&objs, live, kube->o.kubeconfig ? kube->o.kubeconfig : "(cluster)");
        json_decref(live);
    }
    for (size_t i = 0; !rc && i < nfiles; i++)
        if (!plan_objects_load_path(&objs, files[i], &e)) {
            char buf[2048];
            fprintf(stderr, "dralloc why: %s\n", err_format(&e, buf, sizeof buf));
            rc = 2;
        }
    dra_store *st = rc ? NULL : plan_store_new(&objs, &f, &e);
    if (!rc && !st) {
        char buf[2048];
        fprintf(stderr, "dralloc why: %s\n", err_format(&e, buf, sizeof buf));
        rc = 2;
    }
    json_t *all = json_array();
    if (!rc) {
        size_t i;
        json_t *x;
        json_array_foreach(objs.items, i, x) {
            const char *k = json_string_value(json_object_get(x, "kind"));
            if (!k || strcmp(k, "Pod") || !pending_dra_pod(x)) continue;
            char id[800];
            snprintf(id, sizeof id, "%s/%s", dra_ns(meta(x, "namespace")), meta(x, "name") ? meta(x, "name") : "");
            int one = 0;
            json_t *out = decide(st, x, id, &one);
            if (!out) {
                rc = 2;
                continue;
            }
            if (one == 1 && rc == 0) rc = 1;
            json_array_append_new(all, out);
        }
    }
    if (rc != 2 || json_array_size(all)) {
        if (as_json) {
            json_t *doc = json_pack("{s:i, s:O}", "schemaVersion", REPORT_SCHEMA_VERSION, "pods", all);
            json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            fputc('\n', stdout);
            json_decref(doc);
        } else if (!json_array_size(all)) {
            printf("No pending pod uses DRA.\n");
        } else {
            report_why_all(stdout, all);
        }
    }
    json_decref(all);
    dra_store_free(st);
    plan_objects_free(&objs);
    return rc;
}

typedef struct why_opts {
    cmd_list files;
    const char *target, *ns, *gates, *output;
    bool all_ns, make_room, allow_pdb, timings;
    cmd_kube_flags kube;
} why_opts;

static int read_output(const cmd_flag_use *u) {
    if (!strcmp(u->value, "json") || !strcmp(u->value, "text")) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc why: %s %s: want text or json\n", u->as, u->value);
    return CMD_PARSE_ERROR;
}

/* NAMESPACE/POD: one */
static int why_word(void *opts, const char *w) {
    why_opts *o = opts;
    if (o->target || !strcmp(w, "-")) return CMD_PARSE_UNKNOWN;
    o->target = w;
    return CMD_PARSE_OK;
}

static void usage(FILE *f);

static const cmd_flag why_flags[] = {
    /* one file a flag, as kubectl takes it: the pod's name may follow */
    {.name = "--filename", .shorthand = "-f", .kind = CMD_LIST, .off = offsetof(why_opts, files)},
    {.name = "--all-namespaces", .shorthand = "-A", .kind = CMD_BOOL, .off = offsetof(why_opts, all_ns)},
    {.name = "--namespace", .shorthand = "-n", .kind = CMD_STRING, .off = offsetof(why_opts, ns)},
    {.name = "--output", .shorthand = "-o", .kind = CMD_STRING, .off = offsetof(why_opts, output), .fn = read_output},
    CMD_KUBE_ROWS(offsetof(why_opts, kube)),
    {.name = "--feature-gates", .kind = CMD_STRING, .off = offsetof(why_opts, gates)},
    {.name = "--make-room", .kind = CMD_BOOL, .off = offsetof(why_opts, make_room)},
    {.name = "--allow-pdb-violations", .kind = CMD_BOOL, .off = offsetof(why_opts, allow_pdb)},
    {.name = "--timings", .kind = CMD_BOOL, .off = offsetof(why_opts, timings)},
};

static const cmd_flags why_spec = {
    .prog = "dralloc why",
    .flags = why_flags,
    .nflags = sizeof why_flags / sizeof why_flags[0],
    .word = why_word,
    .unknown = "dralloc why: unexpected argument %s\n",
    .missing = "dralloc why: %s needs a value\n",
    .usage = usage,
    .usage_after_unknown = true,
};

static void usage(FILE *f) {
    fprintf(f, "usage: dralloc why NAMESPACE/POD (-f SNAPSHOT [-f ...] | --kubeconfig FILE [--context NAME] | in-cluster)\n"
               "                  [-n NAMESPACE] [-o text|json] [--feature-gates A=true,...]\n"
               "       kubectl dra why POD [-n NAMESPACE] [--context NAME] [--kubeconfig FILE] [-o text|json]\n"
               "       dralloc why NAMESPACE/POD --make-room [--allow-pdb-violations] [...]\n"
               "       kubectl dra why -A   (every pending pod with DRA claims or DRA extended resources, in every\n"
               "                            namespace: one line each, its fit or its count by cause)\n\n"
               "Decides the pod against every node as kube-scheduler would and says why it fits nowhere:\n"
               "the count by cause over all nodes, then the nodes that came closest (fewest devices\n"
               "missing) with each request's explanation. Exit 0: it fits some node; 1: none; 2: error.\n"
               "--make-room: the cheapest lower-priority pods to evict so that it fits (its whole PodGroup),\n"
               "best node first, in kube-scheduler's order of preemption candidates; pods whose eviction would\n"
               "violate a PodDisruptionBudget only with --allow-pdb-violations. Exit 0: some node; 1: none.\n");
}

int cmd_why(int argc, char **argv) {
    why_opts a = {0};
    int rc = cmd_flags_parse(&why_spec, argc, argv, &a);
    const char **files = a.files.v, *target = a.target, *ns_flag = a.ns, *gates = a.gates;
    size_t nfiles = a.files.n;
    bool as_json = a.output && !strcmp(a.output, "json"), all_ns = a.all_ns, make_room = a.make_room,
         allow_pdb = a.allow_pdb, timings = a.timings;
    cmd_kube_flags kube = a.kube;
    if (!rc && all_ns && target) {
        fprintf(stderr, "dralloc why: -A lists every pending pod: give it without a pod\n");
        rc = 2;
    }
    if (!rc && (make_room ? all_ns : allow_pdb)) {
        fprintf(stderr, "dralloc why: %s\n", make_room ? "--make-room is for one pod: give NAMESPACE/POD without -A"
                                                       : "--allow-pdb-violations goes with --make-room");
        rc = 2;
    }
    if (!rc && !target && !all_ns) {
        fprintf(stderr, "dralloc why: which pod? give NAMESPACE/POD (or POD with -n NAMESPACE, or -A for every pending pod)\n");
        usage(stderr);
        rc = 2;
    }
    if (!rc && all_ns) {
        if (!nfiles) cmd_kube_default(&kube);
        rc = why_all(files, nfiles, &kube, gates, as_json);
        cmd_flags_free(&why_spec, &a);
        return rc;
    }
    /* without -f: the cluster, found as kubectl finds it */
    if (!rc && !nfiles) cmd_kube_default(&kube);
    char ns[256] = "default", name[512] = "";
    if (!rc) {
        const char *slash = strchr(target, '/');
        if (slash && ns_flag) {
            fprintf(stderr, "dralloc why: %s names a namespace and -n gives another: give one\n", target);
            rc = 2;
        } else if (slash) {
            snprintf(ns, sizeof ns, "%.*s", (int)(slash - target), target);
            snprintf(name, sizeof name, "%s", slash + 1);
        } else {
            /* as kubectl: -n, else the kubeconfig context's namespace, else default */
            if (ns_flag) snprintf(ns, sizeof ns, "%s", ns_flag);
            else if (kube.used) cmd_kube_namespace(&kube, ns, sizeof ns);
            snprintf(name, sizeof name, "%s", target);
        }
        if (!rc && (!*ns || !*name || strchr(name, '/'))) {
            fprintf(stderr, "dralloc why: %s: want NAMESPACE/POD\n", target);
            rc = 2;
        }
    }
    dra_features f;
    dra_features_default(&f);
    err e;
    err_clear(&e);
    if (!rc && gates && !dra_features_parse(&f, gates, &e)) {
        fprintf(stderr, "dralloc why: --feature-gates: %s\n", e.msg);
        rc = 2;
    }
    plan_objects objs;
    plan_objects_init(&objs);
    json_t *pod = NULL;
    if (!rc && kube.used) {
        json_t *live = fetch_live(&kube, ns, name, &pod);
        if (!live) rc = 2;
        else plan_objects_add_doc(&objs, live, kube.o.kubeconfig ? kube.o.kubeconfig : "(cluster)");
        json_decref(live);
        if (!rc && make_room && !cmd_why_room_fetch(&kube, &objs)) rc = 2;
    }
    for (size_t i = 0; !rc && i < nfiles; i++)
        if (!plan_objects_load_path(&objs, files[i], &e)) {
            char buf[2048];
            fprintf(stderr, "dralloc why: %s\n", err_format(&e, buf, sizeof buf));
            rc = 2;
        }
    char id[800];
    snprintf(id, sizeof id, "%s/%s", ns, name);
    if (!rc && !pod) {
        json_t *p = find_pod(objs.items, ns, name);
        if (p) pod = json_incref(p);
        else {
            fprintf(stderr, "dralloc why: pod %s not found%s\n", id, nfiles ? " in the files given" : " in the cluster");
            rc = 2;
        }
    }
    if (!rc && make_room) {
        rc = cmd_why_make_room(&objs, &f, ns, name, allow_pdb, as_json, timings);
    } else if (!rc) {
        dra_store *st = plan_store_new(&objs, &f, &e);
        if (!st) {
            char buf[2048];
            fprintf(stderr, "dralloc why: %s\n", err_format(&e, buf, sizeof buf));
            rc = 2;
        } else {
            json_t *out = decide(st, pod, id, &rc);
            if (out && as_json) {
                json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                fputc('\n', stdout);
            } else if (out) {
                print_text(stdout, out);
            }
            json_decref(out);
            dra_store_free(st);
        }
    }
    json_decref(pod);
    plan_objects_free(&objs);
    cmd_flags_free(&why_spec, &a);
    return rc < 0 ? 0 : rc;
}
