/* secure_serve_test.c — `dralloc serve` as an operator deploys it beside kube-scheduler
 * (issue #20), each test against a `dralloc serve` child process:
 *   - mutual TLS: a client that speaks as kube-scheduler's HTTPExtender does (POST
 *     JSON to urlPrefix + verb, Content-Type application/json, a client certificate
 *     from tlsConfig certFile/keyFile, the server checked against caFile, one kept-
 *     alive connection, httpTimeout 5 s as DefaultExtenderTimeout) gets 200; no
 *     certificate, a self-signed one, or plain HTTP on the TLS port are refused;
 *     rotated certificate files are served to new connections without a restart;
 *   - secure by default: beyond loopback without --client-ca-file, /bind and
 *     /objects answer 403 naming the flag, /filter answers; --allow-unauthenticated
 *     says so loudly; a port out of range is a usage error;
 *   - the health listener answers every probe within 1 s while 1,200 slowloris
 *     connections hold the main port for 20 s;
 *   - 64 clients each sending a 16 MiB body: the process's peak RSS stays under
 *     512 MiB (--max-inflight-bytes), the refused ones get 503 with Retry-After, and
 *     /filter answers afterwards.
 * Certificates are made at test time with the openssl CLI. Its own CTest entry, one
 * test at a time (the flood and the memory test measure). */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "tests/extender/serve_helpers.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- certificates ------------------------------------------------------------------ */

static char certs[64];

/* A CA, a server certificate for 127.0.0.1 (and a second one, for the rotation), a
 * client certificate the CA signed, and a self-signed client certificate. */
static void make_certs(void) {
    snprintf(certs, sizeof certs, "/tmp/dralloc-secure-XXXXXX");
    cr_assert(mkdtemp(certs));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "(set -e; cd %s; K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';"
             "openssl req -x509 $K -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca;"
             "openssl req -x509 $K -keyout self.key -out self.crt -days 2 -subj /CN=kube-scheduler;"
             "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' >server.ext;"
             "for s in server server2; do openssl req $K -keyout $s.key -out $s.csr -subj /CN=dralloc-$s;"
             "openssl x509 -req -in $s.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext "
             "-out $s.crt; done;"
             "openssl req $K -keyout client.key -out client.csr -subj /CN=kube-scheduler;"
             "printf 'extendedKeyUsage=clientAuth\\n' >client.ext;"
             "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext "
             "-out client.crt) >/dev/null 2>&1",
             certs);
    cr_assert_eq(system(cmd), 0, "openssl could not make the test certificates (scripts/deps.sh installs it)");
}

static void drop_certs(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", certs);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", certs);
}

static const char *cert(const char *name) {
    static char buf[8][256];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, 256, "%s/%s", certs, name);
    return b;
}


/* ---- kube-scheduler's HTTPExtender, as a client --------------------------------------- */

typedef struct extender_client {
    CURL *h;          /* kept: Go's transport keeps the connection alive between calls */
    char url[256];    /* urlPrefix */
} extender_client;

/* tlsConfig {certFile, keyFile, caFile}; cert NULL: none. */
static void ext_client_init(extender_client *x, int port, bool https, const char *cert_file, const char *key_file) {
    x->h = curl_easy_init();
    snprintf(x->url, sizeof x->url, "%s://127.0.0.1:%d", https ? "https" : "http", port);
    curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
    /* HTTPTimeout: DefaultExtenderTimeout 5 s, for the whole call */
    curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, 5000L);
    if (https) {
        curl_easy_setopt(x->h, CURLOPT_CAINFO, cert("ca.crt"));
        curl_easy_setopt(x->h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(x->h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    if (cert_file) {
        curl_easy_setopt(x->h, CURLOPT_SSLCERT, cert_file);
        curl_easy_setopt(x->h, CURLOPT_SSLKEY, key_file);
    }
}

/* POST urlPrefix/verb with args (JSON): the status (-1: no HTTP answer, e.g. the
 * handshake refused); *curl_rc the transfer's code. */
static long ext_client_send(extender_client *x, const char *verb, const char *args, size_t len, char **out,
                            CURLcode *curl_rc) {
    char url[300];
    snprintf(url, sizeof url, "%s/%s", x->url, verb);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    strbuf b;
    sbuf_init(&b);
    curl_easy_setopt(x->h, CURLOPT_URL, url);
    curl_easy_setopt(x->h, CURLOPT_POST, 1L);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, args);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, th_collect);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, &b);
    long code = -1;
    CURLcode rc = curl_easy_perform(x->h);
    if (rc == CURLE_OK) curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
    if (curl_rc) *curl_rc = rc;
    curl_slist_free_all(hdrs);
    if (!b.buf) sbuf_addc(&b, 0), b.len = 0;
    if (out) *out = sbuf_take(&b);
    else sbuf_free(&b);
    return code;
}

static void ext_client_free(extender_client *x) { curl_easy_cleanup(x->h); }

/* ---- mutual TLS ---------------------------------------------------------------------- */

static void start_tls(srv *s) {
    const char *args[] = {"--listen", "127.0.0.1:0", "--snapshot", DEMO, "--tls-cert-file", cert("server.crt"),
                          "--tls-private-key-file", cert("server.key"), "--client-ca-file", cert("ca.crt"), NULL};
    srv_start_with(s, args, NULL, NULL);
}

Test(mtls, ca_signed_client_gets_200_as_kube_scheduler_sends, .init = make_certs, .fini = drop_certs) {
    srv s;
    start_tls(&s);
    size_t len;
    char *body = th_read_file(REQ "filter-fits.json", &len), *out;
    extender_client x;
    ext_client_init(&x, s.port, true, cert("client.crt"), cert("client.key"));
    for (int i = 0; i < 3; i++) {   /* one kept-alive connection, several calls */
        CURLcode rc;
        long code = ext_client_send(&x, "filter", body, len, &out, &rc);
        cr_assert_eq(code, 200, "call %d: %ld (%s) %s", i, code, curl_easy_strerror(rc), out);
        json_t *j = th_json(out);
        cr_assert(json_is_array(json_object_get(j, "NodeNames")), "not an ExtenderFilterResult: %s", out);
        json_decref(j);
        free(out);
    }
    long conns = 0;
    curl_easy_getinfo(x.h, CURLINFO_NUM_CONNECTS, &conns);
    cr_assert_eq(conns, 0, "the last call opened a new connection: keep-alive over TLS broken");
    cr_assert_eq(ext_client_send(&x, "prioritize", body, len, &out, NULL), 200);
    free(out);
    ext_client_free(&x);
    free(body);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(mtls, no_certificate_self_signed_or_plain_http_refused, .init = make_certs, .fini = drop_certs) {
    srv s;
    start_tls(&s);
    size_t len;
    char *body = th_read_file(REQ "filter-fits.json", &len), *out;
    struct {
        const char *what, *cert, *key;
        bool https;
    } bad[] = {
        {"no client certificate", NULL, NULL, true},
        {"a self-signed client certificate", cert("self.crt"), cert("self.key"), true},
        {"the server's own certificate (not for client auth)", cert("server2.crt"), cert("server2.key"), true},
        {"plain HTTP on the TLS port", NULL, NULL, false},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        extender_client x;
        ext_client_init(&x, s.port, bad[i].https, bad[i].cert, bad[i].key);
        CURLcode rc;
        long code = ext_client_send(&x, "filter", body, len, &out, &rc);
        /* refused: the handshake fails (no HTTP answer), or a 401/403 */
        cr_assert(code == -1 || code == 401 || code == 403, "%s: answered %ld: %s", bad[i].what, code, out);
        cr_assert(code != -1 || rc != CURLE_OK, "%s", bad[i].what);
        free(out);
        ext_client_free(&x);
    }
    /* the server is fine afterwards */
    extender_client ok;
    ext_client_init(&ok, s.port, true, cert("client.crt"), cert("client.key"));
    cr_assert_eq(ext_client_send(&ok, "filter", body, len, &out, NULL), 200);
    free(out);
    ext_client_free(&ok);
    free(body);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(mtls, client_certificates_open_the_state_changing_routes_beyond_loopback, .init = make_certs, .fini = drop_certs) {
    srv s;
    const char *args[] = {"--listen", "0.0.0.0:0", "--tls-cert-file", cert("server.crt"), "--tls-private-key-file",
                          cert("server.key"), "--client-ca-file", cert("ca.crt"), NULL};
    srv_start_with(&s, args, NULL, NULL);
    extender_client x;
    ext_client_init(&x, s.port, true, cert("client.crt"), cert("client.key"));
    const char *node = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}";
    char *out;
    long code = ext_client_send(&x, "objects", node, strlen(node), &out, NULL);
    cr_assert_eq(code, 200, "POST /objects with a verified client certificate: %ld %s", code, out);
    free(out);
    /* bind mode is off here: the answer is the ExtenderBindingResult saying so, not a 403 */
    const char *b = "{\"PodName\":\"p\",\"PodNamespace\":\"d\",\"PodUID\":\"u\",\"Node\":\"n\"}";
    code = ext_client_send(&x, "bind", b, strlen(b), &out, NULL);
    cr_assert(code == 200 && strstr(out, "bind mode is not enabled"), "/bind: %ld %s", code, out);
    free(out);
    ext_client_free(&x);
    char *log = th_read_file(s.log, NULL);
    cr_assert(!strstr(log, "answer 403"), "the log says 403 although client certificates are required: %s", log);
    free(log);
    cr_assert_eq(srv_stop(&s), 0);
}

/* The serial number of the certificate a new connection is served. */
static char *served_serial(int port) {
    CURL *h = curl_easy_init();
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/healthz", port);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, cert("ca.crt"));
    curl_easy_setopt(h, CURLOPT_SSLCERT, cert("client.crt"));
    curl_easy_setopt(h, CURLOPT_SSLKEY, cert("client.key"));
    curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, th_collect);
    strbuf b;
    sbuf_init(&b);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    char *serial = NULL;
    if (curl_easy_perform(h) == CURLE_OK) {
        struct curl_certinfo *ci = NULL;
        curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci);
        for (struct curl_slist *l = ci && ci->num_of_certs ? ci->certinfo[0] : NULL; l && !serial; l = l->next)
            if (!strncmp(l->data, "Subject:", 8)) serial = strdup(l->data);
    }
    sbuf_free(&b);
    curl_easy_cleanup(h);
    return serial;
}

Test(mtls, rotated_certificate_files_are_served_without_a_restart, .init = make_certs, .fini = drop_certs) {
    /* the files the server reads, replaced as a Secret volume does it (rename) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && cp server.crt live.crt && cp server.key live.key", certs);
    cr_assert_eq(system(cmd), 0);
    srv s;
    const char *args[] = {"--listen", "127.0.0.1:0", "--snapshot", DEMO, "--tls-cert-file", cert("live.crt"),
                          "--tls-private-key-file", cert("live.key"), "--client-ca-file", cert("ca.crt"), NULL};
    srv_start_with(&s, args, NULL, NULL);
    char *before = served_serial(s.port);
    cr_assert(before && strstr(before, "dralloc-server"), "served %s", before ? before : "nothing");
    snprintf(cmd, sizeof cmd, "cd %s && cp server2.crt n.crt && cp server2.key n.key && mv n.key live.key && mv n.crt live.crt",
             certs);
    cr_assert_eq(system(cmd), 0);
    char *after = NULL;
    for (int i = 0; i < 50; i++) {   /* looked at again at most once a second */
        free(after);
        after = served_serial(s.port);
        if (after && strstr(after, "dralloc-server2")) break;
        usleep(100000);
    }
    cr_assert(after && strstr(after, "dralloc-server2"), "still served %s after the rotation", after ? after : "nothing");
    free(before);
    free(after);
    cr_assert_eq(srv_stop(&s), 0);
}

/* ---- secure by default ---------------------------------------------------------------- */

Test(secure_default, state_changing_routes_refused_beyond_loopback_without_client_ca) {
    srv s;
    const char *args[] = {"--listen", "0.0.0.0:0", NULL};
    srv_start_with(&s, args, NULL, NULL);
    char *out;
    const char *objs = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}";
    struct {
        const char *method, *path, *body;
    } writes[] = {{"POST", "/objects", objs}, {"DELETE", "/objects/Node/_/n", NULL},
                  {"POST", "/bind", "{\"PodName\":\"p\",\"PodNamespace\":\"d\",\"PodUID\":\"u\",\"Node\":\"n\"}"},
                  {"POST", "/scheduler/bind", "{}"}};
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        long code = th_http(&s, writes[i].method, writes[i].path, writes[i].body, &out);
        cr_assert_eq(code, 403, "%s %s: %ld %s", writes[i].method, writes[i].path, code, out);
        json_t *j = th_json(out);
        const char *e = json_string_value(json_object_get(j, "error"));
        cr_assert(e && strstr(e, "--client-ca-file") && strstr(e, "--allow-unauthenticated"), "the 403 says %s", out);
        json_decref(j);
        free(out);
    }
    /* reading stays open: no snapshot (503), but not refused */
    cr_assert_eq(th_http(&s, "POST", "/filter", "{\"Pod\":{},\"NodeNames\":[]}", &out), 503, "%s", out);
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/healthz", NULL, &out), 200);
    free(out);
    cr_assert_eq(th_http(&s, "GET", "/metrics", NULL, &out), 200);
    free(out);
    char *log = th_read_file(s.log, NULL);
    cr_assert(strstr(log, "/bind and /objects answer 403"), "the log does not say why: %s", log);
    free(log);
    cr_assert_eq(srv_stop(&s), 0);
}

Test(secure_default, allow_unauthenticated_opens_them_and_says_so) {
    srv s;
    const char *args[] = {"--listen", "0.0.0.0:0", "--allow-unauthenticated", NULL};
    srv_start_with(&s, args, NULL, NULL);
    char *out;
    long code = th_http(&s, "POST", "/objects", "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}", &out);
    cr_assert_eq(code, 200, "%ld %s", code, out);
    free(out);
    char *log = th_read_file(s.log, NULL);
    cr_assert(strstr(log, "WARNING: --allow-unauthenticated"), "not logged loudly: %s", log);
    free(log);
    cr_assert_eq(srv_stop(&s), 0);
}

/* A usage error: exit 2 and the message. */
static void usage_error(const char *const *args, const char *want) {
    char cmd[1024] = DRALLOC_BIN " serve";
    for (size_t i = 0; args[i]; i++) {
        strcat(cmd, " ");
        strcat(cmd, args[i]);
    }
    strcat(cmd, " 2>&1");
    FILE *p = popen(cmd, "r");
    char buf[4096] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: exit %d: %s", cmd, st, buf);
    cr_assert(strstr(buf, want), "%s: says %s, want %s", cmd, buf, want);
}

Test(secure_default, listen_port_out_of_range_is_a_usage_error) {
    usage_error((const char *[]){"--listen", "127.0.0.1:99999", NULL}, "--listen 127.0.0.1:99999: the port must be between 0 and 65535");
    usage_error((const char *[]){"--health-listen", "127.0.0.1:70000", NULL}, "--health-listen 127.0.0.1:70000");
    usage_error((const char *[]){"--listen", "::1:8888", NULL}, "brackets");
    usage_error((const char *[]){"--client-ca-file", "/x.pem", NULL}, "needs --tls-cert-file and --tls-private-key-file");
    usage_error((const char *[]){"--leader-elect-lease-duration", "5s", "--leader-elect-renew-deadline", "8s", NULL},
                "--leader-elect-lease-duration (5s) > --leader-elect-renew-deadline (8s)");
}

Test(secure_default, insecure_skip_tls_verify_warns) {
    srv s;
    /* live mode against nothing: it starts (not ready) and must say the check is off */
    const char *args[] = {"--listen", "127.0.0.1:0", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", NULL};
    srv_start_with(&s, args, NULL, NULL);
    char *log = th_read_file(s.log, NULL);
    cr_assert(strstr(log, "WARNING: --insecure-skip-tls-verify"), "no warning: %s", log);
    free(log);
    char *out;
    /* before the first list: per kind, the watch state and its last error */
    json_t *j = NULL;
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(th_http(&s, "GET", "/debug/cache", NULL, &out), 503);
        json_decref(j);
        j = th_json(out);
        free(out);
        if (json_string_value(json_object_get(json_object_get(json_object_get(j, "watch"), "Node"), "lastError"))) break;
        usleep(50000);
    }
    const json_t *node = json_object_get(json_object_get(j, "watch"), "Node");
    cr_assert(json_is_false(json_object_get(node, "listed")) && json_string_value(json_object_get(node, "lastError")),
              "/debug/cache before the first list does not say why: %s", json_dumps(j, 0));
    json_decref(j);
    cr_assert_eq(srv_stop(&s), 0);
}

/* ---- the health listener under a slowloris flood --------------------------------------- */

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

Test(health, probes_answer_within_1s_while_1200_slowloris_connections_hold_the_main_port) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    cr_assert(rl.rlim_cur > 1400, "RLIMIT_NOFILE %llu: too low for 1,200 connections", (unsigned long long)rl.rlim_cur);
    srv s;
    int hport = 0;
    const char *args[] = {"--listen", "127.0.0.1:0", "--snapshot", DEMO, "--health-listen", "127.0.0.1:0", NULL};
    srv_start_with(&s, args, NULL, &hport);
    cr_assert(hport > 0, "no health listener port in the log");
    enum { SLOW = 1200 };
    static int fds[SLOW];
    int open_n = 0;
    for (int i = 0; i < SLOW; i++) {
        fds[i] = dial(s.port);
        if (fds[i] >= 0) {
            open_n++;
            const char *start = "POST /filter HTTP/1.1\r\nHost: x\r\n";
            if (send(fds[i], start, strlen(start), MSG_NOSIGNAL) < 0) {
                close(fds[i]);
                fds[i] = -1;
            }
        }
    }
    cr_assert(open_n > 900, "only %d slow connections opened", open_n);
    /* 20 s: every slow connection drips a header byte every second (reopened when the
     * server cuts it), a probe of each kind goes to the health listener every 0.5 s */
    double t0 = now_s(), worst = 0;
    int probes = 0, ok = 0;
    CURL *h = curl_easy_init();
    while (now_s() - t0 < 20) {
        for (int i = 0; i < SLOW; i++) {
            if (fds[i] >= 0 && send(fds[i], "X", 1, MSG_NOSIGNAL) < 0) {
                close(fds[i]);
                fds[i] = -1;
            }
            if (fds[i] < 0 && (fds[i] = dial(s.port)) >= 0) {
                const char *start = "POST /filter HTTP/1.1\r\nHost: x\r\n";
                if (send(fds[i], start, strlen(start), MSG_NOSIGNAL) < 0) close(fds[i]), fds[i] = -1;
            }
        }
        const char *paths[] = {"/healthz", "/readyz"};
        for (int k = 0; k < 2; k++) {
            srv hs = {.pid = s.pid, .port = hport};
            char *out;
            /* a fresh connection each time, as the kubelet probes; its timeoutSeconds 1 */
            curl_easy_reset(h);
            curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
            double p0 = now_s();
            long code = th_http_on(h, &hs, "GET", paths[k], NULL, 0, &out);
            double took = now_s() - p0;
            free(out);
            probes++;
            ok += code == 200 && took < 1.0;
            if (took > worst) worst = took;
            cr_assert(code == 200 && took < 1.0, "probe %d (%s): %ld after %.3fs", probes, paths[k], code, took);
        }
        usleep(500000);
    }
    curl_easy_cleanup(h);
    fprintf(stderr, "health: %d/%d probes 200 within 1 s during 20 s of %d slowloris connections (worst %.0f ms)\n",
            ok, probes, open_n, worst * 1e3);
    for (int i = 0; i < SLOW; i++)
        if (fds[i] >= 0) close(fds[i]);
    cr_assert_eq(srv_stop(&s), 0);
}

/* ---- memory under 64 bodies of 16 MiB --------------------------------------------------- */

typedef struct big_client {
    int port;
    const char *body;
    size_t len;
    char status[64];
    bool retry_after;
} big_client;

static void *send_big(void *arg) {
    big_client *c = arg;
    int fd = dial(c->port);
    if (fd < 0) return NULL;
    char head[256];
    int hn = snprintf(head, sizeof head, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                         "Content-Length: %zu\r\n\r\n", c->len);
    bool sent = send(fd, head, (size_t)hn, MSG_NOSIGNAL) == hn;
    /* as Go's transport does: the answer is read while the body is still being written,
     * so an early refusal (503 before the body) is seen at once, before the server's
     * close with the body unread resets the connection */
    for (size_t off = 0; sent && off < c->len;) {
        struct pollfd w = {.fd = fd, .events = POLLIN | POLLOUT};
        if (poll(&w, 1, 60000) <= 0 || (w.revents & (POLLIN | POLLERR | POLLHUP))) break;
        ssize_t k = send(fd, c->body + off, c->len - off < 65536 ? c->len - off : 65536, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == EAGAIN) continue;
        if (k <= 0) break;   /* refused early: the server closed after its 503 */
        off += (size_t)k;
    }
    char buf[4096];
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < sizeof buf - 1 && poll(&p, 1, 60000) > 0) {
        ssize_t k = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n")) break;
    }
    buf[got] = '\0';
    snprintf(c->status, sizeof c->status, "%.*s", (int)strcspn(buf, "\r\n"), buf);
    c->retry_after = strstr(buf, "Retry-After:") != NULL;
    close(fd);
    return NULL;
}

static long vm_kib(pid_t pid, const char *field) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, strlen(field))) v = atol(line + strlen(field) + 1);
    if (f) fclose(f);
    return v;
}

Test(memory, sixty_four_16MiB_bodies_stay_under_512MiB_and_filter_answers_after) {
    srv s;
    const char *args[] = {"--listen", "127.0.0.1:0", "--snapshot", DEMO, NULL};
    /* ASan keeps freed blocks in a quarantine (256 MiB by default) that a release build
     * does not have: a small one, so that the RSS measured is the server's own */
    const char *env[] = {"ASAN_OPTIONS=quarantine_size_mb=16:detect_leaks=1", NULL};
    srv_start_with(&s, args, env, NULL);
    long base = vm_kib(s.pid, "VmRSS:");
    enum { CLIENTS = 64, BODY = 16 << 20 };
    /* a filter request of 16 MiB (--max-body's default): a pod with a large annotation */
    char *body = malloc(BODY);
    int hn = snprintf(body, BODY, "{\"Pod\":{\"metadata\":{\"name\":\"big\",\"namespace\":\"default\",\"annotations\":"
                                  "{\"a\":\"");
    memset(body + hn, 'x', BODY - (size_t)hn - 64);
    snprintf(body + BODY - 64, 64, "\"}},\"spec\":{}},\"NodeNames\":[\"gpu-node-001\"]}");
    size_t len = strlen(body);
    big_client c[CLIENTS];
    pthread_t th[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = (big_client){.port = s.port, .body = body, .len = len};
        pthread_create(&th[i], NULL, send_big, &c[i]);
    }
    for (int i = 0; i < CLIENTS; i++) pthread_join(th[i], NULL);
    long peak = vm_kib(s.pid, "VmHWM:");
    int ok = 0, busy = 0;
    for (int i = 0; i < CLIENTS; i++) {
        if (strstr(c[i].status, " 200 ")) ok++;
        else if (strstr(c[i].status, " 503 ")) {
            busy++;
            cr_assert(c[i].retry_after, "a 503 without Retry-After");
        } else {
            cr_assert_fail("client %d: %s", i, c[i].status);
        }
    }
    fprintf(stderr, "memory: %d answered, %d refused 503; RSS %ld MiB before, peak %ld MiB\n", ok, busy, base / 1024,
            peak / 1024);
    cr_assert(ok >= 1, "no body was taken");
    cr_assert(peak < 512 * 1024, "peak RSS %ld MiB >= 512 MiB", peak / 1024);
    size_t flen;
    char *fits = th_read_file(REQ "filter-fits.json", &flen), *out;
    cr_assert_eq(th_http_on(NULL, &s, "POST", "/filter", fits, flen, &out), 200, "%s", out);
    free(out);
    /* a request's bytes are given back when libmicrohttpd completes it, which can be a
     * moment after its client has read the answer (or, refused, hung up): polled */
    bool released = false;
    for (int i = 0; i < 50 && !released; i++) {
        cr_assert_eq(th_http(&s, "GET", "/metrics", NULL, &out), 200);
        released = strstr(out, "dralloc_inflight_request_bytes 0\n") != NULL;
        free(out);
        if (!released) usleep(100000);
    }
    cr_assert(released, "bytes still held 5 s after every answer");
    free(fits);
    free(body);
    cr_assert_eq(srv_stop(&s), 0);
}
