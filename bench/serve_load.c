/* serve_load.c — `dralloc bench serve`: load on the kube-scheduler extender as
 * kube-scheduler would put it. A snapshot of N nodes (default 5000) in the shape of
 * scheduler_perf's DRA tests (alloc_objects.h: 8 devices per node, half of every node's
 * devices already allocated) is written to a temporary file and served by a child
 * `dralloc serve` (this binary, on a free loopback port: bench sits beside extender in
 * the layers, so it drives the server over HTTP as kube-scheduler does); a libcurl
 * multi client then sends /filter
 * requests shaped like kube-scheduler's (a pod with a template claim, resolved by the
 * resourceclaim controller in status.resourceClaimStatuses; 500 NodeNames, as
 * kube-scheduler sends for a 5000-node cluster) at fixed rates, open loop: each
 * request's latency runs from its scheduled send time, so a server that falls behind
 * is charged for the queue it builds (no coordinated omission).
 *
 * For each rate (25, 50, 100, ... doubling to 800, then +400) it reports p50/p90/p99/max latency,
 * errors (non-200, transfer failures, a non-empty Error) and the throughput reached;
 * a rate is sustained when nothing failed, the answers kept up (>= 95% of the rate)
 * and p99 stayed below SLO_MS. It stops after the first rate not sustained.
 * --devices N sets the node count, --reps S the seconds per rate (default 3). The
 * client and the server share the machine's cores. */
#include "bench/alloc_objects.h"
#include "bench/bench.h"
#include "bench/serve_load.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_NODES 5000
#define NODE_DEVICES 8
#define NODE_NAMES 500
#define BODIES 32
#define MAX_INFLIGHT 256
#define SLO_MS 1000.0
#define DEFAULT_SECONDS 3
static const double first_rate = 25, max_rate = 6400;

/* An allocated claim holding devices instance-0..n-1 of a node (the half in use). */
static json_t *used_claim(const char *node, size_t n) {
    json_t *results = json_array();
    for (size_t i = 0; i < n; i++) {
        char dev[32];
        snprintf(dev, sizeof dev, "instance-%zu", i);
        json_array_append_new(results, json_pack("{s:s,s:s,s:s,s:s}", "request", "req-0", "driver", BENCH_ALLOC_DRIVER,
                                                 "pool", node, "device", dev));
    }
    char name[96];
    snprintf(name, sizeof name, "%s-used", node);
    return json_pack(
        "{s:s,s:s,s:{s:s,s:s},s:{s:{s:[{s:s,s:{s:s,s:s,s:I}}]}},s:{s:{s:{s:o},s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}}}",
        "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name", name, "namespace",
        BENCH_ALLOC_NS, "spec", "devices", "requests", "name", "req-0", "exactly", "deviceClassName", BENCH_ALLOC_CLASS,
        "allocationMode", "ExactCount", "count", (json_int_t)n, "status", "allocation", "devices", "results", results,
        "nodeSelector", "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In", "values", node);
}

json_t *bench_serve_snapshot(size_t nodes) {
    json_t *objs = json_array();
    json_array_append_new(objs, bench_alloc_class(BENCH_ALLOC_CLASS, "device.driver == \"" BENCH_ALLOC_DRIVER "\""));
    json_array_append_new(
        objs, json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:{s:[{s:s,s:{s:s,s:I}}]}}}}", "apiVersion", "resource.k8s.io/v1",
                        "kind", "ResourceClaimTemplate", "metadata", "name", "two-devices", "namespace", BENCH_ALLOC_NS,
                        "spec", "spec", "devices", "requests", "name", "req-0", "exactly", "deviceClassName",
                        BENCH_ALLOC_CLASS, "count", (json_int_t)2));
    for (size_t i = 0; i < nodes; i++) {
        char node[32];
        snprintf(node, sizeof node, "node-%05zu", i);
        json_array_append_new(objs, bench_alloc_node(node, "node-with-dra", "true"));
        json_array_append_new(objs, bench_alloc_node_slice(node, NODE_DEVICES, NULL));
        json_array_append_new(objs, used_claim(node, NODE_DEVICES / 2));
    }
    return objs;
}

/* A /filter body as kube-scheduler sends it for pod k: 500 distinct node names. */
char *bench_serve_filter_body(size_t k, size_t nodes, bench_rng *r) {
    char name[64], claim[96], uid[64];
    snprintf(name, sizeof name, "bench-pod-%zu", k);
    snprintf(claim, sizeof claim, "%s-gpus-x7k2p", name);
    snprintf(uid, sizeof uid, "5b1c2f8e-2d0a-4c43-9a61-%012zx", k);
    json_t *pod = json_pack(
        "{s:{s:s,s:s,s:s,s:s},s:{s:[{s:s,s:s,s:{s:{s:s,s:s},s:[{s:s}]}}],s:[{s:s,s:s}],s:s},s:{s:s,s:[{s:s,s:s}]}}",
        "metadata", "name", name, "namespace", BENCH_ALLOC_NS, "uid", uid, "resourceVersion", "81234", "spec",
        "containers", "name", "main", "image", "registry.example/trainer:1", "resources", "requests", "cpu", "4",
        "memory", "16Gi", "claims", "name", "gpus", "resourceClaims", "name", "gpus", "resourceClaimTemplateName",
        "two-devices", "schedulerName", "default-scheduler", "status", "phase", "Pending", "resourceClaimStatuses",
        "name", "gpus", "resourceClaimName", claim);
    size_t want = nodes < NODE_NAMES ? nodes : NODE_NAMES;
    bool *taken = xcalloc(nodes, 1);
    json_t *names = json_array();
    for (size_t n = 0; n < want;) {
        size_t i = bench_rng_pick(r, nodes);
        if (taken[i]) continue;
        taken[i] = true;
        char node[32];
        snprintf(node, sizeof node, "node-%05zu", i);
        json_array_append_new(names, json_string(node));
        n++;
    }
    free(taken);
    json_t *args = json_pack("{s:o,s:n,s:o}", "Pod", pod, "Nodes", "NodeNames", names);
    char *s = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    return s;
}

/* ---- the open-loop client ------------------------------------------------------------ */

typedef struct slot {
    CURL *h;
    uint64_t scheduled;
    char resp[256];   /* the start of the answer is enough to see Error */
    size_t len;
    bool busy;
} slot;

static size_t keep_head(char *p, size_t size, size_t n, void *ud) {
    slot *s = ud;
    size_t k = size * n, room = sizeof s->resp - 1 - s->len;
    memcpy(s->resp + s->len, p, k < room ? k : room);
    s->len += k < room ? k : room;
    s->resp[s->len] = '\0';
    return k;
}

typedef struct step {
    double rate, seconds, achieved;
    size_t sent, ok, errors, unanswered;
    bench_stats ms;
    bool sustained;
    char last_error[256];   /* the last failed answer, for the report */
} step;

static void finish(slot *s, CURLcode rc, double *lat, size_t *nlat, step *st) {
    long code = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
    lat[(*nlat)++] = (double)(bench_now_ns() - s->scheduled) / 1e6;
    /* a filter answer with "Error":"x" (not "") or anything but 200 is an error */
    const char *e = strstr(s->resp, "\"Error\":\"");
    if (code == 200 && (!e || e[9] == '"')) st->ok++;
    else {
        st->errors++;
        snprintf(st->last_error, sizeof st->last_error, "%ld %s %.200s", code, rc == CURLE_OK ? "" : curl_easy_strerror(rc),
                 s->resp);
    }
    s->busy = false;
    s->len = 0;
    s->resp[0] = '\0';
}

static void run_step(step *st, const char *url, char **bodies, size_t nbodies, CURLM *m, slot *slots) {
    size_t total = (size_t)(st->rate * st->seconds);
    double *lat = xcalloc(total + 1, sizeof *lat);
    size_t nlat = 0, next = 0, inflight = 0;
    uint64_t t0 = bench_now_ns(), gap = (uint64_t)(1e9 / st->rate);
    uint64_t deadline = t0 + (uint64_t)(st->seconds * 1e9) + 5000000000ull;   /* + 5 s to drain */
    while ((next < total || inflight) && bench_now_ns() < deadline) {
        uint64_t now = bench_now_ns();
        while (next < total && t0 + next * gap <= now && inflight < MAX_INFLIGHT) {
            slot *s = NULL;
            for (size_t i = 0; i < MAX_INFLIGHT && !s; i++)
                if (!slots[i].busy) s = &slots[i];
            const char *b = bodies[next % nbodies];
            curl_easy_setopt(s->h, CURLOPT_URL, url);
            curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, b);
            curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)strlen(b));
            curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, keep_head);
            curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
            curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
            s->scheduled = t0 + next * gap;
            s->busy = true;
            curl_multi_add_handle(m, s->h);
            inflight++, next++;
        }
        int running;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE) {
                slot *s;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
                curl_multi_remove_handle(m, msg->easy_handle);
                finish(s, msg->data.result, lat, &nlat, st);
                inflight--;
            }
        uint64_t wake = next < total ? t0 + next * gap : bench_now_ns() + 10000000;
        now = bench_now_ns();
        int ms = wake > now ? (int)((wake - now) / 1000000) : 0;
        curl_multi_poll(m, NULL, 0, ms, NULL);
    }
    /* whatever is still out counts as unanswered */
    for (size_t i = 0; i < MAX_INFLIGHT; i++)
        if (slots[i].busy) {
            curl_multi_remove_handle(m, slots[i].h);
            slots[i].busy = false;
            st->unanswered++;
        }
    st->sent = next;
    st->unanswered += total - next;
    double elapsed = (double)(bench_now_ns() - t0) / 1e9;
    st->achieved = elapsed > 0 ? (double)st->ok / (elapsed > st->seconds ? elapsed : st->seconds) : 0;
    st->ms = bench_stats_of(lat, nlat);
    if (nlat) {
        double mx = 0;
        for (size_t i = 0; i < nlat; i++) mx = lat[i] > mx ? lat[i] : mx;
        st->ms.max = mx;
    }
    st->sustained = !st->errors && !st->unanswered && st->achieved >= 0.95 * st->rate && st->ms.p99 < SLO_MS;
    free(lat);
}

/* The child server: pid, port, and the temporary directory holding its snapshot and log. */
typedef struct child {
    pid_t pid;
    int port;
    char dir[64], snap[96], log[96];
} child;

static void child_cleanup(child *c) {
    unlink(c->snap);
    unlink(c->log);
    rmdir(c->dir);
}

/* Writes the snapshot and starts `<this binary> serve` on it; false with a message. */
static bool child_start(child *c, json_t *objs) {
    snprintf(c->dir, sizeof c->dir, "/tmp/dralloc-bench-serve-XXXXXX");
    if (!mkdtemp(c->dir)) return fprintf(stderr, "bench serve: cannot create a temporary directory\n"), false;
    snprintf(c->snap, sizeof c->snap, "%s/snapshot.json", c->dir);
    snprintf(c->log, sizeof c->log, "%s/serve.log", c->dir);
    json_t *list = json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "List", "items", objs);
    int bad = json_dump_file(list, c->snap, JSON_COMPACT);
    json_decref(list);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (bad || n <= 0) {
        fprintf(stderr, "bench serve: cannot write %s or find this binary\n", c->snap);
        child_cleanup(c);
        return false;
    }
    self[n] = '\0';
    FILE *log = fopen(c->log, "w");
    if (!log) return child_cleanup(c), false;
    c->pid = fork();
    if (!c->pid) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive the benchmark */
        dup2(fileno(log), 2);
        execl(self, self, "serve", "--snapshot", c->snap, "--listen", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    fclose(log);
    c->port = 0;
    for (int i = 0; i < 12000 && !c->port && c->pid > 0; i++) {   /* up to 120 s */
        FILE *f = fopen(c->log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "listening on 127.0.0.1:");
            if (p) c->port = atoi(p + strlen("listening on 127.0.0.1:"));
        }
        if (f) fclose(f);
        int st;
        if (!c->port && waitpid(c->pid, &st, WNOHANG) == c->pid) break;
        if (!c->port) usleep(10000);
    }
    if (!c->port) {
        fprintf(stderr, "bench serve: dralloc serve did not start (log: %s)\n", c->log);
        if (c->pid > 0) kill(c->pid, SIGKILL), waitpid(c->pid, NULL, 0);
        return false;
    }
    return true;
}

/* SIGTERM; true when the server exited 0. */
static bool child_stop(child *c) {
    int st = 0;
    kill(c->pid, SIGTERM);
    waitpid(c->pid, &st, 0);
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok) fprintf(stderr, "bench serve: dralloc serve did not exit cleanly (log: %s)\n", c->log);
    else child_cleanup(c);
    return ok;
}

int bench_serve_main(const bench_opts *o) {
    FILE *out = o->out ? o->out : stdout;
    bool json_out = o->json && !strcmp(o->json, "-");
    size_t nodes = o->devices ? o->devices : DEFAULT_NODES;
    double seconds = o->reps ? (double)o->reps : DEFAULT_SECONDS;
    FILE *log = json_out ? stderr : out;

    json_t *objs = bench_serve_snapshot(nodes);
    size_t nobjs = json_array_size(objs);
    uint64_t t = bench_now_ns();
    child srv;
    bool started = child_start(&srv, objs);
    json_decref(objs);
    if (!started) return 1;
    double load_ms = (double)(bench_now_ns() - t) / 1e6;
    char url[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/filter", srv.port);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(log,
            "serve: %zu nodes x %d devices (half in use), %zu objects; dralloc serve up in %.0f ms (write, load, listen);\n"
            "       /filter with %d NodeNames, pod with a template claim (2 devices); open loop, %.0f s per rate;\n"
            "       server and client share %ld core(s)\n",
            nodes, NODE_DEVICES, nobjs, load_ms, NODE_NAMES, seconds, cores);

    bench_rng r;
    bench_rng_init(&r, BENCH_CEL_SEED);
    char *bodies[BODIES];
    for (size_t i = 0; i < BODIES; i++) bodies[i] = bench_serve_filter_body(i, nodes, &r);

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, 64L);
    slot *slots = xcalloc(MAX_INFLIGHT, sizeof *slots);
    /* kube-scheduler's Go client sends no Expect header */
    struct curl_slist *headers = curl_slist_append(curl_slist_append(NULL, "Expect:"), "Content-Type: application/json");
    for (size_t i = 0; i < MAX_INFLIGHT; i++) {
        slots[i].h = curl_easy_init();
        curl_easy_setopt(slots[i].h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(slots[i].h, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(slots[i].h, CURLOPT_HTTPHEADER, headers);
    }
    /* warm-up: one request per body, untimed */
    step warm = {.rate = 50, .seconds = (double)BODIES / 50};
    run_step(&warm, url, bodies, BODIES, m, slots);

    step steps[24];
    size_t nsteps = 0;
    double sustained = 0;
    static const char *const cols[] = {"rate/s", "sent", "ok", "errors", "answered/s", "p50 ms", "p90 ms", "p99 ms", "max ms", ""};
    bench_table *tb = bench_table_new(cols, ARRAY_SIZE(cols));
    /* doubling up to 800/s, then steps of 400/s: the ceiling is found to within 400/s */
    for (double rate = first_rate; rate <= max_rate && nsteps < ARRAY_SIZE(steps); rate = rate < 800 ? rate * 2 : rate + 400) {
        step *st = &steps[nsteps++];
        *st = (step){.rate = rate, .seconds = seconds};
        run_step(st, url, bodies, BODIES, m, slots);
        bench_table_addf(tb, "%.0f", rate);
        bench_table_addf(tb, "%zu", st->sent);
        bench_table_addf(tb, "%zu", st->ok);
        bench_table_addf(tb, "%zu", st->errors + st->unanswered);
        bench_table_addf(tb, "%.1f", st->achieved);
        bench_table_addf(tb, "%.2f", st->ms.p50);
        bench_table_addf(tb, "%.2f", st->ms.p90);
        bench_table_addf(tb, "%.2f", st->ms.p99);
        bench_table_addf(tb, "%.2f", st->ms.max);
        bench_table_addf(tb, "%s", st->sustained ? "sustained" : "NOT sustained");
        if (!st->sustained) break;
        sustained = rate;
    }
    if (!json_out) {
        bench_table_print(tb, out);
        fprintf(out, "highest rate sustained: %.0f/s (no errors, >= 95%% answered in time, p99 < %.0f ms)\n", sustained,
                SLO_MS);
        for (size_t i = 0; i < nsteps; i++)
            if (steps[i].last_error[0]) fprintf(out, "rate %.0f, last error: %s\n", steps[i].rate, steps[i].last_error);
    }
    bench_table_free(tb);
    int rc = steps[0].errors ? 1 : 0;   /* errors at the lowest rate are failures, not load */
    if (o->json) {
        json_t *rs = json_array();
        for (size_t i = 0; i < nsteps; i++)
            json_array_append_new(
                rs, json_pack("{s:f,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:b}", "rate", steps[i].rate, "sent",
                              (json_int_t)steps[i].sent, "ok", (json_int_t)steps[i].ok, "errors",
                              (json_int_t)steps[i].errors, "unanswered", (json_int_t)steps[i].unanswered, "answered_per_s",
                              steps[i].achieved, "p50_ms", steps[i].ms.p50, "p90_ms", steps[i].ms.p90, "p99_ms",
                              steps[i].ms.p99, "max_ms", steps[i].ms.max, "sustained", steps[i].sustained));
        json_t *doc = json_pack("{s:s,s:I,s:i,s:i,s:f,s:f,s:f,s:o,s:f}", "workload", "serve", "nodes",
                                (json_int_t)nodes, "devices_per_node", NODE_DEVICES, "node_names", NODE_NAMES,
                                "seconds_per_rate", seconds, "server_start_ms", load_ms, "slo_p99_ms", SLO_MS, "rates",
                                rs, "sustained_rate", sustained);
        if (json_out) {
            json_dumpf(doc, stdout, JSON_INDENT(2));
            fputc('\n', stdout);
        } else if (json_dump_file(doc, o->json, JSON_INDENT(2))) {
            fprintf(stderr, "bench serve: cannot write %s\n", o->json);
            rc = 1;
        }
        json_decref(doc);
    }
    for (size_t i = 0; i < MAX_INFLIGHT; i++) curl_easy_cleanup(slots[i].h);
    free(slots);
    curl_multi_cleanup(m);
    curl_slist_free_all(headers);
    curl_global_cleanup();
    for (size_t i = 0; i < BODIES; i++) free(bodies[i]);
    if (!child_stop(&srv)) rc = 1;
    return rc;
}
