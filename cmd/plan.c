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

#include "base/clock.h"
#include "cmd/flags.h"
#include "cmd/kube_input.h"

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "planner/planner.h"
#include "report/report.h"

/* ---- progress: stderr only, only on a terminal, only once the run is long ---------- */

typedef struct progress_state {
    uint64_t start_ns, last_ns;
    bool shown;
} progress_state;

static uint64_t now_ns(void) { return monotonic_ns(); }

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
    cmd_list files;
    const char *workload, *scenarios, *shard, *report, *gates;
    const char *csv_dir;         /* --csv-dir: the CSV tables one per file */
    cmd_list adds, removes, min_shapes, prices;
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
    for (size_t i = 0; i < a->files.n; i++)
        if (!plan_objects_load_path(objs, a->files.v[i], &e)) goto fail;
    for (size_t i = 0; i < a->removes.n; i++) {
        long n = plan_remove_nodes(objs, a->removes.v[i], &e);
        if (n < 0) goto fail;
        if (!n) fprintf(stderr, "dralloc plan: note: --remove-nodes %s matches no Node\n", a->removes.v[i]);
    }
    for (size_t i = 0; i < a->adds.n; i++) {
        const char *colon = strrchr(a->adds.v[i], ':');
        long count;
        if (!colon) {
            fprintf(stderr, "dralloc plan: --add-nodes %s: want SHAPE.yaml:COUNT (how many copies of the shape)\n",
                    a->adds.v[i]);
            goto usage;
        }
        if (!parse_long("--add-nodes SHAPE:COUNT", colon + 1, 0, &count)) goto usage;
        char *path = xstrndup(a->adds.v[i], (size_t)(colon - a->adds.v[i]));
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
    bool *seen = xcalloc((size_t)a->min_shapes.n + 1, sizeof *seen);
    bool ok = true;
    for (size_t f = 0; f < a->prices.n && ok; f++) {
        char *list = xstrdup(a->prices.v[f]), *save = NULL;
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
            size_t k = 0;
            while (k < a->min_shapes.n && strcmp(shape_name(&shapes[k]), tok)) k++;
            if (k == a->min_shapes.n) {
                char names[1024];
                size_t len = 0;
                names[0] = '\0';
                for (size_t j = 0; j < a->min_shapes.n && len < sizeof names; j++)
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
    for (size_t k = 0; k < a->min_shapes.n && ok; k++)
        if (!seen[k]) ok = false, err_set(e, "--price: no price for shape %s (%s)", shape_name(&shapes[k]), a->min_shapes.v[k]);
    free(seen);
    return ok;
}

/* --min-nodes on a store holding the base and the workload file's objects. */
static json_t *run_min_nodes(const plan_args *a, dra_store *st, const plan_workloads *w, err *e) {
    plan_objects *shapes = xcalloc((size_t)a->min_shapes.n, sizeof *shapes);
    double *prices = a->prices.n ? xcalloc((size_t)a->min_shapes.n, sizeof *prices) : NULL;
    json_t *out = NULL;
    bool ok = true;
    for (size_t i = 0; i < a->min_shapes.n; i++) plan_objects_init(&shapes[i]);
    for (size_t i = 0; i < a->min_shapes.n && ok; i++) {
        ok = plan_objects_load_path(&shapes[i], a->min_shapes.v[i], e);
        if (ok && !shape_name(&shapes[i])) ok = false, err_set(e, "--min-nodes %s: the node shape has no Node", a->min_shapes.v[i]);
    }
    if (ok && prices) ok = resolve_prices(a, shapes, prices, e);
    if (ok) out = plan_min_nodes(st, shapes, (size_t)a->min_shapes.n, prices, w, &a->opts, a->max_nodes, e);
    for (size_t i = 0; i < a->min_shapes.n; i++) plan_objects_free(&shapes[i]);
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
        if (a->min_shapes.n) {
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
    if (ok && a->files.n) ok = dra_store_load_paths(st, a->files.v, a->files.n, &e) != 0;
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
        out = a->min_shapes.n ? run_min_nodes(a, st, &w, &e) : plan_run_store(st, &w, &a->opts, local, &e);
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
    for (size_t i = 0; i < a->files.n && dok; i++) dok = plan_digest_path(&snap, a->files.v[i], &de);
    if (dok && a->kube.used) {
        char *live = json_dumps(base->items, JSON_COMPACT | JSON_SORT_KEYS);
        snap = plan_digest_text(snap, live ? live : "", live ? strlen(live) : 0);
        free(live);
    }
    for (size_t i = 0; i < a->removes.n && dok; i++) snap = plan_digest_text(snap, a->removes.v[i], strlen(a->removes.v[i]));
    for (size_t i = 0; i < a->adds.n && dok; i++) {
        const char *colon = strrchr(a->adds.v[i], ':');
        char *path = xstrndup(a->adds.v[i], colon ? (size_t)(colon - a->adds.v[i]) : strlen(a->adds.v[i]));
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
             a->gates ? a->gates : "", (int)a->min_shapes.n, a->max_nodes);
    set = plan_digest_text(set, opts, strlen(opts));
    for (size_t i = 0; i < a->min_shapes.n && dok; i++) dok = plan_digest_path(&set, a->min_shapes.v[i], &de);
    for (size_t i = 0; i < a->prices.n; i++) set = plan_digest_text(set, a->prices.v[i], strlen(a->prices.v[i]));
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

/* `plan merge`: the shards' outputs, each a word, and -o. */
typedef struct merge_args {
    report_format fmt;
    json_t **docs;
    const char **names;
    size_t n;
} merge_args;

static int merge_word(void *opts, const char *w) {
    merge_args *m = opts;
    json_error_t je;
    if (!(m->docs[m->n] = json_load_file(w, 0, &je))) {
        fprintf(stderr, "dralloc plan merge: %s: line %d: %s\n", w, je.line, je.text);
        return CMD_PARSE_ERROR;
    }
    m->names[m->n++] = w;
    return CMD_PARSE_OK;
}

static int read_merge_format(const cmd_flag_use *u) {
    if (report_format_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc plan merge: %s %s: want table, json or csv\n", u->as, u->value);
    return CMD_PARSE_ERROR;
}

static void merge_usage(FILE *f) { fprintf(f, "usage: dralloc plan merge A.json B.json... [-o table|json|csv]\n"); }

static const cmd_flag merge_flags[] = {
    {.name = "--output", .shorthand = "-o", .kind = CMD_FUNC, .off = offsetof(merge_args, fmt), .fn = read_merge_format},
};

static const cmd_flags merge_spec = {
    .prog = "dralloc plan merge",
    .flags = merge_flags,
    .nflags = sizeof merge_flags / sizeof merge_flags[0],
    .word = merge_word,
    .unknown = "dralloc plan merge: unexpected argument %s\n",
    .missing = "dralloc plan merge: %s needs a value\n",
    .usage = merge_usage,
};

static int run_merge(int argc, char **argv) {
    merge_args m = {.fmt = REPORT_JSON, .docs = xcalloc((size_t)argc + 1, sizeof *m.docs),
                    .names = xcalloc((size_t)argc + 1, sizeof *m.names)};
    int rc = cmd_flags_parse(&merge_spec, argc, argv, &m);
    json_t **docs = m.docs;
    const char **names = m.names;
    size_t n = m.n;
    report_format fmt = m.fmt;
    if (!rc && !n) {
        merge_usage(stderr);
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
    return rc < 0 ? 0 : rc;
}

/* ---- the command: options read (plan_parse), the run wired (progress, timings), then
 * run on the snapshot as it is (plan_direct) or on a what-if's objects (plan_whatif) --- */

static int read_format(const cmd_flag_use *u) {
    if (report_format_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc plan: %s %s: want table, json or csv\n", u->as, u->value);
    return CMD_PARSE_ERROR;
}

static int read_score(const cmd_flag_use *u) {
    dra_score_mode *m = u->field;
    if (dra_score_mode_parse(u->value, m) && *m != DRA_SCORE_NONE) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc plan: --score %s: want binpack or spread\n", u->value);
    return CMD_PARSE_ERROR;
}

static int read_choice(const cmd_flag_use *u) {
    if (dra_device_choice_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc plan: --device-choice %s: want first-fit or best-fit\n", u->value);
    return CMD_PARSE_ERROR;
}

/* --headroom-max, --max-nodes: an integer >= 0 */
static int read_long(const cmd_flag_use *u) { return parse_long(u->as, u->value, 0, u->field) ? CMD_PARSE_OK : CMD_PARSE_ERROR; }

static int read_seed(const cmd_flag_use *u) {
    plan_opts *o = u->field;
    long s = 0;
    if (!parse_long(u->as, u->value, 0, &s)) return CMD_PARSE_ERROR;
    o->seeded = true;
    o->seed = (uint64_t)s;
    return CMD_PARSE_OK;
}

static void usage(FILE *f);

static const cmd_flag plan_flags[] = {
    {.name = "--filename", .shorthand = "-f", .kind = CMD_PATHS, .off = offsetof(plan_args, files)},
    CMD_KUBE_ROWS(offsetof(plan_args, kube)),
    {.name = "--workload", .kind = CMD_STRING, .off = offsetof(plan_args, workload)},
    {.name = "--scenarios", .kind = CMD_STRING, .off = offsetof(plan_args, scenarios)},
    {.name = "--shard", .kind = CMD_STRING, .off = offsetof(plan_args, shard)},
    {.name = "--report", .kind = CMD_STRING, .off = offsetof(plan_args, report)},
    {.name = "--output", .shorthand = "-o", .kind = CMD_FUNC, .off = offsetof(plan_args, fmt), .fn = read_format},
    {.name = "--score", .kind = CMD_FUNC, .off = offsetof(plan_args, opts.score), .fn = read_score},
    {.name = "--seed", .kind = CMD_FUNC, .off = offsetof(plan_args, opts), .fn = read_seed},
    {.name = "--headroom-max", .kind = CMD_FUNC, .off = offsetof(plan_args, opts.headroom_max), .fn = read_long,
     .label = "--headroom-max N", .help = "bound on the extra replicas counted per workload (default 1000; 0: off)"},
    {.name = "--device-choice", .kind = CMD_FUNC, .off = offsetof(plan_args, opts.device_choice), .fn = read_choice,
     .help = "the devices a replica gets on its node: first-fit (default, as kube-scheduler)\n"
             "or best-fit (the allocation leaving the node least fragmented)"},
    {.name = "--add-nodes", .kind = CMD_LIST, .off = offsetof(plan_args, adds),
     .help = "COUNT copies of the Node (and its ResourceSlices) in SHAPE.yaml"},
    {.name = "--remove-nodes", .kind = CMD_LIST, .off = offsetof(plan_args, removes),
     .help = "drop the Nodes a label selector matches (kubectl -l: k=v, k!=v, k in (a,b),\n"
             "k notin (a,b), k, !k; comma-joined) and their node-local ResourceSlices"},
    {.name = "--min-nodes", .kind = CMD_LIST, .off = offsetof(plan_args, min_shapes),
     .help = "the fewest copies of SHAPE.yaml (<= --max-nodes, 1024) for each workload on its own\n"
             "and for all of them, under binpack and spread scoring; a workload no count helps\n"
             "is named with its cause and left out of the count. Once per shape; a shape is\n"
             "named by its Node"},
    {.name = "--max-nodes", .kind = CMD_FUNC, .off = offsetof(plan_args, max_nodes), .fn = read_long},
    {.name = "--price", .kind = CMD_LIST, .off = offsetof(plan_args, prices),
     .help = "SHAPE=X,...: the price of a node of each shape: the cheapest mix of the shapes\n"
             "that places every workload some shape helps (binpack scoring), what to buy"},
    {.name = "--feature-gates", .kind = CMD_STRING, .off = offsetof(plan_args, gates)},
    {.name = "--strict", .kind = CMD_BOOL, .off = offsetof(plan_args, strict),
     .help = "an unknown field in the workload file (its pod templates' included) is an error\n"
             "(else a warning); a value of the wrong type always is"},
    {.name = "--csv-dir", .kind = CMD_STRING, .off = offsetof(plan_args, csv_dir), .label = "--csv-dir DIR",
     .help = "also write the CSV tables one per file: DIR/workloads.csv, placements.csv,\n"
             "nodes.csv, classes.csv (-o csv prints them one after another)"},
    {.name = "--timings", .kind = CMD_BOOL, .off = offsetof(plan_args, timings),
     .help = "how long loading, planning and rendering took, on stderr"},
};

static const cmd_flags plan_spec = {
    .prog = "dralloc plan",
    .flags = plan_flags,
    .nflags = sizeof plan_flags / sizeof plan_flags[0],
    .unknown = "dralloc plan: unexpected argument %s\n",
    .missing = "dralloc plan: %s needs a value\n",
    .usage = usage,
    .usage_after_unknown = true,
    .help_width = 17,
};

static void usage(FILE *f) {
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
            "and may carry more objects (ResourceClaimTemplates, ...), in other documents or \"objects\".\n");
    cmd_flags_help(f, &plan_spec);
}

/* The options read and checked: CMD_PARSE_OK, CMD_PARSE_HELP (exit 0) or 2 (said why). */
static int plan_parse(plan_args *a, int argc, char **argv) {
    int rc = cmd_flags_parse(&plan_spec, argc, argv, a);
    if (rc) return rc;
    if ((!a->files.n && !a->kube.used) || !!a->workload == !!a->scenarios) {
        usage(stderr);
        return 2;
    }
    /* --context alone (kubectl's habit): the kubeconfig kubectl would read */
    if (a->kube.used) cmd_kube_default(&a->kube);
    if (a->prices.n && !a->min_shapes.n) {
        fprintf(stderr, "dralloc plan: --price prices the --min-nodes shapes: give them\n");
        return 2;
    }
    if (a->shard && !a->scenarios) {
        fprintf(stderr, "dralloc plan: --shard needs --scenarios\n");
        return 2;
    }
    if (a->gates) {
        err e;
        err_clear(&e);
        if (!dra_features_parse(&a->opts.features, a->gates, &e)) {
            fprintf(stderr, "dralloc plan: --feature-gates: %s\n", e.msg);
            return 2;
        }
    }
    return CMD_PARSE_OK;
}

/* The snapshot as it is: the store built by the engine's loader, the plan printed on a
 * second thread while this one frees the store. */
static int plan_direct(plan_args *a, plan_timings *tm, uint64_t t0) {
    int rc = 0;
    uint64_t t1 = now_ns();
    dra_store *st = NULL;
    json_t *out = run_direct(a, &rc, tm, &st);
    uint64_t t2 = now_ns();
    plan_writer pw = {.a = a, .out = out};
    if (out) writer_start(&pw);
    uint64_t tf = now_ns();
    dra_store_free(st);
    tm->free_ns = now_ns() - tf;
    if (out) {
        writer_join(&pw);
        if (pw.rc) rc = pw.rc;
        json_decref(out);
    } else if (!rc) {
        rc = 2;
    }
    if (a->timings && !rc)
        fprintf(stderr, "dralloc plan: timings: load %.3f s (files read and store built by the engine); plan %.3f s "
                        "(placing %.3f, accounting %.3f, other %.3f); output %.3f s, the store freed beside it in "
                        "%.3f s; %.3f s in all\n",
                (double)tm->store_ns / 1e9, (double)(t2 - t1 - tm->store_ns) / 1e9, (double)tm->place_ns / 1e9,
                (double)tm->account_ns / 1e9, (double)(t2 - t1 - tm->store_ns - tm->place_ns - tm->account_ns) / 1e9,
                (double)pw.ns / 1e9, (double)tm->free_ns / 1e9, (double)(now_ns() - t0) / 1e9);
    if (a->timings && !rc && a->min_shapes.n)
        fprintf(stderr, "dralloc plan: timings: --min-nodes ran %zu probe simulations beside the plan printed\n",
                tm->probes);
    return rc;
}

/* What-ifs and scenario sets: the objects kept as JSON, edited, then planned. */
static int plan_whatif(plan_args *a, plan_timings *tm, uint64_t t0) {
    plan_objects base = {0};
    int rc = 0;
    if (!load_base(a, &base)) rc = 2;
    uint64_t t1 = now_ns(), t2 = t1;
    if (!rc) {
        json_t *out;
        if (a->scenarios) {
            out = run_scenarios(a, &base, &rc);
        } else {
            err e;
            err_clear(&e);
            out = run_one(a, &base, a->workload, &e);
            if (!out) {
                print_err(&e);
                rc = 2;
            }
        }
        t2 = now_ns();
        if (out) {
            int erc = emit(a, out);
            if (erc) rc = erc;
            json_decref(out);
        }
        plan_objects_free(&base);
    }
    if (a->timings && !rc)
        fprintf(stderr, "dralloc plan: timings: load %.3f s (files read %.3f, store built %.3f); plan %.3f s (placing "
                        "%.3f, accounting %.3f, other %.3f); output %.3f s\n",
                (double)(t1 - t0 + tm->store_ns) / 1e9, (double)(t1 - t0) / 1e9, (double)tm->store_ns / 1e9,
                (double)(t2 - t1 - tm->store_ns) / 1e9, (double)tm->place_ns / 1e9, (double)tm->account_ns / 1e9,
                (double)(t2 - t1 - tm->store_ns - tm->place_ns - tm->account_ns) / 1e9, (double)(now_ns() - t2) / 1e9);
    return rc;
}

int cmd_plan(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "merge")) return run_merge(argc - 1, argv + 1);
    if (cmd_plan_room_wanted(argc, argv)) return cmd_plan_room(argc, argv);
    plan_args a = {.max_nodes = 1024, .fmt = REPORT_TABLE};
    plan_opts_default(&a.opts);
    int rc = plan_parse(&a, argc, argv);
    if (rc == CMD_PARSE_OK) {
        /* tables, CSV and the report show no single counter: only JSON carries them all */
        a.opts.no_counters = a.fmt != REPORT_JSON;
        progress_state ps = {.start_ns = now_ns()};
        if (isatty(STDERR_FILENO)) {
            a.opts.progress = progress_cb;
            a.opts.progress_arg = &ps;
        }
        plan_timings tm = {0};
        a.opts.timings = &tm;
        uint64_t t0 = now_ns();
        /* what-ifs edit the objects before a store is built: only they keep them as JSON */
        bool direct = !a.scenarios && !a.adds.n && !a.removes.n;
        rc = direct ? plan_direct(&a, &tm, t0) : plan_whatif(&a, &tm, t0);
    }
    cmd_flags_free(&plan_spec, &a);
    return rc < 0 ? 0 : rc;
}
