/* plan.c — `dralloc plan`: offline capacity planning (planner/planner.h) rendered by
 * report/ (report.h).
 *
 *   dralloc plan -f SNAPSHOT... --workload FILE [-o table|json|csv] [--report FILE.html]
 *                [--score binpack|spread] [--seed N] [--headroom-max N] [--device-choice C]
 *                [--add-nodes SHAPE.yaml:COUNT]... [--remove-nodes SELECTOR]...
 *                [--min-nodes SHAPE.yaml]... [--max-nodes N] [--price SHAPE=X,...]
 *                [--feature-gates ...] [--strict] [--timings]
 *   dralloc plan -f SNAPSHOT... --scenarios DIR [--shard i/N] ...   every workload file
 *                of DIR (name order), or those with index % N == i; the output carries
 *                the digests of the snapshot and of the scenario set, and i/N
 *   dralloc plan merge A.json B.json... [-o table|json|csv]        sharded outputs joined
 *                (refused: a shard missing, given twice, or of another run)
 *
 * Replicas that do not fit are an answer, not a failure: exit 0. Exit 1 when a
 * scenario could not be planned (its objects do not load), 2 on usage or input
 * errors. */
#include "cmd/commands.h"
#include "cmd/kube_input.h"

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "planner/planner.h"
#include "report/report.h"

static int usage(FILE *f) {
    fprintf(f,
            "usage: dralloc plan -f SNAPSHOT... (--workload FILE | --scenarios DIR [--shard i/N])\n"
            "                    [-o table|json|csv] [--csv-dir DIR] [--report FILE.html] [--score binpack|spread] [--seed N]\n"
            "                    [--device-choice first-fit|best-fit]\n"
            "                    [--headroom-max N] [--add-nodes SHAPE.yaml:COUNT]... [--remove-nodes SELECTOR]...\n"
            "                    [--min-nodes SHAPE.yaml]... [--max-nodes N] [--price SHAPE=X,...]\n"
            "                    [--feature-gates A=true,...] [--strict] [--timings]\n"
            "       -f may be replaced or completed by a cluster read once: --kubeconfig FILE [--context NAME],\n"
            "       or --server URL [--token-file F] [--ca-file F] [--insecure-skip-tls-verify]\n"
            "       dralloc plan merge A.json B.json... [-o table|json|csv]\n"
            "       dralloc plan (--defrag [--max-moves N] | --preempt [--allow-pdb-violations]) -f SNAPSHOT...\n"
            "                    [--workload FILE] [-o table|json] [--report FILE.html]: room for the pending pods\n"
            "                    by moving running pods elsewhere, or by evicting pods of lower priority\n\n"
            "Places each workload's replicas (<workload>-<i>) one by one as kube-scheduler would: every node\n"
            "tried, the best score wins (ties by node name, or shuffled by --seed), the winner committed.\n"
            "The workload file (YAML or JSON) holds {\"workloads\": [{name, replicas, template, gang?}]}\n"
            "and may carry more objects (ResourceClaimTemplates, ...), in other documents or \"objects\".\n"
            "  --headroom-max N  bound on the extra replicas counted per workload (default 1000; 0: off)\n"
            "  --device-choice   the devices a replica gets on its node: first-fit (default, as kube-scheduler)\n"
            "                    or best-fit (the allocation leaving the node least fragmented)\n"
            "  --add-nodes       COUNT copies of the Node (and its ResourceSlices) in SHAPE.yaml\n"
            "  --remove-nodes    drop the Nodes a label selector matches (kubectl -l: k=v, k!=v, k in (a,b),\n"
            "                    k notin (a,b), k, !k; comma-joined) and their node-local ResourceSlices\n"
            "  --min-nodes       the fewest copies of SHAPE.yaml (<= --max-nodes, 1024) for each workload on its own\n"
            "                    and for all of them, under binpack and spread scoring; a workload no count helps\n"
            "                    is named with its cause and left out of the count. Once per shape; a shape is\n"
            "                    named by its Node\n"
            "  --price           SHAPE=X,...: the price of a node of each shape: the cheapest mix of the shapes\n"
            "                    that places every workload some shape helps (binpack scoring), what to buy\n"
            "  --strict          an unknown field in the workload file (its pod templates' included) is an error\n"
            "                    (else a warning); a value of the wrong type always is\n"
            "  --csv-dir DIR     also write the CSV tables one per file: DIR/workloads.csv, placements.csv,\n"
            "                    nodes.csv, classes.csv (-o csv prints them one after another)\n"
            "  --timings         how long loading, planning and rendering took, on stderr\n");
    return f == stdout ? 0 : 2;
}

/* ---- progress: stderr only, only on a terminal, only once the run is long ---------- */

typedef struct progress_state {
    uint64_t start_ns, last_ns;
    bool shown;
} progress_state;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress_cb(void *arg, size_t done, size_t total) {
    progress_state *p = arg;
    uint64_t t = now_ns();
    if (t - p->start_ns < 1000000000ull || (t - p->last_ns < 100000000ull && done < total)) return;
    p->last_ns = t;
    p->shown = true;
    int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
    fprintf(stderr, "\rplan [%.*s%*s] %zu/%zu replicas", fill, "##############################", width - fill, "", done, total);
    if (done == total) fputc('\n', stderr);
}

/* ---- options --------------------------------------------------------------------------- */

typedef struct plan_args {
    char **files;
    int nfiles;
    const char *workload, *scenarios, *shard, *report, *gates;
    const char *csv_dir;         /* --csv-dir: the CSV tables one per file */
    const char **adds, **removes, **min_shapes, **prices;
    int nadds, nremoves, nmin, nprices;
    long max_nodes;
    bool strict, timings;
    report_format fmt;
    plan_opts opts;
    cmd_kube_flags kube;         /* a cluster read once as (part of) the snapshot */
} plan_args;

static bool parse_long(const char *opt, const char *s, long min, long *out) {
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < min) {
        fprintf(stderr, "dralloc plan: %s needs an integer >= %ld\n", opt, min);
        return false;
    }
    *out = v;
    return true;
}

static void print_err(const err *e) {
    char buf[2048];
    fprintf(stderr, "dralloc plan: %s\n", err_format(e, buf, sizeof buf));
}

/* Where live objects came from, for messages naming their source. */
static const char *ext_kube_server_name(const cmd_kube_flags *k) {
    return k->o.server ? k->o.server : k->o.kubeconfig ? k->o.kubeconfig : "(in-cluster)";
}

/* The base objects: the cluster (--kubeconfig/--server), -f files, then removals,
 * then additions. */
static bool load_base(const plan_args *a, plan_objects *objs) {
    err e;
    err_clear(&e);
    plan_objects_init(objs);
    if (a->kube.used) {
        json_t *live = cmd_kube_fetch(&a->kube, "dralloc plan");
        if (!live) {
            plan_objects_free(objs);
            return false;
        }
        plan_objects_add_doc(objs, live, ext_kube_server_name(&a->kube));
        json_decref(live);
    }
    for (int i = 0; i < a->nfiles; i++)
        if (!plan_objects_load_path(objs, a->files[i], &e)) goto fail;
    for (int i = 0; i < a->nremoves; i++) {
        long n = plan_remove_nodes(objs, a->removes[i], &e);
        if (n < 0) goto fail;
        if (!n) fprintf(stderr, "dralloc plan: note: --remove-nodes %s matches no Node\n", a->removes[i]);
    }
    for (int i = 0; i < a->nadds; i++) {
        const char *colon = strrchr(a->adds[i], ':');
        long count;
        if (!colon) {
            fprintf(stderr, "dralloc plan: --add-nodes %s: want SHAPE.yaml:COUNT (how many copies of the shape)\n",
                    a->adds[i]);
            goto usage;
        }
        if (!parse_long("--add-nodes SHAPE:COUNT", colon + 1, 0, &count)) goto usage;
        char *path = xstrndup(a->adds[i], (size_t)(colon - a->adds[i]));
        plan_objects shape;
        plan_objects_init(&shape);
        bool ok = plan_objects_load_path(&shape, path, &e) && plan_add_nodes(objs, &shape, count, 0, &e);
        plan_objects_free(&shape);
        free(path);
        if (!ok) goto fail;
    }
    return true;
fail:
    print_err(&e);
usage:
    plan_objects_free(objs);
    return false;
}

/* One workload file against the base: the plan (with minNodes when asked), or NULL
 * with the reason in e. */
static void warn_stderr(void *arg, const char *msg) {
    (void)arg;
    fprintf(stderr, "dralloc plan: warning: %s\n", msg);
}

/* The name of a shape: its Node's. */
static const char *shape_name(const plan_objects *shape) {
    size_t i;
    json_t *x;
    json_array_foreach(shape->items, i, x) {
        const char *k = json_string_value(json_object_get(x, "kind"));
        if (k && !strcmp(k, "Node")) return json_string_value(json_object_get(json_object_get(x, "metadata"), "name"));
    }
    return NULL;
}

/* --price values, "NAME=X,NAME=Y" (several flags add up), for the shapes in their
 * order: every shape priced, every price a shape's. false with e set. */
static bool resolve_prices(const plan_args *a, const plan_objects *shapes, double *out, err *e) {
    bool *seen = xcalloc((size_t)a->nmin + 1, sizeof *seen);
    bool ok = true;
    for (int f = 0; f < a->nprices && ok; f++) {
        char *list = xstrdup(a->prices[f]), *save = NULL;
        for (char *tok = strtok_r(list, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strrchr(tok, '='), *end = NULL;
            if (!eq || eq == tok) {
                ok = false;
                err_set(e, "--price %s: want SHAPE=PRICE (a shape is named by the Node in its file)", tok);
                break;
            }
            *eq = '\0';
            errno = 0;
            double v = strtod(eq + 1, &end);
            if (!eq[1] || *end || errno || !(v > 0) || v > 1e15) {
                ok = false;
                err_set(e, "--price %s: the price %s is not a number > 0", tok, eq + 1);
                break;
            }
            int k = 0;
            while (k < a->nmin && strcmp(shape_name(&shapes[k]), tok)) k++;
            if (k == a->nmin) {
                char names[1024];
                size_t len = 0;
                names[0] = '\0';
                for (int j = 0; j < a->nmin && len < sizeof names; j++)
                    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", j ? ", " : "", shape_name(&shapes[j]));
                ok = false;
                err_set(e, "--price %s: no --min-nodes shape is named %s (the shapes: %s)", tok, tok, names);
                break;
            }
            out[k] = v;
            seen[k] = true;
        }
        free(list);
    }
    for (int k = 0; k < a->nmin && ok; k++)
        if (!seen[k]) ok = false, err_set(e, "--price: no price for shape %s (%s)", shape_name(&shapes[k]), a->min_shapes[k]);
    free(seen);
    return ok;
}

/* --min-nodes on a store holding the base and the workload file's objects. */
static json_t *run_min_nodes(const plan_args *a, dra_store *st, const plan_workloads *w, err *e) {
    plan_objects *shapes = xcalloc((size_t)a->nmin, sizeof *shapes);
    double *prices = a->nprices ? xcalloc((size_t)a->nmin, sizeof *prices) : NULL;
    json_t *out = NULL;
    bool ok = true;
    for (int i = 0; i < a->nmin; i++) plan_objects_init(&shapes[i]);
    for (int i = 0; i < a->nmin && ok; i++) {
        ok = plan_objects_load_path(&shapes[i], a->min_shapes[i], e);
        if (ok && !shape_name(&shapes[i])) ok = false, err_set(e, "--min-nodes %s: the node shape has no Node", a->min_shapes[i]);
    }
    if (ok && prices) ok = resolve_prices(a, shapes, prices, e);
    if (ok) out = plan_min_nodes(st, shapes, (size_t)a->nmin, prices, w, &a->opts, a->max_nodes, e);
    for (int i = 0; i < a->nmin; i++) plan_objects_free(&shapes[i]);
    free(shapes);
    free(prices);
    return out;
}

static json_t *run_one(const plan_args *a, const plan_objects *base, const char *wfile, err *e) {
    plan_objects objs;
    plan_objects_copy(&objs, base);
    plan_workloads w = {.strict = a->strict, .warn = warn_stderr};
    json_t *out = NULL;
    if (plan_workloads_load(wfile, &w, &objs, e)) {
        if (a->nmin) {
            dra_store *st = plan_store_new(&objs, &a->opts.features, e);
            if (st) out = run_min_nodes(a, st, &w, e);
            dra_store_free(st);
        } else {
            out = plan_run(&objs, &w, &a->opts, e);
        }
    }
    plan_workloads_free(&w);
    plan_objects_free(&objs);
    return out;
}

/* One workload file on the snapshot as it is (no what-if): the files loaded straight into
 * a store by the engine's loader, the cluster applied, the workload file's objects on top;
 * no copy of the objects is kept beside the store. NULL after printing why (*rc set). The
 * store is left in *st_out for the caller to free. */
static json_t *run_direct(const plan_args *a, int *rc, plan_timings *tm, dra_store **st_out) {
    err e;
    err_clear(&e);
    uint64_t t0 = now_ns();
    dra_store *st = dra_store_new(&a->opts.features);
    json_t *out = NULL;
    plan_objects wobjs;
    plan_objects_init(&wobjs);
    plan_workloads w = {.strict = a->strict, .warn = warn_stderr};
    bool ok = true;
    if (a->kube.used) {
        json_t *live = cmd_kube_fetch(&a->kube, "dralloc plan");
        ok = live && (!json_array_size(live) || dra_store_apply_json(st, live, &e));
        json_decref(live);
        if (!live) *rc = 2, e.msg[0] = '\0';
    }
    if (ok && a->nfiles) ok = dra_store_load_paths(st, (const char *const *)a->files, (size_t)a->nfiles, &e) != 0;
    if (ok) ok = plan_workloads_load(a->workload, &w, &wobjs, &e);
    if (ok) {
        /* the workload file's own objects (templates, claims), and a first snapshot for
         * an empty input */
        size_t n = json_array_size(wobjs.items);
        dra_change *ch = xcalloc(n + 1, sizeof *ch);
        for (size_t i = 0; i < n; i++) {
            ch[i].upsert = json_array_get(wobjs.items, i);
            ch[i].source = json_string_value(json_array_get(wobjs.sources, i));
        }
        ok = dra_store_apply(st, ch, n, &e) != 0;
        free(ch);
    }
    tm->store_ns += now_ns() - t0;
    if (ok) {
        dra_snapshot *s = dra_store_acquire(st);
        bool local = dra_snapshot_slices_node_local(s);
        dra_snapshot_release(s);
        out = a->nmin ? run_min_nodes(a, st, &w, &e) : plan_run_store(st, &w, &a->opts, local, &e);
        ok = out != NULL;
    }
    if (!ok && e.msg[0]) {
        print_err(&e);
        *rc = 2;
    }
    plan_workloads_free(&w);
    plan_objects_free(&wobjs);
    *st_out = st;
    return out;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* {"scenarios": [{"index", "file", ...plan | "error"}]} for the scenario files of this shard. */
static json_t *run_scenarios(const plan_args *a, const plan_objects *base, int *rc) {
    unsigned shard = 0, nshards = 1;
    if (a->shard && !plan_shard_parse(a->shard, &shard, &nshards)) {
        fprintf(stderr, "dralloc plan: --shard %s: want i/N with 0 <= i < N\n", a->shard);
        *rc = 2;
        return NULL;
    }
    DIR *d = opendir(a->scenarios);
    if (!d) {
        fprintf(stderr, "dralloc plan: --scenarios %s: cannot read the directory\n", a->scenarios);
        *rc = 2;
        return NULL;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (has_suffix(de->d_name, ".yaml") || has_suffix(de->d_name, ".yml") || has_suffix(de->d_name, ".json")) {
            names = xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = xstrdup(de->d_name);
        }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    /* what the shards of one run share: the snapshot (files, cluster, what-ifs) and the
     * scenario set with the options that change a plan (plan merge compares them) */
    uint64_t snap = 0, set = 0;
    err de;
    err_clear(&de);
    bool dok = true;
    for (int i = 0; i < a->nfiles && dok; i++) dok = plan_digest_path(&snap, a->files[i], &de);
    if (dok && a->kube.used) {
        char *live = json_dumps(base->items, JSON_COMPACT | JSON_SORT_KEYS);
        snap = plan_digest_text(snap, live ? live : "", live ? strlen(live) : 0);
        free(live);
    }
    for (int i = 0; i < a->nremoves && dok; i++) snap = plan_digest_text(snap, a->removes[i], strlen(a->removes[i]));
    for (int i = 0; i < a->nadds && dok; i++) {
        const char *colon = strrchr(a->adds[i], ':');
        char *path = xstrndup(a->adds[i], colon ? (size_t)(colon - a->adds[i]) : strlen(a->adds[i]));
        dok = plan_digest_path(&snap, path, &de);
        snap = plan_digest_text(snap, colon ? colon : "", colon ? strlen(colon) : 0);
        free(path);
    }
    for (size_t i = 0; i < n && dok; i++) {
        size_t len = strlen(a->scenarios) + strlen(names[i]) + 2;
        char *path = xmalloc(len);
        snprintf(path, len, "%s/%s", a->scenarios, names[i]);
        set = plan_digest_text(set, names[i], strlen(names[i]));
        dok = plan_digest_path(&set, path, &de);
        free(path);
    }
    char opts[1024];
    snprintf(opts, sizeof opts, "score=%d seed=%d/%llu headroom=%ld choice=%d gates=%s min=%d max=%ld", (int)a->opts.score,
             (int)a->opts.seeded, (unsigned long long)a->opts.seed, a->opts.headroom_max, (int)a->opts.device_choice,
             a->gates ? a->gates : "", a->nmin, a->max_nodes);
    set = plan_digest_text(set, opts, strlen(opts));
    for (int i = 0; i < a->nmin && dok; i++) dok = plan_digest_path(&set, a->min_shapes[i], &de);
    for (int i = 0; i < a->nprices; i++) set = plan_digest_text(set, a->prices[i], strlen(a->prices[i]));
    if (!dok) {
        char buf[2048];
        fprintf(stderr, "dralloc plan: %s\n", err_format(&de, buf, sizeof buf));
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        *rc = 2;
        return NULL;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (i % nshards == shard) {
            size_t len = strlen(a->scenarios) + strlen(names[i]) + 2;
            char *path = xmalloc(len);
            snprintf(path, len, "%s/%s", a->scenarios, names[i]);
            err e;
            err_clear(&e);
            json_t *r = run_one(a, base, path, &e);
            json_t *s = json_object();
            json_object_set_new(s, "index", json_integer((json_int_t)i));
            json_object_set_new(s, "file", json_string(names[i]));
            if (r) {
                json_object_update(s, r);
                json_decref(r);
            } else {
                char buf[2048];
                json_object_set_new(s, "error", json_string(err_format(&e, buf, sizeof buf)));
                fprintf(stderr, "dralloc plan: scenario %s: %s\n", names[i], buf);
                *rc = 1;
            }
            json_array_append_new(arr, s);
            free(path);
        }
        free(names[i]);
    }
    free(names);
    json_t *out = json_object();
    json_object_set_new(out, "snapshot", json_sprintf("%016llx", (unsigned long long)snap));
    json_object_set_new(out, "scenarioSet", json_sprintf("%016llx", (unsigned long long)set));
    json_object_set_new(out, "shard", json_sprintf("%u/%u", shard, nshards));
    json_object_set_new(out, "scenarios", arr);
    return out;
}

static int emit(const plan_args *a, const json_t *out) {
    report_plan(stdout, out, a->fmt);
    char why[4200];
    if (a->csv_dir && !report_plan_csv_dir(out, a->csv_dir, why, sizeof why)) {
        fprintf(stderr, "dralloc plan: --csv-dir %s\n", why);
        return 2;
    }
    if (a->report) {
        FILE *f = fopen(a->report, "w");
        if (!f) {
            fprintf(stderr, "dralloc plan: --report %s: cannot write\n", a->report);
            return 2;
        }
        report_plan_html(f, out, "dralloc plan");
        if (fclose(f)) {
            fprintf(stderr, "dralloc plan: --report %s: write failed\n", a->report);
            return 2;
        }
    }
    return 0;
}

/* The plan printed on a second thread while the calling one frees the store: at 10,000
 * nodes freeing it takes about as long as printing a table, and memory is given back
 * fastest by the thread that took it (nothing printed reads the store). */
typedef struct plan_writer {
    const plan_args *a;
    const json_t *out;
    int rc;
    uint64_t ns;   /* the printing's time */
    pthread_t th;
    bool threaded;
} plan_writer;

static void *write_plan(void *arg) {
    plan_writer *w = arg;
    uint64_t t0 = now_ns();
    w->rc = emit(w->a, w->out);
    w->ns = now_ns() - t0;
    return NULL;
}

static void writer_start(plan_writer *w) {
    w->threaded = pthread_create(&w->th, NULL, write_plan, w) == 0;
    if (!w->threaded) write_plan(w);
}

static void writer_join(plan_writer *w) {
    if (w->threaded) pthread_join(w->th, NULL);
    w->threaded = false;
}

static int run_merge(int argc, char **argv) {
    report_format fmt = REPORT_JSON;
    json_t **docs = xcalloc((size_t)argc + 1, sizeof *docs);
    const char **names = xcalloc((size_t)argc + 1, sizeof *names);
    size_t n = 0;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            if (!report_format_parse(argv[++i], &fmt)) {
                fprintf(stderr, "dralloc plan merge: -o %s: want table, json or csv\n", argv[i]);
                rc = 2;
            }
            continue;
        }
        json_error_t je;
        if (!(docs[n] = json_load_file(argv[i], 0, &je))) {
            fprintf(stderr, "dralloc plan merge: %s: line %d: %s\n", argv[i], je.line, je.text);
            rc = 2;
        } else {
            names[n++] = argv[i];
        }
    }
    if (!rc && !n) {
        fprintf(stderr, "usage: dralloc plan merge A.json B.json... [-o table|json|csv]\n");
        rc = 2;
    }
    if (!rc) {
        err e;
        err_clear(&e);
        json_t *out = plan_merge(docs, names, n, &e);
        if (!out) {
            fprintf(stderr, "dralloc plan merge: %s\n", e.msg);
            rc = 2;
        } else {
            report_plan(stdout, out, fmt);
            json_decref(out);
        }
    }
    for (size_t i = 0; i < n; i++) json_decref(docs[i]);
    free(docs);
    free(names);
    return rc;
}

int cmd_plan(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "merge")) return run_merge(argc - 1, argv + 1);
    if (cmd_plan_room_wanted(argc, argv)) return cmd_plan_room(argc, argv);
    plan_args a = {.max_nodes = 1024, .fmt = REPORT_TABLE};
    plan_opts_default(&a.opts);
    a.files = xcalloc((size_t)argc + 1, sizeof *a.files);
    a.adds = xcalloc((size_t)argc + 1, sizeof *a.adds);
    a.removes = xcalloc((size_t)argc + 1, sizeof *a.removes);
    a.min_shapes = xcalloc((size_t)argc + 1, sizeof *a.min_shapes);
    a.prices = xcalloc((size_t)argc + 1, sizeof *a.prices);
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = v != NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            rc = -1;
            usage(stdout);
        } else if ((!strcmp(o, "-f") || !strcmp(o, "--filename")) && takes) {
            a.files[a.nfiles++] = argv[++i];
            while (i + 1 < argc && argv[i + 1][0] != '-') a.files[a.nfiles++] = argv[++i];
        } else if (cmd_kube_flag(argc, argv, &i, &a.kube)) {
        } else if (!strcmp(o, "--workload") && takes) {
            a.workload = argv[++i];
        } else if (!strcmp(o, "--scenarios") && takes) {
            a.scenarios = argv[++i];
        } else if (!strcmp(o, "--shard") && takes) {
            a.shard = argv[++i];
        } else if (!strcmp(o, "--report") && takes) {
            a.report = argv[++i];
        } else if (!strcmp(o, "--csv-dir") && takes) {
            a.csv_dir = argv[++i];
        } else if (!strcmp(o, "-o") && takes) {
            if (!report_format_parse(argv[++i], &a.fmt)) {
                fprintf(stderr, "dralloc plan: -o %s: want table, json or csv\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(o, "--score") && takes) {
            if (!dra_score_mode_parse(argv[++i], &a.opts.score) || a.opts.score == DRA_SCORE_NONE) {
                fprintf(stderr, "dralloc plan: --score %s: want binpack or spread\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(o, "--device-choice") && takes) {
            if (!dra_device_choice_parse(argv[++i], &a.opts.device_choice)) {
                fprintf(stderr, "dralloc plan: --device-choice %s: want first-fit or best-fit\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(o, "--seed") && takes) {
            long s = 0;
            if (!parse_long(o, argv[++i], 0, &s)) rc = 2;
            a.opts.seeded = true;
            a.opts.seed = (uint64_t)s;
        } else if (!strcmp(o, "--headroom-max") && takes) {
            if (!parse_long(o, argv[++i], 0, &a.opts.headroom_max)) rc = 2;
        } else if (!strcmp(o, "--max-nodes") && takes) {
            if (!parse_long(o, argv[++i], 0, &a.max_nodes)) rc = 2;
        } else if (!strcmp(o, "--add-nodes") && takes) {
            a.adds[a.nadds++] = argv[++i];
        } else if (!strcmp(o, "--remove-nodes") && takes) {
            a.removes[a.nremoves++] = argv[++i];
        } else if (!strcmp(o, "--min-nodes") && takes) {
            a.min_shapes[a.nmin++] = argv[++i];
        } else if (!strcmp(o, "--price") && takes) {
            a.prices[a.nprices++] = argv[++i];
        } else if (!strncmp(o, "--price=", 8)) {
            a.prices[a.nprices++] = o + 8;
        } else if (!strcmp(o, "--feature-gates") && takes) {
            a.gates = argv[++i];
        } else if (!strncmp(o, "--feature-gates=", 16)) {
            a.gates = o + 16;
        } else if (!strcmp(o, "--strict")) {
            a.strict = true;
        } else if (!strcmp(o, "--timings")) {
            a.timings = true;
        } else if (!strcmp(o, "--add-nodes") || !strcmp(o, "--remove-nodes") || !strcmp(o, "--min-nodes") ||
                   !strcmp(o, "--price") ||
                   !strcmp(o, "--workload") || !strcmp(o, "--scenarios") || !strcmp(o, "--report") ||
                   !strcmp(o, "--csv-dir")) {
            fprintf(stderr, "dralloc plan: %s needs a value\n", o);
            rc = 2;
        } else {
            fprintf(stderr, "dralloc plan: unexpected argument %s\n", o);
            rc = usage(stderr);
        }
    }
    if (!rc && ((!a.nfiles && !a.kube.used) || !!a.workload == !!a.scenarios)) rc = usage(stderr);
    /* --context alone (kubectl's habit): the kubeconfig kubectl would read */
    if (!rc && a.kube.used) cmd_kube_default(&a.kube);
    if (!rc && a.nprices && !a.nmin) {
        fprintf(stderr, "dralloc plan: --price prices the --min-nodes shapes: give them\n");
        rc = 2;
    }
    if (!rc && a.shard && !a.scenarios) {
        fprintf(stderr, "dralloc plan: --shard needs --scenarios\n");
        rc = 2;
    }
    if (!rc && a.gates) {
        err e;
        err_clear(&e);
        if (!dra_features_parse(&a.opts.features, a.gates, &e)) {
            fprintf(stderr, "dralloc plan: --feature-gates: %s\n", e.msg);
            rc = 2;
        }
    }
    /* tables, CSV and the report show no single counter: only JSON carries them all */
    a.opts.no_counters = a.fmt != REPORT_JSON;
    progress_state ps = {.start_ns = now_ns()};
    if (isatty(STDERR_FILENO)) {
        a.opts.progress = progress_cb;
        a.opts.progress_arg = &ps;
    }
    plan_objects base = {0};
    plan_timings tm = {0};
    a.opts.timings = &tm;
    uint64_t t0 = now_ns();
    /* what-ifs edit the objects before a store is built: only they keep them as JSON */
    bool direct = !a.scenarios && !a.nadds && !a.nremoves;
    if (!rc && direct) {
        uint64_t t1 = now_ns();
        dra_store *st = NULL;
        json_t *out = run_direct(&a, &rc, &tm, &st);
        uint64_t t2 = now_ns();
        plan_writer pw = {.a = &a, .out = out};
        if (out) writer_start(&pw);
        uint64_t tf = now_ns();
        dra_store_free(st);
        tm.free_ns = now_ns() - tf;
        if (out) {
            writer_join(&pw);
            if (pw.rc) rc = pw.rc;
            json_decref(out);
        } else if (!rc) {
            rc = 2;
        }
        if (a.timings && !rc)
            fprintf(stderr, "dralloc plan: timings: load %.3f s (files read and store built by the engine); plan %.3f s "
                            "(placing %.3f, accounting %.3f, other %.3f); output %.3f s, the store freed beside it in "
                            "%.3f s; %.3f s in all\n",
                    (double)tm.store_ns / 1e9, (double)(t2 - t1 - tm.store_ns) / 1e9, (double)tm.place_ns / 1e9,
                    (double)tm.account_ns / 1e9, (double)(t2 - t1 - tm.store_ns - tm.place_ns - tm.account_ns) / 1e9,
                    (double)pw.ns / 1e9, (double)tm.free_ns / 1e9, (double)(now_ns() - t0) / 1e9);
        if (a.timings && !rc && a.nmin)
            fprintf(stderr, "dralloc plan: timings: --min-nodes ran %zu probe simulations beside the plan printed\n",
                    tm.probes);
        free(a.files);
        free(a.adds);
        free(a.removes);
        free(a.min_shapes);
        free(a.prices);
        return rc;
    }
    if (!rc && !load_base(&a, &base)) rc = 2;
    uint64_t t1 = now_ns(), t2 = t1;
    if (!rc) {
        json_t *out;
        if (a.scenarios) {
            out = run_scenarios(&a, &base, &rc);
        } else {
            err e;
            err_clear(&e);
            out = run_one(&a, &base, a.workload, &e);
            if (!out) {
                print_err(&e);
                rc = 2;
            }
        }
        t2 = now_ns();
        if (out) {
            int erc = emit(&a, out);
            if (erc) rc = erc;
            json_decref(out);
        }
        plan_objects_free(&base);
    }
    if (a.timings && !rc)
        fprintf(stderr, "dralloc plan: timings: load %.3f s (files read %.3f, store built %.3f); plan %.3f s (placing "
                        "%.3f, accounting %.3f, other %.3f); output %.3f s\n",
                (double)(t1 - t0 + tm.store_ns) / 1e9, (double)(t1 - t0) / 1e9, (double)tm.store_ns / 1e9,
                (double)(t2 - t1 - tm.store_ns) / 1e9, (double)tm.place_ns / 1e9, (double)tm.account_ns / 1e9,
                (double)(t2 - t1 - tm.store_ns - tm.place_ns - tm.account_ns) / 1e9, (double)(now_ns() - t2) / 1e9);
    free(a.files);
    free(a.adds);
    free(a.removes);
    free(a.min_shapes);
    free(a.prices);
    return rc < 0 ? 0 : rc;
}
