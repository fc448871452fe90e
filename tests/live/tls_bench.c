/* tls_bench.c — what TLS with client certificates costs `dralloc serve`, measured by
 * hand (bench/README.md "TLS"): the same snapshot (bench serve's: 5,000 nodes x 8
 * devices, half in use) served twice at once by two `dralloc serve` children, one
 * plain HTTP and one HTTPS requiring a client certificate (--tls-cert-file,
 * --tls-private-key-file, --client-ca-file; certificates made with openssl at start),
 * and the same load on each in turn, twice (plain, TLS, plain, TLS), as kube-scheduler
 * puts it (bench serve's /filter bodies: a pod with a template claim, 500 NodeNames;
 * kept-alive connections):
 *   - latency: one request at a time, p50/p99;
 *   - throughput: 8 connections each sending back to back for the duration: requests/s,
 *     p50/p99;
 *   - a new connection: GET /healthz on a fresh connection each time (TCP, and the
 *     TLS handshake with the client certificate), p50/p99, against the same on a kept
 *     connection.
 * Usage: tls_bench DRALLOC [SECONDS per measurement, default 5] [NODES, default 5000].
 * Lives under tests/live because bench/ sits beside extender/ in the layers; its
 * inputs are bench serve's (bench/serve_load.h). */
#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "bench/serve_load.h"
#include "bench/stats.h"

#define BODIES 32
#define CONNS 8

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static char dir[64];

static const char *at(const char *f) {
    static char buf[8][256];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 256, "%s/%s", dir, f);
    return b;
}

typedef struct child {
    pid_t pid;
    int port;
    bool tls;
    char log[256];
} child;

static bool start(child *c, const char *dralloc, bool tls) {
    c->tls = tls;
    snprintf(c->log, sizeof c->log, "%s/%s.log", dir, tls ? "tls" : "plain");
    c->pid = fork();
    if (!c->pid) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (!freopen(c->log, "w", stderr)) _exit(126);
        if (tls)
            execl(dralloc, dralloc, "serve", "--snapshot", at("snapshot.json"), "--listen", "127.0.0.1:0",
                  "--tls-cert-file", at("server.crt"), "--tls-private-key-file", at("server.key"), "--client-ca-file",
                  at("ca.crt"), (char *)NULL);
        else
            execl(dralloc, dralloc, "serve", "--snapshot", at("snapshot.json"), "--listen", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    c->port = 0;
    for (int i = 0; i < 12000 && !c->port; i++) {
        FILE *f = fopen(c->log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "listening on 127.0.0.1:");
            if (p) c->port = atoi(p + strlen("listening on 127.0.0.1:"));
        }
        if (f) fclose(f);
        if (!c->port) usleep(10000);
    }
    if (!c->port) fprintf(stderr, "tls_bench: dralloc serve did not start (%s)\n", c->log);
    return c->port > 0;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud) {
    (void)p, (void)ud;
    return sz * n;
}

/* A handle as kube-scheduler's transport for the child: client certificate over TLS. */
static CURL *handle(const child *c, const char *path) {
    CURL *h = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "%s://127.0.0.1:%d%s", c->tls ? "https" : "http", c->port, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    if (c->tls) {
        curl_easy_setopt(h, CURLOPT_CAINFO, at("ca.crt"));
        curl_easy_setopt(h, CURLOPT_SSLCERT, at("client.crt"));
        curl_easy_setopt(h, CURLOPT_SSLKEY, at("client.key"));
    }
    return h;
}

typedef struct result {
    bench_stats lat1, latn, fresh, kept;
    double rps;
    size_t errors;
} result;

static struct curl_slist *json_hdrs;

static void post(CURL *h, const char *body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, json_hdrs);
}

static void measure(const child *c, char **bodies, double seconds, result *r) {
    size_t cap = 1 << 20, n = 0;
    double *lat = xcalloc(cap, sizeof *lat);
    /* one at a time, kept alive */
    CURL *h = handle(c, "/filter");
    double end = now_s() + seconds;
    for (size_t k = 0; now_s() < end && n < cap; k++) {
        post(h, bodies[k % BODIES]);
        double t0 = now_s();
        long code = 0;
        if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        lat[n++] = (now_s() - t0) * 1e3;
        r->errors += code != 200;
    }
    curl_easy_cleanup(h);
    r->lat1 = bench_stats_of(lat, n);
    /* CONNS connections back to back */
    CURLM *m = curl_multi_init();
    CURL *hs[CONNS];
    double started[CONNS];
    size_t next = 0;
    n = 0;
    double t0 = now_s();
    end = t0 + seconds;
    for (int i = 0; i < CONNS; i++) {
        hs[i] = handle(c, "/filter");
        curl_easy_setopt(hs[i], CURLOPT_PRIVATE, (char *)(intptr_t)i);
        post(hs[i], bodies[next++ % BODIES]);
        started[i] = now_s();
        curl_multi_add_handle(m, hs[i]);
    }
    int running = CONNS;
    while (running) {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            char *pi;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &pi);
            int i = (int)(intptr_t)pi;
            long code = 0;
            if (msg->data.result == CURLE_OK) curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            r->errors += code != 200;
            if (n < cap) lat[n++] = (now_s() - started[i]) * 1e3;
            curl_multi_remove_handle(m, msg->easy_handle);
            if (now_s() < end) {
                post(hs[i], bodies[next++ % BODIES]);
                started[i] = now_s();
                curl_multi_add_handle(m, hs[i]);
                running++;
            }
        }
        if (running) curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    r->rps = (double)n / (now_s() - t0);
    r->latn = bench_stats_of(lat, n);
    for (int i = 0; i < CONNS; i++) curl_easy_cleanup(hs[i]);
    curl_multi_cleanup(m);
    /* a new connection each time vs a kept one: GET /healthz */
    for (int fresh = 1; fresh >= 0; fresh--) {
        h = handle(c, "/healthz");
        if (fresh) curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
        n = 0;
        end = now_s() + seconds / 2;
        while (now_s() < end && n < cap) {
            double t = now_s();
            long code = 0;
            if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
            lat[n++] = (now_s() - t) * 1e3;
            r->errors += code != 200;
        }
        curl_easy_cleanup(h);
        if (fresh) r->fresh = bench_stats_of(lat, n);
        else r->kept = bench_stats_of(lat, n);
    }
    free(lat);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tls_bench DRALLOC [SECONDS] [NODES]\n");
        return 2;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 5;
    size_t nodes = argc > 3 ? (size_t)atol(argv[3]) : 5000;
    snprintf(dir, sizeof dir, "/tmp/dralloc-tls-bench-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "(set -e; cd %s; K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';"
             "openssl req -x509 $K -keyout ca.key -out ca.crt -days 2 -subj /CN=bench-ca;"
             "openssl req $K -keyout server.key -out server.csr -subj /CN=dralloc;"
             "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' >s.ext;"
             "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile s.ext -out server.crt;"
             "openssl req $K -keyout client.key -out client.csr -subj /CN=kube-scheduler;"
             "printf 'extendedKeyUsage=clientAuth\\n' >c.ext;"
             "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile c.ext -out client.crt"
             ") >/dev/null 2>&1",
             dir);
    if (system(cmd)) return fprintf(stderr, "tls_bench: openssl failed\n"), 1;
    json_t *objs = bench_serve_snapshot(nodes);
    json_t *list = json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "List", "items", objs);
    json_dump_file(list, at("snapshot.json"), JSON_COMPACT);
    json_decref(list);
    bench_rng rng;
    bench_rng_init(&rng, 42);
    char *bodies[BODIES];
    for (int i = 0; i < BODIES; i++) bodies[i] = bench_serve_filter_body((size_t)i, nodes, &rng);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    json_hdrs = curl_slist_append(curl_slist_append(NULL, "Expect:"), "Content-Type: application/json");
    child c[2];
    if (!start(&c[0], argv[1], false) || !start(&c[1], argv[1], true)) return 1;
    /* warm both: every body once */
    for (int k = 0; k < 2; k++) {
        CURL *h = handle(&c[k], "/filter");
        for (int i = 0; i < BODIES; i++) post(h, bodies[i]), curl_easy_perform(h);
        curl_easy_cleanup(h);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("tls_bench: %zu nodes x 8 devices, /filter with 500 NodeNames; %.0f s per measurement; client and server "
           "share %ld core(s)\n", nodes, seconds, cores);
    printf("| round | server | 1 conn p50 ms | p99 ms | %d conns req/s | p50 ms | p99 ms | new conn p50 ms | p99 ms | kept conn p50 ms | errors |\n",
           CONNS);
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int round = 1; round <= 2; round++)
        for (int k = 0; k < 2; k++) {
            result r = {0};
            measure(&c[k], bodies, seconds, &r);
            printf("| %d | %s | %.2f | %.2f | %.0f | %.2f | %.2f | %.3f | %.3f | %.3f | %zu |\n", round,
                   c[k].tls ? "HTTPS + client cert" : "HTTP", r.lat1.p50, r.lat1.p99, r.rps, r.latn.p50, r.latn.p99,
                   r.fresh.p50, r.fresh.p99, r.kept.p50, r.errors);
            fflush(stdout);
        }
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        kill(c[k].pid, SIGTERM);
        int st = 0;
        waitpid(c[k].pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) rc = 1, fprintf(stderr, "tls_bench: a server exited %d\n", st);
    }
    for (int i = 0; i < BODIES; i++) free(bodies[i]);
    curl_slist_free_all(json_hdrs);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) rc = 1;
    return rc;
}
